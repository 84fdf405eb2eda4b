//! `chess-server verify --data-dir DIR`: reads every record of a stopped embedded store,
//! decodes and replays it, checks sled against the commit ledger ([`super::rollback`]),
//! and prints one line per finding and a summary. It writes no record and no ledger;
//! sled's own recovery runs as at a start (copy the directory first to keep the damaged
//! bytes untouched).
#![warn(missing_docs)]

use std::io::Write;
use std::path::Path;

use super::StoreError;
use super::codec;
use super::ledger;
use super::rollback::{self, Trees};

/// What a verification found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Records in sled.
    pub games: usize,
    /// Records that decode and replay.
    pub clean: usize,
    /// Records that do not (they answer DATA_LOSS).
    pub damaged: usize,
    /// Acknowledged games sled holds at an older version, or not at all.
    pub behind: usize,
    /// Games an earlier accepted rollback lost (they answer DATA_LOSS).
    pub lost: usize,
    /// sled's last commit number.
    pub sled_commit: u64,
    /// The ledger's last commit number (`None`: no ledger).
    pub ledger_commit: Option<u64>,
    /// Why a start would be refused, if it would.
    pub refusal: Option<String>,
}

impl Summary {
    /// Whether nothing is damaged, behind or lost and a start would not be refused.
    pub fn ok(&self) -> bool {
        self.damaged == 0 && self.behind == 0 && self.lost == 0 && self.refusal.is_none()
    }
}

fn io(dir: &Path, what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io(format!("{what} ({}): {e}", dir.display()))
}

/// Verifies the store in `dir`, printing findings to `out`.
pub fn verify(dir: &Path, out: &mut dyn Write) -> Result<Summary, StoreError> {
    let mut summary = Summary::default();
    let w = |out: &mut dyn Write, line: String| {
        writeln!(out, "{line}").map_err(|e| StoreError::Io(format!("cannot print: {e}")))
    };
    if !dir.is_dir() {
        return Err(io(dir, "no such data directory", "not a directory"));
    }
    if let Err(StoreError::Rollback(why)) = rollback::check_db_present(dir) {
        w(out, format!("REFUSED {why}"))?;
        summary.ledger_commit = ledger::read(dir)?.map(|l| l.seq);
        summary.refusal = Some(why);
        w(out, summary_line(&summary))?;
        return Ok(summary);
    }
    let db = sled::Config::new().path(dir).open().map_err(|e| {
        io(
            dir,
            "cannot open the store (stop the server using it first)",
            e,
        )
    })?;
    let tree = |name: &str| {
        db.open_tree(name)
            .map_err(|e| io(dir, &format!("cannot open the {name} tree"), e))
    };
    let (meta, games, ended, deleted) = (
        tree("meta")?,
        tree("games")?,
        tree("ended")?,
        tree(rollback::DELETED_TREE)?,
    );
    let trees = Trees {
        meta: &meta,
        games: &games,
        ended: &ended,
        deleted: &deleted,
    };
    let exam = rollback::examine(dir, &trees)?;
    summary.sled_commit = exam.sled_seq;
    summary.ledger_commit = exam.ledger.as_ref().map(|_| exam.ledger_seq);
    summary.refusal = exam.refusal();
    if let Some(why) = &summary.refusal {
        w(out, format!("REFUSED {why}"))?;
    }
    for lag in &exam.behind {
        w(out, format!("BEHIND {lag}"))?;
    }
    for (id, v) in &exam.known_lost {
        w(
            out,
            format!(
                "LOST game '{id}': its acknowledged version {v} was lost by an accepted rollback"
            ),
        )?;
    }
    for id in &exam.ended_orphans {
        w(
            out,
            format!("ORPHAN game '{id}': in the ended-games index without a record"),
        )?;
    }
    if let Some(torn) = exam.ledger.as_ref().map(|l| l.torn_tail).filter(|&t| t > 0) {
        w(
            out,
            format!(
                "NOTE the ledger ends in {torn} bytes of a commit a crash interrupted (never acknowledged)"
            ),
        )?;
    }
    for kv in games.iter() {
        let (key, record) = kv.map_err(|e| io(dir, "cannot read the games", e))?;
        let id = String::from_utf8_lossy(&key);
        summary.games += 1;
        match codec::decode(&id, &record) {
            Ok(_) => summary.clean += 1,
            Err(e) => {
                summary.damaged += 1;
                w(out, format!("DAMAGED game '{id}': {e}"))?;
            }
        }
    }
    summary.behind = exam.behind.len();
    summary.lost = exam.known_lost.len();
    w(out, summary_line(&summary))?;
    Ok(summary)
}

fn summary_line(s: &Summary) -> String {
    let ledger = s.ledger_commit.map_or_else(
        || "no ledger".to_string(),
        |c| format!("ledger at commit {c}"),
    );
    format!(
        "{}: {} games, {} read and replayed cleanly, {} damaged, {} behind or missing, {} lost earlier; sled at commit {}, {ledger}",
        if s.ok() { "OK" } else { "DAMAGED" },
        s.games,
        s.clean,
        s.damaged,
        s.behind,
        s.lost,
        s.sled_commit,
    )
}
