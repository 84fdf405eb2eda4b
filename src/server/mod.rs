//! The server process: configuration (flags with env equivalents), logging, the store,
//! health and reflection next to `chess.v1.ChessService`, and graceful shutdown.
//!
//! [`serve`] reads as the order of start-up and shutdown; each step lives in a module of
//! its own: `config` (the flags and what they turn into), `compose` (the service stack),
//! `health` (the statuses and the store follower), `io` (accepting and serving
//! connections), `shutdown` (graceful shutdown and fail-stop).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic_health::ServingStatus;

use crate::service::edge::auth;
use crate::store::{GameStore, StoreError};

pub mod accept;
mod body_first;
mod compose;
mod config;
mod grpc_web;
mod health;
mod io;
mod log_flood;
mod logging;
mod metrics_endpoint;
mod ops;
mod page;
mod security;
mod serving;
mod shutdown;
pub mod tls;
pub mod traces;

pub use config::{Config, LogFormat, bind, open_store};
pub use grpc_web::WebConfig;
pub use logging::init_logging;
pub use ops::OpsConfig;
pub use security::SecurityConfig;
pub use shutdown::shutdown_signal;

/// The name health checks use for the chess service.
pub const SERVICE_NAME: &str = "chess.v1.ChessService";

/// Why the server could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The listening address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The game store does not open.
    #[error("cannot open the game store in {dir}: {source}")]
    Store {
        /// The data directory.
        dir: String,
        /// The store's error.
        source: StoreError,
    },
    /// The game database (--database-url) does not open.
    #[error("cannot open the game database (--database-url): {source}")]
    Database {
        /// The store's error.
        source: StoreError,
    },
    /// The reflection service cannot be built from the descriptors.
    #[error("cannot build server reflection: {0}")]
    Reflection(String),
    /// The gRPC server stopped with an error.
    #[error("the gRPC server failed: {0}")]
    Transport(String),
    /// The embedded store failed a write or a sync while serving: the server stopped
    /// (fail-stop), so that its restart recovers from what is on disk.
    #[error("stopped after a storage fault, to restart from what is on disk: {0}")]
    StoreFault(StoreError),
    /// The runtime's worker threads cannot start.
    #[error("cannot start worker threads: {0}")]
    Threads(std::io::Error),
    /// The token file cannot be loaded.
    #[error("{0}")]
    Tokens(auth::TokenFileError),
    /// TLS cannot be set up from the configured files.
    #[error("{0}")]
    Tls(tls::TlsError),
    /// A flag's value cannot be used (the message names the flag).
    #[error("{0}")]
    Config(String),
}

/// Serves until `shutdown` resolves, then shuts down gracefully: health NOT_SERVING, no
/// new calls, calls in flight finish (bounded by the grace period, so an open health
/// Watch stream cannot hold the process), and the store is made durable.
pub async fn serve(
    config: &Config,
    store: Arc<dyn GameStore>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServerError> {
    let local = listener.local_addr().map_err(|source| ServerError::Bind {
        addr: config.listen.clone(),
        source,
    })?;
    config::set_judge_budgets(config);
    let gate = config.security.gate()?;
    auth::reload_on_sighup(gate.clone());
    let tls = config::tls_acceptor(config)?;
    let health_listener = config::bind_health(config).await?;
    let web_listener = grpc_web::bind(config).await?;
    let (health, health_service) = health::reporter().await;

    let compose::Services {
        registry,
        service,
        in_flight,
        fen_cache,
        calls,
        connections,
        metrics_server,
    } = compose::services(config, &store, &health).await?;
    let chess = compose::chess_server(config, service);
    let web_router = match &web_listener {
        Some(_) => Some(grpc_web::router(
            config,
            gate.clone(),
            calls.clone(),
            chess.clone(),
        )?),
        None => None,
    };
    let router = compose::router(config, gate, calls, health_service, chess)?;

    let http_warnings = log_flood::report_left_out();
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let accept_limits = config.ops.accept_limits();
    let tls_on = tls.is_some();
    let web_server = match (web_listener, web_router) {
        (Some(web_listener), Some(web_router)) => {
            let web_addr = web_listener
                .local_addr()
                .map_err(|source| ServerError::Bind {
                    addr: config.web.grpc_web_listen.clone().unwrap_or_default(),
                    source,
                })?;
            // The main port's limits, with HTTP/1.1 allowed; one bound on connections
            // for both ports.
            let limits = accept::Limits {
                http1: true,
                ..accept_limits
            };
            let task = io::serve_main(
                web_router,
                web_listener,
                tls.as_ref().map(grpc_web::tls),
                limits,
                connections.clone(),
                stop_rx.clone(),
            );
            tracing::info!(address = %web_addr, tls = tls_on, "gRPC-Web on {web_addr}");
            Some(task)
        }
        _ => None,
    };
    let server = io::serve_main(router, listener, tls, accept_limits, connections, stop_rx);
    let health_server = io::serve_health_port(config, health_listener, &health, accept_limits)?;

    health::set_all(&health, ServingStatus::Serving).await;
    let follow_store = health::follow_store(&store, &health);
    tracing::info!(address = %local, tls = tls_on, "listening on {local}");
    let mut running = shutdown::Running {
        stop,
        server,
        web_server,
        http_warnings,
        health_server,
        metrics_server,
        follow_store,
    };

    // The embedded store's fault (a failed or uncertain write or sync): fail-stop.
    let mut fault_rx = store.fault();
    let fault = shutdown::store_fault(&mut fault_rx);

    tokio::select! {
        () = shutdown => {}
        Some(fault) = fault => {
            if let Some(task) = running.follow_store {
                task.abort();
            }
            shutdown::fail_stop(&health, &registry, &in_flight, running.stop, &mut running.server)
                .await;
            if let Some(health_server) = running.health_server {
                health_server.abort();
            }
            if let Some(web_server) = running.web_server {
                web_server.abort();
            }
            // No flush: the store serves nothing more, and its restart recovers from
            // what is on disk.
            return Err(ServerError::StoreFault(fault));
        }
        finished = &mut running.server => {
            // The server stopped by itself: that is a failure, not a shutdown.
            return Err(ServerError::Transport(match finished {
                Ok(Ok(())) => "stopped unexpectedly".to_string(),
                Ok(Err(e)) => e.to_string(),
                Err(e) => e.to_string(),
            }));
        }
    }

    let grace = Duration::from_secs(config.shutdown_grace_secs);
    shutdown::graceful(
        grace, &health, &registry, &in_flight, &fen_cache, &*store, running,
    )
    .await;
    Ok(())
}

/// The whole server process: open the store, bind, serve until a signal.
pub async fn run(config: Config) -> Result<(), ServerError> {
    let shutdown = shutdown_signal();
    let store = open_store(&config).await?;
    let listener = bind(&config).await?;
    serve(&config, store, listener, shutdown).await
}
