//! `chess-load`: a load generator for `chess-server` (tonic client).
//!
//! Runs N concurrent callers for a duration against one RPC (or a mix) and prints the
//! throughput and the p50/p99/p99.9 latency. `--matrix 1,16,64` measures every RPC kind
//! at each concurrency in one run, health Check included as the ceiling, and prints a
//! Markdown table for BENCHMARKS.md.
//!
//! Loopback only by intent: point `--target` at a server you run yourself.

use std::process::ExitCode;

// A faster allocator: the load generator decodes many small strings per call; a fast allocator keeps
// its own cost, which shares the machine with the server, low.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chess_service::pb::{
    self, chess_service_client::ChessServiceClient, legal_moves_request::Position as Requested,
};
use chess_service::rules::{Game, Position};
use clap::Parser;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

/// What each caller sends.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Rpc {
    /// LegalMoves by game_id (each caller has its own game).
    LegalMovesGame,
    /// LegalMoves by FEN (stateless).
    LegalMovesFen,
    /// Play: each caller plays through its own game, starting a new one at the end.
    Play,
    /// grpc.health.v1.Health/Check: the cheapest call, the ceiling.
    Health,
    /// 50% LegalMoves by game, 20% by FEN, 25% Play, 5% GetGame.
    Mix,
}

impl Rpc {
    fn name(self) -> &'static str {
        match self {
            Rpc::LegalMovesGame => "LegalMoves (game_id)",
            Rpc::LegalMovesFen => "LegalMoves (fen)",
            Rpc::Play => "Play",
            Rpc::Health => "Health/Check",
            Rpc::Mix => "mix",
        }
    }
}

#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "chess-load",
    about = "Load generator for chess-server: throughput and latency percentiles."
)]
struct Args {
    /// The server's URL.
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    target: String,
    /// Concurrent callers.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Measured seconds per run (after the warm-up).
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Unmeasured warm-up seconds per run.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// The RPC to send.
    #[arg(long, value_enum, default_value_t = Rpc::LegalMovesGame)]
    rpc: Rpc,
    /// HTTP/2 connections shared by the callers (a tonic `Channel` each); one is how a
    /// backend usually talks to one server.
    #[arg(long, default_value_t = 1)]
    connections: usize,
    /// The position for LegalMoves by FEN (default: a middlegame with 48 legal moves).
    #[arg(
        long,
        default_value = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    )]
    fen: String,
    /// Run every RPC kind (health, LegalMoves by game and by FEN, Play) at each of these
    /// concurrencies and print a Markdown table, e.g. `1,16,64`.
    #[arg(long, value_delimiter = ',')]
    matrix: Vec<usize>,
    /// With --matrix: run the whole matrix this many times, interleaved, and report the
    /// median of each cell (these machines are noisy).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
}

/// One run's numbers.
struct Report {
    rpc: Rpc,
    concurrency: usize,
    connections: usize,
    seconds: f64,
    ok: u64,
    errors: u64,
    first_error: Option<String>,
    /// Latencies of successful calls, nanoseconds, sorted.
    latencies: Vec<u64>,
}

impl Report {
    fn throughput(&self) -> f64 {
        self.ok as f64 / self.seconds
    }

    fn percentile_ms(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * self.latencies.len() as f64).ceil() as usize;
        let i = rank.clamp(1, self.latencies.len()) - 1;
        self.latencies[i] as f64 / 1e6
    }

    fn line(&self) -> String {
        format!(
            "rpc={:?} concurrency={} connections={} seconds={:.1} ok={} errors={} throughput={:.0}/s p50={:.3}ms p99={:.3}ms p99.9={:.3}ms{}",
            self.rpc,
            self.concurrency,
            self.connections,
            self.seconds,
            self.ok,
            self.errors,
            self.throughput(),
            self.percentile_ms(50.0),
            self.percentile_ms(99.0),
            self.percentile_ms(99.9),
            self.first_error
                .as_ref()
                .map(|e| format!(" first_error={e:?}"))
                .unwrap_or_default()
        )
    }
}

/// A small deterministic generator (xorshift64*), for picking moves.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// A random legal game of at most `max_plies` plies (UCI moves), computed locally so the
/// load generator spends no server calls on choosing moves.
fn random_game(seed: u64, max_plies: usize) -> Vec<String> {
    let mut rng = Rng(seed | 1);
    let mut game = Game::new(Position::new());
    let mut moves = Vec::new();
    while moves.len() < max_plies {
        let legal = game.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = legal[(rng.next() % legal.len() as u64) as usize];
        moves.push(game.position().uci(m));
        if game.play(m).is_err() {
            break;
        }
    }
    moves
}

/// One caller's state.
struct Caller {
    chess: ChessServiceClient<Channel>,
    health: HealthClient<Channel>,
    fen: String,
    game_id: String,
    script: Vec<String>,
    ply: usize,
    rng: Rng,
}

impl Caller {
    async fn new(channel: Channel, fen: String, seed: u64) -> Result<Caller, tonic::Status> {
        let mut chess = ChessServiceClient::new(channel.clone());
        let game = chess
            .new_game(pb::NewGameRequest::default())
            .await?
            .into_inner()
            .game
            .unwrap_or_default();
        // A game a few moves in, so LegalMoves by game is not the opening position.
        let script = random_game(seed, 120);
        let mut caller = Caller {
            chess,
            health: HealthClient::new(channel),
            fen,
            game_id: game.game_id,
            script,
            ply: 0,
            rng: Rng(seed.wrapping_mul(7919) | 1),
        };
        for _ in 0..6.min(caller.script.len()) {
            caller.play().await?;
        }
        Ok(caller)
    }

    async fn play(&mut self) -> Result<(), tonic::Status> {
        if self.ply >= self.script.len() {
            let game = self
                .chess
                .new_game(pb::NewGameRequest::default())
                .await?
                .into_inner()
                .game;
            self.game_id = game.unwrap_or_default().game_id;
            self.ply = 0;
        }
        let req = pb::PlayRequest {
            game_id: self.game_id.clone(),
            r#move: self.script[self.ply].clone(),
            expected_ply: Some(self.ply as u32),
            color: 0,
        };
        self.chess.play(req).await?;
        self.ply += 1;
        Ok(())
    }

    async fn call(&mut self, rpc: Rpc) -> Result<(), tonic::Status> {
        match rpc {
            Rpc::Health => {
                let req = HealthCheckRequest {
                    service: "chess.v1.ChessService".into(),
                };
                self.health.check(req).await.map(drop)
            }
            Rpc::LegalMovesGame => {
                let req = pb::LegalMovesRequest {
                    position: Some(Requested::GameId(self.game_id.clone())),
                    variant: 0,
                };
                self.chess.legal_moves(req).await.map(drop)
            }
            Rpc::LegalMovesFen => {
                let req = pb::LegalMovesRequest {
                    position: Some(Requested::Fen(self.fen.clone())),
                    variant: 0,
                };
                self.chess.legal_moves(req).await.map(drop)
            }
            Rpc::Play => self.play().await,
            Rpc::Mix => {
                let pick = self.rng.next() % 100;
                let rpc = match pick {
                    0..50 => Rpc::LegalMovesGame,
                    50..70 => Rpc::LegalMovesFen,
                    70..95 => Rpc::Play,
                    _ => {
                        let req = pb::GetGameRequest {
                            game_id: self.game_id.clone(),
                        };
                        return self.chess.get_game(req).await.map(drop);
                    }
                };
                Box::pin(self.call(rpc)).await
            }
        }
    }
}

async fn connect(target: &str, count: usize) -> Result<Vec<Channel>, String> {
    let endpoint = Endpoint::from_shared(target.to_string())
        .map_err(|e| format!("bad --target {target}: {e}"))?;
    let mut channels = Vec::with_capacity(count);
    for _ in 0..count {
        channels.push(
            endpoint
                .connect()
                .await
                .map_err(|e| format!("cannot connect to {target}: {e}"))?,
        );
    }
    Ok(channels)
}

async fn run(args: &Args, rpc: Rpc, concurrency: usize) -> Result<Report, String> {
    let connections = if args.connections == 0 {
        concurrency.div_ceil(16).max(1)
    } else {
        args.connections
    };
    let channels = connect(&args.target, connections).await?;
    let mut callers = Vec::with_capacity(concurrency);
    for i in 0..concurrency {
        let channel = channels[i % channels.len()].clone();
        let caller = Caller::new(
            channel,
            args.fen.clone(),
            0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
        )
        .await
        .map_err(|e| format!("setting up caller {i}: {e}"))?;
        callers.push(caller);
    }
    let warmup = Duration::from_secs_f64(args.warmup);
    let measured = Duration::from_secs_f64(args.duration);
    let start = Instant::now() + Duration::from_millis(50);
    let measure_from = start + warmup;
    let end = measure_from + measured;
    let first_error = Arc::new(std::sync::Mutex::new(None::<String>));
    let mut tasks = Vec::with_capacity(concurrency);
    for mut caller in callers {
        let first_error = first_error.clone();
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(start.into()).await;
            let mut latencies = Vec::with_capacity(1 << 16);
            let mut errors = 0u64;
            loop {
                let t0 = Instant::now();
                if t0 >= end {
                    break;
                }
                let result = caller.call(rpc).await;
                let t1 = Instant::now();
                if t0 < measure_from || t1 > end {
                    continue;
                }
                match result {
                    Ok(()) => latencies.push((t1 - t0).as_nanos() as u64),
                    Err(status) => {
                        errors += 1;
                        if let Ok(mut first) = first_error.lock() {
                            first.get_or_insert_with(|| {
                                format!("{:?}: {}", status.code(), status.message())
                            });
                        }
                    }
                }
            }
            (latencies, errors)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (l, e) = task
            .await
            .map_err(|e| format!("a caller task failed: {e}"))?;
        latencies.extend(l);
        errors += e;
    }
    latencies.sort_unstable();
    let first_error = first_error.lock().map(|e| e.clone()).unwrap_or_default();
    Ok(Report {
        rpc,
        concurrency,
        connections,
        seconds: measured.as_secs_f64(),
        ok: latencies.len() as u64,
        errors,
        first_error,
        latencies,
    })
}

async fn main_async(args: Args) -> Result<(), String> {
    if args.matrix.is_empty() {
        let report = run(&args, args.rpc, args.concurrency).await?;
        println!("{}", report.line());
        return Ok(());
    }
    let kinds = [
        Rpc::Health,
        Rpc::LegalMovesGame,
        Rpc::LegalMovesFen,
        Rpc::Play,
    ];
    // runs[cell] holds every repetition of that (concurrency, rpc) cell.
    let mut runs: Vec<Vec<Report>> = Vec::new();
    for round in 0..args.repeat.max(1) {
        let mut cell = 0;
        for &concurrency in &args.matrix {
            for rpc in kinds {
                let report = run(&args, rpc, concurrency).await?;
                eprintln!("round={round} {} loadavg={}", report.line(), loadavg());
                if runs.len() <= cell {
                    runs.push(Vec::new());
                }
                runs[cell].push(report);
                cell += 1;
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
    // The health ceiling of each round, for the per-round ratio.
    let health_of = |concurrency: usize, round: usize| -> f64 {
        runs.iter()
            .flatten()
            .filter(|r| r.rpc == Rpc::Health && r.concurrency == concurrency)
            .nth(round)
            .map_or(f64::NAN, Report::throughput)
    };
    println!(
        "| clients | RPC | req/s (median of {}) | p50 ms | p99 ms | p99.9 ms | errors | vs. health (median of per-round ratios) |",
        args.repeat.max(1)
    );
    println!("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for cell in &runs {
        let Some(first) = cell.first() else { continue };
        let ratio = median(
            cell.iter()
                .enumerate()
                .map(|(round, r)| r.throughput() / health_of(r.concurrency, round))
                .collect(),
        );
        println!(
            "| {} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {} | {:.2}x |",
            first.concurrency,
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
