//! The commit ledger of the embedded store: a small file beside sled's, `commit-ledger`,
//! that says what sled must hold, so that a store sled recovered only in part is never
//! served as if nothing happened (see `docs/durability.md`).
//!
//! Every group commit that carries changes gets the next commit sequence number. Before
//! sled's flush, the flusher writes the number and the batch's changes (each game's id and
//! the version its record now holds, or its deletion) under `meta/commit`, in the same sled
//! flush as the records. After sled's flush, and before the fsync of sled's `db` file, it
//! appends the same number and changes to the ledger and waits until the device has them
//! (at the `fsync` level; `flush` only writes them). The fsync's device flush then makes
//! the records, the marker and the ledger's frame durable at once, and only then is any
//! waiter answered: so every acknowledged change is in the ledger, for one device flush a
//! commit (a second fsync, the ledger's own, cost 6.6-11.6% of durable Play's throughput).
//! A crash inside that fsync can leave either one a commit ahead of the other; neither was
//! acknowledged, and the start's check allows exactly that ([`super::rollback`]).
//!
//! The file is a sequence of frames, `[u32 length][u32 crc32][payload]`, little-endian;
//! the first frame is a checkpoint (the commit number and every game's version), each
//! later one a commit (the next number and its changes). After the frames come zeros,
//! written ahead so that an append touches no metadata. A start checks sled against it
//! ([`super::rollback`]) and then writes a fresh checkpoint, and so does a running store
//! once the frames pass [`ROTATE_AT`]: the file stays small however long the server runs.
#![warn(missing_docs)]

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard};

use super::StoreError;

/// The ledger's file name in the data directory.
pub const LEDGER_FILE: &str = "commit-ledger";
/// The key in sled's `meta` tree of the last commit: its number and its changes.
pub const COMMIT_KEY: &str = "commit";
/// The version recorded for a record whose version cannot be read (a damaged record,
/// which answers DATA_LOSS when loaded).
pub const UNREADABLE: u64 = u64::MAX;

const CHECKPOINT: u8 = 1;
const COMMIT: u8 = 2;
/// Written by a clean close after the last commit: that commit is confirmed.
const CLOSED: u8 = 3;

/// The version a record holds, for the ledger ([`UNREADABLE`] when its framing is
/// damaged).
pub fn record_version(record: &[u8]) -> u64 {
    super::codec::peek_version(record).unwrap_or(UNREADABLE)
}

/// What a commit did to one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Its record now holds this version ([`UNREADABLE`] if it cannot be read).
    Live(u64),
    /// It was deleted.
    Deleted,
    /// An accepted rollback (`--accept-store-rollback`) lost its acknowledged version,
    /// this one: it answers DATA_LOSS until it is deleted.
    Lost(u64),
}

/// One game's change.
pub type Changes = Vec<(String, Change)>;

/// Appends `changes` to `out`: a count, then per change a tag, the id and a version.
pub fn encode_changes(out: &mut Vec<u8>, changes: &[(String, Change)]) {
    out.extend_from_slice(&(changes.len() as u32).to_le_bytes());
    for (id, change) in changes {
        let (tag, version) = match *change {
            Change::Live(v) => (0u8, v),
            Change::Deleted => (1, 0),
            Change::Lost(v) => (2, v),
        };
        out.push(tag);
        let id = &id.as_bytes()[..id.len().min(u16::MAX as usize)];
        out.extend_from_slice(&(id.len() as u16).to_le_bytes());
        out.extend_from_slice(id);
        out.extend_from_slice(&version.to_le_bytes());
    }
}

/// A little reader over a byte slice: `None` when the bytes run out.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }
}

fn read_changes(r: &mut Reader<'_>) -> Option<Changes> {
    let n = r.u32()? as usize;
    let mut changes = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let tag = r.u8()?;
        let len = r.u16()? as usize;
        let id = String::from_utf8(r.take(len)?.to_vec()).ok()?;
        let version = r.u64()?;
        let change = match tag {
            0 => Change::Live(version),
            1 => Change::Deleted,
            2 => Change::Lost(version),
            _ => return None,
        };
        changes.push((id, change));
    }
    Some(changes)
}

/// The value of `meta/commit`: the commit number, then its changes.
pub fn encode_marker(seq: u64, changes: &[(String, Change)]) -> Vec<u8> {
    let mut out = seq.to_le_bytes().to_vec();
    encode_changes(&mut out, changes);
    out
}

/// Reads a `meta/commit` value; `None` if it is damaged.
pub fn decode_marker(bytes: &[u8]) -> Option<(u64, Changes)> {
    let mut r = Reader(bytes);
    let seq = r.u64()?;
    let changes = read_changes(&mut r)?;
    r.0.is_empty().then_some((seq, changes))
}

fn frame(kind: u8, seq: u64, changes: &[(String, Change)]) -> Vec<u8> {
    let mut payload = vec![kind];
    payload.extend_from_slice(&seq.to_le_bytes());
    encode_changes(&mut payload, changes);
    let mut out = Vec::with_capacity(payload.len() + 8);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// What the ledger says: the last commit number and every game's last acknowledged
/// version (or its loss).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LedgerState {
    /// The last commit number.
    pub seq: u64,
    /// Each game's last acknowledged state: [`Change::Live`] or [`Change::Lost`].
    pub games: BTreeMap<String, Change>,
    /// Bytes after the last whole frame (a commit whose append a crash interrupted: it
    /// was never acknowledged).
    pub torn_tail: u64,
    /// Whether the file ends in a clean close's mark: its last commit is confirmed.
    pub closed: bool,
    /// How to take the last commit back: each game it touched and its state before.
    undo: Vec<(String, Option<Change>)>,
}

impl LedgerState {
    /// Applies one commit's changes, keeping what it replaced for
    /// [`LedgerState::drop_unconfirmed`].
    pub fn apply(&mut self, changes: Changes) {
        self.undo.clear();
        for (id, change) in changes {
            self.undo.push((id.clone(), self.games.get(&id).copied()));
            match change {
                Change::Deleted => {
                    self.games.remove(&id);
                }
                c => {
                    self.games.insert(id, c);
                }
            }
        }
    }

    /// Takes back the last commit when nothing confirms it (no clean close follows it):
    /// its ledger append and sled's fsync ran at the same time, so a crash (a power loss)
    /// can leave it in the ledger and not in sled, and then it was never acknowledged.
    /// Whether it did.
    pub fn drop_unconfirmed(&mut self) -> bool {
        if self.closed || self.undo.is_empty() {
            return false;
        }
        for (id, before) in std::mem::take(&mut self.undo).into_iter().rev() {
            match before {
                Some(c) => self.games.insert(id, c),
                None => self.games.remove(&id),
            };
        }
        self.seq -= 1;
        true
    }
}

/// Why the ledger cannot be read.
fn damaged(path: &Path, what: &str) -> StoreError {
    StoreError::Rollback(format!(
        "the commit ledger {} is damaged ({what}), so what sled must hold is unknown",
        path.display()
    ))
}

/// Reads the ledger in `dir`: `None` when there is none.
pub fn read(dir: &Path) -> Result<Option<LedgerState>, StoreError> {
    let path = dir.join(LEDGER_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(StoreError::Io(format!(
                "cannot read the commit ledger {}: {e}",
                path.display()
            )));
        }
    };
    let mut r = Reader(&bytes);
    let mut state: Option<LedgerState> = None;
    loop {
        let Some(payload) = next_frame(&mut r) else {
            match state.as_mut() {
                // What follows the frames: zeros written ahead (nothing torn), or a frame
                // whose append a crash interrupted, and the zeros after it.
                Some(s) => {
                    s.torn_tail =
                        r.0.iter()
                            .rposition(|&b| b != 0)
                            .map_or(0, |i| i as u64 + 1)
                }
                None => return Err(damaged(&path, "its checkpoint does not read")),
            }
            break;
        };
        let mut p = Reader(payload);
        let (kind, seq, changes) = match (p.u8(), p.u64(), read_changes(&mut p)) {
            (Some(k), Some(s), Some(c)) if p.0.is_empty() => (k, s, c),
            _ => {
                return Err(damaged(
                    &path,
                    "a frame with a good checksum does not parse",
                ));
            }
        };
        match (&mut state, kind) {
            (None, CHECKPOINT) => {
                let mut s = LedgerState {
                    seq,
                    closed: true,
                    ..LedgerState::default()
                };
                s.apply(changes);
                s.undo.clear();
                state = Some(s);
            }
            (Some(s), COMMIT) if seq == s.seq + 1 => {
                s.seq = seq;
                s.closed = false;
                s.apply(changes);
            }
            (Some(s), CLOSED) if seq == s.seq => s.closed = true,
            (Some(s), _) => {
                return Err(damaged(
                    &path,
                    &format!(
                        "after commit {} comes a frame of kind {kind} for commit {seq}",
                        s.seq
                    ),
                ));
            }
            (None, _) => return Err(damaged(&path, "it does not start with a checkpoint")),
        }
        if r.0.is_empty() {
            break;
        }
    }
    Ok(state)
}

/// The next whole frame's payload, `None` (and nothing consumed) at a torn or damaged one,
/// or at the zeros written ahead of the frames (a length of 0: no frame is empty).
fn next_frame<'a>(r: &mut Reader<'a>) -> Option<&'a [u8]> {
    let mut probe = Reader(r.0);
    let len = probe.u32()? as usize;
    if len == 0 {
        return None;
    }
    let crc = probe.u32()?;
    let payload = probe.take(len)?;
    if crc32fast::hash(payload) != crc {
        return None;
    }
    r.0 = probe.0;
    Some(payload)
}

fn ledger_err(path: &Path, what: &str, e: &std::io::Error) -> StoreError {
    let message = format!("{what} of the commit ledger {}: {e}", path.display());
    if StoreError::is_disk_full(e) {
        StoreError::DiskFull(format!(
            "{message}; free space on that file system, then start the server again"
        ))
    } else {
        StoreError::Io(message)
    }
}

/// Writes a new ledger in `dir` holding only a checkpoint (commit `seq`, `games`): to a
/// temporary file, fsynced, renamed over the old one, and the directory fsynced.
pub fn write_checkpoint(
    dir: &Path,
    seq: u64,
    games: &BTreeMap<String, Change>,
) -> Result<(), StoreError> {
    let path = dir.join(LEDGER_FILE);
    let tmp = dir.join(format!("{LEDGER_FILE}.new"));
    let changes: Changes = games.iter().map(|(id, c)| (id.clone(), *c)).collect();
    let bytes = frame(CHECKPOINT, seq, &changes);
    (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        File::open(dir)?.sync_all()
    })()
    .map_err(|e| ledger_err(&path, "the checkpoint", &e))
}

/// How far ahead of its frames the ledger is filled with zeros (written and fsynced), so
/// that appending a frame changes no metadata (see [`Appender::append`]).
const GROWTH: u64 = 1 << 20;

/// How long the ledger's commits (after its checkpoint) may grow before it is rewritten as
/// one checkpoint (see [`Appender::rotate`]): at a few hundred bytes a commit, a busy
/// store's ledger reaches it in tens of minutes; the rewrite reads it back once (its cost
/// is not measured yet).
const ROTATE_AT: u64 = 16 << 20;

/// The ledger open for appending commits.
struct Appender {
    path: PathBuf,
    file: File,
    fsync: bool,
    /// [`ROTATE_AT`], smaller in tests.
    rotate_at: u64,
    /// Whether the ledger is on the device of sled's `db` file, whose fsync then flushes
    /// the ledger's frames too; otherwise each frame gets an fsync of its own.
    beside_db: bool,
    /// Where the checkpoint ends and the commits begin.
    commits_from: u64,
    /// Where the next frame goes: the end of the frames.
    end: u64,
    /// The file's length. From `end` on it holds zeros, written and (at `fsync`) fsynced.
    allocated: u64,
}

impl Appender {
    /// Rewrites the ledger as one checkpoint of what its frames say (commit `seq`), so that
    /// it stays small however long the server runs. Called before a group commit's append:
    /// every commit in the file is durable by then, in sled and in the ledger, since the
    /// group commit that appended the last one has synced. A crash during it leaves either
    /// the old file or the new one, both true (`write_checkpoint` renames).
    fn rotate(&mut self, seq: u64) -> Result<(), StoreError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let state = read(dir)?.ok_or_else(|| damaged(&self.path, "it is gone"))?;
        if state.seq != seq || state.torn_tail != 0 {
            return Err(damaged(
                &self.path,
                &format!(
                    "it reads as commit {} with {} bytes torn, where commit {seq} was written",
                    state.seq, state.torn_tail
                ),
            ));
        }
        write_checkpoint(dir, seq, &state.games)?;
        let file = File::options()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|e| ledger_err(&self.path, "open", &e))?;
        let len = file
            .metadata()
            .map_err(|e| ledger_err(&self.path, "stat", &e))?
            .len();
        self.file = file;
        self.commits_from = len;
        self.end = len;
        self.allocated = len;
        Ok(())
    }

    /// Writes `bytes` after the last frame. At the `fsync` level they have reached the
    /// device when this returns (`sync_file_range` waits for the write), but maybe only its
    /// volatile cache: the next device flush makes them durable. That is sled's fsync of
    /// `db` right after (the group commit's), or this file's own fsync when the ledger is
    /// on another device (`beside_db` false). No metadata is involved: the frame lands in
    /// zeros already written and fsynced ([`GROWTH`] at a time), so the length and the
    /// block map need no journal commit. Sled's own records are made durable the same
    /// way: written with `sync_file_range`, then flushed by the fsync of `db`.
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt as _;
        let end = self.end + bytes.len() as u64;
        if end > self.allocated {
            let grown = end.max(self.allocated + GROWTH);
            let zeros = vec![0; (grown - self.allocated) as usize];
            self.file.write_all_at(&zeros, self.allocated)?;
            if self.fsync {
                self.file.sync_all()?;
            }
            self.allocated = grown;
        }
        self.file.write_all_at(bytes, self.end)?;
        if self.fsync {
            if self.beside_db {
                write_through(&self.file, self.end, bytes.len())?;
            } else {
                self.file.sync_data()?;
            }
        }
        self.end = end;
        Ok(())
    }
}

/// Starts the write-back of `len` bytes at `offset` and waits until the device has them
/// (no flush of its cache: see [`Appender::append`]).
fn write_through(file: &File, offset: u64, len: usize) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd as _;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return Err(std::io::Error::other("a ledger offset beyond i64"));
    };
    // SAFETY: a plain system call on a descriptor this `File` owns; no memory is passed.
    let ret = unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            offset,
            len,
            libc::SYNC_FILE_RANGE_WAIT_BEFORE
                | libc::SYNC_FILE_RANGE_WRITE
                | libc::SYNC_FILE_RANGE_WAIT_AFTER,
        )
    };
    match ret {
        0 => Ok(()),
        _ => {
            let e = std::io::Error::last_os_error();
            // A kernel or file system without it: an fsync of the ledger itself.
            if e.raw_os_error() == Some(libc::ENOSYS) {
                file.sync_data()
            } else {
                Err(e)
            }
        }
    }
}

/// A commit staged in sled, to append to the ledger once sled's flush is durable.
pub struct Staged {
    seq: u64,
    changes: Changes,
}

/// The running side of the ledger: writers record their changes here, the flusher stages
/// them in sled and appends them to the ledger (see the module docs).
pub struct Commits {
    /// Held shared by a writer from its sled write to [`Commits::record`], and exclusively
    /// by the flusher while it stages a commit: every record in sled before a commit's
    /// marker has its change in that commit or an earlier one.
    gate: RwLock<()>,
    /// Whether changes are recorded at all (not at durability `none`).
    enabled: bool,
    pending: Mutex<Changes>,
    /// The last commit number and the ledger file (the flusher's alone).
    appender: Mutex<(u64, Option<Appender>)>,
    meta: sled::Tree,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Commits {
    /// Starts recording after commit `seq`, appending to the ledger in `dir` (fsynced
    /// when `fsync`); with `enabled` false (durability `none`, which acknowledges before
    /// anything is written) nothing is recorded.
    pub fn open(
        dir: &Path,
        meta: sled::Tree,
        seq: u64,
        enabled: bool,
        fsync: bool,
    ) -> Result<Commits, StoreError> {
        let appender = if enabled {
            use std::os::unix::fs::MetadataExt as _;
            let path = dir.join(LEDGER_FILE);
            let file = File::options()
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| ledger_err(&path, "open", &e))?;
            // Opened right after a checkpoint (`write_checkpoint`): the file is its frames.
            let meta = file.metadata().map_err(|e| ledger_err(&path, "stat", &e))?;
            // Unknown (no `db` to compare with): the ledger fsyncs its frames itself.
            let beside_db =
                std::fs::metadata(dir.join("db")).is_ok_and(|db| db.dev() == meta.dev());
            Some(Appender {
                path,
                file,
                fsync,
                rotate_at: ROTATE_AT,
                beside_db,
                commits_from: meta.len(),
                end: meta.len(),
                allocated: meta.len(),
            })
        } else {
            None
        };
        Ok(Commits {
            gate: RwLock::new(()),
            enabled,
            pending: Mutex::new(Vec::new()),
            appender: Mutex::new((seq, appender)),
            meta,
        })
    }

    /// Held from a write to sled until its [`Commits::record`].
    pub fn writing(&self) -> RwLockReadGuard<'_, ()> {
        self.gate.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a change written to sled (call it holding [`Commits::writing`]).
    pub fn record(&self, id: &str, change: Change) {
        if self.enabled {
            lock(&self.pending).push((id.to_string(), change));
        }
    }

    /// The flusher, before sled's flush: the changes recorded so far get the next commit
    /// number, written under `meta/commit`. `None` when there is nothing to commit.
    pub fn stage(&self) -> Result<Option<Staged>, sled::Error> {
        let _gate = self.gate.write().unwrap_or_else(|p| p.into_inner());
        let changes = std::mem::take(&mut *lock(&self.pending));
        if changes.is_empty() {
            return Ok(None);
        }
        let seq = lock(&self.appender).0 + 1;
        self.meta.insert(COMMIT_KEY, encode_marker(seq, &changes))?;
        Ok(Some(Staged { seq, changes }))
    }

    /// The flusher, after sled's flush and before its fsync: appends the staged commit to
    /// the ledger, on its way to the device, so that sled's fsync makes both durable with
    /// one flush (see [`Appender::append`]). Only after that fsync may its waiters be
    /// answered.
    pub fn append(&self, staged: Staged) -> Result<(), StoreError> {
        let mut appender = lock(&self.appender);
        let (seq, file) = &mut *appender;
        if let Some(a) = file {
            if a.end - a.commits_from > a.rotate_at {
                a.rotate(*seq)?;
            }
            let bytes = frame(COMMIT, staged.seq, &staged.changes);
            a.append(&bytes)
                .map_err(|e| ledger_err(&a.path, "append", &e))?;
        }
        *seq = staged.seq;
        Ok(())
    }
}

impl Commits {
    /// A clean close, after the last sync: marks the last commit confirmed (see
    /// [`LedgerState::drop_unconfirmed`]).
    pub fn mark_closed(&self) -> Result<(), StoreError> {
        let mut appender = lock(&self.appender);
        let (seq, file) = &mut *appender;
        if let Some(a) = file {
            a.append(&frame(CLOSED, *seq, &[]))
                .and_then(|()| a.file.sync_data())
                .map_err(|e| ledger_err(&a.path, "the close mark", &e))?;
        }
        Ok(())
    }

    /// Whether the ledger is fsynced (the `fsync` level).
    pub fn fsyncs(&self) -> bool {
        lock(&self.appender).1.as_ref().is_some_and(|a| a.fsync)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ledger in `dir` holding a checkpoint (commit `seq`, `games`), opened for commits
    /// at the `fsync` level, with an empty `db` file beside it so that its frames go out by
    /// `sync_file_range` (`beside_db`); and the sled whose `meta` tree gets the markers.
    fn open_after_checkpoint(
        dir: &Path,
        seq: u64,
        games: &BTreeMap<String, Change>,
    ) -> (sled::Db, Commits) {
        write_checkpoint(dir, seq, games).unwrap();
        std::fs::write(dir.join("db"), b"").unwrap();
        let db = sled::Config::new().temporary(true).open().unwrap();
        let commits = Commits::open(dir, db.open_tree("meta").unwrap(), seq, true, true).unwrap();
        (db, commits)
    }

    #[test]
    fn a_checkpoint_and_its_commits_read_back_and_a_torn_tail_is_ignored() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut games = BTreeMap::new();
        games.insert("a".to_string(), Change::Live(3));
        games.insert("b".to_string(), Change::Lost(7));
        let (db, commits) = open_after_checkpoint(dir.path(), 10, &games);
        for (id, change) in [("a", Change::Live(4)), ("c", Change::Live(0))] {
            let _w = commits.writing();
            commits.record(id, change);
        }
        let staged = commits.stage().unwrap().expect("changes to commit");
        let marker = db
            .open_tree("meta")
            .unwrap()
            .get(COMMIT_KEY)
            .unwrap()
            .unwrap();
        assert_eq!(decode_marker(&marker).unwrap().0, 11);
        commits.append(staged).unwrap();
        {
            let _w = commits.writing();
            commits.record("a", Change::Deleted);
        }
        commits.append(commits.stage().unwrap().unwrap()).unwrap();
        assert!(commits.stage().unwrap().is_none(), "nothing more to commit");

        let state = read(dir.path()).unwrap().unwrap();
        assert_eq!(state.seq, 12);
        let expected: BTreeMap<String, Change> = [
            ("b".to_string(), Change::Lost(7)),
            ("c".to_string(), Change::Live(0)),
        ]
        .into_iter()
        .collect();
        assert_eq!(state.games, expected);
        assert_eq!(state.torn_tail, 0);
        // The last commit, unconfirmed (no clean close), can be taken back; once the
        // close mark follows it, it cannot.
        let mut dropped = state.clone();
        assert!(dropped.drop_unconfirmed());
        assert_eq!(dropped.seq, 11);
        assert_eq!(dropped.games.get("a"), Some(&Change::Live(4)));
        commits.mark_closed().unwrap();
        let mut closed = read(dir.path()).unwrap().unwrap();
        assert!(closed.closed);
        assert!(!closed.drop_unconfirmed());
        assert_eq!(closed.seq, 12);

        // The frames are followed by zeros written ahead, which are no torn tail.
        let path = dir.path().join(LEDGER_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        let whole = {
            let appender = lock(&commits.appender);
            let a = appender.1.as_ref().unwrap();
            assert!(a.beside_db);
            a.end as usize
        };
        assert!(
            bytes.len() > whole + GROWTH as usize / 2,
            "zeros written ahead"
        );
        assert!(bytes[whole..].iter().all(|&b| b == 0));
        // Half a frame after the last one: a crash during an append, never acknowledged.
        let half = &frame(COMMIT, 13, &[("z".into(), Change::Live(1))])[..9];
        bytes[whole..whole + 9].copy_from_slice(half);
        std::fs::write(&path, &bytes).unwrap();
        let torn = read(dir.path()).unwrap().unwrap();
        assert_eq!((torn.seq, torn.torn_tail), (12, 9));
        // A damaged checkpoint is a refusal, never an empty ledger.
        bytes[..whole].fill(0);
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(read(dir.path()), Err(StoreError::Rollback(_))));
    }

    #[test]
    fn a_long_ledger_is_rewritten_as_one_checkpoint_of_the_same_state() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut games = BTreeMap::new();
        games.insert("lost".to_string(), Change::Lost(2));
        let (_db, commits) = open_after_checkpoint(dir.path(), 5, &games);
        lock(&commits.appender).1.as_mut().unwrap().rotate_at = 300;
        let mut expected = games.clone();
        let (mut longest, mut rotations) = (0, 0);
        for n in 0..200u64 {
            let id = format!("g{}", n % 37);
            let change = if n % 11 == 10 {
                Change::Deleted
            } else {
                Change::Live(n)
            };
            {
                let _w = commits.writing();
                commits.record(&id, change);
            }
            match change {
                Change::Deleted => expected.remove(&id),
                c => expected.insert(id, c),
            };
            let from = lock(&commits.appender).1.as_ref().unwrap().commits_from;
            commits.append(commits.stage().unwrap().unwrap()).unwrap();
            let appender = lock(&commits.appender);
            let a = appender.1.as_ref().unwrap();
            rotations += usize::from(a.commits_from != from);
            longest = longest.max(a.end - a.commits_from);
        }
        // Rewritten many times, the commits never much past the threshold: the same state.
        assert!(rotations > 5, "{rotations} rotations");
        assert!(longest < 300 + 100, "the commits grew to {longest} bytes");
        let state = read(dir.path()).unwrap().unwrap();
        assert_eq!(state.seq, 205);
        assert_eq!(state.games, expected);
        assert_eq!(state.torn_tail, 0);
    }
}
