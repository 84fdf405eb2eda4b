//! The catalog contract every `GameStore` keeps (listing and deleting), run against the
//! sled store (`tests/store/sled.rs`) and the PostgreSQL store (`tests/replicas/store.rs`)
//! alike: byte order of ids, paging without an empty last page, the status filter, key
//! ranges (a tenant's listing), tags kept, delete with and without a version, a missing
//! game told from a deleted one.

use chess_service::lifecycle::{GameMeta, Match, Start, Tags};
use chess_service::rules::{Color, Position, Variant};
use chess_service::store::{GameStore, KeyRange, ListPage, Stamp, StatusFilter, StoreError};

fn meta(id: &str, tags: Tags) -> GameMeta {
    GameMeta {
        id: id.into(),
        variant: Variant::Standard.into(),
        start: Start::Standard,
        created_unix_ms: 1_700_000_000_000,
        tags,
    }
}

/// Every page of a listing, as ids.
pub async fn list_all(
    store: &dyn GameStore,
    filter: StatusFilter,
    limit: usize,
) -> Vec<Vec<String>> {
    list_range(store, &KeyRange::all(), filter, limit).await
}

/// Every page of a listing of the ids in `range`, as ids.
pub async fn list_range(
    store: &dyn GameStore,
    range: &KeyRange,
    filter: StatusFilter,
    limit: usize,
) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let ListPage {
            games,
            resume_after,
        } = store
            .list(range, filter, after.as_deref(), limit)
            .await
            .expect("lists");
        pages.push(games.into_iter().map(|g| g.id).collect());
        match resume_after {
            Some(next) => after = Some(next),
            None => return pages,
        }
    }
}

/// Runs the contract on an empty store.
pub async fn check_catalog(store: &dyn GameStore) {
    let tags = Tags::new([("Event", "Catalog \"test\""), ("White", "Ann")]).expect("tags");
    // Ids whose byte order differs from a natural or case-folded collation.
    let ids = ["b", "a", "B", "a10", "a9", "é", "z"];
    for id in ids {
        store
            .create(&meta(id, tags.clone()), &Match::untimed(Position::new()))
            .await
            .expect("create");
    }
    // Two games end (one resigned, one after moves), one is played on.
    for (id, over) in [("a9", true), ("é", true), ("b", false)] {
        let mut m = Match::untimed(Position::new());
        m.play(0, None, "e2e4").expect("legal");
        if over {
            m.resign(0, Color::Black).expect("resigns");
        }
        store
            .save(&meta(id, tags.clone()), &m, Stamp::version(0))
            .await
            .expect("save");
    }
    let byte_order = ["B", "a", "a10", "a9", "b", "z", "é"];
    assert_eq!(
        list_all(store, StatusFilter::All, 3).await,
        [&byte_order[..3], &byte_order[3..6], &byte_order[6..]],
        "id byte order, pages of 3"
    );
    assert_eq!(
        list_all(store, StatusFilter::All, 7).await,
        [byte_order.to_vec()],
        "a page that holds the rest is the last one"
    );
    assert_eq!(
        list_all(store, StatusFilter::Ended, 1).await,
        [["a9"], ["é"]]
    );
    assert_eq!(
        list_all(store, StatusFilter::InProgress, 10).await,
        [["B", "a", "a10", "b", "z"]]
    );
    // Versions as stored; resuming after an id that is no game.
    let page = store
        .list(&KeyRange::all(), StatusFilter::All, Some("a0"), 2)
        .await
        .unwrap();
    let listed: Vec<(String, u64)> = page.games.into_iter().map(|g| (g.id, g.version)).collect();
    assert_eq!(listed, [("a10".to_string(), 0), ("a9".to_string(), 2)]);
    assert_eq!(page.resume_after.as_deref(), Some("a9"));

    // A key range: from (inclusive) to (exclusive), paged inside it, whatever the
    // cursor; a cursor past its end lists nothing.
    let range = |from: &str, to: &str| KeyRange {
        from: Some(from.into()),
        to: Some(to.into()),
    };
    assert_eq!(
        list_range(store, &range("a", "b"), StatusFilter::All, 2).await,
        [vec!["a", "a10"], vec!["a9"]]
    );
    assert_eq!(
        list_range(store, &range("a1", "z"), StatusFilter::InProgress, 10).await,
        [["a10", "b"]]
    );
    let from_b = KeyRange {
        from: Some("b".into()),
        to: None,
    };
    assert_eq!(
        list_range(store, &from_b, StatusFilter::All, 10).await,
        [["b", "z", "é"]]
    );
    for (after, want) in [("A", vec!["a", "a10"]), ("a0", vec!["a10"]), ("a9", vec![])] {
        let page = store
            .list(&range("a", "a9"), StatusFilter::All, Some(after), 10)
            .await
            .expect("lists");
        let ids: Vec<String> = page.games.into_iter().map(|g| g.id).collect();
        assert_eq!(ids, want, "after {after}");
        assert_eq!(page.resume_after, None);
    }

    // Tags come back with the game.
    let loaded = store.load("a9").await.unwrap().expect("stored");
    assert_eq!(loaded.meta.tags, tags);

    // Delete: a version mismatch says the current version and changes nothing.
    match store.delete("a9", Some(1)).await {
        Err(StoreError::Conflict { id, current }) => {
            assert_eq!((id.as_str(), current), ("a9", 2));
        }
        other => panic!("want a conflict, got {other:?}"),
    }
    assert!(store.load("a9").await.unwrap().is_some());
    assert_eq!(store.delete("a9", Some(2)).await, Ok(Some(2)));
    assert_eq!(store.delete("b", None).await, Ok(Some(1)));
    assert!(store.load("a9").await.unwrap().is_none());
    assert_eq!(store.stored_stamp("a9").await, Ok(None));
    // A missing game: no error, but nothing deleted (with or without a version).
    assert_eq!(store.delete("a9", None).await, Ok(None));
    assert_eq!(store.delete("never", Some(0)).await, Ok(None));
    assert_eq!(
        list_all(store, StatusFilter::All, 100).await,
        [["B", "a", "a10", "z", "é"]]
    );
    assert_eq!(list_all(store, StatusFilter::Ended, 100).await, [["é"]]);
    // The id is free again, and an undo that reopens an ended game moves it back.
    store
        .create(&meta("a9", Tags::none()), &Match::untimed(Position::new()))
        .await
        .expect("the id is free again");
    let loaded = store.load("a9").await.unwrap().expect("stored");
    assert!(loaded.meta.tags.is_empty());
    let mut m = store.load("é").await.unwrap().expect("stored").game;
    let v = m.version();
    m.undo(0, None).expect("an admin undo reopens the game");
    store
        .save(&meta("é", tags.clone()), &m, Stamp::version(v))
        .await
        .unwrap();
    assert_eq!(
        list_all(store, StatusFilter::Ended, 100).await,
        [Vec::<String>::new()]
    );
    assert_eq!(
        list_all(store, StatusFilter::InProgress, 100).await,
        [["B", "a", "a10", "a9", "z", "é"]]
    );
}
