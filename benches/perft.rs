//! Perft speed against the fastest Rust peers, in one process and one run.
//!
//! `cargo bench --bench perft` (optionally `-- --rounds N`). Each round times every engine
//! on every position once, engines interleaved, so machine noise hits all alike; the report
//! gives per-position medians, the overall rate (total nodes / sum of median times), our
//! ratio to each peer, and our multi-threaded speed-up. All engines: one thread, bulk
//! counting at the last ply, the same portable build flags (no target-cpu=native; ours
//! picks its BMI2 path at run time).

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use chess_service::rules::variant::{
    Antichess, Atomic, Crazyhouse, Horde, KingOfTheHill, RacingKings, ThreeCheck, VariantPosition,
    VariantRules,
};
use chess_service::rules::{Position, Variant, perft, perft_parallel};

const POSITIONS: [(&str, &str, u32, u64); 5] = [
    (
        "start",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        6,
        119_060_324,
    ),
    (
        "kiwipete",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        5,
        193_690_690,
    ),
    (
        "position 3",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        6,
        11_030_083,
    ),
    (
        "position 4",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        5,
        15_833_292,
    ),
    (
        "position 5",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        5,
        89_941_194,
    ),
];

fn cozy_perft(board: &cozy_chess::Board, depth: u32) -> u64 {
    let mut nodes = 0;
    if depth == 1 {
        board.generate_moves(|moves| {
            nodes += moves.len() as u64;
            false
        });
    } else {
        board.generate_moves(|moves| {
            for mv in moves {
                let mut child = board.clone();
                child.play_unchecked(mv);
                nodes += cozy_perft(&child, depth - 1);
            }
            false
        });
    }
    nodes
}

type Runner = Box<dyn Fn() -> u64>;

fn runners(fen: &str, depth: u32) -> Vec<(&'static str, Runner)> {
    let ours = Position::from_fen(fen, Variant::Standard).expect("valid FEN");
    let cozy: cozy_chess::Board = fen.parse().expect("cozy parses the FEN");
    let shak: shakmaty::Chess = fen
        .parse::<shakmaty::fen::Fen>()
        .expect("shakmaty parses the FEN")
        .into_position(shakmaty::CastlingMode::Standard)
        .expect("legal position");
    vec![
        ("ours", Box::new(move || perft(black_box(&ours), depth))),
        (
            "cozy-chess 0.3.4",
            Box::new(move || cozy_perft(black_box(&cozy), depth)),
        ),
        (
            "shakmaty 0.30.1",
            Box::new(move || shakmaty::perft(black_box(&shak), depth)),
        ),
    ]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    if args.iter().any(|a| a == "--list") {
        return;
    }
    if args.iter().any(|a| a == "--variants") {
        let value_of = |flag: &str| {
            let at = args.iter().position(|a| a == flag)?;
            args.get(at + 1).cloned()
        };
        variants(rounds, value_of("--only"), value_of("--engine"));
        return;
    }
    if args.iter().any(|a| a == "--parallel-only") {
        parallel(rounds);
        return;
    }
    println!(
        "perft benchmark: {rounds} interleaved rounds, one thread, bulk counting; our back-end: {}; cozy-chess pext feature: {}; built for {}",
        chess_service::rules::perft::backend_name(),
        if cfg!(feature = "cozy-pext") {
            "on"
        } else {
            "off"
        },
        if cfg!(target_feature = "bmi2") {
            "a BMI2 CPU (target-cpu)"
        } else {
            "any x86-64 (portable)"
        },
    );
    let table: Vec<_> = POSITIONS
        .iter()
        .map(|(_, fen, depth, _)| runners(fen, *depth))
        .collect();
    let engines: Vec<&str> = table[0].iter().map(|(n, _)| *n).collect();
    // times[position][engine] = seconds per round
    let mut times = vec![vec![Vec::new(); engines.len()]; POSITIONS.len()];
    for round in 0..rounds {
        for (p, runs) in table.iter().enumerate() {
            // Rotate the engine order each round so none always runs first.
            for k in 0..runs.len() {
                let e = (k + round) % runs.len();
                let start = Instant::now();
                let nodes = (runs[e].1)();
                times[p][e].push(start.elapsed().as_secs_f64());
                assert_eq!(
                    nodes, POSITIONS[p].3,
                    "{} on {}",
                    engines[e], POSITIONS[p].0
                );
            }
        }
    }
    println!(
        "\n| position | depth | nodes | {} |",
        engines
            .iter()
            .map(|e| format!("{e} M nodes/s"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|---|---|{}", "---|".repeat(engines.len()));
    let mut total_time = vec![0.0; engines.len()];
    let total_nodes: u64 = POSITIONS.iter().map(|p| p.3).sum();
    for (p, (name, _, depth, nodes)) in POSITIONS.iter().enumerate() {
        let medians: Vec<f64> = times[p].iter().map(|t| median(t.clone())).collect();
        for (e, m) in medians.iter().enumerate() {
            total_time[e] += m;
        }
        let rates: Vec<String> = medians
            .iter()
            .map(|t| format!("{:.1}", *nodes as f64 / t / 1e6))
            .collect();
        println!("| {name} | {depth} | {nodes} | {} |", rates.join(" | "));
    }
    let overall: Vec<f64> = total_time
        .iter()
        .map(|t| total_nodes as f64 / t / 1e6)
        .collect();
    println!(
        "| **all five** | | {total_nodes} | {} |",
        overall
            .iter()
            .map(|r| format!("**{r:.1}**"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!();
    for (e, name) in engines.iter().enumerate().skip(1) {
        println!("ours / {name}: {:.2}x", overall[0] / overall[e]);
    }

    parallel(rounds);
}

/// Parallel speed-up: all cores against one thread, same positions, interleaved; medians
/// per position and of the per-round totals.
fn parallel(rounds: usize) {
    let threads = chess_service::rules::perft::available_threads();
    let never = AtomicBool::new(false);
    let total_nodes: u64 = POSITIONS.iter().map(|p| p.3).sum();
    let mut one = vec![Vec::new(); POSITIONS.len()];
    let mut all = vec![Vec::new(); POSITIONS.len()];
    let (mut one_total, mut all_total) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(3) {
        let (mut t1, mut tn) = (0.0, 0.0);
        for (p, (_, fen, depth, nodes)) in POSITIONS.into_iter().enumerate() {
            let pos = Position::from_fen(fen, Variant::Standard).expect("valid FEN");
            for (n, times, total) in [(1, &mut one, &mut t1), (threads, &mut all, &mut tn)] {
                let s = Instant::now();
                let got = perft_parallel(&pos, depth, n, false, &never).expect("not stopped");
                let took = s.elapsed().as_secs_f64();
                assert_eq!(got.nodes, nodes);
                times[p].push(took);
                *total += took;
            }
        }
        one_total.push(t1);
        all_total.push(tn);
    }
    for (p, (name, ..)) in POSITIONS.iter().enumerate() {
        let (t1, tn) = (median(one[p].clone()), median(all[p].clone()));
        println!("parallel {name}: {:.2}x", t1 / tn);
    }
    let (t1, tn) = (median(one_total), median(all_total));
    println!(
        "parallel: 1 thread {:.1} M nodes/s, {threads} threads {:.1} M nodes/s: {:.2}x",
        total_nodes as f64 / t1 / 1e6,
        total_nodes as f64 / tn / 1e6,
        t1 / tn
    );
}

/// One variant position for the variant benchmark: (variant, lichess key, FEN, depth).
const VARIANT_POSITIONS: [(&str, &str, u32); 7] = [
    (
        "atomic",
        "rn2kb1r/1pp1p2p/p2q1pp1/3P4/2P3b1/4PN2/PP3PPP/R2QKB1R b KQkq - 0 1",
        4,
    ),
    (
        "crazyhouse",
        "r1bqk2r/pppp1ppp/2n1p3/4P3/1b1Pn3/2NB1N2/PPP2PPP/R1BQK2R[] b KQkq - 0 1",
        4,
    ),
    (
        "antichess",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
        5,
    ),
    (
        "horde",
        "rnbqkbnr/pppppppp/8/1PP2PP1/PPPPPPPP/PPPPPPPP/PPPPPPPP/PPPPPPPP w kq - 0 1",
        6,
    ),
    ("racingKings", "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w - - 0 1", 5),
    (
        "kingOfTheHill",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        5,
    ),
    (
        "threeCheck",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 +0+0",
        4,
    ),
];

fn ours_variant<R: VariantRules>(fen: &str, depth: u32) -> Runner {
    let pos = VariantPosition::<R>::from_fen(fen).expect("valid FEN");
    Box::new(move || black_box(&pos).perft(depth))
}

fn shakmaty_variant<P>(fen: &str, depth: u32) -> Runner
where
    P: shakmaty::Position + shakmaty::FromSetup + Clone + 'static,
{
    let pos: P = fen
        .parse::<shakmaty::fen::Fen>()
        .expect("shakmaty parses the FEN")
        .into_position(shakmaty::CastlingMode::Chess960)
        .expect("legal position");
    Box::new(move || shakmaty::perft(black_box(&pos), depth))
}

/// Perft in each of lichess's variants against shakmaty's, interleaved as the standard
/// benchmark is: `cargo bench --bench perft -- --variants --rounds N`. For a profiler,
/// `--only KEY` keeps one variant (its lichess key) and `--engine ours|shakmaty` runs one
/// engine alone (no ratio is printed then).
fn variants(rounds: usize, only: Option<String>, engine: Option<String>) {
    use shakmaty::variant as sv;
    println!("variant perft benchmark: {rounds} interleaved rounds, one thread\n");
    println!(
        "| variant | depth | nodes | ours M nodes/s | shakmaty 0.30.1 M nodes/s | ours / shakmaty |"
    );
    println!("|---|---|---|---|---|---|");
    for (key, fen, depth) in VARIANT_POSITIONS {
        if only.as_deref().is_some_and(|k| k != key) {
            continue;
        }
        let (ours, theirs): (Runner, Runner) = match key {
            "atomic" => (
                ours_variant::<Atomic>(fen, depth),
                shakmaty_variant::<sv::Atomic>(fen, depth),
            ),
            "crazyhouse" => (
                ours_variant::<Crazyhouse>(fen, depth),
                shakmaty_variant::<sv::Crazyhouse>(fen, depth),
            ),
            "antichess" => (
                ours_variant::<Antichess>(fen, depth),
                shakmaty_variant::<sv::Antichess>(fen, depth),
            ),
            "horde" => (
                ours_variant::<Horde>(fen, depth),
                shakmaty_variant::<sv::Horde>(fen, depth),
            ),
            "racingKings" => (
                ours_variant::<RacingKings>(fen, depth),
                shakmaty_variant::<sv::RacingKings>(fen, depth),
            ),
            "kingOfTheHill" => (
                ours_variant::<KingOfTheHill>(fen, depth),
                shakmaty_variant::<sv::KingOfTheHill>(fen, depth),
            ),
            _ => (
                ours_variant::<ThreeCheck>(fen, depth),
                shakmaty_variant::<sv::ThreeCheck>(fen, depth),
            ),
        };
        if let Some(engine) = engine.as_deref() {
            let run = if engine == "shakmaty" { &theirs } else { &ours };
            let mut times = Vec::new();
            let mut nodes = 0;
            for _ in 0..rounds {
                let start = Instant::now();
                nodes = run();
                times.push(start.elapsed().as_secs_f64());
            }
            let t = median(times);
            println!(
                "{key}, {engine} alone: {nodes} nodes, {:.1} M nodes/s",
                nodes as f64 / t / 1e6
            );
            continue;
        }
        let (mut t_ours, mut t_theirs) = (Vec::new(), Vec::new());
        let mut nodes = 0;
        for round in 0..rounds {
            let order: [(&Runner, &mut Vec<f64>); 2] = if round % 2 == 0 {
                [(&ours, &mut t_ours), (&theirs, &mut t_theirs)]
            } else {
                [(&theirs, &mut t_theirs), (&ours, &mut t_ours)]
            };
            let mut counts = Vec::new();
            for (run, times) in order {
                let start = Instant::now();
                counts.push(run());
                times.push(start.elapsed().as_secs_f64());
            }
            assert_eq!(counts[0], counts[1], "{key}: the two engines disagree");
            nodes = counts[0];
        }
        let (a, b) = (median(t_ours), median(t_theirs));
        println!(
            "| {key} | {depth} | {nodes} | {:.1} | {:.1} | {:.2}x |",
            nodes as f64 / a / 1e6,
            nodes as f64 / b / 1e6,
            b / a
        );
    }
}
