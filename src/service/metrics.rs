//! Prometheus metrics (`--metrics-listen`): every gRPC call under the names dashboards
//! built for go-grpc-prometheus expect, plus what an operator of this service watches:
//! the store's commits and syncs, games loaded, spectators, perfts running, the
//! LegalMoves-by-FEN cache, refusals by reason, connections, and the process itself.
//!
//! - `grpc_server_started_total{grpc_type,grpc_service,grpc_method}`;
//! - `grpc_server_handled_total{grpc_type,grpc_service,grpc_method,grpc_code}`, the code
//!   spelled as Go spells it (`OK`, `NotFound`, `InvalidArgument`, `Canceled`, ...);
//! - `grpc_server_handling_seconds{grpc_type,grpc_service,grpc_method}`, a histogram
//!   with buckets from 100 µs to 10 s.
//!
//! Why one process-wide registry: errors become statuses in one place
//! (`From<ServiceError> for tonic::Status`), spectators come and go in a task, the accept
//! loop refuses connections: each counts with one call here, without a handle threaded
//! through every constructor. Until [`enable`] is called (no `--metrics-listen`) every
//! recording is one atomic load and nothing else.
//!
//! Every counter is exported from the start, at 0, with each label value it can take (each
//! method with each code, each refusal reason, each ending status): an alert on a rate
//! sees the first increase instead of a series appearing from nothing. Beside the counts:
//! `chess_build_info{version,commit,store}` at 1, `chess_serving` (the health of
//! `chess.v1.ChessService`), `chess_store_available` and `chess_store_stopped`, and the
//! business counters `chess_games_created_total` and `chess_games_ended_total{status}`
//! (counted where this process's durable write created or ended a game: see
//! [`crate::store::GameTally`]).
//!
//! The gRPC metrics come from a tower layer ([`MetricsLayer`]) that sees every call,
//! refused ones included (tokens, quotas, load shedding), and reads the status from the
//! response headers (an error) or trailers (an answer); a call whose caller goes away
//! before its status counts as `Canceled`. Method labels are bounded: a path that is not
//! one of the served methods counts as `grpc_service="unknown", grpc_method="unknown"`.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::pb;
use crate::service::auth::methods::{CHESS_SERVICE, METHOD_ROLES};
use crate::service::fen_cache::FenCache;
use crate::store::{GameTally, GroupCommitStats, StoreError};

/// The buckets of `grpc_server_handling_seconds`: 100 µs to 10 s.
const HANDLING_BUCKETS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// gRPC codes as go-grpc-prometheus spells them (Go's `codes.Code.String()`), by number.
const GO_CODE_NAMES: [&str; 17] = [
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
];

/// The number of gRPC's CANCELLED.
const CANCELLED: usize = 1;
/// The number of gRPC's UNKNOWN.
const UNKNOWN: usize = 2;

/// The services and methods served, with their go-grpc-prometheus `grpc_type`.
const OTHER_METHODS: &[(&str, &str, &str)] = &[
    ("grpc.health.v1.Health", "Check", "unary"),
    ("grpc.health.v1.Health", "Watch", "server_stream"),
    (
        "grpc.reflection.v1.ServerReflection",
        "ServerReflectionInfo",
        "bidi_stream",
    ),
    (
        "grpc.reflection.v1alpha.ServerReflection",
        "ServerReflectionInfo",
        "bidi_stream",
    ),
];

/// The `grpc_type` of a `chess.v1.ChessService` method.
fn chess_method_type(method: &str) -> &'static str {
    match method {
        "WatchGame" => "server_stream",
        _ => "unary",
    }
}

/// Why the server closed a connection before it served a call
/// (`chess_connections_refused_total{reason}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionRefusal {
    /// `--max-connections` connections were open already.
    MaxConnections,
    /// The client did not finish the TLS handshake or start HTTP/2 in time.
    HandshakeTimeout,
    /// The client spoke something other than HTTP/2.
    NotHttp2,
    /// The TLS handshake failed.
    HandshakeFailed,
}

impl ConnectionRefusal {
    /// Every reason, each exported at 0 from the start.
    pub const ALL: [ConnectionRefusal; 4] = [
        ConnectionRefusal::MaxConnections,
        ConnectionRefusal::HandshakeTimeout,
        ConnectionRefusal::NotHttp2,
        ConnectionRefusal::HandshakeFailed,
    ];

    /// The `reason` label.
    pub fn label(self) -> &'static str {
        match self {
            ConnectionRefusal::MaxConnections => "max_connections",
            ConnectionRefusal::HandshakeTimeout => "handshake_timeout",
            ConnectionRefusal::NotHttp2 => "not_http2",
            ConnectionRefusal::HandshakeFailed => "handshake_failed",
        }
    }
}

/// What kind of `accept` failed (`chess_accept_errors_total{kind}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcceptFailure {
    /// EMFILE, ENFILE, ENOBUFS, ENOMEM: the accept loop backs off.
    OutOfDescriptors,
    /// Anything else.
    Other,
}

impl AcceptFailure {
    /// Every kind, each exported at 0 from the start.
    pub const ALL: [AcceptFailure; 2] = [AcceptFailure::OutOfDescriptors, AcceptFailure::Other];

    /// The `kind` label.
    pub fn label(self) -> &'static str {
        match self {
            AcceptFailure::OutOfDescriptors => "out_of_descriptors",
            AcceptFailure::Other => "other",
        }
    }
}

/// Every `ErrorReason` a refusal can carry (all but UNSPECIFIED), from the `.proto`.
fn error_reasons() -> Vec<&'static str> {
    super::proto_enums::value_names("chess.v1.ErrorReason")
        .iter()
        .filter_map(|name| pb::ErrorReason::from_str_name(name))
        .filter(|r| *r != pb::ErrorReason::Unspecified)
        .map(|r| r.as_str_name())
        .collect()
}

/// Every `GameStatus` that ends a game, with its `status` label: the value's name less
/// `GAME_STATUS_`, in lower case (`checkmate`, `out_of_time`), from the `.proto`.
fn ending_statuses() -> Vec<(pb::GameStatus, String)> {
    super::proto_enums::value_names("chess.v1.GameStatus")
        .iter()
        .filter_map(|name| pb::GameStatus::from_str_name(name))
        .filter(|s| !matches!(s, pb::GameStatus::Unspecified | pb::GameStatus::InProgress))
        .map(|s| (s, status_label(s)))
        .collect()
}

/// The `status` label of `status`.
pub fn status_label(status: pb::GameStatus) -> String {
    let name = status.as_str_name();
    name.strip_prefix("GAME_STATUS_")
        .unwrap_or(name)
        .to_ascii_lowercase()
}

type MethodLabels = [(&'static str, &'static str); 3];
type HandledLabels = [(&'static str, &'static str); 4];
type ReasonLabel = [(&'static str, &'static str); 1];
type HistogramFamily = Family<MethodLabels, Histogram, fn() -> Histogram>;

fn handling_histogram() -> Histogram {
    Histogram::new(HANDLING_BUCKETS)
}

/// One method's series, created on first use and kept, so that recording a call costs
/// no label hashing.
struct MethodMetrics {
    labels: MethodLabels,
    started: OnceLock<Counter>,
    handling: OnceLock<Histogram>,
    handled: [OnceLock<Counter>; 17],
}

impl MethodMetrics {
    fn new(grpc_type: &'static str, service: &'static str, method: &'static str) -> Self {
        MethodMetrics {
            labels: [
                ("grpc_type", grpc_type),
                ("grpc_service", service),
                ("grpc_method", method),
            ],
            started: OnceLock::new(),
            handling: OnceLock::new(),
            handled: std::array::from_fn(|_| OnceLock::new()),
        }
    }
}

/// What the metrics read when they are scraped: the server's parts, set by the server
/// once they exist.
pub struct Sources {
    /// The embedded store's group-commit counters (none for a database store).
    pub store_stats: Box<dyn Fn() -> Option<GroupCommitStats> + Send + Sync>,
    /// Games loaded in the registry's cache.
    pub games_loaded: Box<dyn Fn() -> usize + Send + Sync>,
    /// Perfts computing now.
    pub perfts_running: Box<dyn Fn() -> usize + Send + Sync>,
    /// The LegalMoves-by-FEN cache.
    pub fen_cache: Arc<FenCache>,
    /// Calls in flight across the server (the load-shedding count).
    pub calls_in_flight: Box<dyn Fn() -> usize + Send + Sync>,
    /// Bytes of large answers built and not yet sent (the budget's use).
    pub unsent_answer_bytes: Box<dyn Fn() -> usize + Send + Sync>,
    /// Client connections open now.
    pub connections_open: Arc<AtomicUsize>,
    /// The store's backend (`chess_build_info{store}`): `sled`, `postgres`, `memory`.
    pub store_kind: &'static str,
    /// Whether the store can be reached (a database), as it changes; `None`: always.
    pub store_available: Option<tokio::sync::watch::Receiver<bool>>,
    /// The shared store's clock estimate (a database); `None`: the local clock.
    pub clock: Option<Arc<crate::store::DbClock>>,
    /// The store's fault, once it stopped after one (the embedded store); `None`: the
    /// store has no such fault.
    pub store_fault: Option<tokio::sync::watch::Receiver<Option<StoreError>>>,
    /// Whether health reports `chess.v1.ChessService` SERVING now.
    pub serving: Arc<AtomicBool>,
    /// Where games created and ended here are counted (the registry's, the store's).
    pub tallies: Vec<Arc<GameTally>>,
}

/// The process-wide metrics.
pub struct Metrics {
    registry: Registry,
    started: Family<MethodLabels, Counter>,
    handled: Family<HandledLabels, Counter>,
    handling: HistogramFamily,
    refusals: Family<ReasonLabel, Counter>,
    connections_refused: Family<ReasonLabel, Counter>,
    accept_errors: Family<ReasonLabel, Counter>,
    spectators: Gauge,
    methods: Vec<MethodMetrics>,
    by_path: HashMap<String, usize>,
    unknown: usize,
    sources: Arc<Mutex<Option<Sources>>>,
}

static METRICS: OnceLock<Metrics> = OnceLock::new();

/// Turns metrics on for this process (idempotent) and sets what they read at a scrape.
pub fn enable(sources: Sources) -> &'static Metrics {
    let metrics = METRICS.get_or_init(Metrics::new);
    *metrics.sources.lock().unwrap_or_else(|p| p.into_inner()) = Some(sources);
    metrics
}

/// The metrics, when they are on.
pub fn get() -> Option<&'static Metrics> {
    METRICS.get()
}

/// Counts an error answer by its `ErrorInfo` reason (`chess_refusals_total`).
pub fn refused(reason: &'static str) {
    if let Some(m) = get() {
        m.refusals.get_or_create(&[("reason", reason)]).inc();
    }
}

/// Counts a connection closed by the server before it served a call
/// (`chess_connections_refused_total{reason}`).
pub fn connection_refused(reason: ConnectionRefusal) {
    if let Some(m) = get() {
        m.connections_refused
            .get_or_create(&[("reason", reason.label())])
            .inc();
    }
}

/// Counts a failed `accept` (`chess_accept_errors_total{kind}`).
pub fn accept_error(kind: AcceptFailure) {
    if let Some(m) = get() {
        m.accept_errors
            .get_or_create(&[("kind", kind.label())])
            .inc();
    }
}

/// A WatchGame spectator, counted in `chess_spectators` while this lives.
pub struct Spectator(bool);

/// Counts a spectator until the returned guard is dropped.
pub fn spectator() -> Spectator {
    match get() {
        Some(m) => {
            m.spectators.inc();
            Spectator(true)
        }
        None => Spectator(false),
    }
}

impl Drop for Spectator {
    fn drop(&mut self) {
        if self.0
            && let Some(m) = get()
        {
            m.spectators.dec();
        }
    }
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::default();
        let started = Family::<MethodLabels, Counter>::default();
        registry.register(
            "grpc_server_started",
            "Total number of RPCs started on the server",
            started.clone(),
        );
        let handled = Family::<HandledLabels, Counter>::default();
        registry.register(
            "grpc_server_handled",
            "Total number of RPCs completed on the server, regardless of success or failure",
            handled.clone(),
        );
        let handling: HistogramFamily = Family::new_with_constructor(handling_histogram);
        registry.register(
            "grpc_server_handling_seconds",
            "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server",
            handling.clone(),
        );
        let refusals = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "chess_refusals",
            "Calls answered with an error, by the ErrorInfo reason of the error",
            refusals.clone(),
        );
        let connections_refused = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "chess_connections_refused",
            "Connections the server closed before serving a call, by reason (max_connections, handshake_timeout, not_http2, handshake_failed)",
            connections_refused.clone(),
        );
        let accept_errors = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "chess_accept_errors",
            "Failed accepts of a connection, by kind (out_of_descriptors: EMFILE and the like, which the accept loop backs off from; other)",
            accept_errors.clone(),
        );
        let spectators = Gauge::default();
        registry.register(
            "chess_spectators",
            "WatchGame streams open now",
            spectators.clone(),
        );
        let sources = Arc::new(Mutex::new(None));
        registry.register_collector(Box::new(StateCollector {
            sources: sources.clone(),
            endings: ending_statuses(),
        }));

        let mut methods = Vec::new();
        let mut by_path = HashMap::new();
        for &(method, _) in METHOD_ROLES {
            by_path.insert(format!("/{CHESS_SERVICE}/{method}"), methods.len());
            methods.push(MethodMetrics::new(
                chess_method_type(method),
                CHESS_SERVICE,
                method,
            ));
        }
        for &(service, method, grpc_type) in OTHER_METHODS {
            by_path.insert(format!("/{service}/{method}"), methods.len());
            methods.push(MethodMetrics::new(grpc_type, service, method));
        }
        let unknown = methods.len();
        methods.push(MethodMetrics::new("unary", "unknown", "unknown"));
        // Every labelled counter at 0 from the start (see the module docs); the guard
        // each creation returns is dropped at once.
        for reason in error_reasons() {
            drop(refusals.get_or_create(&[("reason", reason)]));
        }
        for reason in ConnectionRefusal::ALL {
            drop(connections_refused.get_or_create(&[("reason", reason.label())]));
        }
        for kind in AcceptFailure::ALL {
            drop(accept_errors.get_or_create(&[("kind", kind.label())]));
        }
        let metrics = Metrics {
            registry,
            started,
            handled,
            handling,
            refusals,
            connections_refused,
            accept_errors,
            spectators,
            methods,
            by_path,
            unknown,
            sources,
        };
        for method in 0..metrics.methods.len() {
            metrics.started_counter(method);
            for code in 0..GO_CODE_NAMES.len() {
                metrics.handled_counter(method, code);
            }
            metrics.handling_histogram(method);
        }
        metrics
    }

    /// The Prometheus text (OpenMetrics) of every metric, read now.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(error = %e, "encoding the metrics failed");
        }
        text
    }

    /// The index of the method at `path` (or of "unknown").
    fn method(&self, path: &str) -> usize {
        self.by_path.get(path).copied().unwrap_or(self.unknown)
    }

    fn started_counter(&self, method: usize) -> &Counter {
        let m = &self.methods[method];
        m.started
            .get_or_init(|| self.started.get_or_create(&m.labels).clone())
    }

    fn handled_counter(&self, method: usize, code: usize) -> &Counter {
        let m = &self.methods[method];
        m.handled[code].get_or_init(|| {
            let [t, s, n] = m.labels;
            self.handled
                .get_or_create(&[t, s, n, ("grpc_code", GO_CODE_NAMES[code])])
                .clone()
        })
    }

    fn handling_histogram(&self, method: usize) -> &Histogram {
        let m = &self.methods[method];
        m.handling
            .get_or_init(|| self.handling.get_or_create(&m.labels).clone())
    }

    fn record_start(&self, method: usize) {
        self.started_counter(method).inc();
    }

    fn record_end(&self, method: usize, code: usize, start: Instant) {
        // A number gRPC does not define counts as Unknown.
        let code = if code < GO_CODE_NAMES.len() {
            code
        } else {
            UNKNOWN
        };
        self.handled_counter(method, code).inc();
        self.handling_histogram(method)
            .observe(start.elapsed().as_secs_f64());
    }
}

/// The metrics read from the server's state at each scrape.
struct StateCollector {
    sources: Arc<Mutex<Option<Sources>>>,
    /// Every ending status with its label, in the `.proto`'s order.
    endings: Vec<(pb::GameStatus, String)>,
}

impl std::fmt::Debug for StateCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateCollector")
    }
}

fn counter(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: impl prometheus_client::encoding::EncodeCounterValue + Copy,
) -> Result<(), std::fmt::Error> {
    let metric = ConstCounter::new(value);
    let metric_encoder = encoder.encode_descriptor(name, help, None, metric.metric_type())?;
    metric.encode(metric_encoder)
}

fn gauge(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: impl prometheus_client::encoding::EncodeGaugeValue + Copy,
) -> Result<(), std::fmt::Error> {
    let metric = ConstGauge::new(value);
    let metric_encoder = encoder.encode_descriptor(name, help, None, metric.metric_type())?;
    metric.encode(metric_encoder)
}

impl StateCollector {
    /// What alerts and the business dashboards read: the build, health, the store's state
    /// and the games created and ended.
    fn encode_operator_state(
        &self,
        e: &mut DescriptorEncoder<'_>,
        s: &Sources,
    ) -> Result<(), std::fmt::Error> {
        e.encode_descriptor(
            "chess_build",
            "The running build: its version, commit and store backend (always 1).",
            None,
            MetricType::Info,
        )?
        .encode_info(&[
            ("version", env!("CARGO_PKG_VERSION")),
            ("commit", env!("CHESS_BUILD_COMMIT")),
            ("store", s.store_kind),
        ])?;
        gauge(
            e,
            "chess_serving",
            "1 while health reports chess.v1.ChessService SERVING, else 0 (starting, shutting down, store stopped or unreachable).",
            i64::from(s.serving.load(Ordering::Relaxed)),
        )?;
        gauge(
            e,
            "chess_store_available",
            "1 while the store can be reached (the database's change feed is up and its clock known within --max-clock-uncertainty-ms; the embedded store always), else 0.",
            i64::from(s.store_available.as_ref().is_none_or(|up| *up.borrow())),
        )?;
        if let Some(clock) = &s.clock {
            gauge(
                e,
                "chess_clock_offset_seconds",
                "The database's clock minus this replica's, as estimated (moves are charged and flags fall by the database's clock).",
                clock.offset_seconds(),
            )?;
            if let Some(uncertainty) = clock.uncertainty() {
                gauge(
                    e,
                    "chess_clock_uncertainty_seconds",
                    "How far this replica's estimate of the database's clock may be off; above --max-clock-uncertainty-ms the service is NOT_SERVING.",
                    uncertainty.as_secs_f64(),
                )?;
            }
        }
        gauge(
            e,
            "chess_store_stopped",
            "1 once the embedded store stopped after a failed or uncertain write or sync (disk full included): the process serves nothing more and exits.",
            i64::from(
                s.store_fault
                    .as_ref()
                    .is_some_and(|fault| fault.borrow().is_some()),
            ),
        )?;
        counter(
            e,
            "chess_games_created",
            "Games this process created (NewGame, ImportGame), counted once each was durable.",
            s.tallies.iter().map(|t| t.created_count()).sum::<u64>(),
        )?;
        let mut ended: HashMap<pb::GameStatus, u64> = HashMap::new();
        for tally in &s.tallies {
            for (status, n) in tally.ended_counts() {
                *ended.entry(pb::GameStatus::from(status)).or_insert(0) += n;
            }
        }
        let mut family = e.encode_descriptor(
            "chess_games_ended",
            "Games this process's durable writes ended (a move, a flag fall, a resignation, an agreed or claimed draw, a flag sweep), by the GameStatus they ended with; counted once across replicas and restarts.",
            None,
            MetricType::Counter,
        )?;
        for (status, label) in &self.endings {
            let n = ended.get(status).copied().unwrap_or(0);
            ConstCounter::new(n).encode(family.encode_family(&[("status", label.as_str())])?)?;
        }
        Ok(())
    }
}

impl Collector for StateCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let e = &mut encoder;
        let sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = sources.as_ref() {
            if let Some(stats) = (s.store_stats)() {
                counter(
                    e,
                    "chess_store_commits",
                    "Writes made durable by the embedded store's group commit (each waited for a sync).",
                    stats.waiters,
                )?;
                counter(
                    e,
                    "chess_store_syncs",
                    "Syncs (flush and fsync at --durability fsync) the embedded store ran; commits / syncs is the mean batch size.",
                    stats.batches,
                )?;
                counter(
                    e,
                    "chess_store_sync_seconds",
                    "Time spent in the embedded store's syncs; divided by chess_store_syncs_total, the mean sync latency.",
                    stats.sync_time.as_secs_f64(),
                )?;
                gauge(
                    e,
                    "chess_store_batch_size_max",
                    "The most commits one sync has made durable since the start.",
                    stats.max_batch as i64,
                )?;
            }
            gauge(
                e,
                "chess_games_loaded",
                "Games held in memory (the registry's cache).",
                (s.games_loaded)() as i64,
            )?;
            gauge(
                e,
                "chess_perfts_running",
                "Perfts computing now.",
                (s.perfts_running)() as i64,
            )?;
            let (hits, misses) = s.fen_cache.hits_and_misses();
            counter(
                e,
                "chess_fen_cache_hits",
                "LegalMoves-by-FEN answers served from the cache.",
                hits,
            )?;
            counter(
                e,
                "chess_fen_cache_misses",
                "LegalMoves-by-FEN answers computed (not in the cache).",
                misses,
            )?;
            gauge(
                e,
                "chess_fen_cache_entries",
                "LegalMoves-by-FEN answers held in the cache.",
                s.fen_cache.len() as i64,
            )?;
            gauge(
                e,
                "chess_calls_in_flight",
                "Calls being handled now or answered and not yet sent (what --max-in-flight bounds).",
                (s.calls_in_flight)() as i64,
            )?;
            gauge(
                e,
                "chess_unsent_answer_bytes",
                "Bytes of large answers built and not yet sent to their callers (what --max-unsent-answer-mib bounds).",
                (s.unsent_answer_bytes)() as i64,
            )?;
            gauge(
                e,
                "chess_connections_open",
                "Client connections open now (what --max-connections bounds).",
                s.connections_open.load(Ordering::Relaxed) as i64,
            )?;
            self.encode_operator_state(e, s)?;
        }
        drop(sources);
        let p = super::process_stats::read();
        if let Some(cpu) = p.cpu_seconds {
            counter(
                e,
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                cpu,
            )?;
        }
        if let Some(rss) = p.resident_bytes {
            gauge(
                e,
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                rss as i64,
            )?;
        }
        if let Some(vsize) = p.virtual_bytes {
            gauge(
                e,
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                vsize as i64,
            )?;
        }
        if let Some(fds) = p.open_fds {
            gauge(
                e,
                "process_open_fds",
                "Number of open file descriptors.",
                fds as i64,
            )?;
        }
        if let Some(max) = p.max_fds {
            gauge(
                e,
                "process_max_fds",
                "Maximum number of open file descriptors.",
                max as i64,
            )?;
        }
        if let Some(threads) = p.threads {
            gauge(
                e,
                "process_threads",
                "Number of OS threads in the process.",
                threads as i64,
            )?;
        }
        if let Some(start) = p.start_time_seconds {
            gauge(
                e,
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                start,
            )?;
        }
        Ok(())
    }
}

/// The tower layer that counts and times every gRPC call.
#[derive(Clone, Copy, Default)]
pub struct MetricsLayer;

impl<S> tower::Layer<S> for MetricsLayer {
    type Service = MetricsService<S>;

    fn layer(&self, inner: S) -> MetricsService<S> {
        MetricsService { inner }
    }
}

/// The service the [`MetricsLayer`] wraps around the server's routes.
#[derive(Clone)]
pub struct MetricsService<S> {
    inner: S,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

impl<S, ReqBody, ResBody> tower::Service<http::Request<ReqBody>> for MetricsService<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResBody: http_body::Body + Send + 'static,
{
    type Response = http::Response<MetricsBody<ResBody>>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        // The clone is not ready; the one polled ready serves this call.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let Some(metrics) = get() else {
            let answer = ready.call(request);
            return Box::pin(async move {
                let response = answer.await?;
                Ok(response.map(|body| MetricsBody {
                    inner: body,
                    call: None,
                }))
            });
        };
        let method = metrics.method(request.uri().path());
        metrics.record_start(method);
        // Counted as cancelled unless an answer's status is seen first.
        let call = Call {
            metrics,
            method,
            start: Instant::now(),
            code: None,
        };
        let answer = ready.call(request);
        Box::pin(async move {
            let response = answer.await?;
            let (parts, body) = response.into_parts();
            let call = match grpc_status(&parts.headers) {
                // An error (trailers-only response): the status is in the headers.
                Some(code) => {
                    call.finish(code);
                    None
                }
                None => Some(call),
            };
            Ok(http::Response::from_parts(
                parts,
                MetricsBody { inner: body, call },
            ))
        })
    }
}

/// The `grpc-status` of headers or trailers, if they carry one.
fn grpc_status(headers: &http::HeaderMap) -> Option<usize> {
    let value = headers.get("grpc-status")?;
    Some(
        std::str::from_utf8(value.as_bytes())
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .unwrap_or(UNKNOWN),
    )
}

/// A call whose status is not known yet; recorded when dropped.
struct Call {
    metrics: &'static Metrics,
    method: usize,
    start: Instant,
    code: Option<usize>,
}

impl Call {
    fn finish(mut self, code: usize) {
        self.code = Some(code);
    }
}

impl Drop for Call {
    /// Dropped without a status: the response was abandoned before it (the caller went
    /// away, or the connection broke), which counts as cancelled.
    fn drop(&mut self) {
        let code = self.code.unwrap_or(CANCELLED);
        self.metrics.record_end(self.method, code, self.start);
    }
}

pin_project_lite::pin_project! {
    /// A response body that records its call when the status trailers pass.
    pub struct MetricsBody<B> {
        #[pin]
        inner: B,
        call: Option<Call>,
    }
}

impl<B: http_body::Body> http_body::Body for MetricsBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let polled = this.inner.poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(trailers) = frame.trailers_ref()
                    && let Some(call) = this.call.take()
                {
                    call.finish(grpc_status(trailers).unwrap_or(UNKNOWN));
                }
            }
            Poll::Ready(None) => {
                // The body ended without a status: not a gRPC answer.
                if let Some(call) = this.call.take() {
                    call.finish(UNKNOWN);
                }
            }
            Poll::Ready(Some(Err(_))) => {
                if let Some(call) = this.call.take() {
                    call.finish(UNKNOWN);
                }
            }
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_code_names_follow_tonic_numbers() {
        assert_eq!(GO_CODE_NAMES[tonic::Code::Ok as usize], "OK");
        assert_eq!(GO_CODE_NAMES[tonic::Code::Cancelled as usize], "Canceled");
        assert_eq!(GO_CODE_NAMES[tonic::Code::NotFound as usize], "NotFound");
        assert_eq!(
            GO_CODE_NAMES[tonic::Code::ResourceExhausted as usize],
            "ResourceExhausted"
        );
        assert_eq!(
            GO_CODE_NAMES[tonic::Code::Unauthenticated as usize],
            "Unauthenticated"
        );
        assert_eq!(CANCELLED, tonic::Code::Cancelled as usize);
        assert_eq!(UNKNOWN, tonic::Code::Unknown as usize);
    }

    #[test]
    fn statuses_are_read_from_headers() {
        let mut headers = http::HeaderMap::new();
        assert_eq!(grpc_status(&headers), None);
        headers.insert("grpc-status", http::HeaderValue::from_static("5"));
        assert_eq!(grpc_status(&headers), Some(5));
        headers.insert("grpc-status", http::HeaderValue::from_static("x"));
        assert_eq!(grpc_status(&headers), Some(UNKNOWN));
    }
}
