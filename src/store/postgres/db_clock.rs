//! The database's clock as this replica knows it: read on the listener's connection (a few
//! round trips at connect, then its once-a-second ping), and the store available only
//! while it is known closely enough to charge moves by (see [`DbClock`]).

use std::time::Duration;

use super::Inner;
use super::sql::CLOCK;
use crate::store::clock::{self, DbClock};

/// Round trips to the database's clock when the listener connects (the least uncertain
/// counts).
pub(super) const CLOCK_READINGS_AT_CONNECT: usize = 3;

impl Inner {
    /// Reports the store available while the database's clock is known closely enough
    /// (called with the change feed up), and logs when that changes.
    pub(super) fn report_clock(&self) {
        let uncertainty = self.clock.uncertainty();
        let known = uncertainty.is_some_and(|u| u <= self.max_clock_uncertainty);
        let mut was = known;
        self.healthy.send_if_modified(|up| {
            was = std::mem::replace(up, known);
            was != known
        });
        if !known && was {
            tracing::warn!(
                uncertainty_ms = uncertainty.map(|u| u.as_millis()),
                max_ms = self.max_clock_uncertainty.as_millis(),
                "the database's clock is not known closely enough to charge moves by; unavailable until it is"
            );
        } else if known && !was {
            tracing::debug!("the database's clock is known closely enough");
        }
    }
}

/// Reads the database's clock once into `db_clock`; the error says why it could not.
pub(super) async fn read_clock(
    client: &tokio_postgres::Client,
    db_clock: &DbClock,
    timeout: Duration,
) -> Result<(), String> {
    let sent = std::time::Instant::now();
    let sent_unix_us = clock::local_unix_us();
    let answer = match tokio::time::timeout(timeout, client.simple_query(CLOCK)).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => return Err(format!("ping failed: {e}")),
        Err(_) => return Err(format!("ping unanswered for {} ms", timeout.as_millis())),
    };
    let rtt = sent.elapsed();
    let db_unix_us = answer
        .iter()
        .find_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0)?.parse::<i64>().ok(),
            _ => None,
        })
        .ok_or_else(|| "the database's clock could not be read".to_string())?;
    db_clock.record(sent, sent_unix_us, rtt, db_unix_us);
    Ok(())
}
