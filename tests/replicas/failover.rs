//! Issue 24's failover, with a real streaming standby (`pg_basebackup -R`) behind the
//! multi-host URL an operator gives the service (standby first,
//! `target_session_attrs=read-write`, so each replica skips whichever server is read-only):
//! - synchronous replication: `kill -9` of the primary under load and the standby promoted;
//!   the replicas go on by themselves and no acknowledged change is lost;
//! - asynchronous replication with the standby cut off before the kill: the changes it never
//!   received are lost with the old primary (what asynchronous replication costs, see
//!   docs/durability.md), but a replica that still holds them in its cache never writes
//!   them over the changes acknowledged on the promoted standby (the second ABA),
//!   even when it was paused across the failover and so missed every notice of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chess_service::pb;
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;

use super::common::postgres::Replicated;
use super::server::{Server, error_info};
use super::{
    Tally, check_nothing_lost, get, new_game, play, replica_args, spawn_workers, stop_after_fault,
    wait_acks, wait_health,
};

/// Kills the primary and promotes the standby, off the runtime's workers (`pg_ctl promote
/// -w` blocks until the standby takes writes).
async fn fail_over(pair: &Arc<Replicated>) {
    let pair = pair.clone();
    tokio::task::spawn_blocking(move || {
        pair.kill_primary();
        pair.promote();
    })
    .await
    .expect("the failover ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promoted_synchronous_standby_takes_over_under_load_and_loses_nothing() {
    let Some(pair) = Replicated::start("failover_sync", true).await else {
        return;
    };
    let pair = Arc::new(pair);
    let (a, b) = (
        Server::start(&replica_args(&pair.url)),
        Server::start(&replica_args(&pair.url)),
    );
    let urls = vec![a.url(), b.url()];
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let workers = spawn_workers(&urls, 12, "failover", &stop, &tally, true);
    wait_acks(&tally, 300).await;

    let started = Instant::now();
    fail_over(&pair).await;
    let at_failover = tally.acks.load(Ordering::Relaxed);
    eprintln!(
        "primary killed and standby promoted in {:?}, {at_failover} changes acknowledged",
        started.elapsed()
    );
    // Both replicas find the new primary through the same URL, by themselves.
    wait_health(&a, ServingStatus::Serving, Duration::from_secs(20)).await;
    wait_health(&b, ServingStatus::Serving, Duration::from_secs(20)).await;
    wait_acks(&tally, at_failover + 300).await;
    eprintln!("serving again {:?} after the kill", started.elapsed());
    let results = stop_after_fault(&stop, workers, &tally).await;
    // A replica started afterwards (no cache at all) reads the new primary: every change
    // acknowledged before and after the failover is there.
    let fresh = Server::start(&replica_args(&pair.url));
    check_nothing_lost(&fresh, &results).await;
    eprintln!(
        "{} acknowledged moves over {} games ({at_failover} before the failover), {} UNAVAILABLE \
         answers, none lost",
        tally.acks.load(Ordering::Relaxed),
        results.len(),
        tally.unavailable.load(Ordering::Relaxed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_an_asynchronous_failover_no_replica_writes_its_lost_state_over_the_new_primary() {
    let Some(pair) = Replicated::start("failover_async", false).await else {
        return;
    };
    let pair = Arc::new(pair);
    let (f1, f2) = (
        Server::start(&replica_args(&pair.url)),
        Server::start(&replica_args(&pair.url)),
    );
    let (mut c1, mut c2) = (f1.client().await, f2.client().await);

    new_game(&mut c1, "g", None).await;
    for mv in ["e2e4", "e7e5"] {
        play(&mut c1, "g", mv).await;
    }
    // Both replicas hold the game at version 2, and so does the standby.
    assert_eq!(get(&mut c2, "g").await.expect("GetGame on F2").version, 2);
    pair.wait_caught_up().await;

    // The standby is cut off; the primary acknowledges two more moves it never receives.
    pair.detach_standby().await;
    for mv in ["g1f3", "b8c6"] {
        play(&mut c1, "g", mv).await;
    }
    let lost = get(&mut c1, "g").await.expect("GetGame on F1");
    assert_eq!((lost.version, lost.moves.len()), (4, 4));
    // F2 heard of them too (the change feed), and reads them at version 4.
    assert_eq!(get(&mut c2, "g").await.expect("GetGame on F2").version, 4);

    // F1 is paused across the failover (SIGSTOP), so it hears nothing of what follows.
    f1.signal("STOP");
    fail_over(&pair).await;
    wait_health(&f2, ServingStatus::Serving, Duration::from_secs(20)).await;

    // The promoted standby holds version 2: F2 serves that, not what it heard before.
    let promoted = get(&mut c2, "g")
        .await
        .expect("GetGame on F2 after the failover");
    assert_eq!(
        promoted.moves,
        ["e2e4", "e7e5"],
        "F2 served a state the new primary does not hold"
    );
    // F2 plays d4 exd4 there: version 4 again, with other moves.
    for mv in ["d2d4", "e5d4"] {
        play(&mut c2, "g", mv).await;
    }

    // F1 wakes up remembering e4 e5 Nf3 Nc6 at version 4, its change feed still on the dead
    // primary. Bc4 with expected_version 4, sent at once, must land on the new primary's
    // game (where it is legal too) or be refused; never on F1's lost one.
    f1.signal("CONT");
    // Retried while UNAVAILABLE (F1 may first meet its dead connections), as a caller
    // would: the retry with the same expected_version is safe.
    let deadline = Instant::now() + Duration::from_secs(20);
    let answer = loop {
        let answer = c1
            .play(pb::PlayRequest {
                game_id: "g".into(),
                r#move: "f1c4".into(),
                expected_version: Some(4),
                ..Default::default()
            })
            .await;
        match &answer {
            Err(s) if s.code() == Code::Unavailable && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            _ => break answer,
        }
    };
    let fresh = Server::start(&replica_args(&pair.url));
    let stored = get(&mut fresh.client().await, "g")
        .await
        .expect("GetGame on a fresh replica")
        .moves;
    assert_eq!(
        stored[..4],
        ["e2e4", "e7e5", "d2d4", "e5d4"],
        "the moves acknowledged on the promoted standby were overwritten: {stored:?}"
    );
    match answer {
        Ok(r) => {
            let g = r.into_inner().game.expect("a game");
            assert_eq!(g.moves, ["e2e4", "e7e5", "d2d4", "e5d4", "f1c4"]);
            assert_eq!(stored, g.moves);
        }
        Err(s) => {
            assert_eq!(s.code(), Code::Aborted, "{s:?}");
            assert_eq!(error_info(&s).reason, "VERSION_MISMATCH", "{s:?}");
            assert_eq!(stored.len(), 4, "{stored:?}");
        }
    }
    // And F1 now reads the new primary's game.
    let seen = get(&mut c1, "g").await.expect("GetGame on F1").moves;
    assert_eq!(
        seen, stored,
        "F1 still serves the game lost with the old primary"
    );
}
