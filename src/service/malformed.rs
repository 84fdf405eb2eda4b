//! Requests the port cannot take (bytes that do not decode, gRPC-Web on the gRPC port)
//! are the caller's fault.
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
//! It also refuses a gRPC-Web request on the main port (`GRPC_WEB_ON_GRPC_PORT`,
//! UNIMPLEMENTED), which tonic would otherwise answer as gRPC, in a form a browser's
//! gRPC-Web client cannot read (or, for `grpc-web-text`, as MALFORMED_REQUEST). The
//! answer is in gRPC-Web's form and names the listener that speaks it. On the gRPC-Web
//! listener this layer sits inside the translation, so it never sees gRPC-Web there.
//!
//! tonic's answers are known by the `tonic::Status` it leaves in the response's
//! extensions and by its messages (tonic 0.14, tonic-prost 0.14); a test sends each
//! kind of bad bytes to every method, so a tonic that words them otherwise fails it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tonic::Code;

use super::ServiceError;
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

/// The request's content type when it is gRPC-Web's (`application/grpc-web`,
/// `application/grpc-web+proto`, `application/grpc-web-text`, ...).
fn grpc_web_content_type<B>(request: &http::Request<B>) -> Option<&http::HeaderValue> {
    const GRPC_WEB: &str = "application/grpc-web";
    let value = request.headers().get(http::header::CONTENT_TYPE)?;
    let text = value.to_str().ok()?;
    text.get(..GRPC_WEB.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(GRPC_WEB))
        .then_some(value)
}

/// The refusal of a gRPC-Web request on the main port: trailers-only, with gRPC-Web's
/// content type of the request's kind (`-text` or not), as a gRPC-Web client expects.
fn refuse_grpc_web<B: Default>(path: &str, content_type: &http::HeaderValue) -> http::Response<B> {
    let text = String::from_utf8_lossy(content_type.as_bytes()).to_ascii_lowercase();
    let answer_type = if text.starts_with("application/grpc-web-text") {
        "application/grpc-web-text+proto"
    } else {
        "application/grpc-web+proto"
    };
    let error = ServiceError::GrpcWebOnGrpcPort {
        content_type: clipped(&text),
    };
    let mut response = refused(path, error, None);
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(answer_type),
    );
    response
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
    refused(path, error, accepted)
}

/// The answer for a request refused with `error`: logged (rate-limited), counted, and
/// turned into its status (`accepted`: the encodings to name in the answer's headers).
fn refused<B: Default>(
    path: &str,
    error: ServiceError,
    accepted: Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>,
) -> http::Response<B> {
    refusal_log::log_and_count(path, &error);
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
        if let Some(content_type) = grpc_web_content_type(&request) {
            let answer = refuse_grpc_web(&path, content_type);
            return Box::pin(async move { Ok(answer) });
        }
        let answer = self.inner.call(request);
        Box::pin(async move { Ok(rewrite(&path, answer.await?)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_web_content_types_are_told_from_grpc() {
        let request = |content_type: &str| {
            http::Request::builder()
                .header(http::header::CONTENT_TYPE, content_type)
                .body(())
                .unwrap()
        };
        for web in [
            "application/grpc-web",
            "application/grpc-web+proto",
            "application/grpc-web-text",
            "application/grpc-web-text+proto",
            "Application/gRPC-Web+proto",
        ] {
            assert!(grpc_web_content_type(&request(web)).is_some(), "{web}");
        }
        for grpc in [
            "application/grpc",
            "application/grpc+proto",
            "application/gr",
            "",
        ] {
            assert!(grpc_web_content_type(&request(grpc)).is_none(), "{grpc}");
        }
        let none = http::Request::builder().body(()).unwrap();
        assert!(grpc_web_content_type(&none).is_none());
    }

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
