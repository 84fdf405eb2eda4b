//! The flag sweep. Clocks outlive replicas: every replica sweeps the flag-deadline
//! column, records the flag fall of each due game and writes it like any save (the
//! batch's compare-and-set), so a flag falls even when the replica that armed it is gone.
//! The sweep reads without locking and never holds a transaction open between
//! statements: a replica paused or cut off mid-sweep blocks no one.

use std::time::Duration;

use tokio::sync::oneshot;

use super::Inner;
use super::batch::PendingSave;
use super::errors::to_i64;
use super::row::{Row, decode_row};
use super::sql::{DUE, FIX_FLAG};
use crate::store::StoreError;

impl Inner {
    /// One sweep: reads the due rows (without locking them), records each flag fall and
    /// writes it like any save, through the batch writer's compare-and-set, so a sweep
    /// holds no lock between statements and a replica paused or cut off mid-sweep blocks
    /// no one. Replicas sweeping the same game race on its stamp: one write wins, the
    /// others match nothing. Returns the games this sweep changed.
    pub(super) async fn sweep_once(
        &self,
        now_ms: Option<u64>,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        let now = now_ms.map(|ms| to_i64(ms, "time")).transpose()?;
        let due = self
            .run(|client| async move {
                let stmt = client.prepare_cached(DUE).await?;
                client.query(&stmt, &[&now, &limit]).await
            })
            .await?;
        let mut writes = Vec::new();
        for row in due {
            let id: String = row.get(0);
            let version: i64 = row.get(1);
            let record: Vec<u8> = row.get(2);
            let token: i64 = row.get(3);
            let now_ms = u64::try_from(row.get::<_, i64>(4)).unwrap_or(0);
            let mut loaded = match decode_row(&id, version, &record).map(|d| d.loaded) {
                Ok(loaded) => loaded,
                Err(e) => {
                    tracing::error!(game_id = %id, error = %e, "the flag sweep cannot read this game; skipping it");
                    continue;
                }
            };
            let before = loaded.game.status();
            // Judging a flag fall may run the winnability solver for its whole budget
            // (FIDE 6.9; seconds on a hard position): on the blocking pool, so that the
            // runtime's workers go on serving calls meanwhile.
            let settled = tokio::task::spawn_blocking(move || {
                let fell = loaded.game.settle(now_ms);
                (loaded, fell)
            })
            .await;
            let Ok((loaded, settled)) = settled else {
                tracing::error!(game_id = %id, "the flag sweep failed to judge a flag fall; skipping it");
                continue;
            };
            let fell = match settled {
                Ok(fell) => fell,
                Err(e) => {
                    tracing::error!(game_id = %id, error = %e, "the flag sweep cannot record a flag fall; skipping it");
                    continue;
                }
            };
            // A flag fall ends the game: the history limit never refuses it.
            let since = u64::try_from(version).unwrap_or(0);
            let next = match Row::of(&loaded.meta, &loaded.game, None, since).map(|(row, _)| row) {
                Ok(next) => next,
                Err(e) => {
                    tracing::error!(game_id = %id, error = %e, "the flag sweep cannot encode this game; skipping it");
                    continue;
                }
            };
            if !fell {
                // The column was ahead of the record (cannot happen when every write goes
                // through this store): put it right, unless the game changed meanwhile.
                let flag = next.flag_at_ms;
                self.run(|client| {
                    let id = id.clone();
                    async move {
                        let stmt = client.prepare_cached(FIX_FLAG).await?;
                        client.execute(&stmt, &[&id, &flag, &version, &token]).await
                    }
                })
                .await?;
                continue;
            }
            let (done, answer) = oneshot::channel();
            let written_version = next.version;
            let save = PendingSave {
                id: id.clone(),
                row: next,
                expected: version,
                expected_token: Some(token),
                done,
                busy: false,
            };
            if self.saves.send(save).is_err() {
                return Err(StoreError::Closed);
            }
            writes.push((id, written_version, before, loaded.game.status(), answer));
        }
        let mut changed = Vec::new();
        let mut failure = None;
        for (id, _, before, after, answer) in writes {
            match tokio::time::timeout(self.timeout, answer).await {
                // Committed (and announced by the writer): this sweep ended the game.
                Ok(Ok(Ok(true))) => {
                    self.tally.changed(before, after);
                    changed.push(id);
                }
                // Another write (a move, another replica's sweep) won: nothing to do.
                Ok(Ok(Ok(false))) => {}
                Ok(Ok(Err(e))) => failure = Some(e),
                Ok(Err(_)) => failure = Some(StoreError::Closed),
                Err(_) => failure = Some(self.timed_out()),
            }
        }
        match failure {
            Some(e) if changed.is_empty() => Err(e),
            _ => Ok(changed),
        }
    }
}

/// The flag sweeper: every `interval`, records the flags that have fallen. The first
/// sweep is one interval after the start (not at once), so a store opened with a long
/// interval never sweeps behind its owner's back.
pub(super) async fn sweep(inner: std::sync::Weak<Inner>, interval: Duration) {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        // Keep sweeping while a sweep is full: a burst of flags drains quickly.
        loop {
            match inner.sweep_once(None, 64).await {
                Ok(changed) if changed.len() == 64 => continue,
                Ok(changed) => {
                    if !changed.is_empty() {
                        tracing::debug!(games = changed.len(), "flag sweep recorded flag falls");
                    }
                }
                Err(e) => tracing::debug!(error = %e, "flag sweep failed; retrying"),
            }
            break;
        }
    }
}
