//! gRPC-Web (`--grpc-web-listen`) against the real server binary, as browsers call it:
//! over HTTP/1.1 and HTTP/2, answers and errors with their status in the trailers, CORS
//! denying every origin by default and allowing the configured ones, and the accept
//! loop's limits on the listener (anything but HTTP is closed at once, a silent
//! connection after the handshake timeout). Tokens: `security.rs`.

use std::time::{Duration, Instant};

use chess_service::pb;
use prost::Message;
use tokio::io::AsyncWriteExt;

use crate::common::grpc_web::{call_http1, call_http2, http1, web_addr};
use crate::common::server::Server;
use crate::operations::closed_within;

const LEGAL_MOVES: &str = "/chess.v1.ChessService/LegalMoves";
const NEW_GAME: &str = "/chess.v1.ChessService/NewGame";
const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn legal_moves_request() -> Vec<u8> {
    pb::LegalMovesRequest {
        position: Some(pb::legal_moves_request::Position::Fen(START.into())),
        variant: 0,
    }
    .encode_to_vec()
}

#[tokio::test]
async fn grpc_web_answers_over_http1_and_http2_with_its_status_in_the_trailers() {
    let server = Server::start(&["--grpc-web-listen", "127.0.0.1:0"]);
    let addr = web_addr(&server);

    for over_http2 in [false, true] {
        let answer = if over_http2 {
            call_http2(&addr, LEGAL_MOVES, &legal_moves_request(), &[]).await
        } else {
            call_http1(&addr, LEGAL_MOVES, &legal_moves_request(), &[]).await
        };
        assert_eq!(answer.code, 200, "{answer:?}");
        assert!(
            answer
                .header("content-type")
                .is_some_and(|t| t.starts_with("application/grpc-web")),
            "{answer:?}"
        );
        let (messages, trailers) = answer.grpc_web();
        assert_eq!(messages.len(), 1, "{answer:?}");
        let moves = pb::LegalMovesResponse::decode(messages[0].as_slice()).expect("decodes");
        assert_eq!(moves.moves.len(), 20);
        assert!(
            trailers.iter().any(|(n, v)| n == "grpc-status" && v == "0"),
            "{trailers:?}"
        );

        // An error: its code, message and details, as a browser's client reads them.
        let refused = pb::NewGameRequest {
            variant: 99,
            ..Default::default()
        };
        let answer = if over_http2 {
            call_http2(&addr, NEW_GAME, &refused.encode_to_vec(), &[]).await
        } else {
            call_http1(&addr, NEW_GAME, &refused.encode_to_vec(), &[]).await
        };
        assert_eq!(
            answer.grpc_status(),
            Some(tonic::Code::InvalidArgument as i32),
            "{answer:?}"
        );
        let (_, trailers) = answer.grpc_web();
        let details = trailers
            .iter()
            .chain(answer.headers.iter())
            .any(|(n, _)| n == "grpc-status-details-bin");
        assert!(details, "the error's details travel too: {answer:?}");
    }

    // The same game, made over gRPC-Web, is the main port's game.
    let made = pb::NewGameRequest {
        game_id: "from-a-browser".into(),
        ..Default::default()
    };
    let answer = call_http1(&addr, NEW_GAME, &made.encode_to_vec(), &[]).await;
    assert_eq!(answer.grpc_status(), Some(0), "{answer:?}");
    let mut client = server.client().await;
    let game = crate::common::client::get(&mut client, "from-a-browser").await;
    assert_eq!(game.ply, 0);
}

/// A CORS preflight from `origin`, as a browser sends it before a cross-origin call.
fn preflight(origin: &str) -> Vec<u8> {
    format!(
        "OPTIONS {LEGAL_MOVES} HTTP/1.1\r\nHost: chess\r\nOrigin: {origin}\r\n\
         Access-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: content-type,x-grpc-web,authorization\r\n\
         Connection: close\r\n\r\n"
    )
    .into_bytes()
}

#[tokio::test]
async fn cors_denies_every_origin_by_default_and_allows_the_configured_ones() {
    let closed = Server::start(&["--grpc-web-listen", "127.0.0.1:0"]);
    let answer = http1(&web_addr(&closed), &preflight("https://games.example.com")).await;
    assert_eq!(
        answer.header("access-control-allow-origin"),
        None,
        "{answer:?}"
    );

    let dir = tempfile::tempdir().expect("a data directory");
    let open = Server::start_with(
        dir.path(),
        &["--grpc-web-listen", "127.0.0.1:0"],
        &[(
            "CHESS_CORS_ALLOW_ORIGIN",
            "https://games.example.com,https://ops.example.com",
        )],
    );
    let addr = web_addr(&open);
    let answer = http1(&addr, &preflight("https://games.example.com")).await;
    assert_eq!(
        answer.header("access-control-allow-origin"),
        Some("https://games.example.com"),
        "{answer:?}"
    );
    let methods = answer
        .header("access-control-allow-methods")
        .unwrap_or_default();
    assert!(methods.contains("POST"), "{answer:?}");
    let headers = answer
        .header("access-control-allow-headers")
        .unwrap_or_default();
    assert!(
        headers.contains("x-grpc-web") && headers.contains("authorization"),
        "{answer:?}"
    );
    // Another origin is not allowed.
    let answer = http1(&addr, &preflight("https://evil.example.net")).await;
    assert_eq!(answer.header("access-control-allow-origin"), None);
    // The call itself names the origin and lets the page read the gRPC status.
    let answer = call_http1(
        &addr,
        LEGAL_MOVES,
        &legal_moves_request(),
        &[("Origin", "https://ops.example.com")],
    )
    .await;
    assert_eq!(
        answer.header("access-control-allow-origin"),
        Some("https://ops.example.com"),
        "{answer:?}"
    );
    let exposed = answer
        .header("access-control-expose-headers")
        .unwrap_or_default();
    assert!(exposed.contains("grpc-status"), "{answer:?}");
}

#[tokio::test]
async fn the_web_listener_keeps_the_accept_loops_limits() {
    let server = Server::start(&[
        "--grpc-web-listen",
        "127.0.0.1:0",
        "--handshake-timeout-secs",
        "1",
    ]);
    let addr = web_addr(&server);
    // Something that is neither HTTP/1.1 nor HTTP/2 is closed as soon as it is read.
    let mut garbage = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connects");
    garbage
        .write_all(b"\x16\x03\x01hello")
        .await
        .expect("sends");
    let start = Instant::now();
    assert!(closed_within(&mut garbage, Duration::from_secs(5)).await);
    assert!(
        start.elapsed() < Duration::from_millis(900),
        "{:?}",
        start.elapsed()
    );
    // A silent connection is closed after the handshake timeout.
    let mut silent = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connects");
    let start = Instant::now();
    assert!(closed_within(&mut silent, Duration::from_secs(10)).await);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "closed after {took:?}"
    );
    // The main port still speaks only HTTP/2: an HTTP/1.1 request there is closed.
    let mut http1_on_main = tokio::net::TcpStream::connect(&server.addr)
        .await
        .expect("connects");
    http1_on_main
        .write_all(b"POST / HTTP/1.1\r\nHost: chess\r\n\r\n")
        .await
        .expect("sends");
    assert!(closed_within(&mut http1_on_main, Duration::from_secs(5)).await);
    // And the web listener still answers.
    let answer = call_http1(&addr, LEGAL_MOVES, &legal_moves_request(), &[]).await;
    assert_eq!(answer.grpc_status(), Some(0), "{answer:?}");
}

/// gRPC-Web sent to the main port, which speaks gRPC only, is refused in gRPC-Web's form
/// (so a browser's client can read it): UNIMPLEMENTED, GRPC_WEB_ON_GRPC_PORT, naming the
/// listener that speaks it. gRPC on the same port is answered as ever.
#[tokio::test]
async fn grpc_web_on_the_main_port_is_refused_naming_the_web_listener() {
    let server = Server::start(&[]);
    let answer = call_http2(&server.addr, LEGAL_MOVES, &legal_moves_request(), &[]).await;
    assert_eq!(answer.code, 200, "{answer:?}");
    assert_eq!(
        answer.header("content-type"),
        Some("application/grpc-web+proto"),
        "{answer:?}"
    );
    assert_eq!(
        answer.grpc_status(),
        Some(tonic::Code::Unimplemented as i32),
        "{answer:?}"
    );
    let mut headers = http::HeaderMap::new();
    for (name, value) in &answer.headers {
        headers.append(
            http::HeaderName::from_bytes(name.as_bytes()).expect("a header name"),
            http::HeaderValue::from_str(value).expect("a header value"),
        );
    }
    let status = tonic::Status::from_header_map(&headers).expect("a trailers-only status");
    assert!(
        status.message().contains("--grpc-web-listen"),
        "{}",
        status.message()
    );
    let info = crate::common::server::error_info(&status);
    assert_eq!(info.reason, "GRPC_WEB_ON_GRPC_PORT");
    assert_eq!(
        info.metadata.get("content_type").map(String::as_str),
        Some("application/grpc-web+proto")
    );

    let mut client = server.client().await;
    let moves = client
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::Fen(START.into())),
            variant: 0,
        })
        .await
        .expect("gRPC is answered")
        .into_inner();
    assert_eq!(moves.moves.len(), 20);
}
