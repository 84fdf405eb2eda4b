//! gRPC calls made by hand over a raw HTTP/2 connection (h2): bytes no well-behaved
//! client sends (random message bytes, a cut frame, a compressed flag without an
//! encoding), and the answer's headers and trailers as they are, with their size.

#![allow(dead_code)]

use std::time::Duration;

use tokio::net::TcpStream;

/// What the server answered to a raw call.
#[derive(Debug)]
pub struct RawAnswer {
    /// The status (from the headers of a trailers-only answer, or the trailers); `None`
    /// when the answer did not end within the wait.
    pub status: Option<tonic::Status>,
    /// Bytes of every header and trailer name and value of the answer.
    pub metadata_bytes: usize,
}

/// A gRPC frame: the compressed flag, the length (big-endian) and the payload.
pub fn frame(flag: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 5);
    out.push(flag);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

fn size(headers: &http::HeaderMap) -> usize {
    headers
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len())
        .sum()
}

/// A fresh HTTP/2 connection (prior knowledge) to `addr` and one POST stream on it to
/// `path` with `headers`: the answer to come, the request body's sender, and the task
/// that drives the connection (abort it when done).
pub async fn post_stream(
    addr: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (
    h2::client::ResponseFuture,
    h2::SendStream<bytes::Bytes>,
    tokio::task::JoinHandle<()>,
) {
    let tcp = TcpStream::connect(addr).await.expect("connects");
    let (send, connection) = h2::client::handshake(tcp).await.expect("HTTP/2 handshake");
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut send = send.ready().await.expect("the connection takes a stream");
    let mut request = http::Request::builder()
        .method("POST")
        .uri(format!("http://{addr}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(()).expect("a request");
    let (response, stream) = send.send_request(request, false).expect("a stream");
    (response, stream, driver)
}

/// Sends `body` as the whole request body of `path` (with `headers` beside the usual
/// gRPC ones) on a fresh connection to `addr`, and reads the answer for at most `wait`.
pub async fn raw_call(
    addr: &str,
    path: &str,
    body: Vec<u8>,
    headers: &[(&str, &str)],
    wait: Duration,
) -> RawAnswer {
    let mut all = vec![("content-type", "application/grpc"), ("te", "trailers")];
    all.extend_from_slice(headers);
    let (response, mut stream, driver) = post_stream(addr, path, &all).await;
    stream
        .send_data(bytes::Bytes::from(body), true)
        .expect("sends the body");
    let answer = tokio::time::timeout(wait, async move {
        let response = response.await.expect("an answer");
        let (parts, mut body) = response.into_parts();
        let mut metadata_bytes = size(&parts.headers);
        if let Some(status) = tonic::Status::from_header_map(&parts.headers) {
            return RawAnswer {
                status: Some(status),
                metadata_bytes,
            };
        }
        while let Some(chunk) = body.data().await {
            let chunk = chunk.expect("answer data");
            let _ = body.flow_control().release_capacity(chunk.len());
        }
        let trailers = body.trailers().await.expect("trailers").unwrap_or_default();
        metadata_bytes += size(&trailers);
        RawAnswer {
            status: tonic::Status::from_header_map(&trailers),
            metadata_bytes,
        }
    })
    .await;
    driver.abort();
    answer.unwrap_or(RawAnswer {
        status: None,
        metadata_bytes: 0,
    })
}
