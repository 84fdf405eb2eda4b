//! Load shedding across the whole server: at most `--max-in-flight` calls are being
//! handled at once; a call beyond that is answered at once with RESOURCE_EXHAUSTED,
//! reason `OVERLOADED`, rather than queued.
//!
//! Why a layer of our own: tonic's concurrency limit counts per connection, so a thousand
//! connections get a thousand times the limit, and tower's `ConcurrencyLimit` queues
//! (its `LoadShed` answers an error without a gRPC status). Why answer at once: a queue
//! without bound turns a burst into latency for every caller and memory for the server,
//! while an immediate refusal lets a caller retry elsewhere or back off.
//!
//! A call counts from the moment its request reaches the layer until its answer has been
//! handed to the connection whole (its status trailers passed), or the call is dropped: an
//! answer a caller does not read (an HTTP/2 window it never opens) waits in memory, so it
//! counts, and a caller that stops reading cannot pile up more than `--max-in-flight`
//! answers (issue 30). A WatchGame stream counts while it is set up, not while it streams
//! (streams are bounded by the connections and `--max-concurrent-streams`). Health checks
//! are never shed: a probe must see a busy server as alive. A large answer's bytes in the
//! budget of unsent answers ([`crate::service::answer_budget`]) ride with the slot.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::around_call::{AroundCall, AroundCallLayer, AroundCallService};
use super::held_body::{HeldBody, UntilAnswered};
use crate::service::ServiceError;
use crate::service::answer_budget::{HeldAnswer, Reservation};

/// The health service's path prefix: never shed.
const HEALTH_PREFIX: &str = "/grpc.health.v1.Health/";

/// The one server-streaming method: its slot is given back once the stream is set up.
const STREAMING_PATH: &str = "/chess.v1.ChessService/WatchGame";

/// How often a refusal is logged at most (the others are counted into the next line).
const LOG_EVERY: Duration = Duration::from_secs(10);

/// Calls in flight across the server, and the most allowed.
pub struct InFlight {
    limit: usize,
    now: AtomicUsize,
    log: Every,
}

impl InFlight {
    /// A counter that admits at most `limit` calls at once (0: no limit).
    pub fn new(limit: usize) -> Arc<InFlight> {
        Arc::new(InFlight {
            limit: if limit == 0 { usize::MAX } else { limit },
            now: AtomicUsize::new(0),
            log: Every::new(LOG_EVERY),
        })
    }

    /// Calls being handled now.
    pub fn current(&self) -> usize {
        self.now.load(Ordering::Relaxed)
    }

    /// A slot for one call, or `None` when every slot is taken.
    fn admit(self: &Arc<Self>) -> Option<CallSlot> {
        let before = self.now.fetch_add(1, Ordering::AcqRel);
        if before >= self.limit {
            self.now.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(CallSlot(self.clone()))
    }
}

/// One admitted call; frees its slot when dropped (its answer sent, or the call cancelled).
pub struct CallSlot(Arc<InFlight>);

impl Drop for CallSlot {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Lets an event through at most once per period, and counts the ones held back: for log
/// lines about floods (refused calls, failed accepts) that must not flood the log.
pub struct Every {
    period_ms: u64,
    origin: Instant,
    /// Milliseconds since `origin` of the last line let through, plus one (0: none yet).
    last: AtomicU64,
    held_back: AtomicU64,
}

impl Every {
    /// At most one event per `period`.
    pub fn new(period: Duration) -> Every {
        Every {
            period_ms: period.as_millis() as u64,
            origin: Instant::now(),
            last: AtomicU64::new(0),
            held_back: AtomicU64::new(0),
        }
    }

    /// `Some(n)` when this event should be logged, `n` being the events held back since
    /// the last one logged; `None` when it is held back.
    pub fn check(&self) -> Option<u64> {
        let now = self.origin.elapsed().as_millis() as u64 + 1;
        let last = self.last.load(Ordering::Relaxed);
        if last != 0 && now.saturating_sub(last) < self.period_ms {
            self.held_back.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        if self
            .last
            .compare_exchange(last, now, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            self.held_back.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(self.held_back.swap(0, Ordering::Relaxed))
    }
}

/// The tower layer of [`InFlight`], for `tonic::transport::Server::builder().layer(..)`.
pub type ShedLayer = AroundCallLayer<Arc<InFlight>>;

/// The service the [`ShedLayer`] wraps around the server's routes.
pub type ShedService<S> = AroundCallService<S, Arc<InFlight>>;

/// Load shedding around each call: a slot, or OVERLOADED at once.
impl AroundCall for Arc<InFlight> {
    /// The call's slot (none for a health check), and whether the call is the stream.
    type Held = (Option<CallSlot>, bool);
    type Body<B> = SlotBody<B>;

    fn before<R>(&self, request: &mut http::Request<R>) -> Result<Self::Held, tonic::Status> {
        let path = request.uri().path();
        let slot = if path.starts_with(HEALTH_PREFIX) {
            None
        } else {
            match self.admit() {
                Some(slot) => Some(slot),
                None => {
                    let limit = self.limit;
                    if let Some(held_back) = self.log.check() {
                        tracing::warn!(
                            limit,
                            refused_since_last_line = held_back,
                            "shedding load: {limit} calls in flight, the most --max-in-flight allows; refusing calls with OVERLOADED"
                        );
                    }
                    let refused = ServiceError::Overloaded { limit };
                    crate::service::edge::metrics::refused(refused.reason());
                    return Err(tonic::Status::from(refused));
                }
            }
        };
        Ok((slot, path == STREAMING_PATH))
    }

    fn after<B>(
        (slot, streaming): Self::Held,
        mut response: http::Response<B>,
    ) -> http::Response<SlotBody<B>> {
        // A unary answer keeps its slot until it is sent; a stream gives it back now.
        let slot = if streaming { None } else { slot };
        // So does a large answer its bytes in the budget of unsent answers.
        let held = response
            .extensions_mut()
            .remove::<HeldAnswer>()
            .and_then(|held| held.take());
        // A body holding nothing (a health check, a stream) is polled without a look.
        let hold = (slot.is_some() || held.is_some()).then_some(SlotHold { slot, answer: held });
        response.map(|inner| SlotBody::new(inner, hold))
    }

    fn refused<B>(response: http::Response<B>) -> http::Response<SlotBody<B>> {
        response.map(|inner| SlotBody::new(inner, None))
    }
}

/// An answer's body that holds its call's slot, and a large answer's bytes in the budget
/// of unsent answers, until the status trailers pass (or the body ends or is dropped):
/// until then the answer is not sent. (HTTP/2 takes a body's next frame only when the
/// stream's window has room, so the trailers pass only once the data before them, taken
/// whole into the connection's buffer, has mostly left.)
pub type SlotBody<B> = HeldBody<B, SlotHold>;

/// What a [`SlotBody`] holds: the call's slot (none for a health check or a stream), and
/// a large answer's bytes in the budget of unsent answers.
pub struct SlotHold {
    slot: Option<CallSlot>,
    answer: Option<Reservation>,
}

impl UntilAnswered for SlotHold {
    /// The slot is given back, then the bytes.
    fn answered(self, _trailers: Option<&http::HeaderMap>) {
        drop(self.slot);
        drop(self.answer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_bounded_and_given_back() {
        let in_flight = InFlight::new(2);
        let a = in_flight.admit().expect("first slot");
        let _b = in_flight.admit().expect("second slot");
        assert!(in_flight.admit().is_none(), "a third call is shed");
        assert_eq!(in_flight.current(), 2);
        drop(a);
        assert!(in_flight.admit().is_some(), "a freed slot admits again");
    }

    #[test]
    fn every_lets_one_through_per_period_and_counts_the_rest() {
        let every = Every::new(Duration::from_secs(3600));
        assert_eq!(every.check(), Some(0));
        assert_eq!(every.check(), None);
        assert_eq!(every.check(), None);
        assert_eq!(every.held_back.load(Ordering::Relaxed), 2);
    }
}
