//! Refusals in the log: at most [`LINES_PER_SECOND`] lines a second for each reason,
//! and the next line let through says how many were left out.
//!
//! Why: one caller without a token once wrote 855 KiB of log a second (3,700 refusals a
//! second, a line each). A refusal is cheap for the caller and the server; its log line
//! must be too. The metrics (`chess_refusals_total{reason}`) still count every one.

use std::sync::{LazyLock, Mutex};
use std::time::Instant;

use crate::pb::ErrorReason;
use crate::service::ServiceError;
use crate::service::log_text::Clean;

/// Bytes of a refused call's path that its log line keeps.
const MAX_LOGGED_PATH: usize = 96;

/// Lines a second logged at most for each reason.
pub const LINES_PER_SECOND: u32 = 5;

/// Room for every reason number (the enum's values are small and dense).
const REASONS: usize = 256;

#[derive(Default)]
struct Window {
    /// The second (since [`ORIGIN`]) the count is of.
    second: u64,
    /// Lines logged in that second.
    lines: u32,
    /// Refusals left out since the last line logged.
    left_out: u64,
}

/// A window per reason.
struct Budget(Vec<Mutex<Window>>);

impl Budget {
    fn new() -> Budget {
        Budget((0..REASONS).map(|_| Mutex::default()).collect())
    }

    fn admit_at(&self, reason: ErrorReason, second: u64) -> Option<u64> {
        let slot = usize::try_from(reason as i32).unwrap_or(0) % REASONS;
        let mut window = self.0[slot].lock().unwrap_or_else(|p| p.into_inner());
        if window.second != second {
            window.second = second;
            window.lines = 0;
        }
        if window.lines >= LINES_PER_SECOND {
            window.left_out += 1;
            return None;
        }
        window.lines += 1;
        Some(std::mem::take(&mut window.left_out))
    }
}

static ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);
static BUDGET: LazyLock<Budget> = LazyLock::new(Budget::new);

/// Whether a refusal for `reason` is logged: `Some(left_out)` (the refusals of that
/// reason left out of the log since its last line), or `None` to leave it out.
pub fn admit(reason: ErrorReason) -> Option<u64> {
    BUDGET.admit_at(reason, ORIGIN.elapsed().as_secs())
}

/// A refusal of a call to `path` with `error`, before it is answered: logged (at most
/// [`LINES_PER_SECOND`] lines a second for its reason) and counted in
/// `chess_refusals_total`.
pub fn log_and_count(path: &str, error: &ServiceError) {
    if let Some(left_out) = admit(error.error_reason()) {
        tracing::info!(
            path = %Clean::new(path, MAX_LOGGED_PATH),
            code = ?error.code(),
            reason = error.reason(),
            left_out_since_last_line = left_out,
            "refused: {}",
            Clean::new(&error.to_string(), 512)
        );
    }
    crate::service::edge::metrics::refused(error.reason());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_logs_n_lines_a_second_then_counts_the_rest() {
        let budget = Budget::new();
        let reason = ErrorReason::TokenMissing;
        for _ in 0..LINES_PER_SECOND {
            assert_eq!(budget.admit_at(reason, 7), Some(0));
        }
        for _ in 0..1000 {
            assert_eq!(budget.admit_at(reason, 7), None);
        }
        // Another reason has its own budget.
        assert_eq!(budget.admit_at(ErrorReason::TokenUnknown, 7), Some(0));
        // The next second's first line tells how many were left out.
        assert_eq!(budget.admit_at(reason, 8), Some(1000));
        assert_eq!(budget.admit_at(reason, 8), Some(0));
    }
}
