//! `SledStore`: reopen, corruption, concurrency, durability levels and open-time checks.

use std::sync::Arc;

use chess_service::lifecycle::Match;
use chess_service::rules::{Color, Game, Position, Variant, chess960};
use chess_service::store::{
    Durability, GameMeta, LoadedGame, SledConfig, SledStore, Start, StoreError,
};

use crate::common::rng::Rng;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn open(dir: &std::path::Path, durability: Durability) -> SledStore {
    SledStore::open(SledConfig::new(dir).durability(durability)).unwrap()
}

fn new_game(i: usize) -> (GameMeta, Game) {
    let (variant, start) = match i % 3 {
        0 => (Variant::Standard, Start::Standard),
        1 => (Variant::Chess960, Start::Chess960((i * 37 % 960) as u32)),
        _ => (
            Variant::Standard,
            Start::Fen(
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1".into(),
            ),
        ),
    };
    let pos = match &start {
        Start::Standard => Position::new(),
        Start::Chess960(n) => chess960::start_position(*n, variant).unwrap(),
        Start::Fen(f) => Position::from_fen(f, variant).unwrap(),
    };
    let meta = GameMeta {
        id: format!("game-{i:04}"),
        variant: variant.into(),
        start,
        created_unix_ms: 1_700_000_000_000 + i as u64,
        tags: chess_service::lifecycle::Tags::none(),
    };
    (meta, Game::new(pos))
}

/// Plays a random legal move (or undoes one now and then); false if the game is over.
fn step(game: &mut Game, rng: &mut Rng) -> bool {
    if game.ply() > 0 && rng.below(10) == 0 {
        game.undo();
        return true;
    }
    let legal = game.legal_moves();
    if legal.is_empty() {
        return false;
    }
    game.play(legal[rng.below(legal.len())]).unwrap();
    true
}

/// A store takes a game's whole life; these games are only moves (an undo here rewrites
/// the history, which the store must also handle).
fn moves_of(game: &Game) -> Match {
    Match::from_moves(game.clone())
}

fn assert_same(loaded: &LoadedGame, meta: &GameMeta, game: &Game) {
    assert_eq!(loaded.meta, *meta);
    let loaded_game = loaded.game.game();
    assert_eq!(loaded_game.moves(), game.moves(), "{}", meta.id);
    assert_eq!(loaded_game.position(), game.position(), "{}", meta.id);
    assert_eq!(loaded_game.position().to_fen(), game.position().to_fen());
    assert_eq!(loaded_game.status(), game.status());
    assert_eq!(
        loaded_game.can_claim_threefold(),
        game.can_claim_threefold()
    );
    assert_eq!(
        loaded_game.can_claim_fifty_moves(),
        game.can_claim_fifty_moves()
    );
}

#[test]
fn games_written_then_reopened_are_identical() {
    let dir = tempfile::tempdir().unwrap();
    let rt = rt();
    let mut rng = Rng(1);
    let mut expected = Vec::new();
    {
        let store = open(dir.path(), Durability::Fsync);
        for i in 0..12 {
            let (meta, mut game) = new_game(i);
            rt.block_on(store.create_now(&meta, &moves_of(&game)).unwrap().wait())
                .unwrap();
            for _ in 0..(i * 17 % 90) {
                if !step(&mut game, &mut rng) {
                    break;
                }
                rt.block_on(store.overwrite_now(&meta, &moves_of(&game)).unwrap().wait())
                    .unwrap();
            }
            assert_same(
                &store.load_blocking(&meta.id).unwrap().unwrap(),
                &meta,
                &game,
            );
            expected.push((meta, game));
        }
        assert_eq!(store.count_games(), 12);
    }
    let store = open(dir.path(), Durability::Fsync);
    for (meta, game) in &expected {
        assert_same(&store.load_blocking(&meta.id).unwrap().unwrap(), meta, game);
    }
    assert!(store.load_blocking("no-such-game").unwrap().is_none());
    let ids = store.ids().unwrap();
    assert_eq!(ids.len(), 12);
}

#[test]
fn create_refuses_an_existing_id_and_keeps_the_first_game() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Durability::Flush);
    let rt = rt();
    let (meta, mut game) = new_game(0);
    let m = game.legal_moves()[0];
    game.play(m).unwrap();
    rt.block_on(store.create_now(&meta, &moves_of(&game)).unwrap().wait())
        .unwrap();
    let (_, other) = new_game(0);
    assert_eq!(
        store.create_now(&meta, &moves_of(&other)).err(),
        Some(StoreError::AlreadyExists {
            id: meta.id.clone()
        })
    );
    assert_same(
        &store.load_blocking(&meta.id).unwrap().unwrap(),
        &meta,
        &game,
    );
}

#[test]
fn a_damaged_record_is_data_loss_for_that_game_alone() {
    let dir = tempfile::tempdir().unwrap();
    let rt = rt();
    let mut rng = Rng(7);
    let mut games = Vec::new();
    {
        let store = open(dir.path(), Durability::Fsync);
        for i in 0..6 {
            let (meta, mut game) = new_game(i);
            for _ in 0..40 {
                step(&mut game, &mut rng);
            }
            rt.block_on(store.create_now(&meta, &moves_of(&game)).unwrap().wait())
                .unwrap();
            games.push((meta, game));
        }
        let victim = &games[2].0.id;
        let good = store.raw_record(victim).unwrap().unwrap();
        // Every byte of the record, damaged in turn: always DATA_LOSS naming the game.
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x5A;
            store.overwrite_raw_record(victim, &bad).unwrap();
            match store.load_blocking(victim) {
                Err(StoreError::DataLoss { id, reason }) => {
                    assert_eq!(&id, victim);
                    assert!(!reason.is_empty());
                }
                other => panic!("byte {i}: expected DataLoss, got {other:?}"),
            }
        }
        // Leave it damaged (a truncated record) and check the others still serve.
        store
            .overwrite_raw_record(victim, &good[..good.len() / 2])
            .unwrap();
        for (j, (meta, game)) in games.iter().enumerate() {
            if j != 2 {
                assert_same(&store.load_blocking(&meta.id).unwrap().unwrap(), meta, game);
            }
        }
        // A save of another game after the damage still works.
        let (meta, game) = &mut games[3];
        step(game, &mut rng);
        rt.block_on(store.overwrite_now(meta, &moves_of(game)).unwrap().wait())
            .unwrap();
    }
    let store = open(dir.path(), Durability::Fsync);
    let err = store.load_blocking(&games[2].0.id).unwrap_err();
    assert!(
        matches!(&err, StoreError::DataLoss { id, .. } if *id == games[2].0.id),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(&games[2].0.id),
        "the message names the game: {err}"
    );
    for (j, (meta, game)) in games.iter().enumerate() {
        if j != 2 {
            assert_same(&store.load_blocking(&meta.id).unwrap().unwrap(), meta, game);
        }
    }
}

#[test]
fn many_concurrent_writers_of_distinct_games_all_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let rt = rt();
    let store = Arc::new(open(dir.path(), Durability::Fsync));
    let writers = 64;
    let finished: Vec<(GameMeta, Game)> = rt.block_on(async {
        let mut tasks = Vec::new();
        for w in 0..writers {
            let store = Arc::clone(&store);
            tasks.push(tokio::spawn(async move {
                let mut rng = Rng(1000 + w as u64);
                let (meta, mut game) = new_game(w);
                store
                    .create_now(&meta, &moves_of(&game))
                    .unwrap()
                    .wait()
                    .await
                    .unwrap();
                for _ in 0..40 {
                    if !step(&mut game, &mut rng) {
                        break;
                    }
                    store
                        .overwrite_now(&meta, &moves_of(&game))
                        .unwrap()
                        .wait()
                        .await
                        .unwrap();
                }
                (meta, game)
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    let stats = store.commit_stats();
    assert!(
        stats.waiters >= writers as u64 * 30,
        "every save waited: {stats:?}"
    );
    assert!(
        stats.batches < stats.waiters / 2,
        "group commit batched the waiters: {stats:?}"
    );
    drop(store);
    let store = open(dir.path(), Durability::Fsync);
    for (meta, game) in &finished {
        assert_same(&store.load_blocking(&meta.id).unwrap().unwrap(), meta, game);
    }
}

#[test]
fn every_durability_level_round_trips_and_flush_makes_it_stick() {
    for level in [Durability::Fsync, Durability::Flush, Durability::None] {
        let dir = tempfile::tempdir().unwrap();
        let rt = rt();
        let (meta, mut game) = new_game(1);
        {
            let store = open(dir.path(), level);
            assert_eq!(store.durability(), level);
            rt.block_on(store.create_now(&meta, &moves_of(&game)).unwrap().wait())
                .unwrap();
            let mut rng = Rng(3);
            for _ in 0..20 {
                step(&mut game, &mut rng);
                rt.block_on(store.overwrite_now(&meta, &moves_of(&game)).unwrap().wait())
                    .unwrap();
            }
            store.flush_blocking().unwrap();
            if level == Durability::None {
                assert_eq!(
                    store.commit_stats().waiters,
                    1,
                    "at level none only flush() waits"
                );
            }
        }
        let store = open(dir.path(), level);
        assert_same(
            &store.load_blocking(&meta.id).unwrap().unwrap(),
            &meta,
            &game,
        );
    }
    assert_eq!("FSYNC".parse::<Durability>(), Ok(Durability::Fsync));
    assert_eq!("flush".parse::<Durability>(), Ok(Durability::Flush));
    assert_eq!("none".parse::<Durability>(), Ok(Durability::None));
    let err = "sometimes".parse::<Durability>().unwrap_err();
    assert!(err.to_string().contains("fsync"), "{err}");
}

#[test]
fn a_closed_store_refuses_work() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Durability::Fsync);
    let (meta, game) = new_game(0);
    store.close().unwrap();
    assert_eq!(
        store.create_now(&meta, &moves_of(&game)).err(),
        Some(StoreError::Closed)
    );
    assert_eq!(
        store.overwrite_now(&meta, &moves_of(&game)).err(),
        Some(StoreError::Closed)
    );
    assert_eq!(
        store.load_blocking(&meta.id).err(),
        Some(StoreError::Closed)
    );
    assert_eq!(store.flush_blocking().err(), Some(StoreError::Closed));
    store.close().unwrap();
}

#[test]
fn open_refuses_a_busy_directory_and_a_newer_layout() {
    let dir = tempfile::tempdir().unwrap();
    {
        let _first = open(dir.path(), Durability::Fsync);
        let second = SledStore::open(SledConfig::new(dir.path()));
        let Err(StoreError::Io(msg)) = second else {
            panic!("a second store on one directory must fail")
        };
        assert!(msg.contains("another server"), "{msg}");
    }
    {
        // No background flusher: its thread would keep the directory's lock a moment
        // after the drop.
        let db = sled::Config::new()
            .path(dir.path())
            .flush_every_ms(None)
            .open()
            .unwrap();
        db.open_tree("meta")
            .unwrap()
            .insert("layout", &[3u8])
            .unwrap();
        db.flush().unwrap();
    }
    // sled releases the lock when its last thread lets the database go, which may come
    // just after the drop: wait for that (up to 5 s), then judge the layout.
    let mut reopened = SledStore::open(SledConfig::new(dir.path()));
    for _ in 0..100 {
        match &reopened {
            Err(StoreError::Io(msg)) if msg.contains("another process holds the lock") => {
                std::thread::sleep(std::time::Duration::from_millis(50));
                reopened = SledStore::open(SledConfig::new(dir.path()));
            }
            _ => break,
        }
    }
    let Err(StoreError::Io(msg)) = reopened else {
        panic!("a newer layout must be refused")
    };
    assert!(msg.contains("newer build"), "{msg}");
}

/// A start stopped by a full disk can leave a snapshot sled was writing
/// (`snap.*.generating`, 0 bytes); sled 0.34.7 would read it as the latest snapshot and
/// refuse every later start ("Read corrupted data"). The store removes it at open, under
/// the directory's lock, and keeps every game.
#[test]
fn an_interrupted_snapshot_does_not_stop_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let (meta, game) = new_game(0);
    {
        let store = open(dir.path(), Durability::Fsync);
        store.create_now(&meta, &moves_of(&game)).unwrap();
        store.flush_blocking().unwrap();
    }
    let leftover = dir.path().join("snap.FFFFFFFFFFFFFFFF.generating");
    std::fs::write(&leftover, b"").unwrap();
    let store = open(dir.path(), Durability::Fsync);
    assert!(!leftover.exists(), "the interrupted snapshot is removed");
    assert!(store.load_blocking(&meta.id).unwrap().is_some());
    // Without the clean-up, sled itself refuses the directory: the case is real.
    drop(store);
    std::fs::write(&leftover, b"").unwrap();
    let refused = sled::Config::new().path(dir.path()).open();
    assert!(
        refused.is_err(),
        "sled 0.34.7 reads the leftover as a snapshot"
    );
}

/// A change that does not end the game stops short of the hard record limit; the room
/// above is the endings'.
#[test]
fn a_full_history_refuses_moves_but_not_endings() {
    use chess_service::store::codec::{self, HISTORY_LIMIT, MAX_RECORD_LEN};
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Durability::Flush);
    let (meta, _) = new_game(0);
    let meta = GameMeta {
        start: Start::Standard,
        variant: Variant::Standard.into(),
        ..meta
    };
    // Play and take back until the record is just below the limit.
    let mut m = Match::untimed(Position::new());
    loop {
        let len = codec::encode(&meta, &m).unwrap().len();
        if len + 8 > HISTORY_LIMIT {
            break;
        }
        for _ in 0..(HISTORY_LIMIT - len) / 4 + 1 {
            m.play(0, None, "e4").unwrap();
            m.undo(0, None).unwrap();
        }
    }
    store.create_now(&meta, &m).unwrap();
    // One more cycle than fits is refused, and leaves the stored game as it was.
    let mut moved = m.clone();
    while codec::encode(&meta, &moved).unwrap().len() <= HISTORY_LIMIT {
        moved.play(0, None, "e4").unwrap();
        moved.undo(0, None).unwrap();
    }
    let refused = store.overwrite_now(&meta, &moved).err();
    let Some(StoreError::HistoryFull { len, limit, .. }) = refused else {
        panic!("{refused:?}")
    };
    assert!(
        len > HISTORY_LIMIT && limit == HISTORY_LIMIT,
        "{len} {limit}"
    );
    store.flush_blocking().unwrap();
    assert_eq!(
        store
            .load_blocking(&meta.id)
            .unwrap()
            .unwrap()
            .game
            .version(),
        m.version()
    );
    // The same history ended (after an offer and its refusal) is accepted.
    let mut ended = moved.clone();
    ended.offer_draw(0, Color::White).unwrap();
    ended.respond_to_draw(0, Color::Black, false).unwrap();
    ended.resign(0, Color::Black).unwrap();
    assert!(codec::encode(&meta, &ended).unwrap().len() <= MAX_RECORD_LEN);
    store.overwrite_now(&meta, &ended).unwrap();
    store.flush_blocking().unwrap();
    let loaded = store.load_blocking(&meta.id).unwrap().unwrap();
    assert!(loaded.game.status().is_over());
    assert_eq!(loaded.game.version(), ended.version());
}

/// The cached encoding never outlives a change it did not see: saves of one game from
/// diverging histories (as after an undo and a different move) store exactly the game
/// passed in.
#[test]
fn saves_after_undo_and_divergence_store_the_game_passed_in() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Durability::Flush);
    let rt = rt();
    let (meta, mut game) = new_game(0);
    rt.block_on(store.create_now(&meta, &moves_of(&game)).unwrap().wait())
        .unwrap();
    let mut rng = Rng(11);
    for round in 0..30 {
        for _ in 0..round % 5 {
            game.undo();
        }
        for _ in 0..(round % 7) {
            step(&mut game, &mut rng);
        }
        rt.block_on(store.overwrite_now(&meta, &moves_of(&game)).unwrap().wait())
            .unwrap();
        assert_same(
            &store.load_blocking(&meta.id).unwrap().unwrap(),
            &meta,
            &game,
        );
    }
}

/// Listing and deleting keep the contract every store keeps (`common::catalog`), and the
/// scripted store (in memory), which the registry's own tests use, keeps it too.
#[test]
fn listing_and_deleting_keep_the_store_contract() {
    let dir = tempfile::tempdir().unwrap();
    let rt = rt();
    for cache in [10_000, 0] {
        let sub = dir.path().join(format!("cache-{cache}"));
        let mut config = SledConfig::new(&sub).durability(Durability::Fsync);
        config.encoder_cache_games = cache;
        let store = SledStore::open(config).unwrap();
        rt.block_on(crate::common::catalog::check_catalog(&store));
    }
    let memory = chess_service::store::ScriptedStore::new();
    rt.block_on(crate::common::catalog::check_catalog(&memory));
}

/// A delete is durable when acknowledged (the reopened store has neither the game nor
/// its index key), and a directory of store layout 1 (no ended-games index) gets its
/// index built at open.
#[test]
fn deletes_survive_reopen_and_a_layout_one_directory_is_indexed_at_open() {
    use chess_service::store::{GameStore, StatusFilter};
    let dir = tempfile::tempdir().unwrap();
    let rt = rt();
    let ended_ids = ["game-0001", "game-0004"];
    {
        let store = open(dir.path(), Durability::Fsync);
        for i in 0..6 {
            let (meta, game) = new_game(i);
            let mut m = moves_of(&game);
            if ended_ids.contains(&meta.id.as_str()) {
                m.resign(0, Color::White).unwrap();
            }
            rt.block_on(GameStore::create(&store, &meta, &m)).unwrap();
        }
        assert_eq!(
            rt.block_on(GameStore::delete(&store, "game-0004", Some(1))),
            Ok(Some(1))
        );
        assert_eq!(
            rt.block_on(GameStore::delete(&store, "game-0002", None)),
            Ok(Some(0))
        );
        // No flush, no close: the acknowledged deletes must be durable on their own.
        std::mem::forget(store);
    }
    // sled's lock is held by the forgotten handle's process (this one); a second open
    // of the same directory in one process is refused, so read it from a copy.
    let copy = tempfile::tempdir().unwrap();
    crate::common::damage::copy_dir(dir.path(), copy.path());
    let ids = |store: &SledStore, filter| {
        rt.block_on(crate::common::catalog::list_all(store, filter, 100))
            .concat()
    };
    {
        let store = open(copy.path(), Durability::Fsync);
        assert_eq!(
            ids(&store, StatusFilter::All),
            ["game-0000", "game-0001", "game-0003", "game-0005"]
        );
        assert_eq!(ids(&store, StatusFilter::Ended), ["game-0001"]);
        assert!(store.load_blocking("game-0004").unwrap().is_none());
    }
    // Make it a layout 1 directory: no index, the old marker.
    {
        let db = sled::open(copy.path()).unwrap();
        db.drop_tree("ended").unwrap();
        db.open_tree("meta")
            .unwrap()
            .insert("layout", &[1u8])
            .unwrap();
        db.flush().unwrap();
    }
    let store = open(copy.path(), Durability::Fsync);
    assert_eq!(ids(&store, StatusFilter::Ended), ["game-0001"]);
    assert_eq!(
        ids(&store, StatusFilter::InProgress),
        ["game-0000", "game-0003", "game-0005"]
    );
    drop(store);
    let db = sled::open(copy.path()).unwrap();
    assert_eq!(
        db.open_tree("meta")
            .unwrap()
            .get("layout")
            .unwrap()
            .as_deref(),
        Some(&[2u8][..]),
        "marked layout 2 once indexed"
    );
}
