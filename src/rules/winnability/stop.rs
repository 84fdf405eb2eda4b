//! A stop flag for a verdict that a caller may abandon (an RPC past its deadline): the
//! node counters look at it every 1,024 nodes and, once it is raised, count the budget as
//! spent, so the verdict ends Undetermined soon after (tens of microseconds measured, a
//! few milliseconds at worst: some phases count no nodes for a while). Kept per thread,
//! set only for the duration of [`super::Solver::solve_stoppable`], so a verdict nobody
//! can stop pays one branch per 1,024 nodes and stays deterministic.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

thread_local! {
    static STOP: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// How often (in nodes, a power of two) the counters look at the flag.
const EVERY: u64 = 1024;

/// Whether the verdict running on this thread should stop: checked when `spent` is a
/// multiple of [`EVERY`].
#[inline(always)]
pub(super) fn requested(spent: u64) -> bool {
    spent.is_multiple_of(EVERY)
        && STOP.with(|s| {
            s.borrow()
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
        })
}

/// Sets this thread's flag until the guard is dropped.
pub(super) fn set(flag: Arc<AtomicBool>) -> Guard {
    STOP.with(|s| *s.borrow_mut() = Some(flag));
    Guard
}

/// Clears this thread's flag when dropped.
pub(super) struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        STOP.with(|s| *s.borrow_mut() = None);
    }
}
