//! Hostile callers (issue 30): bytes that do not decode, compression the server does
//! not take, echoed input that would not fit in metadata, and floods of refusals in the
//! log.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chess_service::pb;
use tonic::Code;
use tonic_types::StatusExt as _;

use crate::common::metrics::{parse_samples, sample, scrape};
use crate::common::raw_grpc::{frame, raw_call};
use crate::common::rng::Rng;
use crate::common::server::{Server, expect_error};

/// Every method of `chess.v1.ChessService`.
const METHODS: [&str; 16] = [
    "NewGame",
    "GetGame",
    "Play",
    "Undo",
    "LegalMoves",
    "Resign",
    "OfferDraw",
    "RespondToDraw",
    "ClaimDraw",
    "AddTime",
    "WatchGame",
    "Perft",
    "ImportGame",
    "ListGames",
    "DeleteGame",
    "Winnability",
];

pub(crate) const WAIT: Duration = Duration::from_secs(3);

pub(crate) fn path(method: &str) -> String {
    format!("/chess.v1.ChessService/{method}")
}

pub(crate) fn reason(status: &tonic::Status) -> Option<String> {
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
}

#[tokio::test]
async fn random_bytes_to_every_method_are_the_callers_fault_never_internal() {
    // A shallow perft limit: random bytes that happen to decode into a Perft must not
    // start a long one.
    let server = Server::start(&["--perft-max-depth", "2", "--metrics-listen", "127.0.0.1:0"]);
    let mut rng = Rng(30);
    let mut codes: BTreeMap<String, usize> = BTreeMap::new();
    let mut malformed = 0usize;
    for method in METHODS {
        let mut malformed_here = 0;
        for _ in 0..40 {
            let len = 1 + rng.below(48);
            let payload: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let answer = raw_call(&server.addr, &path(method), frame(0, &payload), &[], WAIT).await;
            let Some(status) = answer.status else {
                // A WatchGame that decoded and is still streaming: not an error.
                *codes.entry("(open stream)".into()).or_default() += 1;
                continue;
            };
            *codes.entry(format!("{:?}", status.code())).or_default() += 1;
            assert!(
                !matches!(status.code(), Code::Internal | Code::Unknown),
                "{method} with random bytes {payload:02x?}: {status:?}"
            );
            if status.code() != Code::Ok {
                assert!(
                    reason(&status).is_some(),
                    "{method}: no ErrorInfo in {status:?}"
                );
            }
            if reason(&status).as_deref() == Some("MALFORMED_REQUEST") {
                assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
                malformed_here += 1;
            }
        }
        assert!(
            malformed_here > 0,
            "{method}: no random bytes refused as malformed"
        );
        malformed += malformed_here;
    }
    eprintln!("answers to random bytes: {codes:?}");

    // The metrics count them as the caller's errors, not the server's.
    let samples = parse_samples(&scrape(&server.metrics_addr()).await);
    let counted = sample(
        &samples,
        "chess_refusals_total",
        &[("reason", "MALFORMED_REQUEST")],
    );
    assert!(
        counted.unwrap_or(0.0) >= malformed as f64,
        "{counted:?} < {malformed}"
    );
    // Logged, rate-limited.
    let logged = server
        .log()
        .iter()
        .filter(|l| l.contains("MALFORMED_REQUEST"))
        .count();
    assert!(logged > 0, "malformed requests are logged");
}

#[tokio::test]
async fn cut_frames_unknown_flags_and_compression_are_answered_with_error_info() {
    let server = Server::start(&[]);
    let get = pb::GetGameRequest {
        game_id: "nope".into(),
        ..Default::default()
    };
    let message = prost::Message::encode_to_vec(&get);
    for method in METHODS {
        let p = path(method);
        // A frame that promises more bytes than come; no frame at all; flag 7.
        let mut cut = frame(0, &message);
        cut.truncate(cut.len() - 2);
        for (what, body) in [
            ("cut", cut),
            ("empty", Vec::new()),
            ("flag 7", frame(7, &message)),
        ] {
            let answer = raw_call(&server.addr, &p, body, &[], WAIT).await;
            let status = answer.status.expect("an answer");
            assert_eq!(
                status.code(),
                Code::InvalidArgument,
                "{method} {what}: {status:?}"
            );
            assert_eq!(
                reason(&status).as_deref(),
                Some("MALFORMED_REQUEST"),
                "{method} {what}"
            );
        }
        // The compressed flag without grpc-encoding: INTERNAL, as the gRPC compression
        // spec demands, but with an ErrorInfo.
        let answer = raw_call(&server.addr, &p, frame(1, &message), &[], WAIT).await;
        let status = answer.status.expect("an answer");
        assert_eq!(status.code(), Code::Internal, "{method}: {status:?}");
        assert_eq!(reason(&status).as_deref(), Some("UNSUPPORTED_COMPRESSION"));
        // An encoding the server does not take: UNIMPLEMENTED, the encodings it takes,
        // and the caller's encoding name clipped.
        let long = format!("x-{}", "z".repeat(4000));
        for encoding in ["gzip", long.as_str()] {
            let answer = raw_call(
                &server.addr,
                &p,
                frame(1, &message),
                &[("grpc-encoding", encoding)],
                WAIT,
            )
            .await;
            let status = answer.status.expect("an answer");
            assert_eq!(status.code(), Code::Unimplemented, "{method}: {status:?}");
            assert_eq!(reason(&status).as_deref(), Some("UNSUPPORTED_COMPRESSION"));
            assert!(
                answer.metadata_bytes < 4096,
                "{} bytes",
                answer.metadata_bytes
            );
        }
    }
}

/// Bytes of text that would have made the error repeat them whole.
const HOSTILE_LEN: usize = 200_000;

#[tokio::test]
async fn echoed_input_is_clipped_to_fit_in_a_trailer() {
    let server = Server::start(&[]);
    let huge = "T".repeat(HOSTILE_LEN);
    let new_game = pb::NewGameRequest {
        game_id: "hostile-tag".into(),
        tags: [(huge.clone(), "x".to_string())].into_iter().collect(),
        ..Default::default()
    };
    let answer = raw_call(
        &server.addr,
        &path("NewGame"),
        frame(0, &prost::Message::encode_to_vec(&new_game)),
        &[],
        WAIT,
    )
    .await;
    let status = answer.status.expect("an answer");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert_eq!(reason(&status).as_deref(), Some("INVALID_TAG"));
    assert!(
        answer.metadata_bytes < 4096,
        "a trailer of {} bytes",
        answer.metadata_bytes
    );
    let info = status
        .get_error_details()
        .error_info()
        .cloned()
        .expect("ErrorInfo");
    let tag = &info.metadata["tag"];
    assert!(
        tag.ends_with(&format!("[clipped: {HOSTILE_LEN} bytes in all]")),
        "{tag}"
    );
    assert!(tag.len() <= 128 + 40, "{tag}");
    assert!(status.message().contains("clipped"), "{}", status.message());

    // The same through tonic's client, and for the other texts a caller sends.
    let mut client = server.client().await;
    let variant = format!("[Variant \"{huge}\"]\n\n1. e4 *\n");
    let import = pb::ImportGameRequest {
        game_id: "hostile-variant".into(),
        pgn: variant,
        ..Default::default()
    };
    let status = expect_error(
        client.import_game(import).await,
        Code::InvalidArgument,
        "PGN_SYNTAX",
    );
    assert!(status.message().len() < 1024, "{}", status.message().len());
    assert!(status.message().contains("clipped"), "{}", status.message());
    let long_id = pb::GetGameRequest {
        game_id: huge.clone(),
        ..Default::default()
    };
    let status = expect_error(
        client.get_game(long_id).await,
        Code::InvalidArgument,
        "INVALID_GAME_ID",
    );
    assert!(status.message().len() < 1024, "{}", status.message().len());
    let fen = pb::LegalMovesRequest {
        position: Some(pb::legal_moves_request::Position::Fen(huge.clone())),
        ..Default::default()
    };
    let status = expect_error(
        client.legal_moves(fen).await,
        Code::InvalidArgument,
        "INVALID_FEN",
    );
    assert!(status.message().len() < 1024, "{}", status.message().len());
    let play = pb::PlayRequest {
        game_id: "g".into(),
        r#move: huge.clone(),
        ..Default::default()
    };
    let status = expect_error(
        client.play(play).await,
        Code::InvalidArgument,
        "INVALID_MOVE_TEXT",
    );
    assert!(status.message().len() < 1024, "{}", status.message().len());
}

#[tokio::test]
async fn ten_seconds_of_unauthenticated_spam_add_little_log() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let tokens = dir.path().join("tokens");
    // NAME ROLE SHA256HEX: a token nobody sends.
    std::fs::write(&tokens, format!("reader read {}\n", "0".repeat(64))).expect("token file");
    let server = Server::start(&["--auth-tokens", tokens.to_str().expect("utf-8 path")]);
    let before: usize = server.log().iter().map(|l| l.len() + 1).sum();
    let channel = server.channel().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut spammers = Vec::new();
    for _ in 0..4 {
        let mut client = pb::chess_service_client::ChessServiceClient::new(channel.clone());
        spammers.push(tokio::spawn(async move {
            let mut refused = 0u64;
            while Instant::now() < deadline {
                let request = pb::GetGameRequest {
                    game_id: "spam".into(),
                    ..Default::default()
                };
                if client.get_game(request).await.is_err() {
                    refused += 1;
                }
            }
            refused
        }));
    }
    let mut refused = 0;
    for spammer in spammers {
        refused += spammer.await.expect("spammer");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let log = server.log();
    let after: usize = log.iter().map(|l| l.len() + 1).sum();
    let added = after - before;
    eprintln!("{refused} refusals in 10 s added {added} bytes of log");
    assert!(refused > 1000, "the spam was refused {refused} times only");
    assert!(
        added < 50 * 1024,
        "{refused} refusals added {added} bytes of log"
    );
    assert!(
        log.iter()
            .any(|l| l.contains("left_out_since_last_line")
                && !l.contains("left_out_since_last_line=0")),
        "a line says how many refusals were left out"
    );
}

/// A depth-9 perft on one thread, given up after `timeout`: it holds a perft slot.
async fn long_perft(
    mut client: pb::chess_service_client::ChessServiceClient<tonic::transport::Channel>,
    token: Option<&'static str>,
    timeout: Duration,
) -> tokio::task::JoinHandle<Result<tonic::Response<pb::PerftResponse>, tonic::Status>> {
    tokio::spawn(async move {
        let mut req = tonic::Request::new(pb::PerftRequest {
            depth: 9,
            threads: 1,
            ..Default::default()
        });
        req.set_timeout(timeout);
        if let Some(token) = token {
            let value = format!("Bearer {token}").parse().expect("header value");
            req.metadata_mut().insert("authorization", value);
        }
        client.perft(req).await
    })
}

fn short_perft(token: Option<&str>) -> tonic::Request<pb::PerftRequest> {
    let mut req = tonic::Request::new(pb::PerftRequest {
        depth: 2,
        ..Default::default()
    });
    if let Some(token) = token {
        let value = format!("Bearer {token}").parse().expect("header value");
        req.metadata_mut().insert("authorization", value);
    }
    req
}

fn sha256_hex(token: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn one_token_cannot_hold_every_perft_slot() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let tokens = dir.path().join("tokens");
    let file = format!(
        "greedy read {}\nother read {}\n",
        sha256_hex("greedy-token"),
        sha256_hex("other-token")
    );
    std::fs::write(&tokens, file).expect("token file");
    let server = Server::start(&[
        "--auth-tokens",
        tokens.to_str().expect("utf-8 path"),
        "--perft-max-concurrent",
        "4",
    ]);
    let client = server.client().await;
    let long = long_perft(client.clone(), Some("greedy-token"), Duration::from_secs(2)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The same token on another connection: refused, naming the bound per caller.
    let mut fresh = server.client().await;
    let status = expect_error(
        fresh.perft(short_perft(Some("greedy-token"))).await,
        Code::ResourceExhausted,
        "TOO_MANY_PERFTS",
    );
    let info = status
        .get_error_details()
        .error_info()
        .cloned()
        .expect("ErrorInfo");
    assert_eq!(info.metadata["max_perfts_per_caller"], "1", "{status:?}");
    // Another token has its own slot meanwhile.
    let mut other = client.clone();
    let nodes = other
        .perft(short_perft(Some("other-token")))
        .await
        .expect("another caller's perft runs")
        .into_inner()
        .nodes;
    assert_eq!(nodes, 400);
    let _ = long.await;
    // The greedy caller's slot came back when its perft stopped.
    fresh
        .perft(short_perft(Some("greedy-token")))
        .await
        .expect("the slot is given back");
}

#[tokio::test]
async fn without_tokens_the_bound_is_per_connection() {
    let server = Server::start(&["--perft-max-concurrent", "4"]);
    let client = server.client().await;
    let long = long_perft(client.clone(), None, Duration::from_secs(2)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut same = client.clone();
    let status = expect_error(
        same.perft(short_perft(None)).await,
        Code::ResourceExhausted,
        "TOO_MANY_PERFTS",
    );
    assert!(
        status.message().contains("--perft-max-per-caller"),
        "{status:?}"
    );
    let mut other_connection = server.client().await;
    let nodes = other_connection
        .perft(short_perft(None))
        .await
        .expect("another connection's perft runs")
        .into_inner()
        .nodes;
    assert_eq!(nodes, 400);
    let _ = long.await;
}

fn log_bytes(server: &Server) -> usize {
    server.log().iter().map(|l| l.len() + 1).sum()
}

#[tokio::test]
async fn ten_seconds_of_rapid_reset_add_little_log() {
    let server = Server::start(&[]);
    let before = log_bytes(&server);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(10);
    let (mut connections, mut resets) = (0u64, 0u64);
    while Instant::now() < deadline {
        let Ok(tcp) = tokio::net::TcpStream::connect(&server.addr).await else {
            continue;
        };
        let Ok((mut send, connection)) = h2::client::handshake(tcp).await else {
            continue;
        };
        let driver = tokio::spawn(connection);
        connections += 1;
        while Instant::now() < deadline {
            match tokio::time::timeout(Duration::from_secs(1), send.ready()).await {
                Ok(Ok(ready)) => send = ready,
                _ => break,
            }
            let request = http::Request::builder()
                .method("POST")
                .uri(format!("http://{}{}", server.addr, path("GetGame")))
                .header("content-type", "application/grpc")
                .header("te", "trailers")
                .body(())
                .expect("a request");
            match send.send_request(request, false) {
                Ok((_, mut stream)) => {
                    stream.send_reset(h2::Reason::CANCEL);
                    resets += 1;
                }
                Err(_) => break,
            }
        }
        driver.abort();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let added = log_bytes(&server) - before;
    let log = server.log();
    let h2_lines = log.iter().filter(|l| l.contains("reached limit")).count();
    eprintln!(
        "{resets} resets on {connections} connections in {:?}: {h2_lines} h2 lines, {added} bytes of log",
        started.elapsed()
    );
    assert!(resets > 1000, "only {resets} resets were sent");
    // Each of h2's warnings at most once a second (hyper may accept the streams before
    // their resets arrive, and then h2 warns of nothing).
    assert!(h2_lines <= 30, "{h2_lines} h2 warnings in 10 s");
    assert!(added < 50 * 1024, "{added} bytes of log");
    // The server still serves.
    let mut client = server.client().await;
    let status = client
        .get_game(pb::GetGameRequest {
            game_id: "after-the-flood".into(),
            ..Default::default()
        })
        .await
        .expect_err("no such game");
    assert_eq!(status.code(), Code::NotFound);
}

/// The time one health check takes on a fresh connection to `addr`, and its answer.
async fn fresh_health_check(addr: &str) -> (Duration, Result<i32, String>) {
    let started = Instant::now();
    let answer = async {
        let channel = tonic::transport::Channel::from_shared(format!("http://{addr}"))
            .map_err(|e| e.to_string())?
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
        let request = tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        };
        health
            .check(request)
            .await
            .map(|r| r.into_inner().status)
            .map_err(|s| format!("{s:?}"))
    };
    let answer = tokio::time::timeout(Duration::from_secs(2), answer)
        .await
        .unwrap_or_else(|_| Err("no answer within 2 s".into()));
    (started.elapsed(), answer)
}

#[tokio::test]
async fn a_flood_of_silent_sockets_on_the_health_port_leaves_health_answering() {
    // Fewer descriptors than the flood has sockets, and a handshake timeout that keeps
    // silent sockets open for the whole test.
    let server = Server::start_with_fd_limit(
        &[
            "--health-listen",
            "127.0.0.1:0",
            "--handshake-timeout-secs",
            "300",
        ],
        256,
    );
    let line = server
        .wait_for_log("plaintext health service on ", Duration::from_secs(10))
        .expect("the health port is logged");
    let health_addr = line
        .split("plaintext health service on ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("an address")
        .to_string();
    let mut silent = Vec::new();
    for _ in 0..625 {
        if let Ok(socket) = tokio::net::TcpStream::connect(&health_addr).await {
            silent.push(socket);
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut took = Vec::new();
    for _ in 0..5 {
        let (elapsed, answer) = fresh_health_check(&health_addr).await;
        assert_eq!(answer, Ok(1), "health answers SERVING during the flood");
        took.push(elapsed);
    }
    took.sort();
    eprintln!("health on a fresh connection during the flood: {took:?}");
    assert!(took[2] < Duration::from_millis(100), "median {:?}", took[2]);
    // The main port is unaffected.
    let mut client = server.client().await;
    let started = Instant::now();
    let status = client
        .get_game(pb::GetGameRequest {
            game_id: "during-the-flood".into(),
            ..Default::default()
        })
        .await
        .expect_err("no such game");
    assert_eq!(status.code(), Code::NotFound);
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "{:?}",
        started.elapsed()
    );
    assert!(
        !server
            .log()
            .iter()
            .any(|l| l.contains("cannot accept connections")),
        "the health port's bound keeps the process within its descriptors"
    );
    drop(silent);
}
