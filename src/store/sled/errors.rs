//! What an I/O or sled failure is to a caller: a full disk is [`StoreError::DiskFull`]
//! (free space, then start again), sled's corruption of a game is
//! [`StoreError::DataLoss`] for that game alone, anything else [`StoreError::Io`], naming
//! the data directory or the file.

use std::path::Path;

use super::SledState;
use crate::store::StoreError;

pub(super) fn io_err(path: &Path, what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io(format!("{what} ({}): {e}", path.display()))
}

/// An I/O failure on `p`: [`StoreError::DiskFull`] when the file system is full, else
/// [`StoreError::Io`].
pub(super) fn file_err(what: &str, p: &Path, e: &std::io::Error) -> StoreError {
    let message = format!("{what} of {}: {e}", p.display());
    if StoreError::is_disk_full(e) {
        StoreError::DiskFull(message)
    } else {
        StoreError::Io(message)
    }
}

/// A sled failure while opening or writing: [`StoreError::DiskFull`] when the file system
/// is full, else [`StoreError::Io`] with `what` and the data directory.
pub(super) fn sled_open_err(path: &Path, what: &str, e: sled::Error) -> StoreError {
    match &e {
        sled::Error::Io(io) if StoreError::is_disk_full(io) => StoreError::DiskFull(format!(
            "{what} ({}): {e}; free space on that file system, then start the server again",
            path.display()
        )),
        _ => io_err(path, what, &e),
    }
}

impl SledState {
    pub(super) fn sled_err(&self, id: &str, e: sled::Error) -> StoreError {
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
}
