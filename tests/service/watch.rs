//! WatchGame through gRPC against the real server binary: several spectators at once,
//! one reconnecting with `from_version` and missing nothing; a deliberately slow
//! spectator that does not delay Play (measured) and is told to resync; a flag fall
//! streamed by the timer with no call at all; errors; and shutdown ending open streams.

use std::time::{Duration, Instant};

use chess_service::pb::{self, chess_service_client::ChessServiceClient};
use pb::game_event::Kind;
use pb::watch_game_response::Message;
use tonic::Code;
use tonic::transport::Endpoint;

use super::STORE;
use crate::common::client::{
    BLACK, Client, Stream, WHITE, get, named, new_game, next_event, play, time_control, undo, watch,
};
use crate::common::server::{Server, expect_error};

/// Events up to and including `last` version.
async fn events_until(s: &mut Stream, last: u64) -> Vec<pb::GameEvent> {
    let mut out: Vec<pb::GameEvent> = Vec::new();
    while out.last().is_none_or(|e| e.version < last) {
        out.push(next_event(s).await);
    }
    out
}

fn assert_consecutive(events: &[pb::GameEvent], from: u64) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.version, from + i as u64, "versions go up by one");
    }
}

/// Several spectators see every version exactly once, in order, identical to each other
/// and to a replay from the store; one that disconnects and comes back with
/// `from_version` misses nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectators_see_every_version_and_a_reconnect_misses_nothing() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    new_game(&mut c, named("watched")).await;
    // Spectators on their own connections, subscribed before anything happens; they
    // read until the game ends (the last event below is the resignation).
    let mut spectators = Vec::new();
    for _ in 0..3 {
        let mut sc = server.client().await;
        let mut stream = watch(&mut sc, "watched", 0).await;
        spectators.push(tokio::spawn(async move {
            let mut got: Vec<pb::GameEvent> = Vec::new();
            while !matches!(
                got.last().and_then(|e| e.kind.as_ref()),
                Some(Kind::GameEnded(_))
            ) {
                got.push(next_event(&mut stream).await);
            }
            got
        }));
    }
    // The one that will drop out after version 5 and come back.
    let mut rc = server.client().await;
    let mut first_part = {
        let mut stream = watch(&mut rc, "watched", 0).await;
        let mut got = Vec::new();
        let ops = async {
            play(&mut c, "watched", "e4").await; // 1
            c.offer_draw(pb::OfferDrawRequest {
                game_id: "watched".into(),
                color: WHITE,
                ..Default::default()
            })
            .await
            .expect("offer"); // 2
            play(&mut c, "watched", "e5").await; // 3 lapse, 4 move
            undo(&mut c, "watched").await; // 5
        };
        let read = async {
            got = events_until(&mut stream, 5).await;
        };
        tokio::join!(ops, read);
        got
    };
    assert_eq!(first_part.len(), 6, "versions 0 to 5");
    // While it is away.
    play(&mut c, "watched", "c5").await; // 6
    c.offer_draw(pb::OfferDrawRequest {
        game_id: "watched".into(),
        color: BLACK,
        ..Default::default()
    })
    .await
    .expect("offer"); // 7
    c.respond_to_draw(pb::RespondToDrawRequest {
        game_id: "watched".into(),
        color: WHITE,
        accept: false,
        ..Default::default()
    })
    .await
    .expect("decline"); // 8
    let mut back = watch(&mut rc, "watched", 6).await;
    play(&mut c, "watched", "Nf3").await; // 9
    let last = c
        .resign(pb::ResignRequest {
            game_id: "watched".into(),
            color: BLACK,
            ..Default::default()
        })
        .await
        .expect("resign")
        .into_inner()
        .game
        .expect("a game"); // 10
    assert_eq!(last.version, 10);
    first_part.extend(events_until(&mut back, last.version).await);

    // The reference: the whole history replayed from the store by a new spectator.
    let mut fresh = watch(&mut c, "watched", 0).await;
    let reference = events_until(&mut fresh, last.version).await;
    assert_consecutive(&reference, 0);
    assert_eq!(
        first_part, reference,
        "the reconnected spectator missed nothing"
    );
    for s in spectators {
        let got = s.await.expect("spectator");
        assert_eq!(got, reference, "a live spectator saw exactly the history");
    }

    // What the events say.
    let kinds: Vec<&str> = reference
        .iter()
        .map(|e| match e.kind.as_ref().expect("a kind") {
            Kind::Started(_) => "started",
            Kind::MovePlayed(_) => "move",
            Kind::MoveUndone(_) => "undo",
            Kind::DrawOffered(_) => "offer",
            Kind::DrawDeclined(d) if d.lapsed => "lapsed",
            Kind::DrawDeclined(_) => "declined",
            Kind::GameEnded(_) => "ended",
            Kind::TimeAdded(_) => "time added",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "started", "move", "offer", "lapsed", "move", "undo", "move", "offer", "declined",
            "move", "ended"
        ]
    );
    let end = reference.last().expect("events");
    let Some(Kind::GameEnded(ended)) = &end.kind else {
        panic!("{end:?}")
    };
    assert_eq!(
        (ended.status, ended.winner, ended.color),
        (pb::GameStatus::Resignation as i32, WHITE, BLACK)
    );
    let state = end.state.as_ref().expect("a state");
    assert_eq!(state.fen, last.fen);
    assert_eq!(state.ply, 3);
    let Some(Kind::MovePlayed(e4)) = &reference[1].kind else {
        panic!("{:?}", reference[1])
    };
    assert_eq!(
        (e4.r#move.as_ref().map(|m| m.san.as_str()), e4.color),
        (Some("e4"), WHITE)
    );
    assert_eq!(
        reference[2].state.as_ref().map(|s| s.draw_offered_by),
        Some(WHITE)
    );
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Plays `pairs` times a move and its undo, timing each Play.
async fn play_undo_pairs(c: &mut Client, id: &str, pairs: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(pairs);
    for _ in 0..pairs {
        let t = Instant::now();
        play(c, id, "Nf3").await;
        times.push(t.elapsed());
        undo(c, id).await;
    }
    times.sort();
    times
}

/// A spectator that reads nothing does not slow the game down: Play latency with it
/// watching stays within a bound of the latency without it. When it reads again it gets
/// what was buffered, then a final resync naming the version to resume from, then the
/// stream ends with OK; resuming from there gives the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_spectator_does_not_delay_play_and_is_told_to_resync() {
    const PAIRS: usize = 150;
    let server = Server::on(STORE).start(&["--watch-buffer", "32"]);
    let mut c = server.client().await;
    new_game(&mut c, named("hot")).await;
    play_undo_pairs(&mut c, "hot", 20).await; // warm up
    let without = play_undo_pairs(&mut c, "hot", PAIRS).await;
    let from = get(&mut c, "hot").await.version + 1;

    // The slow spectator: its own connection with a small flow-control window, so the
    // transport cannot buffer much for it; it does not read until the end.
    let slow_channel = Endpoint::from_shared(server.url())
        .expect("url")
        .initial_stream_window_size(Some(4096))
        .initial_connection_window_size(Some(4096))
        .connect()
        .await
        .expect("connects");
    let mut slow_client = ChessServiceClient::new(slow_channel);
    let mut slow = watch(&mut slow_client, "hot", from).await;
    // A spectator that keeps up, on another connection, for comparison.
    let mut fast_client = server.client().await;
    let mut fast = watch(&mut fast_client, "hot", from).await;
    let fast_reader = tokio::spawn(async move {
        let mut n = 0u64;
        while let Ok(Some(msg)) = fast.message().await {
            match msg.message {
                Some(Message::Event(_)) => n += 1,
                other => panic!("the fast spectator got {other:?}"),
            }
            if n == 2 * PAIRS as u64 {
                break;
            }
        }
        n
    });

    let with = play_undo_pairs(&mut c, "hot", PAIRS).await;
    let last_version = get(&mut c, "hot").await.version;
    let (p50_without, p99_without) = (percentile(&without, 0.5), percentile(&without, 0.99));
    let (p50_with, p99_with) = (percentile(&with, 0.5), percentile(&with, 0.99));
    println!(
        "Play latency over {PAIRS} plays: without a spectator p50 {p50_without:?} p99 {p99_without:?}; \
         with a stalled spectator and a live one p50 {p50_with:?} p99 {p99_with:?}"
    );
    assert!(
        p50_with <= p50_without * 2 + Duration::from_millis(2),
        "a slow spectator slowed Play: p50 {p50_with:?} against {p50_without:?}"
    );
    assert!(
        p99_with <= p99_without * 3 + Duration::from_millis(20),
        "a slow spectator slowed Play: p99 {p99_with:?} against {p99_without:?}"
    );
    assert_eq!(
        fast_reader.await.expect("fast spectator"),
        2 * PAIRS as u64,
        "the live spectator got every event"
    );

    // Now the slow one reads: what was buffered, in order, then the resync, then the end.
    let mut got = Vec::new();
    let resume = loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), slow.message())
            .await
            .expect("the slow stream answers")
            .expect("no error")
            .expect("a resync before the end");
        match msg.message {
            Some(Message::Event(e)) => got.push(e),
            Some(Message::Resync(r)) => break r.resume_from_version,
            None => panic!("an empty message"),
        }
    };
    assert!(
        slow.message().await.expect("ends with OK").is_none(),
        "the stream ends after the resync"
    );
    assert_consecutive(&got, from);
    assert_eq!(resume, from + got.len() as u64);
    assert!(
        resume < last_version,
        "the slow spectator fell behind (resume at {resume}, game at {last_version})"
    );
    println!(
        "the slow spectator got {} buffered events, then resync at version {resume} of {last_version}",
        got.len()
    );
    let mut again = watch(&mut slow_client, "hot", resume).await;
    let rest = events_until(&mut again, last_version).await;
    assert_consecutive(&rest, resume);
}

/// Nobody calls: the flag timer records the flag fall at its exact time, and the
/// spectator sees it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flag_timer_ends_the_game_without_any_call() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: time_control(300, 0),
            ..named("timer")
        },
    )
    .await;
    let mut s = watch(&mut c, "timer", 0).await;
    let started = next_event(&mut s).await;
    let created = started.at_unix_ms;
    let Some(Kind::Started(info)) = &started.kind else {
        panic!("{started:?}")
    };
    assert_eq!(
        info.time_control,
        Some(pb::TimeControl {
            initial_ms: 300,
            increment_ms: 0,
            ..Default::default()
        })
    );
    let t = Instant::now();
    let flag = next_event(&mut s).await;
    println!("flag event after {:?}", t.elapsed());
    assert_eq!(flag.version, 1);
    assert_eq!(flag.at_unix_ms, created + 300, "at the exact flag time");
    let Some(Kind::GameEnded(ended)) = &flag.kind else {
        panic!("{flag:?}")
    };
    assert_eq!(
        (ended.status, ended.winner, ended.color),
        (pb::GameStatus::OutOfTime as i32, BLACK, WHITE)
    );
    let g = c
        .get_game(pb::GetGameRequest {
            game_id: "timer".into(),
            ..Default::default()
        })
        .await
        .expect("GetGame")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!((g.status, g.version), (pb::GameStatus::OutOfTime as i32, 1));
}

#[tokio::test]
async fn watch_errors() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    let missing = c
        .watch_game(pb::WatchGameRequest {
            game_id: "nope".into(),
            from_version: 0,
        })
        .await;
    expect_error(missing, Code::NotFound, "GAME_NOT_FOUND");
    new_game(&mut c, named("w")).await;
    play(&mut c, "w", "e4").await;
    let ahead = c
        .watch_game(pb::WatchGameRequest {
            game_id: "w".into(),
            from_version: 3,
        })
        .await;
    let s = expect_error(ahead, Code::OutOfRange, "VERSION_AHEAD");
    assert_eq!(
        crate::common::server::error_info(&s)
            .metadata
            .get("current_version")
            .map(String::as_str),
        Some("1")
    );
    // Version + 1 is fine: only what comes next.
    let mut next = watch(&mut c, "w", 2).await;
    play(&mut c, "w", "e5").await;
    assert_eq!(next_event(&mut next).await.version, 2);
}

/// SIGTERM with spectators watching: their streams end with UNAVAILABLE (so they
/// reconnect elsewhere) and the process exits promptly and cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_open_watch_streams() {
    let mut server = Server::on(STORE).start(&["--shutdown-grace-secs", "10"]);
    let mut c = server.client().await;
    new_game(&mut c, named("s")).await;
    let mut streams = Vec::new();
    for _ in 0..3 {
        let mut sc = server.client().await;
        let mut s = watch(&mut sc, "s", 0).await;
        next_event(&mut s).await;
        streams.push((sc, s));
    }
    let (status, took) = server
        .terminate(Duration::from_secs(20))
        .expect("the server exits after SIGTERM");
    assert!(status.success(), "exit status {status:?}");
    println!("SIGTERM to exit with 3 open WatchGame streams: {took:?}");
    assert!(
        took < Duration::from_secs(3),
        "open WatchGame streams held the server for {took:?}"
    );
    for (_, mut s) in streams {
        let end = s.message().await;
        match end {
            Err(status) => {
                assert_eq!(status.code(), Code::Unavailable, "{status:?}");
                assert_eq!(
                    crate::common::server::error_info(&status).reason,
                    "SHUTTING_DOWN"
                );
            }
            other => panic!("expected UNAVAILABLE, got {other:?}"),
        }
    }
}
