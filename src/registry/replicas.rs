//! Replicas on a shared store (stateless replicas on one database): a game kept in memory
//! here may have been changed by another replica, so
//! - a game is refreshed from the store before it answers (one stamp read while it is
//!   unchanged, a load when another replica changed it: [`Registry::refresh`]). The stamp
//!   is the version *and* the write token ([`crate::store::Stamp`]): a game deleted and
//!   created again elsewhere comes back at the same version with other moves;
//! - the store's change feed is followed, so spectators here get the events another
//!   replica recorded, without a gap ([`Registry::follow_store`]);
//! - when the feed reconnects (this replica was cut off from the store, or paused, and
//!   may have missed any change) every cached game is dropped, watched or not
//!   ([`super::cache::Cache::invalidate_all`]): nothing is answered from memory that was
//!   cached before.
//!
//! On a store only this process writes (sled, memory) all of it is a no-op.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;

use super::Registry;
use super::cache::CellState;
use super::error::RegistryError;
use crate::store::{StoreChange, StoreError};

/// How often every watched game is checked against the store, in case an announcement
/// was lost (a replica killed between its commit and its announcement).
const RECHECK: Duration = Duration::from_secs(1);

impl Registry {
    /// On a store other replicas write too, makes the locked cell hold the stored game:
    /// one stamp read when it is unchanged (same version and same token), a load (and the
    /// spectators told what changed) when another replica changed it. Nothing to do on a
    /// store only this process writes.
    pub(super) async fn refresh(
        &self,
        state: &mut CellState,
        id: &str,
    ) -> Result<(), RegistryError> {
        if !self.store.shared() {
            return Ok(());
        }
        self.cache.drop_if_stale(state, self.epoch());
        let CellState::Loaded(entry) = state else {
            return self.fill(state, id).await;
        };
        let epoch = self.epoch();
        let stored = self
            .store
            .stored_stamp(id)
            .await
            .map_err(RegistryError::from_store)?;
        if stored == Some(entry.stamp()) {
            entry.epoch = epoch;
            return Ok(());
        }
        match self.store.load(id).await {
            // Newer, of the same game (not one created again under its id): its log
            // extends this one, so spectators get the events in between.
            Ok(Some(loaded))
                if loaded.game.version() > entry.game.version() && loaded.meta == entry.meta =>
            {
                entry.catch_up(loaded.meta, loaded.game, loaded.token);
                entry.epoch = epoch;
            }
            // Another game under this id (deleted and created again), a rewound one (a
            // failover to a standby that lagged), or gone: read it afresh (dropping the
            // entry closes the spectators' channel; their streams catch up from the
            // store).
            Ok(_) => {
                *state = CellState::Unloaded;
                self.fill(state, id).await?;
            }
            Err(e @ StoreError::DataLoss { .. }) => {
                tracing::error!(game_id = %id, error = %e, "stored game is damaged; answering DATA_LOSS for it");
                *state = CellState::Damaged(e);
            }
            Err(e) => return Err(RegistryError::from_store(e)),
        }
        Ok(())
    }

    /// Follows the changes other replicas make (a shared store's feed): a watched game
    /// changed elsewhere is read and its new events streamed to the spectators here; and
    /// every second every watched game is checked, in case an announcement was lost.
    /// When the feed says announcements may have been missed ([`StoreChange::Resync`]:
    /// it reconnected; or this replica fell behind it), every cached game is dropped,
    /// watched or not, and the watched ones are read again for their spectators.
    /// Nothing to follow on a store only this process writes. Stops with the registry
    /// (it holds only a weak reference) or at shutdown.
    pub fn follow_store(self: &Arc<Self>) {
        let Some(mut changes) = self.store.changes() else {
            return;
        };
        let registry = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut recheck = tokio::time::interval(RECHECK);
            recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                // `None`: the periodic re-check of the watched games.
                let change = tokio::select! {
                    change = changes.recv() => Some(change),
                    _ = recheck.tick() => None,
                };
                let Some(registry) = registry.upgrade() else {
                    return;
                };
                if registry.shutting_down() {
                    return;
                }
                match change {
                    Some(Ok(StoreChange::Game { id, version })) => {
                        registry.catch_up(id, Some(version))
                    }
                    Some(Ok(StoreChange::Deleted { id })) => registry.forget_deleted(id),
                    Some(Ok(StoreChange::Resync) | Err(broadcast::error::RecvError::Lagged(_))) => {
                        registry.invalidate_all();
                    }
                    None => {
                        for id in registry.cache.held_ids() {
                            registry.catch_up(id, None);
                        }
                    }
                    Some(Err(broadcast::error::RecvError::Closed)) => return,
                }
            }
        });
    }

    /// Drops every cached game (see [`super::cache::Cache::invalidate_all`]): at once for
    /// every game, by the next lock of each; and the games someone holds (spectators
    /// watch them) are dropped now, not at their next use, so their spectators' streams
    /// catch up from the store at once.
    pub(super) fn invalidate_all(self: &Arc<Self>) {
        self.cache.invalidate_all();
        tracing::info!(
            "the change feed reconnected: every cached game is read again from the store"
        );
        for id in self.cache.held_ids() {
            self.catch_up(id, None);
        }
    }

    /// Brings game `id` up to `version` (or to whatever is stored) if it is loaded here,
    /// someone holds it and spectators watch it: in a task of its own, so the feed never
    /// waits for a game's lock. A game cached before the last invalidation is dropped
    /// (its spectators' streams then catch up from the store).
    fn catch_up(self: &Arc<Self>, id: String, version: Option<u64>) {
        let Some(cell) = self.cache.held_cell(&id) else {
            return;
        };
        let registry = self.clone();
        tokio::spawn(async move {
            let mut guard = cell.lock_owned().await;
            if registry.cache.drop_if_stale(&mut guard, registry.epoch()) {
                return;
            }
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
}
