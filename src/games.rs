//! The game registry: one serialization point per game, a bounded cache of loaded games,
//! lazy loading from the store, writes acknowledged only once durable, flag timers, and
//! the live event streams spectators subscribe to.
//!
//! Why it is shaped this way:
//! - Generating legal moves touches a position, and moves for one game must be ordered,
//!   so every call on a game goes through that game's `tokio::sync::Mutex` (fair, FIFO).
//!   Different games never share a lock; the map itself is sharded and its locks are held
//!   only to find or insert a cell.
//! - A change is applied, saved and its durability ticket awaited while the game's lock is
//!   held, so no reader ever sees a state that is not yet durable. That critical section
//!   runs in its own task: a caller that hangs up cannot abandon it half-way.
//! - Time is read once, when a call reaches the registry, and passed down: the lifecycle
//!   charges clocks and decides flags at that instant, under the game's lock. Every
//!   access first records a flag that has fallen (at its exact flag time), so a read can
//!   write; an untimed game's read never does.
//! - Events reach spectators only after they are durable (published under the lock after
//!   the ticket resolved), through a bounded broadcast channel per game: publishing never
//!   waits for a spectator; one that falls behind is told to resync.
//! - A timed game that is loaded and running has one flag timer task (holding only a weak
//!   reference to the registry and the game's id), re-armed when the flag time changes and
//!   aborted when the game ends or its entry is dropped (evicted, or reset after a failed
//!   write). Eviction cannot lose a flag: the next access records it.
//! - A cell is evicted only when nobody holds it (`Arc::strong_count == 1` under the shard
//!   lock, where every clone is made), so a game in use (or watched) is never dropped and
//!   never loaded twice.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{OwnedMutexGuard, broadcast, watch};

use crate::lifecycle::{Match, Refusal};
use crate::pb;
use crate::rules::{Color, Game, Move, Position};
use crate::service::ServiceError;
use crate::service::convert;
use crate::service::wire::{self, EncodedLegalMoves};
use crate::store::{GameMeta, GameStore, StoreChange, StoreError};

/// The server's clock, Unix milliseconds: the time every call is charged at.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Spectator events buffered per game for the slowest subscriber, by default.
pub const DEFAULT_WATCH_BUFFER: usize = 256;

/// How many times one update is decided again after another writer changed its game
/// first, before it gives up with ABORTED.
const MAX_CONFLICTS: u32 = 8;

/// A loaded game, the SAN of its moves (kept move by move, so no call recomputes the
/// whole list), the API views of it computed since its last change, its spectators'
/// channel and its flag timer.
pub struct GameEntry {
    meta: GameMeta,
    game: Match,
    san: Vec<String>,
    view: Option<pb::Game>,
    legal: Option<EncodedLegalMoves>,
    /// Live events, created by the first subscription.
    events: Option<broadcast::Sender<Arc<pb::GameEvent>>>,
    timer: Option<FlagTimer>,
}

/// The flag timer of a running timed game; aborted when dropped.
struct FlagTimer {
    at_ms: u64,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FlagTimer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl GameEntry {
    pub fn new(meta: GameMeta, game: Match) -> GameEntry {
        let san = game.game().san_moves();
        GameEntry {
            meta,
            game,
            san,
            view: None,
            legal: None,
            events: None,
            timer: None,
        }
    }

    pub fn meta(&self) -> &GameMeta {
        &self.meta
    }

    /// The board.
    pub fn game(&self) -> &Game {
        self.game.game()
    }

    /// The whole game: board, log, clocks, offer, ending.
    pub fn lifecycle(&self) -> &Match {
        &self.game
    }

    /// Runs one lifecycle operation, recording events for spectators if there are any,
    /// and forgets the cached views if the game changed.
    fn apply<T>(
        &mut self,
        op: impl FnOnce(&mut Match) -> Result<T, Refusal>,
    ) -> Result<T, Refusal> {
        let before = self.game.version();
        let watched = self
            .events
            .as_ref()
            .is_some_and(|tx| tx.receiver_count() > 0);
        self.game.set_recording(watched);
        let result = op(&mut self.game);
        if self.game.version() != before {
            self.view = None;
            self.legal = None;
            self.sync_san();
        }
        result
    }

    /// The move just played (the game's last), as the API describes it, with the SAN
    /// already worked out by [`GameEntry::sync_san`].
    fn last_move_to_pb(&self, before: &Position, m: Move) -> pb::Move {
        let san = self.san.last().cloned().unwrap_or_else(|| before.san(m));
        convert::move_with_san(before, m, san)
    }

    /// Brings the SAN list to the game's moves (the one place it changes, whatever the
    /// operation played or took back).
    fn sync_san(&mut self) {
        let game = self.game.game();
        self.san.truncate(game.ply());
        for ply in self.san.len()..game.ply() {
            let san = game
                .position_at(ply)
                .map_or_else(String::new, |pos| pos.san(game.moves()[ply]));
            self.san.push(san);
        }
    }

    /// Takes `game`, as another replica stored it, in place of this entry's older state,
    /// and sends the spectators the events in between, so their streams go on without a
    /// gap. (A game's log only grows, so the stored game extends this one.)
    fn catch_up(&mut self, meta: GameMeta, game: Match) {
        let from = self.game.version() + 1;
        if let Some(tx) = &self.events {
            if tx.receiver_count() > 0 {
                match game.records_since(from) {
                    Ok(records) => {
                        for record in &records {
                            let _ = tx.send(Arc::new(convert::event_to_pb(&meta, record)));
                        }
                    }
                    // Cannot replay: close the channel; spectators catch up from the store.
                    Err(_) => self.events = None,
                }
            }
        }
        self.meta = meta;
        self.game = game;
        self.san = self.game.game().san_moves();
        self.view = None;
        self.legal = None;
    }

    /// Records a flag that fell by `now`. True if one did.
    pub fn settle(&mut self, now: u64) -> Result<bool, Refusal> {
        self.apply(|g| g.settle(now))
    }

    /// Whether a flag has fallen by `now` that is not recorded yet.
    fn flag_due(&self, now: u64) -> bool {
        self.game.flag_time().is_some_and(|t| now >= t)
    }

    /// Plays a move given as UCI or SAN at `now`; returns it as the API describes it.
    pub fn play(
        &mut self,
        now: u64,
        color: Option<Color>,
        text: &str,
    ) -> Result<pb::Move, Refusal> {
        let before = *self.game.game().position();
        let m = self.apply(|g| g.play(now, color, text))?;
        Ok(self.last_move_to_pb(&before, m))
    }

    /// Takes back the last move at `now`; returns it as the API describes it (in the
    /// position before it).
    pub fn undo(&mut self, now: u64, color: Option<Color>) -> Result<pb::Move, Refusal> {
        let (before, m) = self.apply(|g| g.undo(now, color))?;
        Ok(convert::move_to_pb(&before, m))
    }

    pub fn offer_draw(&mut self, now: u64, color: Color) -> Result<(), Refusal> {
        self.apply(|g| g.offer_draw(now, color))
    }

    pub fn respond_to_draw(&mut self, now: u64, color: Color, accept: bool) -> Result<(), Refusal> {
        self.apply(|g| g.respond_to_draw(now, color, accept))
    }

    pub fn resign(&mut self, now: u64, color: Color) -> Result<(), Refusal> {
        self.apply(|g| g.resign(now, color))
    }

    /// Claims a draw, with the announced move if any; returns that move, played.
    pub fn claim_draw(
        &mut self,
        now: u64,
        color: Color,
        text: Option<&str>,
    ) -> Result<Option<pb::Move>, Refusal> {
        let played = self.apply(|g| g.claim_draw(now, color, text))?;
        Ok(played.map(|(before, m)| self.last_move_to_pb(&before, m)))
    }

    /// The game as the API shows it, clocks read at `now` (computed once per state, then
    /// cloned with the clocks brought forward).
    pub fn view(&mut self, now: u64) -> pb::Game {
        if self.view.is_none() {
            self.view = Some(convert::game_to_pb(&self.meta, &self.game, &self.san));
        }
        let mut view = self.view.clone().unwrap_or_default();
        if let Some(clock) = view.clock.as_mut() {
            convert::advance_clock(clock, now);
        }
        view
    }

    /// The moves playable now, encoded (computed once per state; a clone shares the
    /// bytes).
    pub fn legal_moves(&mut self) -> EncodedLegalMoves {
        self.legal
            .get_or_insert_with(|| wire::game_legal_moves(&self.game))
            .clone()
    }

    /// Sends the events recorded since the last call to the spectators. Called once they
    /// are durable.
    fn publish(&mut self) {
        let records = self.game.take_records();
        if let Some(tx) = &self.events {
            for record in &records {
                // No receiver left is not an error: nobody is watching any more.
                let _ = tx.send(Arc::new(convert::event_to_pb(&self.meta, record)));
            }
        }
    }

    /// A receiver of the live events (creating the channel, of `capacity` events, on the
    /// first subscription).
    fn subscribe(&mut self, capacity: usize) -> broadcast::Receiver<Arc<pb::GameEvent>> {
        match &self.events {
            Some(tx) => tx.subscribe(),
            None => {
                let (tx, rx) = broadcast::channel(capacity.max(1));
                self.events = Some(tx);
                rx
            }
        }
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

/// How a game's start was asked for in NewGame, to compare against an existing game.
pub enum StartRequest {
    /// The request named no start: any existing game with this id is the answer.
    Unspecified,
    /// The request named this start: an existing game must have started there.
    Named,
}

/// The registry of games: find, load, create, read, change and watch them.
pub struct Registry {
    store: Arc<dyn GameStore>,
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    per_shard: usize,
    clock: AtomicU64,
    watch_buffer: usize,
    shutdown: watch::Sender<bool>,
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
            watch_buffer: DEFAULT_WATCH_BUFFER,
            shutdown: watch::Sender::new(false),
        }
    }

    /// Sets how many events each game buffers for its slowest spectator before that
    /// spectator is told to resync.
    pub fn with_watch_buffer(mut self, events: usize) -> Registry {
        self.watch_buffer = events.max(1);
        self
    }

    /// Ends every open watch stream (they get UNAVAILABLE, so that spectators reconnect
    /// elsewhere) and stops the flag timers: open streams must not hold the process at
    /// shutdown. Games themselves keep serving until the server stops.
    pub fn shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    fn shutting_down(&self) -> bool {
        *self.shutdown.borrow()
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
        self.fill(&mut guard, id).await?;
        Ok(guard)
    }

    /// Reads game `id` from the store into its locked cell, unless it is there already.
    async fn fill(&self, guard: &mut CellState, id: &str) -> Result<(), ServiceError> {
        if matches!(*guard, CellState::Unloaded) {
            match self.store.load(id).await {
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
        Ok(())
    }

    /// On a store other replicas write too, makes the locked cell hold the stored game:
    /// one version read when it is unchanged, a load (and the spectators told what
    /// changed) when another replica changed it. Nothing to do on a store only this
    /// process writes.
    async fn refresh(&self, guard: &mut CellState, id: &str) -> Result<(), ServiceError> {
        if !self.store.shared() {
            return Ok(());
        }
        let CellState::Loaded(entry) = guard else {
            return self.fill(guard, id).await;
        };
        let stored = self
            .store
            .stored_version(id)
            .await
            .map_err(ServiceError::from_store)?;
        if stored == Some(entry.game.version()) {
            return Ok(());
        }
        match self.store.load(id).await {
            Ok(Some(loaded)) if loaded.game.version() > entry.game.version() => {
                entry.catch_up(loaded.meta, loaded.game);
            }
            // Not newer (cannot happen: versions only grow) or gone: read it afresh.
            Ok(_) => {
                *guard = CellState::Unloaded;
                self.fill(guard, id).await?;
            }
            Err(e @ StoreError::DataLoss { .. }) => {
                tracing::error!(game_id = %id, error = %e, "stored game is damaged; answering DATA_LOSS for it");
                *guard = CellState::Damaged(e);
            }
            Err(e) => return Err(ServiceError::from_store(e)),
        }
        Ok(())
    }

    /// Follows the changes other replicas make (a shared store's feed): a watched game
    /// changed elsewhere is read and its new events streamed to the spectators here; and
    /// every second every watched game is checked, in case an announcement was lost (a
    /// replica killed between its commit and its announcement). Nothing to follow on a
    /// store only this process writes.
    pub fn follow_store(self: &Arc<Self>) {
        let Some(mut changes) = self.store.changes() else {
            return;
        };
        let registry = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut recheck = tokio::time::interval(Duration::from_secs(1));
            recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let change = tokio::select! {
                    change = changes.recv() => change,
                    _ = recheck.tick() => Ok(StoreChange::Resync),
                };
                let Some(registry) = registry.upgrade() else {
                    return;
                };
                if registry.shutting_down() {
                    return;
                }
                match change {
                    Ok(StoreChange::Game { id, version }) => registry.catch_up(id, Some(version)),
                    Ok(StoreChange::Resync) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        let watched: Vec<String> = registry
                            .shards
                            .iter()
                            .filter_map(|s| s.lock().ok())
                            .flat_map(|s| {
                                s.slots
                                    .iter()
                                    .filter(|(_, slot)| Arc::strong_count(&slot.cell) > 1)
                                    .map(|(id, _)| id.clone())
                                    .collect::<Vec<_>>()
                            })
                            .collect();
                        for id in watched {
                            registry.catch_up(id, None);
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    /// Brings game `id` up to `version` (or to whatever is stored) if it is loaded here
    /// and someone holds it (a spectator, or a call): in a task of its own, so the feed
    /// never waits for a game's lock.
    fn catch_up(self: &Arc<Self>, id: String, version: Option<u64>) {
        let cell = match self.shard(&id).lock() {
            Ok(shard) => match shard.slots.get(&id) {
                // Held by the slot alone: nobody watches or uses it; it is checked
                // anyway before its next use.
                Some(slot) if Arc::strong_count(&slot.cell) > 1 => slot.cell.clone(),
                _ => return,
            },
            Err(_) => return,
        };
        let registry = self.clone();
        tokio::spawn(async move {
            let mut guard = cell.lock_owned().await;
            let CellState::Loaded(entry) = &mut *guard else {
                return;
            };
            let watched = entry
                .events
                .as_ref()
                .is_some_and(|tx| tx.receiver_count() > 0);
            if !watched || version.is_some_and(|v| v <= entry.game.version()) {
                return;
            }
            if let Err(e) = registry.refresh(&mut guard, &id).await {
                tracing::debug!(game_id = %id, error = %e, "cannot catch up with a change made elsewhere; retrying at the next check");
            }
            if let CellState::Loaded(entry) = &mut *guard {
                registry.arm(entry, &id);
            }
        });
    }

    /// Runs `f` on game `id` under its lock, with the time the call arrived: a consistent,
    /// durable state. If a flag fell and is not recorded yet, it is recorded (and made
    /// durable) first.
    pub async fn read<R, F>(self: &Arc<Self>, id: &str, mut f: F) -> Result<R, ServiceError>
    where
        R: Send + 'static,
        F: FnMut(&mut GameEntry, u64) -> R + Send + 'static,
    {
        let now = now_ms();
        {
            let mut guard = self.lock_loaded(id).await?;
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
    /// from `f` is answered after a flag recorded before it was saved.
    ///
    /// If another writer changed the stored game first (the store answers
    /// [`StoreError::Conflict`]: another replica on a shared database), the change made
    /// here is dropped, the game is read again from the store and `f` runs again on that
    /// fresh state: so `f` decides on the state it will be saved over, as on one node.
    pub async fn update<R, F>(self: &Arc<Self>, id: String, f: F) -> Result<R, ServiceError>
    where
        R: Send + 'static,
        F: FnMut(&mut GameEntry, u64) -> Result<R, ServiceError> + Send + 'static,
    {
        self.update_at(id, now_ms(), f).await
    }

    async fn update_at<R, F>(
        self: &Arc<Self>,
        id: String,
        now: u64,
        mut f: F,
    ) -> Result<R, ServiceError>
    where
        R: Send + 'static,
        F: FnMut(&mut GameEntry, u64) -> Result<R, ServiceError> + Send + 'static,
    {
        let registry = self.clone();
        let task = tokio::spawn(async move {
            let mut guard = registry.lock_loaded(&id).await?;
            let mut conflicts = 0;
            let mut verified = false;
            loop {
                let entry = loaded(&mut guard, &id)?;
                let before = entry.game.version();
                let result = match entry.settle(now) {
                    Ok(_) => f(entry, now),
                    Err(refusal) => Err(ServiceError::from_refusal(&id, refusal, "")),
                };
                if entry.game.version() != before {
                    let written = registry.store.save(&entry.meta, &entry.game, before).await;
                    match written {
                        Ok(()) => entry.publish(),
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
                        Err(StoreError::Conflict { .. }) => {
                            *guard = CellState::Unloaded;
                            return Err(ServiceError::ConcurrentChange { id });
                        }
                        Err(e) => {
                            // The store is the source of truth: forget the unacknowledged
                            // change (spectators' streams see their channel close and catch
                            // up from the store) and read the game back on its next use.
                            tracing::error!(game_id = %id, error = %e, "saving a game failed; the change is not acknowledged");
                            *guard = CellState::Unloaded;
                            return Err(ServiceError::from_store(e));
                        }
                    }
                } else if registry.store.shared() && !verified {
                    // Decided without a write, on the game in memory, which another
                    // replica may have changed meanwhile (a write needs no such check: its
                    // compare-and-set fails). Answer only from the stored version.
                    verified = true;
                    registry.refresh(&mut guard, &id).await?;
                    if !matches!(&*guard, CellState::Loaded(e) if e.game.version() == before) {
                        continue;
                    }
                }
                let entry = loaded(&mut guard, &id)?;
                registry.arm(entry, &id);
                return result;
            }
        });
        task.await
            .map_err(|e| ServiceError::Internal(format!("a game update task failed: {e}")))?
    }

    /// Records a fallen flag of game `id`, if any (the flag timer's call). Returns the
    /// flag time still ahead, if the game still runs.
    async fn touch(self: &Arc<Self>, id: &str) -> Result<Option<u64>, ServiceError> {
        self.update(id.to_string(), |e, _| Ok(e.game.flag_time()))
            .await
    }

    /// Makes sure a running timed game has a flag timer for its current flag time (and
    /// that a game without one has none).
    fn arm(self: &Arc<Self>, entry: &mut GameEntry, id: &str) {
        let want = entry.game.flag_time().filter(|_| !self.shutting_down());
        match (&entry.timer, want) {
            (Some(t), Some(at)) if t.at_ms == at && !t.task.is_finished() => {}
            (None, None) => {}
            (_, None) => entry.timer = None,
            (_, Some(at)) => {
                let task = tokio::spawn(flag_timer(Arc::downgrade(self), id.to_string(), at));
                entry.timer = Some(FlagTimer { at_ms: at, task });
            }
        }
    }

    /// Subscribes to game `id`'s events from version `from_version` on: the backlog (by
    /// replaying the log, outside the game's lock) and the live channel, joined without a
    /// gap (the subscription is made under the lock). The subscription keeps the game's
    /// cell loaded.
    pub async fn subscribe(
        self: &Arc<Self>,
        id: &str,
        from_version: u64,
    ) -> Result<Subscription, ServiceError> {
        let cell = self.cell(id)?;
        let capacity = self.watch_buffer;
        let key = id.to_string();
        let (snapshot, meta, rx) = self
            .update(id.to_string(), move |e, _| {
                let current = e.game.version();
                if from_version > current + 1 {
                    return Err(ServiceError::VersionAhead {
                        id: key.clone(),
                        from: from_version,
                        current,
                    });
                }
                let rx = e.subscribe(capacity);
                Ok((e.game.clone(), e.meta.clone(), rx))
            })
            .await?;
        let records = snapshot.records_since(from_version).map_err(|e| {
            ServiceError::Internal(format!("replaying game '{id}' for a spectator: {e}"))
        })?;
        Ok(Subscription {
            registry: self.clone(),
            id: id.to_string(),
            next_version: from_version,
            backlog: records
                .iter()
                .map(|r| Arc::new(convert::event_to_pb(&meta, r)))
                .collect(),
            live: rx,
            shutdown: self.shutdown.subscribe(),
            keep_alive: cell,
        })
    }

    /// Creates game `meta.id` from `game`, or answers the existing game of that id when
    /// `start` is [`StartRequest::Unspecified`] or `same_start` says it started the same
    /// way. Answers once the new game is durable. Runs to completion even if the caller
    /// goes away. Returns the game and whether it was created now.
    pub async fn create<S>(
        self: &Arc<Self>,
        meta: GameMeta,
        game: Match,
        start: StartRequest,
        same_start: S,
    ) -> Result<(pb::Game, bool), ServiceError>
    where
        S: FnOnce(&GameEntry) -> bool + Send + 'static,
    {
        let registry = self.clone();
        let id = meta.id.clone();
        let task = tokio::spawn(async move {
            let id = meta.id.clone();
            let mut guard = registry.lock_loaded(&id).await?;
            // Another replica may create it after the load found nothing: then it is an
            // existing game like any other (read once more, below).
            let mut raced = false;
            loop {
                match &mut *guard {
                    CellState::Loaded(existing) => {
                        if matches!(start, StartRequest::Unspecified) || same_start(existing) {
                            return Ok(None);
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
                match registry.store.create(&meta, &game).await {
                    Ok(()) => break,
                    Err(StoreError::AlreadyExists { .. }) if registry.store.shared() && !raced => {
                        raced = true;
                        registry.fill(&mut guard, &id).await?;
                    }
                    Err(e) => {
                        if !matches!(e, StoreError::AlreadyExists { .. }) {
                            tracing::error!(game_id = %id, error = %e, "creating a game failed; it is not acknowledged");
                        }
                        return Err(ServiceError::from_store(e));
                    }
                }
            }
            let mut entry = GameEntry::new(meta, game);
            let view = entry.view(now_ms());
            registry.arm(&mut entry, &id);
            *guard = CellState::Loaded(Box::new(entry));
            Ok(Some(view))
        });
        let created = task
            .await
            .map_err(|e| ServiceError::Internal(format!("a game creation task failed: {e}")))??;
        match created {
            Some(view) => Ok((view, true)),
            // The existing game, read like any other (which records a fallen flag).
            None => Ok((self.read(&id, |e, now| e.view(now)).await?, false)),
        }
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

/// The flag timer of one game: sleeps until the flag time, then has the registry record
/// the flag fall (an update like any call's, so it is durable and published). Holds only
/// a weak reference to the registry, so it never keeps it (or the game) alive.
async fn flag_timer(registry: Weak<Registry>, id: String, mut at_ms: u64) {
    loop {
        // One millisecond late: a wall-clock reading rounds down.
        let wait = at_ms.saturating_sub(now_ms()) + 1;
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let Some(registry) = registry.upgrade() else {
            return;
        };
        if registry.shutting_down() {
            return;
        }
        match registry.touch(&id).await {
            // Still running (the wall clock was behind the timer): wait again.
            Ok(Some(next)) => at_ms = next,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(game_id = %id, error = %e, "the flag timer could not record a flag fall; the next call on the game will");
                return;
            }
        }
    }
}

/// What a spectator's stream gets next.
#[derive(Debug)]
pub enum WatchItem {
    /// The next event, in version order without gaps.
    Event(Arc<pb::GameEvent>),
    /// The spectator fell behind; it should resume from this version. The stream ends.
    Resync(u64),
    /// The stream ends with this error (the server is shutting down, or the game can no
    /// longer be read).
    End(ServiceError),
}

/// A spectator's subscription to one game: its backlog, then the live events.
pub struct Subscription {
    registry: Arc<Registry>,
    id: String,
    /// The version the spectator gets next.
    next_version: u64,
    backlog: VecDeque<Arc<pb::GameEvent>>,
    live: broadcast::Receiver<Arc<pb::GameEvent>>,
    shutdown: watch::Receiver<bool>,
    /// Keeps the game loaded (a watched game is in use) and its channel alive.
    keep_alive: Arc<Cell>,
}

impl Subscription {
    /// The next thing to send. Waits for live events; never makes the game wait.
    pub async fn next(&mut self) -> WatchItem {
        loop {
            if *self.shutdown.borrow() {
                return WatchItem::End(ServiceError::ShuttingDown);
            }
            if let Some(event) = self.backlog.pop_front() {
                if event.version < self.next_version {
                    continue;
                }
                self.next_version = event.version + 1;
                return WatchItem::Event(event);
            }
            let received = tokio::select! {
                biased;
                _ = self.shutdown.changed() => continue,
                received = self.live.recv() => received,
            };
            match received {
                // Already sent from the backlog (published while subscribing).
                Ok(event) if event.version < self.next_version => {}
                Ok(event) if event.version == self.next_version => {
                    self.next_version += 1;
                    return WatchItem::Event(event);
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    return WatchItem::Resync(self.next_version);
                }
                // A gap (cannot happen: events are published in order under the lock), or
                // the channel closed because the game's entry was dropped after a failed
                // write: catch up from the store.
                Ok(_) | Err(broadcast::error::RecvError::Closed) => {
                    match self.registry.subscribe(&self.id, self.next_version).await {
                        Ok(fresh) => {
                            self.backlog = fresh.backlog;
                            self.live = fresh.live;
                            self.keep_alive = fresh.keep_alive;
                        }
                        Err(e) => return WatchItem::End(e),
                    }
                }
            }
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
    use crate::store::{LoadedGame, MemoryStore, Start, StoreFuture};

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
        let key = id.to_string();
        registry
            .update(id.to_string(), move |e, now| {
                e.play(now, None, uci)
                    .map_err(|r| ServiceError::from_refusal(&key, r, "moves are played"))?;
                Ok(e.game().ply())
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
                    Match::untimed(Position::new()),
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
        let ply = registry.read("g0", |e, _| e.game().ply()).await.unwrap();
        assert_eq!(ply, 1);
    }

    #[tokio::test]
    async fn a_game_in_use_is_never_evicted() {
        let registry = registry(1);
        registry
            .create(
                meta("held"),
                Match::untimed(Position::new()),
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
                    Match::untimed(Position::new()),
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
            registry.read("nope", |_, _| ()).await,
            Err(ServiceError::GameNotFound { .. })
        ));
        registry
            .create(
                meta("x"),
                Match::untimed(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await
            .unwrap();
        let again = registry
            .create(
                meta("x"),
                Match::untimed(Position::new()),
                StartRequest::Named,
                |_| false,
            )
            .await;
        assert!(matches!(again, Err(ServiceError::GameAlreadyExists { .. })));
        let (_, created) = registry
            .create(
                meta("x"),
                Match::untimed(Position::new()),
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
        fn create<'a>(&'a self, meta: &'a GameMeta, game: &'a Match) -> StoreFuture<'a, ()> {
            self.0.create(meta, game)
        }
        fn save<'a>(&'a self, _: &'a GameMeta, _: &'a Match, _: u64) -> StoreFuture<'a, ()> {
            Box::pin(async { Err(StoreError::Io("disk full".into())) })
        }
        fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<LoadedGame>> {
            self.0.load(id)
        }
        fn flush<'a>(&'a self) -> StoreFuture<'a, ()> {
            self.0.flush()
        }
    }

    #[tokio::test]
    async fn a_failed_write_is_not_visible_afterwards() {
        let registry = Arc::new(Registry::new(Arc::new(FailingStore(MemoryStore::new())), 8));
        registry
            .create(
                meta("f"),
                Match::untimed(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await
            .unwrap();
        let err = play(&registry, "f", "e2e4")
            .await
            .expect_err("the save fails");
        assert_eq!(err.reason(), "STORE_FAILURE");
        assert_eq!(registry.read("f", |e, _| e.game().ply()).await.unwrap(), 0);
    }

    /// A store with one damaged record.
    struct DamagedStore(MemoryStore);

    impl GameStore for DamagedStore {
        fn create<'a>(&'a self, meta: &'a GameMeta, game: &'a Match) -> StoreFuture<'a, ()> {
            self.0.create(meta, game)
        }
        fn save<'a>(
            &'a self,
            meta: &'a GameMeta,
            game: &'a Match,
            expected_version: u64,
        ) -> StoreFuture<'a, ()> {
            self.0.save(meta, game, expected_version)
        }
        fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<LoadedGame>> {
            if id == "damaged" {
                return Box::pin(async move {
                    Err(StoreError::DataLoss {
                        id: id.into(),
                        reason: "checksum mismatch".into(),
                    })
                });
            }
            self.0.load(id)
        }
        fn flush<'a>(&'a self) -> StoreFuture<'a, ()> {
            self.0.flush()
        }
    }

    #[tokio::test]
    async fn a_damaged_record_is_data_loss_for_that_game_only() {
        let registry = Arc::new(Registry::new(Arc::new(DamagedStore(MemoryStore::new())), 8));
        registry
            .create(
                meta("fine"),
                Match::untimed(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await
            .unwrap();
        let err = registry
            .read("damaged", |_, _| ())
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
                Match::untimed(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await;
        assert_eq!(created.expect_err("not overwritten").reason(), "DATA_LOSS");
        assert_eq!(play(&registry, "fine", "e2e4").await.unwrap(), 1);
    }

    /// A store shared with another writer (another replica) that wins the race for the next
    /// saves: just before each of those saves lands, the other writer plays its next move on
    /// the stored game, so the save finds a newer version and fails with `Conflict`, as a
    /// compare-and-set on a shared database would.
    #[derive(Default)]
    struct RacingStore {
        inner: MemoryStore,
        /// The other writer's moves, the next one last.
        their_moves: Mutex<Vec<&'static str>>,
        conflicts: AtomicU64,
    }

    impl RacingStore {
        /// The other writer wins the next `moves.len()` saves with these moves, in order.
        fn race(&self, moves: &[&'static str]) {
            *self.their_moves.lock().unwrap() = moves.iter().rev().copied().collect();
        }

        fn conflicts(&self) -> u64 {
            self.conflicts.load(Ordering::SeqCst)
        }

        async fn stored_ply(&self, id: &str) -> usize {
            let stored = self.inner.load(id).await.unwrap().expect("stored");
            stored.game.game().ply()
        }
    }

    impl GameStore for RacingStore {
        fn create<'a>(&'a self, meta: &'a GameMeta, game: &'a Match) -> StoreFuture<'a, ()> {
            self.inner.create(meta, game)
        }
        fn save<'a>(
            &'a self,
            meta: &'a GameMeta,
            game: &'a Match,
            expected_version: u64,
        ) -> StoreFuture<'a, ()> {
            Box::pin(async move {
                let theirs = self.their_moves.lock().unwrap().pop();
                if let Some(uci) = theirs {
                    let mut stored = self.inner.load(&meta.id).await?.expect("stored").game;
                    let version = stored.version();
                    stored
                        .play(now_ms(), None, uci)
                        .expect("their move is legal");
                    self.inner.save(meta, &stored, version).await?;
                }
                let saved = self.inner.save(meta, game, expected_version).await;
                if matches!(saved, Err(StoreError::Conflict { .. })) {
                    self.conflicts.fetch_add(1, Ordering::SeqCst);
                }
                saved
            })
        }
        fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<LoadedGame>> {
            self.inner.load(id)
        }
        fn flush<'a>(&'a self) -> StoreFuture<'a, ()> {
            self.inner.flush()
        }
    }

    /// Plays `uci` at `expected` ply the way the service's Play does: a retry of the move
    /// already played there succeeds without playing, another ply is refused.
    async fn play_at(
        registry: &Arc<Registry>,
        id: &str,
        uci: &'static str,
        expected: usize,
    ) -> Result<usize, ServiceError> {
        let key = id.to_string();
        registry
            .update(id.to_string(), move |e, now| {
                let id = key.as_str();
                let current = e.game().ply();
                if current != expected {
                    let game = e.game();
                    let retry = game.position_at(expected).is_some_and(|pos| {
                        pos.parse_move(uci).ok() == game.moves().get(expected).copied()
                    });
                    if retry {
                        return Ok(current);
                    }
                    return Err(ServiceError::PlyMismatch {
                        id: id.to_string(),
                        expected: expected as u32,
                        current: current as u32,
                    });
                }
                e.play(now, None, uci)
                    .map_err(|r| ServiceError::from_refusal(id, r, ""))?;
                Ok(e.game().ply())
            })
            .await
    }

    #[tokio::test]
    async fn a_lost_race_is_decided_again_on_the_stored_game() {
        let store = Arc::new(RacingStore::default());
        let registry = Arc::new(Registry::new(store.clone(), 8));
        registry
            .create(
                meta("r"),
                Match::untimed(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await
            .unwrap();

        // The other writer plays e2e4 first: our e2e4 at ply 0 is then a retry of it,
        // answered without playing anything twice.
        store.race(&["e2e4"]);
        assert_eq!(play_at(&registry, "r", "e2e4", 0).await, Ok(1));
        assert_eq!(store.conflicts(), 1);
        assert_eq!(store.stored_ply("r").await, 1);
        assert_eq!(registry.read("r", |e, _| e.game().ply()).await, Ok(1));

        // The other writer plays e7e5 first: our d7d5 at ply 1 is refused with the stored
        // ply, as on one node.
        store.race(&["e7e5"]);
        assert_eq!(
            play_at(&registry, "r", "d7d5", 1).await,
            Err(ServiceError::PlyMismatch {
                id: "r".into(),
                expected: 1,
                current: 2
            })
        );
        assert_eq!(store.conflicts(), 2);
        assert_eq!(store.stored_ply("r").await, 2);
        assert_eq!(registry.read("r", |e, _| e.game().ply()).await, Ok(2));

        // Without an expected ply the move is decided on the stored game too: after the
        // other writer's g1f3 it is black's turn, so white's b1c3 is illegal.
        store.race(&["g1f3"]);
        let err = play(&registry, "r", "b1c3")
            .await
            .expect_err("not white's turn");
        assert_eq!(err.reason(), "ILLEGAL_MOVE", "{err:?}");
        assert_eq!(store.stored_ply("r").await, 3);
        assert_eq!(registry.read("r", |e, _| e.game().ply()).await, Ok(3));
    }

    #[tokio::test]
    async fn endless_lost_races_end_in_a_concurrent_change() {
        let store = Arc::new(RacingStore::default());
        let registry = Arc::new(Registry::new(store.clone(), 8));
        registry
            .create(
                meta("busy"),
                Match::untimed(Position::new()),
                StartRequest::Named,
                |_| true,
            )
            .await
            .unwrap();
        // The other writer shuffles knights faster than we ever save.
        store.race(&[
            "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6",
        ]);
        // Each attempt plays a legal move for the side to move in the state it sees.
        let err = registry
            .update("busy".to_string(), |e, now| {
                let m = e.game().legal_moves()[0];
                let uci = e.game().position().uci(m);
                e.play(now, None, &uci)
                    .map_err(|err| ServiceError::Internal(err.to_string()))
            })
            .await
            .expect_err("the other writer always wins");
        assert_eq!(
            (err.code(), err.reason()),
            (tonic::Code::Aborted, "CONCURRENT_CHANGE")
        );
        assert_eq!(store.conflicts(), u64::from(MAX_CONFLICTS) + 1);
        assert_eq!(
            store.stored_ply("busy").await,
            MAX_CONFLICTS as usize + 1,
            "only the other writer's moves are stored"
        );
    }
}
