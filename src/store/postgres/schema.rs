//! The schema: its migrations, applied once under an advisory lock when replicas start at
//! once, and the check at start that the database keeps what it acknowledges.
//!
//! Acknowledged means committed: every statement runs in its own transaction (or an
//! explicit one), and the connection keeps the server's `synchronous_commit` (a warning
//! at start when the server has it, or `fsync`, off).

use super::Inner;
use super::errors::{db_error, pool_error};
use crate::store::StoreError;

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

impl Inner {
    /// Creates or migrates the schema. Replicas starting at once queue on an advisory
    /// lock, so each step runs exactly once.
    pub(super) async fn migrate(&self) -> Result<(), StoreError> {
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
    pub(super) async fn warn_if_not_durable(&self) -> Result<(), StoreError> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order() {
        for pair in MIGRATIONS.windows(2) {
            assert!(pair[0].0 < pair[1].0);
        }
        assert_eq!(MIGRATIONS[0].0, 1);
    }
}
