//! The server process: configuration (flags with env equivalents), logging, the store,
//! health and reflection next to `chess.v1.ChessService`, and graceful shutdown.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, BufWriter, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tonic::transport::server::{Connected, TcpConnectInfo};
use tonic_health::ServingStatus;

use crate::pb;
use crate::registry::{DEFAULT_WATCH_BUFFER, Registry};
use crate::service::answer_budget::AnswerBudget;
use crate::service::auth::{self, AuthLayer};
use crate::service::grpc::chess_service_server::ChessServiceServer;
use crate::service::malformed::MalformedLayer;
use crate::service::metrics::{self, MetricsLayer};
use crate::service::shed::{InFlight, ShedLayer};
use crate::service::{ChessService, PerftLimits};
use crate::store::{
    Durability, GameStore, PgConfig, PgStore, SessionLimits, SledConfig, SledStore, StoreError,
};

pub mod accept;
mod log_flood;
mod metrics_endpoint;
mod ops;
mod security;
mod serving;
pub mod tls;
pub mod traces;

pub use ops::OpsConfig;
pub use security::SecurityConfig;

/// The name health checks use for the chess service.
pub const SERVICE_NAME: &str = "chess.v1.ChessService";

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
}

/// Why the server could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The listening address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The game store does not open.
    #[error("cannot open the game store in {dir}: {source}")]
    Store {
        /// The data directory.
        dir: String,
        /// The store's error.
        source: StoreError,
    },
    /// The game database (--database-url) does not open.
    #[error("cannot open the game database (--database-url): {source}")]
    Database {
        /// The store's error.
        source: StoreError,
    },
    /// The reflection service cannot be built from the descriptors.
    #[error("cannot build server reflection: {0}")]
    Reflection(String),
    /// The gRPC server stopped with an error.
    #[error("the gRPC server failed: {0}")]
    Transport(String),
    /// The embedded store failed a write or a sync while serving: the server stopped
    /// (fail-stop), so that its restart recovers from what is on disk.
    #[error("stopped after a storage fault, to restart from what is on disk: {0}")]
    StoreFault(StoreError),
    /// The runtime's worker threads cannot start.
    #[error("cannot start worker threads: {0}")]
    Threads(std::io::Error),
    /// The token file cannot be loaded.
    #[error("{0}")]
    Tokens(auth::TokenFileError),
    /// TLS cannot be set up from the configured files.
    #[error("{0}")]
    Tls(tls::TlsError),
}

/// Sets up logging to stdout: `RUST_LOG` levels (default `info`), text or JSON lines;
/// and, with an OTLP endpoint, the export of every call's span (then it must be called
/// inside the Tokio runtime; the returned [`traces::Traces`] flushes them at the end).
pub fn init_logging(format: LogFormat, otlp_endpoint: Option<&str>) -> Option<traces::Traces> {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let layer = traces::layer::<tracing_subscriber::Registry>;
    let (otel, traces, otel_error) = match otlp_endpoint.map(layer) {
        Some(Ok((layer, traces))) => (Some(layer), Some(traces), None),
        Some(Err(e)) => (None, None, Some(e)),
        None => (None, None, None),
    };
    let text = (format == LogFormat::Text).then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stdout)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
    });
    let json = (format == LogFormat::Json).then(|| {
        tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_writer(std::io::stdout)
    });
    let result = tracing_subscriber::registry()
        .with(otel)
        .with(log_flood::HttpWarnings::default())
        .with(filter)
        .with(text)
        .with(json)
        .try_init();
    if let Err(e) = result {
        eprintln!("logging was already set up: {e}");
    }
    match (&otel_error, otlp_endpoint) {
        (Some(e), _) => tracing::error!("{e}; traces are not exported"),
        (None, Some(endpoint)) => {
            tracing::info!(endpoint, "exporting traces over OTLP to {endpoint}")
        }
        (None, None) => {}
    }
    traces
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

/// Serves until `shutdown` resolves, then shuts down gracefully: health NOT_SERVING, no
/// new calls, calls in flight finish (bounded by the grace period, so an open health
/// Watch stream cannot hold the process), and the store is made durable.
pub async fn serve(
    config: &Config,
    store: Arc<dyn GameStore>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServerError> {
    let local = listener.local_addr().map_err(|source| ServerError::Bind {
        addr: config.listen.clone(),
        source,
    })?;
    crate::lifecycle::judge::set_budgets(crate::lifecycle::judge::Budgets {
        change_nodes: config.dead_position_budget_nodes,
        flag_nodes: config.flag_fall_budget_nodes,
    });
    let gate = config.security.gate()?;
    auth::reload_on_sighup(gate.clone());
    let tls = match config.security.tls_files() {
        Some(files) => Some(tls::acceptor(&files).map_err(ServerError::Tls)?),
        None => None,
    };
    let health_listener = match &config.security.health_listen {
        Some(addr) => Some(
            TcpListener::bind(addr)
                .await
                .map_err(|source| ServerError::Bind {
                    addr: addr.clone(),
                    source,
                })?,
        ),
        None => None,
    };
    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_service_status("", ServingStatus::NotServing)
        .await;
    health
        .set_service_status(SERVICE_NAME, ServingStatus::NotServing)
        .await;

    let registry = Arc::new(
        Registry::new(store.clone(), config.cache_games).with_watch_buffer(config.watch_buffer),
    );
    // Replicas on a shared database: stream changes made elsewhere to spectators here.
    registry.follow_store();
    let limits = PerftLimits {
        max_depth: config.perft_max_depth,
        max_concurrent: config.perft_max_concurrent,
        max_per_caller: config.perft_max_per_caller,
        max_duration: config.ops.perft_max_duration(),
        winnability_nodes: config.winnability_budget_nodes,
    };
    let cpu_threads = crate::rules::perft::available_threads();
    let service = ChessService::new(
        registry.clone(),
        limits,
        cpu_threads,
        config.fen_cache_entries,
    )
    .map_err(ServerError::Threads)?;
    let answers = AnswerBudget::new(config.ops.max_unsent_answer_mib);
    let service = service.with_answer_budget(answers.clone());
    let in_flight = service.in_flight();
    let fen_cache = service.fen_cache();
    let calls = InFlight::new(config.ops.max_in_flight);
    let connections = Arc::new(AtomicUsize::new(0));
    let metrics_server = match &config.ops.metrics_listen {
        Some(addr) => {
            let listener = TcpListener::bind(addr)
                .await
                .map_err(|source| ServerError::Bind {
                    addr: addr.clone(),
                    source,
                })?;
            let bound = listener.local_addr().map_err(|source| ServerError::Bind {
                addr: addr.clone(),
                source,
            })?;
            let stats_store = store.clone();
            let stats_registry = registry.clone();
            let stats_calls = calls.clone();
            let (serving, serving_task) = serving::mirror(&health, SERVICE_NAME);
            let mut tallies = vec![registry.tally()];
            tallies.extend(store.tally());
            let metrics = metrics::enable(metrics::Sources {
                store_stats: Box::new(move || stats_store.commit_stats()),
                games_loaded: Box::new(move || stats_registry.cached()),
                perfts_running: Box::new(service.perfts_running()),
                fen_cache: fen_cache.clone(),
                calls_in_flight: Box::new(move || stats_calls.current()),
                unsent_answer_bytes: Box::new(move || answers.held()),
                connections_open: connections.clone(),
                store_kind: store.kind(),
                store_available: store.health(),
                clock: store.clock(),
                store_fault: store.fault(),
                serving,
                tallies,
            });
            tracing::info!(address = %bound, "Prometheus metrics on {bound} at /metrics");
            Some((
                tokio::spawn(metrics_endpoint::serve(listener, metrics)),
                serving_task,
            ))
        }
        None => None,
    };
    let chess =
        ChessServiceServer::new(service).max_decoding_message_size(config.max_request_bytes);

    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
    };
    let reflecting = !config.security.no_reflection;
    let reflection_v1 = reflecting
        .then(|| reflection().build_v1())
        .transpose()
        .map_err(|e| ServerError::Reflection(e.to_string()))?;
    let reflection_v1alpha = reflecting
        .then(|| reflection().build_v1alpha())
        .transpose()
        .map_err(|e| ServerError::Reflection(e.to_string()))?;

    let http_warnings = log_flood::report_left_out();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    // Outermost first: metrics see every call (refused ones too), load shedding comes
    // before the token check (a shed call costs nothing).
    let router = tonic::transport::Server::builder()
        .max_concurrent_streams(config.ops.max_concurrent_streams)
        .http2_keepalive_interval(config.ops.keepalive_interval())
        .http2_keepalive_timeout(Some(config.ops.keepalive_timeout()))
        .layer(MetricsLayer)
        .layer(MalformedLayer)
        .layer(ShedLayer::new(calls))
        .layer(AuthLayer::new(gate))
        .add_service(health_service)
        .add_optional_service(reflection_v1)
        .add_optional_service(reflection_v1alpha)
        .add_service(chess);
    // Our own accept loop (see `accept`): bounded connections, a deadline to start
    // HTTP/2, a back-off when descriptors run out.
    let accept_limits = config.ops.accept_limits();
    let stopped = async {
        let _ = stop_rx.await;
    };
    let tls_on = tls.is_some();
    let mut server = match tls {
        None => {
            let incoming = accept::incoming(listener, accept_limits, connections, |tcp| {
                std::future::ready(Ok(CoalescedIo::new(tcp)))
            });
            tokio::spawn(router.serve_with_incoming_shutdown(incoming, stopped))
        }
        // With TLS on, a plaintext client fails the handshake: the port speaks only TLS.
        Some(acceptor) => {
            let incoming = accept::incoming(listener, accept_limits, connections, move |tcp| {
                let acceptor = acceptor.clone();
                async move { acceptor.accept(CoalescedIo::new(tcp)).await }
            });
            tokio::spawn(router.serve_with_incoming_shutdown(incoming, stopped))
        }
    };
    // The plaintext health port: grpc.health.v1 alone, sharing the statuses above.
    let health_server = match health_listener {
        Some(listener) => {
            let addr = listener.local_addr().map_err(|source| ServerError::Bind {
                addr: config.security.health_listen.clone().unwrap_or_default(),
                source,
            })?;
            let service = tonic_health::pb::health_server::HealthServer::new(
                tonic_health::server::HealthService::from_health_reporter(health.clone()),
            );
            // The main port's accept loop, with its own small bound: silent sockets
            // cannot take every descriptor of the process, nor keep a probe out.
            let limits = accept::Limits {
                max_connections: config.security.health_max_connections,
                flag: "--health-max-connections",
                ..accept_limits
            };
            let open = Arc::new(AtomicUsize::new(0));
            let incoming =
                accept::incoming(listener, limits, open, |tcp| std::future::ready(Ok(tcp)));
            let task = tokio::spawn(
                tonic::transport::Server::builder()
                    .add_service(service)
                    .serve_with_incoming(incoming),
            );
            tracing::info!(address = %addr, "plaintext health service on {addr}");
            Some(task)
        }
        None => None,
    };

    health.set_service_status("", ServingStatus::Serving).await;
    health
        .set_service_status(SERVICE_NAME, ServingStatus::Serving)
        .await;
    // A store that can become unreachable (a database) makes the service NOT_SERVING
    // while it is; the overall server ("") stays SERVING, so a liveness probe does not
    // restart a process that cannot bring the database back.
    let follow_store = store.health().map(|mut up| {
        let health = health.clone();
        tokio::spawn(async move {
            loop {
                let serving = *up.borrow_and_update();
                let status = if serving {
                    ServingStatus::Serving
                } else {
                    ServingStatus::NotServing
                };
                health.set_service_status(SERVICE_NAME, status).await;
                if up.changed().await.is_err() {
                    return;
                }
            }
        })
    });
    tracing::info!(address = %local, tls = tls_on, "listening on {local}");

    // The embedded store's fault (a failed or uncertain write or sync): fail-stop.
    let mut fault_rx = store.fault();
    let fault = async {
        let Some(rx) = fault_rx.as_mut() else {
            return std::future::pending::<Option<StoreError>>().await;
        };
        let fault = match rx.wait_for(Option::is_some).await {
            Ok(fault) => fault.clone(),
            Err(_) => None,
        };
        match fault {
            Some(fault) => Some(fault),
            // The store is gone without a fault: nothing to stop for.
            None => std::future::pending().await,
        }
    };

    tokio::select! {
        () = shutdown => {}
        Some(fault) = fault => {
            if let Some(task) = follow_store {
                task.abort();
            }
            fail_stop(&health, &registry, &in_flight, stop_tx, &mut server).await;
            if let Some(health_server) = health_server {
                health_server.abort();
            }
            // No flush: the store serves nothing more, and its restart recovers from
            // what is on disk.
            return Err(ServerError::StoreFault(fault));
        }
        finished = &mut server => {
            // The server stopped by itself: that is a failure, not a shutdown.
            return Err(ServerError::Transport(match finished {
                Ok(Ok(())) => "stopped unexpectedly".to_string(),
                Ok(Err(e)) => e.to_string(),
                Err(e) => e.to_string(),
            }));
        }
    }

    tracing::info!("shutting down: NOT_SERVING, finishing calls in flight");
    if let Some(task) = follow_store {
        task.abort();
    }
    health
        .set_service_status("", ServingStatus::NotServing)
        .await;
    health
        .set_service_status(SERVICE_NAME, ServingStatus::NotServing)
        .await;
    let _ = stop_tx.send(());
    // Open WatchGame streams never end by themselves: end them (UNAVAILABLE) so that they
    // do not hold the shutdown, and stop the flag timers.
    registry.shutdown();
    let grace = Duration::from_secs(config.shutdown_grace_secs);
    if !wait_for_calls(&mut server, &in_flight, grace).await {
        tracing::warn!(
            in_flight = in_flight.load(Ordering::SeqCst),
            "grace period of {grace:?} over; closing the remaining connections"
        );
    }
    server.abort();
    http_warnings.abort();
    if let Some(health_server) = health_server {
        health_server.abort();
    }
    if let Some((metrics_server, serving_task)) = metrics_server {
        metrics_server.abort();
        serving_task.abort();
    }
    let (hits, misses) = fen_cache.hits_and_misses();
    tracing::info!(
        hits,
        misses,
        entries = fen_cache.len(),
        "LegalMoves-by-FEN cache at shutdown"
    );

    match store.flush().await {
        Ok(()) => tracing::info!("store flushed; bye"),
        Err(e) => tracing::error!(error = %e, "flushing the store at shutdown failed"),
    }
    Ok(())
}

/// A server connection whose writes are gathered in a buffer and sent by `poll_flush`.
///
/// Why: h2 (under tonic) keeps every DATA frame of 256 bytes or more out of its write
/// buffer when the socket takes vectored writes, and must write it out before it can
/// buffer the next frame: one `writev` per answer of that size (a LegalMoves answer is
/// 0.5-1.5 KB), where tiny answers (health) share one write among many streams.
/// Declaring writes non-vectored makes h2 copy frames under 1 KB into its buffer like
/// the small ones; the buffer here joins the two writes h2 then makes for a larger frame
/// (its buffer, then the payload) into one. h2 flushes at the end of every round of
/// work, so nothing waits in the buffer.
struct CoalescedIo(BufWriter<TcpStream>);

impl CoalescedIo {
    /// Large enough for h2's whole write buffer (16 KiB) plus a frame behind it.
    const CAPACITY: usize = 64 * 1024;

    fn new(stream: TcpStream) -> CoalescedIo {
        CoalescedIo(BufWriter::with_capacity(Self::CAPACITY, stream))
    }
}

impl Connected for CoalescedIo {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.0.get_ref().connect_info()
    }
}

impl AsyncRead for CoalescedIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for CoalescedIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    /// Not vectored: see the type's documentation.
    fn is_write_vectored(&self) -> bool {
        false
    }
}

/// How long a server that stopped after a storage fault keeps answering (health
/// NOT_SERVING, every chess call UNAVAILABLE) before it stops accepting calls: long enough
/// for probes and load balancers to see it, short enough for a quick restart.
const FAIL_STOP_LINGER: Duration = Duration::from_millis(500);

/// The server's answer to a storage fault (fail-stop, as PostgreSQL answers a failed
/// fsync): health NOT_SERVING at once (also on the health port), spectators' streams
/// ended, every call refused by the registry (UNAVAILABLE, `STORE_STOPPED`; the writes
/// caught by the fault got it, or DISK_FULL, already); then no new calls, the calls in
/// flight answered, and the caller exits non-zero so that the orchestrator restarts the
/// process from what is on disk.
async fn fail_stop(
    health: &tonic_health::server::HealthReporter,
    registry: &Registry,
    in_flight: &AtomicUsize,
    stop: tokio::sync::oneshot::Sender<()>,
    server: &mut tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
) {
    tracing::error!(
        "storage fault: NOT_SERVING, refusing every call, exiting so that a restart recovers from what is on disk"
    );
    health
        .set_service_status("", ServingStatus::NotServing)
        .await;
    health
        .set_service_status(SERVICE_NAME, ServingStatus::NotServing)
        .await;
    registry.shutdown();
    tokio::time::sleep(FAIL_STOP_LINGER).await;
    let _ = stop.send(());
    if !wait_for_calls(server, in_flight, Duration::from_secs(2)).await {
        tracing::warn!("calls still in flight after the storage fault; closing them");
    }
    server.abort();
}

/// Waits until the server has closed every connection, or until no chess call has been
/// in flight for a short while (open health Watch streams never end by themselves), or
/// until the grace period is over. True unless the grace period ran out.
async fn wait_for_calls(
    server: &mut tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
    in_flight: &AtomicUsize,
    grace: Duration,
) -> bool {
    // Long enough for a finished call's response to be written out.
    const QUIET: Duration = Duration::from_millis(100);
    let deadline = tokio::time::Instant::now() + grace;
    let mut quiet_since: Option<tokio::time::Instant> = None;
    loop {
        let now = tokio::time::Instant::now();
        if in_flight.load(Ordering::SeqCst) == 0 {
            let since = *quiet_since.get_or_insert(now);
            if now.duration_since(since) >= QUIET {
                return true;
            }
        } else {
            quiet_since = None;
        }
        if now >= deadline {
            return false;
        }
        tokio::select! {
            _ = &mut *server => return true,
            () = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    }
}

/// Resolves on SIGTERM or SIGINT. The handlers are installed when this is called (not
/// when the future is first polled), so a signal that arrives while the server is still
/// starting is not lost. Must be called inside the runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let terminate = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            match (terminate, interrupt) {
                (Ok(mut terminate), Ok(mut interrupt)) => tokio::select! {
                    _ = terminate.recv() => tracing::info!("SIGTERM received"),
                    _ = interrupt.recv() => tracing::info!("SIGINT received"),
                },
                (Err(e), _) | (_, Err(e)) => {
                    tracing::error!(error = %e, "cannot listen for SIGTERM/SIGINT; stop the server with SIGKILL");
                    std::future::pending::<()>().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::info!("Ctrl-C received");
        } else {
            std::future::pending::<()>().await;
        }
    }
}

/// The whole server process: open the store, bind, serve until a signal.
pub async fn run(config: Config) -> Result<(), ServerError> {
    let shutdown = shutdown_signal();
    let store = open_store(&config).await?;
    let listener = bind(&config).await?;
    serve(&config, store, listener, shutdown).await
}
