//! Flag timers: a timed game that is loaded and running has one timer task (holding only
//! a weak reference to the registry and the game's id), re-armed when the flag time
//! changes and aborted when the game ends or its entry is dropped (evicted, or reset after
//! a failed write). Eviction cannot lose a flag: the next access records it.

use std::sync::{Arc, Weak};
use std::time::Duration;

use super::entry::GameEntry;
use super::error::RegistryError;
use super::{Clock, Registry};

/// The flag timer of a running timed game; aborted when dropped.
pub(super) struct FlagTimer {
    at_ms: u64,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FlagTimer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Registry {
    /// Makes sure a running timed game has a flag timer for its current flag time (and
    /// that a game without one has none).
    pub(super) fn arm(self: &Arc<Self>, entry: &mut GameEntry, id: &str) {
        let want = entry.game.flag_time().filter(|_| !self.shutting_down());
        match (&entry.timer, want) {
            (Some(t), Some(at)) if t.at_ms == at && !t.task.is_finished() => {}
            (None, None) => {}
            (_, None) => entry.timer = None,
            (_, Some(at)) => {
                let task = tokio::spawn(flag_timer(
                    Arc::downgrade(self),
                    self.clock.clone(),
                    id.to_string(),
                    at,
                ));
                entry.timer = Some(FlagTimer { at_ms: at, task });
            }
        }
    }

    /// Records a fallen flag of game `id`, if any (the flag timer's call). Returns the
    /// flag time still ahead, if the game still runs.
    async fn touch(self: &Arc<Self>, id: &str) -> Result<Option<u64>, RegistryError> {
        self.update(id.to_string(), |e, _| Ok(e.game.flag_time()))
            .await
    }
}

/// The flag timer of one game: sleeps until the flag time, then has the registry record
/// the flag fall (an update like any call's, so it is durable and published). Holds only
/// a weak reference to the registry, so it never keeps it (or the game) alive.
async fn flag_timer(registry: Weak<Registry>, clock: Clock, id: String, mut at_ms: u64) {
    loop {
        // One millisecond late: a wall-clock reading rounds down.
        let wait = at_ms.saturating_sub(clock.now_ms()) + 1;
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let Some(registry) = registry.upgrade() else {
            return;
        };
        if registry.shutting_down() {
            return;
        }
        match registry.touch(&id).await {
            // Still running (the clock was behind the timer): wait again.
            Ok(Some(next)) => at_ms = next,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(game_id = %id, error = %e, "the flag timer could not record a flag fall; the next call on the game will");
                return;
            }
        }
    }
}
