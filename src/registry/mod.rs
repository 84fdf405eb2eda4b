//! The game registry: one serialization point per game, a bounded cache of loaded games,
//! lazy loading from the store, writes acknowledged only once durable, flag timers, and
//! the live event streams spectators subscribe to. A domain layer: it answers in games,
//! moves, events and [`RegistryError`]; the service turns them into its wire form.
//!
//! Why it is shaped this way:
//! - Generating legal moves touches a position, and moves for one game must be ordered,
//!   so every call on a game goes through that game's `tokio::sync::Mutex` (fair, FIFO):
//!   the per-game lock is the registry's. Different games never share a lock; the map
//!   itself is sharded ([`cache`]) and its locks are held only to find or insert a cell.
//! - A change is applied, saved and its durability awaited while the game's lock is held,
//!   so no reader ever sees a state that is not yet durable. That critical section runs
//!   in its own task: a caller that hangs up cannot abandon it half-way.
//! - The store decides which of two racing writers wins (replicas on one database): a
//!   save names the version it replaces, and a lost race drops the change, reads the game
//!   again and decides the call again on the stored state. On a store other replicas
//!   write too, a game in memory may be stale: it is checked against the stored version
//!   before it answers, and changes made elsewhere reach spectators here ([`replicas`]).
//! - Time is read once, when a call reaches the registry, and passed down: the lifecycle
//!   charges clocks and decides flags at that instant, under the game's lock. Every
//!   access first records a flag that has fallen (at its exact flag time), so a read can
//!   write; an untimed game's read never does.
//! - Events reach spectators only after they are durable ([`spectators`]); running timed
//!   games have a flag timer ([`flag_timer`]).

mod cache;
mod catalog;
mod entry;
mod error;
mod flag_timer;
mod replicas;
mod spectators;

use std::sync::Arc;

use tokio::sync::{OwnedMutexGuard, watch};

pub use catalog::GamePage;
pub use entry::{GameEntry, PlayedMove};
pub use error::RegistryError;
pub use spectators::{Published, Subscription, WatchItem};

use crate::lifecycle::{GameMeta, Match, Refusal};
use crate::store::{DbClock, GameStore, GameTally, StoreError};
use cache::{Cache, CellState};

/// This machine's wall clock, Unix milliseconds.
pub fn wall_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The time every call is charged at and every flag falls by: the shared store's clock
/// (the database's, so every replica agrees), else this machine's.
#[derive(Clone, Debug, Default)]
pub struct Clock(Option<Arc<DbClock>>);

impl Clock {
    /// Unix milliseconds now.
    pub fn now_ms(&self) -> u64 {
        match &self.0 {
            Some(db) => db.now_ms(),
            None => wall_now_ms(),
        }
    }
}

/// Spectator events buffered per game for the slowest subscriber, by default.
pub const DEFAULT_WATCH_BUFFER: usize = 256;

/// How many times one update is decided again after another writer changed its game
/// first, before it gives up with [`RegistryError::ConcurrentChange`].
const MAX_CONFLICTS: u32 = 8;

/// The registry of games: find, load, create, read, change and watch them.
pub struct Registry {
    store: Arc<dyn GameStore>,
    /// The store's fault (fail-stop): once set, every call is refused.
    fault: Option<watch::Receiver<Option<StoreError>>>,
    cache: Cache,
    watch_buffer: usize,
    shutdown: watch::Sender<bool>,
    /// Games created and ended by this registry's durable writes (for the metrics).
    tally: Arc<GameTally>,
    clock: Clock,
}

impl Registry {
    /// A registry over `store` that keeps about `cache_games` games loaded (more only
    /// while more are in use at once).
    pub fn new(store: Arc<dyn GameStore>, cache_games: usize) -> Registry {
        Registry {
            fault: store.fault(),
            clock: Clock(store.clock()),
            store,
            cache: Cache::new(cache_games),
            watch_buffer: DEFAULT_WATCH_BUFFER,
            shutdown: watch::Sender::new(false),
            tally: Arc::new(GameTally::new()),
        }
    }

    /// The games this registry created, and ended by a change, once each was durable
    /// (see [`GameTally`]): a game loaded, here or on another replica, is never counted.
    pub fn tally(&self) -> Arc<GameTally> {
        self.tally.clone()
    }

    /// The clock calls are charged at (see [`Clock`]).
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Unix milliseconds now, by [`Registry::clock`].
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Sets how many events each game buffers for its slowest spectator before that
    /// spectator is told to resync.
    pub fn with_watch_buffer(mut self, events: usize) -> Registry {
        self.watch_buffer = events.max(1);
        self
    }

    /// Ends every open watch stream (they get [`RegistryError::ShuttingDown`], so that
    /// spectators reconnect elsewhere) and stops the flag timers: open streams must not
    /// hold the process at shutdown. Games themselves keep serving until the server
    /// stops.
    pub fn shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    fn shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// How many games are in the cache right now (loaded or being loaded).
    pub fn cached(&self) -> usize {
        self.cache.len()
    }

    /// Refuses once the store has stopped after a fault (a failed or uncertain sync or
    /// write): games in memory, and sled's own memory, may then hold changes that never
    /// became durable, so nothing is served any more (fail-stop; the server exits).
    pub(crate) fn check_fault(&self) -> Result<(), RegistryError> {
        match self.fault.as_ref().and_then(|f| f.borrow().clone()) {
            Some(fault) => Err(RegistryError::Store(fault)),
            None => Ok(()),
        }
    }

    /// The epoch a cached game must have been read in to be answered from: it moves on
    /// when the store's change feed reconnects (read synchronously from the store, so no
    /// game cached before is answered from once the store is healthy again) and when the
    /// registry drops every game itself ([`cache::Cache::invalidate_all`]). Both counters
    /// only grow, so their sum changes whenever either does.
    fn epoch(&self) -> u64 {
        self.cache.epoch().wrapping_add(self.store.generation())
    }

    /// Locks game `id`'s cell and makes sure it holds what the store has. Refused once
    /// the store has stopped (checked again after the wait for the lock).
    async fn lock_loaded(&self, id: &str) -> Result<OwnedMutexGuard<CellState>, RegistryError> {
        self.check_fault()?;
        let cell = self.cache.cell(id)?;
        let mut guard = cell.lock_owned().await;
        self.check_fault()?;
        // Cached before the change feed reconnected: read it again.
        self.cache.drop_if_stale(&mut guard, self.epoch());
        self.fill(&mut guard, id).await?;
        Ok(guard)
    }

    /// Reads game `id` from the store into its locked cell, unless it is there already.
    async fn fill(&self, state: &mut CellState, id: &str) -> Result<(), RegistryError> {
        if matches!(*state, CellState::Unloaded) {
            // Fresh in the epoch the read started in (an invalidation during the read
            // makes it stale again).
            let epoch = self.epoch();
            match self.store.load(id).await {
                Ok(Some(loaded)) => {
                    let mut entry = GameEntry::new(loaded.meta, loaded.game);
                    entry.token = loaded.token;
                    entry.epoch = epoch;
                    *state = CellState::Loaded(Box::new(entry));
                    self.cache.make_room(id);
                }
                Ok(None) => {}
                Err(e @ StoreError::DataLoss { .. }) => {
                    tracing::error!(game_id = %id, error = %e, "stored game is damaged; answering DATA_LOSS for it");
                    *state = CellState::Damaged(e);
                    self.cache.make_room(id);
                }
                Err(e) => return Err(RegistryError::from_store(e)),
            }
        }
        Ok(())
    }

    /// Locks and loads game `id`, or says why there is none (an unknown id then keeps no
    /// cache slot).
    async fn lock_game(&self, id: &str) -> Result<OwnedMutexGuard<CellState>, RegistryError> {
        let guard = self.lock_loaded(id).await?;
        match &*guard {
            CellState::Loaded(_) => Ok(guard),
            CellState::Damaged(e) => Err(RegistryError::Damaged(e.clone())),
            CellState::Unloaded => {
                drop(guard);
                self.cache.forget_unknown(id);
                Err(RegistryError::NotFound { id: id.to_string() })
            }
        }
    }

    /// Runs `f` on game `id` under its lock, with the time the call arrived: a consistent,
    /// durable state. If a flag fell and is not recorded yet, it is recorded (and made
    /// durable) first.
    pub async fn read<R, F>(self: &Arc<Self>, id: &str, mut f: F) -> Result<R, RegistryError>
    where
        R: Send + 'static,
        F: FnMut(&mut GameEntry, u64) -> R + Send + 'static,
    {
        let now = self.now_ms();
        {
            let mut guard = self.lock_game(id).await?;
            // Fresh: never answer from a version older than the stored one.
            self.refresh(&mut guard, id).await?;
            let entry = loaded(&mut guard, id)?;
            if !entry.flag_due(now) {
                self.arm(entry, id);
                return Ok(f(entry, now));
            }
        }
        self.update_at(id.to_string(), now, move |e, now| Ok(f(e, now)))
            .await
    }

    /// Runs `f` on game `id` under its lock, with the time the call arrived (after
    /// recording a flag that fell before it); if the game's log grew, saves it and waits
    /// until the change is durable before answering (and before the lock is released),
    /// then tells the spectators. Runs to completion even if the caller goes away. An error
    /// from `f` is answered after a flag recorded before it was saved. `f`'s error type is
    /// the caller's; the registry's own errors reach it through `From`.
    ///
    /// If another writer changed the stored game first (the store answers
    /// [`StoreError::Conflict`]: another replica on a shared database), the change made
    /// here is dropped, the game is read again from the store and `f` runs again on that
    /// fresh state: so `f` decides on the state it will be saved over, as on one node.
    /// On a shared store, a decision made without a write (a refusal, an answer) is
    /// checked against the stored version too, and made again if another replica changed
    /// the game meanwhile.
    pub async fn update<R, E, F>(self: &Arc<Self>, id: String, f: F) -> Result<R, E>
    where
        R: Send + 'static,
        E: From<RegistryError> + Send + 'static,
        F: FnMut(&mut GameEntry, u64) -> Result<R, E> + Send + 'static,
    {
        self.update_at(id, self.now_ms(), f).await
    }

    async fn update_at<R, E, F>(self: &Arc<Self>, id: String, now: u64, mut f: F) -> Result<R, E>
    where
        R: Send + 'static,
        E: From<RegistryError> + Send + 'static,
        F: FnMut(&mut GameEntry, u64) -> Result<R, E> + Send + 'static,
    {
        let registry = self.clone();
        let task = tokio::spawn(async move {
            let mut guard = registry.lock_game(&id).await?;
            let mut conflicts = 0;
            let mut verified = false;
            loop {
                let entry = loaded(&mut guard, &id)?;
                let before = entry.game.version();
                // The stored state this decision starts from (the version alone could
                // name another state: see `Stamp`).
                let stamp_before = entry.stamp();
                let status_before = entry.game.status();
                let settled = if entry.flag_due(now) {
                    let (back, settled) = settle_off_the_runtime(guard, now).await?;
                    guard = back;
                    settled
                } else {
                    Ok(false)
                };
                let entry = loaded(&mut guard, &id)?;
                let result = match settled {
                    Ok(_) => f(entry, now),
                    Err(refusal) => Err(RegistryError::Refused {
                        id: id.clone(),
                        refusal,
                    }
                    .into()),
                };
                if entry.game.version() != before {
                    let written = registry
                        .store
                        .save(&entry.meta, &entry.game, stamp_before)
                        .await;
                    match written {
                        Ok(token) => {
                            entry.token = token;
                            // Durable, and (on a shared store) this write won its
                            // compare-and-set: an ending it made is counted here, once.
                            registry.tally.changed(status_before, entry.game.status());
                            entry.publish()
                        }
                        Err(StoreError::Conflict { current, .. }) if conflicts < MAX_CONFLICTS => {
                            // Another writer won: drop this change (spectators' streams see
                            // their channel close and catch up from the store), read the
                            // game as stored and decide again.
                            conflicts += 1;
                            tracing::info!(game_id = %id, stored_version = current, "another writer changed the game first; deciding again on the stored game");
                            *guard = CellState::Unloaded;
                            registry.fill(&mut guard, &id).await?;
                            continue;
                        }
                        Err(e) => {
                            // The store is the source of truth: forget the unacknowledged
                            // change (spectators' streams see their channel close and catch
                            // up from the store) and read the game back on its next use.
                            // After a failed sync the store serves nothing more: see
                            // `check_fault`.
                            if !matches!(
                                e,
                                StoreError::Conflict { .. } | StoreError::HistoryFull { .. }
                            ) {
                                tracing::error!(game_id = %id, error = %e, "saving a game failed; the change is not acknowledged");
                            }
                            *guard = CellState::Unloaded;
                            return Err(RegistryError::from_store(e).into());
                        }
                    }
                } else if registry.store.shared() && !verified {
                    // Decided without a write, on the game in memory, which another
                    // replica may have changed meanwhile (a write needs no such check: its
                    // compare-and-set fails). Answer only from the stored state (version
                    // and token).
                    verified = true;
                    registry.refresh(&mut guard, &id).await?;
                    if !matches!(&*guard, CellState::Loaded(e) if e.stamp() == stamp_before) {
                        continue;
                    }
                }
                let entry = loaded(&mut guard, &id)?;
                registry.arm(entry, &id);
                return result;
            }
        });
        task.await
            .map_err(|e| RegistryError::Internal(format!("a game update task failed: {e}")))?
    }

    /// Creates game `meta.id` from `game`, unless a game of that id exists: then
    /// `existing` decides whether that game is the answer (`Ok`) or the call fails with
    /// its error. Answers, with `answer` run on the game (new or existing, under its
    /// lock), once the new game is durable. Runs to completion even if the caller goes
    /// away. Returns the answer and whether the game was created now.
    pub async fn create<R, E, S, A>(
        self: &Arc<Self>,
        meta: GameMeta,
        game: Match,
        existing: S,
        answer: A,
    ) -> Result<(R, bool), E>
    where
        R: Send + 'static,
        E: From<RegistryError> + Send + 'static,
        S: FnOnce(&GameEntry) -> Result<(), E> + Send + 'static,
        A: FnMut(&mut GameEntry, u64) -> R + Send + 'static,
    {
        let id = meta.id.clone();
        let task = tokio::spawn(self.clone().create_now(meta, game, existing, answer));
        let created = task
            .await
            .map_err(|e| RegistryError::Internal(format!("a game creation task failed: {e}")))??;
        match created {
            Ok(answered) => Ok((answered, true)),
            // The existing game, read like any other (which records a fallen flag).
            Err(answer) => Ok((self.read(&id, answer).await?, false)),
        }
    }

    /// [`Registry::create`]'s critical section, in its own task. Gives `answer` back when
    /// the game exists and is the answer.
    async fn create_now<R, E, S, A>(
        self: Arc<Self>,
        meta: GameMeta,
        game: Match,
        existing: S,
        mut answer: A,
    ) -> Result<Result<R, A>, E>
    where
        E: From<RegistryError>,
        S: FnOnce(&GameEntry) -> Result<(), E>,
        A: FnMut(&mut GameEntry, u64) -> R,
    {
        let id = meta.id.clone();
        let mut guard = self.lock_loaded(&id).await?;
        // Another replica may create it after the load found nothing: then it is an
        // existing game like any other (read once more, below).
        let mut raced = false;
        let (token, epoch) = loop {
            match &mut *guard {
                CellState::Loaded(found) => {
                    existing(found)?;
                    return Ok(Err(answer));
                }
                CellState::Damaged(e) => return Err(RegistryError::Damaged(e.clone()).into()),
                CellState::Unloaded => {}
            }
            let epoch = self.epoch();
            match self.store.create(&meta, &game).await {
                Ok(token) => {
                    self.tally.created(game.status());
                    break (token, epoch);
                }
                Err(StoreError::AlreadyExists { .. }) if self.store.shared() && !raced => {
                    raced = true;
                    self.fill(&mut guard, &id).await?;
                }
                Err(e) => {
                    if !matches!(e, StoreError::AlreadyExists { .. }) {
                        tracing::error!(game_id = %id, error = %e, "creating a game failed; it is not acknowledged");
                    }
                    return Err(RegistryError::from_store(e).into());
                }
            }
        };
        let mut entry = GameEntry::new(meta, game);
        entry.token = token;
        entry.epoch = epoch;
        let answered = answer(&mut entry, self.now_ms());
        self.arm(&mut entry, &id);
        *guard = CellState::Loaded(Box::new(entry));
        self.cache.make_room(&id);
        Ok(Ok(answered))
    }
}

/// Records the flag that fell by `now` on a thread of the blocking pool, the game's lock
/// held: judging a flag fall may run the winnability solver for its whole budget (FIDE
/// 6.9; `--flag-fall-budget-nodes`, seconds on a hard position), which must not stall a
/// runtime worker and every call it serves. Only that game's callers wait.
async fn settle_off_the_runtime(
    mut guard: OwnedMutexGuard<CellState>,
    now: u64,
) -> Result<(OwnedMutexGuard<CellState>, Result<bool, Refusal>), RegistryError> {
    tokio::task::spawn_blocking(move || {
        let settled = match &mut *guard {
            CellState::Loaded(entry) => entry.settle(now),
            CellState::Unloaded | CellState::Damaged(_) => Ok(false),
        };
        (guard, settled)
    })
    .await
    .map_err(|e| RegistryError::Internal(format!("recording a flag fall failed: {e}")))
}

/// The loaded game in a locked cell, or why there is none.
fn loaded<'a>(
    guard: &'a mut OwnedMutexGuard<CellState>,
    id: &str,
) -> Result<&'a mut GameEntry, RegistryError> {
    match &mut **guard {
        CellState::Loaded(entry) => Ok(entry),
        CellState::Unloaded => Err(RegistryError::NotFound { id: id.to_string() }),
        CellState::Damaged(e) => Err(RegistryError::Damaged(e.clone())),
    }
}

#[cfg(test)]
mod tests;
