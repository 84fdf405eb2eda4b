//! The service stack: the registry and `chess.v1.ChessService` on the store, the metrics
//! that read them, reflection, and the tower layers every call passes through, in their
//! order. Why apart: what answers a call, and what stands in front of it, is decided
//! here and nowhere else.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use tonic::transport::server::Router;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::server::HealthReporter;
use tower::layer::util::{Identity, Stack};

use super::{Config, SERVICE_NAME, ServerError, config, metrics_endpoint, serving};
use crate::pb;
use crate::registry::Registry;
use crate::service::ChessService;
use crate::service::answer_budget::AnswerBudget;
use crate::service::edge::auth::{AuthLayer, Gate};
use crate::service::edge::metrics::{self, MetricsLayer};
use crate::service::edge::shed::{InFlight, ShedLayer};
use crate::service::fen_cache::FenCache;
use crate::service::grpc::chess_service_server::ChessServiceServer;
use crate::service::malformed::MalformedLayer;
use crate::store::GameStore;

/// The tower layers of the main port, outermost last (as `Stack` nests them).
pub type Layers =
    Stack<AuthLayer, Stack<ShedLayer, Stack<MalformedLayer, Stack<MetricsLayer, Identity>>>>;

/// The chess service and what the rest of the server keeps of it.
pub struct Services {
    /// The games in memory.
    pub registry: Arc<Registry>,
    /// The chess service, not yet wrapped for tonic.
    pub service: ChessService,
    /// Chess calls in flight (the shutdown waits for them).
    pub in_flight: Arc<AtomicUsize>,
    /// The LegalMoves-by-FEN cache (its counts are logged at shutdown).
    pub fen_cache: Arc<FenCache>,
    /// Calls in flight, for load shedding.
    pub calls: Arc<InFlight>,
    /// Open client connections, counted by the accept loop.
    pub connections: Arc<AtomicUsize>,
    /// With --metrics-listen: the `/metrics` server and the task that mirrors health
    /// into `chess_serving`.
    pub metrics_server: Option<(tokio::task::JoinHandle<()>, tokio::task::JoinHandle<()>)>,
}

/// Builds the registry on `store` and the chess service on it, and, with
/// --metrics-listen, starts serving the metrics that read them.
pub async fn services(
    config: &Config,
    store: &Arc<dyn GameStore>,
    health: &HealthReporter,
) -> Result<Services, ServerError> {
    let registry = Arc::new(
        Registry::new(store.clone(), config.cache_games).with_watch_buffer(config.watch_buffer),
    );
    // Replicas on a shared database: stream changes made elsewhere to spectators here.
    registry.follow_store();
    let limits = config::perft_limits(config);
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
            let listener = tokio::net::TcpListener::bind(addr)
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
            let (serving, serving_task) = serving::mirror(health, SERVICE_NAME);
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
    Ok(Services {
        registry,
        service,
        in_flight,
        fen_cache,
        calls,
        connections,
        metrics_server,
    })
}

/// The chess service as tonic serves it, with the request size limit; one for the main
/// port and the gRPC-Web listener (cloning it shares the service).
pub fn chess_server(config: &Config, service: ChessService) -> ChessServiceServer<ChessService> {
    ChessServiceServer::new(service).max_decoding_message_size(config.max_request_bytes)
}

/// The main port's router: health, reflection (unless turned off) and the chess
/// service, behind the metrics, malformed-request, load-shedding and token layers.
pub fn router(
    config: &Config,
    gate: Arc<Gate>,
    calls: Arc<InFlight>,
    health_service: HealthServer<impl Health>,
    chess: ChessServiceServer<ChessService>,
) -> Result<Router<Layers>, ServerError> {
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

    // Outermost first: metrics see every call (refused ones too), load shedding comes
    // before the token check (a shed call costs nothing).
    Ok(tonic::transport::Server::builder()
        .max_concurrent_streams(config.ops.max_concurrent_streams)
        .http2_keepalive_interval(config.ops.keepalive_interval())
        .http2_keepalive_timeout(Some(config.ops.keepalive_timeout()))
        .layer(MetricsLayer::default())
        .layer(MalformedLayer)
        .layer(ShedLayer::new(calls))
        .layer(AuthLayer::new(gate))
        .add_service(health_service)
        .add_optional_service(reflection_v1)
        .add_optional_service(reflection_v1alpha)
        .add_service(chess))
}
