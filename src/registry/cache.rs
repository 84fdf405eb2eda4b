//! The bounded cache of game cells: a sharded map from game id to the cell holding the
//! loaded game, least recently used idle cells evicted when a shard is full.
//!
//! - A cell is evicted only when nobody holds it (`Arc::strong_count == 1` under the
//!   shard lock, where every clone is made), so a game in use (or watched) is never
//!   dropped and never loaded twice.
//! - Room is made only for a game that exists (once it was loaded or created), and the
//!   cell of an id the store does not know is dropped again: looking up unknown ids never
//!   evicts a real game.
//! - An epoch invalidates every cached game at once ([`Cache::invalidate_all`]), without
//!   waiting for any game's lock: an entry of an older epoch is dropped by whoever locks
//!   it next.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::entry::GameEntry;
use super::error::RegistryError;
use crate::store::StoreError;

/// What a game's cell holds.
pub(super) enum CellState {
    /// Not read from the store yet (or dropped after a failed write: the store decides).
    Unloaded,
    Loaded(Box<GameEntry>),
    /// The stored record is damaged: DATA_LOSS for this game until the cell is evicted.
    Damaged(StoreError),
}

/// One game's serialization point: fair (FIFO), held across the store write.
pub(super) type Cell = tokio::sync::Mutex<CellState>;

/// A cached game's cell and when it was last used (the eviction order).
struct CachedCell {
    cell: Arc<Cell>,
    last_used: u64,
}

#[derive(Default)]
struct Shard {
    slots: HashMap<String, CachedCell>,
}

/// The cells of the games in use or recently used.
pub(super) struct Cache {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    per_shard: usize,
    clock: AtomicU64,
    /// Bumped by [`Cache::invalidate_all`]; each entry remembers the epoch it was known
    /// fresh in.
    epoch: AtomicU64,
}

impl Cache {
    /// A cache of about `games` cells (more only while more are in use at once).
    pub(super) fn new(games: usize) -> Cache {
        let games = games.max(1);
        // Small caches get few shards so the bound stays close to what was asked.
        let shard_count = (games / 256).clamp(1, 64);
        Cache {
            shards: (0..shard_count)
                .map(|_| Mutex::new(Shard::default()))
                .collect(),
            hasher: RandomState::new(),
            per_shard: games.div_ceil(shard_count),
            clock: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
        }
    }

    /// How many times [`Cache::invalidate_all`] ran.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// Makes every cached game stale at once: each is dropped, and read from the store
    /// again, before it answers anything (the next lock of its cell sees an older epoch).
    /// Why not only the games someone watches: a replica cut off from the store, or
    /// paused, missed changes to any game, and a game can come back at the same version
    /// with other moves (deleted and created again), which a version check alone would
    /// take for current.
    pub(super) fn invalidate_all(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Drops the game in a locked cell if it was cached in another epoch than `epoch`
    /// (the registry's: this cache's, moved on by the store's reconnections too). True if
    /// it did.
    pub(super) fn drop_if_stale(&self, state: &mut CellState, epoch: u64) -> bool {
        let stale = matches!(state, CellState::Loaded(e) if e.epoch != epoch);
        if stale {
            *state = CellState::Unloaded;
        }
        stale
    }

    /// How many cells there are right now (games loaded or being loaded).
    pub(super) fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().map_or(0, |s| s.slots.len()))
            .sum()
    }

    fn shard(&self, id: &str) -> Result<MutexGuard<'_, Shard>, RegistryError> {
        let i = (self.hasher.hash_one(id) % self.shards.len() as u64) as usize;
        self.shards[i]
            .lock()
            .map_err(|_| RegistryError::Internal("a registry lock is poisoned".into()))
    }

    /// The cell of game `id`, inserted (empty) if absent.
    pub(super) fn cell(&self, id: &str) -> Result<Arc<Cell>, RegistryError> {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut shard = self.shard(id)?;
        if let Some(slot) = shard.slots.get_mut(id) {
            slot.last_used = now;
            return Ok(slot.cell.clone());
        }
        let cell = Arc::new(tokio::sync::Mutex::new(CellState::Unloaded));
        shard.slots.insert(
            id.to_string(),
            CachedCell {
                cell: cell.clone(),
                last_used: now,
            },
        );
        Ok(cell)
    }

    /// Game `id` holds a game now: evicts idle games of its shard if it is over the
    /// bound.
    pub(super) fn make_room(&self, id: &str) {
        if let Ok(mut shard) = self.shard(id)
            && shard.slots.len() > self.per_shard
        {
            evict_idle(&mut shard, self.per_shard);
        }
    }

    /// The cell of game `id` if someone besides the cache holds it (a spectator's
    /// subscription, or a call in flight); `None` for a game nobody uses, which is
    /// checked against the store before its next use anyway.
    pub(super) fn held_cell(&self, id: &str) -> Option<Arc<Cell>> {
        let shard = self.shard(id).ok()?;
        shard
            .slots
            .get(id)
            .filter(|slot| Arc::strong_count(&slot.cell) > 1)
            .map(|slot| slot.cell.clone())
    }

    /// The cell of game `id` if it is cached (held by someone or not).
    pub(super) fn cached_cell(&self, id: &str) -> Option<Arc<Cell>> {
        let shard = self.shard(id).ok()?;
        shard.slots.get(id).map(|slot| slot.cell.clone())
    }

    /// The ids of the games someone besides the cache holds (see [`Cache::held_cell`]).
    pub(super) fn held_ids(&self) -> Vec<String> {
        self.shards
            .iter()
            .filter_map(|s| s.lock().ok())
            .flat_map(|s| {
                s.slots
                    .iter()
                    .filter(|(_, slot)| Arc::strong_count(&slot.cell) > 1)
                    .map(|(id, _)| id.clone())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Drops the cell of `id` if it holds no game and nobody holds it: an id the store
    /// does not know keeps no slot.
    pub(super) fn forget_unknown(&self, id: &str) {
        let Ok(mut shard) = self.shard(id) else {
            return;
        };
        let unknown = shard.slots.get(id).is_some_and(|slot| {
            Arc::strong_count(&slot.cell) == 1
                && slot
                    .cell
                    .try_lock()
                    .is_ok_and(|state| matches!(*state, CellState::Unloaded))
        });
        if unknown {
            shard.slots.remove(id);
        }
    }
}

/// Drops the least recently used idle cells of a full shard (an eighth of it at once,
/// so a full shard is not rescanned on every insert). Cells in use are never dropped.
fn evict_idle(shard: &mut Shard, per_shard: usize) {
    let mut idle: Vec<(u64, String)> = shard
        .slots
        .iter()
        .filter(|(_, slot)| Arc::strong_count(&slot.cell) == 1)
        .map(|(id, slot)| (slot.last_used, id.clone()))
        .collect();
    let excess = shard.slots.len().saturating_sub(per_shard);
    let batch = excess.max(per_shard / 8).max(1).min(idle.len());
    if batch == 0 {
        return;
    }
    idle.select_nth_unstable_by_key(batch - 1, |(t, _)| *t);
    for (_, id) in idle.into_iter().take(batch) {
        shard.slots.remove(&id);
    }
}
