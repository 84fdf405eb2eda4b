//! Spectators: the live events of a game, sent only after they are durable (published
//! under the game's lock once the write resolved), through a bounded broadcast channel per
//! game. Publishing never waits for a spectator; one that falls behind is told to resync.
//! A new spectator first gets the backlog (replayed from the log outside the lock), then
//! the live events, joined without a gap.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

use tokio::sync::{broadcast, watch};

use super::Registry;
use super::cache::Cell;
use super::entry::GameEntry;
use super::error::RegistryError;
use crate::lifecycle::{EventRecord, GameMeta};

/// One event as spectators get it, with the form an upper layer sends it in, computed
/// by the first spectator that needs it and shared by the others.
pub struct Published {
    record: EventRecord,
    sent_as: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl Published {
    pub(super) fn new(record: EventRecord) -> Published {
        Published {
            record,
            sent_as: OnceLock::new(),
        }
    }

    /// The event.
    pub fn record(&self) -> &EventRecord {
        &self.record
    }

    /// The event in the caller's form `T`, made by `make` once per event (not once per
    /// spectator). One form is kept: asking with another type computes it every time.
    pub fn sent_as<T>(&self, make: impl FnOnce(&EventRecord) -> T) -> T
    where
        T: Any + Send + Sync + Clone,
    {
        if let Some(made) = self.sent_as.get().and_then(|v| v.downcast_ref::<T>()) {
            return made.clone();
        }
        let made = make(&self.record);
        // Another spectator may have made it meanwhile: theirs is the same.
        let _ = self.sent_as.set(Box::new(made.clone()));
        made
    }
}

impl std::fmt::Debug for Published {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Published")
            .field("record", &self.record)
            .finish_non_exhaustive()
    }
}

impl GameEntry {
    /// Sends the events recorded since the last call to the spectators. Called once they
    /// are durable.
    pub(super) fn publish(&mut self) {
        let records = self.game.take_records();
        if let Some(tx) = &self.events {
            for record in records {
                // No receiver left is not an error: nobody is watching any more.
                let _ = tx.send(Arc::new(Published::new(record)));
            }
        }
    }

    /// A receiver of the live events (creating the channel, of `capacity` events, on the
    /// first subscription).
    fn subscribe(&mut self, capacity: usize) -> broadcast::Receiver<Arc<Published>> {
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

/// What a spectator's stream gets next.
#[derive(Debug)]
pub enum WatchItem {
    /// The next event, in version order without gaps.
    Event(Arc<Published>),
    /// The spectator fell behind; it should resume from this version. The stream ends.
    Resync(u64),
    /// The stream ends with this error (the server is shutting down, or the game can no
    /// longer be read).
    End(RegistryError),
}

/// A spectator's subscription to one game: its backlog, then the live events.
pub struct Subscription {
    registry: Arc<Registry>,
    id: String,
    meta: GameMeta,
    /// The version the spectator gets next.
    next_version: u64,
    backlog: VecDeque<Arc<Published>>,
    live: broadcast::Receiver<Arc<Published>>,
    shutdown: watch::Receiver<bool>,
    /// Keeps the game loaded (a watched game is in use) and its channel alive.
    keep_alive: Arc<Cell>,
}

impl Subscription {
    /// The watched game's id, variant, start and creation time.
    pub fn meta(&self) -> &GameMeta {
        &self.meta
    }

    /// The next thing to send. Waits for live events; never makes the game wait.
    pub async fn next(&mut self) -> WatchItem {
        loop {
            if *self.shutdown.borrow() {
                return WatchItem::End(RegistryError::ShuttingDown);
            }
            // A stopped store serves nothing more, not even the backlog.
            if let Err(e) = self.registry.check_fault() {
                return WatchItem::End(e);
            }
            if let Some(event) = self.backlog.pop_front() {
                if event.record.version < self.next_version {
                    continue;
                }
                self.next_version = event.record.version + 1;
                return WatchItem::Event(event);
            }
            let received = tokio::select! {
                biased;
                _ = self.shutdown.changed() => continue,
                received = self.live.recv() => received,
            };
            match received {
                // Already sent from the backlog (published while subscribing).
                Ok(event) if event.record.version < self.next_version => {}
                Ok(event) if event.record.version == self.next_version => {
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

impl Registry {
    /// Subscribes to game `id`'s events from version `from_version` on: the backlog (by
    /// replaying the log, outside the game's lock) and the live channel, joined without a
    /// gap (the subscription is made under the lock). The subscription keeps the game's
    /// cell loaded.
    pub async fn subscribe(
        self: &Arc<Self>,
        id: &str,
        from_version: u64,
    ) -> Result<Subscription, RegistryError> {
        let capacity = self.watch_buffer;
        let key = id.to_string();
        let (snapshot, meta, rx) = self
            .update(id.to_string(), move |e, _| {
                let current = e.game.version();
                if from_version > current + 1 {
                    return Err(RegistryError::VersionAhead {
                        id: key.clone(),
                        from: from_version,
                        current,
                    });
                }
                let rx = e.subscribe(capacity);
                Ok((e.game.clone(), e.meta.clone(), rx))
            })
            .await?;
        // The cell after the game was found (an unknown id keeps none). Had it been
        // evicted meanwhile, the channel is closed and the stream catches up from the store.
        let keep_alive = self.cache.cell(id)?;
        let records = snapshot.records_since(from_version).map_err(|e| {
            RegistryError::Internal(format!("replaying game '{id}' for a spectator: {e}"))
        })?;
        Ok(Subscription {
            registry: self.clone(),
            id: id.to_string(),
            meta,
            next_version: from_version,
            backlog: records
                .into_iter()
                .map(|r| Arc::new(Published::new(r)))
                .collect(),
            live: rx,
            shutdown: self.shutdown.subscribe(),
            keep_alive,
        })
    }
}
