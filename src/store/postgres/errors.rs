//! How a statement is run and what its failure means to a caller: every step is bounded
//! by the configured timeout (pool waits, connects and statements), so a database that is
//! down or unreachable is [`StoreError::Unavailable`] (the service answers UNAVAILABLE),
//! never a hang; serialization failures (SQLSTATE 40001, and deadlocks, 40P01) are
//! retried: the normal case on CockroachDB.

use std::future::Future;
use std::time::Duration;

use tokio_postgres::error::SqlState;

use super::Inner;
use crate::store::StoreError;

/// How many times a statement that hit a serialization failure is tried in all.
const SERIALIZATION_TRIES: u32 = 8;

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

pub(super) fn db_error(e: tokio_postgres::Error) -> StoreError {
    match classify(&e) {
        ErrorKind::Unavailable => StoreError::Unavailable(format!("database: {e}")),
        _ => StoreError::Io(format!("database: {e}")),
    }
}

pub(super) fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
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

pub(super) fn to_i64(v: u64, what: &str) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::Io(format!("{what} {v} does not fit the database")))
}

impl Inner {
    /// Runs `op` on a pooled connection, bounded by the timeout, retrying serialization
    /// failures; maps errors to store errors.
    pub(super) async fn run<'a, T, F, Fut>(&'a self, op: F) -> Result<T, StoreError>
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
    pub(super) fn timed_out(&self) -> StoreError {
        StoreError::Unavailable(format!(
            "the database did not answer within {} ms",
            self.timeout.as_millis()
        ))
    }
}
