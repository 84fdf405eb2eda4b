//! Answers a caller never reads (issue 30): a call counts as in flight until its answer
//! is sent, and large answers hold their bytes in the budget of unsent answers, so a
//! caller that never opens its HTTP/2 window (or opens it a byte at a time) cannot take
//! the server's memory or its slots for ever.

use std::time::{Duration, Instant};

use chess_service::pb;
use tonic::Code;

use crate::common::raw_grpc::frame;
use crate::common::server::Server;
use crate::hostile::{WAIT, path, reason};

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
