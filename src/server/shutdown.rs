//! Waiting for the end: the signals that start a graceful shutdown, the storage fault
//! that starts a fail-stop, and how both wind the server down (health NOT_SERVING, no new
//! calls, the calls in flight given time to finish). Why apart: the order of these steps
//! is what probes, load balancers and the store's durability rely on.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

use super::health;
use crate::registry::Registry;
use crate::service::fen_cache::FenCache;
use crate::store::{GameStore, StoreError};

/// The tasks of a running server, and the sender that stops it accepting calls.
pub struct Running {
    /// Stops the main port (and the gRPC-Web listener) accepting calls.
    pub stop: tokio::sync::watch::Sender<bool>,
    /// The main port's server.
    pub server: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
    /// The gRPC-Web listener's server.
    pub web_server: Option<tokio::task::JoinHandle<Result<(), tonic::transport::Error>>>,
    /// The periodic report of the HTTP/2 stack's warnings left out.
    pub http_warnings: tokio::task::JoinHandle<()>,
    /// The plaintext health port's server.
    pub health_server: Option<tokio::task::JoinHandle<Result<(), tonic::transport::Error>>>,
    /// The `/metrics` server and the task that mirrors health into `chess_serving`.
    pub metrics_server: Option<(tokio::task::JoinHandle<()>, tokio::task::JoinHandle<()>)>,
    /// The task that follows the store's reachability into health.
    pub follow_store: Option<tokio::task::JoinHandle<()>>,
}

/// The embedded store's fault (a failed or uncertain write or sync), the reason to
/// fail-stop; pending for ever for a store without faults, or one gone without a fault.
pub async fn store_fault(
    fault_rx: &mut Option<tokio::sync::watch::Receiver<Option<StoreError>>>,
) -> Option<StoreError> {
    let Some(rx) = fault_rx.as_mut() else {
        return std::future::pending::<Option<StoreError>>().await;
    };
    let fault = match rx.wait_for(Option::is_some).await {
        Ok(fault) => fault.clone(),
        Err(_) => None,
    };
    match fault {
        Some(fault) => Some(fault),
        // The store is gone without a fault: nothing to stop for.
        None => std::future::pending().await,
    }
}

/// The graceful shutdown, once `shutdown` resolved: health NOT_SERVING, no new calls,
/// spectators' streams ended, the calls in flight given `grace` to finish, every task
/// stopped, and the store flushed.
pub async fn graceful(
    grace: Duration,
    health: &HealthReporter,
    registry: &Registry,
    in_flight: &AtomicUsize,
    fen_cache: &FenCache,
    store: &dyn GameStore,
    mut running: Running,
) {
    tracing::info!("shutting down: NOT_SERVING, finishing calls in flight");
    if let Some(task) = running.follow_store {
        task.abort();
    }
    health::set_all(health, ServingStatus::NotServing).await;
    let _ = running.stop.send(true);
    // Open WatchGame streams never end by themselves: end them (UNAVAILABLE) so that they
    // do not hold the shutdown, and stop the flag timers.
    registry.shutdown();
    if !wait_for_calls(&mut running.server, in_flight, grace).await {
        tracing::warn!(
            in_flight = in_flight.load(Ordering::SeqCst),
            "grace period of {grace:?} over; closing the remaining connections"
        );
    }
    running.server.abort();
    if let Some(web_server) = running.web_server {
        web_server.abort();
    }
    running.http_warnings.abort();
    if let Some(health_server) = running.health_server {
        health_server.abort();
    }
    if let Some((metrics_server, serving_task)) = running.metrics_server {
        metrics_server.abort();
        serving_task.abort();
    }
    let (hits, misses) = fen_cache.hits_and_misses();
    tracing::info!(
        hits,
        misses,
        entries = fen_cache.len(),
        "LegalMoves-by-FEN cache at shutdown"
    );

    match store.flush().await {
        Ok(()) => tracing::info!("store flushed; bye"),
        Err(e) => tracing::error!(error = %e, "flushing the store at shutdown failed"),
    }
}

/// How long a server that stopped after a storage fault keeps answering (health
/// NOT_SERVING, every chess call UNAVAILABLE) before it stops accepting calls: long enough
/// for probes and load balancers to see it, short enough for a quick restart.
const FAIL_STOP_LINGER: Duration = Duration::from_millis(500);

/// The server's answer to a storage fault (fail-stop, as PostgreSQL answers a failed
/// fsync): health NOT_SERVING at once (also on the health port), spectators' streams
/// ended, every call refused by the registry (UNAVAILABLE, `STORE_STOPPED`; the writes
/// caught by the fault got it, or DISK_FULL, already); then no new calls, the calls in
/// flight answered, and the caller exits non-zero so that the orchestrator restarts the
/// process from what is on disk.
pub async fn fail_stop(
    health: &HealthReporter,
    registry: &Registry,
    in_flight: &AtomicUsize,
    stop: tokio::sync::watch::Sender<bool>,
    server: &mut tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
) {
    tracing::error!(
        "storage fault: NOT_SERVING, refusing every call, exiting so that a restart recovers from what is on disk"
    );
    health::set_all(health, ServingStatus::NotServing).await;
    registry.shutdown();
    tokio::time::sleep(FAIL_STOP_LINGER).await;
    let _ = stop.send(true);
    if !wait_for_calls(server, in_flight, Duration::from_secs(2)).await {
        tracing::warn!("calls still in flight after the storage fault; closing them");
    }
    server.abort();
}

/// Waits until the server has closed every connection, or until no chess call has been
/// in flight for a short while (open health Watch streams never end by themselves), or
/// until the grace period is over. True unless the grace period ran out.
async fn wait_for_calls(
    server: &mut tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
    in_flight: &AtomicUsize,
    grace: Duration,
) -> bool {
    // Long enough for a finished call's response to be written out.
    const QUIET: Duration = Duration::from_millis(100);
    let deadline = tokio::time::Instant::now() + grace;
    let mut quiet_since: Option<tokio::time::Instant> = None;
    loop {
        let now = tokio::time::Instant::now();
        if in_flight.load(Ordering::SeqCst) == 0 {
            let since = *quiet_since.get_or_insert(now);
            if now.duration_since(since) >= QUIET {
                return true;
            }
        } else {
            quiet_since = None;
        }
        if now >= deadline {
            return false;
        }
        tokio::select! {
            _ = &mut *server => return true,
            () = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    }
}

/// Resolves on SIGTERM or SIGINT. The handlers are installed when this is called (not
/// when the future is first polled), so a signal that arrives while the server is still
/// starting is not lost. Must be called inside the runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let terminate = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            match (terminate, interrupt) {
                (Ok(mut terminate), Ok(mut interrupt)) => tokio::select! {
                    _ = terminate.recv() => tracing::info!("SIGTERM received"),
                    _ = interrupt.recv() => tracing::info!("SIGINT received"),
                },
                (Err(e), _) | (_, Err(e)) => {
                    tracing::error!(error = %e, "cannot listen for SIGTERM/SIGINT; stop the server with SIGKILL");
                    std::future::pending::<()>().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::info!("Ctrl-C received");
        } else {
            std::future::pending::<()>().await;
        }
    }
}
