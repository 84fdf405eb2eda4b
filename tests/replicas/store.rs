//! The PostgreSQL store on its own (no server): schema creation by replicas starting at
//! once, create/AlreadyExists, the version compare-and-set, the change feed across
//! stores, and the flag sweep.

use std::time::Duration;

use chess_service::lifecycle::{Match, Status, TimeControl};
use chess_service::rules::{Position, Variant};
use chess_service::store::{GameMeta, PgConfig, PgStore, Start, StoreChange, StoreError};

use super::now_ms;
use super::postgres::Pg;

fn meta(id: &str, created_unix_ms: u64) -> GameMeta {
    GameMeta {
        id: id.into(),
        variant: Variant::Standard,
        start: Start::Standard,
        created_unix_ms,
        tags: chess_service::lifecycle::Tags::none(),
    }
}

async fn open(pg: &Pg) -> PgStore {
    let mut config = PgConfig::new(pg.url.clone());
    // Only the test sweeps (the background sweeper's first sweep is one interval after
    // the open).
    config.sweep_interval = Duration::from_secs(3600);
    PgStore::open(config).await.expect("the store opens")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_orders_changes_by_version_and_announces_them() {
    let Some(pg) = Pg::start("store_cas").await else {
        return;
    };
    // Four replicas create the schema at once: the advisory lock makes that safe.
    let (a, b, c, d) = tokio::join!(open(&pg), open(&pg), open(&pg), open(&pg));
    drop((c, d));
    let mut feed = b.changes();

    let m = meta("g1", now_ms());
    let mut game = Match::untimed(Position::new());
    a.create(&m, &game).await.expect("create");
    assert!(matches!(
        b.create(&m, &game).await,
        Err(StoreError::AlreadyExists { .. })
    ));

    game.play(now_ms(), None, "e2e4").expect("legal");
    a.save(&m, &game, 0).await.expect("save at version 0");
    // A replica that still holds version 0 loses.
    let mut stale = Match::untimed(Position::new());
    stale.play(now_ms(), None, "d2d4").expect("legal");
    match b.save(&m, &stale, 0).await {
        Err(StoreError::Conflict { id, current }) => {
            assert_eq!(id, "g1");
            assert_eq!(current, 1);
        }
        other => panic!("want a conflict, got {other:?}"),
    }
    let loaded = b.load("g1").await.expect("load").expect("present");
    assert_eq!(loaded.game.version(), 1);
    assert_eq!(loaded.game.game().san_moves(), vec!["e4".to_string()]);
    assert_eq!(b.stored_version("g1").await.expect("version"), Some(1));
    assert_eq!(b.stored_version("nope").await.expect("version"), None);
    assert!(b.load("nope").await.expect("load").is_none());

    // Both committed changes reach the other store's feed, in order.
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match tokio::time::timeout(Duration::from_secs(2), feed.recv()).await {
            Ok(Ok(StoreChange::Game { id, version })) => seen.push((id, version)),
            Ok(Ok(StoreChange::Resync)) => {}
            other => panic!("the feed stopped: {other:?} after {seen:?}"),
        }
    }
    assert_eq!(seen, vec![("g1".to_string(), 0), ("g1".to_string(), 1)]);
    assert!(*a.health().borrow());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_records_a_fallen_flag_once() {
    let Some(pg) = Pg::start("store_sweep").await else {
        return;
    };
    let (a, b) = tokio::join!(open(&pg), open(&pg));
    let created = now_ms() - 1000;
    let m = meta("timed", created);
    let control = TimeControl::new(100, 0).expect("a time control");
    // Created a second ago with 100 ms a side: white's flag has fallen.
    let game = Match::timed(Position::new(), control, created);
    let flag = game.flag_time().expect("running");
    a.create(&m, &game).await.expect("create");
    // Not due yet at the flag time minus one: nothing to do.
    assert!(a.sweep_flags(flag - 1, 10).await.expect("sweep").is_empty());
    let (ra, rb) = tokio::join!(a.sweep_flags(now_ms(), 10), b.sweep_flags(now_ms(), 10));
    let mut changed = ra.expect("sweep a");
    changed.extend(rb.expect("sweep b"));
    assert_eq!(changed, vec!["timed".to_string()], "recorded exactly once");
    let loaded = b.load("timed").await.expect("load").expect("present");
    assert_eq!(loaded.game.version(), 1);
    assert_eq!(
        loaded.game.status(),
        Status::OutOfTime {
            winner: chess_service::rules::Color::Black
        }
    );
    // Over: no deadline left to sweep.
    assert!(a.sweep_flags(now_ms(), 10).await.expect("sweep").is_empty());
}

/// The history limit holds on the shared store too (the same record and the same check
/// as the embedded store): a move past it is refused, an ending is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_history_refuses_moves_but_not_endings() {
    use chess_service::rules::Color;
    use chess_service::store::codec::{self, HISTORY_LIMIT};
    let Some(pg) = Pg::start("store_history").await else {
        return;
    };
    let store = open(&pg).await;
    let m = meta("full", now_ms());
    let mut game = Match::untimed(Position::new());
    loop {
        let len = codec::encode(&m, &game).expect("encodes").len();
        if len + 8 > HISTORY_LIMIT {
            break;
        }
        for _ in 0..(HISTORY_LIMIT - len) / 4 + 1 {
            game.play(0, None, "e4").expect("legal");
            game.undo(0, None).expect("a take-back");
        }
    }
    store.create(&m, &game).await.expect("create");
    let stored = game.version();
    let mut moved = game.clone();
    while codec::encode(&m, &moved).expect("encodes").len() <= HISTORY_LIMIT {
        moved.play(0, None, "e4").expect("legal");
        moved.undo(0, None).expect("a take-back");
    }
    match store.save(&m, &moved, stored).await {
        Err(StoreError::HistoryFull { id, limit, .. }) => {
            assert_eq!((id.as_str(), limit), ("full", HISTORY_LIMIT));
        }
        other => panic!("want HistoryFull, got {other:?}"),
    }
    assert_eq!(
        store.stored_version("full").await.expect("version"),
        Some(stored)
    );
    moved.resign(0, Color::White).expect("resign");
    store
        .save(&m, &moved, stored)
        .await
        .expect("an ending fits");
    let loaded = store.load("full").await.expect("load").expect("present");
    assert_eq!(
        loaded.game.status(),
        Status::Resignation {
            winner: Color::Black
        }
    );
}

/// Listing and deleting keep the contract every store keeps (`common::catalog`); a delete
/// is announced to the other replicas, which drop the game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_and_deleting_keep_the_store_contract_and_deletes_are_announced() {
    let Some(pg) = Pg::start("store_catalog").await else {
        return;
    };
    let (a, b) = tokio::join!(open(&pg), open(&pg));
    let mut feed = b.changes();
    crate::common::catalog::check_catalog(&a).await;
    // Both deletes of the contract reach the other replica's feed.
    let mut deleted = Vec::new();
    while deleted.len() < 2 {
        match tokio::time::timeout(Duration::from_secs(2), feed.recv()).await {
            Ok(Ok(StoreChange::Deleted { id })) => deleted.push(id),
            Ok(Ok(_)) => {}
            other => panic!("the feed stopped: {other:?} after {deleted:?}"),
        }
    }
    assert_eq!(deleted, ["a9", "b"]);
    assert!(b.load("b").await.expect("load").is_none());
}
