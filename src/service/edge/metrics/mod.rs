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
//!
//! This file is the registry: the metric set, its labels and the calls that record into
//! it. The metrics read from the server's state at each scrape ([`Sources`]) are in
//! `collectors.rs`; the tower layer and its response body in `layer.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::pb;
use crate::service::edge::auth::methods::{CHESS_SERVICE, METHOD_ROLES};

mod collectors;
mod layer;

pub use collectors::Sources;
use collectors::StateCollector;
pub use layer::{Call, CallCounter, MetricsBody, MetricsLayer, MetricsService};

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
    crate::service::proto_enums::value_names("chess.v1.ErrorReason")
        .iter()
        .filter_map(|name| pb::ErrorReason::from_str_name(name))
        .filter(|r| *r != pb::ErrorReason::Unspecified)
        .map(|r| r.as_str_name())
        .collect()
}

/// Every `GameStatus` that ends a game, with its `status` label: the value's name less
/// `GAME_STATUS_`, in lower case (`checkmate`, `out_of_time`), from the `.proto`.
fn ending_statuses() -> Vec<(pb::GameStatus, String)> {
    crate::service::proto_enums::value_names("chess.v1.GameStatus")
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
}
