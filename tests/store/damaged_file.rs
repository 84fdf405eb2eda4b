//! The real `db` file damaged while the store is stopped (issue 29): every damage ends in a
//! refusal to open (sled's own, or [`StoreError::Rollback`]) or in DATA_LOSS for exactly
//! the damaged games; no game is ever served at an older version, or missing, by a store
//! that opened. An undamaged copy serves every game exactly. Then
//! `--accept-store-rollback` and `verify`.

use std::path::Path;

use chess_service::lifecycle::Match;
use chess_service::rules::{Position, Variant};
use chess_service::store::{GameMeta, GameStore, SledConfig, SledStore, Start, StoreError, verify};

const GAMES: usize = 300;
/// Versions 0 (the create) to 6: seven writes per game.
const MOVES: [&str; 6] = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5"];

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn meta(i: usize) -> GameMeta {
    GameMeta {
        id: format!("game-{i:04}"),
        variant: Variant::Standard.into(),
        start: Start::Standard,
        created_unix_ms: 1_700_000_000_000,
        tags: chess_service::lifecycle::Tags::none(),
    }
}

/// A store of [`GAMES`] games, each written seven times (each round one group commit at
/// the default durability, fsync), closed cleanly.
fn build(dir: &Path) {
    let store = SledStore::open(SledConfig::new(dir)).unwrap();
    let rt = rt();
    let mut game = Match::untimed(Position::new());
    let tickets: Vec<_> = (0..GAMES)
        .map(|i| store.create_now(&meta(i), &game).unwrap())
        .collect();
    rt.block_on(async {
        for t in tickets {
            t.wait().await.unwrap();
        }
    });
    for m in MOVES {
        game.play(0, None, m).unwrap();
        let tickets: Vec<_> = (0..GAMES)
            .map(|i| store.overwrite_now(&meta(i), &game).unwrap())
            .collect();
        rt.block_on(async {
            for t in tickets {
                t.wait().await.unwrap();
            }
        });
    }
    store.close().unwrap();
}

/// What an opened store serves: panics on an older version or a missing game (the
/// failure the issue describes); returns the games answering DATA_LOSS.
fn served(store: &SledStore) -> Vec<String> {
    served_but(store, None)
}

/// [`served`], but `deleted` (a game the test deleted on purpose) must be gone.
fn served_but(store: &SledStore, deleted: Option<&str>) -> Vec<String> {
    let mut lost = Vec::new();
    for i in 0..GAMES {
        let id = meta(i).id;
        if Some(id.as_str()) == deleted {
            assert!(
                store.load_blocking(&id).unwrap().is_none(),
                "{id} was deleted"
            );
            continue;
        }
        match store.load_blocking(&id) {
            Ok(Some(g)) => assert_eq!(
                g.game.version(),
                MOVES.len() as u64,
                "{id} is served at an older version"
            ),
            Ok(None) => panic!("{id} is acknowledged but answers NOT_FOUND"),
            Err(StoreError::DataLoss { .. }) => lost.push(id),
            Err(e) => panic!("{id}: unexpected {e}"),
        }
    }
    lost
}

enum Outcome {
    Refused(String),
    Served { data_loss: Vec<String> },
}

fn open_and_judge(dir: &Path) -> Outcome {
    match SledStore::open(SledConfig::new(dir)) {
        // sled itself may refuse the file ("Read corrupted data"): a refusal too.
        Err(e) => Outcome::Refused(e.to_string()),
        Ok(store) => {
            let data_loss = served(&store);
            Outcome::Served { data_loss }
        }
    }
}

fn damage_case(golden: &Path, name: &str, damage: impl FnOnce(&Path)) -> Outcome {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    crate::common::damage::copy_dir(golden, &dir);
    damage(&dir.join("db"));
    let outcome = open_and_judge(&dir);
    match &outcome {
        Outcome::Refused(why) => eprintln!("{name}: refused to open: {why}"),
        Outcome::Served { data_loss } => {
            eprintln!("{name}: opened; DATA_LOSS for {data_loss:?}, every other game exact")
        }
    }
    outcome
}

fn flip_at(db: &Path, percent: u64) {
    let mut bytes = std::fs::read(db).unwrap();
    let at = (bytes.len() as u64 * percent / 100) as usize;
    bytes[at] ^= 0xFF;
    std::fs::write(db, bytes).unwrap();
}

fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn a_damaged_db_file_is_refused_or_answers_data_loss_for_exactly_the_damaged_games() {
    let tmp = tempfile::tempdir().unwrap();
    let golden = tmp.path().join("golden");
    build(&golden);
    let db_len = std::fs::metadata(golden.join("db")).unwrap().len();
    eprintln!("db is {db_len} bytes");

    // The undamaged copy serves every game exactly.
    match damage_case(&golden, "undamaged", |_| {}) {
        Outcome::Served { data_loss } => assert!(data_loss.is_empty(), "{data_loss:?}"),
        Outcome::Refused(why) => panic!("an undamaged store is refused: {why}"),
    }

    // Byte flips anywhere: a refusal, or DATA_LOSS (never an older version: `served`).
    for percent in [5, 30, 50, 70] {
        damage_case(&golden, &format!("flip-{percent}"), |db| {
            flip_at(db, percent)
        });
    }

    // The first 4 KiB zeroed, truncations.
    damage_case(&golden, "zero-4k", |db| {
        let mut bytes = std::fs::read(db).unwrap();
        let n = bytes.len().min(4096);
        bytes[..n].fill(0);
        std::fs::write(db, bytes).unwrap();
    });
    for (name, keep) in [("truncate-0", 0), ("truncate-half", db_len / 2)] {
        let outcome = damage_case(&golden, name, |db| {
            std::fs::File::options()
                .write(true)
                .open(db)
                .unwrap()
                .set_len(keep)
                .unwrap()
        });
        if keep == 0 {
            let Outcome::Refused(why) = outcome else {
                panic!("an empty db beside the ledger must be refused");
            };
            assert!(
                why.contains("sled recovered up to commit 0, the ledger says")
                    && why.contains("acknowledged commits are missing"),
                "{why}"
            );
        }
    }

    // Every copy of one game's record damaged in the file.
    let victim = meta(GAMES / 2).id;
    let record = {
        let store = SledStore::open(SledConfig::new(&golden)).unwrap();
        let r = store.raw_record(&victim).unwrap().unwrap();
        store.close().unwrap();
        r
    };
    let outcome = damage_case(&golden, "one-record", |db| {
        let mut bytes = std::fs::read(db).unwrap();
        let copies = find_all(&bytes, &record);
        assert!(
            !copies.is_empty(),
            "the record of {victim} is not in the file as is"
        );
        eprintln!("one-record: {} copies of {victim}'s record", copies.len());
        for at in copies {
            bytes[at + record.len() / 2] ^= 0xFF;
        }
        std::fs::write(db, bytes).unwrap();
    });
    if let Outcome::Served { data_loss } = outcome {
        assert!(
            data_loss.is_empty() || data_loss == [victim.clone()],
            "DATA_LOSS for other games than {victim}: {data_loss:?}"
        );
    }
}

#[test]
fn an_accepted_rollback_serves_what_is_left_and_data_loss_for_the_rest_and_verify_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let golden = tmp.path().join("golden");
    build(&golden);
    // The first 4 KiB of a copy's db zeroed (before verify opens the original: sled's
    // recovery and close may rewrite its file).
    let dir = tmp.path().join("zeroed");
    crate::common::damage::copy_dir(&golden, &dir);
    let db = dir.join("db");
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[..4096].fill(0);
    std::fs::write(&db, bytes).unwrap();

    let mut out = Vec::new();
    let summary = verify::verify(&golden, &mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    assert!(summary.ok(), "{text}");
    assert_eq!(summary.games, GAMES);
    assert!(
        text.starts_with("OK: 300 games, 300 read and replayed cleanly"),
        "{text}"
    );

    // verify reports the damage (and changes nothing it would refuse).
    let mut out = Vec::new();
    let summary = verify::verify(&dir, &mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    assert!(!summary.ok(), "{text}");
    assert!(text.contains("DAMAGED: "), "{text}");

    let refused = SledStore::open(SledConfig::new(&dir));
    let Err(StoreError::Rollback(why)) = refused else {
        panic!("a db file without its first 4 KiB must be refused");
    };
    assert!(why.contains("acknowledged"), "{why}");

    let mut config = SledConfig::new(&dir);
    config.accept_store_rollback = true;
    let store = SledStore::open(config).unwrap();
    let lost = served(&store);
    assert!(!lost.is_empty(), "the file's start gone, and nothing lost?");
    // A lost game is deleted to be played again; the rest stay lost across a restart.
    let rt = rt();
    let first = lost[0].clone();
    assert_eq!(
        rt.block_on(GameStore::delete(&store, &first, Some(MOVES.len() as u64)))
            .unwrap(),
        Some(MOVES.len() as u64)
    );
    store.close().unwrap();
    drop(store);

    let store = SledStore::open(SledConfig::new(&dir)).expect("accepted once, it starts");
    let still = served_but(&store, Some(&first));
    assert_eq!(still, lost[1..], "the lost games stay lost until deleted");
    assert!(
        store.load_blocking(&first).unwrap().is_none(),
        "{first} was deleted"
    );
    store.close().unwrap();
    drop(store);

    let mut out = Vec::new();
    let summary = verify::verify(&dir, &mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    assert_eq!(summary.lost, lost.len() - 1, "{text}");
    assert!(!summary.ok() && text.contains("LOST game '"), "{text}");
}
