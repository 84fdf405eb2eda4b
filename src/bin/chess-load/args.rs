//! The command line: what to call, how, and how hard.

use chess_service::pb;

/// What each caller sends.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rpc {
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
    /// Play and Undo in turn at ply `--at-ply` (each caller's game is brought there
    /// before the run, unmeasured): what a change costs in a game that long.
    PlayUndo,
}

impl Rpc {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Rpc::LegalMovesGame => "LegalMoves (game_id)",
            Rpc::LegalMovesFen => "LegalMoves (fen, one FEN)",
            Rpc::LegalMovesFenMiss => "LegalMoves (fen, every call a new FEN)",
            Rpc::Play => "Play",
            Rpc::Health => "Health/Check",
            Rpc::Mix => "mix",
            Rpc::WatchOther => "Play seen by a spectator on the next replica",
            Rpc::PlayUndo => "Play and Undo in turn at a fixed ply",
        }
    }
}

/// How answers are received.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientKind {
    /// The generated tonic client: every answer decoded into messages.
    Decode,
    /// Answer bodies not decoded: the status is checked and the bytes counted.
    Raw,
    /// With --matrix: every cell with each client.
    Both,
}

impl ClientKind {
    pub(crate) fn name(self) -> &'static str {
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
pub(crate) struct Args {
    /// The server's URL; a comma-separated list spreads the connections (and so the
    /// callers) over several replicas in turn.
    #[arg(long, value_delimiter = ',', default_value = "http://127.0.0.1:50051")]
    pub(crate) target: Vec<String>,
    /// Concurrent callers.
    #[arg(long, default_value_t = 16)]
    pub(crate) concurrency: usize,
    /// Measured seconds per run (after the warm-up).
    #[arg(long, default_value_t = 10.0)]
    pub(crate) duration: f64,
    /// Unmeasured warm-up seconds per run.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) warmup: f64,
    /// The RPC to send.
    #[arg(long, value_enum, default_value_t = Rpc::LegalMovesGame)]
    pub(crate) rpc: Rpc,
    /// HTTP/2 connections (a tonic `Channel` each): a number N shared by the callers (one
    /// is how a backend process usually talks to one server; 0: one per 16 callers), or
    /// `per-client`: every caller its own connection, as separate client processes (or
    /// h2load's "clients") would be. A comma-separated list with --matrix runs each.
    #[arg(long, value_parser = parse_connections, value_delimiter = ',', default_value = "1")]
    pub(crate) connections: Vec<Connections>,
    /// The position for LegalMoves by FEN (default: a middlegame with 48 legal moves).
    #[arg(
        long,
        default_value = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    )]
    pub(crate) fen: String,
    /// Run every RPC kind (health, LegalMoves by game and by FEN, Play) at each of these
    /// concurrencies and print a Markdown table, e.g. `1,16,64`.
    #[arg(long, value_delimiter = ',')]
    pub(crate) matrix: Vec<usize>,
    /// With --matrix: run the whole matrix this many times, interleaved, and report the
    /// median of each cell (these machines are noisy).
    #[arg(long, default_value_t = 1)]
    pub(crate) repeat: usize,
    /// With --matrix: the RPC kinds to run (default: health, both LegalMoves by FEN
    /// kinds, LegalMoves by game, Play).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub(crate) kinds: Vec<Rpc>,
    /// Decode answers (`decode`, a real caller), or not (`raw`: measures the server), or
    /// `both` (with --matrix).
    #[arg(long, value_enum, default_value_t = ClientKind::Decode)]
    pub(crate) client: ClientKind,
    /// The view Play and Undo ask for: `full` (the history too) or `basic`.
    #[arg(long, value_enum, default_value_t = ViewArg::Full)]
    pub(crate) view: ViewArg,
    /// With --rpc play-undo: the ply the callers' games are brought to.
    #[arg(long, default_value_t = 300)]
    pub(crate) at_ply: usize,
}

/// The `view` of the requests.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ViewArg {
    /// GAME_VIEW_FULL.
    Full,
    /// GAME_VIEW_BASIC.
    Basic,
}

impl ViewArg {
    pub(crate) fn pb(self) -> i32 {
        match self {
            ViewArg::Full => pb::GameView::Full as i32,
            ViewArg::Basic => pb::GameView::Basic as i32,
        }
    }
}

/// How the callers of a run share HTTP/2 connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Connections {
    /// This many connections, callers spread over them round-robin (0: one per 16 callers).
    Shared(usize),
    /// One connection per caller.
    PerClient,
}

impl Connections {
    /// How many connections `concurrency` callers open.
    pub(crate) fn count(self, concurrency: usize) -> usize {
        match self {
            Connections::Shared(0) => concurrency.div_ceil(16).max(1),
            Connections::Shared(n) => n,
            Connections::PerClient => concurrency,
        }
    }

    pub(crate) fn name(self) -> String {
        match self {
            Connections::Shared(0) => "1 per 16".into(),
            Connections::Shared(n) => n.to_string(),
            Connections::PerClient => "1 per client".into(),
        }
    }
}

pub(crate) fn parse_connections(text: &str) -> Result<Connections, String> {
    match text {
        "per-client" => Ok(Connections::PerClient),
        n => n
            .parse()
            .map(Connections::Shared)
            .map_err(|_| format!("--connections takes a number or `per-client`, not {n:?}")),
    }
}
