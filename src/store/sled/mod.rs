//! [`SledStore`]: games in sled, one key per game (the game id) in the `games` tree, each
//! value one record (see [`super::codec`] and `docs/STORAGE.md`), made durable by group
//! commit ([`super::group_commit`]).
//!
//! Opening reads no game: sled recovers its log and the store checks one layout marker,
//! so start-up time does not grow with the number of games. Games are read and replayed
//! only by [`GameStore::load`], on the blocking pool.
//!
//! Listing by status reads the `ended` tree: one key per game that is over (the game id,
//! no value), written in the same sled transaction as the game's record whenever a write
//! changes whether the game is over (and removed with it by a delete), so a crash never
//! leaves the index and the games apart. Deleting a game removes its record and its index
//! key in one transaction; the delete is acknowledged once durable, as every write.
//!
//! A save checks the version it replaces: the store remembers the version of each record
//! it wrote or read (beside the record's cached encoding) and, when it does not, reads it
//! from the record. sled is one process's, so the check and the write, made under a lock
//! for that game id, see every other write.
//!
//! The files, one concept each (each says why it is shaped as it is):
//! - this one: [`SledStore`] (open, close, the synchronous calls of tools and tests) and
//!   its [`GameStore`] impl, and `SledState`, the state a load on the blocking pool needs too;
//! - `config`: [`SledConfig`] and the [`Durability`] levels;
//! - `layout`: the data directory: its trees and layout marker, getting it ready under
//!   its lock, and the index of ended games built for a directory of layout 1;
//! - `writes`: create, save and delete: the version check, the record and its `ended`
//!   key in one transaction, and a write sled refused (fail-stop);
//! - `reads`: load and list, and a damaged record;
//! - `durable_files`: the fsyncs sled's flush leaves out, and the group commit's sync;
//! - `failpoint`: the sync failpoint of the fault-injection tests;
//! - `errors`: what an I/O or sled failure is to a caller.
#![warn(missing_docs)]

use std::collections::hash_map::DefaultHasher;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::lifecycle::Match;

mod config;
mod durable_files;
mod errors;
mod failpoint;
mod layout;
mod reads;
mod writes;

pub use config::{Durability, SledConfig, UnknownDurability};
use durable_files::{DurableFiles, sync_fn};
use errors::{io_err, sled_open_err};
pub use failpoint::FAILPOINT_SYNC_ENV;
pub use layout::LAYOUT_VERSION;
use layout::{ENDED_TREE, GAMES_TREE, LAYOUT_KEY, META_TREE, build_ended_index, prepare_data_dir};

use super::encoder_cache::EncoderCache;
use super::group_commit::{GroupCommit, GroupCommitStats};
use super::ledger::Commits;
#[cfg(feature = "testing")]
use super::ledger::{self, Change};
use super::rollback;
use super::{
    Durable, GameMeta, GameStore, KeyRange, ListPage, LoadedGame, Stamp, StatusFilter, StoreError,
};

/// Games in sled. See the module docs.
pub struct SledStore {
    shared: Arc<SledState>,
    durability: Durability,
    commit: GroupCommit,
}

/// What a load on the blocking pool needs too.
struct SledState {
    path: PathBuf,
    /// The store's fault (a failed sync or write): once set, nothing is read or written.
    fault: tokio::sync::watch::Receiver<Option<StoreError>>,
    games: sled::Tree,
    /// The ids of the games that are over (see the module docs).
    ended: sled::Tree,
    encoders: EncoderCache,
    /// Held (one stripe per group of ids) from a write's version check to its insert,
    /// and while a load hands its encoding to the cache.
    writing: Box<[Mutex<()>]>,
    closed: AtomicBool,
    /// The commit ledger's running side: every write records its change there.
    commits: Arc<Commits>,
    /// Games an accepted rollback lost: they answer DATA_LOSS until deleted.
    lost: rollback::LostGames,
    /// Tombstones of deletes (see [`rollback::DELETED_TREE`]).
    deleted: sled::Tree,
}

/// Stripes of [`SledState::writing`].
const WRITE_STRIPES: usize = 64;

impl SledStore {
    /// Opens (or creates) the store in `config.path`. Reads no game (a directory of
    /// layout 1 has its ended-games index built once: see [`LAYOUT_VERSION`]).
    pub fn open(config: SledConfig) -> Result<SledStore, StoreError> {
        let path = config.path.clone();
        let existed = path.is_dir();
        let disk = |what: &str, e: std::io::Error| {
            if StoreError::is_disk_full(&e) {
                StoreError::DiskFull(format!(
                    "{what} ({}): {e}; free space on that file system, then start the server again",
                    path.display()
                ))
            } else {
                io_err(&path, what, e)
            }
        };
        std::fs::create_dir_all(&path).map_err(|e| disk("cannot create the data directory", e))?;
        prepare_data_dir(&path)?;
        if !config.accept_store_rollback {
            rollback::check_db_present(&path)?;
        }
        let sled_err = |what: &str, e: sled::Error| sled_open_err(&path, what, e);
        let db = sled::Config::new()
            .path(&path)
            .cache_capacity(config.sled_cache_bytes)
            .flush_every_ms(config.sled_flush_every_ms)
            .open()
            .map_err(|e| sled_err("cannot open the sled database", e))?;
        let games = db
            .open_tree(GAMES_TREE)
            .map_err(|e| sled_err("cannot open the games tree", e))?;
        let meta = db
            .open_tree(META_TREE)
            .map_err(|e| sled_err("cannot open the meta tree", e))?;
        let ended = db
            .open_tree(ENDED_TREE)
            .map_err(|e| sled_err("cannot open the ended-games tree", e))?;
        match meta
            .get(LAYOUT_KEY)
            .map_err(|e| sled_err("cannot read the layout marker", e))?
        {
            Some(v) if v.as_ref() == [LAYOUT_VERSION] => {}
            Some(v) if v.as_ref() == [1] => {
                build_ended_index(&path, &games, &ended)?;
                // The index is durable before the marker says it is there: a crash in
                // between builds it again at the next start.
                db.flush()
                    .map_err(|e| sled_err("cannot flush the ended-games index", e))?;
                meta.insert(LAYOUT_KEY, &[LAYOUT_VERSION])
                    .map_err(|e| sled_err("cannot write the layout marker", e))?;
            }
            Some(v) => {
                return Err(StoreError::Io(format!(
                    "data directory {} has store layout {:?}, this build reads layout {LAYOUT_VERSION}: run a newer build",
                    path.display(),
                    v.as_ref()
                )));
            }
            None => {
                meta.insert(LAYOUT_KEY, &[LAYOUT_VERSION])
                    .map_err(|e| sled_err("cannot write the layout marker", e))?;
            }
        }
        let deleted = db
            .open_tree(rollback::DELETED_TREE)
            .map_err(|e| sled_err("cannot open the tombstones tree", e))?;
        let trees = rollback::Trees {
            meta: &meta,
            games: &games,
            ended: &ended,
            deleted: &deleted,
        };
        let exam = rollback::examine(&path, &trees)?;
        let settled = rollback::settle(&path, &db, &trees, exam, config.accept_store_rollback)?;
        let commits = Arc::new(Commits::open(
            &path,
            meta.clone(),
            settled.seq,
            config.durability != Durability::None,
            config.durability == Durability::Fsync,
        )?);
        // Everything sled created (db, conf, snapshots) and the marker, durable now.
        db.flush()
            .map_err(|e| sled_err("cannot flush the database", e))?;
        let mut files = DurableFiles::open(&path)?;
        files.sync_everything()?;
        // A directory created just now is an entry in its parent: make that durable too.
        if !existed && let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            File::open(parent)
                .and_then(|dir| dir.sync_all())
                .map_err(|e| io_err(parent, "cannot fsync the data directory's parent", e))?;
        }
        let sync = sync_fn(
            db,
            files,
            config.durability == Durability::Fsync,
            Arc::clone(&commits),
        );
        let commit = GroupCommit::start("store-flusher", config.commit_linger_max, sync)?;
        Ok(SledStore {
            shared: Arc::new(SledState {
                path,
                fault: commit.faults(),
                games,
                ended,
                encoders: EncoderCache::new(config.encoder_cache_games),
                writing: (0..WRITE_STRIPES).map(|_| Mutex::new(())).collect(),
                closed: AtomicBool::new(false),
                commits,
                lost: rollback::LostGames::new(settled.lost),
                deleted,
            }),
            durability: config.durability,
            commit,
        })
    }

    /// The durability level the store was opened with.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// The flusher's counters.
    pub fn commit_stats(&self) -> GroupCommitStats {
        self.commit.stats()
    }

    /// Number of stored games. Walks sled's index: for tools and tests, not start-up.
    pub fn count_games(&self) -> usize {
        self.shared.games.len()
    }

    /// Every stored game id, in key order. For tools and tests (it walks the whole tree).
    pub fn ids(&self) -> Result<Vec<String>, StoreError> {
        self.shared
            .games
            .iter()
            .keys()
            .map(|k| {
                let k = k.map_err(|e| io_err(&self.shared.path, "cannot list games", e))?;
                Ok(String::from_utf8_lossy(&k).into_owned())
            })
            .collect()
    }

    /// The stored bytes of a game's record, unchecked. Only with the `testing` feature:
    /// the corruption tests read a record with it to damage it.
    #[cfg(feature = "testing")]
    pub fn raw_record(&self, id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let v = self
            .shared
            .games
            .get(id.as_bytes())
            .map_err(|e| self.shared.sled_err(id, e))?;
        Ok(v.map(|v| v.to_vec()))
    }

    /// Overwrites a game's record with arbitrary bytes, durably. Only with the `testing`
    /// feature: the corruption tests damage records with it on an open store.
    #[cfg(feature = "testing")]
    pub fn overwrite_raw_record(&self, id: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.shared.check_open()?;
        {
            let _writing = self.shared.writing(id);
            self.shared.encoders.take(id);
            let _gate = self.shared.commits.writing();
            self.shared
                .games
                .insert(id.as_bytes(), bytes)
                .map_err(|e| self.shared.sled_err(id, e))?;
            self.shared
                .commits
                .record(id, Change::Live(ledger::record_version(bytes)));
        }
        self.commit.wait_blocking()
    }

    /// Makes everything durable and stops the flusher. Later calls fail with `Closed`.
    pub fn close(&self) -> Result<(), StoreError> {
        if self.shared.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let result = self.commit.wait_blocking();
        self.commit.shutdown();
        result.and_then(|()| self.shared.commits.mark_closed())
    }

    fn ticket(&self) -> Result<Durable, StoreError> {
        match self.durability {
            Durability::None => Ok(Durable::ready()),
            Durability::Fsync | Durability::Flush => self.commit.ticket(),
        }
    }

    /// Reads and replays a game now, on the calling thread: the synchronous form of
    /// [`GameStore::load`] (which runs it on the blocking pool).
    pub fn load_blocking(&self, id: &str) -> Result<Option<LoadedGame>, StoreError> {
        self.shared.load(id)
    }

    /// Makes everything written so far durable, blocking the calling thread: the
    /// synchronous form of [`GameStore::flush`].
    pub fn flush_blocking(&self) -> Result<(), StoreError> {
        self.shared.check_open()?;
        self.commit.wait_blocking()
    }
}

impl SledState {
    /// Refuses once the store is closed, or stopped by a fault: after a failed sync or
    /// write sled may hold changes in memory that are not durable, so nothing is read
    /// from it any more either.
    fn check_open(&self) -> Result<(), StoreError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(StoreError::Closed);
        }
        if let Some(fault) = self.fault.borrow().clone() {
            return Err(fault);
        }
        Ok(())
    }

    /// The write lock of game `id`'s stripe.
    fn writing(&self, id: &str) -> MutexGuard<'_, ()> {
        let mut h = DefaultHasher::new();
        id.hash(&mut h);
        let i = (h.finish() % self.writing.len() as u64) as usize;
        // The lock guards no data: a poisoned one is as good as a clean one.
        self.writing[i].lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for SledStore {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::error!(error = %e, path = %self.shared.path.display(), "closing the store");
        }
    }
}

#[async_trait::async_trait]
impl GameStore for SledStore {
    fn kind(&self) -> &'static str {
        "sled"
    }

    // One writer (this process): the version names a state, so no token.
    async fn create(&self, meta: &GameMeta, game: &Match) -> Result<Option<u64>, StoreError> {
        SledStore::create_now(self, meta, game)?.wait().await?;
        Ok(None)
    }

    async fn save(
        &self,
        meta: &GameMeta,
        game: &Match,
        expected: Stamp,
    ) -> Result<Option<u64>, StoreError> {
        self.write(meta, game, Some(expected.version))?
            .wait()
            .await?;
        Ok(None)
    }

    async fn load(&self, id: &str) -> Result<Option<LoadedGame>, StoreError> {
        let shared = Arc::clone(&self.shared);
        let id = id.to_string();
        // Replaying a long game is CPU work: keep it off the async workers.
        tokio::task::spawn_blocking(move || shared.load(&id))
            .await
            .map_err(|e| StoreError::Io(format!("a game load task failed: {e}")))?
    }

    async fn list(
        &self,
        range: &KeyRange,
        filter: StatusFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<ListPage, StoreError> {
        let shared = Arc::clone(&self.shared);
        let after = after.map(str::to_string);
        let range = range.clone();
        tokio::task::spawn_blocking(move || shared.list(&range, filter, after.as_deref(), limit))
            .await
            .map_err(|e| StoreError::Io(format!("a game listing task failed: {e}")))?
    }

    async fn delete(
        &self,
        id: &str,
        expected_version: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        match self.remove(id, expected_version)? {
            Some((version, durable)) => {
                durable.wait().await?;
                Ok(Some(version))
            }
            None => Ok(None),
        }
    }

    async fn flush(&self) -> Result<(), StoreError> {
        self.shared.check_open()?;
        self.commit.full_ticket()?.wait().await
    }

    fn commit_stats(&self) -> Option<GroupCommitStats> {
        Some(self.commit.stats())
    }

    fn fault(&self) -> Option<tokio::sync::watch::Receiver<Option<StoreError>>> {
        Some(self.commit.faults())
    }
}
