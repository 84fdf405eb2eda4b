//! Durability beyond sled's `flush()`: sled 0.34.7 neither flushes the drive's write cache
//! nor syncs the directories whose entries it changes, so the store keeps its files open
//! and fsyncs them itself ([`DurableFiles`]) in the group commit's sync ([`sync_fn`]),
//! which also writes the commit ledger's frame.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::errors::{file_err, io_err};
use super::failpoint::Failpoint;
use crate::store::StoreError;
use crate::store::group_commit::SyncFn;
use crate::store::ledger::Commits;

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
pub(super) struct DurableFiles {
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

pub(super) fn list_dir(dir: &Path) -> std::io::Result<Vec<std::ffi::OsString>> {
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
    pub(super) fn open(path: &Path) -> Result<DurableFiles, StoreError> {
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
    pub(super) fn sync_everything(&mut self) -> Result<(), StoreError> {
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
pub(super) fn sync_fn(
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
