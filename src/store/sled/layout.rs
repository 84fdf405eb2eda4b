//! The data directory: the sled trees the store keeps and the layout marker that says
//! which builds can read them (a newer layout is refused at open); how the directory is
//! made ready for sled, under its lock; and the index of ended games, built once for a
//! directory of layout 1.

use std::fs::File;
use std::path::Path;

use super::durable_files::list_dir;
use super::errors::{io_err, sled_open_err};
use crate::store::{StoreError, codec};

/// The store layout this build writes, kept under `meta/layout`. A data directory with a
/// newer layout is refused at open. Layout 2 adds the `ended` tree (the index of games
/// that are over, for listing by status); a layout 1 directory gets it built once at
/// open (every game read once), then is marked layout 2.
pub const LAYOUT_VERSION: u8 = 2;
pub(super) const GAMES_TREE: &str = "games";
pub(super) const ENDED_TREE: &str = "ended";
pub(super) const META_TREE: &str = "meta";
pub(super) const LAYOUT_KEY: &str = "layout";

/// How long an open waits for the directory's lock before calling it busy.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Gets the data directory ready for sled, under its lock: refuses when another process
/// holds it (sled locks its `db` file with `flock`; so does this, for a moment), so the
/// message names the lock only when it really is held; then removes what a start
/// interrupted by a full disk leaves behind: a snapshot being written
/// (`snap.*.generating`, often 0 bytes). sled writes a snapshot under that name, fsyncs it
/// and only then renames it, so such a file is never a complete snapshot; but sled
/// 0.34.7 reads it as one and then refuses every start ("Read corrupted data"), even
/// after space is back. Under the lock no other sled can be writing one.
pub(super) fn prepare_data_dir(path: &Path) -> Result<(), StoreError> {
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
pub(super) fn build_ended_index(
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
