//! The winnability solver (issue 31) against chasolver's published verdict files (both
//! colours, every position), against chasolver itself on random low-material positions
//! from the corpus games, and on Chess960 positions whose only helpmates castle. Every
//! Winnable verdict's helpmate is replayed with our rules and must end in mate by the
//! intended winner.

use std::str::FromStr;

use chess_service::rules::winnability::{Solver, Verdict};
use chess_service::rules::{Color, Move, Position, Variant};

/// Positions of the verdict files we may leave Undetermined, with the reason. Empty: every
/// position is decided.
const ALLOWED_UNDETERMINED: &[(&str, &str)] = &[];

/// Replays `helpmate` from `pos` with our own rules: every move legal, the last one mates,
/// and the side mated is not `winner`.
fn replay_mates(pos: &Position, winner: Color, helpmate: &[Move]) -> Result<(), String> {
    let mut p = *pos;
    for (i, &m) in helpmate.iter().enumerate() {
        if !p.is_legal(m) {
            return Err(format!("move {i} ({m}) is illegal in {}", p.to_fen()));
        }
        p.play(m);
    }
    if !p.is_checkmate() {
        return Err(format!("the helpmate ends in {}, not mate", p.to_fen()));
    }
    if p.turn() == winner {
        return Err(format!("the helpmate mates {winner:?}"));
    }
    Ok(())
}

/// Our verdict as the file's letter: Some(true) winnable, Some(false) unwinnable.
fn judged(
    solver: &mut Solver,
    pos: &Position,
    winner: Color,
    failures: &mut Vec<String>,
    fen: &str,
) -> Option<bool> {
    match solver.solve(pos, winner) {
        Ok(Verdict::Winnable { helpmate, .. }) => {
            if let Err(e) = replay_mates(pos, winner, &helpmate) {
                failures.push(format!("{fen} ({winner:?}): bad helpmate: {e}"));
            }
            Some(true)
        }
        Ok(Verdict::Unwinnable { .. }) => Some(false),
        Ok(Verdict::Undetermined { .. }) => None,
        Err(e) => {
            failures.push(format!("{fen} ({winner:?}): refused: {e}"));
            None
        }
    }
}

/// Checks every line `XY FEN` of a chasolver verdict file: X is `W` if White can mate,
/// Y is `B` if Black can. Returns the number of positions checked.
fn check_verdict_file(name: &str) -> usize {
    let text =
        std::fs::read_to_string(crate::common::epd::data_path(name)).expect("verdict file present");
    let mut solver = Solver::new();
    let mut failures = Vec::new();
    let mut undetermined = Vec::new();
    let mut checked = 0;
    for line in text.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (expected, fen) = line.split_once(' ').expect("`XY FEN` lines");
        let pos =
            Position::from_fen(fen, Variant::Standard).unwrap_or_else(|e| panic!("{fen}: {e}"));
        checked += 1;
        for (winner, letter) in [(Color::White, 'W'), (Color::Black, 'B')] {
            let want = if winner == Color::White {
                expected.starts_with(letter)
            } else {
                expected.ends_with(letter)
            };
            match judged(&mut solver, &pos, winner, &mut failures, fen) {
                Some(got) if got != want => failures.push(format!(
                    "{fen} ({winner:?}): winnable {got}, the file says {want}"
                )),
                Some(_) => {}
                None => {
                    if !ALLOWED_UNDETERMINED.iter().any(|(f, _)| *f == fen) {
                        undetermined.push(format!("{fen} ({winner:?})"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty() && undetermined.is_empty(),
        "{name}: {} wrong, {} undetermined of {checked} positions; first wrong: {:#?}; first undetermined: {:#?}",
        failures.len(),
        undetermined.len(),
        &failures[..failures.len().min(20)],
        &undetermined[..undetermined.len().min(20)],
    );
    checked
}

#[test]
fn agrees_with_chasolver_positions_file() {
    assert_eq!(check_verdict_file("chasolver_positions.txt"), 3_414);
}

#[test]
fn agrees_with_chasolver_lichess_file() {
    assert_eq!(check_verdict_file("chasolver_lichess.txt"), 65_536);
}

#[test]
fn examples_of_the_issue() {
    let mut solver = Solver::new();
    let cases = [
        // White's only move takes the queen: bare kings.
        ("8/8/8/2k5/8/8/1q6/K7 w - -", false, false),
        // chasolver's README: a locked wall Black cannot break, but White can still mate.
        ("5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8 w - -", true, false),
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            true,
            true,
        ),
        ("8/8/8/4k3/8/8/8/4K2N w - -", false, false),
    ];
    for (fen, white, black) in cases {
        let pos = Position::from_fen(fen, Variant::Standard).unwrap();
        let mut failures = Vec::new();
        assert_eq!(
            judged(&mut solver, &pos, Color::White, &mut failures, fen),
            Some(white),
            "{fen}"
        );
        assert_eq!(
            judged(&mut solver, &pos, Color::Black, &mut failures, fen),
            Some(black),
            "{fen}"
        );
        assert!(failures.is_empty(), "{failures:?}");
    }
}

#[test]
fn a_position_with_the_side_not_to_move_in_check_never_reaches_the_solver() {
    // FEN already refuses it; the solver's own refusal is a second line of defence.
    assert!(Position::from_fen("4k2R/8/8/8/8/8/8/4K3 w - -", Variant::Standard).is_err());
}

/// chasolver's verdict, for the differential test.
fn chasolver_verdict(fen: &str, winner: Color) -> Option<bool> {
    let board = chess::Board::from_str(fen).ok()?;
    let color = match winner {
        Color::White => chess::Color::White,
        Color::Black => chess::Color::Black,
    };
    match chasolver::winnability(&board, color)? {
        chasolver::Winnability::Winnable { .. } => Some(true),
        chasolver::Winnability::Unwinnable => Some(false),
    }
}

/// Random low-material positions: from a random point of a random corpus game, random play
/// (captures preferred, so material falls) until at most `pieces` pieces remain.
fn random_low_material_positions(count: usize, seed: u64) -> Vec<Position> {
    let games = crate::common::corpus_games::corpus_games();
    let mut rng = crate::common::rng::Rng(seed);
    let mut out = Vec::new();
    let mut attempts = 0;
    while out.len() < count && attempts < count * 20 {
        attempts += 1;
        let g = &games[rng.below(games.len())];
        if g.variant != Variant::Standard {
            continue;
        }
        let ply = rng.below(g.game.ply() + 1);
        let Some(start) = g.game.position_at(ply) else {
            continue;
        };
        let mut pos = *start.board();
        let target = 3 + rng.below(8) as u32;
        for _ in 0..600 {
            if pos.occupied().count() <= target {
                break;
            }
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let captures: Vec<Move> = moves
                .iter()
                .copied()
                .filter(|&m| pos.is_capture(m))
                .collect();
            let m = if !captures.is_empty() && rng.below(10) < 7 {
                captures[rng.below(captures.len())]
            } else {
                moves[rng.below(moves.len())]
            };
            pos.play(m);
        }
        if pos.occupied().count() <= target && pos.has_legal_move() {
            out.push(pos);
        }
    }
    out
}

/// Our verdict equals chasolver's on random low-material positions wherever both decide,
/// and every helpmate of ours replays to mate.
#[test]
fn agrees_with_chasolver_on_random_low_material_positions() {
    let positions = random_low_material_positions(600, 0x5EED_0031);
    assert!(
        positions.len() >= 500,
        "enough positions: {}",
        positions.len()
    );
    let mut solver = Solver::new();
    let mut failures = Vec::new();
    let (mut compared, mut ours_undetermined, mut theirs_undetermined) = (0, 0, 0);
    for pos in &positions {
        let fen = pos.to_fen();
        for winner in [Color::White, Color::Black] {
            let ours = judged(&mut solver, pos, winner, &mut failures, &fen);
            let theirs = chasolver_verdict(&fen, winner);
            match (ours, theirs) {
                (Some(a), Some(b)) => {
                    compared += 1;
                    if a != b {
                        failures.push(format!("{fen} ({winner:?}): ours {a}, chasolver {b}"));
                    }
                }
                (None, _) => ours_undetermined += 1,
                (_, None) => theirs_undetermined += 1,
            }
        }
    }
    eprintln!(
        "{} positions, {compared} verdicts compared; undetermined: ours {ours_undetermined}, chasolver {theirs_undetermined}",
        positions.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(compared >= 900, "most verdicts compared: {compared}");
}

/// Chess960 start positions (every castling right present) are judged winnable for both
/// sides, and every helpmate replays under our Chess960 rules. (Helpmates that need
/// castling: `chess960_helpmates_that_need_castling`.)
#[test]
fn chess960_helpmates_replay() {
    let mut solver = Solver::new();
    let mut failures = Vec::new();
    for n in [0u32, 1, 100, 359, 518, 700, 959] {
        let pos = chess_service::rules::chess960::start_position(n, Variant::Chess960).unwrap();
        for winner in [Color::White, Color::Black] {
            let fen = pos.to_fen();
            assert_eq!(
                judged(&mut solver, &pos, winner, &mut failures, &fen),
                Some(true),
                "{fen}"
            );
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The castling-only positions: White to move, White's king and castling rook on their
/// start squares and every other White move impossible, so castling is White's only legal
/// move; after it the rook runs up the open file to mate a king boxed in by its own pawns.
/// Keyed by (king file, castling rook file), 0 = a-file. Each comment names what keeps a
/// White piece still: own pieces, or a Black pawn, bishop or pawn attack on the square.
const CASTLING_ONLY: &[((usize, usize), &str)] = &[
    // Kg1 Rh1, O-O leaves the king on g1: f1 (Bd3), f2 (e3), g2 (h3) are covered, h2 is
    // blocked by h3. Then Rf1-f8 mates on h8.
    ((6, 7), "7k/6pp/8/8/8/3bp2p/7P/6KR w H - 0 1"),
    // Kf1 Rg1 swap: e1 (Ba5), e2 (d3), f2 (g3) covered, the rook shut in by Bh1 and g2,
    // which g3 blocks. Then Rf1-f8 mates on h8.
    ((5, 6), "7k/6pp/8/b7/8/3p2p1/6P1/5KRB w G - 0 1"),
    // Kc1 Rb1, O-O-O leaves the king on c1: d1 (Bh5), d2 (e3), c2 (b3) covered, the rook
    // shut in by Ba1 and b2, which b3 blocks. Then Rd1-d8 mates on a8.
    ((2, 1), "k7/pp6/8/7b/8/1p2p3/1P6/BRK5 w B - 0 1"),
    // Kd1 Rc1 swap: e1 (f2), e2 (f3), d2 (c3) covered, the rook shut in by Bb1 and c2
    // (blocked by c3; a2 keeps the bishop still). Then Rd1-d8 mates on a8.
    ((3, 2), "k7/pp6/8/8/8/p1p2p2/P1P2p2/1BRK4 w C - 0 1"),
];

/// The castling-only position for Chess960 start arrangement `n`, if its king stands next
/// to a rook in one of the four ways [`CASTLING_ONLY`] covers.
fn castling_only_fen(n: u32) -> Option<&'static str> {
    use chess_service::rules::Role;
    let rank = chess_service::rules::chess960::back_rank(n).unwrap();
    let king = rank.iter().position(|&r| r == Role::King).unwrap();
    let rooks: Vec<usize> = (0..8).filter(|&f| rank[f] == Role::Rook).collect();
    CASTLING_ONLY
        .iter()
        .find(|((k, r), _)| *k == king && rooks.contains(r))
        .map(|(_, fen)| *fen)
}

/// The same position seen from the other side: ranks flipped, colours swapped (a helpmate
/// of White there is a helpmate of Black here).
fn mirrored_fen(fen: &str) -> String {
    let fields: Vec<&str> = fen.split(' ').collect();
    let swap = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect()
    };
    let placement: Vec<String> = fields[0].split('/').rev().map(swap).collect();
    let turn = if fields[1] == "w" { "b" } else { "w" };
    format!(
        "{} {turn} {} {} {} {}",
        placement.join("/"),
        swap(fields[2]),
        fields[3],
        fields[4],
        fields[5]
    )
}

/// The FEN with every castling right of `color` struck from the castling field.
fn without_castling(fen: &str, color: Color) -> String {
    let mut fields: Vec<String> = fen.split(' ').map(str::to_string).collect();
    let kept: String = fields[2]
        .chars()
        .filter(|c| {
            *c != '-'
                && match color {
                    Color::White => !c.is_ascii_uppercase(),
                    Color::Black => !c.is_ascii_lowercase(),
                }
        })
        .collect();
    fields[2] = if kept.is_empty() {
        "-".to_string()
    } else {
        kept
    };
    fields.join(" ")
}

/// Whether the winner castles somewhere in `helpmate` (a line that replays).
fn castles(pos: &Position, winner: Color, helpmate: &[Move]) -> bool {
    let mut p = *pos;
    helpmate.iter().any(|&m| {
        let by_winner = m.is_castle() && p.turn() == winner;
        p.play(m);
        by_winner
    })
}

/// Chess960 positions whose only helpmates castle, both colours: one for every start
/// arrangement whose king stands next to a rook as f1-g1, g1-h1, b1-c1 or c1-d1 (king
/// first), 360 of the 960. The position depends only on those two squares (the rest of the
/// army is gone), so the 360 share the four positions of [`CASTLING_ONLY`]. The proof is in
/// both halves: with the right, our solver finds a helpmate in which the winner castles and
/// which replays to mate; without it (the castling field edited), our solver proves that no
/// mate exists.
///
/// Castling can be the winner's only legal move exactly in those four placements: anywhere
/// else the king's or the rook's first square towards its castling square is one castling
/// itself needs empty (and, for the king, unattacked), so the piece could step there. The
/// other 600 arrangements would need the king and rook kept on the first rank by a roof
/// instead, and none was found: two white pawns side by side on the second rank cannot
/// both be blocked without one of them being able to capture, and a rook that gets out
/// with everything else cooperating can mate.
#[test]
fn chess960_helpmates_that_need_castling() {
    let mut solver = Solver::new();
    let mut failures = Vec::new();
    let mut covered = 0;
    for n in 0..chess_service::rules::CHESS960_POSITIONS {
        let Some(white_fen) = castling_only_fen(n) else {
            continue;
        };
        covered += 1;
        for (winner, fen) in [
            (Color::White, white_fen.to_string()),
            (Color::Black, mirrored_fen(white_fen)),
        ] {
            let pos = Position::from_fen(&fen, Variant::Chess960)
                .unwrap_or_else(|e| panic!("{n}: {fen}: {e}"));
            assert!(
                pos.castling_fen() != "-",
                "{n}: {fen} keeps its castling right"
            );
            match solver.solve(&pos, winner) {
                Ok(Verdict::Winnable { helpmate, .. }) => {
                    if let Err(e) = replay_mates(&pos, winner, &helpmate) {
                        failures.push(format!("{n} {fen} ({winner:?}): bad helpmate: {e}"));
                    } else if !castles(&pos, winner, &helpmate) {
                        failures.push(format!("{n} {fen} ({winner:?}): helpmate never castles"));
                    }
                }
                other => failures.push(format!("{n} {fen} ({winner:?}): {other:?}")),
            }
            let stripped = without_castling(&fen, winner);
            let pos = Position::from_fen(&stripped, Variant::Chess960)
                .unwrap_or_else(|e| panic!("{n}: {stripped}: {e}"));
            match solver.solve(&pos, winner) {
                Ok(Verdict::Unwinnable { .. }) => {}
                other => failures.push(format!(
                    "{n} {stripped} ({winner:?}) without castling: {other:?}"
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures: {failures:#?}",
        failures.len()
    );
    assert_eq!(covered, 360, "arrangements covered");
}

/// Verdicts agree with the moves: on random low-material positions, playing the first move
/// of a helpmate never leads to a position judged Unwinnable for the same winner, and from
/// a position judged Unwinnable no legal move leads to one judged Winnable (checked for
/// every legal move of the first `UNWINNABLE_SAMPLE` such verdicts).
#[test]
fn verdicts_are_consistent_along_moves() {
    const UNWINNABLE_SAMPLE: usize = 120;
    let positions = random_low_material_positions(300, 0x5EED_0032);
    assert!(
        positions.len() >= 250,
        "enough positions: {}",
        positions.len()
    );
    let mut solver = Solver::new();
    let mut failures = Vec::new();
    let (mut winnable, mut unwinnable, mut successors) = (0, 0, 0);
    for pos in &positions {
        let fen = pos.to_fen();
        for winner in [Color::White, Color::Black] {
            match solver.solve(pos, winner) {
                Ok(Verdict::Winnable { helpmate, .. }) => {
                    winnable += 1;
                    let Some(&first) = helpmate.first() else {
                        failures.push(format!("{fen} ({winner:?}): empty helpmate"));
                        continue;
                    };
                    let mut next = *pos;
                    next.play(first);
                    if let Ok(Verdict::Unwinnable { .. }) | Err(_) = solver.solve(&next, winner) {
                        failures.push(format!(
                            "{fen} ({winner:?}): winnable, but after its helpmate's first move {first} ({}) unwinnable or refused",
                            next.to_fen()
                        ));
                    }
                }
                Ok(Verdict::Unwinnable { .. }) => {
                    unwinnable += 1;
                    if unwinnable > UNWINNABLE_SAMPLE {
                        continue;
                    }
                    for &m in pos.legal_moves().iter() {
                        let mut next = *pos;
                        next.play(m);
                        successors += 1;
                        if let Ok(Verdict::Winnable { .. }) | Err(_) = solver.solve(&next, winner) {
                            failures.push(format!(
                                "{fen} ({winner:?}): unwinnable, but after {m} ({}) winnable or refused",
                                next.to_fen()
                            ));
                        }
                    }
                }
                Ok(Verdict::Undetermined { .. }) => {}
                Err(e) => failures.push(format!("{fen} ({winner:?}): refused: {e}")),
            }
        }
    }
    eprintln!(
        "{} positions: {winnable} winnable verdicts with their first move played, {unwinnable} unwinnable, {successors} successors of the first {UNWINNABLE_SAMPLE} checked",
        positions.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(winnable >= 200, "enough winnable verdicts: {winnable}");
    assert!(
        unwinnable >= UNWINNABLE_SAMPLE,
        "enough unwinnable verdicts: {unwinnable}"
    );
}
