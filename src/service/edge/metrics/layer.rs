//! The tower layer ([`MetricsLayer`]) that counts and times every gRPC call, refused ones
//! included, and the response body ([`MetricsBody`]) that records a call when its status
//! trailers pass, or as cancelled when it is dropped before them. Apart from the registry
//! because it is the one part that sits in the path of every request and response.

use std::time::Instant;

use super::{CANCELLED, Metrics, UNKNOWN, get};
use crate::service::edge::around_call::{AroundCall, AroundCallLayer, AroundCallService};
use crate::service::edge::held_body::{HeldBody, UntilAnswered};

/// The tower layer that counts and times every gRPC call.
pub type MetricsLayer = AroundCallLayer<CallCounter>;

/// The service the [`MetricsLayer`] wraps around the server's routes.
pub type MetricsService<S> = AroundCallService<S, CallCounter>;

/// Counting and timing around each call: started when the request comes, handled with its
/// code when the status is seen (in the answer's headers, or its trailers as they pass).
#[derive(Clone, Copy, Default)]
pub struct CallCounter;

impl AroundCall for CallCounter {
    /// The call counted (none while metrics are off).
    type Held = Option<Call>;
    type Body<B> = MetricsBody<B>;

    fn before<R>(&self, request: &mut http::Request<R>) -> Result<Option<Call>, tonic::Status> {
        let Some(metrics) = get() else {
            return Ok(None);
        };
        let method = metrics.method(request.uri().path());
        metrics.record_start(method);
        // Counted as cancelled unless an answer's status is seen first.
        Ok(Some(Call {
            metrics,
            method,
            start: Instant::now(),
            code: None,
        }))
    }

    fn after<B>(call: Option<Call>, response: http::Response<B>) -> http::Response<MetricsBody<B>> {
        let (parts, body) = response.into_parts();
        let call = match call {
            // An error (trailers-only response): the status is in the headers.
            Some(call) => match grpc_status(&parts.headers) {
                Some(code) => {
                    call.finish(code);
                    None
                }
                None => Some(call),
            },
            None => None,
        };
        http::Response::from_parts(parts, MetricsBody::new(body, call))
    }

    fn refused<B>(response: http::Response<B>) -> http::Response<MetricsBody<B>> {
        response.map(|inner| MetricsBody::new(inner, None))
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
pub struct Call {
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

impl UntilAnswered for Call {
    fn answered(self, trailers: Option<&http::HeaderMap>) {
        // A body that ended without a status is not a gRPC answer.
        self.finish(trailers.and_then(grpc_status).unwrap_or(UNKNOWN));
    }
}

/// A response body that records its call when the status trailers pass.
pub type MetricsBody<B> = HeldBody<B, Call>;

#[cfg(test)]
mod tests {
    use super::*;

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
