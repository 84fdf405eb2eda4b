//! The game page at `/` of the gRPC-Web listener (src/server/page.rs), against the real
//! server binary: the HTML, its script and its style sheet with their content types and
//! security headers, no token needed even when the server requires one, 404 for other
//! paths and 405 for other methods, and gRPC-Web calls answered as before beside it. The
//! page in a browser: clients/typescript/test/page.test.ts.

mod common;

use chess_service::pb;
use prost::Message;

use common::grpc_web::{call_http1, call_http2, http1, web_addr};
use common::server::Server;

fn get(addr: &str, method: &str, path: &str) -> Vec<u8> {
    format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").into_bytes()
}

#[tokio::test]
async fn the_page_is_served_beside_grpc_web_without_a_token() {
    // A server that needs a token (this hash is no token's): the page loads without one,
    // the calls do not.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("reader read {}\n", "0".repeat(64)))
        .expect("writes the token file");
    let tokens = tokens.to_str().expect("a UTF-8 path");
    let server = Server::start(&["--grpc-web-listen", "127.0.0.1:0", "--auth-tokens", tokens]);
    let addr = web_addr(&server);

    let page = http1(&addr, &get(&addr, "GET", "/?game=some-game")).await;
    assert_eq!(page.code, 200, "{page:?}");
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(csp.contains("connect-src 'self'"), "{csp}");
    let html = String::from_utf8_lossy(&page.body);
    assert!(
        html.contains(r#"<script type="module" src="/page.js"></script>"#),
        "{html}"
    );

    let script = http1(&addr, &get(&addr, "GET", "/page.js")).await;
    assert_eq!(script.code, 200, "{script:?}");
    assert_eq!(
        script.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(script.header("x-content-type-options"), Some("nosniff"));
    assert!(script.body.len() > 10_000, "{} bytes", script.body.len());
    assert!(
        String::from_utf8_lossy(&script.body).contains("chess.v1"),
        "the bundle holds the client"
    );
    let style = http1(&addr, &get(&addr, "GET", "/page.css")).await;
    assert_eq!(style.code, 200, "{style:?}");
    assert_eq!(
        style.header("content-type"),
        Some("text/css; charset=utf-8")
    );

    for path in [
        "/index.html",
        "/page.js.map",
        "/chess.v1.ChessService/GetGame",
        "/x/../",
    ] {
        let missing = http1(&addr, &get(&addr, "GET", path)).await;
        assert_eq!(missing.code, 404, "{path}: {missing:?}");
        assert_eq!(missing.header("x-content-type-options"), Some("nosniff"));
    }
    for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
        let refused = http1(&addr, &get(&addr, method, "/")).await;
        assert_eq!(refused.code, 405, "{method}: {refused:?}");
        assert_eq!(refused.header("allow"), Some("GET, HEAD"));
    }

    // HEAD: the headers alone.
    let head = http1(&addr, &get(&addr, "HEAD", "/page.css")).await;
    assert_eq!(head.code, 200, "{head:?}");
    assert!(head.body.is_empty(), "HEAD has no body");

    // gRPC-Web beside it, as before: the call needs a token, over HTTP/1.1 and HTTP/2.
    let request = pb::GetGameRequest {
        game_id: "some-game".into(),
        ..Default::default()
    }
    .encode_to_vec();
    for answer in [
        call_http1(&addr, "/chess.v1.ChessService/GetGame", &request, &[]).await,
        call_http2(&addr, "/chess.v1.ChessService/GetGame", &request, &[]).await,
    ] {
        assert_eq!(answer.code, 200, "{answer:?}");
        assert_eq!(
            answer.grpc_status(),
            Some(16),
            "UNAUTHENTICATED: {answer:?}"
        );
    }
}
