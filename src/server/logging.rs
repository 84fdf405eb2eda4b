//! Logging to stdout (text or JSON lines, `RUST_LOG` levels), the HTTP/2 stack's warnings
//! rate-limited, and the optional OTLP export of spans. Why apart: it is set up by the
//! binary before the runtime serves anything, not by `serve`.

use super::config::LogFormat;
use super::{log_flood, traces};

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
