//! Property tests over random games from random suite positions, and over arbitrary text
//! fed to every parser.

use std::sync::OnceLock;

use chess_service::rules::{Position, Variant};
use proptest::prelude::*;

fn suite_positions() -> &'static Vec<Position> {
    static POSITIONS: OnceLock<Vec<Position>> = OnceLock::new();
    POSITIONS.get_or_init(|| {
        let mut all: Vec<Position> = Vec::new();
        for (name, variant) in [
            ("cpw.epd", Variant::Standard),
            ("standard.epd", Variant::Standard),
            ("chess960.epd", Variant::Chess960),
        ] {
            all.extend(
                crate::common::epd::load_epd(name, variant)
                    .into_iter()
                    .map(|e| e.position),
            );
        }
        all
    })
}

/// A random game: a suite position and up to `plies` random legal moves.
fn random_line(
    start: usize,
    seed: u64,
    plies: usize,
) -> (Position, Vec<Position>, Vec<chess_service::rules::Move>) {
    let start = suite_positions()[start % suite_positions().len()];
    let mut pos = start;
    let mut rng = seed | 1;
    let mut positions = vec![pos];
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let m = legal[(rng % legal.len() as u64) as usize];
        pos = pos.after(m);
        positions.push(pos);
        moves.push(m);
    }
    (start, positions, moves)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Make then undo, any number of plies deep, restores every bit (Zobrist key included).
    #[test]
    fn undo_restores_exactly(start in 0usize..10_000, seed in any::<u64>(), plies in 0usize..120) {
        let (start_pos, positions, moves) = random_line(start, seed, plies);
        let mut pos = start_pos;
        let mut undos = Vec::new();
        for (i, &m) in moves.iter().enumerate() {
            undos.push(pos.play(m));
            prop_assert_eq!(pos, positions[i + 1]);
        }
        for (i, &m) in moves.iter().enumerate().rev() {
            pos.undo(m, undos.pop().unwrap());
            prop_assert_eq!(pos, positions[i]);
        }
        prop_assert_eq!(pos, start_pos);
    }

    /// The incremental key always equals the key from scratch; FEN out parses back.
    #[test]
    fn zobrist_and_fen_round_trip(start in 0usize..10_000, seed in any::<u64>(), plies in 0usize..120) {
        let (_, positions, _) = random_line(start, seed, plies);
        for pos in &positions {
            prop_assert_eq!(pos.zobrist(), pos.zobrist_from_scratch());
            let fen = pos.to_fen();
            let back = Position::from_fen(&fen, pos.variant());
            prop_assert_eq!(back.as_ref(), Ok(pos), "{}", fen);
        }
    }

    /// Every legal move's UCI and SAN parse back to that move.
    #[test]
    fn move_text_round_trips(start in 0usize..10_000, seed in any::<u64>(), plies in 0usize..80) {
        let (_, positions, _) = random_line(start, seed, plies);
        let pos = positions.last().unwrap();
        for &m in pos.legal_moves().iter() {
            let uci = pos.uci(m);
            let san = pos.san(m);
            prop_assert_eq!(pos.parse_uci(&uci), Ok(m), "uci {} in {}", uci, pos.to_fen());
            prop_assert_eq!(pos.parse_san(&san), Ok(m), "san {} in {}", san, pos.to_fen());
            prop_assert_eq!(pos.parse_move(&uci), Ok(m));
            prop_assert_eq!(pos.parse_move(&san), Ok(m));
        }
    }

    /// No text makes the FEN parser panic: fully arbitrary strings...
    #[test]
    fn fen_parser_never_panics(text in "\\PC{0,120}") {
        let _ = Position::from_fen(&text, Variant::Standard);
        let _ = Position::from_fen(&text, Variant::Chess960);
    }

    /// ...and near-FENs built from FEN's own alphabet, which reach the deeper checks.
    #[test]
    fn fen_parser_never_panics_on_fen_like_text(text in "[pnbrqkPNBRQK1-9/]{8,70} [wbx]? ?[KQkqA-Ha-h-]{0,5} ?[a-h1-8-]{0,2} ?[0-9]{0,4} ?[0-9]{0,4}") {
        let _ = Position::from_fen(&text, Variant::Standard);
        let _ = Position::from_fen(&text, Variant::Chess960);
    }

    /// ...and suite FENs with a few characters replaced, inserted or deleted, which reach
    /// the castling, en passant and check validation.
    #[test]
    fn fen_parser_never_panics_on_mutated_fens(
        start in 0usize..10_000,
        edits in prop::collection::vec((any::<usize>(), 0u8..3, prop::sample::select(b"pnbrqkPNBRQK12345678/ wb-KQkqABCDEFGHabcdefgh0".to_vec())), 1..4),
    ) {
        let pos = suite_positions()[start % suite_positions().len()];
        let mut bytes = pos.to_fen().into_bytes();
        for (at, op, c) in edits {
            let i = at % (bytes.len() + 1);
            match op {
                0 if i < bytes.len() => bytes[i] = c,
                1 => bytes.insert(i, c),
                _ if i < bytes.len() => { bytes.remove(i); }
                _ => {}
            }
        }
        let text = String::from_utf8(bytes).expect("ASCII edits keep UTF-8");
        for variant in [Variant::Standard, Variant::Chess960] {
            if let Ok(p) = Position::from_fen(&text, variant) {
                // Whatever is accepted is a consistent position that round-trips.
                prop_assert_eq!(p.zobrist(), p.zobrist_from_scratch());
                prop_assert_eq!(Position::from_fen(&p.to_fen(), variant), Ok(p));
                let _ = p.legal_moves();
            }
        }
    }

    /// No text makes the UCI or SAN parsers panic, in positions of every kind.
    #[test]
    fn move_parsers_never_panic(start in 0usize..10_000, text in "\\PC{0,24}") {
        let pos = suite_positions()[start % suite_positions().len()];
        let _ = pos.parse_uci(&text);
        let _ = pos.parse_san(&text);
        let _ = pos.parse_move(&text);
    }

    #[test]
    fn move_parsers_never_panic_on_move_like_text(start in 0usize..10_000, text in "[NBRQKPO0a-h1-8x=+#!?:-]{0,10}[qrbnQRBN]?") {
        let pos = suite_positions()[start % suite_positions().len()];
        let _ = pos.parse_uci(&text);
        let _ = pos.parse_san(&text);
        let _ = pos.parse_move(&text);
    }
}
