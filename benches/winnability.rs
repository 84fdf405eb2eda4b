//! Winnability speed against chasolver 3.0.0 on its own lichess verdict file (65,536
//! positions): the full verdict for both colours, ours and chasolver's, interleaved in one
//! process so machine noise hits both alike.
//!
//! `cargo bench --bench winnability` (optionally `-- --limit N` for the first N positions,
//! `--chunk N` for the interleaving block, default 256). Each block of positions is timed
//! with one solver and then the other (the order alternating between blocks); a position's
//! time is both colours' verdicts. The report: positions/s, p50/p99/max per position,
//! Undetermined counts, agreement with the file, and our throughput over chasolver's.
//!
//! `cargo bench --bench winnability -- --per-change` measures instead what a game pays
//! after each move: the dead-position check (`lifecycle::judge::is_dead`: the fast path,
//! then the solver at the per-change budget for the positions it passes) on every
//! position of the 300 corpus games (python-chess's corpus, standard and Chess960).

use std::hint::black_box;
use std::str::FromStr;
use std::time::{Duration, Instant};

use chess_service::lifecycle::judge;
use chess_service::rules::winnability::{Solver, Verdict, could_be_dead};
use chess_service::rules::{Color, Position, Variant};

struct Case {
    ours: Position,
    theirs: chess::Board,
    white: bool,
    black: bool,
}

#[derive(Default)]
struct Tally {
    times: Vec<Duration>,
    undetermined: usize,
    disagree: usize,
}

impl Tally {
    fn report(&mut self, name: &str) -> f64 {
        self.times.sort();
        let total: Duration = self.times.iter().sum();
        let n = self.times.len();
        let pct = |p: f64| self.times[((n as f64 * p) as usize).min(n - 1)];
        let rate = n as f64 / total.as_secs_f64();
        println!(
            "{name:>10}: {n} positions in {:.2} s = {rate:.0} positions/s; per position p50 {:.1} µs, p99 {:.1} µs, max {:.1} ms; undetermined verdicts {}; disagreeing with the file {}",
            total.as_secs_f64(),
            pct(0.50).as_secs_f64() * 1e6,
            pct(0.99).as_secs_f64() * 1e6,
            self.times[n - 1].as_secs_f64() * 1e3,
            self.undetermined,
            self.disagree,
        );
        rate
    }
}

fn ours(solver: &mut Solver, case: &Case, tally: &mut Tally) {
    let start = Instant::now();
    let w = solver.solve(&case.ours, Color::White);
    let b = solver.solve(&case.ours, Color::Black);
    tally.times.push(start.elapsed());
    for (v, want) in [(w, case.white), (b, case.black)] {
        match black_box(v) {
            Ok(Verdict::Winnable { .. }) => tally.disagree += usize::from(!want),
            Ok(Verdict::Unwinnable { .. }) => tally.disagree += usize::from(want),
            _ => tally.undetermined += 1,
        }
    }
}

fn theirs(case: &Case, tally: &mut Tally) {
    let start = Instant::now();
    let w = chasolver::winnability(&case.theirs, chess::Color::White);
    let b = chasolver::winnability(&case.theirs, chess::Color::Black);
    tally.times.push(start.elapsed());
    for (v, want) in [(w, case.white), (b, case.black)] {
        match black_box(v) {
            Some(chasolver::Winnability::Winnable { .. }) => tally.disagree += usize::from(!want),
            Some(chasolver::Winnability::Unwinnable) => tally.disagree += usize::from(want),
            None => tally.undetermined += 1,
        }
    }
}

fn arg(args: &[String], name: &str) -> Option<usize> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
}

#[path = "../tests/common/corpus_games.rs"]
mod corpus_games;

/// The per-change check on every position of the corpus games: the fast path's cost per
/// position, how many positions it passes to the solver, and what those cost.
fn per_change() {
    let games = corpus_games::load_corpus_games();
    let positions: Vec<Position> = games
        .iter()
        .flat_map(|g| (0..=g.game.ply()).filter_map(|i| g.game.position_at(i).map(|p| *p.board())))
        .collect();
    // Warm up, then time the fast path alone over all positions, five times.
    let mut passed = positions.iter().filter(|p| could_be_dead(p)).count();
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        passed = positions
            .iter()
            .filter(|p| could_be_dead(black_box(p)))
            .count();
        best = best.min(start.elapsed());
    }
    let mut solver_times = Vec::new();
    let mut dead = 0;
    let start = Instant::now();
    for p in &positions {
        let t = Instant::now();
        dead += usize::from(judge::is_dead(black_box(&(*p).into())));
        if could_be_dead(p) {
            solver_times.push(t.elapsed());
        }
    }
    let whole = start.elapsed();
    solver_times.sort();
    let n = positions.len();
    let max = solver_times.last().copied().unwrap_or_default();
    println!(
        "per-change check on {n} positions of {} corpus games: fast path {:.1} ns per position; passed to the solver {passed} ({:.2}%), those took p50 {:.1} µs, max {:.1} µs; dead {dead}; the whole check {:.1} ns per position on average",
        games.len(),
        best.as_secs_f64() * 1e9 / n as f64,
        100.0 * passed as f64 / n as f64,
        solver_times
            .get(solver_times.len() / 2)
            .map_or(0.0, |d| d.as_secs_f64() * 1e6),
        max.as_secs_f64() * 1e6,
        whole.as_secs_f64() * 1e9 / n as f64,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    if args.iter().any(|a| a == "--per-change") {
        per_change();
        return;
    }
    let limit = arg(&args, "--limit").unwrap_or(usize::MAX);
    let chunk = arg(&args, "--chunk").unwrap_or(256).max(1);
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chasolver_lichess.txt");
    let text = std::fs::read_to_string(&path).expect("tests/data/chasolver_lichess.txt present");
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .take(limit)
        .map(|line| {
            let (expected, fen) = line.split_once(' ').expect("`XY FEN` lines");
            Case {
                ours: Position::from_fen(fen, Variant::Standard).expect("our FEN parser"),
                theirs: chess::Board::from_str(fen).expect("chess's FEN parser"),
                white: expected.starts_with('W'),
                black: expected.ends_with('B'),
            }
        })
        .collect();
    println!(
        "winnability benchmark: {} lichess positions of chasolver's file, both colours each, blocks of {chunk} interleaved, one thread",
        cases.len()
    );
    let mut solver = Solver::new();
    let (mut a, mut b) = (Tally::default(), Tally::default());
    for (i, block) in cases.chunks(chunk).enumerate() {
        if i % 2 == 0 {
            block.iter().for_each(|c| ours(&mut solver, c, &mut a));
            block.iter().for_each(|c| theirs(c, &mut b));
        } else {
            block.iter().for_each(|c| theirs(c, &mut b));
            block.iter().for_each(|c| ours(&mut solver, c, &mut a));
        }
    }
    let ra = a.report("ours");
    let rb = b.report("chasolver");
    println!("throughput ratio ours/chasolver: {:.2}x", ra / rb);
}
