//! The sync failpoint: fault-injection tests make the syncs of a running store fail (EIO,
//! or ENOSPC) to check that it stops instead of acknowledging what may not be on disk.

use std::path::{Path, PathBuf};

/// The environment variable that arms the sync failpoint (for fault-injection tests):
/// it names a trigger file. While it is unset the failpoint costs nothing; while it is
/// set, every sync looks whether the trigger file exists (one `stat`), and if it does,
/// the sync fails after sled's flush, as an `fsync` that fails does: with ENOSPC when the
/// file holds `enospc`, else with EIO.
pub const FAILPOINT_SYNC_ENV: &str = "CHESS_FAILPOINT_SYNC";

/// The armed sync failpoint: its trigger file.
pub(super) struct Failpoint(PathBuf);

impl Failpoint {
    pub(super) fn from_env() -> Option<Failpoint> {
        let trigger = std::env::var_os(FAILPOINT_SYNC_ENV).filter(|v| !v.is_empty())?;
        tracing::warn!(
            trigger = %Path::new(&trigger).display(),
            "{FAILPOINT_SYNC_ENV} is set: syncs fail once the trigger file exists (a fault-injection test)"
        );
        Some(Failpoint(PathBuf::from(trigger)))
    }

    /// The injected failure, if the trigger file exists.
    pub(super) fn check(&self) -> std::io::Result<()> {
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
