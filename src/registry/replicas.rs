//! Replicas on a shared store (stateless replicas on one database): a game kept in memory
//! here may have been changed by another replica, so
//! - a game is refreshed from the store before it answers (one version read while it is
//!   unchanged, a load when another replica changed it: [`Registry::refresh`]);
//! - the store's change feed is followed, so spectators here get the events another
//!   replica recorded, without a gap ([`Registry::follow_store`]).
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
    /// one version read when it is unchanged, a load (and the spectators told what
    /// changed) when another replica changed it. Nothing to do on a store only this
    /// process writes.
    pub(super) async fn refresh(
        &self,
        state: &mut CellState,
        id: &str,
    ) -> Result<(), RegistryError> {
        if !self.store.shared() {
            return Ok(());
        }
        let CellState::Loaded(entry) = state else {
            return self.fill(state, id).await;
        };
        let stored = self
            .store
            .stored_version(id)
            .await
            .map_err(RegistryError::from_store)?;
        if stored == Some(entry.game.version()) {
            return Ok(());
        }
        match self.store.load(id).await {
            Ok(Some(loaded)) if loaded.game.version() > entry.game.version() => {
                entry.catch_up(loaded.meta, loaded.game);
            }
            // Not newer (cannot happen: versions only grow) or gone: read it afresh.
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
                    Ok(StoreChange::Deleted { id }) => registry.forget_deleted(id),
                    Ok(StoreChange::Resync) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        for id in registry.cache.held_ids() {
                            registry.catch_up(id, None);
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    /// Brings game `id` up to `version` (or to whatever is stored) if it is loaded here,
    /// someone holds it and spectators watch it: in a task of its own, so the feed never
    /// waits for a game's lock.
    fn catch_up(self: &Arc<Self>, id: String, version: Option<u64>) {
        let Some(cell) = self.cache.held_cell(&id) else {
            return;
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
}
