//! Rollback detection at start: what sled recovered, checked against the commit ledger
//! ([`super::ledger`]) before anything is served.
//!
//! sled's recovery stops at the first damaged segment of its log and keeps what comes
//! before it, without a word; a damaged page can lose the games it holds. So a start
//! reads sled's last commit number (`meta/commit`) and every game's version (one pass over
//! the `games` tree, each record's checksum checked and its version read from its framing, no
//! replay), and compares
//! them with the ledger:
//!
//! - sled behind the ledger: "sled recovered up to commit N, the ledger says M: M−N
//!   acknowledged commits are missing";
//! - sled one commit ahead: a crash between sled's flush and the ledger's append, a commit
//!   never acknowledged; its changes (kept in sled's marker) complete the ledger;
//! - any game whose acknowledged version sled does not hold (older, or no record and no
//!   tombstone of a delete), and any ended-index key without its record.
//!
//! Any of these refuses the start ([`StoreError::Rollback`]), unless the operator accepts
//! the rollback: then those games are recorded as lost in the ledger and answer DATA_LOSS
//! until deleted. A record whose version cannot be read is not a refusal: that game alone
//! answers DATA_LOSS when loaded (its checksum fails).
#![warn(missing_docs)]

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use super::StoreError;
use super::codec;
use super::ledger::{self, COMMIT_KEY, Change, LedgerState, UNREADABLE};

/// sled's tree of tombstones: the id (and version) of every game deleted since the last
/// start, written in the delete's transaction, so that a delete sled made durable before
/// its commit reached the ledger is not taken for a lost game.
pub const DELETED_TREE: &str = "deleted";

/// A game whose acknowledged version sled does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lag {
    /// The game.
    pub id: String,
    /// Its last acknowledged version, per the ledger.
    pub acked: u64,
    /// The version sled holds; `None` when sled has no record of it.
    pub held: Option<u64>,
}

impl std::fmt::Display for Lag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.held {
            Some(v) => write!(
                f,
                "game '{}': acknowledged at version {}, sled holds version {v}",
                self.id, self.acked
            ),
            None => write!(
                f,
                "game '{}': acknowledged at version {}, sled holds no record of it",
                self.id, self.acked
            ),
        }
    }
}

/// The trees of the store that the check reads.
pub struct Trees<'a> {
    /// `meta` (the commit marker).
    pub meta: &'a sled::Tree,
    /// `games`.
    pub games: &'a sled::Tree,
    /// `ended`.
    pub ended: &'a sled::Tree,
    /// [`DELETED_TREE`].
    pub deleted: &'a sled::Tree,
}

/// What sled holds, compared with the ledger.
#[derive(Debug, Default)]
pub struct Examination {
    /// sled's last commit number (0: none).
    pub sled_seq: u64,
    /// The ledger (completed with sled's marker when sled is one commit ahead); `None`
    /// when there is no ledger file.
    pub ledger: Option<LedgerState>,
    /// The ledger's own last commit number, before any completion.
    pub ledger_seq: u64,
    /// Every game sled holds and the version its record holds ([`UNREADABLE`] if damaged).
    pub sled_games: BTreeMap<String, u64>,
    /// Games whose acknowledged version sled does not hold.
    pub behind: Vec<Lag>,
    /// Games whose record's version cannot be read: they answer DATA_LOSS.
    pub damaged: Vec<String>,
    /// Games an earlier accepted rollback lost (they answer DATA_LOSS), with the version
    /// that was acknowledged.
    pub known_lost: Vec<(String, u64)>,
    /// Ended-index keys without a record.
    pub ended_orphans: Vec<String>,
    /// Whether the ledger's last commit, unconfirmed and missing from sled, was taken
    /// back (a crash during its sync; see [`LedgerState::drop_unconfirmed`]).
    pub unconfirmed_dropped: bool,
}

fn sled_err(dir: &Path, what: &str, e: sled::Error) -> StoreError {
    StoreError::Io(format!("{what} ({}): {e}", dir.display()))
}

/// The gap message of the contract.
pub fn gap_message(sled_seq: u64, ledger_seq: u64) -> String {
    format!(
        "sled recovered up to commit {sled_seq}, the ledger says {ledger_seq}: {} acknowledged commits are missing",
        ledger_seq - sled_seq
    )
}

/// Before sled opens (and would create an empty database): a ledger that has commits next
/// to a missing or empty `db` is the refusal of a store that lost everything.
pub fn check_db_present(dir: &Path) -> Result<(), StoreError> {
    let db_len = std::fs::metadata(dir.join("db")).map_or(0, |m| m.len());
    if db_len > 0 {
        return Ok(());
    }
    match ledger::read(dir)? {
        Some(l) if l.seq > 0 => Err(StoreError::Rollback(format!(
            "sled's db file is missing or empty; {}",
            gap_message(0, l.seq)
        ))),
        _ => Ok(()),
    }
}

/// Reads sled's marker and every game's version and compares them with the ledger in
/// `dir`.
pub fn examine(dir: &Path, trees: &Trees<'_>) -> Result<Examination, StoreError> {
    let mut exam = Examination::default();
    let mut sled_changes = None;
    if let Some(marker) = trees
        .meta
        .get(COMMIT_KEY)
        .map_err(|e| sled_err(dir, "cannot read the commit marker", e))?
    {
        let (seq, changes) = ledger::decode_marker(&marker).ok_or_else(|| {
            StoreError::Rollback("sled's commit marker (meta/commit) is damaged".into())
        })?;
        exam.sled_seq = seq;
        sled_changes = Some(changes);
    }
    exam.ledger = ledger::read(dir)?;
    if let Some(l) = exam.ledger.as_mut() {
        exam.ledger_seq = l.seq;
        if l.seq == exam.sled_seq + 1 && l.drop_unconfirmed() {
            // Its ledger append and sled's fsync ran at once and the process did not
            // close cleanly: a crash in that sync, never acknowledged.
            exam.unconfirmed_dropped = true;
        }
        if exam.sled_seq == l.seq + 1
            && let Some(changes) = sled_changes
        {
            // The crash came between sled's flush and the ledger's append.
            l.apply(changes);
            l.seq = exam.sled_seq;
        }
    }
    for kv in trees.games.iter() {
        let (key, record) = kv.map_err(|e| sled_err(dir, "cannot read the games", e))?;
        let id = String::from_utf8_lossy(&key).into_owned();
        let version = codec::checked_version(&id, &record).unwrap_or(UNREADABLE);
        exam.sled_games.insert(id, version);
    }
    for key in trees.ended.iter().keys() {
        let key = key.map_err(|e| sled_err(dir, "cannot read the ended-games index", e))?;
        let id = String::from_utf8_lossy(&key).into_owned();
        if !exam.sled_games.contains_key(&id) {
            exam.ended_orphans.push(id);
        }
    }
    let Some(l) = &exam.ledger else {
        return Ok(exam);
    };
    for (id, change) in &l.games {
        let acked = match *change {
            Change::Lost(v) => {
                exam.known_lost.push((id.clone(), v));
                continue;
            }
            Change::Live(v) => v,
            Change::Deleted => continue,
        };
        match exam.sled_games.get(id) {
            Some(&UNREADABLE) if acked != UNREADABLE => exam.damaged.push(id.clone()),
            Some(&held) if held < acked && acked != UNREADABLE => exam.behind.push(Lag {
                id: id.clone(),
                acked,
                held: Some(held),
            }),
            Some(_) => {}
            None => {
                let tombstone = trees
                    .deleted
                    .contains_key(id.as_bytes())
                    .map_err(|e| sled_err(dir, "cannot read the tombstones", e))?;
                if !tombstone {
                    exam.behind.push(Lag {
                        id: id.clone(),
                        acked,
                        held: None,
                    });
                }
            }
        }
    }
    Ok(exam)
}

impl Examination {
    /// Why this store must not be served as it is; `None` when sled holds every
    /// acknowledged change.
    pub fn refusal(&self) -> Option<String> {
        let mut why = Vec::new();
        match &self.ledger {
            None if self.sled_seq > 0 => why.push(format!(
                "sled has commits up to {} but the commit ledger ({}) is missing",
                self.sled_seq,
                ledger::LEDGER_FILE
            )),
            None => {}
            Some(l) if l.seq > self.sled_seq => why.push(gap_message(self.sled_seq, l.seq)),
            Some(l) if self.sled_seq > l.seq => why.push(format!(
                "sled is at commit {}, but the ledger says only {}: the ledger is not this store's, or it is damaged",
                self.sled_seq, l.seq
            )),
            Some(_) => {}
        }
        if !self.behind.is_empty() {
            let first: Vec<String> = self.behind.iter().take(3).map(Lag::to_string).collect();
            why.push(format!(
                "{} acknowledged games are behind or missing ({}{})",
                self.behind.len(),
                first.join("; "),
                if self.behind.len() > 3 { "; …" } else { "" }
            ));
        }
        if !self.ended_orphans.is_empty() {
            why.push(format!(
                "the ended-games index has {} keys without a record (first: '{}')",
                self.ended_orphans.len(),
                self.ended_orphans[0]
            ));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }
}

/// The outcome of a start's check: the commit to continue from and the games lost.
pub struct Settled {
    /// The last commit number.
    pub seq: u64,
    /// Games that answer DATA_LOSS (an accepted rollback lost them), with the version
    /// that was acknowledged.
    pub lost: HashMap<String, u64>,
}

/// At start, after [`examine`]: refuses a store that lost acknowledged changes (unless
/// `accept`, which logs every loss and records it), then makes the ledger a fresh
/// checkpoint of what sled holds and clears the tombstones.
pub fn settle(
    dir: &Path,
    db: &sled::Db,
    trees: &Trees<'_>,
    exam: Examination,
    accept: bool,
) -> Result<Settled, StoreError> {
    if let Some(why) = exam.refusal() {
        if !accept {
            return Err(StoreError::Rollback(why));
        }
        tracing::error!(
            "starting anyway (--accept-store-rollback): {why}. {} games answer DATA_LOSS",
            exam.behind.len()
        );
        for lag in &exam.behind {
            tracing::error!(game_id = %lag.id, acked = lag.acked, held = ?lag.held, "lost by the accepted rollback: {lag}; it answers DATA_LOSS");
        }
        for id in &exam.ended_orphans {
            trees
                .ended
                .remove(id.as_bytes())
                .map_err(|e| sled_err(dir, "cannot repair the ended-games index", e))?;
        }
    }
    if exam.ledger.is_none() && !exam.sled_games.is_empty() {
        tracing::warn!(
            games = exam.sled_games.len(),
            "no commit ledger: starting one from what sled holds (the first start of this build on this store)"
        );
    }
    if let Some(torn) = exam.ledger.as_ref().map(|l| l.torn_tail).filter(|&t| t > 0) {
        tracing::warn!(
            bytes = torn,
            "the commit ledger ends in a partial commit (a crash while it was written; never acknowledged)"
        );
    }
    if exam.unconfirmed_dropped {
        tracing::warn!(
            commit = exam.ledger_seq,
            "the ledger's last commit is not in sled and no clean close confirmed it: a crash during its sync, never acknowledged; taken back"
        );
    }
    for id in &exam.damaged {
        tracing::error!(game_id = %id, "stored game is damaged (its record's version does not read); it answers DATA_LOSS");
    }
    let ledger_seq = exam.ledger.as_ref().map_or(0, |l| l.seq);
    let seq = exam.sled_seq.max(ledger_seq);
    let mut lost: HashMap<String, u64> = exam.known_lost.into_iter().collect();
    lost.extend(exam.behind.iter().map(|l| (l.id.clone(), l.acked)));
    if !lost.is_empty() {
        tracing::warn!(
            games = lost.len(),
            "games lost by an accepted store rollback answer DATA_LOSS until deleted"
        );
    }
    let io = |what: &str, e: sled::Error| sled_err(dir, what, e);
    if seq != exam.sled_seq {
        trees
            .meta
            .insert(COMMIT_KEY, ledger::encode_marker(seq, &[]))
            .map_err(|e| io("cannot write the commit marker", e))?;
    }
    db.flush()
        .map_err(|e| io("cannot flush the commit marker", e))?;
    std::fs::File::open(dir.join("db"))
        .and_then(|f| f.sync_all())
        .map_err(|e| StoreError::Io(format!("fsync of {}: {e}", dir.join("db").display())))?;
    let mut games: BTreeMap<String, Change> = exam
        .sled_games
        .into_iter()
        .map(|(id, v)| (id, Change::Live(v)))
        .collect();
    for (id, v) in &lost {
        games.insert(id.clone(), Change::Lost(*v));
    }
    ledger::write_checkpoint(dir, seq, &games)?;
    trees
        .deleted
        .clear()
        .map_err(|e| io("cannot clear the tombstones", e))?;
    Ok(Settled { seq, lost })
}

/// Games an accepted rollback lost, with the version that was acknowledged: they answer
/// DATA_LOSS until deleted.
pub struct LostGames(Mutex<HashMap<String, u64>>);

impl LostGames {
    /// The games [`settle`] found lost.
    pub fn new(lost: HashMap<String, u64>) -> LostGames {
        LostGames(Mutex::new(lost))
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, u64>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The acknowledged version that was lost, if game `id` is lost.
    pub fn version(&self, id: &str) -> Option<u64> {
        self.lock().get(id).copied()
    }

    /// The game is deleted: it is no longer lost.
    pub fn forget(&self, id: &str) {
        self.lock().remove(id);
    }

    /// DATA_LOSS for a lost game.
    pub fn check(&self, id: &str) -> Result<(), StoreError> {
        match self.version(id) {
            None => Ok(()),
            Some(v) => Err(StoreError::DataLoss {
                id: id.to_string(),
                reason: format!(
                    "its acknowledged version {v} was lost: the server was started with --accept-store-rollback on a store that recovered less than its commit ledger says; delete the game or restore it from a backup"
                ),
            }),
        }
    }
}
