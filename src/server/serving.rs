//! The health of `chess.v1.ChessService` as a flag the metrics read (`chess_serving`).
//! Why through the health service's own Watch: the metric then says exactly what the
//! probes and load balancers are told, whoever sets the status (start, a database outage,
//! a storage fault, shutdown), with no second place to keep in step.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_stream::StreamExt as _;
use tonic_health::ServingStatus;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_server::Health as _;
use tonic_health::server::{HealthReporter, HealthService};

/// A flag that is true while health reports `service` SERVING, and the task that keeps
/// it so (abort it when the server stops).
pub fn mirror(
    health: &HealthReporter,
    service: &str,
) -> (Arc<AtomicBool>, tokio::task::JoinHandle<()>) {
    let serving = Arc::new(AtomicBool::new(false));
    let flag = serving.clone();
    let watcher = HealthService::from_health_reporter(health.clone());
    let request = tonic::Request::new(HealthCheckRequest {
        service: service.to_string(),
    });
    let task = tokio::spawn(async move {
        let Ok(stream) = watcher.watch(request).await else {
            return;
        };
        let mut stream = stream.into_inner();
        while let Some(Ok(answer)) = stream.next().await {
            flag.store(
                answer.status == ServingStatus::Serving as i32,
                Ordering::Relaxed,
            );
        }
        flag.store(false, Ordering::Relaxed);
    });
    (serving, task)
}
