//! A small fixed pool of threads for short CPU work (LegalMoves by FEN: parse, generate,
//! describe; tens of microseconds), off the async workers.
//!
//! Why not `spawn_blocking`: tokio's blocking pool grows a thread per concurrent task and
//! parks each one after its task, so at 64 concurrent calls most of the time went into
//! waking and parking threads (futex and condvar waits were ~45% of the server's profile).
//! A pool of one thread per core that drains a shared queue stays busy while there is
//! work, and a submit wakes a thread only when one is waiting (a `std::sync::mpsc`
//! receiver behind a mutex, as before, woke a waiting thread per job and handed the
//! mutex on with a second wake). Long work (perft) still goes to `spawn_blocking`, so it
//! can never hold this queue up.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

type Job = Box<dyn FnOnce() + Send + 'static>;

/// The queue the threads share.
struct Queue {
    jobs: VecDeque<Job>,
    /// Threads waiting for a job: a submit wakes one only if there is one, so while
    /// every thread is busy a submit makes no system call.
    idle: usize,
    closed: bool,
}

/// The job queue and the condvar its idle threads wait on: shared by the pool handle
/// (which submits) and every pool thread (which takes).
struct PoolQueue {
    queue: Mutex<Queue>,
    ready: Condvar,
}

/// The pool. Dropping it lets the threads finish the queued jobs and exit.
pub struct CpuPool {
    shared: Arc<PoolQueue>,
}

/// The pool is gone (shutting down) or the job panicked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the CPU pool did not run the job")]
pub struct NotRun;

impl CpuPool {
    /// A pool of `threads` threads (at least one).
    pub fn new(threads: usize) -> std::io::Result<CpuPool> {
        let shared = Arc::new(PoolQueue {
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                idle: 0,
                closed: false,
            }),
            ready: Condvar::new(),
        });
        for i in 0..threads.max(1) {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("cpu-pool-{i}"))
                .spawn(move || work(&shared))?;
        }
        Ok(CpuPool { shared })
    }

    /// Runs `work` on the pool and resolves with its result.
    pub async fn run<T, F>(&self, work: F) -> Result<T, NotRun>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            // The caller may have gone away; then nobody wants the answer.
            let _ = tx.send(work());
        });
        {
            let mut queue = self.shared.queue.lock().map_err(|_| NotRun)?;
            if queue.closed {
                return Err(NotRun);
            }
            queue.jobs.push_back(job);
            if queue.idle > 0 {
                self.shared.ready.notify_one();
            }
        }
        rx.await.map_err(|_| NotRun)
    }
}

impl Drop for CpuPool {
    fn drop(&mut self) {
        if let Ok(mut queue) = self.shared.queue.lock() {
            queue.closed = true;
        }
        self.shared.ready.notify_all();
    }
}

/// A pool thread: takes jobs until the pool is dropped and the queue is empty. The lock
/// is held only to take a job off the queue.
fn work(shared: &PoolQueue) {
    let Ok(mut queue) = shared.queue.lock() else {
        return;
    };
    loop {
        if let Some(job) = queue.jobs.pop_front() {
            drop(queue);
            // A panicking job drops its answer channel (the caller sees NotRun) and
            // leaves the thread serving.
            drop(std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)));
            queue = match shared.queue.lock() {
                Ok(q) => q,
                Err(_) => return,
            };
        } else if queue.closed {
            return;
        } else {
            queue.idle += 1;
            queue = match shared.ready.wait(queue) {
                Ok(q) => q,
                Err(_) => return,
            };
            queue.idle -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_jobs_off_the_calling_thread_and_returns_their_results() {
        let pool = CpuPool::new(2).unwrap();
        let caller = std::thread::current().id();
        let (sum, thread) = pool
            .run(|| ((1..=10u32).sum::<u32>(), std::thread::current().id()))
            .await
            .unwrap();
        assert_eq!(sum, 55);
        assert_ne!(thread, caller);
        let many: Vec<u64> = futures_join(&pool).await;
        assert_eq!(many, (0..100u64).map(|i| i * i).collect::<Vec<_>>());
    }

    async fn futures_join(pool: &CpuPool) -> Vec<u64> {
        let mut out = Vec::new();
        let pending: Vec<_> = (0..100u64).map(|i| pool.run(move || i * i)).collect();
        for p in pending {
            out.push(p.await.unwrap());
        }
        out
    }

    #[tokio::test]
    async fn a_panicking_job_is_reported_and_the_pool_keeps_working() {
        let pool = CpuPool::new(1).unwrap();
        let failed = pool
            .run(|| -> u32 { panic!("job panics on purpose") })
            .await;
        assert_eq!(failed, Err(NotRun));
        assert_eq!(
            pool.run(|| 7).await,
            Ok(7),
            "the only thread survived the panic"
        );
    }
}
