//! The server's configuration (flags with environment equivalents) and what it turns
//! into before serving: the game store, the listening sockets, the TLS acceptor, the
//! rule engine's budgets and perft's limits. Why apart: `serve` then reads as the order
//! of start-up, not as a list of flags.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::{OpsConfig, SecurityConfig, ServerError, tls};
use crate::registry::DEFAULT_WATCH_BUFFER;
use crate::service::PerftLimits;
use crate::store::{
    Durability, GameStore, PgConfig, PgStore, SessionLimits, SledConfig, SledStore,
};

/// Log line format.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Server configuration. Every flag has an environment variable; `RUST_LOG` sets levels.
#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "chess-server",
    version,
    about = "The authoritative chess rules service (gRPC)."
)]
#[allow(missing_docs)] // its doc comment would become clap's long help: `about` says it
pub struct Config {
    /// Address to listen on (port 0 picks a free port; the log says which).
    #[arg(long, env = "CHESS_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: String,
    /// Directory of the embedded game store (unused with --database-url).
    #[arg(long, env = "CHESS_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Keep games in this PostgreSQL database instead of the embedded store
    /// (`postgres://user:password@host:5432/dbname`): any number of replicas may share
    /// it. The schema is created or migrated at start.
    #[arg(long, env = "CHESS_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Connections to the database each replica keeps at most.
    #[arg(long, env = "CHESS_DATABASE_POOL_SIZE", default_value_t = 16)]
    pub database_pool_size: usize,
    /// The longest one database step (getting a connection, connecting, a statement) may
    /// take; past it the call fails with UNAVAILABLE. Keep it below callers' deadlines.
    #[arg(long, env = "CHESS_DATABASE_TIMEOUT_MS", default_value_t = 2000)]
    pub database_timeout_ms: u64,
    /// The database's limit on each statement of this replica (`statement_timeout`), in
    /// ms; 0 turns it off. Unset: the --database-timeout-ms.
    #[arg(long, env = "CHESS_DATABASE_STATEMENT_TIMEOUT_MS")]
    pub database_statement_timeout_ms: Option<u64>,
    /// The longest one of this replica's statements waits for a row held by another
    /// session (`lock_timeout`), in ms: a save batch then writes again without that row,
    /// and other statements fail with UNAVAILABLE; 0 turns it off.
    #[arg(long, env = "CHESS_DATABASE_LOCK_TIMEOUT_MS", default_value_t = 100)]
    pub database_lock_timeout_ms: u64,
    /// The longest one of this replica's sessions may sit idle inside a transaction
    /// (`idle_in_transaction_session_timeout`), in ms, before the database ends it and
    /// releases its locks (a paused or cut-off replica); 0 turns it off. Unset: the
    /// --database-timeout-ms.
    #[arg(long, env = "CHESS_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS")]
    pub database_idle_in_transaction_timeout_ms: Option<u64>,
    /// With --database-url, moves are charged and flags fall by the database's clock, as
    /// this replica estimates it; while the estimate may be off by more than this (ms),
    /// the service reports NOT_SERVING.
    #[arg(long, env = "CHESS_MAX_CLOCK_UNCERTAINTY_MS", default_value_t = 50)]
    pub max_clock_uncertainty_ms: u64,
    /// When a change counts as durable before it is acknowledged: fsync (flushed and
    /// fsynced: survives kill -9 and power loss), flush (survives kill -9 of the process,
    /// not power loss) or none (answered before it is written).
    #[arg(long, env = "CHESS_DURABILITY", default_value_t = Durability::Fsync)]
    pub durability: Durability,
    /// Start even when the embedded store recovered less than its commit ledger says was
    /// acknowledged (a damaged or rolled-back data directory): the log lists what is lost,
    /// and every game behind answers DATA_LOSS until deleted. Without it such a start is
    /// refused. See docs/durability.md.
    #[arg(long, env = "CHESS_ACCEPT_STORE_ROLLBACK")]
    pub accept_store_rollback: bool,
    /// The store's page cache (sled), in MiB.
    #[arg(long, env = "CHESS_STORE_CACHE_MB", default_value_t = 256)]
    pub store_cache_mb: u64,
    /// Games kept loaded in memory (idle ones are evicted beyond this; games in use never).
    #[arg(long, env = "CHESS_CACHE_GAMES", default_value_t = 10_000)]
    pub cache_games: usize,
    /// The deepest Perft accepted.
    #[arg(long, env = "CHESS_PERFT_MAX_DEPTH", default_value_t = 10)]
    pub perft_max_depth: u32,
    /// Perfts computing at once; more are refused with RESOURCE_EXHAUSTED (0 turns Perft off).
    #[arg(long, env = "CHESS_PERFT_MAX_CONCURRENT", default_value_t = 2)]
    pub perft_max_concurrent: usize,
    /// Perfts one caller may have computing at once: per token, or per connection on a
    /// server without tokens; more are refused with RESOURCE_EXHAUSTED, so that one
    /// caller cannot hold every perft slot (0: no bound per caller).
    #[arg(long, env = "CHESS_PERFT_MAX_PER_CALLER", default_value_t = 1)]
    pub perft_max_per_caller: usize,
    /// Nodes the winnability solver may spend after each change that makes a new
    /// position (a move, a game created from a FEN, an import) to prove it dead (FIDE
    /// 5.2.2), both sides together: 20,000 stays under 2 ms on the slowest positions
    /// measured (BENCHMARKS.md). Positions with the mobility of a live game skip the
    /// solver. 0: only the material rule ends games as dead.
    #[arg(long, env = "CHESS_DEAD_POSITION_BUDGET_NODES",
          default_value_t = crate::lifecycle::judge::DEFAULT_CHANGE_BUDGET)]
    pub dead_position_budget_nodes: u64,
    /// Nodes the winnability solver may spend when a flag falls, to prove that the other
    /// side cannot mate (a draw, FIDE 6.9; undecided is a loss on time). 0: only the
    /// material rule draws a flag fall.
    #[arg(long, env = "CHESS_FLAG_FALL_BUDGET_NODES",
          default_value_t = crate::lifecycle::judge::DEFAULT_FLAG_BUDGET)]
    pub flag_fall_budget_nodes: u64,
    /// Nodes one Winnability call may spend for each side.
    #[arg(long, env = "CHESS_WINNABILITY_BUDGET_NODES",
          default_value_t = crate::rules::winnability::DEFAULT_BUDGET)]
    pub winnability_budget_nodes: u64,
    /// LegalMoves-by-FEN answers kept for repeated FENs (about 1-2 KB each; 0 turns the
    /// cache off).
    #[arg(long, env = "CHESS_FEN_CACHE_ENTRIES", default_value_t = 4096)]
    pub fen_cache_entries: usize,
    /// Largest request message accepted, in bytes: room for ImportGame's PGN of up to
    /// 256 KiB; every other request is under 1 KiB.
    #[arg(long, env = "CHESS_MAX_REQUEST_BYTES", default_value_t = 264 * 1024)]
    pub max_request_bytes: usize,
    /// Events each game buffers for its slowest spectator (WatchGame); a spectator that
    /// falls further behind is told to resync and its stream ends.
    #[arg(long, env = "CHESS_WATCH_BUFFER", default_value_t = DEFAULT_WATCH_BUFFER)]
    pub watch_buffer: usize,
    /// On SIGTERM/SIGINT, how long to wait for calls in flight before closing anyway.
    #[arg(long, env = "CHESS_SHUTDOWN_GRACE_SECS", default_value_t = 10)]
    pub shutdown_grace_secs: u64,
    /// Log format.
    #[arg(long, env = "CHESS_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// TLS, tokens, quotas, reflection, the plaintext health port.
    #[command(flatten)]
    pub security: SecurityConfig,
    /// Connections, load shedding, perft's time limit, metrics.
    #[command(flatten)]
    pub ops: OpsConfig,

    #[command(flatten)]
    pub web: super::WebConfig,
}

/// Opens the game store named by the configuration: the PostgreSQL database of
/// `--database-url` (shared with other replicas), else the embedded sled store in
/// `--data-dir`, at the configured durability level.
pub async fn open_store(config: &Config) -> Result<Arc<dyn GameStore>, ServerError> {
    if let Some(url) = &config.database_url {
        let mut pg = PgConfig::new(url.clone());
        pg.pool_size = config.database_pool_size;
        pg.timeout = Duration::from_millis(config.database_timeout_ms.max(1));
        let limit = |ms: Option<u64>| ms.map_or(pg.timeout, Duration::from_millis);
        pg.limits = SessionLimits {
            statement: limit(config.database_statement_timeout_ms),
            lock: Duration::from_millis(config.database_lock_timeout_ms),
            idle_in_transaction: limit(config.database_idle_in_transaction_timeout_ms),
        };
        pg.max_clock_uncertainty = Duration::from_millis(config.max_clock_uncertainty_ms);
        let pg_limits = pg.limits;
        let store = PgStore::open(pg)
            .await
            .map_err(|source| ServerError::Database { source })?;
        tracing::info!(
            pool_size = config.database_pool_size,
            timeout_ms = config.database_timeout_ms,
            limits = ?pg_limits,
            "game store open: PostgreSQL (--data-dir is not used)"
        );
        return Ok(Arc::new(store));
    }
    let mut sled_config = SledConfig::new(&config.data_dir).durability(config.durability);
    sled_config.sled_cache_bytes = config.store_cache_mb.saturating_mul(1024 * 1024);
    sled_config.accept_store_rollback = config.accept_store_rollback;
    let store = SledStore::open(sled_config).map_err(|source| ServerError::Store {
        dir: config.data_dir.display().to_string(),
        source,
    })?;
    tracing::info!(
        data_dir = %config.data_dir.display(),
        durability = %config.durability,
        "game store open"
    );
    Ok(Arc::new(store))
}

/// Binds the listening socket (so a caller learns the real port before serving).
pub async fn bind(config: &Config) -> Result<TcpListener, ServerError> {
    TcpListener::bind(&config.listen)
        .await
        .map_err(|source| ServerError::Bind {
            addr: config.listen.clone(),
            source,
        })
}

/// Hands the rule engine its budgets for proving positions dead (after a change, and
/// when a flag falls).
pub fn set_judge_budgets(config: &Config) {
    crate::lifecycle::judge::set_budgets(crate::lifecycle::judge::Budgets {
        change_nodes: config.dead_position_budget_nodes,
        flag_nodes: config.flag_fall_budget_nodes,
    });
}

/// The TLS acceptor of the main port, when --tls-cert and --tls-key are set.
pub fn tls_acceptor(config: &Config) -> Result<Option<TlsAcceptor>, ServerError> {
    Ok(match config.security.tls_files() {
        Some(files) => Some(tls::acceptor(&files).map_err(ServerError::Tls)?),
        None => None,
    })
}

/// Binds the plaintext health port, when --health-listen is set.
pub async fn bind_health(config: &Config) -> Result<Option<TcpListener>, ServerError> {
    Ok(match &config.security.health_listen {
        Some(addr) => Some(
            TcpListener::bind(addr)
                .await
                .map_err(|source| ServerError::Bind {
                    addr: addr.clone(),
                    source,
                })?,
        ),
        None => None,
    })
}

/// Perft's limits, from its flags.
pub fn perft_limits(config: &Config) -> PerftLimits {
    PerftLimits {
        max_depth: config.perft_max_depth,
        max_concurrent: config.perft_max_concurrent,
        max_per_caller: config.perft_max_per_caller,
        max_duration: config.ops.perft_max_duration(),
        winnability_nodes: config.winnability_budget_nodes,
    }
}
