//! [`Stamp`]: what identifies one stored state of a game exactly.
//!
//! Why not the version alone: a version number names a state only while a game's log
//! only grows. With several writers on one database it can come back with other
//! contents: a game deleted and created again under the same id reaches version 3 again
//! with other moves, and a database that fails over to a standby that lagged can hold an
//! older version 4 than the one a replica cached. A replica that compared versions only
//! then answered from its stale copy and, worse, won the compare-and-set with it,
//! overwriting acknowledged moves (issue 24). So a shared store draws a fresh random
//! token for every write of a row, and every freshness check and every compare-and-set
//! compares the version *and* the token. A store only this process writes (sled,
//! memory) has one writer, whose versions do name states: its token is `None`.

use super::StoreError;

/// One stored state of a game: its version and, on a store other processes write too,
/// the random token its last write drew.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stamp {
    /// The game's version ([`crate::lifecycle::Match::version`]).
    pub version: u64,
    /// The token of the write that stored this state (`None`: a store with one writer,
    /// where the version is enough).
    pub token: Option<u64>,
}

impl Stamp {
    /// The stamp of `version` on a store with one writer (no token).
    pub fn version(version: u64) -> Stamp {
        Stamp {
            version,
            token: None,
        }
    }

    /// A fresh write token from the OS's randomness, so two writes of one id (whichever
    /// replica, whatever happened between them) share one with a chance of 2^-64.
    pub fn fresh_token() -> Result<u64, StoreError> {
        getrandom::u64()
            .map_err(|e| StoreError::Io(format!("no randomness for a write token: {e}")))
    }
}
