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

const WAIT: Duration = Duration::from_secs(3);

fn path(method: &str) -> String {
    format!("/chess.v1.ChessService/{method}")
}

fn reason(status: &tonic::Status) -> Option<String> {
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

/// A GetGame of a game that does not exist, as a well-behaved caller makes it: its status.
async fn probe_call(client: &mut crate::common::client::Client) -> tonic::Status {
    client
        .get_game(pb::GetGameRequest {
            game_id: "probe".into(),
            ..Default::default()
        })
        .await
        .expect_err("no such game")
}

#[tokio::test]
async fn answers_a_caller_never_reads_count_as_in_flight_until_sent() {
    let server = Server::start(&["--max-in-flight", "4"]);
    // A raw HTTP/2 connection that never opens its window: every answer's data waits in
    // the server, sent to no one.
    let mut unread = UnreadCalls::send(&server.addr, 0, 4, &[0, 0, 0, 0, 0]).await;
    unread.wait_for_heads().await;
    // Four answers wait to be sent: the server is full, and says so at once.
    let mut client = server.client().await;
    let full = probe_call(&mut client).await;
    assert_eq!(full.code(), Code::ResourceExhausted, "{full:?}");
    assert_eq!(reason(&full).as_deref(), Some("OVERLOADED"), "{full:?}");
    // The caller goes away: its answers are dropped, and the slots come back.
    drop(unread);
    let deadline = Instant::now() + WAIT;
    loop {
        let status = probe_call(&mut client).await;
        if status.code() == Code::NotFound {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the slots never came back: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The server's resident memory now, in bytes.
fn resident_bytes(server: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid()))
        .expect("the server's /proc status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line");
    kib * 1024
}

/// The zero-window attack of issue 30: large games, then one connection that asks for
/// 256 pages of 1,000 games and never opens its HTTP/2 window (its keepalive pings are
/// answered, by the h2 crate). Each answer waits in the server until the caller reads it,
/// so without a bound on the bytes of unsent answers the server holds them all.
#[tokio::test]
async fn a_caller_that_never_opens_its_window_cannot_take_memory() {
    unread_pages_attack(0).await;
}

/// The same with a window of one byte per stream: HTTP/2 then takes each answer's data
/// into the connection's buffer, and the answer must still count until it has left.
#[tokio::test]
async fn a_caller_that_opens_its_window_a_byte_cannot_take_memory() {
    unread_pages_attack(1).await;
}

async fn unread_pages_attack(window: u32) {
    const ATTACK_STREAMS: usize = 256;
    let server = Server::start(&[]);
    let mut client = server.client().await;
    let value = "v".repeat(250);
    for game in 0..1000 {
        let tags = (0..31)
            .map(|t| (format!("T{t:02}"), value.clone()))
            .collect();
        client
            .new_game(pb::NewGameRequest {
                game_id: format!("big-{game:04}"),
                tags,
                ..Default::default()
            })
            .await
            .expect("a game with 31 tags");
    }
    // A first page, read whole, so the baseline holds what any listing allocates.
    let page = client
        .list_games(pb::ListGamesRequest {
            page_size: 1000,
            ..Default::default()
        })
        .await
        .expect("a page")
        .into_inner();
    assert!(
        page.games.len() > 50,
        "a page holds {} games",
        page.games.len()
    );
    let before = resident_bytes(&server);
    let cpu_before = server.cpu_time();

    // page_size = 1000: field 1, varint 1000.
    let page = frame(0, &[0x08, 0xE8, 0x07]);
    let unread = UnreadCalls::send(&server.addr, window, ATTACK_STREAMS, &page).await;
    // Meanwhile a well-behaved caller plays on, and its calls stay fast.
    let mut peak = before;
    let mut latencies = Vec::new();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        let call = Instant::now();
        client
            .get_game(pb::GetGameRequest {
                game_id: "big-0001".into(),
                ..Default::default()
            })
            .await
            .expect("a well-behaved caller's GetGame");
        latencies.push((call.elapsed(), started.elapsed()));
        peak = peak.max(resident_bytes(&server));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    latencies.sort();
    eprintln!(
        "slowest: {:?}; server CPU {:?}",
        &latencies[latencies.len().saturating_sub(12)..],
        server.cpu_time() - cpu_before
    );
    let p99 = latencies[latencies.len() * 99 / 100].0;
    let grown = peak.saturating_sub(before);
    eprintln!(
        "window-{window} attack: RSS {} MB before, peak {} MB (+{} MB); well-behaved p99 {:?} over {} calls",
        before >> 20,
        peak >> 20,
        grown >> 20,
        p99,
        latencies.len()
    );
    assert!(
        grown <= 256 << 20,
        "the attack raised RSS by {} MB, above the 256 MB bound",
        grown >> 20
    );
    assert!(
        p99 < Duration::from_millis(50),
        "a well-behaved caller's p99 was {p99:?} during the attack"
    );
    drop(unread);
}

/// ListGames calls sent on a raw HTTP/2 connection whose answers are never read.
struct UnreadCalls {
    answers: Vec<h2::client::ResponseFuture>,
    heads: Vec<http::Response<h2::RecvStream>>,
    streams: Vec<h2::SendStream<bytes::Bytes>>,
    _send: h2::client::SendRequest<bytes::Bytes>,
    driver: tokio::task::JoinHandle<Result<(), h2::Error>>,
}

impl UnreadCalls {
    /// Opens a connection whose streams start with a window of `window` bytes (the
    /// connection answers pings, through the h2 crate, and never opens a window) and
    /// sends `count` ListGames with `request`, a framed ListGamesRequest.
    async fn send(addr: &str, window: u32, count: usize, request: &[u8]) -> UnreadCalls {
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let (mut send, connection) = h2::client::Builder::new()
            .initial_window_size(window)
            .handshake::<_, bytes::Bytes>(tcp)
            .await
            .expect("an HTTP/2 handshake");
        let driver = tokio::spawn(connection);
        let mut answers = Vec::new();
        let mut streams = Vec::new();
        for _ in 0..count {
            send = send.ready().await.expect("a stream");
            let head = http::Request::builder()
                .method("POST")
                .uri(format!("http://{addr}{}", path("ListGames")))
                .header("content-type", "application/grpc")
                .header("te", "trailers")
                .body(())
                .expect("a request");
            let (answer, mut stream) = send.send_request(head, false).expect("sent");
            stream
                .send_data(bytes::Bytes::copy_from_slice(request), true)
                .expect("a ListGamesRequest");
            answers.push(answer);
            streams.push(stream);
        }
        UnreadCalls {
            answers,
            heads: Vec::new(),
            streams,
            _send: send,
            driver,
        }
    }

    /// Waits for every answer's head, which arrives (headers are not flow-controlled)
    /// while its body cannot, and keeps it unread.
    async fn wait_for_heads(&mut self) {
        for answer in std::mem::take(&mut self.answers) {
            let head = tokio::time::timeout(WAIT, answer)
                .await
                .expect("the answer's head in time")
                .expect("an answer");
            assert_eq!(head.status(), 200);
            self.heads.push(head);
        }
    }
}

impl Drop for UnreadCalls {
    fn drop(&mut self) {
        self.heads.clear();
        self.streams.clear();
        self.driver.abort();
    }
}
