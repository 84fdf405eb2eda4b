//! Issue 24's locks and stalls, with real processes:
//! - a row held locked by another session (an open transaction left idle, as a paused
//!   replica's) delays only its own game: unrelated Plays on the same replica all succeed
//!   at once, and the held game's Play answers UNAVAILABLE within the timeout, then
//!   succeeds once the row is free. Before the batch skipped locked rows, the held row
//!   stalled the replica's single save batch and every Play behind it failed.
//! - a replica paused by SIGSTOP while its flags fall: another replica records every flag
//!   within a second of its time, and Plays on the healthy replica all succeed.
//! - after a cut heals, the connections pooled before it stay silent (as connections in
//!   TCP's retransmission back-off do): once health says SERVING, calls succeed at once,
//!   on fresh connections.

use std::time::{Duration, Instant};

use chess_service::pb;
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;

use super::common::blackhole::{Blackhole, upstream_of};
use super::server::Server;
use super::{
    Client, Pg, new_game, play, play_req, replica, replica_args, wait_health, wall_now_ms,
};

/// Plays `moves` (UCI, in order) in game `id`, each of which must succeed within `limit`.
async fn play_all_within(c: &mut Client, id: &str, moves: &[&str], limit: Duration) {
    for mv in moves {
        let start = Instant::now();
        let outcome = c.play(play_req(id, mv, None)).await;
        let took = start.elapsed();
        assert!(outcome.is_ok(), "Play {mv} on {id}: {outcome:?}");
        assert!(took < limit, "Play {mv} on {id} took {took:?}");
    }
}

const KNIGHTS: [&str; 8] = [
    "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_locked_by_another_session_delays_only_its_own_game() {
    let Some(pg) = Pg::start("stalls_locked_row").await else {
        return;
    };
    let b = replica(&pg);
    let mut c = b.client().await;
    new_game(&mut c, "held", None).await;
    play(&mut c, "held", "e2e4").await;
    for i in 0..4 {
        new_game(&mut c, &format!("free{i}"), None).await;
    }

    // Another session takes the row and sits idle in its transaction.
    let holder = pg.connect().await;
    holder
        .batch_execute("BEGIN; SELECT id FROM chess_games WHERE id = 'held' FOR UPDATE")
        .await
        .expect("the row is taken");

    // The held game's Play waits for its row; meanwhile the other games play on.
    let mut held_client = c.clone();
    let held_play = tokio::spawn(async move {
        let start = Instant::now();
        let outcome = held_client.play(play_req("held", "e7e5", None)).await;
        (outcome, start.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut others = Vec::new();
    for i in 0..4 {
        let mut c = c.clone();
        others.push(tokio::spawn(async move {
            play_all_within(
                &mut c,
                &format!("free{i}"),
                &KNIGHTS,
                Duration::from_millis(500),
            )
            .await;
        }));
    }
    for other in others {
        other.await.expect("the other games' Plays");
    }
    let (outcome, took) = held_play.await.expect("the held game's Play");
    let status = outcome.expect_err("the held game cannot be written while its row is held");
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert!(
        took < Duration::from_millis(1800),
        "the held game's Play answered after {took:?} (timeout 1 s)"
    );

    // Free again: the move goes through, once.
    holder.batch_execute("ROLLBACK").await.expect("released");
    let game = play(&mut c, "held", "e7e5").await;
    assert_eq!(game.san_moves, ["e4", "e5"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_paused_while_flags_fall_blocks_no_other() {
    let Some(pg) = Pg::start("stalls_sigstop").await else {
        return;
    };
    let a = replica(&pg);
    let b = replica(&pg);
    let (mut ca, mut cb) = (a.client().await, b.client().await);
    // Timed games moved on A (A arms their flag timers and sweeps them), falling within
    // about 150 ms of each other.
    const GAMES: usize = 24;
    let mut flags = Vec::new();
    for i in 0..GAMES {
        let id = format!("timed{i}");
        new_game(&mut ca, &id, Some((1500, 0))).await;
        let g = play(&mut ca, &id, "e2e4").await;
        let clock = g.clock.expect("a clock");
        flags.push((id, clock.as_of_unix_ms + clock.black_remaining_ms));
    }
    for i in 0..4 {
        new_game(&mut cb, &format!("busy{i}"), None).await;
    }
    // A stops just before the first flag falls, for longer than any of them needs.
    let first = flags.iter().map(|(_, at)| *at).min().unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(
        first.saturating_sub(wall_now_ms() + 30),
    ))
    .await;
    a.signal("STOP");
    let stopped = Instant::now();

    // Unrelated Plays on B go on meanwhile.
    let mut plays = Vec::new();
    for i in 0..4 {
        let mut cb = cb.clone();
        plays.push(tokio::spawn(async move {
            play_all_within(
                &mut cb,
                &format!("busy{i}"),
                &KNIGHTS,
                Duration::from_millis(500),
            )
            .await;
        }));
    }

    // Every flag is recorded (by B's sweep) within a second of its time.
    let db = pg.connect().await;
    let last = flags.iter().map(|(_, at)| *at).max().unwrap_or(0);
    loop {
        let rows = db
            .query(
                "SELECT id, version, (extract(epoch from updated_at) * 1000)::bigint \
                 FROM chess_games WHERE status = 'out_of_time'",
                &[],
            )
            .await
            .expect("the flagged rows");
        if rows.len() == GAMES {
            for row in rows {
                let id: String = row.get(0);
                let version: i64 = row.get(1);
                let at = row.get::<_, i64>(2) as u64;
                let flag = flags
                    .iter()
                    .find(|(g, _)| *g == id)
                    .map_or(0, |(_, at)| *at);
                assert_eq!(
                    version, 2,
                    "{id}: the flag fall is one event after the move"
                );
                assert!(
                    at <= flag + 1000,
                    "{id}'s flag was recorded {} ms after it fell",
                    at.saturating_sub(flag)
                );
            }
            break;
        }
        assert!(
            wall_now_ms() < last + 5000,
            "{} of {GAMES} flags recorded 5 s after the last fell",
            rows.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for p in plays {
        p.await.expect("B's Plays");
    }
    assert!(
        stopped.elapsed() < Duration::from_secs(8),
        "A was paused throughout"
    );

    // A comes back: it records nothing twice, and answers the flagged games.
    a.signal("CONT");
    wait_health(&a, ServingStatus::Serving, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let versions = db
        .query(
            "SELECT max(version) FROM chess_games WHERE id LIKE 'timed%'",
            &[],
        )
        .await
        .expect("the versions");
    assert_eq!(
        versions[0].get::<_, i64>(0),
        2,
        "no flag fall recorded twice"
    );
    let g = super::get(&mut ca, "timed0").await.expect("GetGame on A");
    assert_eq!(g.status, pb::GameStatus::OutOfTime as i32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_cut_heals_calls_succeed_once_health_says_serving() {
    let Some(pg) = Pg::start("stalls_wedged").await else {
        return;
    };
    let hole = Blackhole::start(upstream_of(&pg.url)).await;
    let a = Server::start(&replica_args(&hole.url(&pg.url)));
    let mut c = a.client().await;
    // Several games played at once, so the pool holds several connections.
    for i in 0..6 {
        new_game(&mut c, &format!("g{i}"), None).await;
    }
    let mut warm = Vec::new();
    for i in 0..6 {
        let mut c = c.clone();
        warm.push(tokio::spawn(async move {
            play_all_within(
                &mut c,
                &format!("g{i}"),
                &KNIGHTS[..4],
                Duration::from_secs(2),
            )
            .await;
        }));
    }
    for w in warm {
        w.await.expect("warm-up Plays");
    }

    hole.cut();
    // Calls during the cut fail in time (and leave their connections mid-statement).
    for i in 0..3 {
        let start = Instant::now();
        let refused = c.play(play_req(&format!("g{i}"), "g1f3", None)).await;
        let status = refused.expect_err("no Play while cut off");
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
        assert!(start.elapsed() < Duration::from_millis(1800));
    }
    wait_health(&a, ServingStatus::NotServing, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;

    // The old connections never come back; new ones pass.
    hole.heal_new_only();
    wait_health(&a, ServingStatus::Serving, Duration::from_secs(10)).await;
    let mut after = Vec::new();
    for i in 0..6 {
        let mut c = c.clone();
        after.push(tokio::spawn(async move {
            play_all_within(
                &mut c,
                &format!("g{i}"),
                &KNIGHTS[4..],
                Duration::from_millis(900),
            )
            .await;
        }));
    }
    for a in after {
        a.await.expect("Plays after the heal");
    }
}
