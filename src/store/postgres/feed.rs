//! The change feed and the store's health.
//!
//! Every committed change is announced with `NOTIFY chess_games`, payload one line
//! `<id> <version>` (or `<id> deleted`) a change, so other replicas learn of it
//! (spectators) only once it is durable. Not inside the change's own transaction:
//! PostgreSQL holds one global lock from a notifying transaction's pre-commit until its
//! commit is flushed, which turns group commit off (measured in docs/durability.md,
//! "Spectators"). Instead one notifier task a replica sends the changes committed
//! meanwhile in one `pg_notify` after the commits, batching by itself under load. A
//! replica killed between a commit and its notify leaves that change unannounced: the
//! registry also re-checks watched games every second, which bounds the delay (and every
//! read checks the stored stamp anyway).
//!
//! A dedicated listening connection turns notifications into [`StoreChange`]s; when it has
//! to reconnect, notifications may have been missed, so it forgets its cached encodings,
//! renews the pool (see `session`) and sends [`StoreChange::Resync`] (every replica's
//! registry then drops every cached game) before it reports itself healthy again. It
//! doubles as the health probe: while it is down (or a ping on it goes unanswered) the
//! store reports itself unavailable, and it reconnects by itself.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, NoTls};

use super::Inner;
use super::db_clock::{CLOCK_READINGS_AT_CONNECT, read_clock};
use super::sql::NOTIFY;
use crate::store::StoreChange;

/// The channel every committed change is announced on (payload `<id> <version>`).
pub const CHANNEL: &str = "chess_games";

/// The payload word announcing a deletion in place of a version (`<id> deleted`).
pub(super) const DELETED: &str = "deleted";

/// PostgreSQL's limit on a notification payload is 8000 bytes: stay below it.
const PAYLOAD_MAX: usize = 7900;

impl Inner {
    /// Queues a committed change for the notifier.
    pub(super) fn announce(&self, id: &str, version: u64) {
        // Fails only once the notifier is gone (the store is closing): nothing to tell.
        let _ = self.committed.send(format!("{id} {version}"));
    }
}

/// The notifier: announces committed changes, as many as are queued in one notification
/// (so under load one `pg_notify` covers many commits).
pub(super) async fn notify(
    inner: std::sync::Weak<Inner>,
    mut queue: mpsc::UnboundedReceiver<String>,
) {
    while let Some(first) = queue.recv().await {
        let mut payload = first;
        while payload.len() < PAYLOAD_MAX - 80 {
            match queue.try_recv() {
                Ok(line) => {
                    payload.push('\n');
                    payload.push_str(&line);
                }
                Err(_) => break,
            }
        }
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let payload = &payload;
        let sent = inner
            .run(|client| async move {
                let stmt = client.prepare_cached(NOTIFY).await?;
                client.execute(&stmt, &[payload]).await
            })
            .await;
        if let Err(e) = sent {
            // Spectators elsewhere learn of these changes at their next re-check.
            tracing::warn!(error = %e, "cannot announce committed changes; other replicas see them at their next re-check");
        }
    }
}

/// The listener: a dedicated connection that LISTENs for changes and pings the database;
/// reports health and reconnects by itself.
pub(super) async fn listen(
    inner: std::sync::Weak<Inner>,
    pg: tokio_postgres::Config,
    timeout: Duration,
) {
    let mut was_up = true;
    loop {
        let outcome = listen_once(&inner, &pg, timeout).await;
        let Some(strong) = inner.upgrade() else {
            return;
        };
        strong.healthy.send_replace(false);
        strong.faults.record();
        if was_up {
            tracing::error!(error = %outcome, "the database is unreachable; calls fail as unavailable until it returns");
        }
        was_up = false;
        drop(strong);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// One listening session: connect, LISTEN, report healthy, forward notifications and
/// ping until something fails. Returns why it ended.
async fn listen_once(
    inner: &std::sync::Weak<Inner>,
    pg: &tokio_postgres::Config,
    timeout: Duration,
) -> String {
    let connected = tokio::time::timeout(timeout, pg.connect(NoTls)).await;
    let (client, mut connection) = match connected {
        Ok(Ok(pair)) => pair,
        Ok(Err(e)) => return format!("cannot connect: {e}"),
        Err(_) => return format!("cannot connect within {} ms", timeout.as_millis()),
    };
    let (tx, mut notes) = mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if tx.send(n.payload().to_string()).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            }
        }
    });
    let _abort = AbortOnDrop(driver);
    match tokio::time::timeout(timeout, client.batch_execute(&format!("LISTEN {CHANNEL}"))).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return format!("cannot LISTEN: {e}"),
        Err(_) => return "LISTEN did not answer in time".into(),
    }
    // Maybe another server (a failover): its clock is read afresh, the best of a few
    // round trips.
    let Some(db_clock) = inner.upgrade().map(|strong| strong.clock.clone()) else {
        return "the store is closed".into();
    };
    db_clock.forget();
    for _ in 0..CLOCK_READINGS_AT_CONNECT {
        if let Err(e) = read_clock(&client, &db_clock, timeout).await {
            return e;
        }
    }
    {
        let Some(strong) = inner.upgrade() else {
            return "the store is closed".into();
        };
        // Changes may have been missed while not listening: nothing remembered of a game
        // is trusted any more. Told before health says SERVING again (the registry drops
        // every cached game on it), and the encodings are forgotten here.
        strong.encoders.clear();
        let before = strong
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if before > 0 {
            // The pooled connections lived through the outage, and some may still be in
            // TCP's retransmission back-off: the idle ones are closed (calls make fresh
            // ones); those in use are probed when they come back (`session`).
            let closed = strong.pool.retain(|_, _| false).removed.len();
            tracing::info!(closed, "the database is back: pooled connections renewed");
        }
        let _ = strong.changes.send(StoreChange::Resync);
        strong.report_clock();
        tracing::info!(
            clock_offset_seconds = strong.clock.offset_seconds(),
            "listening for game changes on the database"
        );
    }
    let mut ping = tokio::time::interval(Duration::from_millis(1000));
    ping.tick().await;
    loop {
        tokio::select! {
            note = notes.recv() => {
                let Some(payload) = note else {
                    return "the listening connection closed".into();
                };
                let Some(strong) = inner.upgrade() else {
                    return "the store is closed".into();
                };
                for change in payload.lines().filter_map(parse_payload) {
                    let _ = strong.changes.send(change);
                }
            }
            _ = ping.tick() => {
                // The ping reads the database's clock: one round trip, two uses.
                if let Err(e) = read_clock(&client, &db_clock, timeout).await {
                    return e;
                }
                let Some(strong) = inner.upgrade() else {
                    return "the store is closed".into();
                };
                strong.report_clock();
            }
        }
    }
}

struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One line of a payload, `<id> <version>` or `<id> deleted`: the id may not contain a
/// space (ids are checked by the service), so split at the last one anyway.
fn parse_payload(payload: &str) -> Option<StoreChange> {
    let (id, version) = payload.rsplit_once(' ')?;
    if version == DELETED {
        return Some(StoreChange::Deleted { id: id.to_string() });
    }
    Some(StoreChange::Game {
        id: id.to_string(),
        version: version.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_parse_and_garbage_is_ignored() {
        assert_eq!(
            parse_payload("g1 42"),
            Some(StoreChange::Game {
                id: "g1".into(),
                version: 42
            })
        );
        assert_eq!(
            parse_payload("g 1 deleted"),
            Some(StoreChange::Deleted { id: "g 1".into() })
        );
        assert_eq!(parse_payload("nospace"), None);
        assert_eq!(parse_payload("g1 x"), None);
    }
}
