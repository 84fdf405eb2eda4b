//! The game registry: one serialization point per game, a bounded cache of loaded games,
//! lazy loading from the store, and writes acknowledged only once durable.
//!
//! Why it is shaped this way:
//! - Generating legal moves touches a position, and moves for one game must be ordered,
//!   so every call on a game goes through that game's `tokio::sync::Mutex` (fair, FIFO).
//!   Different games never share a lock; the map itself is sharded and its locks are held
//!   only to find or insert a cell.
//! - A change is applied, saved and its durability ticket awaited while the game's lock is
//!   held, so no reader ever sees a state that is not yet durable. That critical section
//!   runs in its own task: a caller that hangs up cannot abandon it half-way.
//! - A cell is evicted only when nobody holds it (`Arc::strong_count == 1` under the shard
//!   lock, where every clone is made), so a game in use is never dropped and never loaded
//!   twice.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

use crate::pb;
use crate::rules::{Game, PlayError};
use crate::service::ServiceError;
use crate::service::convert;
use crate::service::wire::{self, EncodedLegalMoves};
use crate::store::{GameMeta, GameStore, StoreError};

/// A loaded game, the SAN of its moves (kept move by move, so no call recomputes the
/// whole list), and the API views of it computed since its last change.
pub struct GameEntry {
    meta: GameMeta,
    game: Game,
    san: Vec<String>,
    view: Option<pb::Game>,
    legal: Option<EncodedLegalMoves>,
}

impl GameEntry {
    pub fn new(meta: GameMeta, game: Game) -> GameEntry {
        let san = game.san_moves();
        GameEntry {
            meta,
            game,
            san,
            view: None,
            legal: None,
        }
    }

    pub fn meta(&self) -> &GameMeta {
        &self.meta
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Plays a move given as UCI or SAN; returns it as the API describes it.
    pub fn play_text(&mut self, text: &str) -> Result<pb::Move, PlayError> {
        let before = *self.game.position();
        let m = self.game.play_text(text)?;
        let mv = convert::move_to_pb(&before, m);
        self.san.push(mv.san.clone());
        self.changed();
        Ok(mv)
    }

    /// Takes back the last move; returns it as the API describes it (in the position
    /// before it). `None` at the start.
    pub fn undo(&mut self) -> Option<pb::Move> {
        let m = self.game.undo()?;
        self.san.pop();
        self.changed();
        Some(convert::move_to_pb(self.game.position(), m))
    }

    /// The game as the API shows it (computed once per state, then cloned).
    pub fn view(&mut self) -> pb::Game {
        if self.view.is_none() {
            self.view = Some(convert::game_to_pb(&self.meta, &self.game, &self.san));
        }
        self.view.clone().unwrap_or_default()
    }

    /// The moves playable now, encoded (computed once per state; a clone shares the
    /// bytes).
    pub fn legal_moves(&mut self) -> EncodedLegalMoves {
        self.legal
            .get_or_insert_with(|| wire::game_legal_moves(&self.game))
            .clone()
    }

    /// Forgets the cached views after the game changed.
    fn changed(&mut self) {
        self.view = None;
        self.legal = None;
    }
}

/// What a game's cell holds.
enum CellState {
    /// Not read from the store yet (or dropped after a failed write: the store decides).
    Unloaded,
    Loaded(Box<GameEntry>),
    /// The stored record is damaged: DATA_LOSS for this game until the cell is evicted.
    Damaged(StoreError),
}

type Cell = tokio::sync::Mutex<CellState>;

struct Slot {
    cell: Arc<Cell>,
    last_used: u64,
}

#[derive(Default)]
struct Shard {
    slots: HashMap<String, Slot>,
}

/// What a mutation did: its answer, and whether the game changed (and must be saved).
pub struct Outcome<R> {
    pub value: R,
    pub changed: bool,
}

/// How a game's start was asked for in NewGame, to compare against an existing game.
pub enum StartRequest {
    /// The request named no start: any existing game with this id is the answer.
    Unspecified,
    /// The request named this start: an existing game must have started there.
    Named,
}

/// The registry of games: find, load, create, read and change them.
pub struct Registry {
    store: Arc<dyn GameStore>,
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    per_shard: usize,
    clock: AtomicU64,
}

impl Registry {
    /// A registry over `store` that keeps about `cache_games` games loaded (more only
    /// while more are in use at once).
    pub fn new(store: Arc<dyn GameStore>, cache_games: usize) -> Registry {
        let cache_games = cache_games.max(1);
        // Small caches get few shards so the bound stays close to what was asked.
        let shard_count = (cache_games / 256).clamp(1, 64);
        Registry {
            store,
            shards: (0..shard_count)
                .map(|_| Mutex::new(Shard::default()))
                .collect(),
            hasher: RandomState::new(),
            per_shard: cache_games.div_ceil(shard_count),
            clock: AtomicU64::new(0),
        }
    }

    /// How many games are in the cache right now (loaded or being loaded).
    pub fn cached(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().map_or(0, |s| s.slots.len()))
            .sum()
    }

    fn shard(&self, id: &str) -> &Mutex<Shard> {
        let i = (self.hasher.hash_one(id) % self.shards.len() as u64) as usize;
        &self.shards[i]
    }

    /// The cell of game `id`, inserted if absent (evicting idle games when full).
    fn cell(&self, id: &str) -> Result<Arc<Cell>, ServiceError> {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut shard = self
            .shard(id)
            .lock()
            .map_err(|_| ServiceError::Internal("a registry lock is poisoned".into()))?;
        if let Some(slot) = shard.slots.get_mut(id) {
            slot.last_used = now;
            return Ok(slot.cell.clone());
        }
        if shard.slots.len() >= self.per_shard {
            evict_idle(&mut shard, self.per_shard);
        }
        let cell = Arc::new(tokio::sync::Mutex::new(CellState::Unloaded));
        shard.slots.insert(
            id.to_string(),
            Slot {
                cell: cell.clone(),
                last_used: now,
            },
        );
        Ok(cell)
    }

    /// Locks game `id`'s cell and makes sure it holds what the store has.
    async fn lock_loaded(&self, id: &str) -> Result<OwnedMutexGuard<CellState>, ServiceError> {
        let cell = self.cell(id)?;
        let mut guard = cell.lock_owned().await;
        if matches!(*guard, CellState::Unloaded) {
            let store = self.store.clone();
            let key = id.to_string();
            let loaded = tokio::task::spawn_blocking(move || store.load(&key))
                .await
                .map_err(|e| ServiceError::Internal(format!("loading a game: {e}")))?;
            match loaded {
                Ok(Some(loaded)) => {
                    *guard = CellState::Loaded(Box::new(GameEntry::new(loaded.meta, loaded.game)))
                }
                Ok(None) => {}
                Err(e @ StoreError::DataLoss { .. }) => {
                    tracing::error!(game_id = %id, error = %e, "stored game is damaged; answering DATA_LOSS for it");
                    *guard = CellState::Damaged(e);
                }
                Err(e) => return Err(ServiceError::from_store(e)),
            }
        }
        Ok(guard)
    }

    /// Runs `f` on game `id` under its lock: a consistent, durable state.
    pub async fn read<R>(
        &self,
        id: &str,
        f: impl FnOnce(&mut GameEntry) -> R,
    ) -> Result<R, ServiceError> {
        let mut guard = self.lock_loaded(id).await?;
        Ok(f(loaded(&mut guard, id)?))
    }

    /// Runs `f` on game `id` under its lock; if it changed the game, saves it and waits
    /// until the change is durable before answering (and before the lock is released).
    /// Runs to completion even if the caller goes away.
    pub async fn update<R, F>(self: &Arc<Self>, id: String, f: F) -> Result<R, ServiceError>
    where
        R: Send + 'static,
        F: FnOnce(&mut GameEntry) -> Result<Outcome<R>, ServiceError> + Send + 'static,
    {
        let registry = self.clone();
        let task = tokio::spawn(async move {
            let mut guard = registry.lock_loaded(&id).await?;
            let entry = loaded(&mut guard, &id)?;
            let outcome = f(entry)?;
            if !outcome.changed {
                return Ok(outcome.value);
            }
            let written = match registry.store.save(&entry.meta, &entry.game) {
                Ok(ticket) => ticket.wait().await,
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                // The store is the source of truth: forget the unacknowledged change and
                // read the game back on its next use.
                tracing::error!(game_id = %id, error = %e, "saving a game failed; the change is not acknowledged");
                *guard = CellState::Unloaded;
                return Err(ServiceError::from_store(e));
            }
            Ok(outcome.value)
        });
        task.await
            .map_err(|e| ServiceError::Internal(format!("a game update task failed: {e}")))?
    }

    /// Creates game `meta.id` from `game`, or answers the existing game of that id when
    /// `start` is [`StartRequest::Unspecified`] or `same_start` says it started the same
    /// way. Answers once the new game is durable. Runs to completion even if the caller
    /// goes away. Returns the game and whether it was created now.
    pub async fn create<S>(
        self: &Arc<Self>,
        meta: GameMeta,
        game: Game,
        start: StartRequest,
        same_start: S,
    ) -> Result<(pb::Game, bool), ServiceError>
    where
        S: FnOnce(&GameEntry) -> bool + Send + 'static,
    {
        let registry = self.clone();
        let task = tokio::spawn(async move {
            let id = meta.id.clone();
            let mut guard = registry.lock_loaded(&id).await?;
            match &mut *guard {
                CellState::Loaded(existing) => {
                    if matches!(start, StartRequest::Unspecified) || same_start(existing) {
                        return Ok((existing.view(), false));
                    }
                    let described = convert::describe_start(&existing.meta, &existing.game);
                    return Err(ServiceError::GameAlreadyExists {
                        id,
                        existing: described,
                    });
                }
                CellState::Damaged(e) => return Err(ServiceError::DataLoss(e.clone())),
                CellState::Unloaded => {}
            }
            let ticket = registry
                .store
                .create(&meta, &game)
                .map_err(ServiceError::from_store)?;
            ticket.wait().await.map_err(|e| {
                tracing::error!(game_id = %id, error = %e, "creating a game failed; it is not acknowledged");
                ServiceError::from_store(e)
            })?;
            let mut entry = GameEntry::new(meta, game);
            let view = entry.view();
            *guard = CellState::Loaded(Box::new(entry));
            Ok((view, true))
        });
        task.await
            .map_err(|e| ServiceError::Internal(format!("a game creation task failed: {e}")))?
    }
}

/// The loaded game in a locked cell, or why there is none.
fn loaded<'a>(
    guard: &'a mut OwnedMutexGuard<CellState>,
    id: &str,
) -> Result<&'a mut GameEntry, ServiceError> {
    match &mut **guard {
        CellState::Loaded(entry) => Ok(entry),
        CellState::Unloaded => Err(ServiceError::GameNotFound { id: id.to_string() }),
        CellState::Damaged(e) => Err(ServiceError::DataLoss(e.clone())),
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
    let excess = (shard.slots.len() + 1).saturating_sub(per_shard);
    let batch = excess.max(per_shard / 8).max(1).min(idle.len());
    if batch == 0 {
        return;
    }
    idle.select_nth_unstable_by_key(batch - 1, |(t, _)| *t);
    for (_, id) in idle.into_iter().take(batch) {
        shard.slots.remove(&id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Position, Variant};
    use crate::store::{MemoryStore, Start};

    fn meta(id: &str) -> GameMeta {
        GameMeta {
            id: id.into(),
            variant: Variant::Standard,
            start: Start::Standard,
            created_unix_ms: 0,
        }
    }

    fn registry(cache: usize) -> Arc<Registry> {
        Arc::new(Registry::new(Arc::new(MemoryStore::new()), cache))
    }

    async fn play(
        registry: &Arc<Registry>,
        id: &str,
        uci: &'static str,
    ) -> Result<usize, ServiceError> {
        registry
            .update(id.to_string(), move |e| {
                e.play_text(uci)
                    .map_err(|err| ServiceError::Internal(err.to_string()))?;
                Ok(Outcome {
                    value: e.game().ply(),
                    changed: true,
                })
            })
            .await
    }

    #[tokio::test]
    async fn cache_stays_bounded_and_evicted_games_reload_from_the_store() {
        let registry = registry(4);
        for i in 0..20 {
            let id = format!("g{i}");
            let (_, created) = registry
                .create(
                    meta(&id),
                    Game::new(Position::new()),
                    StartRequest::Named,
                    |_| true,
                )
                .await
                .unwrap();
            assert!(created);
            assert_eq!(play(&registry, &id, "e2e4").await.unwrap(), 1);
        }
        assert!(
            registry.cached() <= 4,
            "cache holds {} games",
            registry.cached()
        );
        // The first game was evicted long ago; it comes back from the store with its move.
        let ply = registry.read("g0", |e| e.game().ply()).await.unwrap();
        assert_eq!(ply, 1);
    }

    #[tokio::test]
    async fn a_game_in_use_is_never_evicted() {
        let registry = registry(1);
        registry
            .create(
                meta("held"),
                Game::new(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await
            .unwrap();
        let held = registry.lock_loaded("held").await.unwrap();
        for i in 0..5 {
            let id = format!("other{i}");
            registry
                .create(
                    meta(&id),
                    Game::new(Position::new()),
                    StartRequest::Named,
                    |_| true,
                )
                .await
                .unwrap();
        }
        // Still the same cell: a second lock attempt must wait for ours.
        let cell = registry.cell("held").unwrap();
        assert!(
            cell.try_lock().is_err(),
            "the held game's cell was replaced"
        );
        drop(held);
    }

    #[tokio::test]
    async fn unknown_games_are_not_found_and_existing_ids_are_kept() {
        let registry = registry(8);
        assert!(matches!(
            registry.read("nope", |_| ()).await,
            Err(ServiceError::GameNotFound { .. })
        ));
        registry
            .create(
                meta("x"),
                Game::new(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await
            .unwrap();
        let again = registry
            .create(
                meta("x"),
                Game::new(Position::new()),
                StartRequest::Named,
                |_| false,
            )
            .await;
        assert!(matches!(again, Err(ServiceError::GameAlreadyExists { .. })));
        let (_, created) = registry
            .create(
                meta("x"),
                Game::new(Position::new()),
                StartRequest::Unspecified,
                |_| false,
            )
            .await
            .unwrap();
        assert!(!created);
    }

    /// A store whose writes fail: the change must not stay visible.
    struct FailingStore(MemoryStore);

    impl GameStore for FailingStore {
        fn create(
            &self,
            meta: &GameMeta,
            game: &Game,
        ) -> Result<crate::store::Durable, StoreError> {
            self.0.create(meta, game)
        }
        fn save(&self, _: &GameMeta, _: &Game) -> Result<crate::store::Durable, StoreError> {
            Ok(crate::store::Durable::new(async {
                Err(StoreError::Io("disk full".into()))
            }))
        }
        fn load(&self, id: &str) -> Result<Option<crate::store::LoadedGame>, StoreError> {
            self.0.load(id)
        }
        fn flush(&self) -> Result<(), StoreError> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_failed_write_is_not_visible_afterwards() {
        let registry = Arc::new(Registry::new(Arc::new(FailingStore(MemoryStore::new())), 8));
        registry
            .create(
                meta("f"),
                Game::new(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await
            .unwrap();
        let err = play(&registry, "f", "e2e4")
            .await
            .expect_err("the save fails");
        assert_eq!(err.reason(), "STORE_FAILURE");
        assert_eq!(registry.read("f", |e| e.game().ply()).await.unwrap(), 0);
    }

    /// A store with one damaged record.
    struct DamagedStore(MemoryStore);

    impl GameStore for DamagedStore {
        fn create(
            &self,
            meta: &GameMeta,
            game: &Game,
        ) -> Result<crate::store::Durable, StoreError> {
            self.0.create(meta, game)
        }
        fn save(&self, meta: &GameMeta, game: &Game) -> Result<crate::store::Durable, StoreError> {
            self.0.save(meta, game)
        }
        fn load(&self, id: &str) -> Result<Option<crate::store::LoadedGame>, StoreError> {
            if id == "damaged" {
                return Err(StoreError::DataLoss {
                    id: id.into(),
                    reason: "checksum mismatch".into(),
                });
            }
            self.0.load(id)
        }
        fn flush(&self) -> Result<(), StoreError> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_damaged_record_is_data_loss_for_that_game_only() {
        let registry = Arc::new(Registry::new(Arc::new(DamagedStore(MemoryStore::new())), 8));
        registry
            .create(
                meta("fine"),
                Game::new(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await
            .unwrap();
        let err = registry
            .read("damaged", |_| ())
            .await
            .expect_err("the record is damaged");
        assert_eq!(
            (err.code(), err.reason()),
            (tonic::Code::DataLoss, "DATA_LOSS")
        );
        let err = play(&registry, "damaged", "e2e4")
            .await
            .expect_err("no play on a damaged game");
        assert_eq!(err.reason(), "DATA_LOSS");
        let created = registry
            .create(
                meta("damaged"),
                Game::new(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await;
        assert_eq!(created.expect_err("not overwritten").reason(), "DATA_LOSS");
        assert_eq!(play(&registry, "fine", "e2e4").await.unwrap(), 1);
    }
}
