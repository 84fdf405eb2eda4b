//! What the metrics read from the server's state at each scrape rather than count as it
//! happens: the [`Sources`] the server hands over once its parts exist, and the collector
//! that turns them into the store's group-commit counters, the caches, calls and
//! connections, the operator state (build, health, the store, games created and ended)
//! and the process's own statistics. Apart from the registry because it is the one part
//! that reads other layers' state, under a lock, when `/metrics` is scraped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::pb;
use crate::service::fen_cache::FenCache;
use crate::store::{GameTally, GroupCommitStats, StoreError};

/// What the metrics read when they are scraped: the server's parts, set by the server
/// once they exist.
pub struct Sources {
    /// The embedded store's group-commit counters (none for a database store).
    pub store_stats: Box<dyn Fn() -> Option<GroupCommitStats> + Send + Sync>,
    /// Games loaded in the registry's cache.
    pub games_loaded: Box<dyn Fn() -> usize + Send + Sync>,
    /// Perfts computing now.
    pub perfts_running: Box<dyn Fn() -> usize + Send + Sync>,
    /// The LegalMoves-by-FEN cache.
    pub fen_cache: Arc<FenCache>,
    /// Calls in flight across the server (the load-shedding count).
    pub calls_in_flight: Box<dyn Fn() -> usize + Send + Sync>,
    /// Bytes of large answers built and not yet sent (the budget's use).
    pub unsent_answer_bytes: Box<dyn Fn() -> usize + Send + Sync>,
    /// Client connections open now.
    pub connections_open: Arc<AtomicUsize>,
    /// The store's backend (`chess_build_info{store}`): `sled`, `postgres`, `memory`.
    pub store_kind: &'static str,
    /// Whether the store can be reached (a database), as it changes; `None`: always.
    pub store_available: Option<tokio::sync::watch::Receiver<bool>>,
    /// The shared store's clock estimate (a database); `None`: the local clock.
    pub clock: Option<Arc<crate::store::DbClock>>,
    /// The store's fault, once it stopped after one (the embedded store); `None`: the
    /// store has no such fault.
    pub store_fault: Option<tokio::sync::watch::Receiver<Option<StoreError>>>,
    /// Whether health reports `chess.v1.ChessService` SERVING now.
    pub serving: Arc<AtomicBool>,
    /// Where games created and ended here are counted (the registry's, the store's).
    pub tallies: Vec<Arc<GameTally>>,
}

/// The metrics read from the server's state at each scrape.
pub(super) struct StateCollector {
    pub(super) sources: Arc<Mutex<Option<Sources>>>,
    /// Every ending status with its label, in the `.proto`'s order.
    pub(super) endings: Vec<(pb::GameStatus, String)>,
}

impl std::fmt::Debug for StateCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateCollector")
    }
}

fn counter(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: impl prometheus_client::encoding::EncodeCounterValue + Copy,
) -> Result<(), std::fmt::Error> {
    let metric = ConstCounter::new(value);
    let metric_encoder = encoder.encode_descriptor(name, help, None, metric.metric_type())?;
    metric.encode(metric_encoder)
}

fn gauge(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: impl prometheus_client::encoding::EncodeGaugeValue + Copy,
) -> Result<(), std::fmt::Error> {
    let metric = ConstGauge::new(value);
    let metric_encoder = encoder.encode_descriptor(name, help, None, metric.metric_type())?;
    metric.encode(metric_encoder)
}

impl StateCollector {
    /// What alerts and the business dashboards read: the build, health, the store's state
    /// and the games created and ended.
    fn encode_operator_state(
        &self,
        e: &mut DescriptorEncoder<'_>,
        s: &Sources,
    ) -> Result<(), std::fmt::Error> {
        e.encode_descriptor(
            "chess_build",
            "The running build: its version, commit and store backend (always 1).",
            None,
            MetricType::Info,
        )?
        .encode_info(&[
            ("version", env!("CARGO_PKG_VERSION")),
            ("commit", env!("CHESS_BUILD_COMMIT")),
            ("store", s.store_kind),
        ])?;
        gauge(
            e,
            "chess_serving",
            "1 while health reports chess.v1.ChessService SERVING, else 0 (starting, shutting down, store stopped or unreachable).",
            i64::from(s.serving.load(Ordering::Relaxed)),
        )?;
        gauge(
            e,
            "chess_store_available",
            "1 while the store can be reached (the database's change feed is up and its clock known within --max-clock-uncertainty-ms; the embedded store always), else 0.",
            i64::from(s.store_available.as_ref().is_none_or(|up| *up.borrow())),
        )?;
        if let Some(clock) = &s.clock {
            gauge(
                e,
                "chess_clock_offset_seconds",
                "The database's clock minus this replica's, as estimated (moves are charged and flags fall by the database's clock).",
                clock.offset_seconds(),
            )?;
            if let Some(uncertainty) = clock.uncertainty() {
                gauge(
                    e,
                    "chess_clock_uncertainty_seconds",
                    "How far this replica's estimate of the database's clock may be off; above --max-clock-uncertainty-ms the service is NOT_SERVING.",
                    uncertainty.as_secs_f64(),
                )?;
            }
        }
        gauge(
            e,
            "chess_store_stopped",
            "1 once the embedded store stopped after a failed or uncertain write or sync (disk full included): the process serves nothing more and exits.",
            i64::from(
                s.store_fault
                    .as_ref()
                    .is_some_and(|fault| fault.borrow().is_some()),
            ),
        )?;
        counter(
            e,
            "chess_games_created",
            "Games this process created (NewGame, ImportGame), counted once each was durable.",
            s.tallies.iter().map(|t| t.created_count()).sum::<u64>(),
        )?;
        let mut ended: HashMap<pb::GameStatus, u64> = HashMap::new();
        for tally in &s.tallies {
            for (status, n) in tally.ended_counts() {
                *ended.entry(pb::GameStatus::from(status)).or_insert(0) += n;
            }
        }
        let mut family = e.encode_descriptor(
            "chess_games_ended",
            "Games this process's durable writes ended (a move, a flag fall, a resignation, an agreed or claimed draw, a flag sweep), by the GameStatus they ended with; counted once across replicas and restarts.",
            None,
            MetricType::Counter,
        )?;
        for (status, label) in &self.endings {
            let n = ended.get(status).copied().unwrap_or(0);
            ConstCounter::new(n).encode(family.encode_family(&[("status", label.as_str())])?)?;
        }
        Ok(())
    }
}

impl Collector for StateCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let e = &mut encoder;
        let sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = sources.as_ref() {
            if let Some(stats) = (s.store_stats)() {
                counter(
                    e,
                    "chess_store_commits",
                    "Writes made durable by the embedded store's group commit (each waited for a sync).",
                    stats.waiters,
                )?;
                counter(
                    e,
                    "chess_store_syncs",
                    "Syncs (flush and fsync at --durability fsync) the embedded store ran; commits / syncs is the mean batch size.",
                    stats.batches,
                )?;
                counter(
                    e,
                    "chess_store_sync_seconds",
                    "Time spent in the embedded store's syncs; divided by chess_store_syncs_total, the mean sync latency.",
                    stats.sync_time.as_secs_f64(),
                )?;
                gauge(
                    e,
                    "chess_store_batch_size_max",
                    "The most commits one sync has made durable since the start.",
                    stats.max_batch as i64,
                )?;
            }
            gauge(
                e,
                "chess_games_loaded",
                "Games held in memory (the registry's cache).",
                (s.games_loaded)() as i64,
            )?;
            gauge(
                e,
                "chess_perfts_running",
                "Perfts computing now.",
                (s.perfts_running)() as i64,
            )?;
            let (hits, misses) = s.fen_cache.hits_and_misses();
            counter(
                e,
                "chess_fen_cache_hits",
                "LegalMoves-by-FEN answers served from the cache.",
                hits,
            )?;
            counter(
                e,
                "chess_fen_cache_misses",
                "LegalMoves-by-FEN answers computed (not in the cache).",
                misses,
            )?;
            gauge(
                e,
                "chess_fen_cache_entries",
                "LegalMoves-by-FEN answers held in the cache.",
                s.fen_cache.len() as i64,
            )?;
            gauge(
                e,
                "chess_calls_in_flight",
                "Calls being handled now or answered and not yet sent (what --max-in-flight bounds).",
                (s.calls_in_flight)() as i64,
            )?;
            gauge(
                e,
                "chess_unsent_answer_bytes",
                "Bytes of large answers built and not yet sent to their callers (what --max-unsent-answer-mib bounds).",
                (s.unsent_answer_bytes)() as i64,
            )?;
            gauge(
                e,
                "chess_connections_open",
                "Client connections open now (what --max-connections bounds).",
                s.connections_open.load(Ordering::Relaxed) as i64,
            )?;
            self.encode_operator_state(e, s)?;
        }
        drop(sources);
        let p = crate::service::edge::process_stats::read();
        if let Some(cpu) = p.cpu_seconds {
            counter(
                e,
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                cpu,
            )?;
        }
        if let Some(rss) = p.resident_bytes {
            gauge(
                e,
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                rss as i64,
            )?;
        }
        if let Some(vsize) = p.virtual_bytes {
            gauge(
                e,
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                vsize as i64,
            )?;
        }
        if let Some(fds) = p.open_fds {
            gauge(
                e,
                "process_open_fds",
                "Number of open file descriptors.",
                fds as i64,
            )?;
        }
        if let Some(max) = p.max_fds {
            gauge(
                e,
                "process_max_fds",
                "Maximum number of open file descriptors.",
                max as i64,
            )?;
        }
        if let Some(threads) = p.threads {
            gauge(
                e,
                "process_threads",
                "Number of OS threads in the process.",
                threads as i64,
            )?;
        }
        if let Some(start) = p.start_time_seconds {
            gauge(
                e,
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                start,
            )?;
        }
        Ok(())
    }
}
