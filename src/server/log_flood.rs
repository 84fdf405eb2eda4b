//! The HTTP/2 stack's own warnings, rate-limited.
//!
//! Why: h2 and hyper log a WARN line for each connection a hostile client misuses (a
//! rapid-reset client made h2 write 17,365 lines in 10 s: "remotely-reset pending-accept
//! streams reached limit"). Those lines come from libraries the server does not call,
//! so they are limited where every event passes: this `tracing` layer lets each of
//! their warnings through at most once a second (the rate-limited log of
//! [`Every`](crate::service::edge::shed::Every)), counts the ones it holds back, and
//! [`report_left_out`] logs that count every [`REPORT_EVERY`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

use crate::service::edge::shed::Every;

/// How often one warning of the HTTP/2 stack is let through at most.
const LINE_EVERY: Duration = Duration::from_secs(1);

/// How often the count of warnings left out is logged (when there are any).
pub const REPORT_EVERY: Duration = Duration::from_secs(10);

/// Warnings of the HTTP/2 stack left out since the last report.
static LEFT_OUT: AtomicU64 = AtomicU64::new(0);

/// Whether an event is one of the HTTP/2 stack's warnings (or worse).
fn limited(event: &Event<'_>) -> bool {
    let meta = event.metadata();
    let target = meta.target();
    *meta.level() <= tracing::Level::WARN
        && ["h2", "hyper", "hyper_util"]
            .iter()
            .any(|c| target == *c || target.strip_prefix(c).is_some_and(|r| r.starts_with("::")))
}

/// The layer: holds back the HTTP/2 stack's warnings beyond one a second per call site.
#[derive(Default)]
pub struct HttpWarnings {
    /// By call site: an event's name is `event FILE:LINE`, one per call site.
    sites: Mutex<HashMap<&'static str, Arc<Every>>>,
}

impl HttpWarnings {
    fn admit(&self, site: &'static str) -> bool {
        let every = {
            let mut sites = self.sites.lock().unwrap_or_else(|p| p.into_inner());
            sites
                .entry(site)
                .or_insert_with(|| Arc::new(Every::new(LINE_EVERY)))
                .clone()
        };
        if every.check().is_some() {
            return true;
        }
        LEFT_OUT.fetch_add(1, Ordering::Relaxed);
        false
    }
}

impl<S: Subscriber> Layer<S> for HttpWarnings {
    fn event_enabled(&self, event: &Event<'_>, _ctx: Context<'_, S>) -> bool {
        !limited(event) || self.admit(event.metadata().name())
    }
}

/// Logs, every [`REPORT_EVERY`], how many warnings of the HTTP/2 stack were left out
/// (nothing when none were). Runs until the runtime stops.
pub fn report_left_out() -> tokio::task::JoinHandle<()> {
    tokio::spawn(async {
        let mut tick = tokio::time::interval(REPORT_EVERY);
        tick.tick().await;
        loop {
            tick.tick().await;
            let left_out = LEFT_OUT.swap(0, Ordering::Relaxed);
            if left_out > 0 {
                tracing::warn!(
                    left_out,
                    "{left_out} warnings of the HTTP/2 stack (h2, hyper) left out of the log in the last {REPORT_EVERY:?}: each is logged at most once a second"
                );
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_site_is_let_through_once_a_second() {
        let layer = HttpWarnings::default();
        let site = "event src/proto/streams/recv.rs:913";
        assert!(layer.admit(site));
        let before = LEFT_OUT.load(Ordering::Relaxed);
        for _ in 0..100 {
            assert!(!layer.admit(site));
        }
        assert!(LEFT_OUT.load(Ordering::Relaxed) >= before + 100);
        assert!(
            layer.admit("event src/proto/ping_pong.rs:128"),
            "another site"
        );
    }
}
