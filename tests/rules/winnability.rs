//! The winnability solver (issue 31) against chasolver's published verdict files (both
//! colours, every position), against chasolver itself on random low-material positions
//! from the corpus games (Chess960 castling: `winnability_chess960.rs`). Every
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
pub(crate) fn replay_mates(pos: &Position, winner: Color, helpmate: &[Move]) -> Result<(), String> {
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
pub(crate) fn judged(
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
