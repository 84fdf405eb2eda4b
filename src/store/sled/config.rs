//! How a [`SledStore`](super::SledStore) is opened ([`SledConfig`]), and the
//! [`Durability`] levels: what "durable" means when a write is acknowledged, as the
//! `--durability` flag names them.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

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
///
/// [`SledStore`]: super::SledStore
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
