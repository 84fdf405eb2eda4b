//! Connection I/O: the main port and the plaintext health port served through the
//! server's own accept loop ([`super::accept`]), and the buffered writes of the main
//! port's connections. Why apart: what happens to a socket, from accept to the HTTP/2
//! server, sits in one place.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, BufWriter, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tonic::service::Routes;
use tonic::transport::server::{Connected, Router, TcpConnectInfo};
use tonic_health::server::HealthReporter;
use tower::{Layer, Service};

use super::{Config, ServerError, accept};

/// The main port, or the gRPC-Web listener: our own accept loop (see [`accept`]):
/// bounded connections, a deadline to start HTTP/2 (or HTTP/1.1, where the limits allow
/// it), a back-off when descriptors run out; then TLS when it is on, and the router,
/// until `stop` turns true (or its sender is gone).
pub fn serve_main<L, ResBody>(
    router: Router<L>,
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    accept_limits: accept::Limits,
    connections: Arc<AtomicUsize>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<Result<(), tonic::transport::Error>>
where
    L: Layer<Routes> + Send + 'static,
    L::Service: Service<http::Request<tonic::body::Body>, Response = http::Response<ResBody>>
        + Clone
        + Send
        + 'static,
    <L::Service as Service<http::Request<tonic::body::Body>>>::Future: Send,
    <L::Service as Service<http::Request<tonic::body::Body>>>::Error:
        Into<Box<dyn std::error::Error + Send + Sync>> + Send,
    ResBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    ResBody::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stopped = async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    };
    match tls {
        None => {
            let incoming = accept::incoming(listener, accept_limits, connections, |tcp| {
                std::future::ready(Ok(CoalescedIo::new(tcp)))
            });
            tokio::spawn(router.serve_with_incoming_shutdown(incoming, stopped))
        }
        // With TLS on, a plaintext client fails the handshake: the port speaks only TLS.
        Some(acceptor) => {
            let incoming = accept::incoming(listener, accept_limits, connections, move |tcp| {
                let acceptor = acceptor.clone();
                async move { acceptor.accept(CoalescedIo::new(tcp)).await }
            });
            tokio::spawn(router.serve_with_incoming_shutdown(incoming, stopped))
        }
    }
}

/// The plaintext health port: grpc.health.v1 alone, sharing the statuses of `health`.
pub fn serve_health_port(
    config: &Config,
    listener: Option<TcpListener>,
    health: &HealthReporter,
    accept_limits: accept::Limits,
) -> Result<Option<tokio::task::JoinHandle<Result<(), tonic::transport::Error>>>, ServerError> {
    Ok(match listener {
        Some(listener) => {
            let addr = listener.local_addr().map_err(|source| ServerError::Bind {
                addr: config.security.health_listen.clone().unwrap_or_default(),
                source,
            })?;
            let service = tonic_health::pb::health_server::HealthServer::new(
                tonic_health::server::HealthService::from_health_reporter(health.clone()),
            );
            // The main port's accept loop, with its own small bound: silent sockets
            // cannot take every descriptor of the process, nor keep a probe out.
            let limits = accept::Limits {
                max_connections: config.security.health_max_connections,
                flag: "--health-max-connections",
                ..accept_limits
            };
            let open = Arc::new(AtomicUsize::new(0));
            let incoming =
                accept::incoming(listener, limits, open, |tcp| std::future::ready(Ok(tcp)));
            let task = tokio::spawn(
                tonic::transport::Server::builder()
                    .add_service(service)
                    .serve_with_incoming(incoming),
            );
            tracing::info!(address = %addr, "plaintext health service on {addr}");
            Some(task)
        }
        None => None,
    })
}

/// A server connection whose writes are gathered in a buffer and sent by `poll_flush`.
///
/// Why: h2 (under tonic) keeps every DATA frame of 256 bytes or more out of its write
/// buffer when the socket takes vectored writes, and must write it out before it can
/// buffer the next frame: one `writev` per answer of that size (a LegalMoves answer is
/// 0.5-1.5 KB), where tiny answers (health) share one write among many streams.
/// Declaring writes non-vectored makes h2 copy frames under 1 KB into its buffer like
/// the small ones; the buffer here joins the two writes h2 then makes for a larger frame
/// (its buffer, then the payload) into one. h2 flushes at the end of every round of
/// work, so nothing waits in the buffer.
struct CoalescedIo(BufWriter<TcpStream>);

impl CoalescedIo {
    /// Large enough for h2's whole write buffer (16 KiB) plus a frame behind it.
    const CAPACITY: usize = 64 * 1024;

    fn new(stream: TcpStream) -> CoalescedIo {
        CoalescedIo(BufWriter::with_capacity(Self::CAPACITY, stream))
    }
}

impl Connected for CoalescedIo {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.0.get_ref().connect_info()
    }
}

impl AsyncRead for CoalescedIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for CoalescedIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    /// Not vectored: see the type's documentation.
    fn is_write_vectored(&self) -> bool {
        false
    }
}
