//! The PostgreSQL store on its own (no server): schema creation by replicas starting at
//! once, create/AlreadyExists, the version compare-and-set (alone and in a batch of
//! saves), the change feed across stores, and the flag sweep.

use std::sync::Arc;
use std::time::Duration;

use chess_service::lifecycle::{Match, Status, TimeControl};
use chess_service::rules::{Position, Variant};
use chess_service::store::{
    GameMeta, KeyRange, PgConfig, PgStore, Stamp, Start, StatusFilter, StoreChange, StoreError,
};

use super::postgres::Pg;
use super::wall_now_ms;

fn meta(id: &str, created_unix_ms: u64) -> GameMeta {
    GameMeta {
        id: id.into(),
        variant: Variant::Standard.into(),
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

    let m = meta("g1", wall_now_ms());
    let mut game = Match::untimed(Position::new());
    a.create(&m, &game).await.expect("create");
    assert!(matches!(
        b.create(&m, &game).await,
        Err(StoreError::AlreadyExists { .. })
    ));

    game.play(wall_now_ms(), None, "e2e4").expect("legal");
    a.save(&m, &game, Stamp::version(0))
        .await
        .expect("save at version 0");
    // A replica that still holds version 0 loses.
    let mut stale = Match::untimed(Position::new());
    stale.play(wall_now_ms(), None, "d2d4").expect("legal");
    match b.save(&m, &stale, Stamp::version(0)).await {
        Err(StoreError::Conflict { id, current }) => {
            assert_eq!(id, "g1");
            assert_eq!(current, 1);
        }
        other => panic!("want a conflict, got {other:?}"),
    }
    let loaded = b.load("g1").await.expect("load").expect("present");
    assert_eq!(loaded.game.version(), 1);
    assert_eq!(loaded.game.game().san_moves(), vec!["e4".to_string()]);
    let stamp = b.stored_stamp("g1").await.expect("stamp").expect("stored");
    assert_eq!(stamp.version, 1);
    assert_eq!(b.stored_stamp("nope").await.expect("stamp"), None);
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

    // A's cached encoding of g1 (after e4) goes stale when B takes the move back and plays
    // another; A's next save, of B's game and one more move, still stores exactly that.
    let mut other = b.load("g1").await.expect("load").expect("present").game;
    other.undo(wall_now_ms(), None).expect("undo");
    other.play(wall_now_ms(), None, "d2d4").expect("legal");
    b.save(&m, &other, Stamp::version(1))
        .await
        .expect("B saves version 3");
    other.play(wall_now_ms(), None, "d7d5").expect("legal");
    a.save(&m, &other, Stamp::version(3))
        .await
        .expect("A saves version 4");
    let back = b.load("g1").await.expect("load").expect("present");
    assert_eq!(back.game.version(), 4);
    assert_eq!(
        back.game.game().san_moves(),
        vec!["d4".to_string(), "d5".to_string()]
    );
    assert!(*a.health().borrow());
}

/// Plays `moves` (UCI) on `game`, saving each move on `store` with the stamp it replaces,
/// as a replica's registry does; returns the stamp stored last.
async fn play_saved(store: &PgStore, m: &GameMeta, game: &mut Match, moves: &[&str]) -> Stamp {
    let mut stamp = store
        .stored_stamp(&m.id)
        .await
        .expect("stamp")
        .expect("stored");
    for mv in moves {
        game.play(wall_now_ms(), None, mv).expect("legal");
        let token = store.save(m, game, stamp).await.expect("save");
        stamp = Stamp {
            version: game.version(),
            token: Some(token),
        };
    }
    stamp
}

/// Issue 24's ABA on the store: replica A holds game g at version 3 (e4 e5 Nf3); replica
/// B deletes g, creates it again and brings it to version 3 with other moves (d4 d5 c4).
/// The two states have the same version and different stamps, and A's save over its old
/// state (Nc6 at version 3) is a conflict: never accepted over B's acknowledged moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_created_again_at_the_same_version_has_another_stamp_and_refuses_the_old_one() {
    let Some(pg) = Pg::start("store_aba").await else {
        return;
    };
    let (a, b) = tokio::join!(open(&pg), open(&pg));
    let m = meta("g", wall_now_ms());
    let mut ours = Match::untimed(Position::new());
    let created = a.create(&m, &ours).await.expect("create");
    assert_eq!(
        a.stored_stamp("g").await.expect("stamp"),
        Some(Stamp {
            version: 0,
            token: Some(created)
        }),
        "create returns the token it stored"
    );
    let stale = play_saved(&a, &m, &mut ours, &["e2e4", "e7e5", "g1f3"]).await;
    assert_eq!(stale.version, 3);

    assert_eq!(b.delete("g", None).await.expect("delete"), Some(3));
    let m2 = meta("g", wall_now_ms());
    let mut theirs = Match::untimed(Position::new());
    b.create(&m2, &theirs).await.expect("created again");
    let fresh = play_saved(&b, &m2, &mut theirs, &["d2d4", "d7d5", "c2c4"]).await;
    assert_eq!(fresh.version, stale.version, "the same version again");
    assert_ne!(fresh, stale, "but another stamp");
    assert_eq!(a.stored_stamp("g").await.expect("stamp"), Some(fresh));
    let listed = a
        .list(&KeyRange::all(), StatusFilter::All, None, 10)
        .await
        .expect("list");
    assert_eq!(
        listed.games.iter().map(|g| g.stamp()).collect::<Vec<_>>(),
        [fresh],
        "a listing carries the stamp"
    );

    // A's Nc6 on its stale state: a conflict at the stored version, nothing written.
    let mut stale_game = ours.clone();
    stale_game.play(wall_now_ms(), None, "b8c6").expect("legal");
    match a.save(&m, &stale_game, stale).await {
        Err(StoreError::Conflict { id, current }) => {
            assert_eq!((id.as_str(), current), ("g", 3));
        }
        other => panic!("a save over the old state must conflict, got {other:?}"),
    }
    let loaded = a.load("g").await.expect("load").expect("present");
    assert_eq!(loaded.stamp(), fresh, "a load carries the stamp");
    assert_eq!(loaded.game.game().san_moves(), ["d4", "d5", "c4"]);

    // On the stored state, Nc6 lands on B's history, with a fresh token.
    let mut on_theirs = loaded.game.clone();
    on_theirs.play(wall_now_ms(), None, "b8c6").expect("legal");
    let token = a.save(&m2, &on_theirs, fresh).await.expect("save");
    assert_ne!(Some(token), fresh.token, "every write draws a fresh token");
    let back = b.load("g").await.expect("load").expect("present");
    assert_eq!(back.game.game().san_moves(), ["d4", "d5", "c4", "Nc6"]);
    assert_eq!(back.token, Some(token));
}

/// Schema step 4 on a database of the step before, with games in it (as an upgrade
/// finds it): every existing row gets its own random token, and the games load and take
/// saves with their stamps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_step_gives_existing_games_their_own_tokens() {
    let Some(pg) = Pg::start("store_token_step").await else {
        return;
    };
    let store = open(&pg).await;
    for id in ["old1", "old2", "old3"] {
        store
            .create(&meta(id, wall_now_ms()), &Match::untimed(Position::new()))
            .await
            .expect("create");
    }
    drop(store);
    // Back to the schema of step 3, rows included.
    let db = pg.connect().await;
    db.batch_execute(
        "ALTER TABLE chess_games DROP COLUMN token;
         DELETE FROM chess_schema_migrations WHERE version = 4",
    )
    .await
    .expect("back to step 3");

    let store = open(&pg).await;
    let tokens: Vec<i64> = db
        .query("SELECT token FROM chess_games ORDER BY id", &[])
        .await
        .expect("tokens")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(tokens.len(), 3);
    let distinct: std::collections::HashSet<i64> = tokens.iter().copied().collect();
    assert_eq!(distinct.len(), 3, "each row its own token: {tokens:?}");
    let loaded = store.load("old2").await.expect("load").expect("present");
    let stamp = loaded.stamp();
    assert!(stamp.token.is_some());
    let mut game = loaded.game;
    game.play(wall_now_ms(), None, "e2e4").expect("legal");
    store
        .save(&meta("old2", 0), &game, stamp)
        .await
        .expect("a save with the stamp the step gave");
}

/// Saves queued together go in one statement and one commit, yet each keeps its own
/// compare-and-set: a batch with a stale save and two saves of one game at one version
/// writes every other game, exactly one of the two, and none of the stale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saves_queued_together_share_a_commit_and_each_keeps_its_compare_and_set() {
    let Some(pg) = Pg::start("store_batch").await else {
        return;
    };
    let store = Arc::new(open(&pg).await);
    const GAMES: usize = 40;
    let fresh = Match::untimed(Position::new());
    for i in 0..GAMES {
        store
            .create(&meta(&format!("b{i:02}"), wall_now_ms()), &fresh)
            .await
            .expect("create");
    }
    // Game b00 moves to version 1 first; a save still expecting 0 is then stale.
    let mut moved = fresh.clone();
    moved.play(wall_now_ms(), None, "g1f3").expect("legal");
    store
        .save(&meta("b00", 0), &moved, Stamp::version(0))
        .await
        .expect("save");

    let db = pg.connect().await;
    // Each writing transaction takes a transaction id (reads do not): the ids taken
    // meanwhile count the commits that wrote. (The statistics views lag by up to a second.)
    let xid = || async {
        let row = db
            .query_one("SELECT pg_current_xact_id()::text::bigint", &[])
            .await
            .expect("pg_current_xact_id");
        row.get::<_, i64>(0)
    };
    let before = xid().await;
    // Every save at once: b00 stale (expects 0, stored 1), b01 twice at version 0 with
    // different moves, every other game once.
    let mut saves = Vec::new();
    for (i, mv) in (0..GAMES)
        .map(|i| (i, "e2e4"))
        .chain([(0, "d2d4"), (1, "c2c4")])
    {
        let store = store.clone();
        let mut game = fresh.clone();
        game.play(wall_now_ms(), None, mv).expect("legal");
        saves.push(tokio::spawn(async move {
            let id = format!("b{i:02}");
            let result = store.save(&meta(&id, 0), &game, Stamp::version(0)).await;
            (id, mv, result)
        }));
    }
    let mut results = Vec::new();
    for save in saves {
        results.push(save.await.expect("the save task"));
    }
    // Our own reading took one id.
    let spent = xid().await - before - 1;

    let mut b01_won = Vec::new();
    for (id, mv, result) in &results {
        match (id.as_str(), result) {
            ("b00", Err(StoreError::Conflict { current, .. })) => assert_eq!(*current, 1),
            ("b00", other) => panic!("the stale save of b00 ({mv}) gave {other:?}"),
            ("b01", Ok(_)) => b01_won.push(*mv),
            ("b01", Err(StoreError::Conflict { current, .. })) => assert_eq!(*current, 1),
            (_, Ok(_)) => {}
            (id, other) => panic!("the save of {id} ({mv}) gave {other:?}"),
        }
    }
    assert_eq!(
        b01_won.len(),
        1,
        "exactly one save of b01 wins: {b01_won:?}"
    );
    let b00 = store.load("b00").await.expect("load").expect("present");
    assert_eq!(b00.game.game().san_moves(), vec!["Nf3".to_string()]);
    let b01 = store.load("b01").await.expect("load").expect("present");
    let want = if b01_won[0] == "e2e4" { "e4" } else { "c4" };
    assert_eq!(b01.game.game().san_moves(), vec![want.to_string()]);
    for i in 2..GAMES {
        let id = format!("b{i:02}");
        assert_eq!(
            store
                .stored_stamp(&id)
                .await
                .expect("stamp")
                .map(|s| s.version),
            Some(1),
            "{id}"
        );
    }
    // 42 saves in far fewer writing commits than saves (the announcements take some too).
    assert!(
        spent < 20,
        "{spent} writing commits for {} saves: the saves were not batched",
        results.len()
    );
    eprintln!("{} saves in {spent} writing commits", results.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_records_a_fallen_flag_once() {
    let Some(pg) = Pg::start("store_sweep").await else {
        return;
    };
    let (a, b) = tokio::join!(open(&pg), open(&pg));
    let created = wall_now_ms() - 1000;
    let m = meta("timed", created);
    let control = TimeControl::new(100, 0).expect("a time control");
    // Created a second ago with 100 ms a side: white's flag has fallen.
    let game = Match::timed(Position::new(), control, created);
    let flag = game.flag_time().expect("running");
    a.create(&m, &game).await.expect("create");
    // Not due yet at the flag time minus one: nothing to do.
    assert!(a.sweep_flags(flag - 1, 10).await.expect("sweep").is_empty());
    let before = a
        .stored_stamp("timed")
        .await
        .expect("stamp")
        .expect("stored");
    let (ra, rb) = tokio::join!(
        a.sweep_flags(wall_now_ms(), 10),
        b.sweep_flags(wall_now_ms(), 10)
    );
    let mut changed = ra.expect("sweep a");
    changed.extend(rb.expect("sweep b"));
    assert_eq!(changed, vec!["timed".to_string()], "recorded exactly once");
    let loaded = b.load("timed").await.expect("load").expect("present");
    assert_eq!(loaded.game.version(), 1);
    assert_ne!(
        loaded.token, before.token,
        "the sweep's write draws a fresh token"
    );
    assert_eq!(
        loaded.game.status(),
        Status::OutOfTime {
            winner: chess_service::rules::Color::Black
        }
    );
    // Over: no deadline left to sweep.
    assert!(
        a.sweep_flags(wall_now_ms(), 10)
            .await
            .expect("sweep")
            .is_empty()
    );
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
    let m = meta("full", wall_now_ms());
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
    match store.save(&m, &moved, Stamp::version(stored)).await {
        Err(StoreError::HistoryFull { id, limit, .. }) => {
            assert_eq!((id.as_str(), limit), ("full", HISTORY_LIMIT));
        }
        other => panic!("want HistoryFull, got {other:?}"),
    }
    assert_eq!(
        store
            .stored_stamp("full")
            .await
            .expect("stamp")
            .map(|s| s.version),
        Some(stored)
    );
    moved.resign(0, Color::White).expect("resign");
    store
        .save(&m, &moved, Stamp::version(stored))
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
