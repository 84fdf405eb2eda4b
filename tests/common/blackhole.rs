//! A TCP blackhole between one process and a server: a proxy on a loopback port that
//! forwards both ways until it is [`Blackhole::cut`], then holds every byte (new
//! connections are accepted and held too) until [`Blackhole::heal`]. To either side that
//! is a network partition like an `iptables … -j DROP`: nothing arrives, nothing is
//! refused, and only timeouts notice. Why a proxy and not iptables: it needs no root and
//! no packet filter, so the partition tests run (and fail when they should) everywhere
//! the other replica tests run.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A proxy that can cut the traffic through it. Stops (closing its connections) when
/// dropped.
pub struct Blackhole {
    /// Where clients connect.
    pub addr: SocketAddr,
    cut: Arc<AtomicBool>,
    /// Connections numbered below this stay held even when healed (see
    /// [`Blackhole::heal_new_only`]).
    wedged_below: Arc<AtomicU64>,
    accepted: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Blackhole {
    /// A proxy to `upstream`, forwarding.
    pub async fn start(upstream: SocketAddr) -> Blackhole {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port for the proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let cut = Arc::new(AtomicBool::new(false));
        let wedged_below = Arc::new(AtomicU64::new(0));
        let accepted = Arc::new(AtomicU64::new(0));
        let (flag, wedged, count) = (cut.clone(), wedged_below.clone(), accepted.clone());
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((client, _)) = listener.accept().await {
                let held = Held {
                    cut: flag.clone(),
                    wedged_below: wedged.clone(),
                    number: count.fetch_add(1, Ordering::SeqCst),
                };
                connections.spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    tokio::join!(pump(cr, sw, held.clone()), pump(sr, cw, held));
                });
            }
        });
        Blackhole {
            addr,
            cut,
            wedged_below,
            accepted,
            task,
        }
    }

    /// `url` (a `postgres://…@host:port/…` URL) through this proxy.
    pub fn url(&self, url: &str) -> String {
        let (scheme, rest) = url.split_once("://").expect("a URL with a scheme");
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let user = authority
            .rsplit_once('@')
            .map_or(String::new(), |(u, _)| format!("{u}@"));
        format!("{scheme}://{user}{}/{path}", self.addr)
    }

    /// From now on nothing passes, either way.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
    }

    /// Traffic passes again (what was held is delivered).
    pub fn heal(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }

    /// New connections pass again, but those made before stay held for good: what a
    /// client sees of connections still in TCP's retransmission back-off after a real
    /// cut heals (open, and silent for seconds).
    pub fn heal_new_only(&self) {
        self.wedged_below
            .store(self.accepted.load(Ordering::SeqCst), Ordering::SeqCst);
        self.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for Blackhole {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The address a `postgres://…@host:port/…` URL connects to.
pub fn upstream_of(url: &str) -> SocketAddr {
    let rest = url.split_once("://").expect("a URL with a scheme").1;
    let authority = rest.split_once('/').map_or(rest, |(a, _)| a);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    std::net::ToSocketAddrs::to_socket_addrs(host_port)
        .ok()
        .and_then(|mut addrs| addrs.next())
        .unwrap_or_else(|| panic!("'{host_port}' is no host and port"))
}

/// What decides whether one connection's traffic is held.
#[derive(Clone)]
struct Held {
    cut: Arc<AtomicBool>,
    wedged_below: Arc<AtomicU64>,
    number: u64,
}

impl Held {
    fn now(&self) -> bool {
        self.cut.load(Ordering::SeqCst) || self.number < self.wedged_below.load(Ordering::SeqCst)
    }
}

/// Copies `from` to `to`, holding each chunk while the traffic is held.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    held: Held,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        while held.now() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}
