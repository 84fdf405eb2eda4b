//! Winnability speed against chasolver 3.0.0 on its own lichess verdict file (65,536
//! positions): the full verdict for both colours, ours and chasolver's, interleaved in one
//! process so machine noise hits both alike.
//!
//! `cargo bench --bench winnability` (optionally `-- --limit N` for the first N positions,
//! `--chunk N` for the interleaving block, default 256). Each block of positions is timed
//! with one solver and then the other (the order alternating between blocks); a position's
//! time is both colours' verdicts. The report: positions/s, p50/p99/max per position,
//! Undetermined counts, agreement with the file, and our throughput over chasolver's.

use std::hint::black_box;
use std::str::FromStr;
use std::time::{Duration, Instant};

use chess_service::rules::winnability::{Solver, Verdict};
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
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
