//! [`PgStore`]: games in a PostgreSQL database (or an engine that speaks its protocol),
//! shared by any number of stateless replicas.
//!
//! Why it is shaped this way:
//! - One row a game (`chess_games`): the id, the version (`Match::version`), the record
//!   bytes of [`super::codec`] (the same format as the embedded store, so ≤ 1 B/ply holds
//!   here too), the status (for listing), the flag deadline of a running timed game, and
//!   timestamps.
//! - The database, not a replica, orders changes to one game: `save` is a compare-and-set
//!   on the version and the write token (`UPDATE … WHERE id = v.id AND version =
//!   v.expected AND token = v.expected_token`); the loser gets [`StoreError::Conflict`]
//!   with the current version and the registry decides again on the fresh state. Every
//!   write draws a fresh random token (`token` column): a version number alone comes back
//!   with other moves after a delete and re-create by another replica, or after a
//!   failover to a standby that lagged, and a replica holding the old state must neither
//!   answer from it nor win the compare-and-set with it ([`super::Stamp`]).
//! - Group commit: the saves that arrive while one is being written go together in the
//!   next statement (one `UPDATE … FROM unnest(…)`, each row its own compare-and-set), so
//!   under load many Plays share one transaction and one WAL flush (about 11 Plays a
//!   flush at 64 callers, against 2.5 with a statement a Play). Measured in one run here,
//!   it took one replica from 11,300-11,800 to 14,600-17,000 durable Plays/s and cut
//!   PostgreSQL's CPU per Play from 62 to 22-26 µs (BENCHMARKS.md).
//! - Acknowledged means committed: every statement runs in its own transaction (or an
//!   explicit one), and the connection keeps the server's `synchronous_commit` (a warning
//!   at start when the server has it, or `fsync`, off).
//! - Every committed change is announced with `NOTIFY chess_games`, payload one line
//!   `<id> <version>` a change, so other replicas learn of it (spectators) only once it is
//!   durable. Not inside the change's own transaction: PostgreSQL holds one global lock
//!   from a notifying transaction's pre-commit until its commit is flushed, which turns
//!   group commit off (measured here with pgbench, 64 clients, fsync on: 297 commits/s
//!   with the NOTIFY inside, 5,445 without). Instead one notifier task a replica sends the
//!   changes committed meanwhile in one `pg_notify` after the commits, batching by itself
//!   under load. A replica killed between a commit and its notify leaves that change
//!   unannounced: the registry also re-checks watched games every second, which bounds
//!   the delay (and every read checks the stored stamp anyway). A dedicated listening
//!   connection turns notifications into [`StoreChange`]s; when it has to reconnect,
//!   notifications may have been missed, so it forgets its cached encodings and sends
//!   [`StoreChange::Resync`] (every replica's registry then drops every cached game)
//!   before it reports itself healthy again.
//! - The listening connection doubles as the health probe: while it is down (or a ping on
//!   it goes unanswered) the store reports itself unavailable, and it reconnects by
//!   itself.
//! - Clocks outlive replicas: every replica sweeps the flag-deadline column, records the
//!   flag fall of each due game and writes it like any save (the batch's compare-and-set),
//!   so a flag falls even when the replica that armed it is gone. The sweep reads without
//!   locking and never holds a transaction open between statements: a replica paused or
//!   cut off mid-sweep blocks no one.
//! - No session of a replica holds a lock for longer than a call may take: the database's
//!   own `statement_timeout`, `lock_timeout` and `idle_in_transaction_session_timeout` are
//!   set on each (`session`). A save batch that waits longer than `lock_timeout` for a
//!   row is written again skipping held rows (`SKIP LOCKED`), and those saves are tried
//!   again in later batches, so one held row never fails the unrelated saves beside it.
//! - After a fault, connections pooled before it are probed before reuse, and a healed
//!   change feed renews the pool (`session`): a connection left silent by a cut is not
//!   handed out again once health says SERVING.
//! - Nothing waits longer than the configured timeout: pool waits, connects and every
//!   statement are bounded, and a database that is down or unreachable is
//!   [`StoreError::Unavailable`] (the service answers UNAVAILABLE), never a hang.
//! - Serialization failures (SQLSTATE 40001, and deadlocks, 40P01) are retried: the normal
//!   case on CockroachDB.

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_postgres::error::SqlState;
use tokio_postgres::{AsyncMessage, NoTls};

use crate::lifecycle::{Match, Status};

mod session;

use session::Faults;
pub use session::SessionLimits;

use super::clock::{self, DbClock};
use super::codec;
use super::encoder_cache::{self, CachedEncoder, EncoderCache};
use super::{
    GameMeta, GameStore, GameTally, KeyRange, ListPage, ListedGame, LoadedGame, Stamp,
    StatusFilter, StoreChange, StoreError, StoreFuture,
};

/// The channel every committed change is announced on (payload `<id> <version>`).
pub const CHANNEL: &str = "chess_games";

/// The advisory lock key that serializes schema migrations between replicas starting at
/// once (an arbitrary constant: "chess" in ASCII).
const MIGRATION_LOCK: i64 = 0x63_68_65_73_73;

/// The schema, one step per version, applied in order under [`MIGRATION_LOCK`]. A step,
/// once released, never changes: add a new one.
const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        "CREATE TABLE chess_games (
         id          text PRIMARY KEY,
         version     bigint NOT NULL CHECK (version >= 0),
         record      bytea NOT NULL,
         status      text NOT NULL,
         flag_at_ms  bigint,
         created_at  timestamptz NOT NULL DEFAULT now(),
         updated_at  timestamptz NOT NULL DEFAULT now()
     );
     CREATE INDEX chess_games_flag_at ON chess_games (flag_at_ms) WHERE flag_at_ms IS NOT NULL;
     CREATE INDEX chess_games_status ON chess_games (status, updated_at);",
    ),
    // A move in an untimed game then changes no indexed column (the status only at the
    // end; a timed game's move moves its flag deadline), so its update can be HOT: no new
    // index entries, about a third less WAL per Play (benches/postgres.sh, BENCHMARKS.md).
    // Room on each page for the new row version; listing by status walks ids in order.
    (
        2,
        "DROP INDEX chess_games_status;
     CREATE INDEX chess_games_status ON chess_games (status, id);
     ALTER TABLE chess_games SET (fillfactor = 50)",
    ),
    // Listing walks ids in byte order (the embedded store's order, whatever the
    // database's collation): indexes in the "C" collation, for all games and by status.
    // Neither holds a column a move changes, so untimed Plays stay HOT updates.
    (
        3,
        "DROP INDEX chess_games_status;
     CREATE INDEX chess_games_status ON chess_games (status, id COLLATE \"C\");
     CREATE INDEX chess_games_id_bytes ON chess_games (id COLLATE \"C\")",
    ),
    // The write token (see [`super::Stamp`]): 64 random bits a write, compared with the
    // version by every compare-and-set and freshness check. The volatile default gives
    // each existing row its own random token (PostgreSQL rewrites the table once), and
    // a row inserted by a replica of an older build one too. Not indexed: a move still
    // changes no indexed column, so untimed Plays stay HOT updates.
    (
        4,
        "ALTER TABLE chess_games ADD COLUMN token bigint NOT NULL
         DEFAULT ('x' || md5(random()::text || clock_timestamp()::text))::bit(64)::bigint",
    ),
];

/// How many times a statement that hit a serialization failure is tried in all.
const SERIALIZATION_TRIES: u32 = 8;

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

/// A save waiting to be written in the next batch: the row, the version and token it must
/// replace (no token: the version alone, for a caller that knows none), and where to say
/// whether it did.
struct PendingSave {
    id: String,
    row: Row,
    expected: i64,
    expected_token: Option<i64>,
    done: oneshot::Sender<Result<bool, StoreError>>,
    /// Its row was found held by another session: its batches skip held rows from the
    /// start.
    busy: bool,
}

impl Drop for PgStore {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        self.inner.pool.close();
    }
}

/// The status column's value: a stable name for listing by status.
pub fn status_name(status: Status) -> &'static str {
    match status {
        Status::InProgress => "in_progress",
        Status::Checkmate { .. } => "checkmate",
        Status::Stalemate => "stalemate",
        Status::InsufficientMaterial => "insufficient_material",
        Status::FivefoldRepetition => "fivefold_repetition",
        Status::SeventyFiveMoves => "seventy_five_moves",
        Status::Resignation { .. } => "resignation",
        Status::DrawAgreement => "draw_agreement",
        Status::DrawClaimedThreefold => "draw_claimed_threefold",
        Status::DrawClaimedFiftyMoves => "draw_claimed_fifty_moves",
        Status::OutOfTime { .. } => "out_of_time",
        Status::DrawTimeoutInsufficientMaterial => "draw_timeout_insufficient_material",
        Status::DrawDeadPosition => "draw_dead_position",
        Status::DrawTimeoutUnwinnable => "draw_timeout_unwinnable",
    }
}

/// What a database error means to a caller: a serialization failure to retry, the
/// database being away (unavailable), or a real failure.
fn classify(e: &tokio_postgres::Error) -> ErrorKind {
    match e.code() {
        Some(code)
            if *code == SqlState::T_R_SERIALIZATION_FAILURE
                || *code == SqlState::T_R_DEADLOCK_DETECTED =>
        {
            ErrorKind::Retry
        }
        // A row held by another session past `lock_timeout`, or this session ended by
        // `idle_in_transaction_session_timeout`: the game is busy, try again.
        Some(code)
            if *code == SqlState::LOCK_NOT_AVAILABLE
                || *code == SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT =>
        {
            ErrorKind::Unavailable
        }
        // 08: connection exception; 57: operator intervention (shutdown, crash recovery,
        // statement_timeout, cannot connect now); 53: insufficient resources (too many
        // connections).
        Some(code) => match &code.code()[..2] {
            "08" | "57" | "53" => ErrorKind::Unavailable,
            _ => ErrorKind::Failed,
        },
        // No SQLSTATE: the connection broke, or could not be made.
        None => ErrorKind::Unavailable,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ErrorKind {
    Retry,
    Unavailable,
    Failed,
}

fn db_error(e: tokio_postgres::Error) -> StoreError {
    match classify(&e) {
        ErrorKind::Unavailable => StoreError::Unavailable(format!("database: {e}")),
        _ => StoreError::Io(format!("database: {e}")),
    }
}

fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    use deadpool_postgres::PoolError;
    match e {
        PoolError::Backend(e) => db_error(e),
        PoolError::Timeout(what) => StoreError::Unavailable(format!(
            "no database connection within the timeout ({what:?}); is the database up?"
        )),
        PoolError::Closed => StoreError::Closed,
        other => StoreError::Unavailable(format!("database connection pool: {other}")),
    }
}

fn to_i64(v: u64, what: &str) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::Io(format!("{what} {v} does not fit the database")))
}

/// A token as the `bigint` column holds it: the same 64 bits, read as signed.
fn token_to_db(token: u64) -> i64 {
    i64::from_ne_bytes(token.to_ne_bytes())
}

/// A token as the column holds it, back as the store's `u64`.
fn token_from_db(token: i64) -> u64 {
    u64::from_ne_bytes(token.to_ne_bytes())
}

/// The stamp of a row's `version` and `token` columns.
fn stamp_of(version: i64, token: i64) -> Stamp {
    Stamp {
        version: version.max(0) as u64,
        token: Some(token_from_db(token)),
    }
}

/// The columns a game's row gets from its current state.
struct Row {
    version: i64,
    /// The fresh token this write draws.
    token: i64,
    record: Vec<u8>,
    status: &'static str,
    flag_at_ms: Option<i64>,
}

impl Row {
    /// The row of `game`, whose changes since version `since` are being written (the
    /// record is refused past the history limit unless they end the game: see
    /// [`codec::check_history_room`]), encoded from `cached` (the encoding of an earlier
    /// history of the game, if this replica has one); returns the encoding to cache.
    fn of(
        meta: &GameMeta,
        game: &Match,
        cached: Option<CachedEncoder>,
        since: u64,
    ) -> Result<(Row, CachedEncoder), StoreError> {
        let (record, cached) = encoder_cache::encode(meta, game, cached, since)?;
        let row = Row {
            version: to_i64(game.version(), "version")?,
            token: token_to_db(Stamp::fresh_token()?),
            record,
            status: status_name(game.status()),
            flag_at_ms: game
                .flag_time()
                .map(|t| to_i64(t, "flag time"))
                .transpose()?,
        };
        Ok((row, cached))
    }
}

const INSERT: &str = "INSERT INTO chess_games (id, version, record, status, flag_at_ms, token)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (id) DO NOTHING";

/// Many saves in one statement: `$1`.. `$8` are arrays of the ids, new versions, records,
/// statuses, flag deadlines, expected versions, new tokens and expected tokens (NULL: any
/// token); returns the ids whose row it replaced. Each row is its own compare-and-set on
/// the version and the token. A row held by another session is waited for, at most
/// `lock_timeout` (then the whole statement fails with SQLSTATE 55P03 and the batch is
/// written again with [`UPDATE_MANY_SKIPPING`]).
const UPDATE_MANY: &str = "UPDATE chess_games AS g
    SET version = v.version, record = v.record, status = v.status,
        flag_at_ms = v.flag_at_ms, token = v.token, updated_at = now()
    FROM unnest($1::text[], $2::bigint[], $3::bytea[], $4::text[], $5::bigint[], $6::bigint[],
                $7::bigint[], $8::bigint[])
        AS v(id, version, record, status, flag_at_ms, expected, token, expected_token)
    WHERE g.id = v.id AND g.version = v.expected
        AND (v.expected_token IS NULL OR g.token = v.expected_token)
    RETURNING g.id, true";

/// [`UPDATE_MANY`] for a batch that met a held row: rows locked by another session are
/// skipped, not waited for (`SKIP LOCKED`), so one held row never holds up the unrelated
/// saves beside it. Returns `(id, true)` for each row it replaced and `(id, false)` for
/// each row it skipped as locked; an id in neither did not match (another write won, or
/// the game is gone). Not the everyday statement: it locks each row twice (a WAL record
/// more a row).
const UPDATE_MANY_SKIPPING: &str = "WITH v AS MATERIALIZED (
        SELECT * FROM unnest($1::text[], $2::bigint[], $3::bytea[], $4::text[],
                             $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[])
            AS v(id, version, record, status, flag_at_ms, expected, token, expected_token)
    ), free AS MATERIALIZED (
        SELECT g.id FROM chess_games AS g WHERE g.id = ANY($1::text[])
        ORDER BY g.id FOR UPDATE SKIP LOCKED
    ), written AS (
        UPDATE chess_games AS g
        SET version = v.version, record = v.record, status = v.status,
            flag_at_ms = v.flag_at_ms, token = v.token, updated_at = now()
        FROM v, free
        WHERE g.id = v.id AND free.id = v.id AND g.version = v.expected
            AND (v.expected_token IS NULL OR g.token = v.expected_token)
        RETURNING g.id
    )
    SELECT id, true FROM written
    UNION ALL
    SELECT v.id, false FROM v
    WHERE NOT EXISTS (SELECT 1 FROM free WHERE free.id = v.id)
        AND EXISTS (SELECT 1 FROM chess_games AS g WHERE g.id = v.id)";

/// The rows whose flag has fallen by `$1` (Unix ms; NULL: the database's clock now, the
/// one clock of every replica), at most `$2`, earliest first, each with that time: read
/// without locking (the sweep writes each with the batch's compare-and-set).
const DUE: &str = "SELECT id, version, record, token, now.ms FROM chess_games,
        (SELECT coalesce($1::bigint,
                         (extract(epoch FROM statement_timestamp()) * 1000)::bigint) AS ms) AS now
    WHERE flag_at_ms <= now.ms ORDER BY flag_at_ms LIMIT $2";

/// The database's clock now, in Unix µs (the listener's ping: see [`DbClock`]).
const CLOCK: &str = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

/// The sweep's repair of a flag column that is ahead of its record: `$1` the id, `$2` the
/// deadline, `$3` and `$4` the version and token read.
const FIX_FLAG: &str = "UPDATE chess_games SET flag_at_ms = $2
    WHERE id = $1 AND version = $3 AND token = $4";

/// How long a save whose row was locked by another session waits before it is tried
/// again (until its caller gives up).
const BUSY_RETRY: Duration = Duration::from_millis(10);

/// How many games' encodings a replica keeps (as the embedded store's default).
const ENCODER_CACHE_GAMES: usize = 10_000;

/// The most saves one batch statement carries.
const BATCH_MAX: usize = 256;

const NOTIFY: &str = "SELECT pg_notify('chess_games', $1)";

/// Round trips to the database's clock when the listener connects (the least uncertain
/// counts).
const CLOCK_READINGS_AT_CONNECT: usize = 3;

/// PostgreSQL's limit on a notification payload is 8000 bytes: stay below it.
const PAYLOAD_MAX: usize = 7900;

const STAMP: &str = "SELECT version, token FROM chess_games WHERE id = $1";

const LOAD: &str = "SELECT version, record, token FROM chess_games WHERE id = $1";

/// A listing's query: `$1` the id to list after (`''` for the first page), `$2` how many
/// rows, `$3` the start of the key range (`''` for none) and, when the range ends, `$4`
/// its end. Every bound is on the "C"-collated id, so the index scan starts at the later
/// start and stops at the end (one tenant's listing reads no other tenant's rows).
macro_rules! list_sql {
    ($status:literal, $end:literal) => {
        concat!(
            "SELECT id, version, token FROM chess_games WHERE ",
            $status,
            "id COLLATE \"C\" > $1 AND id COLLATE \"C\" >= $3",
            $end,
            " ORDER BY id COLLATE \"C\" LIMIT $2"
        )
    };
}

/// The listing's query for `filter`, with an end (`$4`) or without.
fn list_sql(filter: StatusFilter, ends: bool) -> &'static str {
    match (filter, ends) {
        (StatusFilter::All, false) => list_sql!("", ""),
        (StatusFilter::All, true) => list_sql!("", " AND id COLLATE \"C\" < $4"),
        (StatusFilter::InProgress, false) => list_sql!("status = 'in_progress' AND ", ""),
        (StatusFilter::InProgress, true) => {
            list_sql!("status = 'in_progress' AND ", " AND id COLLATE \"C\" < $4")
        }
        (StatusFilter::Ended, false) => list_sql!("status <> 'in_progress' AND ", ""),
        (StatusFilter::Ended, true) => {
            list_sql!("status <> 'in_progress' AND ", " AND id COLLATE \"C\" < $4")
        }
    }
}

/// `$1` the id, `$2` the expected version or NULL.
const DELETE: &str = "DELETE FROM chess_games
    WHERE id = $1 AND ($2::bigint IS NULL OR version = $2) RETURNING version";

/// The payload word announcing a deletion in place of a version (`<id> deleted`).
const DELETED: &str = "deleted";

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

impl GameStore for PgStore {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn create<'a>(&'a self, meta: &'a GameMeta, game: &'a Match) -> StoreFuture<'a, Option<u64>> {
        Box::pin(async move { PgStore::create(self, meta, game).await.map(Some) })
    }

    fn save<'a>(
        &'a self,
        meta: &'a GameMeta,
        game: &'a Match,
        expected: Stamp,
    ) -> StoreFuture<'a, Option<u64>> {
        Box::pin(async move { PgStore::save(self, meta, game, expected).await.map(Some) })
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<LoadedGame>> {
        Box::pin(PgStore::load(self, id))
    }

    fn list<'a>(
        &'a self,
        range: &'a KeyRange,
        filter: StatusFilter,
        after: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, ListPage> {
        Box::pin(PgStore::list(self, range, filter, after, limit))
    }

    fn delete<'a>(
        &'a self,
        id: &'a str,
        expected_version: Option<u64>,
    ) -> StoreFuture<'a, Option<u64>> {
        Box::pin(PgStore::delete(self, id, expected_version))
    }

    fn flush<'a>(&'a self) -> StoreFuture<'a, ()> {
        Box::pin(PgStore::flush(self))
    }

    fn shared(&self) -> bool {
        true
    }

    fn stored_stamp<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Stamp>> {
        Box::pin(PgStore::stored_stamp(self, id))
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

/// Reads a row back into a game, checking that the record says the version the row does.
fn decode_row(id: &str, version: i64, record: &[u8]) -> Result<codec::Decoded, StoreError> {
    let decoded = codec::decode(id, record).map_err(|e| StoreError::DataLoss {
        id: id.to_string(),
        reason: e.to_string(),
    })?;
    let loaded = &decoded.loaded;
    if i64::try_from(loaded.game.version()).ok() != Some(version) {
        return Err(StoreError::DataLoss {
            id: id.to_string(),
            reason: format!(
                "the row says version {version} but its record holds version {}",
                loaded.game.version()
            ),
        });
    }
    Ok(decoded)
}

impl Inner {
    /// Queues a committed change for the notifier.
    fn announce(&self, id: &str, version: u64) {
        // Fails only once the notifier is gone (the store is closing): nothing to tell.
        let _ = self.committed.send(format!("{id} {version}"));
    }

    /// Reports the store available while the database's clock is known closely enough
    /// (called with the change feed up), and logs when that changes.
    fn report_clock(&self) {
        let uncertainty = self.clock.uncertainty();
        let known = uncertainty.is_some_and(|u| u <= self.max_clock_uncertainty);
        let mut was = known;
        self.healthy.send_if_modified(|up| {
            was = std::mem::replace(up, known);
            was != known
        });
        if !known && was {
            tracing::warn!(
                uncertainty_ms = uncertainty.map(|u| u.as_millis()),
                max_ms = self.max_clock_uncertainty.as_millis(),
                "the database's clock is not known closely enough to charge moves by; unavailable until it is"
            );
        } else if known && !was {
            tracing::debug!("the database's clock is known closely enough");
        }
    }

    /// Runs `op` on a pooled connection, bounded by the timeout, retrying serialization
    /// failures; maps errors to store errors.
    async fn run<'a, T, F, Fut>(&'a self, op: F) -> Result<T, StoreError>
    where
        F: Fn(deadpool_postgres::Client) -> Fut + 'a,
        Fut: Future<Output = Result<T, tokio_postgres::Error>> + 'a,
    {
        let attempt = async {
            let mut tries = 0;
            loop {
                tries += 1;
                let client = self.pool.get().await.map_err(pool_error)?;
                match op(client).await {
                    Ok(v) => return Ok(v),
                    Err(e) if classify(&e) == ErrorKind::Retry && tries < SERIALIZATION_TRIES => {
                        tracing::debug!(error = %e, tries, "serialization failure; retrying");
                        tokio::time::sleep(Duration::from_millis(1 << tries.min(6))).await;
                    }
                    Err(e) => return Err(db_error(e)),
                }
            }
        };
        let result = match tokio::time::timeout(self.timeout, attempt).await {
            Ok(result) => result,
            Err(_) => Err(self.timed_out()),
        };
        if matches!(result, Err(StoreError::Unavailable(_))) {
            self.faults.record();
        }
        result
    }

    /// The error of a step that took longer than the timeout.
    fn timed_out(&self) -> StoreError {
        StoreError::Unavailable(format!(
            "the database did not answer within {} ms",
            self.timeout.as_millis()
        ))
    }

    /// Writes a batch of saves in one statement (one transaction, one commit), each a
    /// compare-and-set on its game's version and token; tells each save whether it
    /// replaced its row, and announces those that did. Returns the saves whose row another
    /// session held locked, to be tried again.
    async fn write_batch(&self, mut batch: Vec<PendingSave>) -> Vec<PendingSave> {
        // One lock order for every batch (`free` locks in id order too).
        batch.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        let ids: Vec<&str> = batch.iter().map(|s| s.id.as_str()).collect();
        let versions: Vec<i64> = batch.iter().map(|s| s.row.version).collect();
        let records: Vec<&[u8]> = batch.iter().map(|s| s.row.record.as_slice()).collect();
        let statuses: Vec<&str> = batch.iter().map(|s| s.row.status).collect();
        let flags: Vec<Option<i64>> = batch.iter().map(|s| s.row.flag_at_ms).collect();
        let expected: Vec<i64> = batch.iter().map(|s| s.expected).collect();
        let tokens: Vec<i64> = batch.iter().map(|s| s.row.token).collect();
        let expected_tokens: Vec<Option<i64>> = batch.iter().map(|s| s.expected_token).collect();
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
            &ids,
            &versions,
            &records,
            &statuses,
            &flags,
            &expected,
            &tokens,
            &expected_tokens,
        ];
        // The everyday statement, unless a save in the batch already met a held row.
        let skipping = batch.iter().any(|s| s.busy);
        let outcome = self
            .run(|client| async move {
                let mut rows = None;
                if !skipping {
                    let stmt = client.prepare_cached(UPDATE_MANY).await?;
                    match client.query(&stmt, &params).await {
                        Ok(written) => rows = Some(written),
                        // A row held past lock_timeout: again, skipping held rows.
                        Err(e) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => {}
                        Err(e) => return Err(e),
                    }
                }
                let rows = match rows {
                    Some(rows) => rows,
                    None => {
                        let stmt = client.prepare_cached(UPDATE_MANY_SKIPPING).await?;
                        client.query(&stmt, &params).await?
                    }
                };
                let (mut written, mut busy) = (HashSet::new(), HashSet::new());
                for row in rows {
                    let id: String = row.get(0);
                    if row.get::<_, bool>(1) {
                        written.insert(id);
                    } else {
                        busy.insert(id);
                    }
                }
                Ok((written, busy))
            })
            .await;
        let mut again = Vec::new();
        for save in batch {
            let answer = match &outcome {
                Ok((_, busy)) if busy.contains(&save.id) => {
                    again.push(PendingSave { busy: true, ..save });
                    continue;
                }
                Ok((written, _)) => {
                    let updated = written.contains(&save.id);
                    if updated {
                        self.announce(&save.id, save.row.version.max(0) as u64);
                    }
                    Ok(updated)
                }
                Err(e) => Err(e.clone()),
            };
            // The caller may have given up waiting: nothing to tell.
            let _ = save.done.send(answer);
        }
        again
    }

    /// Creates or migrates the schema. Replicas starting at once queue on an advisory
    /// lock, so each step runs exactly once.
    async fn migrate(&self) -> Result<(), StoreError> {
        let client = self.pool.get().await.map_err(pool_error)?;
        let step = async {
            // A step may rewrite the table, and the lock may be held by another replica
            // migrating: this session alone waits without the database's own limits
            // (the deadline below still bounds it), and leaves the pool afterwards.
            client
                .batch_execute("SET statement_timeout = 0; SET lock_timeout = 0")
                .await?;
            client
                .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
                .await?;
            let result = async {
                client
                    .batch_execute(
                        "CREATE TABLE IF NOT EXISTS chess_schema_migrations (
                             version    integer PRIMARY KEY,
                             applied_at timestamptz NOT NULL DEFAULT now()
                         )",
                    )
                    .await?;
                let row = client
                    .query_one(
                        "SELECT coalesce(max(version), 0) FROM chess_schema_migrations",
                        &[],
                    )
                    .await?;
                let current: i32 = row.get(0);
                for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
                    client
                        .batch_execute(&format!(
                            "BEGIN; {sql}; INSERT INTO chess_schema_migrations (version) VALUES ({version}); COMMIT;"
                        ))
                        .await?;
                    tracing::info!(version, "database schema migrated");
                }
                Ok::<i32, tokio_postgres::Error>(current)
            }
            .await;
            // Release even after a failure (a broken connection releases it anyway).
            let _ = client
                .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
                .await;
            result
        };
        // Another replica may hold the lock while it migrates: allow a few timeouts.
        let outcome = tokio::time::timeout(self.timeout * 5, step).await;
        // Closed, not pooled: its limits are off.
        drop(deadpool_postgres::Object::take(client));
        let current = outcome
            .map_err(|_| {
                StoreError::Unavailable("the schema migration did not finish in time".into())
            })?
            .map_err(db_error)?;
        let newest = MIGRATIONS.last().map_or(0, |(v, _)| *v);
        if current > newest {
            return Err(StoreError::Io(format!(
                "the database schema is at version {current}, newer than this build knows ({newest}); upgrade this replica"
            )));
        }
        Ok(())
    }

    /// Logs a warning when the database could lose acknowledged changes.
    async fn warn_if_not_durable(&self) -> Result<(), StoreError> {
        let settings: Vec<(String, String)> = self
            .run(|client| async move {
                let rows = client
                    .query(
                        "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit')",
                        &[],
                    )
                    .await?;
                Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
            })
            .await?;
        for (name, setting) in settings {
            if setting == "off" {
                tracing::warn!(
                    setting = %name,
                    "the database has {name} off: a database crash or power loss can lose changes this service acknowledged"
                );
            }
        }
        Ok(())
    }

    /// One sweep: reads the due rows (without locking them), records each flag fall and
    /// writes it like any save, through the batch writer's compare-and-set, so a sweep
    /// holds no lock between statements and a replica paused or cut off mid-sweep blocks
    /// no one. Replicas sweeping the same game race on its stamp: one write wins, the
    /// others match nothing. Returns the games this sweep changed.
    async fn sweep_once(&self, now_ms: Option<u64>, limit: i64) -> Result<Vec<String>, StoreError> {
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
            let fell = match loaded.game.settle(now_ms) {
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

/// Reads the database's clock once into `db_clock`; the error says why it could not.
async fn read_clock(
    client: &tokio_postgres::Client,
    db_clock: &DbClock,
    timeout: Duration,
) -> Result<(), String> {
    let sent = std::time::Instant::now();
    let sent_unix_us = clock::local_unix_us();
    let answer = match tokio::time::timeout(timeout, client.simple_query(CLOCK)).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => return Err(format!("ping failed: {e}")),
        Err(_) => return Err(format!("ping unanswered for {} ms", timeout.as_millis())),
    };
    let rtt = sent.elapsed();
    let db_unix_us = answer
        .iter()
        .find_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0)?.parse::<i64>().ok(),
            _ => None,
        })
        .ok_or_else(|| "the database's clock could not be read".to_string())?;
    db_clock.record(sent, sent_unix_us, rtt, db_unix_us);
    Ok(())
}

/// The flag sweeper: every `interval`, records the flags that have fallen. The first
/// sweep is one interval after the start (not at once), so a store opened with a long
/// interval never sweeps behind its owner's back.
async fn sweep(inner: std::sync::Weak<Inner>, interval: Duration) {
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

/// The save writer: writes the saves queued meanwhile (up to [`BATCH_MAX`], one per game)
/// as one batch, one batch at a time. Under load many saves share a statement and a
/// commit (and so a WAL flush); alone, a save is written at once, by itself. One batch in
/// flight beat two and four (BENCHMARKS.md, PostgreSQL): the saves that queue behind it
/// make the next batch bigger, and PostgreSQL's CPU per Play falls with the batch size.
/// A save whose row another session holds locked goes into a later batch, after
/// [`BUSY_RETRY`], until it is written or its caller gives up.
async fn write_saves(
    inner: std::sync::Weak<Inner>,
    mut queue: mpsc::UnboundedReceiver<PendingSave>,
) {
    // Saves that go before the queue's: a second save of a game already in a batch (a
    // batch updates a row once), and busy saves whose retry time has come.
    let mut held: VecDeque<PendingSave> = VecDeque::new();
    let mut busy: Vec<PendingSave> = Vec::new();
    let mut retry_at = tokio::time::Instant::now();
    loop {
        // A caller that gave up waiting (it answered UNAVAILABLE) is not written late.
        busy.retain(|save| !save.done.is_closed());
        if held.is_empty() {
            let next = if busy.is_empty() {
                queue.recv().await
            } else {
                tokio::select! {
                    save = queue.recv() => save,
                    () = tokio::time::sleep_until(retry_at) => {
                        held.extend(busy.drain(..));
                        continue;
                    }
                }
            };
            match next {
                Some(save) => held.push_back(save),
                None => return,
            }
        }
        if !busy.is_empty() && tokio::time::Instant::now() >= retry_at {
            held.extend(busy.drain(..));
        }
        let mut ids = HashSet::new();
        let mut batch = Vec::new();
        let mut later = VecDeque::new();
        let mut take = |save: PendingSave, batch: &mut Vec<PendingSave>| {
            if ids.insert(save.id.clone()) {
                batch.push(save);
            } else {
                later.push_back(save);
            }
        };
        while let Some(save) = held.pop_front() {
            take(save, &mut batch);
        }
        while batch.len() < BATCH_MAX {
            match queue.try_recv() {
                Ok(save) => take(save, &mut batch),
                Err(_) => break,
            }
        }
        held = later;
        batch.retain(|save| !save.done.is_closed());
        if batch.is_empty() {
            continue;
        }
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let again = inner.write_batch(batch).await;
        if !again.is_empty() {
            if busy.is_empty() {
                retry_at = tokio::time::Instant::now() + BUSY_RETRY;
            }
            busy.extend(again);
        }
    }
}

/// The notifier: announces committed changes, as many as are queued in one notification
/// (so under load one `pg_notify` covers many commits).
async fn notify(inner: std::sync::Weak<Inner>, mut queue: mpsc::UnboundedReceiver<String>) {
    while let Some(first) = queue.recv().await {
        let mut payload = first;
        while payload.len() < PAYLOAD_MAX - 80 {
            match queue.try_recv() {
                Ok(line) => {
                    payload.push('\n');
                    payload.push_str(&line);
                }
                Err(_) => break,
            }
        }
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let payload = &payload;
        let sent = inner
            .run(|client| async move {
                let stmt = client.prepare_cached(NOTIFY).await?;
                client.execute(&stmt, &[payload]).await
            })
            .await;
        if let Err(e) = sent {
            // Spectators elsewhere learn of these changes at their next re-check.
            tracing::warn!(error = %e, "cannot announce committed changes; other replicas see them at their next re-check");
        }
    }
}

/// The listener: a dedicated connection that LISTENs for changes and pings the database;
/// reports health and reconnects by itself.
async fn listen(inner: std::sync::Weak<Inner>, pg: tokio_postgres::Config, timeout: Duration) {
    let mut was_up = true;
    loop {
        let outcome = listen_once(&inner, &pg, timeout).await;
        let Some(strong) = inner.upgrade() else {
            return;
        };
        strong.healthy.send_replace(false);
        strong.faults.record();
        if was_up {
            tracing::error!(error = %outcome, "the database is unreachable; calls fail as unavailable until it returns");
        }
        was_up = false;
        drop(strong);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// One listening session: connect, LISTEN, report healthy, forward notifications and
/// ping until something fails. Returns why it ended.
async fn listen_once(
    inner: &std::sync::Weak<Inner>,
    pg: &tokio_postgres::Config,
    timeout: Duration,
) -> String {
    let connected = tokio::time::timeout(timeout, pg.connect(NoTls)).await;
    let (client, mut connection) = match connected {
        Ok(Ok(pair)) => pair,
        Ok(Err(e)) => return format!("cannot connect: {e}"),
        Err(_) => return format!("cannot connect within {} ms", timeout.as_millis()),
    };
    let (tx, mut notes) = mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if tx.send(n.payload().to_string()).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            }
        }
    });
    let _abort = AbortOnDrop(driver);
    match tokio::time::timeout(timeout, client.batch_execute(&format!("LISTEN {CHANNEL}"))).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return format!("cannot LISTEN: {e}"),
        Err(_) => return "LISTEN did not answer in time".into(),
    }
    // Maybe another server (a failover): its clock is read afresh, the best of a few
    // round trips.
    let Some(db_clock) = inner.upgrade().map(|strong| strong.clock.clone()) else {
        return "the store is closed".into();
    };
    db_clock.forget();
    for _ in 0..CLOCK_READINGS_AT_CONNECT {
        if let Err(e) = read_clock(&client, &db_clock, timeout).await {
            return e;
        }
    }
    {
        let Some(strong) = inner.upgrade() else {
            return "the store is closed".into();
        };
        // Changes may have been missed while not listening: nothing remembered of a game
        // is trusted any more. Told before health says SERVING again (the registry drops
        // every cached game on it), and the encodings are forgotten here.
        strong.encoders.clear();
        let before = strong
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if before > 0 {
            // The pooled connections lived through the outage, and some may still be in
            // TCP's retransmission back-off: the idle ones are closed (calls make fresh
            // ones); those in use are probed when they come back (`session`).
            let closed = strong.pool.retain(|_, _| false).removed.len();
            tracing::info!(closed, "the database is back: pooled connections renewed");
        }
        let _ = strong.changes.send(StoreChange::Resync);
        strong.report_clock();
        tracing::info!(
            clock_offset_seconds = strong.clock.offset_seconds(),
            "listening for game changes on the database"
        );
    }
    let mut ping = tokio::time::interval(Duration::from_millis(1000));
    ping.tick().await;
    loop {
        tokio::select! {
            note = notes.recv() => {
                let Some(payload) = note else {
                    return "the listening connection closed".into();
                };
                let Some(strong) = inner.upgrade() else {
                    return "the store is closed".into();
                };
                for change in payload.lines().filter_map(parse_payload) {
                    let _ = strong.changes.send(change);
                }
            }
            _ = ping.tick() => {
                // The ping reads the database's clock: one round trip, two uses.
                if let Err(e) = read_clock(&client, &db_clock, timeout).await {
                    return e;
                }
                let Some(strong) = inner.upgrade() else {
                    return "the store is closed".into();
                };
                strong.report_clock();
            }
        }
    }
}

struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One line of a payload, `<id> <version>` or `<id> deleted`: the id may not contain a
/// space (ids are checked by the service), so split at the last one anyway.
fn parse_payload(payload: &str) -> Option<StoreChange> {
    let (id, version) = payload.rsplit_once(' ')?;
    if version == DELETED {
        return Some(StoreChange::Deleted { id: id.to_string() });
    }
    Some(StoreChange::Game {
        id: id.to_string(),
        version: version.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_parse_and_garbage_is_ignored() {
        assert_eq!(
            parse_payload("g1 42"),
            Some(StoreChange::Game {
                id: "g1".into(),
                version: 42
            })
        );
        assert_eq!(
            parse_payload("g 1 deleted"),
            Some(StoreChange::Deleted { id: "g 1".into() })
        );
        assert_eq!(parse_payload("nospace"), None);
        assert_eq!(parse_payload("g1 x"), None);
    }

    #[test]
    fn migrations_are_numbered_in_order() {
        for pair in MIGRATIONS.windows(2) {
            assert!(pair[0].0 < pair[1].0);
        }
        assert_eq!(MIGRATIONS[0].0, 1);
    }
}
