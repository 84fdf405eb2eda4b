//! Writes: create, save (after its version check) and delete, each under its game's
//! stripe lock, writing the record and its `ended` key in one sled transaction when the
//! write changes whether the game is over; and a write sled refused, which stops the
//! store (fail-stop).

use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};

use super::SledStore;
use super::errors::file_err;
use crate::lifecycle::Match;
use crate::store::codec;
use crate::store::encoder_cache;
use crate::store::ledger::{self, Change};
use crate::store::{Durable, GameMeta, StoreError};

impl SledStore {
    /// Writes a new game now and returns its durability ticket without waiting for it:
    /// the two-phase form of [`GameStore::create`], for synchronous callers (tools, the
    /// store benchmarks, which time the write apart from its durability).
    ///
    /// [`GameStore::create`]: crate::store::GameStore::create
    pub fn create_now(&self, meta: &GameMeta, game: &Match) -> Result<Durable, StoreError> {
        self.shared.check_open()?;
        self.commit.check()?;
        {
            let _writing = self.shared.writing(&meta.id);
            self.shared.lost.check(&meta.id)?;
            let cached = self.shared.encoders.take(&meta.id);
            let (record, cached) = encoder_cache::encode(meta, game, cached, 0)?;
            let version = ledger::record_version(&record);
            let key = meta.id.as_bytes();
            let gate = self.shared.commits.writing();
            let swapped = if game.status().is_over() {
                // A game created over (an imported finished game): record and index at once.
                let record = sled::IVec::from(record);
                let done = (&self.shared.games, &self.shared.ended).transaction(|(g, e)| {
                    if g.get(key)?.is_some() {
                        return Err(ConflictableTransactionError::Abort(()));
                    }
                    g.insert(key, record.clone())?;
                    e.insert(key, &[])?;
                    Ok(())
                });
                match done {
                    Ok(()) => Ok(()),
                    Err(TransactionError::Abort(())) => Err(()),
                    Err(TransactionError::Storage(e)) => return Err(self.write_failed(&meta.id, e)),
                }
            } else {
                self.shared
                    .games
                    .compare_and_swap(key, None as Option<&[u8]>, Some(record))
                    .map_err(|e| self.write_failed(&meta.id, e))?
                    .map_err(|_| ())
            };
            if swapped.is_err() {
                return Err(StoreError::AlreadyExists {
                    id: meta.id.clone(),
                });
            }
            self.shared.commits.record(&meta.id, Change::Live(version));
            drop(gate);
            self.shared.encoders.put(&meta.id, cached);
        }
        self.ticket()
    }

    /// Replaces a game's record whatever version it holds, now, and returns the
    /// durability ticket without waiting for it: the two-phase, unchecked form of
    /// [`GameStore::save`] (which the service uses), for synchronous callers (tools, the
    /// store benchmarks).
    ///
    /// [`GameStore::save`]: crate::store::GameStore::save
    pub fn overwrite_now(&self, meta: &GameMeta, game: &Match) -> Result<Durable, StoreError> {
        self.write(meta, game, None)
    }

    /// Writes `game`'s record, after checking that the stored one is at `expected` (if
    /// given), and returns the durability ticket.
    pub(super) fn write(
        &self,
        meta: &GameMeta,
        game: &Match,
        expected: Option<u64>,
    ) -> Result<Durable, StoreError> {
        self.shared.check_open()?;
        self.commit.check()?;
        {
            let _writing = self.shared.writing(&meta.id);
            self.shared.lost.check(&meta.id)?;
            let mut cached = self.shared.encoders.take(&meta.id);
            if let Some(expected) = expected {
                let current = match cached.as_ref().map(|c| c.version) {
                    Some(version) => Some(version),
                    None => self.shared.read(&meta.id)?.map(|(version, stored)| {
                        cached = Some(stored);
                        version
                    }),
                };
                if current != Some(expected) {
                    if let Some(c) = cached {
                        self.shared.encoders.put(&meta.id, c);
                    }
                    return Err(StoreError::Conflict {
                        id: meta.id.clone(),
                        current: current.unwrap_or(0),
                    });
                }
            }
            let (record, cached) =
                encoder_cache::encode(meta, game, cached, expected.unwrap_or(0))?;
            let version = ledger::record_version(&record);
            let key = meta.id.as_bytes();
            let gate = self.shared.commits.writing();
            let over = game.status().is_over();
            let was_over = self
                .shared
                .ended
                .contains_key(key)
                .map_err(|e| self.shared.sled_err(&meta.id, e))?;
            if over == was_over {
                self.shared
                    .games
                    .insert(key, record)
                    .map_err(|e| self.write_failed(&meta.id, e))?;
            } else {
                // The game ended or was taken back into play: record and index at once.
                let record = sled::IVec::from(record);
                (&self.shared.games, &self.shared.ended)
                    .transaction(|(g, e)| {
                        g.insert(key, record.clone())?;
                        if over {
                            e.insert(key, &[])?;
                        } else {
                            e.remove(key)?;
                        }
                        Ok::<(), ConflictableTransactionError<()>>(())
                    })
                    .map_err(|e| match e {
                        TransactionError::Storage(e) => self.write_failed(&meta.id, e),
                        TransactionError::Abort(()) => StoreError::Io(format!(
                            "internal error: the write of game '{}' was aborted",
                            meta.id
                        )),
                    })?;
            }
            self.shared.commits.record(&meta.id, Change::Live(version));
            drop(gate);
            self.shared.encoders.put(&meta.id, cached);
        }
        self.ticket()
    }

    /// Removes game `id` (record and index key, in one transaction) if it is stored at
    /// `expected` (when given), and returns the version removed with the durability
    /// ticket; `None` when there is no such game. A damaged record can be deleted too,
    /// unless an expected version is given and its version cannot be read.
    pub(super) fn remove(
        &self,
        id: &str,
        expected: Option<u64>,
    ) -> Result<Option<(u64, Durable)>, StoreError> {
        self.shared.check_open()?;
        self.commit.check()?;
        let version = {
            let _writing = self.shared.writing(id);
            let key = id.as_bytes();
            let cached = self.shared.encoders.take(id);
            let lost = self.shared.lost.version(id);
            let Some(record) = self
                .shared
                .games
                .get(key)
                .map_err(|e| self.shared.sled_err(id, e))?
            else {
                return match lost {
                    // A game an accepted rollback lost entirely: its deletion is recorded.
                    Some(version) => {
                        let _gate = self.shared.commits.writing();
                        self.shared.lost.forget(id);
                        self.shared.commits.record(id, Change::Deleted);
                        Ok(Some((version, self.ticket()?)))
                    }
                    None => Ok(None),
                };
            };
            // A game an accepted rollback lost is at the version that was acknowledged.
            let current = lost.or_else(|| {
                cached
                    .as_ref()
                    .map(|c| c.version)
                    .or_else(|| codec::peek_version(&record))
            });
            match (expected, current) {
                (Some(expected), Some(current)) if expected != current => {
                    if let Some(c) = cached {
                        self.shared.encoders.put(id, c);
                    }
                    return Err(StoreError::Conflict {
                        id: id.to_string(),
                        current,
                    });
                }
                (Some(_), None) => {
                    return Err(StoreError::DataLoss {
                        id: id.to_string(),
                        reason: "the record is damaged, so its version cannot be checked; delete it without an expected version".into(),
                    });
                }
                _ => {}
            }
            let gate = self.shared.commits.writing();
            let tombstone = current.unwrap_or(ledger::UNREADABLE).to_le_bytes();
            (&self.shared.games, &self.shared.ended, &self.shared.deleted)
                .transaction(|(g, e, d)| {
                    g.remove(key)?;
                    e.remove(key)?;
                    d.insert(key, &tombstone)?;
                    Ok::<(), ConflictableTransactionError<()>>(())
                })
                .map_err(|e| match e {
                    TransactionError::Storage(e) => self.write_failed(id, e),
                    TransactionError::Abort(()) => StoreError::Io(format!(
                        "internal error: the delete of game '{id}' was aborted"
                    )),
                })?;
            self.shared.lost.forget(id);
            self.shared.commits.record(id, Change::Deleted);
            drop(gate);
            lost.or(current).unwrap_or(0)
        };
        Ok(Some((version, self.ticket()?)))
    }

    /// A write sled refused: sled may have applied it in memory, or failed to write its
    /// log, so what it holds and what is on disk are unknown. The store stops (fail-stop:
    /// see [`GroupCommit::fail`]) and a handle on sled is leaked, so that no drop flushes
    /// what was never acknowledged (see [`sync_fn`]). A full disk is answered as such.
    ///
    /// [`GroupCommit::fail`]: crate::store::group_commit::GroupCommit::fail
    /// [`sync_fn`]: super::durable_files::sync_fn
    fn write_failed(&self, id: &str, e: sled::Error) -> StoreError {
        let err = match e {
            sled::Error::Io(io) => file_err("sled write", &self.shared.path, &io),
            e => self.shared.sled_err(id, e),
        };
        self.commit
            .fail(format!("a write of game '{id}' failed: {err}"));
        std::mem::forget(self.shared.games.clone());
        match err {
            e @ StoreError::DiskFull(_) => e,
            e => StoreError::Stopped(format!("a write of game '{id}' failed: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Position, Variant};
    use crate::store::Start;
    use crate::store::sled::{Durability, SledConfig};
    use crate::store::{GameStore, Stamp};

    fn meta(id: &str) -> GameMeta {
        GameMeta {
            id: id.into(),
            variant: Variant::Standard.into(),
            start: Start::Standard,
            created_unix_ms: 0,
            tags: crate::lifecycle::Tags::none(),
        }
    }

    fn game(moves: &[&str]) -> Match {
        let mut game = Match::untimed(Position::new());
        for m in moves {
            game.play(0, None, m).expect("a legal move");
        }
        game
    }

    fn conflict(id: &str, current: u64) -> Result<Option<u64>, StoreError> {
        Err(StoreError::Conflict {
            id: id.into(),
            current,
        })
    }

    /// The version check holds whether the store remembers the version it wrote (its
    /// encoder cache) or has to read it from the record (a reopened store, or no cache).
    #[tokio::test]
    async fn a_save_over_another_version_is_a_conflict() {
        for cache in [10_000, 0] {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let open = || {
                let mut config = SledConfig::new(dir.path()).durability(Durability::Flush);
                config.encoder_cache_games = cache;
                SledStore::open(config).expect("the store opens")
            };
            let store = open();
            let m = meta("g");
            GameStore::create(&store, &m, &game(&[])).await.unwrap();
            GameStore::save(&store, &m, &game(&["e2e4"]), Stamp::version(0))
                .await
                .unwrap();
            // A writer that decided on version 0 lost the race.
            assert_eq!(
                GameStore::save(&store, &m, &game(&["d2d4"]), Stamp::version(0)).await,
                conflict("g", 1)
            );
            drop(store);

            let store = open();
            assert_eq!(
                GameStore::save(&store, &m, &game(&["d2d4"]), Stamp::version(0)).await,
                conflict("g", 1),
                "cache {cache}: the version read from the record"
            );
            GameStore::save(&store, &m, &game(&["e2e4", "e7e5"]), Stamp::version(1))
                .await
                .unwrap();
            let loaded = GameStore::load(&store, "g").await.unwrap().unwrap();
            assert_eq!(loaded.game.game().san_moves(), ["e4", "e5"]);
            assert_eq!(
                GameStore::save(
                    &store,
                    &m,
                    &game(&["e2e4", "e7e5", "g1f3"]),
                    Stamp::version(3)
                )
                .await,
                conflict("g", 2)
            );
            // A game that is not stored at all: nobody's version to replace.
            assert_eq!(
                GameStore::save(&store, &meta("none"), &game(&["e2e4"]), Stamp::version(0)).await,
                conflict("none", 0)
            );
            assert!(GameStore::load(&store, "none").await.unwrap().is_none());
            GameStore::flush(&store).await.unwrap();
        }
    }
}
