//! Group commit: many writers, one flusher thread.
//!
//! A writer first makes its change (a sled insert), then asks for a ticket. The ticket
//! joins the queue of waiters. One flusher thread takes the whole queue as a batch, runs
//! the sync function once (sled `flush()` and, at the `Fsync` level, a real `fsync` of the
//! database files), and then answers every waiter of that batch. A change made before its
//! ticket was queued is covered by the sync that starts after the batch was taken, so the
//! ticket resolves only once that change is durable. Batches are taken in queue order, so
//! tickets queued in order resolve in order.
//!
//! One flusher and a synchronous sync function keep sled's flush single-threaded: several
//! concurrent `flush_async()` calls deadlock sled 0.34.7's thread pool.
//!
//! A failed sync is sticky: after an fsync error the kernel may have dropped the dirty
//! pages, and a later fsync can succeed without them. The waiters of that batch get the
//! sync's error ([`StoreError::DiskFull`] when the disk is full), every later ticket
//! [`StoreError::Stopped`], and [`GroupCommit::faults`] announces the fault, so that the
//! server stops serving and exits; the restart recovers from sled's log (fail-stop).
#![warn(missing_docs)]

use std::sync::{Arc, Condvar, Mutex, MutexGuard, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, watch};

use super::{Durable, StoreError};

/// The sync a batch runs; `full` asks for the strongest sync the store has whatever its
/// durability level (a [`GroupCommit::wait_blocking`] caller is in the batch). Fails with
/// [`StoreError::DiskFull`] when the disk is full, else with any error whose message
/// says what failed.
pub type SyncFn = Box<dyn FnMut(bool) -> Result<(), StoreError> + Send + 'static>;

enum Waiter {
    /// An async waiter; `full` asks for a full sync (see [`SyncFn`]).
    Async {
        tx: oneshot::Sender<Result<(), StoreError>>,
        full: bool,
    },
    Blocking(mpsc::SyncSender<Result<(), StoreError>>),
}

impl Waiter {
    fn answer(self, result: Result<(), StoreError>) {
        // A waiter that gave up (dropped its ticket) is not an error: the change is
        // still durable.
        match self {
            Waiter::Async { tx, .. } => {
                let _ = tx.send(result);
            }
            Waiter::Blocking(tx) => {
                let _ = tx.send(result);
            }
        }
    }
}

/// Counters of the flusher, for benchmarks and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// Syncs run.
    pub batches: u64,
    /// Waiters answered.
    pub waiters: u64,
    /// The largest batch.
    pub max_batch: u64,
    /// Time spent in the sync function.
    pub sync_time: Duration,
}

#[derive(Default)]
struct State {
    pending: Vec<Waiter>,
    shutdown: bool,
    /// Why the store stopped (a failed sync, or a failed write: [`GroupCommit::fail`]).
    failed: Option<String>,
    /// Queue length at which the flusher wants to be woken.
    want: usize,
    stats: GroupCommitStats,
}

/// The writers' queue (with the flusher's flags), the flusher's wake-up and the
/// store's fault: shared by the writers and the flusher thread.
struct CommitQueue {
    state: Mutex<State>,
    wake: Condvar,
    /// The fault, announced once (see [`GroupCommit::faults`]).
    fault: watch::Sender<Option<StoreError>>,
}

impl CommitQueue {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding this lock; if something ever did, the state is
        // still consistent (a queue and flags), so carry on with it.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records the first fault (later ones change nothing) and announces it.
    fn fail(&self, reason: String) {
        let mut st = self.lock();
        if st.failed.is_some() {
            return;
        }
        tracing::error!(%reason, "the store failed; it serves nothing more (fail-stop)");
        st.failed = Some(reason.clone());
        drop(st);
        self.fault.send_replace(Some(StoreError::Stopped(reason)));
    }
}

/// The queue of waiters and the flusher thread that serves it.
pub struct GroupCommit {
    shared: Arc<CommitQueue>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl GroupCommit {
    /// Starts the flusher thread. After each sync it waits at most `max_linger` (and at
    /// most half the sync's own duration) for the writers it just answered to queue
    /// again, so that they share the next sync; `Duration::ZERO` turns that off.
    pub fn start(
        name: &str,
        max_linger: Duration,
        sync: SyncFn,
    ) -> Result<GroupCommit, StoreError> {
        let shared = Arc::new(CommitQueue {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            fault: watch::Sender::new(None),
        });
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || flusher(&thread_shared, sync, max_linger))
            .map_err(|e| {
                StoreError::Io(format!("cannot start the flusher thread '{name}': {e}"))
            })?;
        Ok(GroupCommit {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Fails if the store was shut down or an earlier sync or write failed.
    pub fn check(&self) -> Result<(), StoreError> {
        let st = self.shared.lock();
        check_state(&st)
    }

    /// Stops the store after a failed write (`reason` says which): every later ticket
    /// fails with [`StoreError::Stopped`] and [`GroupCommit::faults`] announces it.
    pub fn fail(&self, reason: String) {
        self.shared.fail(reason);
    }

    /// The store's fault, once a sync or a write failed: [`StoreError::Stopped`].
    pub fn faults(&self) -> watch::Receiver<Option<StoreError>> {
        self.shared.fault.subscribe()
    }

    /// Queues a waiter and returns its ticket: it resolves after the next sync that starts
    /// after this call.
    pub fn ticket(&self) -> Result<Durable, StoreError> {
        self.async_ticket(false)
    }

    /// A ticket like [`GroupCommit::ticket`] whose sync is a full one, like
    /// [`GroupCommit::wait_blocking`]'s, for async callers (a flush at shutdown).
    pub fn full_ticket(&self) -> Result<Durable, StoreError> {
        self.async_ticket(true)
    }

    fn async_ticket(&self, full: bool) -> Result<Durable, StoreError> {
        let (tx, rx) = oneshot::channel();
        self.enqueue(Waiter::Async { tx, full })?;
        Ok(Durable::new(async move {
            rx.await.unwrap_or(Err(StoreError::Closed))
        }))
    }

    /// Queues a waiter and blocks the thread until its sync is done; that sync is a full
    /// one (see [`SyncFn`]). Do not call it on an async runtime's worker thread (use
    /// `spawn_blocking`).
    pub fn wait_blocking(&self) -> Result<(), StoreError> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.enqueue(Waiter::Blocking(tx))?;
        rx.recv().unwrap_or(Err(StoreError::Closed))
    }

    fn enqueue(&self, waiter: Waiter) -> Result<(), StoreError> {
        let mut st = self.shared.lock();
        check_state(&st)?;
        st.pending.push(waiter);
        let wake = st.pending.len() == 1 || st.pending.len() == st.want;
        drop(st);
        if wake {
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// The counters so far.
    pub fn stats(&self) -> GroupCommitStats {
        self.shared.lock().stats
    }

    /// Answers every queued waiter (one last sync), then stops the thread. Later tickets
    /// fail with [`StoreError::Closed`]. Idempotent.
    pub fn shutdown(&self) {
        self.shared.lock().shutdown = true;
        self.shared.wake.notify_one();
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(handle) = handle
            && handle.join().is_err()
        {
            tracing::error!("the store's flusher thread panicked");
        }
    }
}

impl Drop for GroupCommit {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn check_state(st: &State) -> Result<(), StoreError> {
    if st.shutdown {
        return Err(StoreError::Closed);
    }
    if let Some(reason) = &st.failed {
        return Err(StoreError::Stopped(reason.clone()));
    }
    Ok(())
}

fn flusher(shared: &CommitQueue, mut sync: SyncFn, max_linger: Duration) {
    // Writers answered by one sync come back together; without lingering they would
    // miss the next sync (which starts with whoever queued during this one) and split
    // into two alternating halves, each sync serving half of them. So after a sync the
    // flusher waits, briefly, until as many waiters are queued as were in the system
    // (the batch just answered plus those queued meanwhile).
    let mut target = 1usize;
    let mut deadline = Instant::now();
    loop {
        let batch = {
            let mut st = shared.lock();
            loop {
                if st.pending.is_empty() {
                    if st.shutdown {
                        return; // shut down and drained
                    }
                    st.want = 1;
                    st = shared.wake.wait(st).unwrap_or_else(|p| p.into_inner());
                    continue;
                }
                let now = Instant::now();
                if st.shutdown || st.pending.len() >= target || now >= deadline {
                    break;
                }
                st.want = target;
                st = shared
                    .wake
                    .wait_timeout(st, deadline - now)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            std::mem::take(&mut st.pending)
        };
        let already_failed = shared.lock().failed.clone();
        let full = batch
            .iter()
            .any(|w| matches!(w, Waiter::Blocking(_) | Waiter::Async { full: true, .. }));
        let began = Instant::now();
        let result = match already_failed {
            Some(reason) => Err(StoreError::Stopped(reason)),
            // A sync that panics (sled panics on some I/O errors) is a failed sync too,
            // not a dead flusher that leaves every later writer waiting.
            None => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sync(full)))
                .unwrap_or_else(|panic| {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    Err(StoreError::Io(format!("the sync panicked: {what}")))
                })
                .map_err(|e| {
                    // The batch learns why (a full disk is its own answer); everyone after it
                    // that the store stopped.
                    let reason = match &e {
                        StoreError::Io(m) | StoreError::Stopped(m) => m.clone(),
                        e => e.to_string(),
                    };
                    shared.fail(format!("sync: {reason}"));
                    match e {
                        e @ StoreError::DiskFull(_) => e,
                        _ => StoreError::Stopped(format!("sync: {reason}")),
                    }
                }),
        };
        let took = began.elapsed();
        {
            let mut st = shared.lock();
            let n = batch.len() as u64;
            st.stats.batches += 1;
            st.stats.waiters += n;
            st.stats.max_batch = st.stats.max_batch.max(n);
            st.stats.sync_time += took;
            target = batch.len() + st.pending.len();
        }
        for waiter in batch {
            waiter.answer(result.clone());
        }
        deadline = Instant::now() + max_linger.min(took / 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn every_waiter_is_answered_after_a_sync_that_began_after_it_queued() {
        // The "write" is a counter bump; the sync publishes the counter as durable.
        let written = Arc::new(AtomicU64::new(0));
        let durable = Arc::new(AtomicU64::new(0));
        let (w, d) = (Arc::clone(&written), Arc::clone(&durable));
        let gc = Arc::new(
            GroupCommit::start(
                "test-flusher",
                Duration::ZERO,
                Box::new(move |_| {
                    std::thread::sleep(Duration::from_millis(2));
                    d.store(w.load(Ordering::SeqCst), Ordering::SeqCst);
                    Ok(())
                }),
            )
            .unwrap(),
        );
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut tasks = Vec::new();
            for _ in 0..64 {
                let (gc, written, durable) =
                    (Arc::clone(&gc), Arc::clone(&written), Arc::clone(&durable));
                tasks.push(tokio::spawn(async move {
                    for _ in 0..20 {
                        let mine = written.fetch_add(1, Ordering::SeqCst) + 1;
                        gc.ticket().unwrap().wait().await.unwrap();
                        assert!(
                            durable.load(Ordering::SeqCst) >= mine,
                            "answered before its write was synced"
                        );
                    }
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
        });
        let stats = gc.stats();
        assert_eq!(stats.waiters, 64 * 20);
        assert!(
            stats.batches < stats.waiters,
            "no batching happened: {stats:?}"
        );
        gc.wait_blocking().unwrap();
        gc.shutdown();
        assert_eq!(gc.ticket().err(), Some(StoreError::Closed));
    }

    /// With lingering, writers answered together share the next sync instead of
    /// splitting into two alternating halves.
    #[test]
    fn lingering_keeps_a_cohort_of_writers_in_one_sync() {
        let gc = Arc::new(
            GroupCommit::start(
                "test-flusher",
                Duration::from_millis(5),
                Box::new(|_| {
                    std::thread::sleep(Duration::from_millis(4));
                    Ok(())
                }),
            )
            .unwrap(),
        );
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let writers = 32;
        rt.block_on(async {
            let tasks: Vec<_> = (0..writers)
                .map(|_| {
                    let gc = Arc::clone(&gc);
                    tokio::spawn(async move {
                        for _ in 0..30 {
                            gc.ticket().unwrap().wait().await.unwrap();
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        });
        let stats = gc.stats();
        let per_sync = stats.waiters as f64 / stats.batches as f64;
        assert!(
            per_sync > 0.75 * writers as f64,
            "{per_sync:.1} waiters per sync with {writers} writers: {stats:?}"
        );
    }

    #[test]
    fn only_blocking_waiters_and_full_tickets_ask_for_a_full_sync() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let gc = GroupCommit::start(
            "test-flusher",
            Duration::ZERO,
            Box::new(move |full| {
                log.lock().unwrap().push(full);
                Ok(())
            }),
        )
        .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(gc.ticket().unwrap().wait()).unwrap();
        gc.wait_blocking().unwrap();
        rt.block_on(gc.full_ticket().unwrap().wait()).unwrap();
        assert_eq!(*seen.lock().unwrap(), vec![false, true, true]);
    }

    #[test]
    fn a_failed_sync_is_sticky() {
        let calls = Arc::new(AtomicU64::new(0));
        let c = Arc::clone(&calls);
        let gc = GroupCommit::start(
            "test-flusher",
            Duration::ZERO,
            Box::new(move |_| {
                if c.fetch_add(1, Ordering::SeqCst) == 0 {
                    Err(StoreError::Io("disk on fire".into()))
                } else {
                    Ok(())
                }
            }),
        )
        .unwrap();
        let faults = gc.faults();
        assert_eq!(*faults.borrow(), None);
        let first = gc.wait_blocking();
        assert!(
            matches!(&first, Err(StoreError::Stopped(m)) if m.contains("disk on fire")),
            "{first:?}"
        );
        assert!(
            matches!(&*faults.borrow(), Some(StoreError::Stopped(m)) if m.contains("disk on fire")),
            "the fault is announced"
        );
        assert!(matches!(gc.check(), Err(StoreError::Stopped(_))));
        assert!(gc.ticket().is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1, "no sync after the failure");
    }

    #[test]
    fn a_full_disk_is_answered_as_such_then_the_store_is_stopped() {
        let gc = GroupCommit::start(
            "test-flusher",
            Duration::ZERO,
            Box::new(|_| {
                Err::<(), _>(StoreError::DiskFull(
                    "write of db: No space left on device".into(),
                ))
            }),
        )
        .unwrap();
        let first = gc.wait_blocking();
        assert!(matches!(&first, Err(StoreError::DiskFull(_))), "{first:?}");
        assert!(
            matches!(gc.check(), Err(StoreError::Stopped(m)) if m.contains("No space left")),
            "later writers learn that the store stopped, and why"
        );
    }

    #[test]
    fn shutdown_answers_queued_waiters() {
        let gc = GroupCommit::start(
            "test-flusher",
            Duration::ZERO,
            Box::new(|_| {
                std::thread::sleep(Duration::from_millis(20));
                Ok(())
            }),
        )
        .unwrap();
        let tickets: Vec<Durable> = (0..10).map(|_| gc.ticket().unwrap()).collect();
        gc.shutdown();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for t in tickets {
            assert_eq!(rt.block_on(t.wait()), Ok(()));
        }
    }
}
