//! The statements the store runs, in one place: the game rows' reads and writes, the
//! flag sweep's, the clock ping and the announcement, so a reader sees every statement
//! that touches `chess_games` (and which indexes each relies on) side by side.

use crate::store::StatusFilter;

pub(super) const INSERT: &str =
    "INSERT INTO chess_games (id, version, record, status, flag_at_ms, token)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (id) DO NOTHING";

/// Many saves in one statement: `$1`.. `$8` are arrays of the ids, new versions, records,
/// statuses, flag deadlines, expected versions, new tokens and expected tokens (NULL: any
/// token); returns the ids whose row it replaced. Each row is its own compare-and-set on
/// the version and the token. A row held by another session is waited for, at most
/// `lock_timeout` (then the whole statement fails with SQLSTATE 55P03 and the batch is
/// written again with [`UPDATE_MANY_SKIPPING`]).
pub(super) const UPDATE_MANY: &str = "UPDATE chess_games AS g
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
pub(super) const UPDATE_MANY_SKIPPING: &str = "WITH v AS MATERIALIZED (
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
pub(super) const DUE: &str = "SELECT id, version, record, token, now.ms FROM chess_games,
        (SELECT coalesce($1::bigint,
                         (extract(epoch FROM statement_timestamp()) * 1000)::bigint) AS ms) AS now
    WHERE flag_at_ms <= now.ms ORDER BY flag_at_ms LIMIT $2";

/// The database's clock now, in Unix µs (the listener's ping: see
/// [`DbClock`](crate::store::clock::DbClock)).
pub(super) const CLOCK: &str = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

/// The sweep's repair of a flag column that is ahead of its record: `$1` the id, `$2` the
/// deadline, `$3` and `$4` the version and token read.
pub(super) const FIX_FLAG: &str = "UPDATE chess_games SET flag_at_ms = $2
    WHERE id = $1 AND version = $3 AND token = $4";

pub(super) const NOTIFY: &str = "SELECT pg_notify('chess_games', $1)";

pub(super) const STAMP: &str = "SELECT version, token FROM chess_games WHERE id = $1";

pub(super) const LOAD: &str = "SELECT version, record, token FROM chess_games WHERE id = $1";

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
pub(super) fn list_sql(filter: StatusFilter, ends: bool) -> &'static str {
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
pub(super) const DELETE: &str = "DELETE FROM chess_games
    WHERE id = $1 AND ($2::bigint IS NULL OR version = $2) RETURNING version";
