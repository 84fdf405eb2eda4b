//! Group commit of saves: the saves that arrive while one batch is being written go
//! together in the next statement (one `UPDATE … FROM unnest(…)`, each row its own
//! compare-and-set on the version and the write token), so under load many Plays share
//! one transaction and one WAL flush (measured in docs/benchmarks/postgres.md, "Kept:
//! group commit of saves"). A batch that waits longer than `lock_timeout` for a row is
//! written again skipping held rows (`SKIP LOCKED`), and those saves are tried again in
//! later batches, so one held row never fails the unrelated saves beside it.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio_postgres::error::SqlState;

use super::Inner;
use super::row::Row;
use super::sql::{UPDATE_MANY, UPDATE_MANY_SKIPPING};
use crate::store::StoreError;

/// How long a save whose row was locked by another session waits before it is tried
/// again (until its caller gives up).
const BUSY_RETRY: Duration = Duration::from_millis(10);

/// The most saves one batch statement carries.
const BATCH_MAX: usize = 256;

/// A save waiting to be written in the next batch: the row, the version and token it must
/// replace (no token: the version alone, for a caller that knows none), and where to say
/// whether it did.
pub(super) struct PendingSave {
    pub(super) id: String,
    pub(super) row: Row,
    pub(super) expected: i64,
    pub(super) expected_token: Option<i64>,
    pub(super) done: oneshot::Sender<Result<bool, StoreError>>,
    /// Its row was found held by another session: its batches skip held rows from the
    /// start.
    pub(super) busy: bool,
}

impl Inner {
    /// Writes a batch of saves in one statement (one transaction, one commit), each a
    /// compare-and-set on its game's version and token; tells each save whether it
    /// replaced its row, and announces those that did. Returns the saves whose row another
    /// session held locked, to be tried again.
    async fn write_batch(&self, mut batch: Vec<PendingSave>) -> Vec<PendingSave> {
        // One lock order for every batch (`free` locks in id order too).
        batch.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        let ids: Vec<&str> = batch.iter().map(|s| s.id.as_str()).collect();
        let versions: Vec<i64> = batch.iter().map(|s| s.row.version).collect();
        let records: Vec<&[u8]> = batch.iter().map(|s| s.row.record.as_slice()).collect();
        let statuses: Vec<&str> = batch.iter().map(|s| s.row.status).collect();
        let flags: Vec<Option<i64>> = batch.iter().map(|s| s.row.flag_at_ms).collect();
        let expected: Vec<i64> = batch.iter().map(|s| s.expected).collect();
        let tokens: Vec<i64> = batch.iter().map(|s| s.row.token).collect();
        let expected_tokens: Vec<Option<i64>> = batch.iter().map(|s| s.expected_token).collect();
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
            &ids,
            &versions,
            &records,
            &statuses,
            &flags,
            &expected,
            &tokens,
            &expected_tokens,
        ];
        // The everyday statement, unless a save in the batch already met a held row.
        let skipping = batch.iter().any(|s| s.busy);
        let outcome = self
            .run(|client| async move {
                let mut rows = None;
                if !skipping {
                    let stmt = client.prepare_cached(UPDATE_MANY).await?;
                    match client.query(&stmt, &params).await {
                        Ok(written) => rows = Some(written),
                        // A row held past lock_timeout: again, skipping held rows.
                        Err(e) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => {}
                        Err(e) => return Err(e),
                    }
                }
                let rows = match rows {
                    Some(rows) => rows,
                    None => {
                        let stmt = client.prepare_cached(UPDATE_MANY_SKIPPING).await?;
                        client.query(&stmt, &params).await?
                    }
                };
                let (mut written, mut busy) = (HashSet::new(), HashSet::new());
                for row in rows {
                    let id: String = row.get(0);
                    if row.get::<_, bool>(1) {
                        written.insert(id);
                    } else {
                        busy.insert(id);
                    }
                }
                Ok((written, busy))
            })
            .await;
        let mut again = Vec::new();
        for save in batch {
            let answer = match &outcome {
                Ok((_, busy)) if busy.contains(&save.id) => {
                    again.push(PendingSave { busy: true, ..save });
                    continue;
                }
                Ok((written, _)) => {
                    let updated = written.contains(&save.id);
                    if updated {
                        self.announce(&save.id, save.row.version.max(0) as u64);
                    }
                    Ok(updated)
                }
                Err(e) => Err(e.clone()),
            };
            // The caller may have given up waiting: nothing to tell.
            let _ = save.done.send(answer);
        }
        again
    }
}

/// The save writer: writes the saves queued meanwhile (up to [`BATCH_MAX`], one per game)
/// as one batch, one batch at a time. Under load many saves share a statement and a
/// commit (and so a WAL flush); alone, a save is written at once, by itself. One batch in
/// flight beat two and four (BENCHMARKS.md, PostgreSQL): the saves that queue behind it
/// make the next batch bigger, and PostgreSQL's CPU per Play falls with the batch size.
/// A save whose row another session holds locked goes into a later batch, after
/// [`BUSY_RETRY`], until it is written or its caller gives up.
pub(super) async fn write_saves(
    inner: std::sync::Weak<Inner>,
    mut queue: mpsc::UnboundedReceiver<PendingSave>,
) {
    // Saves that go before the queue's: a second save of a game already in a batch (a
    // batch updates a row once), and busy saves whose retry time has come.
    let mut held: VecDeque<PendingSave> = VecDeque::new();
    let mut busy: Vec<PendingSave> = Vec::new();
    let mut retry_at = tokio::time::Instant::now();
    loop {
        // A caller that gave up waiting (it answered UNAVAILABLE) is not written late.
        busy.retain(|save| !save.done.is_closed());
        if held.is_empty() {
            let next = if busy.is_empty() {
                queue.recv().await
            } else {
                tokio::select! {
                    save = queue.recv() => save,
                    () = tokio::time::sleep_until(retry_at) => {
                        held.extend(busy.drain(..));
                        continue;
                    }
                }
            };
            match next {
                Some(save) => held.push_back(save),
                None => return,
            }
        }
        if !busy.is_empty() && tokio::time::Instant::now() >= retry_at {
            held.extend(busy.drain(..));
        }
        let mut ids = HashSet::new();
        let mut batch = Vec::new();
        let mut later = VecDeque::new();
        let mut take = |save: PendingSave, batch: &mut Vec<PendingSave>| {
            if ids.insert(save.id.clone()) {
                batch.push(save);
            } else {
                later.push_back(save);
            }
        };
        while let Some(save) = held.pop_front() {
            take(save, &mut batch);
        }
        while batch.len() < BATCH_MAX {
            match queue.try_recv() {
                Ok(save) => take(save, &mut batch),
                Err(_) => break,
            }
        }
        held = later;
        batch.retain(|save| !save.done.is_closed());
        if batch.is_empty() {
            continue;
        }
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let again = inner.write_batch(batch).await;
        if !again.is_empty() {
            if busy.is_empty() {
                retry_at = tokio::time::Instant::now() + BUSY_RETRY;
            }
            busy.extend(again);
        }
    }
}
