//! The registry's catalog calls: listing games and deleting one.
//!
//! - A listing asks the store for a page of ids (in game-id byte order, filtered by
//!   status) with their stored stamps (version and write token), then answers each from
//!   the cache when its cached stamp is that one, and otherwise refreshes it from the
//!   store. So a listing never answers from a state other than (or older than) the one
//!   stored when it was listed, not even one at the same version (a game deleted and
//!   created again elsewhere), and costs no store reads for games cached as listed. Each game is read under its lock, like any read,
//!   so a flag that fell is recorded first; the status filter is applied again on the
//!   fresh state. A game deleted between the store's page and its read is left out; so
//!   is a damaged one (logged; reading it by id answers DATA_LOSS).
//! - A delete runs under the game's lock (after every call queued before it), in a task
//!   of its own (a caller that hangs up cannot abandon it half-way): the store removes
//!   the game durably, then the cached entry is dropped. Dropping it closes the game's
//!   spectator channel; each spectator's stream then looks the game up again, finds none
//!   and ends with [`RegistryError::NotFound`] (NOT_FOUND on the wire). Calls that were
//!   waiting for the lock find no game either. On a shared store the other replicas learn
//!   of it from the change feed ([`crate::store::StoreChange::Deleted`]) and do the same
//!   for their cached entry and spectators (or within a second, at their next re-check,
//!   if the announcement is lost).

use std::sync::Arc;

use super::cache::CellState;
use super::entry::GameEntry;
use super::error::RegistryError;
use super::{Registry, loaded};
use crate::store::{KeyRange, ListedGame, StatusFilter, StoreError};

/// One page of [`Registry::list_games`].
#[derive(Debug)]
pub struct GamePage<R> {
    /// What the caller's view made of each listed game, in game-id byte order.
    pub games: Vec<R>,
    /// Where the next page starts (the last id this page covered), `None` on the last
    /// page. Not necessarily the id of the last game answered: a game can drop out of a
    /// page (deleted, or no longer of the filter after a flag fell).
    pub resume_after: Option<String>,
}

impl Registry {
    /// Lists at most `limit` games of `filter` whose ids lie in `range` and come after
    /// `after`, in game-id byte order, each as `view` makes it of the game's fresh state
    /// (see the module docs).
    pub async fn list_games<R, F>(
        self: &Arc<Self>,
        range: &KeyRange,
        filter: StatusFilter,
        after: Option<&str>,
        limit: usize,
        view: F,
    ) -> Result<GamePage<R>, RegistryError>
    where
        R: Send + 'static,
        F: Fn(&mut GameEntry, u64) -> R + Clone + Send + 'static,
    {
        self.check_fault()?;
        let page = self
            .store
            .list(range, filter, after, limit)
            .await
            .map_err(RegistryError::Store)?;
        let mut games = Vec::with_capacity(page.games.len());
        for listed in page.games {
            match self.read_listed(&listed, view.clone()).await {
                Ok((answer, ended)) if filter.admits(ended) => games.push(answer),
                Ok(_) | Err(RegistryError::NotFound { .. }) => {}
                Err(RegistryError::Damaged(e)) => {
                    tracing::warn!(game_id = %listed.id, error = %e, "a damaged game is left out of a listing");
                }
                Err(e) => return Err(e),
            }
        }
        Ok(GamePage {
            games,
            resume_after: page.resume_after,
        })
    }

    /// Reads a listed game: from its cached entry when that is the listed stamp, else
    /// refreshed from the store (which keeps a cached entry changed here since the listing
    /// after one stamp read). Returns the view and whether the game is over.
    async fn read_listed<R, F>(
        self: &Arc<Self>,
        listed: &ListedGame,
        view: F,
    ) -> Result<(R, bool), RegistryError>
    where
        R: Send + 'static,
        F: Fn(&mut GameEntry, u64) -> R + Send + 'static,
    {
        let id = listed.id.as_str();
        let now = self.now_ms();
        {
            let mut guard = self.lock_game(id).await?;
            let stale = matches!(&*guard, CellState::Loaded(e) if e.stamp() != listed.stamp());
            if stale {
                self.refresh(&mut guard, id).await?;
            }
            let entry = loaded(&mut guard, id)?;
            if !entry.flag_due(now) {
                self.arm(entry, id);
                let ended = entry.game.status().is_over();
                return Ok((view(entry, now), ended));
            }
        }
        // A flag fell: recorded (and made durable) first, as every read does.
        self.update_at(id.to_string(), now, move |e, now| {
            let ended = e.game.status().is_over();
            Ok::<_, RegistryError>((view(e, now), ended))
        })
        .await
    }

    /// Deletes game `id` and its whole history, if it is at `expected_version` (when
    /// given): [`RegistryError::VersionMismatch`] otherwise, [`RegistryError::NotFound`]
    /// when there is no such game. Returns the version deleted, once the deletion is
    /// durable. See the module docs for what happens to its spectators.
    pub async fn delete_game(
        self: &Arc<Self>,
        id: &str,
        expected_version: Option<u64>,
    ) -> Result<u64, RegistryError> {
        let registry = self.clone();
        let id = id.to_string();
        let task = tokio::spawn(async move {
            registry.check_fault()?;
            let cell = registry.cache.cell(&id)?;
            let mut guard = cell.lock_owned().await;
            registry.check_fault()?;
            let deleted = registry.store.delete(&id, expected_version).await;
            let answer = match deleted {
                Ok(Some(version)) => Ok(version),
                Ok(None) => Err(RegistryError::NotFound { id: id.clone() }),
                Err(StoreError::Conflict { current, .. }) => {
                    return Err(RegistryError::VersionMismatch {
                        id: id.clone(),
                        expected: expected_version.unwrap_or(0),
                        current,
                    });
                }
                Err(e) => {
                    tracing::error!(game_id = %id, error = %e, "deleting a game failed; it is not acknowledged");
                    // The store decides what is there: read it again on its next use.
                    *guard = CellState::Unloaded;
                    return Err(RegistryError::from_store(e));
                }
            };
            // Gone (or never there): dropping the entry closes its spectators' channel
            // and stops its flag timer.
            *guard = CellState::Unloaded;
            drop(guard);
            registry.cache.forget_unknown(&id);
            answer
        });
        task.await
            .map_err(|e| RegistryError::Internal(format!("a game deletion task failed: {e}")))?
    }

    /// A game deleted elsewhere (another replica, announced by the store): drops its
    /// cached entry, so its spectators' streams here end and the next call reads the
    /// store (which has no such game, or a game created under that id since: either way
    /// the store's, never the deleted one's state).
    pub(super) fn forget_deleted(self: &Arc<Self>, id: String) {
        let Some(cell) = self.cache.cached_cell(&id) else {
            return;
        };
        let registry = self.clone();
        tokio::spawn(async move {
            let mut guard = cell.lock_owned().await;
            *guard = CellState::Unloaded;
            drop(guard);
            registry.cache.forget_unknown(&id);
        });
    }
}
