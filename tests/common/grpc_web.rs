//! gRPC-Web calls made by hand, as a browser makes them: over HTTP/1.1 on a raw socket
//! (request line, headers, a body of gRPC-Web frames; the answer read to its end and
//! un-chunked) and over HTTP/2 (h2), with the answer's frames, trailers and headers as
//! they came.

#![allow(dead_code)]

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::raw_grpc::{frame, post_stream};
use super::server::Server;

/// The address of a server's gRPC-Web listener (`--grpc-web-listen`), from its log.
pub fn web_addr(server: &Server) -> String {
    let line = server
        .wait_for_log("gRPC-Web on ", Duration::from_secs(10))
        .expect("the gRPC-Web listener is logged");
    line.split("gRPC-Web on ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| c.is_whitespace() || c == '"').next())
        .expect("an address")
        .to_string()
}

/// An HTTP answer: status code, headers (names in lower case) and body.
#[derive(Debug, Default)]
pub struct HttpAnswer {
    pub code: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpAnswer {
    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The gRPC-Web frames of the body: the messages, and the trailers (the frame flagged
    /// 0x80) as name-value pairs.
    pub fn grpc_web(&self) -> (Vec<Vec<u8>>, Vec<(String, String)>) {
        let (mut messages, mut trailers) = (Vec::new(), Vec::new());
        let mut rest = self.body.as_slice();
        while rest.len() >= 5 {
            let flag = rest[0];
            let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
            let payload = &rest[5..5 + len];
            if flag & 0x80 != 0 {
                let text = String::from_utf8_lossy(payload);
                for line in text.split("\r\n").filter(|l| !l.is_empty()) {
                    let (name, value) = line.split_once(':').expect("name: value");
                    trailers.push((name.trim().to_lowercase(), value.trim().to_string()));
                }
            } else {
                messages.push(payload.to_vec());
            }
            rest = &rest[5 + len..];
        }
        (messages, trailers)
    }

    /// The call's gRPC status code: from the trailers, or from the headers of a
    /// trailers-only answer.
    pub fn grpc_status(&self) -> Option<i32> {
        let (_, trailers) = self.grpc_web();
        trailers
            .iter()
            .find(|(n, _)| n == "grpc-status")
            .map(|(_, v)| v.as_str())
            .or_else(|| self.header("grpc-status"))
            .map(|v| v.parse().expect("a numeric grpc-status"))
    }
}

/// Sends `request` (a whole HTTP/1.1 request) on a fresh connection and reads the answer
/// until the server closes it (the request should say `Connection: close`).
pub async fn http1(addr: &str, request: &[u8]) -> HttpAnswer {
    let mut tcp = TcpStream::connect(addr).await.expect("connects");
    tcp.write_all(request).await.expect("sends");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut raw))
        .await
        .expect("the answer ends within 10 s")
        .expect("reads");
    parse_http1(&raw)
}

fn parse_http1(raw: &[u8]) -> HttpAnswer {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status = lines.next().expect("a status line");
    let code = status
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("status line {status:?}"));
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').expect("a header");
            (n.trim().to_lowercase(), v.trim().to_string())
        })
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    if chunked {
        body = unchunk(&body);
    }
    HttpAnswer {
        code,
        headers,
        body,
    }
}

fn unchunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a chunk size line");
        let size_text = String::from_utf8_lossy(&rest[..eol]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
            .unwrap_or_else(|_| panic!("chunk size {size_text:?}"));
        rest = &rest[eol + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

/// A gRPC-Web call over HTTP/1.1: `message` (an encoded request) to `path`
/// (`/chess.v1.ChessService/LegalMoves`), with `headers` beside gRPC-Web's own.
pub async fn call_http1(
    addr: &str,
    path: &str,
    message: &[u8],
    headers: &[(&str, &str)],
) -> HttpAnswer {
    let body = frame(0, message);
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/grpc-web+proto\r\n\
         X-Grpc-Web: 1\r\nAccept: application/grpc-web+proto\r\nContent-Length: {}\r\n\
         Connection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(&body);
    http1(addr, &bytes).await
}

/// A gRPC-Web call over HTTP/2 (h2, prior knowledge), as `call_http1` makes it.
pub async fn call_http2(
    addr: &str,
    path: &str,
    message: &[u8],
    headers: &[(&str, &str)],
) -> HttpAnswer {
    let mut all = vec![
        ("content-type", "application/grpc-web+proto"),
        ("x-grpc-web", "1"),
    ];
    all.extend_from_slice(headers);
    let (response, mut stream, driver) = post_stream(addr, path, &all).await;
    stream
        .send_data(bytes::Bytes::from(frame(0, message)), true)
        .expect("sends the body");
    let answer = tokio::time::timeout(Duration::from_secs(10), async move {
        let response = response.await.expect("an answer");
        let (parts, mut body) = response.into_parts();
        let mut data = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.expect("answer data");
            let _ = body.flow_control().release_capacity(chunk.len());
            data.extend_from_slice(&chunk);
        }
        HttpAnswer {
            code: parts.status.as_u16(),
            headers: parts
                .headers
                .iter()
                .map(|(n, v)| (n.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
                .collect(),
            body: data,
        }
    })
    .await
    .expect("the answer ends within 10 s");
    driver.abort();
    answer
}
