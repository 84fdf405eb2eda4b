//! `--metrics-listen ADDR`: Prometheus scrapes `GET /metrics` here (plain HTTP/1.1, no
//! token: keep the address on a network only the scraper reaches, as the Kubernetes
//! NetworkPolicy does).

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::service::edge::metrics::Metrics;

/// OpenMetrics text, what prometheus-client writes (Prometheus reads it natively).
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The longest a scrape connection may stay open.
const CONNECTION_LIMIT: Duration = Duration::from_secs(30);

/// Serves `/metrics` on `listener` until the task is aborted.
pub async fn serve(listener: TcpListener, metrics: &'static Metrics) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors, most likely: wait rather than spin.
                tracing::debug!(error = %e, "accepting a metrics connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        tokio::spawn(async move {
            let service = hyper::service::service_fn(
                move |request: hyper::Request<hyper::body::Incoming>| async move {
                    Ok::<_, Infallible>(answer(&request, metrics))
                },
            );
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(CONNECTION_LIMIT, connection).await;
        });
    }
}

fn answer<B>(request: &hyper::Request<B>, metrics: &Metrics) -> hyper::Response<Full<Bytes>> {
    let (status, content_type, body) = if request.uri().path() == "/metrics" {
        (hyper::StatusCode::OK, CONTENT_TYPE, metrics.encode())
    } else {
        (
            hyper::StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "not found: the metrics are at /metrics\n".to_string(),
        )
    };
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    response
}
