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

use std::process::ExitCode;

// A faster allocator: the load generator decodes many small strings per call; a fast allocator keeps
// its own cost, which shares the machine with the server, low.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Buf as _;
use chess_service::pb::{
    self, chess_service_client::ChessServiceClient, legal_moves_request::Position as Requested,
};
use chess_service::rules::{Game, Position};
use clap::Parser;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
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
    /// LegalMoves by FEN, a different FEN on every call: the 614 positions of the perft
    /// suites (standard and Chess960) in rotation, each call with a full-move number no
    /// other call of this process used, so a server-side FEN cache never hits.
    LegalMovesFenMiss,
    /// 50% LegalMoves by game, 20% by FEN, 25% Play, 5% GetGame.
    Mix,
    /// Play on the caller's replica while a spectator on the next one (in `--target`
    /// order) watches the same game: each call lasts from sending the Play until that
    /// spectator has received the move, so the latency is what a watcher on another
    /// replica sees. With one target the spectator is on the same server.
    WatchOther,
}

impl Rpc {
    fn name(self) -> &'static str {
        match self {
            Rpc::LegalMovesGame => "LegalMoves (game_id)",
            Rpc::LegalMovesFen => "LegalMoves (fen, one FEN)",
            Rpc::LegalMovesFenMiss => "LegalMoves (fen, every call a new FEN)",
            Rpc::Play => "Play",
            Rpc::Health => "Health/Check",
            Rpc::Mix => "mix",
            Rpc::WatchOther => "Play seen by a spectator on the next replica",
        }
    }
}

/// How answers are received.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ClientKind {
    /// The generated tonic client: every answer decoded into messages.
    Decode,
    /// Answer bodies not decoded: the status is checked and the bytes counted.
    Raw,
    /// With --matrix: every cell with each client.
    Both,
}

impl ClientKind {
    fn name(self) -> &'static str {
        match self {
            ClientKind::Decode => "decode",
            ClientKind::Raw => "raw",
            ClientKind::Both => "both",
        }
    }
}

#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "chess-load",
    about = "Load generator for chess-server: throughput and latency percentiles."
)]
struct Args {
    /// The server's URL; a comma-separated list spreads the connections (and so the
    /// callers) over several replicas in turn.
    #[arg(long, value_delimiter = ',', default_value = "http://127.0.0.1:50051")]
    target: Vec<String>,
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
    /// HTTP/2 connections (a tonic `Channel` each): a number N shared by the callers (one
    /// is how a backend process usually talks to one server; 0: one per 16 callers), or
    /// `per-client`: every caller its own connection, as separate client processes (or
    /// h2load's "clients") would be. A comma-separated list with --matrix runs each.
    #[arg(long, value_parser = parse_connections, value_delimiter = ',', default_value = "1")]
    connections: Vec<Connections>,
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
    /// With --matrix: the RPC kinds to run (default: health, both LegalMoves by FEN
    /// kinds, LegalMoves by game, Play).
    #[arg(long, value_enum, value_delimiter = ',')]
    kinds: Vec<Rpc>,
    /// Decode answers (`decode`, a real caller), or not (`raw`: measures the server), or
    /// `both` (with --matrix).
    #[arg(long, value_enum, default_value_t = ClientKind::Decode)]
    client: ClientKind,
}

/// How the callers of a run share HTTP/2 connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Connections {
    /// This many connections, callers spread over them round-robin (0: one per 16 callers).
    Shared(usize),
    /// One connection per caller.
    PerClient,
}

impl Connections {
    /// How many connections `concurrency` callers open.
    fn count(self, concurrency: usize) -> usize {
        match self {
            Connections::Shared(0) => concurrency.div_ceil(16).max(1),
            Connections::Shared(n) => n,
            Connections::PerClient => concurrency,
        }
    }

    fn name(self) -> String {
        match self {
            Connections::Shared(0) => "1 per 16".into(),
            Connections::Shared(n) => n.to_string(),
            Connections::PerClient => "1 per client".into(),
        }
    }
}

fn parse_connections(text: &str) -> Result<Connections, String> {
    match text {
        "per-client" => Ok(Connections::PerClient),
        n => n
            .parse()
            .map(Connections::Shared)
            .map_err(|_| format!("--connections takes a number or `per-client`, not {n:?}")),
    }
}

/// One run's numbers.
struct Report {
    rpc: Rpc,
    client: ClientKind,
    concurrency: usize,
    mode: Connections,
    seconds: f64,
    ok: u64,
    errors: u64,
    first_error: Option<String>,
    /// Latencies of successful calls, nanoseconds, sorted.
    latencies: Vec<u64>,
    /// Encoded answer bytes received by successful calls (counted by the raw client only).
    answer_bytes: u64,
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
            "rpc={:?} client={} concurrency={} connections={} seconds={:.1} ok={} errors={} bytes/answer={:.0} throughput={:.0}/s p50={:.3}ms p99={:.3}ms p99.9={:.3}ms{}",
            self.rpc,
            self.client.name(),
            self.concurrency,
            self.mode.count(self.concurrency),
            self.seconds,
            self.ok,
            self.errors,
            self.answer_bytes as f64 / self.ok.max(1) as f64,
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

/// A codec that encodes requests as prost messages and does not decode answers: it
/// takes the body's bytes off the buffer and returns how many there were. The gRPC status
/// is still checked by tonic (a failed call is an error, as with the typed client).
struct RawCodec<Req>(std::marker::PhantomData<Req>);

impl<Req> Default for RawCodec<Req> {
    fn default() -> Self {
        RawCodec(std::marker::PhantomData)
    }
}

struct RawEncoder<Req>(std::marker::PhantomData<Req>);
struct CountingDecoder;

impl<Req: prost::Message + Send + 'static> Codec for RawCodec<Req> {
    type Encode = Req;
    type Decode = usize;
    type Encoder = RawEncoder<Req>;
    type Decoder = CountingDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        RawEncoder(std::marker::PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        CountingDecoder
    }
}

impl<Req: prost::Message> Encoder for RawEncoder<Req> {
    type Item = Req;
    type Error = tonic::Status;

    fn encode(&mut self, item: Req, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        item.encode(dst)
            .map_err(|e| tonic::Status::internal(format!("encoding a request: {e}")))
    }
}

impl Decoder for CountingDecoder {
    type Item = usize;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<usize>, tonic::Status> {
        let n = src.remaining();
        src.advance(n);
        Ok(Some(n))
    }
}

/// The perft suites' positions (FEN without the move counters, and the variant), for
/// LegalMoves by FEN with a new FEN on every call.
fn suite_positions() -> Vec<(String, i32)> {
    let files = [
        (
            include_str!("../../tests/data/standard.epd"),
            pb::Variant::Standard,
        ),
        (
            include_str!("../../tests/data/cpw.epd"),
            pb::Variant::Standard,
        ),
        (
            include_str!("../../tests/data/chess960.epd"),
            pb::Variant::Chess960,
        ),
    ];
    let mut out = Vec::new();
    for (text, variant) in files {
        for line in text.lines() {
            let fen = line.split(';').next().unwrap_or("");
            let fields: Vec<&str> = fen.split_whitespace().collect();
            if fields.len() < 4 {
                continue;
            }
            // Placement, side, castling, en passant and the half-move clock; the
            // full-move number is added per call.
            let halfmoves = fields.get(4).copied().unwrap_or("0");
            out.push((
                format!("{} {halfmoves}", fields[..4].join(" ")),
                variant as i32,
            ));
        }
    }
    out
}

/// Numbers LegalMoves-by-FEN calls across the whole process (all runs), so no two calls
/// send the same FEN. Starts at a value taken from the clock so that two processes in a
/// row against one server do not repeat each other's FENs either.
static FEN_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Which call of the process this is, for a FEN no other call sent.
fn next_fen_serial() -> u64 {
    FEN_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// One caller's state.
struct Caller {
    chess: ChessServiceClient<Channel>,
    health: HealthClient<Channel>,
    raw: tonic::client::Grpc<Channel>,
    client: ClientKind,
    positions: Arc<Vec<(String, i32)>>,
    fen: String,
    game_id: String,
    script: Vec<String>,
    ply: usize,
    rng: Rng,
    /// For [`Rpc::WatchOther`]: the channel the spectator uses, and its open stream on
    /// the current game.
    watcher: Option<Channel>,
    watch: Option<tonic::Streaming<pb::WatchGameResponse>>,
}

impl Caller {
    async fn new(
        channel: Channel,
        fen: String,
        positions: Arc<Vec<(String, i32)>>,
        client: ClientKind,
        seed: u64,
    ) -> Result<Caller, tonic::Status> {
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
            health: HealthClient::new(channel.clone()),
            raw: tonic::client::Grpc::new(channel),
            client,
            positions,
            fen,
            game_id: game.game_id,
            script,
            ply: 0,
            rng: Rng(seed.wrapping_mul(7919) | 1),
            watcher: None,
            watch: None,
        };
        for _ in 0..6.min(caller.script.len()) {
            caller.play().await?;
        }
        Ok(caller)
    }

    /// Sends `req` to `path` and counts the answer's bytes without decoding it.
    async fn raw_call<Req: prost::Message + Send + Sync + 'static>(
        &mut self,
        path: &'static str,
        req: Req,
    ) -> Result<u64, tonic::Status> {
        self.raw
            .ready()
            .await
            .map_err(|e| tonic::Status::unavailable(format!("channel not ready: {e}")))?;
        let answer = self
            .raw
            .unary(
                tonic::Request::new(req),
                PathAndQuery::from_static(path),
                RawCodec::<Req>::default(),
            )
            .await?;
        Ok(answer.into_inner() as u64)
    }

    /// LegalMoves, by the configured client; returns the answer's bytes (raw client) or 0.
    async fn legal_moves(&mut self, req: pb::LegalMovesRequest) -> Result<u64, tonic::Status> {
        if self.client == ClientKind::Raw {
            return self
                .raw_call("/chess.v1.ChessService/LegalMoves", req)
                .await;
        }
        self.chess.legal_moves(req).await.map(|_| 0)
    }

    async fn play(&mut self) -> Result<u64, tonic::Status> {
        if self.ply >= self.script.len() {
            let game = self
                .chess
                .new_game(pb::NewGameRequest::default())
                .await?
                .into_inner()
                .game;
            self.game_id = game.unwrap_or_default().game_id;
            self.ply = 0;
            self.watch = None;
        }
        let req = pb::PlayRequest {
            game_id: self.game_id.clone(),
            r#move: self.script[self.ply].clone(),
            expected_ply: Some(self.ply as u32),
            color: 0,
            ..Default::default()
        };
        let bytes = if self.client == ClientKind::Raw {
            self.raw_call("/chess.v1.ChessService/Play", req).await?
        } else {
            self.chess.play(req).await?;
            0
        };
        self.ply += 1;
        Ok(bytes)
    }

    /// A Play, then the wait until the spectator on the other replica has its move.
    async fn play_watched(&mut self) -> Result<u64, tonic::Status> {
        if self.ply >= self.script.len() {
            // A new game (and so a new stream), before the timed part of the next call.
            return self.play().await;
        }
        if self.watch.is_none() {
            let channel = self
                .watcher
                .clone()
                .ok_or_else(|| tonic::Status::internal("no spectator channel"))?;
            let stream = ChessServiceClient::new(channel)
                .watch_game(pb::WatchGameRequest {
                    game_id: self.game_id.clone(),
                    from_version: self.ply as u64 + 1,
                })
                .await?
                .into_inner();
            self.watch = Some(stream);
        }
        // Each move is one event: the move of ply n makes version n + 1.
        let want = self.ply as u64 + 1;
        self.play().await?;
        let Some(watch) = self.watch.as_mut() else {
            return Err(tonic::Status::internal("the watch stream is gone"));
        };
        loop {
            let message = watch
                .message()
                .await?
                .ok_or_else(|| tonic::Status::unavailable("the watch stream ended"))?;
            match message.message {
                Some(pb::watch_game_response::Message::Event(e)) if e.version >= want => {
                    return Ok(0);
                }
                Some(pb::watch_game_response::Message::Event(_)) => {}
                _ => {
                    self.watch = None;
                    return Err(tonic::Status::data_loss("the spectator was told to resync"));
                }
            }
        }
    }

    /// One call; returns the answer's bytes (raw client) or 0.
    async fn call(&mut self, rpc: Rpc) -> Result<u64, tonic::Status> {
        match rpc {
            Rpc::Health => {
                let req = HealthCheckRequest {
                    service: "chess.v1.ChessService".into(),
                };
                if self.client == ClientKind::Raw {
                    return self.raw_call("/grpc.health.v1.Health/Check", req).await;
                }
                self.health.check(req).await.map(|_| 0)
            }
            Rpc::LegalMovesGame => {
                let req = pb::LegalMovesRequest {
                    position: Some(Requested::GameId(self.game_id.clone())),
                    variant: 0,
                };
                self.legal_moves(req).await
            }
            Rpc::LegalMovesFen => {
                let req = pb::LegalMovesRequest {
                    position: Some(Requested::Fen(self.fen.clone())),
                    variant: 0,
                };
                self.legal_moves(req).await
            }
            Rpc::LegalMovesFenMiss => {
                let serial = next_fen_serial();
                let (fen, variant) =
                    &self.positions[(serial % self.positions.len() as u64) as usize];
                // Full-move numbers 1..=4e9 (the rules keep them as u32).
                let fullmove = 1 + serial % 4_000_000_000;
                let req = pb::LegalMovesRequest {
                    position: Some(Requested::Fen(format!("{fen} {fullmove}"))),
                    variant: *variant,
                };
                self.legal_moves(req).await
            }
            Rpc::Play => self.play().await,
            Rpc::WatchOther => self.play_watched().await,
            Rpc::Mix => {
                let pick = self.rng.next() % 100;
                let rpc = match pick {
                    0..50 => Rpc::LegalMovesGame,
                    50..70 => Rpc::LegalMovesFen,
                    70..95 => Rpc::Play,
                    _ => {
                        let req = pb::GetGameRequest {
                            game_id: self.game_id.clone(),
                            ..Default::default()
                        };
                        return self.chess.get_game(req).await.map(|_| 0);
                    }
                };
                Box::pin(self.call(rpc)).await
            }
        }
    }
}

/// `count` connections (at least one a target), to the targets in turn.
async fn connect(targets: &[String], count: usize) -> Result<Vec<Channel>, String> {
    let endpoints = targets
        .iter()
        .map(|t| Endpoint::from_shared(t.clone()).map_err(|e| format!("bad --target {t}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    if endpoints.is_empty() {
        return Err("no --target".into());
    }
    let count = count.max(endpoints.len());
    let mut channels = Vec::with_capacity(count);
    for i in 0..count {
        let endpoint = &endpoints[i % endpoints.len()];
        channels.push(
            endpoint
                .connect()
                .await
                .map_err(|e| format!("cannot connect to {}: {e}", targets[i % targets.len()]))?,
        );
    }
    Ok(channels)
}

async fn run(
    args: &Args,
    rpc: Rpc,
    client: ClientKind,
    mode: Connections,
    concurrency: usize,
) -> Result<Report, String> {
    let channels = connect(&args.target, mode.count(concurrency)).await?;
    let positions = Arc::new(suite_positions());
    let mut callers = Vec::with_capacity(concurrency);
    for i in 0..concurrency {
        let channel = channels[i % channels.len()].clone();
        let mut caller = Caller::new(
            channel,
            args.fen.clone(),
            positions.clone(),
            client,
            0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1),
        )
        .await
        .map_err(|e| format!("setting up caller {i}: {e}"))?;
        caller.watcher = Some(channels[(i + 1) % channels.len()].clone());
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
            let mut bytes = 0u64;
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
                    Ok(n) => {
                        latencies.push((t1 - t0).as_nanos() as u64);
                        bytes += n;
                    }
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
            (latencies, errors, bytes)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut answer_bytes = 0;
    for task in tasks {
        let (l, e, b) = task
            .await
            .map_err(|e| format!("a caller task failed: {e}"))?;
        latencies.extend(l);
        errors += e;
        answer_bytes += b;
    }
    latencies.sort_unstable();
    let first_error = first_error.lock().map(|e| e.clone()).unwrap_or_default();
    Ok(Report {
        rpc,
        client,
        concurrency,
        mode,
        seconds: measured.as_secs_f64(),
        ok: latencies.len() as u64,
        errors,
        first_error,
        latencies,
        answer_bytes,
    })
}

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
