//! `--otlp-endpoint URL`: the span of every call exported over OTLP/gRPC (tonic) to a
//! collector, in batches from a background thread. A call that carries a W3C
//! `traceparent` continues the caller's trace. Off by default.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::registry::LookupSpan;

/// The exporting tracer provider; [`Traces::shutdown`] sends what is still buffered.
pub struct Traces(SdkTracerProvider);

/// The tracing layer that exports spans to `endpoint`, and its provider. Must be called
/// inside the Tokio runtime (the exporter's channel connects lazily on it).
pub fn layer<S>(
    endpoint: &str,
) -> Result<
    (
        impl tracing_subscriber::Layer<S> + Send + Sync + 'static,
        Traces,
    ),
    String,
>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
{
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| format!("cannot set up OTLP export to {endpoint}: {e}"))?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name("chess-server")
                .build(),
        )
        .build();
    let tracer = provider.tracer("chess-server");
    crate::service::edge::trace_context::enable();
    Ok((
        tracing_opentelemetry::layer().with_tracer(tracer),
        Traces(provider),
    ))
}

impl Traces {
    /// Exports the spans still buffered and stops the exporter (at shutdown).
    pub fn shutdown(self) {
        if let Err(e) = self.0.shutdown() {
            tracing::warn!(error = %e, "exporting the last spans at shutdown failed");
        }
    }
}
