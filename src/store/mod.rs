//! Durable storage of games as histories (start position plus the event log: moves,
//! undos, offers, endings, clock times), replayed through the rules and the lifecycle on
//! load.
//!
//! Contract every backend keeps:
//! - `create` and `save` write the game's full record and return a [`Durable`] ticket;
//!   the change is durable (at the configured durability level) once the ticket resolves.
//!   Callers acknowledge a change to their client only after awaiting the ticket.
//! - Writes for one game are issued by that game's single serialization point (the
//!   service's per-game lock), so a backend never has to order them itself.
//! - `load` replays every event through the rules and the lifecycle; a record that fails
//!   its checksum or its replay is [`StoreError::DataLoss`] for that game alone.
//! - A game's log only grows (append-only), so a backend may encode only what was
//!   appended since its last write; it must still be correct (if slower) when handed a
//!   game whose log does not extend the last one it wrote.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use crate::lifecycle::Match;
use crate::rules::Variant;

pub mod codec;
pub mod crash_journal;
pub mod group_commit;
pub mod postgres;
pub mod sled_store;

pub use group_commit::GroupCommitStats;
pub use postgres::{PgConfig, PgStore};
pub use sled_store::{Durability, SledConfig, SledStore};

/// How a game started: what the store needs to rebuild the start position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// The standard initial position.
    Standard,
    /// A Chess960 start position by Scharnagl number (0..=959).
    Chess960(u32),
    /// Any other start, as canonical FEN (in the game's variant).
    Fen(String),
}

/// What identifies a stored game besides its moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameMeta {
    pub id: String,
    pub variant: Variant,
    pub start: Start,
    /// Milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
}

/// A game read back from the store, already replayed.
#[derive(Clone, Debug)]
pub struct LoadedGame {
    pub meta: GameMeta,
    pub game: Match,
}

/// What can go wrong in a store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("a game with id '{id}' already exists")]
    AlreadyExists { id: String },
    #[error("stored game '{id}' is damaged and cannot be served: {reason}")]
    DataLoss { id: String, reason: String },
    #[error("storage failure: {0}")]
    Io(String),
    #[error("the store is shut down")]
    Closed,
    /// A shared store moved on: the game's stored version is `current`, not the one the
    /// write expected. The caller reloads and decides again.
    #[error("game '{id}' changed meanwhile (now at version {current})")]
    Conflict { id: String, current: u64 },
    /// The database cannot be reached or did not answer in time; retrying later may
    /// succeed. Nothing is known to be lost.
    #[error("the game database is unavailable: {0}")]
    Unavailable(String),
}

/// A change a shared store announces (see [`PgStore::changes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreChange {
    /// Game `id` was committed at `version` (by any replica).
    Game { id: String, version: u64 },
    /// Announcements may have been missed (the feed reconnected): re-check what you hold.
    Resync,
}

/// Resolves once a write is durable. Dropping it does not undo the write.
pub struct Durable(Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send>>);

impl Durable {
    /// A ticket that is already durable (in-memory stores, or nothing to wait for).
    pub fn ready() -> Durable {
        Durable(Box::pin(std::future::ready(Ok(()))))
    }

    pub fn new(fut: impl Future<Output = Result<(), StoreError>> + Send + 'static) -> Durable {
        Durable(Box::pin(fut))
    }

    pub async fn wait(self) -> Result<(), StoreError> {
        self.0.await
    }
}

/// A place games live. Implementations: [`MemoryStore`] (tests), the sled store.
pub trait GameStore: Send + Sync + 'static {
    /// Stores a new game. `AlreadyExists` if the id is taken.
    fn create(&self, meta: &GameMeta, game: &Match) -> Result<Durable, StoreError>;
    /// Replaces the stored history of an existing game with `game`'s (usually its
    /// previous history plus a few events).
    fn save(&self, meta: &GameMeta, game: &Match) -> Result<Durable, StoreError>;
    /// Reads and replays a game; `Ok(None)` if there is no such game.
    fn load(&self, id: &str) -> Result<Option<LoadedGame>, StoreError>;
    /// Makes everything written so far durable (used at shutdown).
    fn flush(&self) -> Result<(), StoreError>;
}

/// A store that keeps games in memory only: for tests and for `--data-dir` free runs.
#[derive(Default)]
pub struct MemoryStore {
    games: Mutex<HashMap<String, LoadedGame>>,
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

impl GameStore for MemoryStore {
    fn create(&self, meta: &GameMeta, game: &Match) -> Result<Durable, StoreError> {
        let mut games = self.games.lock().map_err(|_| StoreError::Closed)?;
        if games.contains_key(&meta.id) {
            return Err(StoreError::AlreadyExists {
                id: meta.id.clone(),
            });
        }
        games.insert(
            meta.id.clone(),
            LoadedGame {
                meta: meta.clone(),
                game: game.clone(),
            },
        );
        Ok(Durable::ready())
    }

    fn save(&self, meta: &GameMeta, game: &Match) -> Result<Durable, StoreError> {
        let mut games = self.games.lock().map_err(|_| StoreError::Closed)?;
        games.insert(
            meta.id.clone(),
            LoadedGame {
                meta: meta.clone(),
                game: game.clone(),
            },
        );
        Ok(Durable::ready())
    }

    fn load(&self, id: &str) -> Result<Option<LoadedGame>, StoreError> {
        let games = self.games.lock().map_err(|_| StoreError::Closed)?;
        Ok(games.get(id).cloned())
    }

    fn flush(&self) -> Result<(), StoreError> {
        Ok(())
    }
}
