//! Operations against the real binary: connections (a bound, a deadline to start HTTP/2,
//! HTTP/2 SETTINGS, running out of descriptors), load shedding, perft's time limit, the
//! Prometheus metrics, and OTLP traces to an in-test collector.

use std::task::Poll;
use std::time::{Duration, Instant};

use chess_service::pb;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::common::client::{Client, named, new_game, play, play_request};
use crate::common::metrics::{Samples, parse_samples, sample, scrape};
use crate::common::server::{Server, error_info, expect_error};

/// The HTTP/2 connection preface.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

fn get_request(id: &str) -> pb::GetGameRequest {
    pb::GetGameRequest {
        game_id: id.into(),
        ..Default::default()
    }
}

/// Health of the chess service, over a new connection.
async fn health(server: &Server) -> Result<ServingStatus, tonic::Status> {
    let channel = tonic::transport::Channel::from_shared(server.url())
        .expect("valid url")
        .connect()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let answer = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: "chess.v1.ChessService".into(),
        })
        .await?
        .into_inner();
    Ok(answer.status())
}

/// Waits (at most `limit`) for the server's socket to close: true if it did (EOF or a
/// reset), false if it stayed open.
pub(crate) async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 256];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            // Bytes from the server (its SETTINGS): keep reading.
            Ok(Ok(_)) => {}
        }
    }
}

/// A Perft that runs until its deadline.
async fn long_perft(mut client: Client, deadline: Duration) -> Code {
    let mut request = tonic::Request::new(pb::PerftRequest {
        depth: 9,
        ..Default::default()
    });
    request.set_timeout(deadline);
    match client.perft(request).await {
        Ok(r) => panic!("a depth-9 perft finished early: {:?}", r.into_inner()),
        Err(status) => status.code(),
    }
}

const CHESS: &str = "chess.v1.ChessService";

fn method(name: &str) -> [(&'static str, String); 3] {
    [
        ("grpc_type", "unary".to_string()),
        ("grpc_service", CHESS.to_string()),
        ("grpc_method", name.to_string()),
    ]
}

fn handled(samples: &Samples, service: &str, name: &str, code: &str) -> Option<f64> {
    let grpc_type = if name == "WatchGame" || name == "Watch" {
        "server_stream"
    } else {
        "unary"
    };
    sample(
        samples,
        "grpc_server_handled_total",
        &[
            ("grpc_type", grpc_type),
            ("grpc_service", service),
            ("grpc_method", name),
            ("grpc_code", code),
        ],
    )
}

#[tokio::test]
async fn calls_beyond_max_in_flight_are_shed_with_overloaded_and_health_is_never_shed() {
    // Its perfts share one connection: no bound per caller (--perft-max-per-caller 0).
    let server = Server::start(&[
        "--max-in-flight",
        "2",
        "--metrics-listen",
        "127.0.0.1:0",
        "--perft-max-per-caller",
        "0",
    ]);
    let client = server.client().await;
    let running = [
        tokio::spawn(long_perft(client.clone(), Duration::from_secs(15))),
        tokio::spawn(long_perft(client.clone(), Duration::from_secs(15))),
    ];
    // Both perfts hold a slot until their deadline: once both compute (read from
    // /metrics, not a gRPC call, which would race them for the slots), any call is shed.
    let metrics = server.metrics_addr();
    let start = Instant::now();
    loop {
        let samples = parse_samples(&scrape(&metrics).await);
        if sample(&samples, "chess_perfts_running", &[]) == Some(2.0) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the two perfts never ran at once; perfts finished: {:?}",
            running.iter().map(|t| t.is_finished()).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut other = server.client().await;
    let shed = other
        .get_game(get_request("shed-me"))
        .await
        .expect_err("shed with two perfts in flight");
    assert_eq!(shed.code(), Code::ResourceExhausted, "{shed:?}");
    let info = error_info(&shed);
    assert_eq!(info.reason, "OVERLOADED", "{shed:?}");
    assert_eq!(
        info.metadata.get("max_in_flight").map(String::as_str),
        Some("2")
    );
    assert!(shed.message().contains("--max-in-flight"), "{shed:?}");
    // A refusal is immediate, not queued behind the perfts.
    let refused_at = Instant::now();
    expect_error(
        other.get_game(get_request("shed-me")).await,
        Code::ResourceExhausted,
        "OVERLOADED",
    );
    assert!(
        refused_at.elapsed() < Duration::from_secs(1),
        "a shed call waited {:?}",
        refused_at.elapsed()
    );
    assert_eq!(
        health(&server)
            .await
            .expect("health answers while overloaded"),
        ServingStatus::Serving
    );
    assert!(
        server
            .wait_for_log("shedding load", Duration::from_secs(5))
            .is_some(),
        "the shedding is logged"
    );
    let samples = parse_samples(&scrape(&server.metrics_addr()).await);
    assert!(
        handled(&samples, CHESS, "GetGame", "ResourceExhausted").is_some_and(|n| n >= 2.0),
        "shed calls are counted as handled with ResourceExhausted"
    );
    assert!(
        sample(
            &samples,
            "chess_refusals_total",
            &[("reason", "OVERLOADED")]
        )
        .is_some_and(|n| n >= 2.0)
    );
    assert_eq!(
        sample(&samples, "chess_calls_in_flight", &[]),
        Some(2.0),
        "the two perfts"
    );
    for task in running {
        let code = task.await.expect("the perft task");
        // DEADLINE_EXCEEDED from the server, or the client's own timer if it won the
        // race on a loaded machine: either way the perft ended at its deadline.
        assert!(
            matches!(code, Code::DeadlineExceeded | Code::Cancelled),
            "{code:?}"
        );
    }
    // With the slots free, calls are served again.
    expect_error(
        other.get_game(get_request("shed-me")).await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
}

#[tokio::test]
async fn a_perft_without_a_deadline_stops_at_perft_max_seconds() {
    // Its perfts share one connection: no bound per caller (--perft-max-per-caller 0).
    let server = Server::start(&["--perft-max-seconds", "1", "--perft-max-per-caller", "0"]);
    let mut client = server.client().await;
    let start = Instant::now();
    let status = expect_error(
        client
            .perft(pb::PerftRequest {
                depth: 9,
                ..Default::default()
            })
            .await,
        Code::DeadlineExceeded,
        "DEADLINE_EXCEEDED",
    );
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(10),
        "stopped after {took:?}"
    );
    assert!(
        status.message().contains("--perft-max-seconds"),
        "{status:?}"
    );
    assert_eq!(
        error_info(&status)
            .metadata
            .get("perft_max_seconds")
            .map(String::as_str),
        Some("1")
    );
    // The count stopped and freed its slot: two perfts at once run again.
    let (mut one, mut two) = (client.clone(), client.clone());
    let (a, b) = tokio::join!(
        one.perft(pb::PerftRequest {
            depth: 3,
            ..Default::default()
        }),
        two.perft(pb::PerftRequest {
            depth: 4,
            ..Default::default()
        })
    );
    assert_eq!(a.expect("depth 3").into_inner().nodes, 8_902);
    assert_eq!(b.expect("depth 4").into_inner().nodes, 197_281);
    // A caller's own deadline shorter than the limit is still the caller's.
    let mut request = tonic::Request::new(pb::PerftRequest {
        depth: 9,
        ..Default::default()
    });
    request.set_timeout(Duration::from_millis(500));
    let status = client.perft(request).await.expect_err("past its deadline");
    // The server answers DEADLINE_EXCEEDED a little early; on a loaded machine the
    // client's own timer (CANCELLED, "Timeout expired") may still win the race.
    assert!(
        matches!(status.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{status:?}"
    );
    assert!(
        !status.message().contains("--perft-max-seconds"),
        "{status:?}"
    );
}

#[tokio::test]
async fn a_connection_that_never_starts_http2_is_closed_after_the_handshake_timeout() {
    let server = Server::start(&["--handshake-timeout-secs", "1"]);
    let mut silent = TcpStream::connect(&server.addr).await.expect("connects");
    let start = Instant::now();
    assert!(
        closed_within(&mut silent, Duration::from_secs(10)).await,
        "a silent connection stays open"
    );
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "closed after {took:?}"
    );
    // Something that is not HTTP/2 is closed as soon as it is read.
    let mut http1 = TcpStream::connect(&server.addr).await.expect("connects");
    http1
        .write_all(b"GET / HTTP/1.1\r\nHost: chess\r\nAccept: */*\r\n\r\n")
        .await
        .expect("sends");
    let start = Instant::now();
    assert!(closed_within(&mut http1, Duration::from_secs(10)).await);
    assert!(
        start.elapsed() < Duration::from_millis(900),
        "{:?}",
        start.elapsed()
    );
    // A gRPC client, which starts HTTP/2 at once, is served, also after idling longer
    // than the handshake timeout.
    let mut client = server.client().await;
    new_game(&mut client, named("handshake-ok")).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    play(&mut client, "handshake-ok", "e4").await;
}

#[tokio::test]
async fn connections_beyond_max_connections_are_closed_at_once() {
    let server = Server::start(&["--max-connections", "2"]);
    let mut first = server.client().await;
    new_game(&mut first, named("max-conn")).await;
    let mut second = server.client().await;
    second
        .get_game(get_request("max-conn"))
        .await
        .expect("the second connection is served");

    let mut third = TcpStream::connect(&server.addr).await.expect("connects");
    let _ = third.write_all(PREFACE).await;
    let start = Instant::now();
    assert!(
        closed_within(&mut third, Duration::from_secs(5)).await,
        "a third connection is served beyond --max-connections 2"
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert!(
        server
            .wait_for_log("--max-connections", Duration::from_secs(5))
            .is_some(),
        "the refusal is logged"
    );
    // The two open connections are still served.
    play(&mut first, "max-conn", "e4").await;
    second
        .get_game(get_request("max-conn"))
        .await
        .expect("still served");

    // Closing one makes room for another.
    drop(second);
    let start = Instant::now();
    loop {
        let answer = match tonic::transport::Channel::from_shared(server.url())
            .expect("valid url")
            .connect()
            .await
        {
            Ok(channel) => Client::new(channel)
                .get_game(get_request("max-conn"))
                .await
                .map_err(|status| format!("{status:?}")),
            Err(e) => Err(e.to_string()),
        };
        match answer {
            Ok(game) => {
                assert_eq!(game.into_inner().game.expect("a game").ply, 1);
                break;
            }
            Err(why) => assert!(
                start.elapsed() < Duration::from_secs(5),
                "no room after a connection closed: {why}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn max_concurrent_streams_is_announced_in_the_http2_settings() {
    let server = Server::start(&["--max-concurrent-streams", "7"]);
    let tcp = TcpStream::connect(&server.addr).await.expect("connects");
    let (_send, connection) = h2::client::handshake(tcp).await.expect("HTTP/2 handshake");
    let mut connection = std::pin::pin!(connection);
    // h2 assumes 100 until the server's SETTINGS arrive; drive the connection until then.
    let announced = tokio::time::timeout(
        Duration::from_secs(5),
        std::future::poll_fn(|cx| {
            if let Poll::Ready(end) = connection.as_mut().poll(cx) {
                return Poll::Ready(Err(format!("the connection ended: {end:?}")));
            }
            match connection.max_concurrent_send_streams() {
                7 => Poll::Ready(Ok(7)),
                _ => Poll::Pending,
            }
        }),
    )
    .await;
    assert_eq!(
        announced,
        Ok(Ok(7)),
        "SETTINGS_MAX_CONCURRENT_STREAMS 7 (h2 reads {})",
        connection.max_concurrent_send_streams()
    );
}

#[tokio::test]
async fn out_of_descriptors_the_accept_loop_backs_off_logs_and_recovers() {
    // 64 descriptors, 60 sockets that never speak: the server runs out while accepting.
    // A long handshake timeout keeps them open for the whole test.
    let server = Server::start_with_fd_limit(&["--handshake-timeout-secs", "300"], 64);
    let mut client = server.client().await;
    new_game(&mut client, named("emfile")).await;
    drop(client);
    let idle: Vec<std::net::TcpStream> = (0..60)
        .map(|_| std::net::TcpStream::connect(&server.addr).expect("the kernel queues it"))
        .collect();
    let line = server
        .wait_for_log("cannot accept connections", Duration::from_secs(10))
        .expect("running out of descriptors is logged");
    assert!(line.contains("os error 24"), "{line}");

    // It waits rather than spins: at most a tenth of a core while it cannot accept.
    let before = server.cpu_time();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let used = server.cpu_time() - before;
    assert!(
        used <= Duration::from_millis(300),
        "the server used {used:?} of CPU in 3 s while out of descriptors"
    );
    let warnings = server
        .log()
        .iter()
        .filter(|l| l.contains("cannot accept connections"))
        .count();
    assert!(
        warnings <= 2,
        "{warnings} warnings in about 4 s: not rate-limited"
    );

    // Once the sockets close, the server serves again: health, a read, a durable write.
    drop(idle);
    let start = Instant::now();
    loop {
        match health(&server).await {
            Ok(status) => {
                assert_eq!(status, ServingStatus::Serving);
                break;
            }
            Err(status) => assert!(
                start.elapsed() < Duration::from_secs(15),
                "not serving after the sockets closed: {status:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut client = server.client().await;
    play(&mut client, "emfile", "e4").await;
    let game = client
        .get_game(get_request("emfile"))
        .await
        .expect("GetGame")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(game.ply, 1);
}

#[tokio::test]
async fn metrics_count_every_call_under_the_go_grpc_prometheus_names() {
    let server = Server::start(&["--metrics-listen", "127.0.0.1:0"]);
    let addr = server.metrics_addr();
    let mut client = server.client().await;
    new_game(&mut client, named("metrics")).await;
    play(&mut client, "metrics", "e4").await;
    expect_error(
        client.get_game(get_request("metrics-missing")).await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
    expect_error(
        client.play(play_request("metrics", "zz")).await,
        Code::InvalidArgument,
        "INVALID_MOVE_TEXT",
    );
    let by_fen = || pb::LegalMovesRequest {
        position: Some(pb::legal_moves_request::Position::Fen(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
        )),
        variant: 0,
    };
    for _ in 0..2 {
        client.legal_moves(by_fen()).await.expect("LegalMoves");
    }
    assert_eq!(
        health(&server).await.expect("health"),
        ServingStatus::Serving
    );
    let mut watch = client
        .watch_game(pb::WatchGameRequest {
            game_id: "metrics".into(),
            from_version: 0,
        })
        .await
        .expect("WatchGame")
        .into_inner();
    watch
        .message()
        .await
        .expect("an event")
        .expect("the creation");

    let text = scrape(&addr).await;
    assert!(text.ends_with("# EOF\n"), "OpenMetrics ends with # EOF");
    let s = parse_samples(&text);
    let started = |name: &str| {
        let labels = method(name);
        let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        sample(&s, "grpc_server_started_total", &labels)
    };
    assert_eq!(started("NewGame"), Some(1.0), "{text}");
    assert_eq!(started("Play"), Some(2.0));
    assert_eq!(started("LegalMoves"), Some(2.0));
    assert_eq!(handled(&s, CHESS, "NewGame", "OK"), Some(1.0), "{text}");
    assert_eq!(handled(&s, CHESS, "Play", "OK"), Some(1.0));
    assert_eq!(handled(&s, CHESS, "Play", "InvalidArgument"), Some(1.0));
    assert_eq!(handled(&s, CHESS, "GetGame", "NotFound"), Some(1.0));
    assert_eq!(handled(&s, CHESS, "LegalMoves", "OK"), Some(2.0));
    assert_eq!(
        handled(&s, "grpc.health.v1.Health", "Check", "OK"),
        Some(1.0)
    );
    // The open WatchGame stream has started and not ended.
    assert_eq!(
        sample(
            &s,
            "grpc_server_started_total",
            &[
                ("grpc_type", "server_stream"),
                ("grpc_service", CHESS),
                ("grpc_method", "WatchGame")
            ]
        ),
        Some(1.0)
    );
    assert_eq!(sample(&s, "chess_spectators", &[]), Some(1.0));

    // The latency histogram: buckets from 100 µs to 10 s, every call counted.
    let bounds: Vec<f64> = s
        .keys()
        .filter(|(name, labels)| {
            name == "grpc_server_handling_seconds_bucket"
                && labels
                    .iter()
                    .any(|(k, v)| k == "grpc_method" && v == "NewGame")
        })
        .filter_map(|(_, labels)| labels.iter().find(|(k, _)| k == "le"))
        .filter_map(|(_, le)| le.parse::<f64>().ok())
        .collect();
    let finite: Vec<f64> = bounds.iter().copied().filter(|b| b.is_finite()).collect();
    assert!(
        finite.iter().any(|b| (*b - 0.0001).abs() < 1e-12)
            && finite.iter().any(|b| (*b - 10.0).abs() < 1e-9)
            && finite.iter().all(|b| (0.0001 - 1e-12..=10.0).contains(b)),
        "buckets {bounds:?}"
    );
    assert!(bounds.iter().any(|b| b.is_infinite()), "a +Inf bucket");
    let count = |name: &str| {
        let labels = method(name);
        let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        sample(&s, "grpc_server_handling_seconds_count", &labels)
    };
    assert_eq!(count("Play"), Some(2.0));
    assert_eq!(count("GetGame"), Some(1.0));

    // Refusals by reason, the FEN cache, the store, the registry, the process.
    assert_eq!(
        sample(&s, "chess_refusals_total", &[("reason", "GAME_NOT_FOUND")]),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &s,
            "chess_refusals_total",
            &[("reason", "INVALID_MOVE_TEXT")]
        ),
        Some(1.0)
    );
    assert_eq!(sample(&s, "chess_fen_cache_hits_total", &[]), Some(1.0));
    assert_eq!(sample(&s, "chess_fen_cache_misses_total", &[]), Some(1.0));
    assert!(sample(&s, "chess_store_commits_total", &[]).is_some_and(|n| n >= 2.0));
    assert!(sample(&s, "chess_store_syncs_total", &[]).is_some_and(|n| n >= 1.0));
    assert!(sample(&s, "chess_store_sync_seconds_total", &[]).is_some_and(|t| t > 0.0));
    assert!(sample(&s, "chess_store_batch_size_max", &[]).is_some_and(|n| n >= 1.0));
    assert!(sample(&s, "chess_games_loaded", &[]).is_some_and(|n| n >= 1.0));
    assert_eq!(sample(&s, "chess_perfts_running", &[]), Some(0.0));
    assert!(sample(&s, "chess_connections_open", &[]).is_some_and(|n| n >= 1.0));
    assert!(sample(&s, "process_resident_memory_bytes", &[]).is_some_and(|b| b > 1e6));
    assert!(sample(&s, "process_open_fds", &[]).is_some_and(|n| n >= 5.0));
    assert!(sample(&s, "process_max_fds", &[]).is_some_and(|n| n >= 64.0));
    assert!(sample(&s, "process_cpu_seconds_total", &[]).is_some_and(|t| t >= 0.0));
    assert!(sample(&s, "process_start_time_seconds", &[]).is_some_and(|t| t > 1.6e9));

    // A caller that goes away counts as Canceled once its stream ends.
    drop(watch);
    let start = Instant::now();
    loop {
        let s = parse_samples(&scrape(&addr).await);
        if handled(&s, CHESS, "WatchGame", "Canceled") == Some(1.0)
            && sample(&s, "chess_spectators", &[]) == Some(0.0)
        {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "a dropped WatchGame is not counted as Canceled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A collector that hands every OTLP export it receives to the test.
struct Collector(tokio::sync::mpsc::UnboundedSender<ExportTraceServiceRequest>);

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let _ = self.0.send(request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn a_call_with_a_traceparent_is_exported_over_otlp_in_the_callers_trace() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a collector port");
    let collector = listener.local_addr().expect("its address");
    let (tx, mut exports) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(Collector(tx)))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );
    let data = tempfile::tempdir().expect("a data directory");
    let endpoint = format!("http://{collector}");
    let server = Server::start_with(
        data.path(),
        &["--otlp-endpoint", &endpoint],
        // Export batches every 100 ms rather than every 5 s.
        &[("OTEL_BSP_SCHEDULE_DELAY", "100")],
    );
    let mut client = server.client().await;
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let caller_span = "00f067aa0ba902b7";
    let mut request = tonic::Request::new(named("traced"));
    request.metadata_mut().insert(
        "traceparent",
        format!("00-{trace_id}-{caller_span}-01")
            .parse()
            .expect("a metadata value"),
    );
    client.new_game(request).await.expect("NewGame");
    // A call without one starts a trace of its own.
    client
        .get_game(get_request("traced"))
        .await
        .expect("GetGame");

    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    let (mut continued, mut own) = (None, None);
    while continued.is_none() || own.is_none() {
        let export = tokio::time::timeout_at(deadline, exports.recv())
            .await
            .unwrap_or_else(|_| panic!("no exported call span in 20 s; spans seen: {seen:?}"))
            .expect("the collector runs");
        for span in export
            .resource_spans
            .iter()
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| &s.spans)
        {
            let ids = (hex(&span.trace_id), hex(&span.parent_span_id));
            seen.push((span.name.clone(), ids.0.clone(), ids.1.clone()));
            if span.name == "rpc" && ids.0 == trace_id {
                continued = Some(ids);
            } else if span.name == "rpc" {
                own = Some(ids);
            }
        }
    }
    let (_, parent) = continued.expect("the NewGame span");
    assert_eq!(
        parent, caller_span,
        "the call's span is a child of the caller's"
    );
    let (other_trace, _) = own.expect("the GetGame span");
    assert_ne!(other_trace, trace_id);
}
