//! What the registry itself can answer instead of running a call: the game is not there,
//! its record is damaged, the store failed, another writer kept winning, the server is
//! shutting down. Errors of the call's own decision are the caller's type (see
//! [`super::Registry::update`]).

use crate::lifecycle::Refusal;
use crate::store::StoreError;

/// Why the registry could not run a call on a game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// No game is stored under this id.
    #[error("no game with id '{id}'")]
    NotFound {
        /// The id looked up.
        id: String,
    },
    /// The game's stored record is damaged ([`StoreError::DataLoss`]): this game alone
    /// cannot be served.
    #[error("{0}")]
    Damaged(StoreError),
    /// The store failed (or is shut down).
    #[error("{0}")]
    Store(StoreError),
    /// The lifecycle refused what the registry did on its own (recording a fallen flag).
    #[error("game '{id}' refused: {refusal}")]
    Refused {
        /// The game.
        id: String,
        /// What the lifecycle said.
        refusal: Refusal,
    },
    /// Other writers changed the game first, again and again: the call gave up.
    #[error("game '{id}' kept changing under the call")]
    ConcurrentChange {
        /// The game.
        id: String,
    },
    /// The game is not at the version the caller expected (a delete with an expected
    /// version): nothing was changed.
    #[error(
        "game '{id}' is at version {current}, not the expected version {expected}; read the game (GetGame) and decide again at version {current}"
    )]
    VersionMismatch {
        /// The game.
        id: String,
        /// The version the caller expected.
        expected: u64,
        /// The version it is at.
        current: u64,
    },
    /// A spectator asked for events from a version the game has not reached.
    #[error("game '{id}' is at version {current}; version {from} is ahead of it")]
    VersionAhead {
        /// The game.
        id: String,
        /// The version asked for.
        from: u64,
        /// The game's version.
        current: u64,
    },
    /// The registry is shutting down (spectator streams end with this).
    #[error("the registry is shutting down")]
    ShuttingDown,
    /// A bug or a failed task.
    #[error("internal error: {0}")]
    Internal(String),
}

impl RegistryError {
    /// A store failure while serving game `id`: damage is [`RegistryError::Damaged`] for
    /// that game alone, a lost race [`RegistryError::ConcurrentChange`].
    pub fn from_store(e: StoreError) -> RegistryError {
        match e {
            StoreError::DataLoss { .. } => RegistryError::Damaged(e),
            StoreError::Conflict { id, .. } => RegistryError::ConcurrentChange { id },
            e => RegistryError::Store(e),
        }
    }
}
