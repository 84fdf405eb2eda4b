use std::time::Duration;

use super::*;
use crate::lifecycle::{Refusal, Start};
use crate::rules::{Position, Variant};
use crate::store::scripted::{Call, ScriptedStore};
use crate::store::{KeyRange, StatusFilter, StoreChange};

fn meta(id: &str) -> GameMeta {
    GameMeta {
        id: id.into(),
        variant: Variant::Standard.into(),
        start: Start::Standard,
        created_unix_ms: 0,
        tags: crate::lifecycle::Tags::none(),
    }
}

fn registry(cache: usize) -> Arc<Registry> {
    Arc::new(Registry::new(Arc::new(ScriptedStore::new()), cache))
}

/// A caller's own error type, as the service has one: the registry's errors reach it
/// through `From`.
#[derive(Debug, PartialEq)]
enum CallError {
    Registry(RegistryError),
    Refused(Refusal),
    PlyMismatch { expected: usize, current: usize },
    Exists,
}

impl From<RegistryError> for CallError {
    fn from(e: RegistryError) -> CallError {
        CallError::Registry(e)
    }
}

async fn create(registry: &Arc<Registry>, id: &str) -> Result<bool, CallError> {
    registry
        .create(
            meta(id),
            Match::untimed(Position::new()),
            |_| Err(CallError::Exists),
            |e, _| e.game().ply(),
        )
        .await
        .map(|(_, created)| created)
}

async fn play(registry: &Arc<Registry>, id: &str, uci: &'static str) -> Result<usize, CallError> {
    registry
        .update(id.to_string(), move |e, now| {
            e.play(now, None, uci).map_err(CallError::Refused)?;
            Ok(e.game().ply())
        })
        .await
}

async fn ply(registry: &Arc<Registry>, id: &str) -> Result<usize, RegistryError> {
    registry.read(id, |e, _| e.game().ply()).await
}

#[tokio::test]
async fn cache_stays_bounded_and_evicted_games_reload_from_the_store() {
    let registry = registry(4);
    for i in 0..20 {
        let id = format!("g{i}");
        assert!(create(&registry, &id).await.unwrap());
        assert_eq!(play(&registry, &id, "e2e4").await.unwrap(), 1);
    }
    assert!(
        registry.cached() <= 4,
        "cache holds {} games",
        registry.cached()
    );
    // The first game was evicted long ago; it comes back from the store with its move.
    assert_eq!(ply(&registry, "g0").await.unwrap(), 1);
}

#[tokio::test]
async fn a_game_in_use_is_never_evicted() {
    let registry = registry(1);
    create(&registry, "held").await.unwrap();
    let held = registry.lock_loaded("held").await.unwrap();
    for i in 0..5 {
        create(&registry, &format!("other{i}")).await.unwrap();
    }
    // Still the same cell: a second lock attempt must wait for ours.
    let cell = registry.cache.cell("held").unwrap();
    assert!(
        cell.try_lock().is_err(),
        "the held game's cell was replaced"
    );
    drop(held);
}

#[tokio::test]
async fn unknown_ids_take_no_cache_slot_from_a_real_game() {
    let store = Arc::new(ScriptedStore::new());
    let registry = Arc::new(Registry::new(store.clone(), 4));
    for i in 0..4 {
        create(&registry, &format!("real{i}")).await.unwrap();
    }
    for i in 0..100 {
        let id = format!("unknown{i}");
        assert_eq!(
            ply(&registry, &id).await,
            Err(RegistryError::NotFound { id: id.clone() })
        );
        assert!(matches!(
            play(&registry, &id, "e2e4").await,
            Err(CallError::Registry(RegistryError::NotFound { .. }))
        ));
        assert!(registry.subscribe(&id, 0).await.is_err());
    }
    assert_eq!(registry.cached(), 4);
    let loads = store.calls(Call::Load);
    for i in 0..4 {
        assert_eq!(ply(&registry, &format!("real{i}")).await.unwrap(), 0);
    }
    assert_eq!(
        store.calls(Call::Load),
        loads,
        "a real game was evicted and read again"
    );
}

#[tokio::test]
async fn unknown_games_are_not_found_and_existing_ids_are_kept() {
    let registry = registry(8);
    assert!(matches!(
        ply(&registry, "nope").await,
        Err(RegistryError::NotFound { .. })
    ));
    assert!(create(&registry, "x").await.unwrap());
    assert_eq!(create(&registry, "x").await, Err(CallError::Exists));
    let (ply, created) = registry
        .create(
            meta("x"),
            Match::untimed(Position::new()),
            |_| Ok::<(), CallError>(()),
            |e, _| e.game().ply(),
        )
        .await
        .unwrap();
    assert_eq!((ply, created), (0, false));
}

#[tokio::test]
async fn a_failed_write_is_not_visible_afterwards() {
    // The store's writes fail: the change must not stay visible.
    let store = Arc::new(ScriptedStore::new());
    store.fail(Call::Save, StoreError::Io("disk full".into()));
    let registry = Arc::new(Registry::new(store, 8));
    create(&registry, "f").await.unwrap();
    let err = play(&registry, "f", "e2e4")
        .await
        .expect_err("the save fails");
    assert!(
        matches!(
            err,
            CallError::Registry(RegistryError::Store(StoreError::Io(_)))
        ),
        "{err:?}"
    );
    assert_eq!(ply(&registry, "f").await.unwrap(), 0);
}

#[tokio::test]
async fn a_damaged_record_is_data_loss_for_that_game_only() {
    // The store has one damaged record.
    let store = Arc::new(ScriptedStore::new());
    store.fail_game(
        Call::Load,
        "damaged",
        StoreError::DataLoss {
            id: "damaged".into(),
            reason: "checksum mismatch".into(),
        },
    );
    let registry = Arc::new(Registry::new(store, 8));
    create(&registry, "fine").await.unwrap();
    let err = ply(&registry, "damaged")
        .await
        .expect_err("the record is damaged");
    assert!(matches!(
        err,
        RegistryError::Damaged(StoreError::DataLoss { .. })
    ));
    let err = play(&registry, "damaged", "e2e4")
        .await
        .expect_err("no play on a damaged game");
    assert!(matches!(
        err,
        CallError::Registry(RegistryError::Damaged(_))
    ));
    let created = create(&registry, "damaged").await;
    assert!(
        matches!(created, Err(CallError::Registry(RegistryError::Damaged(_)))),
        "not overwritten: {created:?}"
    );
    assert_eq!(play(&registry, "fine", "e2e4").await.unwrap(), 1);
}

/// The ply of game `id` as stored (read behind the registry's back).
fn stored_ply(store: &ScriptedStore, id: &str) -> usize {
    store.stored(id).expect("stored").game.game().ply()
}

/// Plays `uci` at `expected` ply the way the service's Play does: a retry of the move
/// already played there succeeds without playing, another ply is refused.
async fn play_at(
    registry: &Arc<Registry>,
    id: &str,
    uci: &'static str,
    expected: usize,
) -> Result<usize, CallError> {
    registry
        .update(id.to_string(), move |e, now| {
            let current = e.game().ply();
            if current != expected {
                let game = e.game();
                let retry = game.position_at(expected).is_some_and(|pos| {
                    pos.parse_move(uci).ok() == game.moves().get(expected).copied()
                });
                if retry {
                    return Ok(current);
                }
                return Err(CallError::PlyMismatch { expected, current });
            }
            e.play(now, None, uci).map_err(CallError::Refused)?;
            Ok(e.game().ply())
        })
        .await
}

#[tokio::test]
async fn a_lost_race_is_decided_again_on_the_stored_game() {
    // Another writer (another replica) wins the race for the next saves
    // (`ScriptedStore::race`): each of those saves fails with `Conflict`, as a
    // compare-and-set on a shared database would.
    let store = Arc::new(ScriptedStore::new());
    let registry = Arc::new(Registry::new(store.clone(), 8));
    create(&registry, "r").await.unwrap();

    // The other writer plays e2e4 first: our e2e4 at ply 0 is then a retry of it,
    // answered without playing anything twice.
    store.race(&["e2e4"]);
    assert_eq!(play_at(&registry, "r", "e2e4", 0).await, Ok(1));
    assert_eq!(store.conflicts(), 1);
    assert_eq!(stored_ply(&store, "r"), 1);
    assert_eq!(ply(&registry, "r").await, Ok(1));

    // The other writer plays e7e5 first: our d7d5 at ply 1 is refused with the stored
    // ply, as on one node.
    store.race(&["e7e5"]);
    assert_eq!(
        play_at(&registry, "r", "d7d5", 1).await,
        Err(CallError::PlyMismatch {
            expected: 1,
            current: 2
        })
    );
    assert_eq!(store.conflicts(), 2);
    assert_eq!(stored_ply(&store, "r"), 2);
    assert_eq!(ply(&registry, "r").await, Ok(2));

    // Without an expected ply the move is decided on the stored game too: after the
    // other writer's g1f3 it is black's turn, so white's b1c3 is illegal.
    store.race(&["g1f3"]);
    let err = play(&registry, "r", "b1c3")
        .await
        .expect_err("not white's turn");
    assert!(matches!(err, CallError::Refused(_)), "{err:?}");
    assert_eq!(stored_ply(&store, "r"), 3);
    assert_eq!(ply(&registry, "r").await, Ok(3));
}

#[tokio::test]
async fn endless_lost_races_end_in_a_concurrent_change() {
    let store = Arc::new(ScriptedStore::new());
    let registry = Arc::new(Registry::new(store.clone(), 8));
    create(&registry, "busy").await.unwrap();
    // The other writer shuffles knights faster than we ever save.
    store.race(&[
        "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6",
    ]);
    // Each attempt plays a legal move for the side to move in the state it sees.
    let err = registry
        .update("busy".to_string(), |e, now| {
            let m = e.game().legal_moves()[0];
            let uci = e.game().position().uci(m);
            e.play(now, None, &uci).map_err(CallError::Refused)
        })
        .await
        .expect_err("the other writer always wins");
    assert_eq!(
        err,
        CallError::Registry(RegistryError::ConcurrentChange { id: "busy".into() })
    );
    assert_eq!(store.conflicts(), u64::from(MAX_CONFLICTS) + 1);
    assert_eq!(
        stored_ply(&store, "busy"),
        MAX_CONFLICTS as usize + 1,
        "only the other writer's moves are stored"
    );
}

/// A store two registries share, as replicas share a database: `shared()` is true, and
/// every committed change is announced on its feed (unless `announce` is off: lost
/// announcements).
fn shared_store(announce: bool) -> Arc<ScriptedStore> {
    Arc::new(ScriptedStore::shared(announce))
}

/// Two replicas (registries) on one shared store.
fn replicas(store: &Arc<ScriptedStore>) -> (Arc<Registry>, Arc<Registry>) {
    let a = Arc::new(Registry::new(store.clone(), 16));
    let b = Arc::new(Registry::new(store.clone(), 16));
    (a, b)
}

#[tokio::test]
async fn a_replica_reads_what_another_replica_stored() {
    let store = shared_store(true);
    let (a, b) = replicas(&store);
    assert!(create(&a, "g").await.unwrap());
    assert_eq!(ply(&b, "g").await.unwrap(), 0);
    assert_eq!(play(&a, "g", "e2e4").await.unwrap(), 1);
    // b has the game loaded at ply 0; it answers from the stored version.
    assert_eq!(ply(&b, "g").await.unwrap(), 1);
    assert_eq!(b.read("g", |e, _| e.san().to_vec()).await.unwrap(), ["e4"]);
}

#[tokio::test]
async fn a_decision_without_a_write_is_made_again_on_the_stored_game() {
    let store = shared_store(true);
    let (a, b) = replicas(&store);
    create(&a, "g").await.unwrap();
    assert_eq!(ply(&b, "g").await.unwrap(), 0);
    assert_eq!(play(&a, "g", "e2e4").await.unwrap(), 1);
    // An answer that writes nothing, decided on b's stale game first.
    let seen = b
        .update("g".to_string(), |e, _| Ok::<_, CallError>(e.game().ply()))
        .await
        .unwrap();
    assert_eq!(seen, 1);
    assert_eq!(play(&a, "g", "e7e5").await.unwrap(), 2);
    // On b's stale game (black to move) Nf3 is refused; on the stored one it is legal.
    assert_eq!(play(&b, "g", "g1f3").await.unwrap(), 3);
    assert_eq!(ply(&a, "g").await.unwrap(), 3);
}

#[tokio::test]
async fn a_create_raced_by_another_replica_finds_the_existing_game() {
    let store = shared_store(true);
    let (a, b) = replicas(&store);
    create(&a, "g").await.unwrap();
    play(&a, "g", "e2e4").await.unwrap();
    // b's load ran before a's create landed: it finds nothing, its create then loses.
    store.hide_next_loads(1);
    let answered = b
        .create(
            meta("g"),
            Match::untimed(Position::new()),
            |_| Ok::<_, CallError>(()),
            |e, _| e.game().ply(),
        )
        .await
        .unwrap();
    assert_eq!(answered, (1, false));
    // A start that does not match the existing game is that game's refusal, not a failure.
    store.hide_next_loads(1);
    let (_, c) = replicas(&store);
    assert_eq!(create(&c, "g").await, Err(CallError::Exists));
}

/// The next event a spectator gets, within a bound.
async fn next_event(subscription: &mut Subscription, within: Duration) -> u64 {
    match tokio::time::timeout(within, subscription.next()).await {
        Ok(WatchItem::Event(event)) => event.record().version,
        other => panic!("expected an event, got {other:?}"),
    }
}

#[tokio::test]
async fn spectators_get_the_moves_another_replica_played() {
    let store = shared_store(true);
    let (a, b) = replicas(&store);
    b.follow_store();
    create(&a, "g").await.unwrap();
    let mut watching = b.subscribe("g", 1).await.unwrap();
    play(&a, "g", "e2e4").await.unwrap();
    play(&a, "g", "e7e5").await.unwrap();
    // Announced: well before the one-second recheck.
    let within = Duration::from_millis(900);
    assert_eq!(next_event(&mut watching, within).await, 1);
    assert_eq!(next_event(&mut watching, within).await, 2);
}

#[tokio::test]
async fn a_lost_announcement_is_caught_up_by_the_recheck() {
    let store = shared_store(false);
    let (a, b) = replicas(&store);
    b.follow_store();
    create(&a, "g").await.unwrap();
    let mut watching = b.subscribe("g", 1).await.unwrap();
    play(&a, "g", "e2e4").await.unwrap();
    assert_eq!(next_event(&mut watching, Duration::from_secs(5)).await, 1);
}

#[tokio::test]
async fn a_store_only_this_process_writes_is_never_asked_for_versions() {
    // A store made with `ScriptedStore::new` is not shared: a read of a loaded game loads
    // nothing more.
    let store = Arc::new(ScriptedStore::new());
    let registry = Arc::new(Registry::new(store.clone(), 4));
    create(&registry, "g").await.unwrap();
    ply(&registry, "g").await.unwrap();
    let loads = store.calls(Call::Load);
    for _ in 0..10 {
        ply(&registry, "g").await.unwrap();
    }
    assert_eq!(store.calls(Call::Load), loads);
}

async fn resign(registry: &Arc<Registry>, id: &str) {
    registry
        .update(id.to_string(), |e, now| {
            e.resign(now, crate::rules::Color::White)
                .map_err(CallError::Refused)
        })
        .await
        .expect("resigns");
}

/// The ids a listing answers, page by page, and the resume points.
async fn list_ids(
    registry: &Arc<Registry>,
    filter: StatusFilter,
    limit: usize,
) -> (Vec<Vec<String>>, usize) {
    let mut pages = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = registry
            .list_games(&KeyRange::all(), filter, after.as_deref(), limit, |e, _| {
                e.meta().id.clone()
            })
            .await
            .expect("lists");
        pages.push(page.games);
        match page.resume_after {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    let total = pages.iter().map(Vec::len).sum();
    (pages, total)
}

#[tokio::test]
async fn listing_pages_through_games_in_id_order_by_status() {
    let registry = registry(64);
    for id in ["b", "a", "c2", "c10", "Z", "é"] {
        create(&registry, id).await.unwrap();
    }
    resign(&registry, "c2").await;
    resign(&registry, "Z").await;
    let (pages, total) = list_ids(&registry, StatusFilter::All, 4).await;
    assert_eq!(
        pages,
        [vec!["Z", "a", "b", "c10"], vec!["c2", "é"]],
        "byte order, in pages of 4, no empty last page"
    );
    assert_eq!(total, 6);
    let (pages, _) = list_ids(&registry, StatusFilter::Ended, 1).await;
    assert_eq!(pages, [vec!["Z"], vec!["c2"]]);
    let (pages, _) = list_ids(&registry, StatusFilter::InProgress, 10).await;
    assert_eq!(pages, [vec!["a", "b", "c10", "é"]]);
    // Resuming after an id that is not a game starts at the next one.
    let page = registry
        .list_games(&KeyRange::all(), StatusFilter::All, Some("c"), 2, |e, _| {
            e.meta().id.clone()
        })
        .await
        .unwrap();
    assert_eq!(page.games, ["c10", "c2"]);
    assert_eq!(page.resume_after.as_deref(), Some("c2"));
}

#[tokio::test]
async fn a_listing_reuses_cached_games_and_loads_the_others() {
    let store = Arc::new(ScriptedStore::new());
    let registry = Arc::new(Registry::new(store.clone(), 64));
    create(&registry, "g1").await.unwrap();
    play(&registry, "g1", "e2e4").await.unwrap();
    // A game only the store has (another registry wrote it).
    let other = Arc::new(Registry::new(store.clone(), 4));
    create(&other, "g2").await.unwrap();
    play(&other, "g2", "d2d4").await.unwrap();
    let loads = store.calls(Call::Load);
    let page = registry
        .list_games(&KeyRange::all(), StatusFilter::All, None, 10, |e, _| {
            (e.meta().id.clone(), e.lifecycle().version(), e.game().ply())
        })
        .await
        .unwrap();
    assert_eq!(page.games, [("g1".into(), 1, 1), ("g2".into(), 1, 1)]);
    assert_eq!(
        store.calls(Call::Load),
        loads + 1,
        "g1 came from the cache, g2 from the store"
    );
}

#[tokio::test]
async fn a_replica_lists_the_stored_version_not_its_stale_copy() {
    let store = shared_store(false);
    let (a, b) = replicas(&store);
    create(&a, "g").await.unwrap();
    assert_eq!(ply(&b, "g").await.unwrap(), 0);
    play(&a, "g", "e2e4").await.unwrap();
    // b holds version 0, unannounced; the listing says version 1 is stored.
    let page = b
        .list_games(&KeyRange::all(), StatusFilter::All, None, 10, |e, _| {
            e.lifecycle().version()
        })
        .await
        .unwrap();
    assert_eq!(page.games, [1]);
}

#[tokio::test]
async fn a_flag_that_fell_is_recorded_before_the_listing_filters() {
    let registry = registry(16);
    let control = crate::lifecycle::TimeControl::new(1, 0).expect("a valid control");
    registry
        .create(
            meta("t"),
            Match::timed(Position::new(), control, wall_now_ms()),
            |_| Err(CallError::Exists),
            |_, _| (),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (pages, _) = list_ids(&registry, StatusFilter::InProgress, 10).await;
    assert_eq!(pages, [Vec::<String>::new()]);
    let (pages, _) = list_ids(&registry, StatusFilter::Ended, 10).await;
    assert_eq!(pages, [vec!["t"]]);
}

#[tokio::test]
async fn delete_checks_the_version_and_removes_the_game() {
    let registry = registry(16);
    create(&registry, "g").await.unwrap();
    play(&registry, "g", "e2e4").await.unwrap();
    assert_eq!(
        registry.delete_game("g", Some(0)).await,
        Err(RegistryError::VersionMismatch {
            id: "g".into(),
            expected: 0,
            current: 1
        })
    );
    assert_eq!(
        ply(&registry, "g").await,
        Ok(1),
        "a refused delete changes nothing"
    );
    assert_eq!(registry.delete_game("g", Some(1)).await, Ok(1));
    assert_eq!(
        ply(&registry, "g").await,
        Err(RegistryError::NotFound { id: "g".into() })
    );
    // Deleting again, or a game that never was: not found, with or without a version.
    for expected in [None, Some(1)] {
        assert_eq!(
            registry.delete_game("g", expected).await,
            Err(RegistryError::NotFound { id: "g".into() })
        );
    }
    let (pages, _) = list_ids(&registry, StatusFilter::All, 10).await;
    assert_eq!(pages, [Vec::<String>::new()]);
    // The id is free again.
    assert!(create(&registry, "g").await.unwrap());
    assert_eq!(ply(&registry, "g").await, Ok(0));
}

/// The next item of a stream, within a bound.
async fn next_item(subscription: &mut Subscription) -> WatchItem {
    tokio::time::timeout(Duration::from_secs(5), subscription.next())
        .await
        .expect("the stream answers in time")
}

#[tokio::test]
async fn a_delete_ends_the_spectators_streams_with_not_found() {
    let registry = registry(16);
    create(&registry, "g").await.unwrap();
    play(&registry, "g", "e2e4").await.unwrap();
    let mut watching = registry.subscribe("g", 1).await.unwrap();
    assert!(
        matches!(next_item(&mut watching).await, WatchItem::Event(e) if e.record().version == 1)
    );
    registry.delete_game("g", None).await.unwrap();
    match next_item(&mut watching).await {
        WatchItem::End(RegistryError::NotFound { id }) => assert_eq!(id, "g"),
        other => panic!("expected the stream to end with NotFound, got {other:?}"),
    }
}

#[tokio::test]
async fn a_delete_on_one_replica_ends_the_spectators_on_another() {
    for announce in [true, false] {
        let store = shared_store(announce);
        let (a, b) = replicas(&store);
        b.follow_store();
        create(&a, "g").await.unwrap();
        let mut watching = b.subscribe("g", 1).await.unwrap();
        a.delete_game("g", Some(0)).await.unwrap();
        // Announced: at once; lost: at the one-second recheck.
        match next_item(&mut watching).await {
            WatchItem::End(RegistryError::NotFound { id }) => assert_eq!(id, "g"),
            other => panic!("announce {announce}: expected NotFound, got {other:?}"),
        }
        assert_eq!(
            ply(&b, "g").await,
            Err(RegistryError::NotFound { id: "g".into() })
        );
    }
}

/// Replaces game `id` in `store` behind every registry's back, as another replica that
/// deleted it and created it again would (and unannounced, as while this replica was cut
/// off): the new game reaches the same version with another move.
fn recreate_unannounced(store: &ScriptedStore, id: &str, uci: &str) {
    let version = store.stored(id).expect("stored").game.version();
    let mut game = Match::untimed(Position::new());
    game.play(wall_now_ms(), None, uci).expect("legal");
    store.put_quietly(&meta(id), &game);
    assert_eq!(game.version(), version, "the same version, other moves");
}

#[tokio::test]
async fn a_reconnected_feed_drops_every_cached_game_watched_or_not() {
    let store = shared_store(true);
    let registry = Arc::new(Registry::new(store.clone(), 16));
    registry.follow_store();
    for id in ["idle", "watched"] {
        create(&registry, id).await.unwrap();
        play(&registry, id, "e2e4").await.unwrap();
    }
    let _watching = registry.subscribe("watched", 2).await.unwrap();
    let san = |id: &'static str| {
        let registry = registry.clone();
        async move { registry.read(id, |e, _| e.san().to_vec()).await.unwrap() }
    };
    for id in ["idle", "watched"] {
        recreate_unannounced(&store, id, "d2d4");
    }
    // This store has no write tokens (one writer's versions name states), so before the
    // feed says it reconnected the cache cannot tell: the hole a reconnection closes.
    assert_eq!(san("idle").await, ["e4"]);

    store.send(StoreChange::Resync);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    loop {
        let seen = (san("idle").await, san("watched").await);
        if seen == (vec!["d4".to_string()], vec!["d4".to_string()]) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "after the feed reconnected, the registry still answers {seen:?} from its cache"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
