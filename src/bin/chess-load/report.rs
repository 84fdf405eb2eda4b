//! One run's numbers and how they print.

use crate::args::{ClientKind, Connections, Rpc};

/// One run's numbers.
pub(crate) struct Report {
    pub(crate) rpc: Rpc,
    pub(crate) client: ClientKind,
    pub(crate) concurrency: usize,
    pub(crate) mode: Connections,
    pub(crate) seconds: f64,
    pub(crate) ok: u64,
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
    /// Latencies of successful calls, nanoseconds, sorted.
    pub(crate) latencies: Vec<u64>,
    /// Encoded answer bytes received by successful calls (counted by the raw client only).
    pub(crate) answer_bytes: u64,
}

impl Report {
    pub(crate) fn throughput(&self) -> f64 {
        self.ok as f64 / self.seconds
    }

    pub(crate) fn percentile_ms(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * self.latencies.len() as f64).ceil() as usize;
        let i = rank.clamp(1, self.latencies.len()) - 1;
        self.latencies[i] as f64 / 1e6
    }

    pub(crate) fn line(&self) -> String {
        format!(
            "rpc={:?} client={} concurrency={} connections={} seconds={:.1} ok={} errors={} bytes/answer={:.0} throughput={:.0}/s p50={:.3}ms p99={:.3}ms p99.9={:.3}ms{}",
            self.rpc,
            self.client.name(),
            self.concurrency,
            self.mode.count(self.concurrency),
            self.seconds,
            self.ok,
            self.errors,
            self.answer_bytes as f64 / self.ok.max(1) as f64,
            self.throughput(),
            self.percentile_ms(50.0),
            self.percentile_ms(99.0),
            self.percentile_ms(99.9),
            self.first_error
                .as_ref()
                .map(|e| format!(" first_error={e:?}"))
                .unwrap_or_default()
        )
    }
}
