//! Issue 24's one clock, with real skew: two replicas whose wall clocks are shifted +3 s
//! and −3 s with libfaketime (Debian's `faketime` package), on one PostgreSQL. Moves are
//! charged and flags fall by the database's clock, so:
//! - every charge is within 50 ms of the real thinking time, whichever replica took the
//!   move (before, one side was billed 2 s for 1 s of thought and the other nothing);
//! - every flag falls within 100 ms of its real time, never early, whichever replica
//!   armed it (before, the +3 s replica dropped flags 3 s early);
//! - no move after the real flag is accepted, even by the replica that is 3 s behind.
//!
//! Without libfaketime the test says so loudly and passes as skipped, unless
//! `CHESS_REQUIRE_FAKETIME=1` (CI installs the package and sets it).

use std::path::Path;
use std::time::{Duration, Instant};

use chess_service::pb;
use tonic::Code;

use super::common::metrics;
use super::server::Server;
use super::{Client, Pg, new_game, play_req, replica_args, wall_now_ms};

/// Debian's libfaketime (the thread-safe build: the server is multi-threaded).
const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// A replica whose wall clock is `shift` (libfaketime's syntax, `+3s`) off the real one.
fn skewed_replica(pg: &Pg, shift: &str) -> Server {
    let data = tempfile::tempdir().expect("a data directory");
    let mut args = replica_args(&pg.url).to_vec();
    args.extend(["--metrics-listen", "127.0.0.1:0"]);
    let server = Server::start_with(
        data.path(),
        &args,
        &[
            ("LD_PRELOAD", LIBFAKETIME),
            ("FAKETIME", shift),
            // Only the wall clock is shifted: timers run as before.
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ],
    );
    drop(data);
    server
}

fn faketime_missing() -> bool {
    if Path::new(LIBFAKETIME).exists() {
        return false;
    }
    let required = std::env::var("CHESS_REQUIRE_FAKETIME").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "CHESS_REQUIRE_FAKETIME=1 but {LIBFAKETIME} is missing (apt-get install faketime)"
    );
    eprintln!(
        "\n*** SKIPPED: the clock-skew test needs libfaketime ({LIBFAKETIME}; apt-get install faketime) ***\n"
    );
    true
}

/// The replica's estimate of the database's clock minus its own, from its metrics.
async fn offset_seconds(server: &Server) -> f64 {
    let text = metrics::scrape(&server.metrics_addr()).await;
    metrics::sample(
        &metrics::parse_samples(&text),
        "chess_clock_offset_seconds",
        &[],
    )
    .expect("chess_clock_offset_seconds")
}

/// Plays `mv` and returns the game with the real times the call was sent and answered.
async fn timed_play(c: &mut Client, id: &str, mv: &str) -> (pb::Game, Instant, Instant) {
    let sent = Instant::now();
    let game = c
        .play(play_req(id, mv, None))
        .await
        .unwrap_or_else(|e| panic!("Play {mv}: {e:?}"))
        .into_inner()
        .game
        .expect("a game");
    (game, sent, Instant::now())
}

fn remaining(game: &pb::Game, white: bool) -> i64 {
    let clock = game.clock.as_ref().expect("a clock");
    let ms = if white {
        clock.white_remaining_ms
    } else {
        clock.black_remaining_ms
    };
    i64::try_from(ms).expect("a clock in range")
}

/// When the side to move in `game` loses on time, in the database's (real) time.
fn flag_at(game: &pb::Game) -> u64 {
    let clock = game.clock.as_ref().expect("a clock");
    let left = if clock.running == pb::Color::White as i32 {
        clock.white_remaining_ms
    } else {
        clock.black_remaining_ms
    };
    clock.as_of_unix_ms + left
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_with_skewed_clocks_charge_and_flag_by_the_databases_clock() {
    if faketime_missing() {
        return;
    }
    let Some(pg) = Pg::start("clock_skew").await else {
        return;
    };
    let ahead = skewed_replica(&pg, "+3s");
    let behind = skewed_replica(&pg, "-3s");
    // The skew is real, and each replica knows its offset from the database's clock.
    let (off_ahead, off_behind) = (offset_seconds(&ahead).await, offset_seconds(&behind).await);
    assert!(
        (off_ahead + 3.0).abs() < 0.1,
        "+3 s replica: offset {off_ahead}"
    );
    assert!(
        (off_behind - 3.0).abs() < 0.1,
        "-3 s replica: offset {off_behind}"
    );
    let (mut ca, mut cb) = (ahead.client().await, behind.client().await);

    // Charges: white moves on the replica ahead, black on the one behind, each after
    // about a second of real thought; 2 s increment.
    let id = "charged";
    let increment: i64 = 2000;
    let mut game = new_game(&mut ca, id, Some((60_000, increment as u64))).await;
    let mut answered = Instant::now();
    let mut sent_before = Instant::now();
    let moves = [
        "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "d2d3", "f8c5",
    ];
    for (ply, mv) in moves.iter().enumerate() {
        let white = ply % 2 == 0;
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let c = if white { &mut ca } else { &mut cb };
        let before = remaining(&game, white);
        let (next, sent, got) = timed_play(c, id, mv).await;
        let charged = before - remaining(&next, white) + increment;
        // The real time between the two stamps lies between these.
        let least = sent.duration_since(answered).as_millis() as i64;
        let most = got.duration_since(sent_before).as_millis() as i64;
        assert!(
            charged >= least - 50 && charged <= most + 50,
            "ply {} ({mv}) on the replica {}: charged {charged} ms for {least}-{most} ms of real thought",
            ply + 1,
            if white { "ahead" } else { "behind" }
        );
        (game, sent_before, answered) = (next, sent, got);
    }

    // Flags: a game armed on each replica (the mover's side then runs out) falls within
    // 100 ms of its real time, never early.
    let db = pg.connect().await;
    for (c, name) in [(&mut ca, "armed-ahead"), (&mut cb, "armed-behind")] {
        new_game(c, name, Some((1500, 0))).await;
        let (moved, _, _) = timed_play(c, name, "e2e4").await;
        let flag = flag_at(&moved);
        let deadline = Instant::now() + Duration::from_secs(10);
        let recorded = loop {
            let row = db
                .query_one(
                    "SELECT status, (extract(epoch from updated_at) * 1000)::bigint \
                     FROM chess_games WHERE id = $1",
                    &[&name],
                )
                .await
                .expect("the row");
            if row.get::<_, String>(0) == "out_of_time" {
                break row.get::<_, i64>(1) as u64;
            }
            assert!(Instant::now() < deadline, "{name}: no flag recorded");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert!(
            recorded >= flag && recorded <= flag + 100,
            "{name}: the flag fell at {flag} (database time) and was recorded at {recorded}"
        );
    }

    // No move after the real flag: the replica behind judges by the database's clock.
    // The arming replica is paused, so only the one behind can decide.
    new_game(&mut ca, "late", Some((1500, 0))).await;
    let (moved, _, _) = timed_play(&mut ca, "late", "e2e4").await;
    let flag = flag_at(&moved);
    // The game is loaded on the replica behind before the pause, as a player's would be.
    cb.get_game(pb::GetGameRequest {
        game_id: "late".into(),
        ..Default::default()
    })
    .await
    .expect("GetGame on the replica behind");
    ahead.signal("STOP");
    let wait = (flag + 30).saturating_sub(wall_now_ms());
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let late = cb.play(play_req("late", "e7e5", None)).await;
    ahead.signal("CONT");
    match late {
        Ok(reply) => panic!(
            "a move {} ms after the real flag was accepted: {:?}",
            wall_now_ms().saturating_sub(flag),
            reply.into_inner().game
        ),
        Err(status) => assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}"),
    }
    let g = super::get(&mut cb, "late").await.expect("GetGame");
    assert_eq!(g.status, pb::GameStatus::OutOfTime as i32);
}
