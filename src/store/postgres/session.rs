//! The store's database sessions: what each one is told at connect, and how a pooled
//! connection that may be dead is kept from being handed out again.
//!
//! Why:
//! - A replica paused (SIGSTOP) or cut off in the middle of a transaction must not hold
//!   row locks for longer than a call may take: every session carries
//!   `statement_timeout`, `lock_timeout` and `idle_in_transaction_session_timeout` from
//!   its first packet, so the database ends what the replica cannot.
//! - After a network cut heals, a pooled connection may still be in TCP's retransmission
//!   back-off: it is open, and a statement sent on it waits seconds. So after any fault
//!   (a step that timed out or lost its connection) every connection that was in the pool
//!   before it is probed once, with a short deadline, before it is handed out again; one
//!   that does not answer is dropped and another is made. Probing only after a fault costs
//!   nothing while all is well. `TCP_USER_TIMEOUT` and keepalives bound the rest: a
//!   connection whose data or probes go unacknowledged for the database timeout is closed
//!   by the kernel.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use deadpool_postgres::HookError;
use deadpool_postgres::{Hook, Metrics};

/// How long a statement waits for a row another session holds, by default. Rows are held
/// only for one statement and its commit (milliseconds), so a longer wait means a stalled
/// session: a save batch then writes again, skipping that row, and other statements fail
/// as unavailable rather than hold the caller.
pub const LOCK_WAIT: Duration = Duration::from_millis(100);

/// The database's own limits on each session; zero turns one off (as in PostgreSQL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// `statement_timeout`: the database cancels a statement that runs longer.
    pub statement: Duration,
    /// `lock_timeout`: the database fails a statement that waits longer for a lock.
    pub lock: Duration,
    /// `idle_in_transaction_session_timeout`: the database ends a session that sits idle
    /// inside a transaction longer (a paused or cut-off replica), releasing its locks.
    pub idle_in_transaction: Duration,
}

impl SessionLimits {
    /// Statements and idle transactions at `timeout` (nothing the database does for a
    /// replica outlasts the replica's own wait for it), lock waits at [`LOCK_WAIT`] (or
    /// `timeout` if shorter).
    pub fn all(timeout: Duration) -> SessionLimits {
        SessionLimits {
            statement: timeout,
            lock: LOCK_WAIT.min(timeout),
            idle_in_transaction: timeout,
        }
    }

    /// The startup `options` that set these limits, after the URL's own `options` (a
    /// later `-c` wins, so these do).
    pub fn options(&self, url_options: Option<&str>) -> String {
        let ours = format!(
            "-c statement_timeout={} -c lock_timeout={} -c idle_in_transaction_session_timeout={}",
            self.statement.as_millis(),
            self.lock.as_millis(),
            self.idle_in_transaction.as_millis()
        );
        match url_options.map(str::trim) {
            Some(theirs) if !theirs.is_empty() => format!("{theirs} {ours}"),
            _ => ours,
        }
    }
}

/// When the last fault happened, so that connections pooled before it are probed.
#[derive(Debug)]
pub struct Faults {
    origin: Instant,
    /// Nanoseconds from `origin` to the last fault; 0: none yet.
    last: AtomicU64,
}

impl Faults {
    pub fn new() -> Arc<Faults> {
        Arc::new(Faults {
            origin: Instant::now(),
            last: AtomicU64::new(0),
        })
    }

    /// A step timed out or lost its connection: every connection pooled until now is
    /// suspect.
    pub fn record(&self) {
        let since = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last.fetch_max(since.max(1), Ordering::Relaxed);
    }

    /// Whether a fault happened after `instant`.
    fn after(&self, instant: Instant) -> bool {
        let last = self.last.load(Ordering::Relaxed);
        last != 0
            && instant
                .checked_duration_since(self.origin)
                .is_none_or(|at| u64::try_from(at.as_nanos()).unwrap_or(u64::MAX) < last)
    }
}

/// The pool's `pre_recycle` hook: a connection last handed out (or made) before the last
/// fault answers an empty query within `limit`, or is dropped.
pub fn probe_after_fault(faults: Arc<Faults>, limit: Duration) -> Hook {
    Hook::async_fn(move |client, metrics: &Metrics| {
        let faults = faults.clone();
        let last_use = metrics.recycled.unwrap_or(metrics.created);
        Box::pin(async move {
            if !faults.after(last_use) {
                return Ok(());
            }
            match tokio::time::timeout(limit, client.simple_query("")).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(HookError::Backend(e)),
                Err(_) => Err(HookError::message(
                    "a pooled connection did not answer its probe after a fault",
                )),
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_follow_the_urls_own_so_they_win() {
        let limits = SessionLimits {
            statement: Duration::from_millis(2000),
            lock: Duration::from_millis(500),
            idle_in_transaction: Duration::ZERO,
        };
        let ours = "-c statement_timeout=2000 -c lock_timeout=500 -c idle_in_transaction_session_timeout=0";
        assert_eq!(limits.options(None), ours);
        assert_eq!(limits.options(Some("  ")), ours);
        assert_eq!(
            limits.options(Some("-c search_path=chess")),
            format!("-c search_path=chess {ours}")
        );
    }

    #[test]
    fn only_connections_pooled_before_a_fault_are_suspect() {
        let faults = Faults::new();
        let before = Instant::now();
        assert!(!faults.after(before), "no fault yet");
        std::thread::sleep(Duration::from_millis(2));
        faults.record();
        assert!(faults.after(before));
        std::thread::sleep(Duration::from_millis(2));
        assert!(!faults.after(Instant::now()), "probed (or made) since");
    }
}
