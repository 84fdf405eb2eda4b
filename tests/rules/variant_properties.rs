//! Properties of the variants over seeded random games: every legal move's SAN and UCI
//! read back to it, FEN round-trips, the key follows the position, and positions that are
//! equal have equal repetition keys while pockets and checks given tell positions apart.

use std::collections::HashMap;

use crate::common::rng::Rng;
use chess_service::rules::variant::{
    Antichess, Atomic, Crazyhouse, Horde, KingOfTheHill, RacingKings, ThreeCheck, VariantPosition,
    VariantRules,
};

const GAMES: u64 = 12;
const MAX_PLIES: usize = 160;

fn random_games<R: VariantRules>(seed: u64) -> usize {
    let mut rng = Rng(seed);
    let mut checked = 0;
    // Repetition key -> the FEN without clocks of a position that had it.
    let mut keys: HashMap<u64, String> = HashMap::new();
    for _ in 0..GAMES {
        let mut pos = VariantPosition::<R>::new();
        for _ in 0..MAX_PLIES {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                assert!(
                    pos.outcome().is_some(),
                    "{}: no move but no outcome",
                    pos.to_fen()
                );
                break;
            }
            for &m in legal.iter() {
                let san = pos.san(m);
                assert_eq!(pos.parse_san(&san), Ok(m), "{}: SAN {san}", pos.to_fen());
                let uci = pos.uci(m);
                assert_eq!(pos.parse_move(&uci), Ok(m), "{}: UCI {uci}", pos.to_fen());
            }
            let fen = pos.to_fen();
            let again = VariantPosition::<R>::from_fen(&fen).expect("our FEN reads back");
            assert_eq!(again, pos, "{fen}");
            assert_eq!(
                pos.board().zobrist(),
                pos.board().zobrist_from_scratch(),
                "{fen}"
            );
            let identity: Vec<&str> = fen.split(' ').collect();
            // Placement (with pocket), side, castling, en passant, and three-check's counter.
            let mut id = identity[..4].join(" ");
            if let Some(checks) = identity.get(6) {
                id = format!("{id} {checks}");
            }
            let seen = keys
                .entry(pos.repetition_key())
                .or_insert_with(|| id.clone());
            assert_eq!(*seen, id, "two positions share a repetition key");
            checked += 1;
            let m = legal[rng.below(legal.len())];
            pos.play(m);
        }
    }
    checked
}

#[test]
fn variants_hold_their_properties_over_random_games() {
    let mut checked = 0;
    checked += random_games::<Atomic>(1);
    checked += random_games::<Crazyhouse>(2);
    checked += random_games::<Antichess>(3);
    checked += random_games::<Horde>(4);
    checked += random_games::<RacingKings>(5);
    checked += random_games::<KingOfTheHill>(6);
    checked += random_games::<ThreeCheck>(7);
    assert!(checked > 5_000, "only {checked} positions");
    eprintln!("{checked} positions of random variant games hold every property");
}

/// A FEN placement: black's king on a8 behind a pawn on a7 and b7 and a knight on b8 (no
/// queen can reach it, so white may be the side to move), then `pieces` on random squares.
fn random_placement(rng: &mut Rng, pieces: &[char]) -> String {
    let mut board = [None; 64];
    for (sq, p) in [(56, 'k'), (48, 'p'), (49, 'p'), (57, 'n')] {
        board[sq] = Some(p);
    }
    for &p in pieces {
        loop {
            let sq = rng.below(64);
            if board[sq].is_none() {
                board[sq] = Some(p);
                break;
            }
        }
    }
    let mut out = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match board[rank * 8 + file] {
                Some(p) => {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(p);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            out.push_str(&empty.to_string());
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out
}

/// Every position a variant's FEN accepts fits the move list, however crowded: horde with
/// 36 white queens, crazyhouse with 22 queens and a pocket of every kind, or 27 queens
/// (32 pieces in play). Each lists its moves without panicking, and perft 1 agrees.
#[test]
fn crowded_positions_fit_the_move_list() {
    let mut rng = Rng(41);
    let mut most = 0;
    let mut check = |fen: String, moves: usize, perft: u64| {
        assert_eq!(perft, moves as u64, "{fen}");
        most = most.max(moves);
    };
    for _ in 0..300 {
        let fen = format!("{} w - - 0 1", random_placement(&mut rng, &['Q'; 36]));
        let pos = VariantPosition::<Horde>::from_fen(&fen).expect("a shielded king");
        check(fen, pos.legal_moves().len(), pos.perft(1));
        let mut queens = vec!['Q'; 22];
        queens.push('K');
        let fen = format!("{}[QRBNP] w - - 0 1", random_placement(&mut rng, &queens));
        let pos = VariantPosition::<Crazyhouse>::from_fen(&fen).expect("32 pieces in play");
        check(fen, pos.legal_moves().len(), pos.perft(1));
        let mut queens = vec!['Q'; 27];
        queens.push('K');
        let fen = format!("{}[] w - - 0 1", random_placement(&mut rng, &queens));
        let pos = VariantPosition::<Crazyhouse>::from_fen(&fen).expect("32 pieces in play");
        check(fen, pos.legal_moves().len(), pos.perft(1));
    }
    eprintln!("900 crowded positions, at most {most} legal moves");
}

/// FENs a hostile caller could send: the suites' and the corpus's FENs with a few
/// characters replaced, inserted or deleted (from the alphabet of variant FEN: pockets,
/// `~`, check counters, X-FEN castling), read in every variant. Nothing may panic, and
/// whatever is accepted must be a consistent position: its moves, SAN and UCI read back,
/// its FEN reads back to it, and a shallow perft runs.
#[test]
fn mutated_fens_never_panic_and_what_parses_is_consistent_in_every_variant() {
    use chess_service::rules::variant::{AnyPosition, VariantKind};

    const ALPHABET: &[u8] = b"pnbrqkPNBRQK12345678/ wb-KQkqABCDEFGHabcdefgh0[]~+";
    let kind_of = |key: &str| {
        VariantKind::ALL
            .into_iter()
            .find(|k| k.key() == key)
            .unwrap_or_else(|| panic!("unknown variant {key}"))
    };
    let seeds: Vec<(VariantKind, String)> = crate::common::variant_corpus::records()
        .into_iter()
        .step_by(7)
        .map(|r| (kind_of(&r.variant), r.fen))
        .collect();
    let mut rng = Rng(27);
    let (mut tried, mut accepted) = (0usize, 0usize);
    let mut failures = Vec::new();
    for round in 0..16 {
        for (own, seed) in &seeds {
            let mut bytes = seed.clone().into_bytes();
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(bytes.len() + 1);
                let c = ALPHABET[rng.below(ALPHABET.len())];
                match rng.below(4) {
                    // A piece for another: the placement stays well-formed, the material
                    // becomes anything (pawns on back ranks, extra kings, full pockets).
                    3 if i < bytes.len() && bytes[i].is_ascii_alphabetic() => {
                        bytes[i] = b"pnbrqkPNBRQK"[rng.below(12)];
                    }
                    0 if i < bytes.len() => bytes[i] = c,
                    1 => bytes.insert(i, c),
                    _ if i < bytes.len() => {
                        bytes.remove(i);
                    }
                    _ => {}
                }
            }
            let text = String::from_utf8(bytes).expect("ASCII edits keep UTF-8");
            // Mostly the FEN's own variant; in the last rounds every variant reads every
            // text, which reaches the checks a variant's own FENs pass.
            let kind = if round < 12 {
                *own
            } else {
                VariantKind::ALL[tried % VariantKind::ALL.len()]
            };
            tried += 1;
            let checked = std::panic::catch_unwind(|| {
                let Ok(pos) = AnyPosition::from_fen(kind, &text) else {
                    return false;
                };
                let fen = pos.to_fen();
                assert_eq!(AnyPosition::from_fen(kind, &fen), Ok(pos), "{fen}");
                for &m in pos.legal_moves().iter() {
                    let (san, uci) = (pos.san(m), pos.uci(m));
                    assert_eq!(pos.parse_move(&san), Ok(m), "SAN {san}");
                    assert_eq!(pos.parse_move(&uci), Ok(m), "UCI {uci}");
                }
                let _ = (pos.outcome(), pos.is_check(), pos.repetition_key());
                let _ = pos.has_insufficient_material(chess_service::rules::Color::White);
                let _ = pos.has_insufficient_material(chess_service::rules::Color::Black);
                let _ = pos.perft(2);
                true
            });
            match checked {
                Ok(true) => accepted += 1,
                Ok(false) => {}
                Err(_) => failures.push(format!("{kind}: {text}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mutated FENs panicked, for example: {:?}",
        failures.len(),
        &failures[..failures.len().min(10)]
    );
    assert!(
        accepted > 5_000,
        "only {accepted} of {tried} mutated FENs parsed"
    );
    eprintln!("{tried} mutated variant FENs, {accepted} accepted and consistent");
}

/// Racing Kings FENs are refused where python-chess's `RacingKingsBoard.is_valid()` refuses
/// them: pawns, more than two knights, bishops or rooks or more than one queen a side, a
/// king in check, or both kings on the eighth rank with black to move (the race is over).
#[test]
fn racing_kings_refuses_the_placements_no_race_reaches() {
    let read = VariantPosition::<RacingKings>::from_fen;
    for (fen, why) in [
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "castling",
        ),
        ("rnbqkbnr/8/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", "pawns"),
        ("8/8/8/8/8/8/krbnNBRK/qrrnNBRQ w - - 0 1", "a third rook"),
        ("8/8/8/8/8/Q7/krbnNBRK/qrbnNBRQ w - - 0 1", "a second queen"),
        ("K6k/8/8/8/8/8/8/8 b - - 0 1", "the race is over"),
        ("k7/8/8/8/8/8/8/R6K b - - 0 1", "a king in check"),
    ] {
        assert!(read(fen).is_err(), "{why}: {fen}");
    }
    for fen in [
        "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w - - 0 1",
        // White arrived first; black to move may still arrive (a tie) or not.
        "4K3/8/8/8/8/8/krbnNBR1/qrbnNBRQ b - - 0 1",
        // Both arrived with white to move: the race ended in a tie.
        "K6k/8/8/8/8/8/8/8 w - - 0 1",
        "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ b - - 0 1",
    ] {
        assert!(read(fen).is_ok(), "{fen}: {:?}", read(fen));
    }
}
