//! The W3C trace context of incoming calls (`traceparent`, `tracestate`): with OTLP traces
//! on (`--otlp-endpoint`), a call's span continues the caller's trace. Off by default,
//! and then a call pays one atomic load for it.

use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::propagation::{Extractor, TextMapPropagator as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tonic::metadata::{KeyRef, MetadataMap};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

static ON: AtomicBool = AtomicBool::new(false);

/// Turns trace propagation on (the server exports traces).
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

/// A call's gRPC metadata read as a W3C trace context carrier.
struct Carrier<'a>(&'a MetadataMap);

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0
            .keys()
            .filter_map(|k| match k {
                KeyRef::Ascii(k) => Some(k.as_str()),
                KeyRef::Binary(_) => None,
            })
            .collect()
    }
}

/// The caller's trace context, when traces are on and the call carries a `traceparent`.
pub(crate) fn parent_of<T>(request: &tonic::Request<T>) -> Option<opentelemetry::Context> {
    if !ON.load(Ordering::Relaxed) || request.metadata().get("traceparent").is_none() {
        return None;
    }
    Some(TraceContextPropagator::new().extract(&Carrier(request.metadata())))
}

/// Makes `span` a child of the caller's span, if there is one.
pub(crate) fn continue_trace(span: &tracing::Span, parent: Option<opentelemetry::Context>) {
    if let Some(parent) = parent {
        // A span's parent can be set once, before it starts: this one was just made.
        let _ = span.set_parent(parent);
    }
}
