//! The operations flags of the server (connections, load, perft's time limit, metrics)
//! and the objects built from them.

use std::time::Duration;

use super::accept::Limits;

/// Flags of issue 14, flattened into [`super::Config`].
#[derive(clap::Args, Debug, Clone)]
pub struct OpsConfig {
    /// Client connections open at once; a connection beyond it is closed as soon as it
    /// is accepted (0: no bound). Keep it below the descriptor limit (`ulimit -n`)
    /// less what the store needs.
    #[arg(long, env = "CHESS_MAX_CONNECTIONS", default_value_t = 10_000)]
    pub max_connections: usize,
    /// A connection must start HTTP/2 (its TLS handshake, then the HTTP/2 preface)
    /// within this many seconds, or it is closed.
    #[arg(long, env = "CHESS_HANDSHAKE_TIMEOUT_SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub handshake_timeout_secs: u64,
    /// HTTP/2 keepalive: the server pings an idle connection this often (0: never).
    #[arg(
        long,
        env = "CHESS_HTTP2_KEEPALIVE_INTERVAL_SECS",
        default_value_t = 60
    )]
    pub http2_keepalive_interval_secs: u64,
    /// HTTP/2 keepalive: a connection whose ping is not answered within this many
    /// seconds is closed.
    #[arg(long, env = "CHESS_HTTP2_KEEPALIVE_TIMEOUT_SECS", default_value_t = 20,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub http2_keepalive_timeout_secs: u64,
    /// Streams (calls) one connection may have open at once, announced to the client in
    /// HTTP/2 SETTINGS.
    #[arg(long, env = "CHESS_MAX_CONCURRENT_STREAMS", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_streams: u32,
    /// Calls being handled at once across the whole server; a call beyond it is refused
    /// at once with RESOURCE_EXHAUSTED, reason OVERLOADED (not queued). Health checks
    /// are never refused (0: no bound).
    #[arg(long, env = "CHESS_MAX_IN_FLIGHT", default_value_t = 1024)]
    pub max_in_flight: usize,
    /// Mebibytes of large answers (over 64 KiB each, such as ListGames pages) the server
    /// keeps built and not yet read by their callers; a large answer beyond it is refused
    /// at once with RESOURCE_EXHAUSTED, reason OVERLOADED. Smaller answers are bounded by
    /// --max-in-flight alone (0: no bound).
    #[arg(long, env = "CHESS_MAX_UNSENT_ANSWER_MIB", value_name = "MIB",
          default_value_t = crate::service::answer_budget::DEFAULT_MIB)]
    pub max_unsent_answer_mib: usize,
    /// The longest one Perft may compute, in seconds, whatever the caller's deadline:
    /// past it the perft stops and answers DEADLINE_EXCEEDED.
    #[arg(long, env = "CHESS_PERFT_MAX_SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub perft_max_seconds: u64,
    /// Serve Prometheus metrics at http://ADDR/metrics (plain HTTP, no token; port 0
    /// picks a free port, logged as `Prometheus metrics on ADDR at /metrics`). Off when
    /// not set.
    #[arg(long, env = "CHESS_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<String>,
    /// Export the span of every call over OTLP/gRPC to this collector
    /// (`http://collector:4317`); a call with a W3C `traceparent` continues the caller's
    /// trace. Off when not set.
    #[arg(long, env = "CHESS_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

/// The longest time limit taken as given (a year): beyond it, time arithmetic could
/// overflow.
const MAX_SECONDS: u64 = 365 * 24 * 3600;

impl OpsConfig {
    /// The accept loop's limits.
    pub fn accept_limits(&self) -> Limits {
        Limits {
            max_connections: self.max_connections,
            flag: "--max-connections",
            handshake_timeout: Duration::from_secs(self.handshake_timeout_secs.min(MAX_SECONDS)),
            http1: false,
        }
    }

    /// The HTTP/2 keepalive interval, if any.
    pub fn keepalive_interval(&self) -> Option<Duration> {
        (self.http2_keepalive_interval_secs > 0)
            .then(|| Duration::from_secs(self.http2_keepalive_interval_secs.min(MAX_SECONDS)))
    }

    /// The HTTP/2 keepalive timeout.
    pub fn keepalive_timeout(&self) -> Duration {
        Duration::from_secs(self.http2_keepalive_timeout_secs.min(MAX_SECONDS))
    }

    /// The longest a perft may compute.
    pub fn perft_max_duration(&self) -> Duration {
        Duration::from_secs(self.perft_max_seconds.min(MAX_SECONDS))
    }
}
