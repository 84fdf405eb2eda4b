//! Reads an HTTP/1.1 request's body before the call goes on, on the gRPC-Web listener.
//!
//! Why: over HTTP/1.1 an answer sent before the request's body is read (a refused token,
//! a shed call, a rate limit) ends the connection, and a client still sending its body
//! then fails with a broken pipe instead of reading the answer: connect-node reported
//! UNAUTHENTICATED as INTERNAL in 35 calls of 40. A gRPC-Web request is one message (no
//! client streaming), so reading it first costs nothing but its bytes, which
//! `--max-request-bytes` bounds: past that many, or past [`READ_LIMIT`] of waiting, the
//! rest is passed on unread, as before. HTTP/2 needs none of this (a stream ends alone).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt as _;
use tonic::body::Body;
use tower::{Layer, Service};

/// The longest the body is waited for before the call goes on without it.
pub const READ_LIMIT: Duration = Duration::from_secs(10);

/// Reads HTTP/1.x request bodies of up to `max_bytes` before calling the inner service.
#[derive(Clone, Copy, Debug)]
pub struct BodyFirstLayer {
    max_bytes: usize,
}

impl BodyFirstLayer {
    /// Reads up to `max_bytes` of each HTTP/1.x request body first.
    pub fn new(max_bytes: usize) -> BodyFirstLayer {
        BodyFirstLayer { max_bytes }
    }
}

impl<S> Layer<S> for BodyFirstLayer {
    type Service = BodyFirst<S>;

    fn layer(&self, inner: S) -> BodyFirst<S> {
        BodyFirst {
            inner,
            max_bytes: self.max_bytes,
        }
    }
}

/// The service of [`BodyFirstLayer`].
#[derive(Clone, Debug)]
pub struct BodyFirst<S> {
    inner: S,
    max_bytes: usize,
}

impl<S> Service<http::Request<Body>> for BodyFirst<S>
where
    S: Service<http::Request<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // The clone is ready only once polled; the one polled ready is the one called.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        if request.version() >= http::Version::HTTP_2 {
            return Box::pin(inner.call(request));
        }
        let max_bytes = self.max_bytes;
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let body = read_first(body, max_bytes).await;
            inner.call(http::Request::from_parts(parts, body)).await
        })
    }
}

/// `body` with its first frames read: all of them when it ends within `max_bytes` and
/// [`READ_LIMIT`], else those read so far followed by the rest, unread.
async fn read_first(mut body: Body, max_bytes: usize) -> Body {
    let mut read = VecDeque::new();
    let mut len = 0;
    let reading = async {
        while len <= max_bytes {
            match body.frame().await {
                None => return true,
                Some(frame) => {
                    let failed = frame.is_err();
                    if let Ok(data) = frame.as_ref().map(|f| f.data_ref()) {
                        len += data.map_or(0, Bytes::len);
                    }
                    read.push_back(frame);
                    if failed {
                        return true;
                    }
                }
            }
        }
        false
    };
    let ended = tokio::time::timeout(READ_LIMIT, reading)
        .await
        .unwrap_or(false);
    Body::new(Prefetched {
        read,
        rest: (!ended).then_some(body),
    })
}

/// A body whose first frames were read ahead, then the rest (if it did not end).
struct Prefetched {
    read: VecDeque<Result<Frame<Bytes>, tonic::Status>>,
    rest: Option<Body>,
}

impl http_body::Body for Prefetched {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        if let Some(frame) = self.read.pop_front() {
            return Poll::Ready(Some(frame));
        }
        match self.rest.as_mut() {
            Some(rest) => Pin::new(rest).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.read.is_empty() && self.rest.as_ref().is_none_or(|rest| rest.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        let read: u64 = self
            .read
            .iter()
            .filter_map(|f| f.as_ref().ok()?.data_ref().map(|d| d.len() as u64))
            .sum();
        let mut hint = self
            .rest
            .as_ref()
            .map_or(SizeHint::with_exact(0), |rest| rest.size_hint());
        hint.set_lower(hint.lower() + read);
        if let Some(upper) = hint.upper() {
            hint.set_upper(upper + read);
        }
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::Full;

    #[tokio::test]
    async fn a_body_read_first_gives_the_same_bytes() {
        let body = Body::new(Full::new(Bytes::from_static(b"\0\0\0\0\x02ab")));
        let again = read_first(body, 1024).await;
        let bytes = again.collect().await.expect("no error").to_bytes();
        assert_eq!(bytes.as_ref(), b"\0\0\0\0\x02ab");
    }

    #[tokio::test]
    async fn a_body_over_the_bound_is_passed_on_whole() {
        let chunks: Vec<Result<Frame<Bytes>, tonic::Status>> = (0..10)
            .map(|i| Ok(Frame::data(Bytes::from(vec![i as u8; 100]))))
            .collect();
        let body = Body::new(http_body_util::StreamBody::new(tokio_stream::iter(chunks)));
        let again = read_first(body, 250).await;
        let bytes = again.collect().await.expect("no error").to_bytes();
        assert_eq!(bytes.len(), 1000);
        assert_eq!(bytes[999], 9);
    }
}
