//! `chess-load`: a load generator for `chess-server` (tonic client).
//!
//! Runs N concurrent callers for a duration against one RPC (or a mix) and prints the
//! throughput and the p50/p99/p99.9 latency. `--matrix 1,16,64` measures every RPC kind
//! at each concurrency in one run, health Check included as the ceiling, and prints a
//! Markdown table for BENCHMARKS.md.
//!
//! Two clients (`--client`): `decode`, the generated typed tonic client, which decodes
//! every answer into messages as a real caller does; and `raw`, which sends the same
//! requests through the same channel but does not decode answer bodies (it checks the
//! gRPC status and counts the bytes), so its CPU cost per call is the same small constant
//! for every RPC and, with client and server on the same cores, the figure measures the
//! server. `--client both` runs every cell with each.
//!
//! Loopback only by intent: point `--target` at a server you run yourself.

mod args;
mod caller;
mod positions;
mod raw_codec;
mod report;
mod run;
mod workload;

use std::process::ExitCode;

use clap::Parser;

use args::{Args, ClientKind, Rpc};
use positions::FEN_SERIAL;
use report::Report;
use run::run;

// A faster allocator: the load generator decodes many small strings per call; a fast allocator keeps
// its own cost, which shares the machine with the server, low.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

async fn main_async(args: Args) -> Result<(), String> {
    if args.matrix.is_empty() {
        let client = match args.client {
            ClientKind::Both => ClientKind::Decode,
            c => c,
        };
        let [mode] = args.connections[..] else {
            return Err("a list of --connections needs --matrix; one run takes one".into());
        };
        let report = run(&args, args.rpc, client, mode, args.concurrency).await?;
        println!("{} loadavg={}", report.line(), loadavg());
        return Ok(());
    }
    let kinds = if args.kinds.is_empty() {
        vec![
            Rpc::Health,
            Rpc::LegalMovesGame,
            Rpc::LegalMovesFen,
            Rpc::LegalMovesFenMiss,
            Rpc::Play,
        ]
    } else {
        args.kinds.clone()
    };
    let clients = match args.client {
        ClientKind::Both => vec![ClientKind::Decode, ClientKind::Raw],
        c => vec![c],
    };
    // runs[cell] holds every repetition of that (concurrency, connections, client, rpc) cell.
    let mut runs: Vec<Vec<Report>> = Vec::new();
    for round in 0..args.repeat.max(1) {
        let mut cell = 0;
        for &concurrency in &args.matrix {
            for &mode in &args.connections {
                for &client in &clients {
                    for &rpc in &kinds {
                        let report = run(&args, rpc, client, mode, concurrency).await?;
                        eprintln!("round={round} {} loadavg={}", report.line(), loadavg());
                        if runs.len() <= cell {
                            runs.push(Vec::new());
                        }
                        runs[cell].push(report);
                        cell += 1;
                    }
                }
            }
        }
    }
    let median = |mut v: Vec<f64>| -> f64 {
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            f64::NAN
        } else {
            v[v.len() / 2]
        }
    };
    // The health ceiling of each round (same concurrency, connections and client), for
    // the ratio.
    let health_of = |of: &Report, round: usize| -> f64 {
        runs.iter()
            .flatten()
            .filter(|r| {
                r.rpc == Rpc::Health
                    && r.concurrency == of.concurrency
                    && r.mode == of.mode
                    && r.client == of.client
            })
            .nth(round)
            .map_or(f64::NAN, Report::throughput)
    };
    println!(
        "| clients | connections | client | RPC | req/s (median of {}) | p50 ms | p99 ms | p99.9 ms | errors | vs. health: median of per-round ratios (lowest-highest) |",
        args.repeat.max(1)
    );
    println!("| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for cell in &runs {
        let Some(first) = cell.first() else { continue };
        let ratios: Vec<f64> = cell
            .iter()
            .enumerate()
            .map(|(round, r)| r.throughput() / health_of(r, round))
            .collect();
        let lowest = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let highest = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ratio = median(ratios);
        println!(
            "| {} | {} | {} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {} | {:.2}x ({lowest:.2}-{highest:.2}) |",
            first.concurrency,
            first.mode.name(),
            first.client.name(),
            first.rpc.name(),
            median(cell.iter().map(Report::throughput).collect()),
            median(cell.iter().map(|r| r.percentile_ms(50.0)).collect()),
            median(cell.iter().map(|r| r.percentile_ms(99.0)).collect()),
            median(cell.iter().map(|r| r.percentile_ms(99.9)).collect()),
            cell.iter().map(|r| r.errors).sum::<u64>(),
            ratio
        );
    }
    Ok(())
}

/// The 1-minute load average, to show how busy the (shared) machine was.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64 % 2_000_000_000);
    FEN_SERIAL.store(seed, std::sync::atomic::Ordering::Relaxed);
    if args.concurrency == 0 || args.matrix.contains(&0) {
        eprintln!("chess-load: concurrency must be at least 1");
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("chess-load: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(main_async(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("chess-load: {e}");
            ExitCode::FAILURE
        }
    }
}
