//! Per-caller quotas: calls per second (`--rate-limit-per-token`) and games created per
//! minute (`--games-per-token-per-minute`), each a token bucket per caller NAME that
//! holds one period's worth (so a caller may burst up to the limit, then is held to the
//! rate). Buckets are keyed by the names of the token file, so their number is bounded
//! by the file, not by what callers send.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A refused call: which quota, its limit, and when one more call would be allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimited {
    /// `calls per second` or `games per minute`.
    pub quota: &'static str,
    /// The configured limit.
    pub limit: u32,
    /// How long until the caller's bucket holds one call again.
    pub retry_after: Duration,
}

/// One quota: `limit` per `period`, per caller.
struct Limiter {
    quota: &'static str,
    limit: u32,
    period: Duration,
    buckets: Mutex<HashMap<Arc<str>, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Limiter {
    fn new(quota: &'static str, limit: u32, period: Duration) -> Limiter {
        Limiter {
            quota,
            limit,
            period,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one from `caller`'s bucket at `now`, or says when it could.
    fn take(&self, caller: &Arc<str>, now: Instant) -> Result<(), RateLimited> {
        let capacity = f64::from(self.limit);
        let per_sec = capacity / self.period.as_secs_f64();
        // A poisoned lock only means another call panicked mid-update of plain numbers.
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.entry(caller.clone()).or_insert(Bucket {
            tokens: capacity,
            at: now,
        });
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * per_sec).min(capacity);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        let wait = ((1.0 - bucket.tokens) / per_sec).max(0.001);
        Err(RateLimited {
            quota: self.quota,
            limit: self.limit,
            retry_after: Duration::from_secs_f64(wait),
        })
    }

    /// Gives back one taken by a call that a later quota refused.
    fn give_back(&self, caller: &Arc<str>) {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bucket) = buckets.get_mut(caller) {
            bucket.tokens = (bucket.tokens + 1.0).min(f64::from(self.limit));
        }
    }
}

/// The quotas of a server (each one off when not configured, or configured as 0).
#[derive(Default)]
pub struct Quotas {
    calls: Option<Limiter>,
    games: Option<Limiter>,
}

impl Quotas {
    /// `calls_per_sec` calls per second and `games_per_min` games created per minute,
    /// per caller.
    pub fn new(calls_per_sec: Option<u32>, games_per_min: Option<u32>) -> Quotas {
        Quotas {
            calls: calls_per_sec
                .filter(|&n| n > 0)
                .map(|n| Limiter::new("calls per second", n, Duration::from_secs(1))),
            games: games_per_min
                .filter(|&n| n > 0)
                .map(|n| Limiter::new("games per minute", n, Duration::from_secs(60))),
        }
    }

    /// Counts one call of `caller` (and one game if it creates one), or refuses it
    /// without counting it.
    pub fn admit(&self, caller: &Arc<str>, creates_game: bool) -> Result<(), RateLimited> {
        let now = Instant::now();
        if let Some(calls) = &self.calls {
            calls.take(caller, now)?;
        }
        if creates_game
            && let Some(games) = &self.games
            && let Err(limited) = games.take(caller, now)
        {
            if let Some(calls) = &self.calls {
                calls.give_back(caller);
            }
            return Err(limited);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_bursts_to_its_limit_then_refills_at_the_rate() {
        let limiter = Limiter::new("calls per second", 3, Duration::from_secs(1));
        let who: Arc<str> = Arc::from("a");
        let t0 = Instant::now();
        for _ in 0..3 {
            limiter.take(&who, t0).expect("within the burst");
        }
        let refused = limiter.take(&who, t0).expect_err("over the limit");
        assert!(
            refused.retry_after > Duration::from_millis(300)
                && refused.retry_after <= Duration::from_millis(334),
            "{refused:?}"
        );
        // Another caller has its own bucket.
        limiter.take(&Arc::from("b"), t0).expect("b is not a");
        // A third of a second later one call is allowed again.
        limiter
            .take(&who, t0 + Duration::from_millis(334))
            .expect("refilled");
    }
}
