//! The health the server reports (grpc.health.v1): the overall server ("") and
//! `chess.v1.ChessService`, and the task that follows the store's reachability. Why
//! apart: probes and load balancers act on these statuses, so who sets them, and when,
//! is kept in one place.

use std::sync::Arc;

use tonic_health::ServingStatus;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::server::HealthReporter;

use super::SERVICE_NAME;
use crate::store::GameStore;

/// The health reporter and its service, both statuses NOT_SERVING until the server is
/// ready.
pub async fn reporter() -> (HealthReporter, HealthServer<impl Health>) {
    let (health, health_service) = tonic_health::server::health_reporter();
    set_all(&health, ServingStatus::NotServing).await;
    (health, health_service)
}

/// Sets the overall server's status (""), then the chess service's.
pub async fn set_all(health: &HealthReporter, status: ServingStatus) {
    health.set_service_status("", status).await;
    health.set_service_status(SERVICE_NAME, status).await;
}

/// A store that can become unreachable (a database) makes the service NOT_SERVING
/// while it is; the overall server ("") stays SERVING, so a liveness probe does not
/// restart a process that cannot bring the database back. The task that follows it
/// (abort it when the server stops), or None for a store always reachable.
pub fn follow_store(
    store: &Arc<dyn GameStore>,
    health: &HealthReporter,
) -> Option<tokio::task::JoinHandle<()>> {
    store.health().map(|mut up| {
        let health = health.clone();
        tokio::spawn(async move {
            loop {
                let serving = *up.borrow_and_update();
                let status = if serving {
                    ServingStatus::Serving
                } else {
                    ServingStatus::NotServing
                };
                health.set_service_status(SERVICE_NAME, status).await;
                if up.changed().await.is_err() {
                    return;
                }
            }
        })
    })
}
