//! The server's own accept loop, in front of tonic: a bound on open connections, a
//! deadline for a connection to start HTTP/2, and a back-off when the process runs out
//! of descriptors.
//!
//! Why our own: tonic's loop logs a failed `accept` at trace level and calls `accept`
//! again at once. Out of descriptors (EMFILE), the connection stays in the kernel's
//! queue and `accept` fails again immediately, so the loop spun at 0.9 of a core with
//! nothing logged. And tonic closes no connection that never speaks: a socket that
//! sends nothing holds a descriptor for ever.
//!
//! - `--max-connections`: a connection beyond the bound is accepted and closed at once
//!   (the client sees the connection reset and can try another instance at once, where
//!   leaving it in the kernel's queue would make it wait for its deadline). Unless a
//!   connection has not started HTTP/2 yet: then the oldest such one is closed to make
//!   room (and the new one kept once it has closed), so that sockets that never speak cannot keep a well-behaved client (a health
//!   probe) out until their handshake timeout.
//! - `--handshake-timeout-secs`: the TLS handshake (when TLS is on) and the 24 bytes of
//!   the HTTP/2 connection preface (or, on the gRPC-Web listener, an HTTP/1.1 request
//!   line's method and space) must arrive within it, or the connection is closed; a
//!   connection that sends anything else is closed as soon as it is read.
//! - Out of descriptors (EMFILE, ENFILE, ENOBUFS, ENOMEM), the loop waits before the
//!   next `accept`, from 5 ms doubling up to 1 s, and logs a warning (at most one line
//!   every 10 s, with the count of failures in between); the first success resets it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::Connected;

use crate::service::edge::metrics::{self, AcceptFailure, ConnectionRefusal};
use crate::service::edge::shed::Every;

/// The HTTP/2 connection preface every client sends first (RFC 9113, 3.4).
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The first wait after `accept` fails for want of descriptors, and the longest.
const BACKOFF_MIN: Duration = Duration::from_millis(5);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// How often a warning about refused connections or failed accepts is logged at most.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// Connections handed to tonic that have not been taken yet.
const QUEUE: usize = 64;

/// The limits of the accept loop.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once (0: no bound).
    pub max_connections: usize,
    /// The flag that sets `max_connections`, for log lines.
    pub flag: &'static str,
    /// The longest a connection may take to start HTTP/2 (and its TLS handshake).
    pub handshake_timeout: Duration,
    /// Whether an HTTP/1.1 request line may open a connection too (the gRPC-Web
    /// listener, which browsers reach over HTTP/1.1); the main port speaks only HTTP/2.
    pub http1: bool,
}

/// What the first bytes of a connection say it speaks.
#[derive(Debug, PartialEq, Eq)]
enum Opening {
    /// The HTTP/2 connection preface.
    Http2,
    /// An HTTP/1.1 request line's method and space (`POST `, `OPTIONS `).
    Http1,
    /// Anything else.
    Other,
}

/// The longest HTTP method the gRPC-Web listener expects (`OPTIONS`).
const LONGEST_METHOD: usize = 7;

/// Decides what `opening` speaks, or `None` if more bytes are needed to tell.
fn classify(opening: &[u8], http1: bool) -> Option<Opening> {
    if opening.len() <= PREFACE.len() && opening == &PREFACE[..opening.len()] {
        return (opening.len() == PREFACE.len()).then_some(Opening::Http2);
    }
    if !http1 {
        return Some(Opening::Other);
    }
    for (i, &b) in opening.iter().enumerate() {
        if b == b' ' {
            return Some(if i > 0 {
                Opening::Http1
            } else {
                Opening::Other
            });
        }
        if !b.is_ascii_uppercase() || i >= LONGEST_METHOD {
            return Some(Opening::Other);
        }
    }
    None
}

/// Reads a connection's first bytes until they say what it speaks (at most the 24 bytes
/// of the HTTP/2 preface); the bytes are kept to be read again by the server.
async fn read_opening<IO: AsyncRead + Unpin>(
    io: &mut IO,
    http1: bool,
) -> io::Result<(Opening, [u8; PREFACE.len()], usize)> {
    let mut opening = [0u8; PREFACE.len()];
    let mut len = 0;
    loop {
        let n = io.read(&mut opening[len..]).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        len += n;
        if let Some(kind) = classify(&opening[..len], http1) {
            return Ok((kind, opening, len));
        }
    }
}

/// Whether an `accept` error means the process or system is out of descriptors or
/// memory: waiting helps (nothing else does), retrying at once only burns a core.
fn out_of_resources(e: &io::Error) -> bool {
    // EMFILE 24, ENFILE 23, ENOBUFS 105, ENOMEM 12 on Linux.
    matches!(e.raw_os_error(), Some(23 | 24 | 105 | 12))
}

/// The longest the accept loop waits for an evicted connection to close.
const EVICTION_WAIT: Duration = Duration::from_millis(100);

/// Waits until fewer than `max` connections are open (an evicted one has closed), at
/// most [`EVICTION_WAIT`]; false if it did not happen by then.
async fn room_made(open: &AtomicUsize, max: usize) -> bool {
    let started = tokio::time::Instant::now();
    let mut tries = 0u32;
    while open.load(Ordering::Acquire) >= max {
        if started.elapsed() >= EVICTION_WAIT {
            return false;
        }
        // The evicted task only has to wake and drop its socket: give it the thread
        // first, then poll gently.
        if tries < 16 {
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tries += 1;
    }
    true
}

/// Counts a connection as open while it lives.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Accepts connections on `listener`, runs `handshake` on each (TLS, or just the
/// socket's wrapping) and reads its HTTP/2 preface, all within the limits, and yields
/// the connections ready for tonic. `open` counts the connections open (for metrics).
/// Ends when the stream is dropped (the server stops taking connections); the listener
/// is closed then.
pub fn incoming<IO, H, Fut>(
    listener: TcpListener,
    limits: Limits,
    open: Arc<AtomicUsize>,
    handshake: H,
) -> ReceiverStream<io::Result<Conn<IO>>>
where
    H: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = io::Result<IO>> + Send + 'static,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(QUEUE);
    let handshake = Arc::new(handshake);
    let max = if limits.max_connections == 0 {
        usize::MAX
    } else {
        limits.max_connections
    };
    tokio::spawn(async move {
        let full_log = Every::new(LOG_EVERY);
        let evict_log = Every::new(LOG_EVERY);
        let mut starting = Starting::default();
        let exhausted_log = Every::new(LOG_EVERY);
        let mut backoff = Duration::ZERO;
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = tx.closed() => return,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => {
                    backoff = Duration::ZERO;
                    accepted
                }
                Err(e) if out_of_resources(&e) => {
                    metrics::accept_error(AcceptFailure::OutOfDescriptors);
                    backoff = (backoff * 2).clamp(BACKOFF_MIN, BACKOFF_MAX);
                    if let Some(held_back) = exhausted_log.check() {
                        tracing::warn!(
                            error = %e,
                            failed_since_last_line = held_back,
                            open_connections = open.load(Ordering::Relaxed),
                            "cannot accept connections: {e}; waiting up to {BACKOFF_MAX:?} between tries (raise the descriptor limit, `ulimit -n`, or lower --max-connections)"
                        );
                    }
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        () = tx.closed() => return,
                    }
                    continue;
                }
                Err(e) => {
                    // The connection failed before it was taken (reset by the client).
                    metrics::accept_error(AcceptFailure::Other);
                    tracing::debug!(error = %e, "accepting a connection failed");
                    continue;
                }
            };
            if open.load(Ordering::Acquire) >= max && starting.evict_oldest() {
                metrics::connection_refused(ConnectionRefusal::MaxConnections);
                if let Some(held_back) = evict_log.check() {
                    tracing::warn!(
                        max_connections = max,
                        evicted_since_last_line = held_back,
                        "{max} connections are open, the most {} allows: closing the oldest that has not started HTTP/2 to make room",
                        limits.flag
                    );
                }
                // Keep the new one only once the evicted one has closed: under a flood,
                // `accept` is ready again at once, and admitting before the evicted
                // tasks run would hold far more descriptors than the bound.
                if !room_made(&open, max).await {
                    drop(stream);
                    continue;
                }
            } else if open.load(Ordering::Acquire) >= max {
                drop(stream);
                metrics::connection_refused(ConnectionRefusal::MaxConnections);
                if let Some(held_back) = full_log.check() {
                    tracing::warn!(
                        max_connections = max,
                        refused_since_last_line = held_back,
                        "refusing connections: {max} are open, the most {} allows",
                        limits.flag
                    );
                }
                continue;
            }
            open.fetch_add(1, Ordering::AcqRel);
            let guard = Open(open.clone());
            // Serving from our own listener skips tonic's socket options: set TCP_NODELAY
            // here, or small responses wait for delayed ACKs (~40 ms each on Linux).
            let _ = stream.set_nodelay(true);
            let tx = tx.clone();
            let handshake = handshake.clone();
            let (evict, started_flag) = starting.add();
            tokio::spawn(async move {
                let handshake = tokio::time::timeout(limits.handshake_timeout, async {
                    let mut io = (*handshake)(stream).await?;
                    let opening = read_opening(&mut io, limits.http1).await?;
                    Ok::<_, io::Error>((io, opening))
                });
                let started = tokio::select! {
                    started = handshake => started,
                    () = evict.notified() => {
                        tracing::debug!(%peer, "closed a connection that had not started HTTP/2, to make room");
                        return;
                    }
                };
                started_flag.store(true, Ordering::Release);
                match started {
                    Ok(Ok((io, (Opening::Http2 | Opening::Http1, opening, len)))) => {
                        let conn = Conn {
                            io,
                            opening,
                            opening_len: len,
                            replayed: 0,
                            _open: guard,
                        };
                        let _ = tx.send(Ok(conn)).await;
                    }
                    Ok(Ok(_)) => {
                        metrics::connection_refused(ConnectionRefusal::NotHttp2);
                        tracing::debug!(%peer, "closed a connection that does not speak HTTP/2");
                    }
                    Ok(Err(e)) => {
                        metrics::connection_refused(ConnectionRefusal::HandshakeFailed);
                        tracing::debug!(%peer, error = %e, "a connection failed before HTTP/2 started");
                    }
                    Err(_) => {
                        metrics::connection_refused(ConnectionRefusal::HandshakeTimeout);
                        tracing::debug!(
                            %peer,
                            "closed a connection that did not start HTTP/2 within --handshake-timeout-secs ({:?})",
                            limits.handshake_timeout
                        );
                    }
                }
            });
        }
    });
    ReceiverStream::new(rx)
}

/// The connections still in their handshake, oldest first: each with the signal that
/// closes it and a flag raised when its handshake ends (either way).
#[derive(Default)]
struct Starting(std::collections::VecDeque<(Arc<tokio::sync::Notify>, Arc<AtomicBool>)>);

impl Starting {
    /// Tracks a new connection; its close signal and its handshake-ended flag.
    fn add(&mut self) -> (Arc<tokio::sync::Notify>, Arc<AtomicBool>) {
        // Forget the ones done, so the queue is only as long as the handshakes running
        // (plus the done ones behind a slow one, swept when they pile up).
        while self
            .0
            .front()
            .is_some_and(|(_, done)| done.load(Ordering::Acquire))
        {
            self.0.pop_front();
        }
        if self.0.len() > 1024 {
            self.0.retain(|(_, done)| !done.load(Ordering::Acquire));
        }
        let entry = (
            Arc::new(tokio::sync::Notify::new()),
            Arc::new(AtomicBool::new(false)),
        );
        self.0.push_back(entry.clone());
        entry
    }

    /// Closes the oldest connection still in its handshake; false if there is none.
    fn evict_oldest(&mut self) -> bool {
        while let Some((close, done)) = self.0.pop_front() {
            if !done.load(Ordering::Acquire) {
                close.notify_one();
                return true;
            }
        }
        false
    }
}

/// A connection that has sent its HTTP/2 preface: the preface is read again first (the
/// server's HTTP/2 layer expects it), then the connection itself. Counts as open until
/// dropped.
pub struct Conn<IO> {
    io: IO,
    /// The first bytes, read to tell what the connection speaks.
    opening: [u8; PREFACE.len()],
    opening_len: usize,
    /// How many of them the server has read again.
    replayed: usize,
    _open: Open,
}

impl<IO: Connected> Connected for Conn<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Conn<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.replayed < self.opening_len {
            let (opening, replayed) = (self.opening, self.replayed);
            let rest = &opening[replayed..self.opening_len];
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            self.replayed += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Conn<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn descriptor_exhaustion_is_told_apart() {
        assert!(out_of_resources(&io::Error::from_raw_os_error(24)));
        assert!(out_of_resources(&io::Error::from_raw_os_error(23)));
        assert!(!out_of_resources(&io::Error::from_raw_os_error(103)));
        assert!(!out_of_resources(&io::Error::other("x")));
    }

    #[test]
    fn the_opening_tells_http2_http1_and_anything_else_apart() {
        use Opening::{Http1, Http2, Other};
        // HTTP/2: only the whole preface; any prefix of it needs more bytes.
        assert_eq!(classify(PREFACE, false), Some(Http2));
        assert_eq!(classify(PREFACE, true), Some(Http2));
        assert_eq!(classify(b"PRI * HTTP", true), None);
        assert_eq!(classify(b"P", false), None);
        // HTTP/1.1 only where it is allowed, and only as a method and a space.
        assert_eq!(classify(b"POST /chess.v1", true), Some(Http1));
        assert_eq!(classify(b"OPTIONS / HTTP/1.1", true), Some(Http1));
        assert_eq!(classify(b"POST /chess.v1", false), Some(Other));
        assert_eq!(classify(b"PO", true), None);
        assert_eq!(classify(b"post /", true), Some(Other));
        assert_eq!(classify(b" POST", true), Some(Other));
        assert_eq!(classify(b"LONGMETHOD /", true), Some(Other));
        assert_eq!(classify(b"\x16\x03\x01", true), Some(Other));
    }

    #[tokio::test]
    async fn an_http1_opening_is_read_again_before_the_rest() {
        let (mut client, mut server) = tokio::io::duplex(256);
        tokio::io::AsyncWriteExt::write_all(&mut client, b"OPTIONS / HTTP/1.1\r\n\r\n")
            .await
            .expect("write");
        drop(client);
        let (kind, opening, len) = read_opening(&mut server, true).await.expect("read");
        assert_eq!(kind, Opening::Http1);
        let mut conn = Conn {
            io: server,
            opening,
            opening_len: len,
            replayed: 0,
            _open: Open(Arc::new(AtomicUsize::new(1))),
        };
        let mut all = Vec::new();
        conn.read_to_end(&mut all).await.expect("read");
        assert_eq!(all, b"OPTIONS / HTTP/1.1\r\n\r\n");
    }

    #[tokio::test]
    async fn the_preface_is_read_again_before_the_rest() {
        let (mut client, server) = tokio::io::duplex(256);
        tokio::io::AsyncWriteExt::write_all(&mut client, b"after")
            .await
            .expect("write");
        drop(client);
        let mut conn = Conn {
            io: server,
            opening: *PREFACE,
            opening_len: PREFACE.len(),
            replayed: 0,
            _open: Open(Arc::new(AtomicUsize::new(1))),
        };
        let mut all = Vec::new();
        conn.read_to_end(&mut all).await.expect("read");
        let mut expected = PREFACE.to_vec();
        expected.extend_from_slice(b"after");
        assert_eq!(all, expected);
    }
}
