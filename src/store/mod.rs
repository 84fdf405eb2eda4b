//! Durable storage of games as histories (start position plus the event log: moves,
//! undos, offers, endings, clock times), replayed through the rules and the lifecycle on
//! load.
//!
//! Contract every backend keeps:
//! - `create` and `save` write the game's full record; their future resolves once the
//!   change is durable (at the configured durability level). Callers acknowledge a change
//!   to their client only after it resolved.
//! - Every stored game has a version ([`Match::version`]) and, on a store other processes
//!   write too, a random token drawn by its last write: together its [`Stamp`], which
//!   names one stored state exactly (a version alone comes back with other moves after a
//!   delete and re-create, or a failover to a standby that lagged). `save` names the
//!   stamp it expects to replace and fails with [`StoreError::Conflict`] if another writer
//!   got there first: with several replicas on one database, the database decides which
//!   of two racing changes wins. On one node, writes for one game are issued by that game's
//!   single serialization point (the registry's per-game lock), so a conflict cannot
//!   happen there, but the check is made all the same.
//! - `load` replays every event through the rules and the lifecycle; a record that fails
//!   its checksum or its replay is [`StoreError::DataLoss`] for that game alone.
//! - A game's log only grows (append-only), so a backend may encode only what was
//!   appended since its last write; it must still be correct (if slower) when handed a
//!   game whose log does not extend the last one it wrote.
//! - `list` walks games in game-id byte order (the order of the ids' UTF-8 bytes, the
//!   same in every backend), filtered by status; `delete` removes a game and its whole
//!   history, durably when its future resolves, checking the version like `save`.

use std::future::Future;
use std::pin::Pin;

use crate::lifecycle::Match;

pub mod clock;
pub mod codec;
mod encoder_cache;
pub mod group_commit;
mod key_range;
pub mod ledger;
pub mod postgres;
pub mod rollback;
#[cfg(any(test, feature = "testing"))]
pub mod scripted;
pub mod sled;
mod stamp;
pub mod tally;
pub mod verify;

pub use self::sled::{Durability, SledConfig, SledStore};
pub use crate::lifecycle::{GameMeta, Start};
pub use clock::DbClock;
pub use group_commit::GroupCommitStats;
pub use key_range::KeyRange;
pub use postgres::{PgConfig, PgStore, SessionLimits};
#[cfg(any(test, feature = "testing"))]
pub use scripted::ScriptedStore;
pub use stamp::Stamp;
pub use tally::GameTally;

/// A game read back from the store, already replayed.
#[derive(Clone, Debug)]
pub struct LoadedGame {
    /// What the game was created with (its id, start and settings).
    pub meta: GameMeta,
    /// The game, replayed through the rules and the lifecycle.
    pub game: Match,
    /// The token of the write that stored it (`None` on a store with one writer): see
    /// [`Stamp`].
    pub token: Option<u64>,
}

impl LoadedGame {
    /// The stored state this game is: its version and token.
    pub fn stamp(&self) -> Stamp {
        Stamp {
            version: self.game.version(),
            token: self.token,
        }
    }
}

/// What can go wrong in a store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// `create` with an id that is already stored.
    #[error("a game with id '{id}' already exists")]
    AlreadyExists {
        /// The id.
        id: String,
    },
    /// A stored record fails its checksum or its replay; only this game is affected.
    #[error("stored game '{id}' is damaged and cannot be served: {reason}")]
    DataLoss {
        /// The damaged game.
        id: String,
        /// What is wrong with its record.
        reason: String,
    },
    /// The backend failed to read or write.
    #[error("storage failure: {0}")]
    Io(String),
    /// The store has been shut down and takes no more calls.
    #[error("the store is shut down")]
    Closed,
    /// Another writer changed the game first: it is stored at version `current`, not at
    /// the version the save expected. Read it again and decide again.
    #[error("game '{id}' was changed by another writer: it is at version {current} now")]
    Conflict {
        /// The game.
        id: String,
        /// The version it is stored at now.
        current: u64,
    },
    /// The database cannot be reached or did not answer in time; retrying later may
    /// succeed. Nothing is known to be lost.
    #[error("the game database is unavailable: {0}")]
    Unavailable(String),
    /// The file system of the data directory is full (ENOSPC): the change is not
    /// acknowledged, and the embedded store stops (see [`StoreError::Stopped`]).
    #[error("the disk of the data directory is full: {0}")]
    DiskFull(String),
    /// The embedded store stopped after a failed or uncertain write or sync: what reached
    /// the disk is unknown, so it serves nothing more until the process restarts and
    /// recovers from what is on disk (fail-stop).
    #[error(
        "the game store stopped after a failed write or sync ({0}); what reached the disk is unknown, so this server serves nothing more and restarts from what is on disk"
    )]
    Stopped(String),
    /// What sled recovered at start is behind the commit ledger, or disagrees with it
    /// (see `docs/durability.md`): acknowledged changes are missing, so the store refuses
    /// to serve.
    #[error(
        "{0}. This store is not served: restore the data directory from a backup, or start with --accept-store-rollback to serve what is left (the games behind answer DATA_LOSS); `chess-server verify --data-dir DIR` lists every finding"
    )]
    Rollback(String),
    /// The game's history is full: a change that does not end the game would take its
    /// record past [`codec::HISTORY_LIMIT`] bytes. Endings, draw offers and answers still
    /// fit (the room above that limit is kept for them).
    #[error(
        "game '{id}' has a full history ({len} bytes; changes that do not end the game stop at {limit} bytes)"
    )]
    HistoryFull {
        /// The game.
        id: String,
        /// The size its record would have had.
        len: usize,
        /// The limit for changes that do not end the game.
        limit: usize,
    },
}

impl StoreError {
    /// Whether an I/O error means the file system is full (ENOSPC, or EDQUOT: a quota).
    pub fn is_disk_full(e: &std::io::Error) -> bool {
        e.kind() == std::io::ErrorKind::StorageFull
            || e.kind() == std::io::ErrorKind::QuotaExceeded
            || matches!(e.raw_os_error(), Some(28 | 122))
    }
}

/// Which games a listing returns, by status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StatusFilter {
    /// Every game.
    #[default]
    All,
    /// Games still going.
    InProgress,
    /// Games that have ended (on the board, by a player or by the clock).
    Ended,
}

impl StatusFilter {
    /// Whether a game of status `ended` (true: over) passes the filter.
    pub fn admits(self, ended: bool) -> bool {
        match self {
            StatusFilter::All => true,
            StatusFilter::InProgress => !ended,
            StatusFilter::Ended => ended,
        }
    }
}

/// A game a listing found: its id and the stamp stored when it was listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedGame {
    /// The game's id.
    pub id: String,
    /// Its stored version.
    pub version: u64,
    /// The token of the write that stored it (`None` on a store with one writer): a
    /// cached game is current only with this version *and* this token ([`Stamp`]).
    pub token: Option<u64>,
}

impl ListedGame {
    /// The stored state the listing saw.
    pub fn stamp(&self) -> Stamp {
        Stamp {
            version: self.version,
            token: self.token,
        }
    }
}

/// One page of a listing ([`GameStore::list`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListPage {
    /// The games, in game-id byte order.
    pub games: Vec<ListedGame>,
    /// Where the next page starts (pass it as `after`): the last id this page covered,
    /// when games may follow it. `None`: no game of the filter comes after this page. A
    /// store may cover fewer games than asked (it bounds the work of one call), so a page
    /// can be short and still not the last.
    pub resume_after: Option<String>,
}

/// A change a shared store announces (see [`PgStore::changes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreChange {
    /// Game `id` was deleted (by any replica): drop it and end its spectators.
    Deleted {
        /// The game.
        id: String,
    },
    /// Game `id` was committed at `version` (by any replica).
    Game {
        /// The game.
        id: String,
        /// The version committed.
        version: u64,
    },
    /// Announcements may have been missed (the feed reconnected: this replica was cut off
    /// from the store, or paused): any game may have changed, even back to the version a
    /// replica holds with other moves, so drop every cached game (not only the watched
    /// ones). Sent before the store says it is healthy again.
    Resync,
}

/// Resolves once a write is durable. Dropping it does not undo the write.
pub struct Durable(Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send>>);

impl Durable {
    /// A ticket that is already durable (in-memory stores, or nothing to wait for).
    pub fn ready() -> Durable {
        Durable(Box::pin(std::future::ready(Ok(()))))
    }

    /// A ticket that resolves when `fut` does (the backend's flush of the write).
    pub fn new(fut: impl Future<Output = Result<(), StoreError>> + Send + 'static) -> Durable {
        Durable(Box::pin(fut))
    }

    /// Waits until the write is durable, or fails with the store's error.
    pub async fn wait(self) -> Result<(), StoreError> {
        self.0.await
    }
}

/// A place games live. Implementations: [`SledStore`] (the embedded default), [`PgStore`]
/// (PostgreSQL, shared by stateless replicas) and, for tests only (the `testing` feature),
/// `ScriptedStore` (`store::scripted`: in memory, its failures, races and change feed
/// scripted by each test). Async, so that a store over the network does not hold a thread
/// while it waits; declared with `async_trait`, so that it stays usable as `dyn GameStore`
/// (each call's future is boxed, as a hand-written `Pin<Box<dyn Future>>` would be).
#[async_trait::async_trait]
pub trait GameStore: Send + Sync + 'static {
    /// Stores a new game at version `game.version()`; AlreadyExists if the id is taken.
    /// Resolves once durable, with the token the write drew (`None` on a store with one
    /// writer; see [`Stamp`]).
    async fn create(&self, meta: &GameMeta, game: &Match) -> Result<Option<u64>, StoreError>;
    /// Replaces the stored game, which must be in the state `expected` (its version and,
    /// on a shared store, its token), with `game` (at `game.version()`).
    /// `StoreError::Conflict { id, current }` if the stored state is another one (another
    /// writer won, or the game was deleted and created again: `current` is the stored
    /// version, which may even equal the expected one; a game no longer stored at all
    /// counts as `current` 0). Resolves once durable, with the token the write drew.
    async fn save(
        &self,
        meta: &GameMeta,
        game: &Match,
        expected: Stamp,
    ) -> Result<Option<u64>, StoreError>;
    /// Reads and replays a game; Ok(None) if there is none.
    async fn load(&self, id: &str) -> Result<Option<LoadedGame>, StoreError>;
    /// Lists the games of `filter` whose ids lie in `range` and come after `after` (all
    /// of them for `None`) in game-id byte order, at most `limit` (see [`ListPage`]). A
    /// listing is no snapshot: games created or deleted meanwhile may or may not appear
    /// on later pages.
    async fn list(
        &self,
        range: &KeyRange,
        filter: StatusFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<ListPage, StoreError>;
    /// Removes game `id` and its whole history. With `expected_version`, only if it is
    /// stored at that version: [`StoreError::Conflict`] with the stored version
    /// otherwise. Returns the version deleted, or `None` when there is no such game (also
    /// with an expected version). Resolves once the removal is durable; a crash before
    /// then leaves the whole game or none of it.
    async fn delete(
        &self,
        id: &str,
        expected_version: Option<u64>,
    ) -> Result<Option<u64>, StoreError>;
    /// Makes everything written so far durable (shutdown).
    async fn flush(&self) -> Result<(), StoreError>;

    /// The backend's name, for `chess_build_info{store}` and logs: `sled`, `postgres`,
    /// `scripted` (a store that does not say is `unknown`).
    fn kind(&self) -> &'static str {
        "unknown"
    }

    // What stateless replicas on one database need. The defaults suit a store only this
    // process writes (sled, memory), so those need nothing of it.

    /// True when other processes write to this store too (replicas sharing a database):
    /// a game kept in memory may then be stale, so the registry checks
    /// [`GameStore::stored_stamp`] before answering from it and follows
    /// [`GameStore::changes`].
    fn shared(&self) -> bool {
        false
    }
    /// The stamp stored for `id` (`None`: no such game), cheaper than a load: lets a
    /// replica reuse its decoded game while it is exactly the stored state (same version
    /// and same token, see [`Stamp`]).
    async fn stored_stamp(&self, id: &str) -> Result<Option<Stamp>, StoreError> {
        Ok(self.load(id).await?.map(|l| l.stamp()))
    }
    /// How many times the change feed reconnected (0 for a store without one). Moves on
    /// before the store reports itself healthy again after a reconnection, so a registry
    /// that compares it with the value its cached games were read at drops every game
    /// cached before, whatever announcements were missed ([`StoreChange::Resync`] says
    /// the same on the feed, later).
    fn generation(&self) -> u64 {
        0
    }
    /// Changes committed by any writer, as they are announced (`None`: only this process
    /// writes, so there is nothing to follow).
    fn changes(&self) -> Option<tokio::sync::broadcast::Receiver<StoreChange>> {
        None
    }
    /// Whether the store can be reached right now, as it changes (`None`: always, as
    /// long as the process runs). Health reports NOT_SERVING while it is false.
    fn health(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        None
    }

    /// The group commit's counters (commits, syncs, their time), for metrics (`None`: the
    /// store has no group commit of its own; a database keeps its own statistics).
    fn commit_stats(&self) -> Option<GroupCommitStats> {
        None
    }

    /// The fault after which this process must serve nothing more, once it happens
    /// (`None`: the store has no such fault; a database owns its own durability). The
    /// embedded store sets it after a failed or uncertain write or sync (fail-stop: the
    /// kernel may have dropped the pages a failed fsync was for, and sled has applied the
    /// change in memory already): the registry then refuses every call and the server
    /// exits non-zero, so that it restarts from what is on disk.
    fn fault(&self) -> Option<tokio::sync::watch::Receiver<Option<StoreError>>> {
        None
    }

    /// The games this store created or ended by itself, not through the registry (`None`:
    /// it changes games only when asked). A shared store's flag sweep ends games whose
    /// replica is gone: those endings are counted here, once, by the replica whose sweep
    /// committed them.
    fn tally(&self) -> Option<std::sync::Arc<GameTally>> {
        None
    }

    /// The clock every replica of a shared store charges moves and drops flags by (the
    /// database's, as estimated: see [`DbClock`]); `None`: one writer, the local clock.
    fn clock(&self) -> Option<std::sync::Arc<DbClock>> {
        None
    }
}
