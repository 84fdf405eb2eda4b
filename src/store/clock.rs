//! The shared store's clock: the one time every replica charges moves and drops flags by.
//!
//! Why: with replicas on one database, a move's time taken from the receiving replica's
//! own wall clock bills a player for the skew between two machines, and a flag judged by
//! each replica's clock falls early on one and late on another. So in replicated mode the
//! database's clock (`clock_timestamp()`) is the authority. A replica estimates its offset
//! from it the way NTP does: it reads the database's time in a round trip, assumes the
//! reading was taken at the round trip's midpoint, and so knows the offset to within half
//! the round trip. Of the recent samples it keeps the least uncertain, its uncertainty
//! grown by how far the local clock may have drifted since. The embedded store has one
//! writer and keeps the local clock (no [`DbClock`]).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How many recent samples the estimate chooses from (one a second).
const SAMPLES: usize = 8;

/// The drift a local clock is assumed to have at most, in parts per million: a sample's
/// uncertainty grows by this much of its age.
const DRIFT_PPM: u64 = 100;

/// What "not known yet" is stored as.
const UNKNOWN: u64 = u64::MAX;

/// The local wall clock, in Unix microseconds.
pub fn local_unix_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// One reading of the database's clock.
#[derive(Clone, Copy, Debug)]
struct Sample {
    taken: Instant,
    /// Database time minus local time, in µs.
    offset_us: i64,
    /// Half the round trip, in µs: the reading lies within this of the midpoint.
    half_rtt_us: u64,
}

impl Sample {
    fn uncertainty_us(&self, now: Instant) -> u64 {
        let age = u64::try_from(now.saturating_duration_since(self.taken).as_micros())
            .unwrap_or(u64::MAX);
        self.half_rtt_us
            .saturating_add(age.saturating_mul(DRIFT_PPM) / 1_000_000)
    }
}

/// A replica's estimate of the database's clock. Shared: the store's listener feeds it,
/// the registry and the metrics read it.
#[derive(Debug)]
pub struct DbClock {
    samples: Mutex<VecDeque<Sample>>,
    offset_us: AtomicI64,
    uncertainty_us: AtomicU64,
}

impl Default for DbClock {
    fn default() -> Self {
        DbClock {
            samples: Mutex::new(VecDeque::with_capacity(SAMPLES)),
            offset_us: AtomicI64::new(0),
            uncertainty_us: AtomicU64::new(UNKNOWN),
        }
    }
}

impl DbClock {
    /// A reading of the database's time, `db_unix_us`, asked for at `sent` (local wall
    /// clock `sent_unix_us`) and answered `rtt` later.
    pub fn record(&self, sent: Instant, sent_unix_us: i64, rtt: Duration, db_unix_us: i64) {
        let rtt_us = i64::try_from(rtt.as_micros()).unwrap_or(i64::MAX);
        let midpoint = sent_unix_us.saturating_add(rtt_us / 2);
        let sample = Sample {
            taken: sent + rtt / 2,
            offset_us: db_unix_us.saturating_sub(midpoint),
            half_rtt_us: u64::try_from(rtt_us / 2 + rtt_us % 2).unwrap_or(UNKNOWN),
        };
        let mut samples = self.samples.lock().unwrap_or_else(|e| e.into_inner());
        if samples.len() == SAMPLES {
            samples.pop_front();
        }
        samples.push_back(sample);
        self.choose(&samples, Instant::now());
    }

    /// Forgets every sample (the database changed, or could not be read): the offset is
    /// unknown until the next reading.
    pub fn forget(&self) {
        let mut samples = self.samples.lock().unwrap_or_else(|e| e.into_inner());
        samples.clear();
        self.uncertainty_us.store(UNKNOWN, Ordering::Relaxed);
    }

    /// Takes the least uncertain sample as the estimate.
    fn choose(&self, samples: &VecDeque<Sample>, now: Instant) {
        if let Some(best) = samples.iter().min_by_key(|s| s.uncertainty_us(now)) {
            self.offset_us.store(best.offset_us, Ordering::Relaxed);
            self.uncertainty_us
                .store(best.uncertainty_us(now), Ordering::Relaxed);
        }
    }

    /// The database's time now, as estimated, in Unix ms (the local clock until the first
    /// reading).
    pub fn now_ms(&self) -> u64 {
        let us = local_unix_us().saturating_add(self.offset_us.load(Ordering::Relaxed));
        u64::try_from(us / 1000).unwrap_or(0)
    }

    /// Database time minus local time, in seconds (0 until the first reading).
    pub fn offset_seconds(&self) -> f64 {
        self.offset_us.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// How far [`DbClock::now_ms`] may be from the database's clock (`None`: unknown, no
    /// reading yet). Re-aged on each call.
    pub fn uncertainty(&self) -> Option<Duration> {
        let samples = self.samples.lock().unwrap_or_else(|e| e.into_inner());
        self.choose(&samples, Instant::now());
        match self.uncertainty_us.load(Ordering::Relaxed) {
            UNKNOWN => None,
            us => Some(Duration::from_micros(us)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_is_read_at_the_round_trips_midpoint() {
        let clock = DbClock::default();
        assert_eq!(clock.uncertainty(), None, "unknown before any reading");
        let sent = Instant::now();
        // The database is 3 s ahead; its reading came back 10 ms after it was asked.
        clock.record(
            sent,
            1_000_000_000,
            Duration::from_millis(10),
            1_003_005_000,
        );
        assert_eq!(clock.offset_seconds(), 3.0);
        let u = clock.uncertainty().expect("known");
        assert!(
            u >= Duration::from_millis(5) && u < Duration::from_millis(6),
            "{u:?}"
        );
        let ahead = clock.now_ms() as i64 - local_unix_us() / 1000;
        assert!((2990..=3010).contains(&ahead), "{ahead}");
    }

    #[test]
    fn the_least_uncertain_recent_sample_wins_and_forget_unknows() {
        let clock = DbClock::default();
        let sent = Instant::now();
        clock.record(sent, 0, Duration::from_millis(2), 1_000);
        // A slow round trip with another answer is the worse sample.
        clock.record(sent, 0, Duration::from_millis(80), 500_000);
        assert_eq!(clock.offset_seconds(), 0.0);
        let u = clock.uncertainty().expect("known");
        assert!(u < Duration::from_millis(2), "{u:?}");
        // Only slow samples: the best of them, uncertain.
        for _ in 0..SAMPLES {
            clock.record(sent, 0, Duration::from_millis(120), 60_000);
        }
        let u = clock.uncertainty().expect("known");
        assert!(u >= Duration::from_millis(60), "{u:?}");
        clock.forget();
        assert_eq!(clock.uncertainty(), None);
    }

    #[test]
    fn an_old_sample_grows_uncertain_with_drift() {
        let sample = Sample {
            taken: Instant::now(),
            offset_us: 0,
            half_rtt_us: 100,
        };
        let later = sample.taken + Duration::from_secs(100);
        // 100 s at 100 ppm: 10 ms.
        assert_eq!(sample.uncertainty_us(later), 100 + 10_000);
    }
}
