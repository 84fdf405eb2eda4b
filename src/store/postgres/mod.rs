//! [`PgStore`]: games in a PostgreSQL database (or an engine that speaks its protocol),
//! shared by any number of stateless replicas.
//!
//! Why it is shaped this way:
//! - One row a game (`chess_games`): the id, the version (`Match::version`), the record
//!   bytes of [`super::codec`] (the same format as the embedded store, so ≤ 1 B/ply holds
//!   here too), the status (for listing), the flag deadline of a running timed game, the
//!   write token, and timestamps.
//! - The database, not a replica, orders changes to one game: `save` is a compare-and-set
//!   on the version and the write token (`UPDATE … WHERE id = v.id AND version =
//!   v.expected AND token = v.expected_token`); the loser gets [`StoreError::Conflict`]
//!   with the current version and the registry decides again on the fresh state. Every
//!   write draws a fresh random token (`token` column): a version number alone comes back
//!   with other moves after a delete and re-create by another replica, or after a
//!   failover to a standby that lagged, and a replica holding the old state must neither
//!   answer from it nor win the compare-and-set with it ([`super::Stamp`]).
//! - No session of a replica holds a lock for longer than a call may take, and nothing
//!   waits longer than the configured timeout: a database that is down or unreachable is
//!   [`StoreError::Unavailable`], never a hang.
//!
//! The files, one concept each (each says why it is shaped as it is):
//! - this one: [`PgConfig`], [`PgStore`] (open, create, save, load, list, delete) and its
//!   [`GameStore`] impl, and `Inner`, the state the store's tasks share;
//! - `schema`: the migrations and the durability check at start;
//! - `sql`: every statement the store runs;
//! - `row`: a game's row: its columns from a game, a game from its record, tokens and
//!   stamps, the status column's names;
//! - `errors`: running a statement (bounded, serialization failures retried) and what a
//!   database error means to a caller;
//! - `batch`: group commit of saves, and saves whose row another session holds;
//! - `feed`: the change feed (NOTIFY after the commit, the listener) and health;
//! - `db_clock`: the database's clock, read by the listener's pings;
//! - `sweep`: the flag sweep;
//! - `session`: each session's limits (`statement_timeout`, `lock_timeout`,
//!   `idle_in_transaction_session_timeout`) and the probing of pooled connections after a
//!   fault.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_postgres::NoTls;

use crate::lifecycle::Match;

mod batch;
mod db_clock;
mod errors;
mod feed;
mod row;
mod schema;
mod session;
mod sql;
mod sweep;

use batch::{PendingSave, write_saves};
use errors::to_i64;
pub use feed::CHANNEL;
use feed::{DELETED, listen, notify};
pub use row::stored_status_name;
use row::{Row, decode_row, stamp_of, token_from_db, token_to_db};
use session::Faults;
pub use session::SessionLimits;
use sql::{DELETE, INSERT, LOAD, STAMP, list_sql};
use sweep::sweep;

use super::clock::DbClock;
use super::encoder_cache::{CachedEncoder, EncoderCache};
use super::{
    GameMeta, GameStore, GameTally, KeyRange, ListPage, ListedGame, LoadedGame, Stamp,
    StatusFilter, StoreChange, StoreError,
};

/// How long a pooled connection suspected after a fault has to answer its probe: a
/// healthy one answers in well under a millisecond, and a call waiting for a connection
/// should not spend its time on a dead one.
const PROBE_LIMIT: Duration = Duration::from_millis(200);

/// How to connect a [`PgStore`].
#[derive(Clone, Debug)]
pub struct PgConfig {
    /// A libpq-style URL or key=value string (`postgres://user:pass@host:port/db`).
    pub url: String,
    /// Connections in the pool.
    pub pool_size: usize,
    /// The longest any database step may take (pool wait, connect, statement) before the
    /// call fails as unavailable.
    pub timeout: Duration,
    /// How often this replica looks for fallen flags.
    pub sweep_interval: Duration,
    /// The database's limits on each of this replica's sessions (statement, lock wait,
    /// idle in a transaction).
    pub limits: SessionLimits,
    /// The most the estimate of the database's clock may be off while the store reports
    /// itself available (see [`DbClock`]).
    pub max_clock_uncertainty: Duration,
}

impl PgConfig {
    /// The defaults for the database at `url`: 16 connections, 2 s per step (and as the
    /// database's limit on each statement and idle transaction; lock waits 100 ms), a flag
    /// sweep every 200 ms, a clock known within 50 ms.
    pub fn new(url: impl Into<String>) -> PgConfig {
        let timeout = Duration::from_millis(2000);
        PgConfig {
            url: url.into(),
            pool_size: 16,
            timeout,
            sweep_interval: Duration::from_millis(200),
            limits: SessionLimits::all(timeout),
            max_clock_uncertainty: Duration::from_millis(50),
        }
    }
}

/// Games in PostgreSQL. See the module documentation.
pub struct PgStore {
    inner: Arc<Inner>,
    tasks: Vec<JoinHandle<()>>,
}

struct Inner {
    pool: Pool,
    timeout: Duration,
    changes: broadcast::Sender<StoreChange>,
    healthy: watch::Sender<bool>,
    /// Committed changes for the notifier to announce.
    committed: mpsc::UnboundedSender<String>,
    /// Saves waiting for the save writer ([`write_saves`]).
    saves: mpsc::UnboundedSender<PendingSave>,
    /// The encodings of recently saved or loaded games, so a save encodes only its new
    /// moves.
    encoders: EncoderCache,
    /// The flag falls this replica's sweep committed (for the metrics).
    tally: Arc<GameTally>,
    /// How many times the listener (the change feed) connected: see
    /// [`GameStore::generation`].
    generation: std::sync::atomic::AtomicU64,
    /// The last step that timed out or lost its connection: connections pooled before it
    /// are probed before reuse.
    faults: Arc<Faults>,
    /// The database's clock as estimated here, fed by the listener's pings.
    clock: Arc<DbClock>,
    /// Past this uncertainty of [`Inner::clock`] the store reports itself unavailable.
    max_clock_uncertainty: Duration,
}

impl Drop for PgStore {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        self.inner.pool.close();
    }
}

/// How many games' encodings a replica keeps (as the embedded store's default).
const ENCODER_CACHE_GAMES: usize = 10_000;

impl PgStore {
    /// Connects, creates or migrates the schema (safe when several replicas start at
    /// once), checks the server's durability settings, and starts the listener (change
    /// feed and health) and the flag sweeper.
    pub async fn open(config: PgConfig) -> Result<PgStore, StoreError> {
        let mut pg: tokio_postgres::Config = config
            .url
            .parse()
            .map_err(|e| StoreError::Io(format!("the database URL is not valid: {e}")))?;
        if pg.get_connect_timeout().is_none() {
            pg.connect_timeout(config.timeout);
        }
        let options = config.limits.options(pg.get_options());
        // A connection whose data or keepalive probes go unanswered for the timeout is
        // closed by the kernel, not left in retransmission back-off (see `session`).
        pg.options(options)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(1))
            .keepalives_interval(Duration::from_secs(1))
            .keepalives_retries(3)
            .tcp_user_timeout(config.timeout)
            .application_name("chess-server");
        let faults = Faults::new();
        let manager = Manager::from_config(
            pg.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(config.pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(config.timeout))
            .create_timeout(Some(config.timeout))
            .recycle_timeout(Some(config.timeout))
            .pre_recycle(session::probe_after_fault(
                faults.clone(),
                PROBE_LIMIT.min(config.timeout),
            ))
            .build()
            .map_err(|e| StoreError::Io(format!("cannot build the database pool: {e}")))?;
        let (changes, _) = broadcast::channel(4096);
        // Healthy once the listener is listening (below).
        let (healthy, _) = watch::channel(false);
        let (committed, to_announce) = mpsc::unbounded_channel();
        let (saves, to_save) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            pool,
            timeout: config.timeout,
            changes,
            healthy,
            committed,
            saves,
            encoders: EncoderCache::new(ENCODER_CACHE_GAMES),
            tally: Arc::new(GameTally::new()),
            generation: std::sync::atomic::AtomicU64::new(0),
            faults,
            clock: Arc::new(DbClock::default()),
            max_clock_uncertainty: config.max_clock_uncertainty,
        });
        inner.migrate().await?;
        inner.warn_if_not_durable().await?;
        let listener = tokio::spawn(listen(Arc::downgrade(&inner), pg, config.timeout));
        let sweeper = tokio::spawn(sweep(Arc::downgrade(&inner), config.sweep_interval));
        let notifier = tokio::spawn(notify(Arc::downgrade(&inner), to_announce));
        let writer = tokio::spawn(write_saves(Arc::downgrade(&inner), to_save));
        // Serve only with the change feed live, so no change after start is missed.
        let mut up = inner.healthy.subscribe();
        let listening = tokio::time::timeout(config.timeout, up.wait_for(|up| *up)).await;
        if !matches!(listening, Ok(Ok(_))) {
            listener.abort();
            sweeper.abort();
            notifier.abort();
            writer.abort();
            return Err(StoreError::Unavailable(
                "cannot LISTEN for changes on the database".into(),
            ));
        }
        Ok(PgStore {
            inner,
            tasks: vec![listener, sweeper, notifier, writer],
        })
    }

    /// Stores a new game: `AlreadyExists` if the id is taken. Committed when it returns;
    /// returns the row's token.
    pub async fn create(&self, meta: &GameMeta, game: &Match) -> Result<u64, StoreError> {
        let (row, cached) = Row::of(meta, game, None, 0)?;
        let inserted = self.insert_row(&meta.id, &row).await?;
        if inserted == 0 {
            return Err(StoreError::AlreadyExists {
                id: meta.id.clone(),
            });
        }
        self.inner.encoders.put(&meta.id, cached);
        self.inner.announce(&meta.id, game.version());
        Ok(token_from_db(row.token))
    }

    /// Replaces the game's row if it is still in the state `expected` (its version and,
    /// when given, its token); otherwise [`StoreError::Conflict`] with the version stored
    /// now (which may be the expected one, with another token: the game was written since
    /// by another replica, e.g. deleted and created again). Committed when it returns, in
    /// one statement with the other saves queued meanwhile ([`write_saves`]); returns the
    /// row's new token.
    pub async fn save(
        &self,
        meta: &GameMeta,
        game: &Match,
        expected: Stamp,
    ) -> Result<u64, StoreError> {
        let (done, answer) = oneshot::channel();
        let cached = self.inner.encoders.take(&meta.id);
        let (row, cached) = Row::of(meta, game, cached, expected.version)?;
        let token = token_from_db(row.token);
        let pending = PendingSave {
            id: meta.id.clone(),
            row,
            expected: to_i64(expected.version, "version")?,
            expected_token: expected.token.map(token_to_db),
            done,
            busy: false,
        };
        self.inner
            .saves
            .send(pending)
            .map_err(|_| StoreError::Closed)?;
        // Queued behind the batch in flight, then written in the next: both bounded.
        let updated = match tokio::time::timeout(self.inner.timeout, answer).await {
            Ok(Ok(updated)) => updated?,
            Ok(Err(_)) => return Err(StoreError::Closed),
            Err(_) => return Err(self.inner.timed_out()),
        };
        if updated {
            self.inner.encoders.put(&meta.id, cached);
            return Ok(token);
        }
        let current = self.stored_stamp(&meta.id).await?.map_or(0, |s| s.version);
        Err(StoreError::Conflict {
            id: meta.id.clone(),
            current,
        })
    }

    /// Runs [`INSERT`] with the row's parameters (`$1` id, `$2` version, `$3` record,
    /// `$4` status, `$5` flag deadline, `$6` token); returns how many rows it inserted.
    async fn insert_row(&self, id: &str, row: &Row) -> Result<u64, StoreError> {
        self.inner
            .run(|client| async move {
                let stmt = client.prepare_cached(INSERT).await?;
                client
                    .execute(
                        &stmt,
                        &[
                            &id,
                            &row.version,
                            &row.record,
                            &row.status,
                            &row.flag_at_ms,
                            &row.token,
                        ],
                    )
                    .await
            })
            .await
    }

    /// The stamp (version and token) stored for `id` (`None`: no such game): one
    /// indexed read, so a replica can reuse its decoded game while it is exactly the
    /// stored state.
    pub async fn stored_stamp(&self, id: &str) -> Result<Option<Stamp>, StoreError> {
        let stamp: Option<(i64, i64)> = self
            .inner
            .run(|client| async move {
                let stmt = client.prepare_cached(STAMP).await?;
                let row = client.query_opt(&stmt, &[&id]).await?;
                Ok(row.map(|r| (r.get(0), r.get(1))))
            })
            .await?;
        Ok(stamp.map(|(version, token)| stamp_of(version, token)))
    }

    /// Reads and replays a game; `Ok(None)` if there is no such game.
    pub async fn load(&self, id: &str) -> Result<Option<LoadedGame>, StoreError> {
        let row: Option<(i64, Vec<u8>, i64)> = self
            .inner
            .run(|client| async move {
                let stmt = client.prepare_cached(LOAD).await?;
                let row = client.query_opt(&stmt, &[&id]).await?;
                Ok(row.map(|r| (r.get(0), r.get(1), r.get(2))))
            })
            .await?;
        let Some((version, record, token)) = row else {
            return Ok(None);
        };
        let decoded = decode_row(id, version, &record)?;
        let (mut loaded, cached) = CachedEncoder::split(decoded);
        loaded.token = Some(token_from_db(token));
        self.inner.encoders.put(id, cached);
        Ok(Some(loaded))
    }

    /// One page of a listing, in id byte order (see [`GameStore::list`]): one indexed
    /// query for `limit + 1` rows (the extra row says whether a next page exists).
    pub async fn list(
        &self,
        range: &KeyRange,
        filter: StatusFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<ListPage, StoreError> {
        let limit = limit.clamp(1, 100_000);
        let sql = list_sql(filter, range.to.is_some());
        let after = after.unwrap_or("");
        let from = range.from.as_deref().unwrap_or("");
        let to = range.to.as_deref();
        let rows_wanted = (limit + 1) as i64;
        let rows: Vec<(String, i64, i64)> = self
            .inner
            .run(|client| async move {
                let stmt = client.prepare_cached(sql).await?;
                let rows = match to {
                    Some(to) => {
                        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
                            [&after, &rows_wanted, &from, &to];
                        client.query(&stmt, &params).await?
                    }
                    None => client.query(&stmt, &[&after, &rows_wanted, &from]).await?,
                };
                Ok(rows
                    .iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2)))
                    .collect())
            })
            .await?;
        let more = rows.len() > limit;
        let games: Vec<ListedGame> = rows
            .into_iter()
            .take(limit)
            .map(|(id, version, token)| {
                let stamp = stamp_of(version, token);
                ListedGame {
                    id,
                    version: stamp.version,
                    token: stamp.token,
                }
            })
            .collect();
        Ok(ListPage {
            resume_after: if more {
                games.last().map(|g| g.id.clone())
            } else {
                None
            },
            games,
        })
    }

    /// Deletes a game's row (at `expected_version`, when given); `None` when there is no
    /// such game. Committed when it returns; announced to the other replicas (`<id>
    /// deleted`), which drop the game and end its spectators' streams.
    pub async fn delete(
        &self,
        id: &str,
        expected_version: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        let expected = expected_version.map(|v| to_i64(v, "version")).transpose()?;
        let deleted: Option<i64> = self
            .inner
            .run(|client| async move {
                let stmt = client.prepare_cached(DELETE).await?;
                let row = client.query_opt(&stmt, &[&id, &expected]).await?;
                Ok(row.map(|r| r.get(0)))
            })
            .await?;
        if let Some(version) = deleted {
            let _ = self.inner.committed.send(format!("{id} {DELETED}"));
            return Ok(Some(version.max(0) as u64));
        }
        match self.stored_stamp(id).await? {
            None => Ok(None),
            Some(current) => Err(StoreError::Conflict {
                id: id.to_string(),
                current: current.version,
            }),
        }
    }

    /// Every change is committed when its call returns: nothing to flush.
    pub async fn flush(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Committed changes, from every replica (including this one).
    pub fn changes(&self) -> broadcast::Receiver<StoreChange> {
        self.inner.changes.subscribe()
    }

    /// True while the database answers.
    pub fn health(&self) -> watch::Receiver<bool> {
        self.inner.healthy.subscribe()
    }

    /// Records every flag that has fallen by `now_ms` (at most `limit` games), as any
    /// replica's sweeper does; returns the games changed. Public so that a test can sweep
    /// at a chosen instant.
    pub async fn sweep_flags(&self, now_ms: u64, limit: i64) -> Result<Vec<String>, StoreError> {
        self.inner.sweep_once(Some(now_ms), limit).await
    }
}

#[async_trait::async_trait]
impl GameStore for PgStore {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    async fn create(&self, meta: &GameMeta, game: &Match) -> Result<Option<u64>, StoreError> {
        PgStore::create(self, meta, game).await.map(Some)
    }

    async fn save(
        &self,
        meta: &GameMeta,
        game: &Match,
        expected: Stamp,
    ) -> Result<Option<u64>, StoreError> {
        PgStore::save(self, meta, game, expected).await.map(Some)
    }

    async fn load(&self, id: &str) -> Result<Option<LoadedGame>, StoreError> {
        PgStore::load(self, id).await
    }

    async fn list(
        &self,
        range: &KeyRange,
        filter: StatusFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<ListPage, StoreError> {
        PgStore::list(self, range, filter, after, limit).await
    }

    async fn delete(
        &self,
        id: &str,
        expected_version: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        PgStore::delete(self, id, expected_version).await
    }

    async fn flush(&self) -> Result<(), StoreError> {
        PgStore::flush(self).await
    }

    fn shared(&self) -> bool {
        true
    }

    async fn stored_stamp(&self, id: &str) -> Result<Option<Stamp>, StoreError> {
        PgStore::stored_stamp(self, id).await
    }

    fn generation(&self) -> u64 {
        self.inner
            .generation
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    fn changes(&self) -> Option<broadcast::Receiver<StoreChange>> {
        Some(PgStore::changes(self))
    }

    fn health(&self) -> Option<watch::Receiver<bool>> {
        Some(PgStore::health(self))
    }

    fn clock(&self) -> Option<Arc<DbClock>> {
        Some(self.inner.clock.clone())
    }

    fn tally(&self) -> Option<Arc<GameTally>> {
        Some(self.inner.tally.clone())
    }
}
