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
#![warn(missing_docs)]

use std::collections::hash_map::DefaultHasher;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::lifecycle::Match;

use super::codec;
use super::encoder_cache::{self, CachedEncoder, EncoderCache};
use super::group_commit::{GroupCommit, GroupCommitStats, SyncFn};
use super::ledger::{self, Change, Commits};
use super::rollback;
use super::{
    Durable, GameMeta, GameStore, KeyRange, ListPage, ListedGame, LoadedGame, Stamp, StatusFilter,
    StoreError, StoreFuture,
};
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};

/// What "durable" means when a ticket resolves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Durability {
    /// sled `flush()` and then `fsync` of the database file (and of the directory when
    /// its entries changed) before the answer: survives `kill -9` and power loss. The
    /// default.
    #[default]
    Fsync,
    /// sled `flush()` only (its writes plus `sync_file_range`) before the answer: survives
    /// `kill -9` of the process; a power loss may lose acknowledged writes.
    Flush,
    /// Answer before any flush; sled's own background flush (every
    /// [`SledConfig::sled_flush_every_ms`]) writes later. `kill -9` loses recent writes.
    None,
}

impl Durability {
    /// `fsync`, `flush` or `none`, as the flag spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Fsync => "fsync",
            Durability::Flush => "flush",
            Durability::None => "none",
        }
    }
}

impl std::fmt::Display for Durability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A durability level name that is not one of `fsync`, `flush`, `none`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown durability level '{0}': use fsync (the default: survives power loss), flush (survives a process crash) or none"
)]
pub struct UnknownDurability(
    /// The level as given.
    pub String,
);

impl FromStr for Durability {
    type Err = UnknownDurability;
    fn from_str(s: &str) -> Result<Durability, UnknownDurability> {
        match s.to_ascii_lowercase().as_str() {
            "fsync" => Ok(Durability::Fsync),
            "flush" => Ok(Durability::Flush),
            "none" => Ok(Durability::None),
            _ => Err(UnknownDurability(s.to_string())),
        }
    }
}

/// How to open a [`SledStore`].
#[derive(Clone, Debug)]
pub struct SledConfig {
    /// The data directory (created if missing).
    pub path: PathBuf,
    /// When a write counts as durable.
    pub durability: Durability,
    /// sled's page cache, bytes.
    pub sled_cache_bytes: u64,
    /// sled's own background flush period; `None` turns it off. It also runs sled's
    /// segment cleaning, so keep it on.
    pub sled_flush_every_ms: Option<u64>,
    /// Games whose encoded moves are kept so a save after a move encodes one move instead
    /// of the whole history. 0 turns the cache off. About 20 bytes per ply each.
    pub encoder_cache_games: usize,
    /// After a sync, how long at most the flusher waits for the writers it just answered
    /// to queue again so that they share the next sync (never more than half the last
    /// sync's duration). `Duration::ZERO` turns it off.
    pub commit_linger_max: Duration,
    /// Start even when sled recovered less than the commit ledger says was acknowledged
    /// (`--accept-store-rollback`): the games behind answer DATA_LOSS. See
    /// [`super::rollback`].
    pub accept_store_rollback: bool,
}

impl SledConfig {
    /// The defaults for a store in `path`.
    pub fn new(path: impl Into<PathBuf>) -> SledConfig {
        SledConfig {
            path: path.into(),
            durability: Durability::Fsync,
            sled_cache_bytes: 256 * 1024 * 1024,
            sled_flush_every_ms: Some(500),
            encoder_cache_games: 10_000,
            commit_linger_max: Duration::from_millis(2),
            accept_store_rollback: false,
        }
    }

    /// With another durability level.
    pub fn durability(mut self, durability: Durability) -> SledConfig {
        self.durability = durability;
        self
    }
}

/// The store layout this build writes, kept under `meta/layout`. A data directory with a
/// newer layout is refused at open. Layout 2 adds the `ended` tree (the index of games
/// that are over, for listing by status); a layout 1 directory gets it built once at
/// open (every game read once), then is marked layout 2.
pub const LAYOUT_VERSION: u8 = 2;
const GAMES_TREE: &str = "games";
const ENDED_TREE: &str = "ended";

/// A listing looks at most this many games per call before it returns a short page
/// with where to resume (listing games in progress skips the ended ones one by one).
const LIST_SCAN_BUDGET: usize = 10_000;
const META_TREE: &str = "meta";
const LAYOUT_KEY: &str = "layout";

/// Games in sled. See the module docs.
pub struct SledStore {
    shared: Arc<Shared>,
    durability: Durability,
    commit: GroupCommit,
}

/// What a load on the blocking pool needs too.
struct Shared {
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

/// Stripes of [`Shared::writing`].
const WRITE_STRIPES: usize = 64;

fn io_err(path: &Path, what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io(format!("{what} ({}): {e}", path.display()))
}

/// An I/O failure on `p`: [`StoreError::DiskFull`] when the file system is full, else
/// [`StoreError::Io`].
fn file_err(what: &str, p: &Path, e: &std::io::Error) -> StoreError {
    let message = format!("{what} of {}: {e}", p.display());
    if StoreError::is_disk_full(e) {
        StoreError::DiskFull(message)
    } else {
        StoreError::Io(message)
    }
}

/// A sled failure while opening or writing: [`StoreError::DiskFull`] when the file system
/// is full, else [`StoreError::Io`] with `what` and the data directory.
fn sled_open_err(path: &Path, what: &str, e: sled::Error) -> StoreError {
    match &e {
        sled::Error::Io(io) if StoreError::is_disk_full(io) => StoreError::DiskFull(format!(
            "{what} ({}): {e}; free space on that file system, then start the server again",
            path.display()
        )),
        _ => io_err(path, what, &e),
    }
}

/// The environment variable that arms the sync failpoint (for fault-injection tests):
/// it names a trigger file. While it is unset the failpoint costs nothing; while it is
/// set, every sync looks whether the trigger file exists (one `stat`), and if it does,
/// the sync fails after sled's flush, as an `fsync` that fails does: with ENOSPC when the
/// file holds `enospc`, else with EIO.
pub const FAILPOINT_SYNC_ENV: &str = "CHESS_FAILPOINT_SYNC";

/// The armed sync failpoint: its trigger file.
struct Failpoint(PathBuf);

impl Failpoint {
    fn from_env() -> Option<Failpoint> {
        let trigger = std::env::var_os(FAILPOINT_SYNC_ENV).filter(|v| !v.is_empty())?;
        tracing::warn!(
            trigger = %Path::new(&trigger).display(),
            "{FAILPOINT_SYNC_ENV} is set: syncs fail once the trigger file exists (a fault-injection test)"
        );
        Some(Failpoint(PathBuf::from(trigger)))
    }

    /// The injected failure, if the trigger file exists.
    fn check(&self) -> std::io::Result<()> {
        if !self.0.exists() {
            return Ok(());
        }
        let code = match std::fs::read_to_string(&self.0) {
            Ok(text) if text.trim() == "enospc" => 28, // ENOSPC
            _ => 5,                                    // EIO
        };
        Err(std::io::Error::from_raw_os_error(code))
    }
}

/// A directory kept open, fsynced when its entries may have changed since its last
/// fsync. Whether they did is read from its modification time with `fstat` on the open
/// descriptor: no listing and no new descriptor on the sync path, so a process out of
/// descriptors still syncs.
struct SyncedDir {
    path: PathBuf,
    dir: File,
    /// The modification time as of the last fsync.
    synced: Option<std::time::SystemTime>,
}

impl SyncedDir {
    /// The file system's clock ticks coarsely (a few ms): a change in the same tick as
    /// the last fsync leaves the time as it was. So a directory changed this recently is
    /// fsynced at every sync (directories here change rarely: sled's snapshots, blobs).
    const SETTLE: Duration = Duration::from_secs(1);

    fn open(path: &Path) -> std::io::Result<SyncedDir> {
        Ok(SyncedDir {
            path: path.to_path_buf(),
            dir: File::open(path)?,
            synced: None,
        })
    }

    /// The directory's modification time if its entries may have changed since its
    /// last fsync, `None` if they have not.
    fn changed(&self) -> Result<Option<std::time::SystemTime>, StoreError> {
        let modified = self
            .dir
            .metadata()
            .and_then(|m| m.modified())
            .map_err(|e| file_err("fstat", &self.path, &e))?;
        let recent = std::time::SystemTime::now()
            .duration_since(modified)
            .map_or(true, |age| age < Self::SETTLE);
        Ok((self.synced != Some(modified) || recent).then_some(modified))
    }

    /// fsyncs the directory, whose modification time was `modified` before.
    fn fsync(&mut self, modified: std::time::SystemTime) -> Result<(), StoreError> {
        self.dir
            .sync_all()
            .map_err(|e| file_err("fsync", &self.path, &e))?;
        self.synced = Some(modified);
        Ok(())
    }
}

/// Makes sled's files durable beyond what sled's `flush()` does: sled 0.34.7's flush
/// ends in `sync_file_range`, which neither flushes the drive's write cache nor commits
/// the file's metadata, and sled creates and renames files (snapshots, blobs) without
/// syncing their directory. Every descriptor it needs is opened once, at start.
struct DurableFiles {
    path: PathBuf,
    db_file: File,
    dir: SyncedDir,
    /// `blobs/`, where sled writes a page larger than about 128 KiB (a leaf of many large
    /// records) as a file of its own, without syncing it.
    blobs: SyncedDir,
    /// Blob files already fsynced.
    blobs_synced: Vec<std::ffi::OsString>,
    failpoint: Option<Failpoint>,
}

fn list_dir(dir: &Path) -> std::io::Result<Vec<std::ffi::OsString>> {
    let mut names = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .map(|e| e.map(|e| e.file_name()))
            .collect::<std::io::Result<Vec<_>>>()?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    names.sort();
    Ok(names)
}

impl DurableFiles {
    fn open(path: &Path) -> Result<DurableFiles, StoreError> {
        let db_file = File::open(path.join("db"))
            .map_err(|e| io_err(path, "cannot open sled's db file to fsync it", e))?;
        let dir = SyncedDir::open(path)
            .map_err(|e| io_err(path, "cannot open the data directory to fsync it", e))?;
        // sled creates it when it opens.
        let blobs_path = path.join("blobs");
        std::fs::create_dir_all(&blobs_path)
            .map_err(|e| io_err(&blobs_path, "cannot create sled's blob directory", e))?;
        let blobs = SyncedDir::open(&blobs_path).map_err(|e| {
            io_err(
                &blobs_path,
                "cannot open sled's blob directory to fsync it",
                e,
            )
        })?;
        Ok(DurableFiles {
            path: path.to_path_buf(),
            db_file,
            dir,
            blobs,
            blobs_synced: Vec::new(),
            failpoint: Failpoint::from_env(),
        })
    }

    /// At open: fsync of every regular file in the data directory and in `blobs/`
    /// (sled's `conf` and snapshots are written once and never synced by us otherwise),
    /// then [`DurableFiles::sync`].
    fn sync_everything(&mut self) -> Result<(), StoreError> {
        for dir in [self.path.clone(), self.path.join("blobs")] {
            for name in list_dir(&dir).map_err(|e| file_err("list", &dir, &e))? {
                let p = dir.join(&name);
                if p.is_file() {
                    File::open(&p)
                        .and_then(|f| f.sync_all())
                        .map_err(|e| file_err("fsync", &p, &e))?;
                }
            }
        }
        self.blobs_synced = list_dir(&self.path.join("blobs"))
            .map_err(|e| file_err("list", &self.path.join("blobs"), &e))?;
        self.sync()
    }

    /// fsync of the db file; of the data directory when its entries may have changed;
    /// and, when `blobs/` changed (sled wrote a blob), of the new blob files and then
    /// `blobs/`. Only the last opens files (the new blobs): the common sync uses the
    /// descriptors opened at start.
    fn sync(&mut self) -> Result<(), StoreError> {
        if let Some(failpoint) = &self.failpoint {
            failpoint
                .check()
                .map_err(|e| file_err("fsync (failpoint)", &self.path.join("db"), &e))?;
        }
        self.db_file
            .sync_all()
            .map_err(|e| file_err("fsync", &self.path.join("db"), &e))?;
        if let Some(modified) = self.blobs.changed()? {
            let blobs = self.blobs.path.clone();
            let names = list_dir(&blobs).map_err(|e| file_err("list", &blobs, &e))?;
            for name in names
                .iter()
                .filter(|n| self.blobs_synced.binary_search(n).is_err())
            {
                let p = blobs.join(name);
                match File::open(&p).and_then(|f| f.sync_all()) {
                    // A blob removed by sled meanwhile needs nothing.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    r => r.map_err(|e| file_err("fsync", &p, &e))?,
                }
            }
            // Then the directory, for the new files' entries.
            self.blobs.fsync(modified)?;
            self.blobs_synced = names;
        }
        if let Some(modified) = self.dir.changed()? {
            self.dir.fsync(modified)?;
        }
        Ok(())
    }
}

/// The group commit's sync: the commit staged in sled, sled `flush()`, the commit's ledger
/// frame written ([`Commits::append`]), then the fsyncs of [`DurableFiles`] (whose flush
/// makes the frame durable too) at level `Fsync`, and at every level when the batch asks
/// for a full sync (`flush()`, `close()`).
///
/// When a sync fails, a handle on the database is leaked on purpose: sled flushes (and
/// fsyncs, panicking if that fails) when its last handle is dropped, which would write
/// what was never acknowledged at exit. The process is stopping anyway (fail-stop).
fn sync_fn(
    db: sled::Db,
    mut files: DurableFiles,
    fsync_level: bool,
    commits: Arc<Commits>,
) -> SyncFn {
    Box::new(move |full| {
        let result = commits
            .stage()
            .map_err(|e| StoreError::Io(format!("cannot write the commit marker: {e}")))
            .and_then(|staged| {
                db.flush().map(|_| staged).map_err(|e| match e {
                    sled::Error::Io(io) => file_err("sled flush", &files.path, &io),
                    e => StoreError::Io(format!("sled flush: {e}")),
                })
            })
            .and_then(|staged| {
                // The ledger's frame reaches the device before the fsync of `db`, whose
                // flush makes it durable with the records (`ledger::Commits::append`).
                if let Some(staged) = staged {
                    commits.append(staged)?;
                }
                if fsync_level || full || files.failpoint.is_some() {
                    files.sync()?;
                }
                Ok(())
            });
        if result.is_err() {
            std::mem::forget(db.clone());
        }
        result
    })
}

/// Gets the data directory ready for sled, under its lock: refuses when another process
/// holds it (sled locks its `db` file with `flock`; so does this, for a moment), so the
/// message names the lock only when it really is held; then removes what a start
/// interrupted by a full disk leaves behind: a snapshot being written
/// (`snap.*.generating`, often 0 bytes). sled writes a snapshot under that name, fsyncs it
/// and only then renames it, so such a file is never a complete snapshot; but sled
/// 0.34.7 reads it as one and then refuses every start ("Read corrupted data"), even
/// after space is back. Under the lock no other sled can be writing one.
/// How long an open waits for the directory's lock before calling it busy.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

fn prepare_data_dir(path: &Path) -> Result<(), StoreError> {
    let db = path.join("db");
    let _lock = match File::options().read(true).write(true).open(&db) {
        Ok(file) => {
            // A store this process just closed lets go of the lock only when sled's
            // background flusher thread ends (up to its flush interval): wait that long
            // before calling the directory busy.
            let deadline = std::time::Instant::now() + LOCK_WAIT;
            loop {
                match file.try_lock() {
                    Ok(()) => break Some(file),
                    Err(std::fs::TryLockError::WouldBlock)
                        if std::time::Instant::now() < deadline =>
                    {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    Err(std::fs::TryLockError::WouldBlock) => {
                        return Err(StoreError::Io(format!(
                            "another process holds the lock on {}: is another server using this data directory?",
                            db.display()
                        )));
                    }
                    Err(std::fs::TryLockError::Error(e)) => {
                        return Err(io_err(&db, "cannot lock sled's db file", e));
                    }
                }
            }
        }
        // No database yet: no sled can be using the directory.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(&db, "cannot open sled's db file", e)),
    };
    for name in list_dir(path).map_err(|e| io_err(path, "cannot list the data directory", e))? {
        let text = name.to_string_lossy();
        if text.starts_with("snap.") && text.ends_with(".generating") {
            let p = path.join(&name);
            std::fs::remove_file(&p)
                .map_err(|e| io_err(&p, "cannot remove an interrupted snapshot of sled", e))?;
            tracing::warn!(file = %p.display(), "removed an interrupted sled snapshot (a start or a snapshot stopped by a full disk?)");
        }
    }
    Ok(())
}

/// Builds the `ended` tree of a layout 1 directory: every game is read and replayed once
/// (a damaged one counts as going: its load answers DATA_LOSS anyway). What an earlier,
/// interrupted build left is cleared first.
fn build_ended_index(
    path: &Path,
    games: &sled::Tree,
    ended: &sled::Tree,
) -> Result<(), StoreError> {
    let sled_err = |what: &str, e: sled::Error| sled_open_err(path, what, e);
    ended
        .clear()
        .map_err(|e| sled_err("cannot clear the ended-games index", e))?;
    let (mut count, mut over) = (0u64, 0u64);
    for kv in games.iter() {
        let (key, record) = kv.map_err(|e| sled_err("cannot read the games to index them", e))?;
        count += 1;
        let id = String::from_utf8_lossy(&key);
        match codec::decode(&id, &record) {
            Ok(d) if d.loaded.game.status().is_over() => {
                over += 1;
                ended
                    .insert(&key, &[])
                    .map_err(|e| sled_err("cannot write the ended-games index", e))?;
            }
            Ok(_) => {}
            Err(e) => {
                tracing::error!(game_id = %id, reason = %e, "stored game is damaged; indexed as going");
            }
        }
    }
    tracing::info!(
        games = count,
        ended = over,
        "built the index of ended games (store layout 1 to 2)"
    );
    Ok(())
}

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
            shared: Arc::new(Shared {
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

    /// Writes a new game now and returns its durability ticket without waiting for it:
    /// the two-phase form of [`GameStore::create`], for synchronous callers (tools, the
    /// store benchmarks, which time the write apart from its durability).
    pub fn create(&self, meta: &GameMeta, game: &Match) -> Result<Durable, StoreError> {
        self.shared.check_open()?;
        self.commit.check()?;
        {
            let _writing = self.shared.writing(&meta.id);
            self.shared.lost.check(&meta.id)?;
            let cached = self.shared.encoders.take(&meta.id);
            let (record, cached) = encoder_cache::encode(meta, game, cached, 0)?;
            let version = ledger::record_version(&record);
            let key = meta.id.as_bytes();
            let gate = self.shared.commits.writing();
            let swapped = if game.status().is_over() {
                // A game created over (an imported finished game): record and index at once.
                let record = sled::IVec::from(record);
                let done = (&self.shared.games, &self.shared.ended).transaction(|(g, e)| {
                    if g.get(key)?.is_some() {
                        return Err(ConflictableTransactionError::Abort(()));
                    }
                    g.insert(key, record.clone())?;
                    e.insert(key, &[])?;
                    Ok(())
                });
                match done {
                    Ok(()) => Ok(()),
                    Err(TransactionError::Abort(())) => Err(()),
                    Err(TransactionError::Storage(e)) => return Err(self.write_failed(&meta.id, e)),
                }
            } else {
                self.shared
                    .games
                    .compare_and_swap(key, None as Option<&[u8]>, Some(record))
                    .map_err(|e| self.write_failed(&meta.id, e))?
                    .map_err(|_| ())
            };
            if swapped.is_err() {
                return Err(StoreError::AlreadyExists {
                    id: meta.id.clone(),
                });
            }
            self.shared.commits.record(&meta.id, Change::Live(version));
            drop(gate);
            self.shared.encoders.put(&meta.id, cached);
        }
        self.ticket()
    }

    /// Replaces a game's record whatever version it holds, now, and returns the
    /// durability ticket without waiting for it: the two-phase, unchecked form of
    /// [`GameStore::save`] (which the service uses), for synchronous callers (tools, the
    /// store benchmarks).
    pub fn save(&self, meta: &GameMeta, game: &Match) -> Result<Durable, StoreError> {
        self.write(meta, game, None)
    }

    /// Writes `game`'s record, after checking that the stored one is at `expected` (if
    /// given), and returns the durability ticket.
    fn write(
        &self,
        meta: &GameMeta,
        game: &Match,
        expected: Option<u64>,
    ) -> Result<Durable, StoreError> {
        self.shared.check_open()?;
        self.commit.check()?;
        {
            let _writing = self.shared.writing(&meta.id);
            self.shared.lost.check(&meta.id)?;
            let mut cached = self.shared.encoders.take(&meta.id);
            if let Some(expected) = expected {
                let current = match cached.as_ref().map(|c| c.version) {
                    Some(version) => Some(version),
                    None => self.shared.read(&meta.id)?.map(|(version, stored)| {
                        cached = Some(stored);
                        version
                    }),
                };
                if current != Some(expected) {
                    if let Some(c) = cached {
                        self.shared.encoders.put(&meta.id, c);
                    }
                    return Err(StoreError::Conflict {
                        id: meta.id.clone(),
                        current: current.unwrap_or(0),
                    });
                }
            }
            let (record, cached) =
                encoder_cache::encode(meta, game, cached, expected.unwrap_or(0))?;
            let version = ledger::record_version(&record);
            let key = meta.id.as_bytes();
            let gate = self.shared.commits.writing();
            let over = game.status().is_over();
            let was_over = self
                .shared
                .ended
                .contains_key(key)
                .map_err(|e| self.shared.sled_err(&meta.id, e))?;
            if over == was_over {
                self.shared
                    .games
                    .insert(key, record)
                    .map_err(|e| self.write_failed(&meta.id, e))?;
            } else {
                // The game ended or was taken back into play: record and index at once.
                let record = sled::IVec::from(record);
                (&self.shared.games, &self.shared.ended)
                    .transaction(|(g, e)| {
                        g.insert(key, record.clone())?;
                        if over {
                            e.insert(key, &[])?;
                        } else {
                            e.remove(key)?;
                        }
                        Ok::<(), ConflictableTransactionError<()>>(())
                    })
                    .map_err(|e| match e {
                        TransactionError::Storage(e) => self.write_failed(&meta.id, e),
                        TransactionError::Abort(()) => StoreError::Io(format!(
                            "internal error: the write of game '{}' was aborted",
                            meta.id
                        )),
                    })?;
            }
            self.shared.commits.record(&meta.id, Change::Live(version));
            drop(gate);
            self.shared.encoders.put(&meta.id, cached);
        }
        self.ticket()
    }

    /// Removes game `id` (record and index key, in one transaction) if it is stored at
    /// `expected` (when given), and returns the version removed with the durability
    /// ticket; `None` when there is no such game. A damaged record can be deleted too,
    /// unless an expected version is given and its version cannot be read.
    fn remove(
        &self,
        id: &str,
        expected: Option<u64>,
    ) -> Result<Option<(u64, Durable)>, StoreError> {
        self.shared.check_open()?;
        self.commit.check()?;
        let version = {
            let _writing = self.shared.writing(id);
            let key = id.as_bytes();
            let cached = self.shared.encoders.take(id);
            let lost = self.shared.lost.version(id);
            let Some(record) = self
                .shared
                .games
                .get(key)
                .map_err(|e| self.shared.sled_err(id, e))?
            else {
                return match lost {
                    // A game an accepted rollback lost entirely: its deletion is recorded.
                    Some(version) => {
                        let _gate = self.shared.commits.writing();
                        self.shared.lost.forget(id);
                        self.shared.commits.record(id, Change::Deleted);
                        Ok(Some((version, self.ticket()?)))
                    }
                    None => Ok(None),
                };
            };
            // A game an accepted rollback lost is at the version that was acknowledged.
            let current = lost.or_else(|| {
                cached
                    .as_ref()
                    .map(|c| c.version)
                    .or_else(|| codec::peek_version(&record))
            });
            match (expected, current) {
                (Some(expected), Some(current)) if expected != current => {
                    if let Some(c) = cached {
                        self.shared.encoders.put(id, c);
                    }
                    return Err(StoreError::Conflict {
                        id: id.to_string(),
                        current,
                    });
                }
                (Some(_), None) => {
                    return Err(StoreError::DataLoss {
                        id: id.to_string(),
                        reason: "the record is damaged, so its version cannot be checked; delete it without an expected version".into(),
                    });
                }
                _ => {}
            }
            let gate = self.shared.commits.writing();
            let tombstone = current.unwrap_or(ledger::UNREADABLE).to_le_bytes();
            (&self.shared.games, &self.shared.ended, &self.shared.deleted)
                .transaction(|(g, e, d)| {
                    g.remove(key)?;
                    e.remove(key)?;
                    d.insert(key, &tombstone)?;
                    Ok::<(), ConflictableTransactionError<()>>(())
                })
                .map_err(|e| match e {
                    TransactionError::Storage(e) => self.write_failed(id, e),
                    TransactionError::Abort(()) => StoreError::Io(format!(
                        "internal error: the delete of game '{id}' was aborted"
                    )),
                })?;
            self.shared.lost.forget(id);
            self.shared.commits.record(id, Change::Deleted);
            drop(gate);
            lost.or(current).unwrap_or(0)
        };
        Ok(Some((version, self.ticket()?)))
    }

    /// Reads and replays a game now, on the calling thread: the synchronous form of
    /// [`GameStore::load`] (which runs it on the blocking pool).
    pub fn load(&self, id: &str) -> Result<Option<LoadedGame>, StoreError> {
        self.shared.load(id)
    }

    /// Makes everything written so far durable, blocking the calling thread: the
    /// synchronous form of [`GameStore::flush`].
    pub fn flush(&self) -> Result<(), StoreError> {
        self.shared.check_open()?;
        self.commit.wait_blocking()
    }

    /// A write sled refused: sled may have applied it in memory, or failed to write its
    /// log, so what it holds and what is on disk are unknown. The store stops (fail-stop:
    /// see [`GroupCommit::fail`]) and a handle on sled is leaked, so that no drop flushes
    /// what was never acknowledged (see [`sync_fn`]). A full disk is answered as such.
    fn write_failed(&self, id: &str, e: sled::Error) -> StoreError {
        let err = match e {
            sled::Error::Io(io) => file_err("sled write", &self.shared.path, &io),
            e => self.shared.sled_err(id, e),
        };
        self.commit
            .fail(format!("a write of game '{id}' failed: {err}"));
        std::mem::forget(self.shared.games.clone());
        match err {
            e @ StoreError::DiskFull(_) => e,
            e => StoreError::Stopped(format!("a write of game '{id}' failed: {e}")),
        }
    }
}

impl Shared {
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

    fn sled_err(&self, id: &str, e: sled::Error) -> StoreError {
        match e {
            sled::Error::Corruption { .. } => StoreError::DataLoss {
                id: id.to_string(),
                reason: format!("sled: {e}"),
            },
            e => StoreError::Io(format!(
                "sled error on game '{id}' in {}: {e}",
                self.path.display()
            )),
        }
    }

    /// The write lock of game `id`'s stripe.
    fn writing(&self, id: &str) -> MutexGuard<'_, ()> {
        let mut h = DefaultHasher::new();
        id.hash(&mut h);
        let i = (h.finish() % self.writing.len() as u64) as usize;
        // The lock guards no data: a poisoned one is as good as a clean one.
        self.writing[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Decodes game `id`'s stored record: its version and encoding, `None` if there is no
    /// record.
    fn read(&self, id: &str) -> Result<Option<(u64, CachedEncoder)>, StoreError> {
        let Some(bytes) = self
            .games
            .get(id.as_bytes())
            .map_err(|e| self.sled_err(id, e))?
        else {
            return Ok(None);
        };
        let decoded = decode(id, &bytes)?;
        let version = decoded.loaded.game.version();
        Ok(Some((version, CachedEncoder::split(decoded).1)))
    }

    /// One page of a listing (see [`GameStore::list`]): the `ended` tree for ended games,
    /// the `games` tree for all games (and, skipping the ended ones, for games going).
    fn list(
        &self,
        range: &KeyRange,
        filter: StatusFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<ListPage, StoreError> {
        self.check_open()?;
        if range.exhausted(after) {
            return Ok(ListPage::default());
        }
        let limit = limit.max(1);
        let bytes = |b: std::ops::Bound<&str>| b.map(|s| s.as_bytes().to_vec());
        let range = (bytes(range.start(after)), bytes(range.end()));
        let err = |e: sled::Error| io_err(&self.path, "cannot list games", e);
        let keys: Box<dyn Iterator<Item = Result<sled::IVec, sled::Error>>> = match filter {
            StatusFilter::Ended => Box::new(self.ended.range(range).keys()),
            StatusFilter::All | StatusFilter::InProgress => {
                Box::new(self.games.range(range).keys())
            }
        };
        let mut page = ListPage::default();
        let mut scanned = 0;
        for key in keys {
            let key = key.map_err(err)?;
            scanned += 1;
            let id = String::from_utf8_lossy(&key).into_owned();
            if filter == StatusFilter::InProgress && self.ended.contains_key(&key).map_err(err)? {
                if scanned >= LIST_SCAN_BUDGET {
                    page.resume_after = Some(id);
                    break;
                }
                continue;
            }
            // A game deleted since its key was read is not listed.
            let Some(record) = self.games.get(&key).map_err(err)? else {
                continue;
            };
            if page.games.len() == limit {
                // One more game exists: the page is not the last.
                page.resume_after = page.games.last().map(|g| g.id.clone());
                break;
            }
            // A damaged record lists as version 0; loading it answers DATA_LOSS.
            let version = self
                .encoders
                .version(&id)
                .or_else(|| codec::peek_version(&record))
                .unwrap_or(0);
            page.games.push(ListedGame {
                id,
                version,
                token: None,
            });
            if scanned >= LIST_SCAN_BUDGET {
                page.resume_after = page.games.last().map(|g| g.id.clone());
                break;
            }
        }
        Ok(page)
    }

    fn load(&self, id: &str) -> Result<Option<LoadedGame>, StoreError> {
        self.check_open()?;
        self.lost.check(id)?;
        let Some(bytes) = self
            .games
            .get(id.as_bytes())
            .map_err(|e| self.sled_err(id, e))?
        else {
            return Ok(None);
        };
        let (loaded, cached) = CachedEncoder::split(decode(id, &bytes)?);
        // The encoding goes to the cache only if no write replaced the record meanwhile:
        // the cache's version must be the stored one.
        let _writing = self.writing(id);
        if self
            .games
            .get(id.as_bytes())
            .is_ok_and(|now| now.as_ref() == Some(&bytes))
        {
            self.encoders.put(id, cached);
        }
        Ok(Some(loaded))
    }
}

/// Decodes a stored record; a damaged one is `DataLoss` (and logged).
fn decode(id: &str, bytes: &[u8]) -> Result<codec::Decoded, StoreError> {
    match codec::decode(id, bytes) {
        Ok(decoded) => {
            if !decoded.skipped_sections.is_empty() {
                tracing::warn!(
                    game_id = id,
                    sections = ?decoded.skipped_sections,
                    "record has optional sections this build does not know; they are dropped at the next save"
                );
            }
            Ok(decoded)
        }
        Err(e) => {
            tracing::error!(game_id = id, reason = %e, "stored game is damaged; answering DATA_LOSS for it");
            Err(StoreError::DataLoss {
                id: id.to_string(),
                reason: e.to_string(),
            })
        }
    }
}

impl Drop for SledStore {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::error!(error = %e, path = %self.shared.path.display(), "closing the store");
        }
    }
}

impl GameStore for SledStore {
    fn kind(&self) -> &'static str {
        "sled"
    }

    // One writer (this process): the version names a state, so no token.
    fn create<'a>(&'a self, meta: &'a GameMeta, game: &'a Match) -> StoreFuture<'a, Option<u64>> {
        Box::pin(async move {
            SledStore::create(self, meta, game)?.wait().await?;
            Ok(None)
        })
    }

    fn save<'a>(
        &'a self,
        meta: &'a GameMeta,
        game: &'a Match,
        expected: Stamp,
    ) -> StoreFuture<'a, Option<u64>> {
        Box::pin(async move {
            self.write(meta, game, Some(expected.version))?
                .wait()
                .await?;
            Ok(None)
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<LoadedGame>> {
        let shared = Arc::clone(&self.shared);
        let id = id.to_string();
        Box::pin(async move {
            // Replaying a long game is CPU work: keep it off the async workers.
            tokio::task::spawn_blocking(move || shared.load(&id))
                .await
                .map_err(|e| StoreError::Io(format!("a game load task failed: {e}")))?
        })
    }

    fn list<'a>(
        &'a self,
        range: &'a KeyRange,
        filter: StatusFilter,
        after: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, ListPage> {
        let shared = Arc::clone(&self.shared);
        let after = after.map(str::to_string);
        let range = range.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                shared.list(&range, filter, after.as_deref(), limit)
            })
            .await
            .map_err(|e| StoreError::Io(format!("a game listing task failed: {e}")))?
        })
    }

    fn delete<'a>(
        &'a self,
        id: &'a str,
        expected_version: Option<u64>,
    ) -> StoreFuture<'a, Option<u64>> {
        Box::pin(async move {
            match self.remove(id, expected_version)? {
                Some((version, durable)) => {
                    durable.wait().await?;
                    Ok(Some(version))
                }
                None => Ok(None),
            }
        })
    }

    fn flush<'a>(&'a self) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.shared.check_open()?;
            self.commit.full_ticket()?.wait().await
        })
    }

    fn commit_stats(&self) -> Option<GroupCommitStats> {
        Some(self.commit.stats())
    }

    fn fault(&self) -> Option<tokio::sync::watch::Receiver<Option<StoreError>>> {
        Some(self.commit.faults())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Position, Variant};
    use crate::store::Start;

    fn meta(id: &str) -> GameMeta {
        GameMeta {
            id: id.into(),
            variant: Variant::Standard,
            start: Start::Standard,
            created_unix_ms: 0,
            tags: crate::lifecycle::Tags::none(),
        }
    }

    fn game(moves: &[&str]) -> Match {
        let mut game = Match::untimed(Position::new());
        for m in moves {
            game.play(0, None, m).expect("a legal move");
        }
        game
    }

    fn conflict(id: &str, current: u64) -> Result<Option<u64>, StoreError> {
        Err(StoreError::Conflict {
            id: id.into(),
            current,
        })
    }

    /// The version check holds whether the store remembers the version it wrote (its
    /// encoder cache) or has to read it from the record (a reopened store, or no cache).
    #[tokio::test]
    async fn a_save_over_another_version_is_a_conflict() {
        for cache in [10_000, 0] {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let open = || {
                let mut config = SledConfig::new(dir.path()).durability(Durability::Flush);
                config.encoder_cache_games = cache;
                SledStore::open(config).expect("the store opens")
            };
            let store = open();
            let m = meta("g");
            GameStore::create(&store, &m, &game(&[])).await.unwrap();
            GameStore::save(&store, &m, &game(&["e2e4"]), Stamp::version(0))
                .await
                .unwrap();
            // A writer that decided on version 0 lost the race.
            assert_eq!(
                GameStore::save(&store, &m, &game(&["d2d4"]), Stamp::version(0)).await,
                conflict("g", 1)
            );
            drop(store);

            let store = open();
            assert_eq!(
                GameStore::save(&store, &m, &game(&["d2d4"]), Stamp::version(0)).await,
                conflict("g", 1),
                "cache {cache}: the version read from the record"
            );
            GameStore::save(&store, &m, &game(&["e2e4", "e7e5"]), Stamp::version(1))
                .await
                .unwrap();
            let loaded = GameStore::load(&store, "g").await.unwrap().unwrap();
            assert_eq!(loaded.game.game().san_moves(), ["e4", "e5"]);
            assert_eq!(
                GameStore::save(
                    &store,
                    &m,
                    &game(&["e2e4", "e7e5", "g1f3"]),
                    Stamp::version(3)
                )
                .await,
                conflict("g", 2)
            );
            // A game that is not stored at all: nobody's version to replace.
            assert_eq!(
                GameStore::save(&store, &meta("none"), &game(&["e2e4"]), Stamp::version(0)).await,
                conflict("none", 0)
            );
            assert!(GameStore::load(&store, "none").await.unwrap().is_none());
            GameStore::flush(&store).await.unwrap();
        }
    }
}
