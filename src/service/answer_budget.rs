//! The server-wide budget of answer bytes not yet sent (`--max-unsent-answer-mib`).
//!
//! Why: an answer waits in memory until its caller reads it, and a caller can ask and
//! never read (an HTTP/2 window it never opens). `--max-in-flight` bounds how many
//! answers wait, and the ListGames page bound how large one is, but a thousand answers
//! of a mebibyte each is still a gigabyte (issue 30). So a large answer also holds its
//! bytes in this budget from the moment it is built until it is handed whole to the
//! connection (see [`crate::service::edge::shed::SlotBody`]), and an answer that does not fit is refused
//! with RESOURCE_EXHAUSTED, reason `OVERLOADED`, like a call beyond `--max-in-flight`.
//!
//! Small answers (at most [`LARGE_ANSWER`] bytes) do not count: `--max-in-flight` already
//! bounds them to a few tens of mebibytes, and a well-behaved caller's small calls must
//! go on while someone else's large answers fill the budget.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Answers up to this many bytes (encoded) are not counted in the budget.
pub const LARGE_ANSWER: usize = 64 * 1024;

/// The budget's default, in MiB.
pub const DEFAULT_MIB: usize = 64;

/// Bytes of large answers built and not yet sent, across the server, and the most allowed.
#[derive(Debug)]
pub struct AnswerBudget {
    limit: usize,
    held: AtomicUsize,
}

impl AnswerBudget {
    /// A budget of `mib` MiB (0: no bound).
    pub fn new(mib: usize) -> Arc<AnswerBudget> {
        Arc::new(AnswerBudget {
            limit: if mib == 0 {
                usize::MAX
            } else {
                mib.saturating_mul(1024 * 1024)
            },
            held: AtomicUsize::new(0),
        })
    }

    /// The bound in MiB (for messages), 0 for none.
    pub fn limit_mib(&self) -> usize {
        if self.limit == usize::MAX {
            0
        } else {
            self.limit / (1024 * 1024)
        }
    }

    /// Bytes held now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Takes `bytes` from the budget, or `None` when they do not fit.
    pub fn reserve(self: &Arc<Self>, bytes: usize) -> Option<Reservation> {
        let mut reservation = Reservation {
            budget: self.clone(),
            bytes: 0,
        };
        reservation.resize(bytes).then_some(reservation)
    }

    /// Holds an answer of `bytes`: nothing for a small answer, its bytes for a large one,
    /// growing or shrinking `ahead` (bytes reserved before the answer was built) to fit.
    /// [`DoesNotFit`] when a large answer does not (`ahead` is given back).
    pub fn hold(
        self: &Arc<Self>,
        bytes: usize,
        ahead: Option<Reservation>,
    ) -> Result<Option<Reservation>, DoesNotFit> {
        if bytes <= LARGE_ANSWER {
            return Ok(None);
        }
        let mut reservation = match ahead {
            Some(reservation) => reservation,
            None => Reservation {
                budget: self.clone(),
                bytes: 0,
            },
        };
        if reservation.resize(bytes) {
            Ok(Some(reservation))
        } else {
            Err(DoesNotFit)
        }
    }
}

/// A large answer that the budget has no room for.
#[derive(Debug, PartialEq, Eq)]
pub struct DoesNotFit;

/// Bytes taken from an [`AnswerBudget`]; given back when dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<AnswerBudget>,
    bytes: usize,
}

impl Reservation {
    /// Changes the bytes held to `bytes`: always succeeds when shrinking; growing
    /// succeeds only when the budget has room (else nothing changes).
    fn resize(&mut self, bytes: usize) -> bool {
        let held = &self.budget.held;
        if bytes == self.bytes {
            // Nothing to change: most calls hold nothing and must not touch the shared
            // counter (one cache line every call of the server would write).
            return true;
        }
        if bytes < self.bytes {
            held.fetch_sub(self.bytes - bytes, Ordering::AcqRel);
            self.bytes = bytes;
            return true;
        }
        let more = bytes - self.bytes;
        let grown = held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
            now.checked_add(more)
                .filter(|&after| after <= self.budget.limit)
        });
        if grown.is_ok() {
            self.bytes = bytes;
        }
        grown.is_ok()
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes != 0 {
            self.budget.held.fetch_sub(self.bytes, Ordering::AcqRel);
        }
    }
}

/// A [`Reservation`] riding in an answer's `http` extensions, from the call that built
/// the answer to the load-shedding layer, which keeps it with the answer's body until the
/// answer is sent. (Extensions must be `Clone`; only one holder takes it.)
#[derive(Clone, Debug)]
pub struct HeldAnswer(Arc<Mutex<Option<Reservation>>>);

impl HeldAnswer {
    /// Wraps a reservation for the trip.
    pub fn new(reservation: Reservation) -> HeldAnswer {
        HeldAnswer(Arc::new(Mutex::new(Some(reservation))))
    }

    /// The reservation, once.
    pub fn take(&self) -> Option<Reservation> {
        self.0.lock().ok().and_then(|mut held| held.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1024 * 1024;

    #[test]
    fn large_answers_hold_their_bytes_until_dropped() {
        let budget = AnswerBudget::new(2);
        let a = budget.hold(MIB, None).expect("fits").expect("large");
        let b = budget.hold(MIB, None).expect("fits").expect("large");
        assert_eq!(budget.held(), 2 * MIB);
        assert!(budget.hold(MIB, None).is_err(), "a third does not fit");
        assert_eq!(budget.held(), 2 * MIB, "a refusal holds nothing");
        assert!(
            budget.hold(LARGE_ANSWER, None).expect("small").is_none(),
            "small answers always pass, uncounted"
        );
        drop(a);
        assert_eq!(budget.held(), MIB);
        drop(b);
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn bytes_reserved_ahead_shrink_or_grow_to_the_answer() {
        let budget = AnswerBudget::new(2);
        let ahead = budget.reserve(MIB).expect("room");
        let held = budget
            .hold(300_000, Some(ahead))
            .expect("fits")
            .expect("large");
        assert_eq!(budget.held(), 300_000);
        drop(held);
        let ahead = budget.reserve(MIB).expect("room");
        let small = budget.hold(1000, Some(ahead)).expect("small");
        assert!(small.is_none());
        assert_eq!(
            budget.held(),
            0,
            "a small answer gives back what was reserved"
        );
        let _other = budget.reserve(MIB + MIB / 2).expect("room");
        let ahead = budget.reserve(MIB / 4).expect("room");
        assert!(
            budget.hold(MIB, Some(ahead)).is_err(),
            "cannot grow past the bound"
        );
        assert_eq!(
            budget.held(),
            MIB + MIB / 2,
            "the refused one gave back its bytes"
        );
    }

    #[test]
    fn zero_means_no_bound() {
        let budget = AnswerBudget::new(0);
        let _held: Vec<_> = (0..100)
            .map(|_| budget.reserve(1 << 30).expect("no bound"))
            .collect();
        assert_eq!(budget.limit_mib(), 0);
    }

    #[test]
    fn a_held_answer_is_taken_once() {
        let budget = AnswerBudget::new(1);
        let held = HeldAnswer::new(budget.reserve(100).expect("room"));
        let copy = held.clone();
        assert!(copy.take().is_some());
        assert!(held.take().is_none());
        assert_eq!(budget.held(), 0);
    }
}
