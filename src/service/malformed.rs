//! Requests whose bytes do not decode are the caller's fault.
//!
//! tonic answers a request it cannot decode before any handler runs, with its own
//! status: INTERNAL for bytes that are not protobuf of the method's type, a gRPC frame
//! cut short, an unknown frame flag, or no message at all; INTERNAL for a message marked
//! compressed without a `grpc-encoding`; UNIMPLEMENTED for an encoding it does not
//! decompress. None carries an `ErrorInfo`, the metrics counted them as server errors
//! (an INTERNAL fires the error-ratio alert) and nothing was logged.
//!
//! [`MalformedLayer`] sits inside the metrics layer and rewrites those answers into
//! [`ServiceError`]s: `MALFORMED_REQUEST` (INVALID_ARGUMENT) for undecodable bytes,
//! `UNSUPPORTED_COMPRESSION` (UNIMPLEMENTED, or INTERNAL where the gRPC compression spec
//! demands it) for compression; counted by reason, logged at most a few lines a second.
//!
//! tonic's answers are known by the `tonic::Status` it leaves in the response's
//! extensions and by its messages (tonic 0.14, tonic-prost 0.14); a test sends each
//! kind of bad bytes to every method, so a tonic that words them otherwise fails it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tonic::Code;

use super::ServiceError;
use super::log_text::Clean;
use crate::rules::clip::clipped;
use crate::service::edge::refusal_log;

/// The header tonic names the encodings it takes in, kept on the rewritten answer.
const ACCEPT_ENCODING: &str = "grpc-accept-encoding";

/// The error a tonic decoding status stands for, if it is one.
pub fn classify(status: &tonic::Status) -> Option<ServiceError> {
    let message = status.message();
    match status.code() {
        Code::Internal
            if message.starts_with("failed to decode Protobuf message")
                || message.starts_with("Unexpected EOF decoding stream")
                || message.starts_with("Missing request message")
                || message.starts_with(
                    "protocol error: received message with invalid compression flag",
                ) =>
        {
            Some(ServiceError::MalformedRequest {
                problem: clipped(message),
            })
        }
        Code::Internal
            if message.starts_with("protocol error: received message with compressed-flag") =>
        {
            Some(ServiceError::CompressedWithoutEncoding)
        }
        Code::Unimplemented => {
            let named = message.strip_prefix("Content is compressed with `")?;
            let encoding = named.strip_suffix("` which isn't supported")?;
            Some(ServiceError::CompressionNotAccepted {
                encoding: clipped(encoding),
            })
        }
        _ => None,
    }
}

/// The answer rewritten when it is one of tonic's decoding statuses.
fn rewrite<B: Default>(path: &str, response: http::Response<B>) -> http::Response<B> {
    let Some(status) = response.extensions().get::<tonic::Status>() else {
        return response;
    };
    let Some(error) = classify(status) else {
        return response;
    };
    let accepted = status.metadata().get(ACCEPT_ENCODING).cloned();
    if let Some(left_out) = refusal_log::admit(error.error_reason()) {
        tracing::info!(
            path = %Clean::new(path, 96),
            code = ?error.code(),
            reason = error.reason(),
            left_out_since_last_line = left_out,
            "refused: {}",
            Clean::new(&error.to_string(), 512)
        );
    }
    crate::service::edge::metrics::refused(error.reason());
    let mut status = tonic::Status::from(error);
    if let Some(accepted) = accepted {
        status.metadata_mut().insert(ACCEPT_ENCODING, accepted);
    }
    status.into_http()
}

/// The tower layer, for `tonic::transport::Server::builder().layer(..)`: inside the
/// metrics layer, so that the metrics see the rewritten code.
#[derive(Clone, Copy, Debug, Default)]
pub struct MalformedLayer;

impl<S> tower::Layer<S> for MalformedLayer {
    type Service = MalformedService<S>;

    fn layer(&self, inner: S) -> MalformedService<S> {
        MalformedService { inner }
    }
}

/// The service the [`MalformedLayer`] wraps around the server's routes.
#[derive(Clone, Debug)]
pub struct MalformedService<S> {
    inner: S,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

impl<S, ReqBody, ResBody> tower::Service<http::Request<ReqBody>> for MalformedService<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    ResBody: Default + Send + 'static,
{
    type Response = http::Response<ResBody>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        let path = request.uri().path().to_string();
        let answer = self.inner.call(request);
        Box::pin(async move { Ok(rewrite(&path, answer.await?)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tonic_decoding_statuses_become_caller_errors() {
        let bad = tonic::Status::internal("failed to decode Protobuf message: invalid wire type");
        let e = classify(&bad).expect("a decode error");
        assert_eq!(e.code(), Code::InvalidArgument);
        assert_eq!(e.reason(), "MALFORMED_REQUEST");
        for message in [
            "Unexpected EOF decoding stream.",
            "Missing request message.",
            "protocol error: received message with invalid compression flag: 7 (valid flags are 0 and 1), while sending request",
        ] {
            let e = classify(&tonic::Status::internal(message)).expect(message);
            assert_eq!(e.reason(), "MALFORMED_REQUEST", "{message}");
        }
        let flag = tonic::Status::internal(
            "protocol error: received message with compressed-flag but no grpc-encoding was specified",
        );
        let e = classify(&flag).expect("compressed flag");
        assert_eq!(
            e.code(),
            Code::Internal,
            "the gRPC compression spec demands INTERNAL"
        );
        assert_eq!(e.reason(), "UNSUPPORTED_COMPRESSION");
        let long = "z".repeat(10_000);
        let unknown = tonic::Status::unimplemented(format!(
            "Content is compressed with `{long}` which isn't supported"
        ));
        let e = classify(&unknown).expect("unknown encoding");
        assert_eq!(e.code(), Code::Unimplemented);
        assert!(e.to_string().len() < 400, "the encoding is clipped: {e}");
    }

    #[test]
    fn other_statuses_are_left_alone() {
        assert!(classify(&tonic::Status::internal("internal error: a bug")).is_none());
        assert!(classify(&tonic::Status::unimplemented("Unknown method")).is_none());
        assert!(
            classify(&tonic::Status::invalid_argument(
                "failed to decode Protobuf message"
            ))
            .is_none()
        );
    }
}
