//! The journal of a crash test, and the check of a reopened store against it.
//!
//! A crash-test client writes one line before it sends each change and one line when the
//! change is acknowledged; the process under test is then killed (`kill -9`) at a random
//! moment and restarted, and every game of the journal must be in one of at most two
//! states: exactly as acknowledged, or with the one change still in flight applied.
//!
//! Lines (game ids contain no whitespace; moves are in the variant's UCI spelling):
//!
//! ```text
//! BEGIN <game> NEW <start FEN>    a NewGame is about to be sent
//! BEGIN <game> PLAY <uci>         a Play is about to be sent
//! BEGIN <game> UNDO               an Undo is about to be sent
//! BEGIN <game> EVENT <name>       another change is about to be sent (a draw offer or
//!                                 its answer): one event, no move
//! BEGIN <game> DELETE             a DeleteGame is about to be sent (acknowledged: the
//!                                 game must be gone; in flight: gone or as it was)
//! ACK <game>                      the change in flight on <game> was acknowledged
//! FAIL <game>                     it was definitively refused (not applied)
//! ```
//!
//! Every change is one event of the game's log, so a game's version (its number of
//! events) is checked too: a NEW game is at version 0 and each PLAY, UNDO or EVENT adds
//! one (clients must not send a move that would lapse a pending draw offer, which adds
//! two). At most one change may be in flight per game, so give each client its own games. The
//! store-level test (`tests/store/crash.rs`, whose child is its own test binary) writes
//! these lines; a server-level test with gRPC clients can write the same lines and reuse
//! [`Journal`].

use std::collections::BTreeMap;

/// One change to a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    New {
        start_fen: String,
    },
    Play {
        uci: String,
    },
    Undo,
    /// A change that is one event and no move.
    Event {
        name: String,
    },
    /// The game is deleted.
    Delete,
}

/// A game as the journal and the store see it: its start FEN, its moves and its version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameState {
    pub start_fen: String,
    pub moves: Vec<String>,
    pub version: u64,
}

/// A journal that does not follow the rules above: the test itself is broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JournalError {
    #[error("line {line}: cannot parse '{text}': expected BEGIN/ACK/FAIL <game> ...")]
    Parse { line: usize, text: String },
    #[error(
        "line {line}: game '{game}' already has a change in flight; give each client its own games"
    )]
    TwoInFlight { line: usize, game: String },
    #[error("line {line}: ACK/FAIL for game '{game}', which has no change in flight")]
    NothingInFlight { line: usize, game: String },
    #[error("line {line}: {what} on game '{game}', which was never acknowledged as created")]
    NoSuchGame {
        line: usize,
        game: String,
        what: &'static str,
    },
    #[error("line {line}: NEW for game '{game}', which already exists")]
    Exists { line: usize, game: String },
    #[error("line {line}: UNDO acknowledged on game '{game}', which has no move")]
    UndoAtStart { line: usize, game: String },
}

/// What the store holds for a game, compared with the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Exactly as acknowledged (or absent, for a game never acknowledged).
    Acknowledged,
    /// The change in flight at the crash is there too.
    InFlightApplied,
}

/// The store lost or invented something.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "game '{game}': the store holds {stored:?}, but the journal allows only {allowed:?} (acknowledged changes lost, or a change nobody sent)"
)]
pub struct Violation {
    pub game: String,
    pub stored: Option<GameState>,
    pub allowed: Vec<Option<GameState>>,
}

#[derive(Default, Debug)]
struct GameLog {
    acked: Option<GameState>,
    in_flight: Option<Op>,
}

/// The acknowledged state of every game named in a journal.
#[derive(Default, Debug)]
pub struct Journal {
    games: BTreeMap<String, GameLog>,
    lines: usize,
    acks: u64,
}

impl Journal {
    pub fn new() -> Journal {
        Journal::default()
    }

    /// Changes acknowledged so far.
    pub fn acks(&self) -> u64 {
        self.acks
    }

    /// Every game named in the journal.
    pub fn games(&self) -> impl Iterator<Item = &str> {
        self.games.keys().map(String::as_str)
    }

    /// Games with a change in flight.
    pub fn in_flight(&self) -> usize {
        self.games
            .values()
            .filter(|g| g.in_flight.is_some())
            .count()
    }

    /// Applies one line (without its newline).
    pub fn apply_line(&mut self, text: &str) -> Result<(), JournalError> {
        self.lines += 1;
        let line = self.lines;
        let parse = || JournalError::Parse {
            line,
            text: text.to_string(),
        };
        let mut words = text.splitn(4, ' ');
        let kind = words.next().ok_or_else(parse)?;
        let game = words
            .next()
            .filter(|g| !g.is_empty())
            .ok_or_else(parse)?
            .to_string();
        let log = self.games.entry(game.clone()).or_default();
        match kind {
            "BEGIN" => {
                let op = match (words.next(), words.next()) {
                    (Some("NEW"), Some(fen)) => Op::New {
                        start_fen: fen.to_string(),
                    },
                    (Some("PLAY"), Some(uci)) if !uci.contains(' ') => Op::Play {
                        uci: uci.to_string(),
                    },
                    (Some("UNDO"), None) => Op::Undo,
                    (Some("EVENT"), Some(name)) if !name.contains(' ') => Op::Event {
                        name: name.to_string(),
                    },
                    (Some("DELETE"), None) => Op::Delete,
                    _ => return Err(parse()),
                };
                if log.in_flight.is_some() {
                    return Err(JournalError::TwoInFlight { line, game });
                }
                match (&op, &log.acked) {
                    (Op::New { .. }, Some(_)) => return Err(JournalError::Exists { line, game }),
                    (Op::Play { .. }, None) => {
                        return Err(JournalError::NoSuchGame {
                            line,
                            game,
                            what: "PLAY",
                        });
                    }
                    (Op::Undo, None) => {
                        return Err(JournalError::NoSuchGame {
                            line,
                            game,
                            what: "UNDO",
                        });
                    }
                    (Op::Event { .. }, None) => {
                        return Err(JournalError::NoSuchGame {
                            line,
                            game,
                            what: "EVENT",
                        });
                    }
                    (Op::Delete, None) => {
                        return Err(JournalError::NoSuchGame {
                            line,
                            game,
                            what: "DELETE",
                        });
                    }
                    _ => {}
                }
                log.in_flight = Some(op);
            }
            "ACK" if words.next().is_none() => {
                let op = log
                    .in_flight
                    .take()
                    .ok_or_else(|| JournalError::NothingInFlight {
                        line,
                        game: game.clone(),
                    })?;
                log.acked =
                    apply(&log.acked, &op).ok_or(JournalError::UndoAtStart { line, game })?;
                self.acks += 1;
            }
            "FAIL" if words.next().is_none() => {
                log.in_flight
                    .take()
                    .ok_or(JournalError::NothingInFlight { line, game })?;
            }
            _ => return Err(parse()),
        }
        Ok(())
    }

    /// Checks what the store holds for `game` (`None`: no such game).
    pub fn check(&self, game: &str, stored: Option<&GameState>) -> Result<Verdict, Violation> {
        let log = self.games.get(game);
        let acked = log.and_then(|l| l.acked.clone());
        let in_flight = log
            .and_then(|l| l.in_flight.as_ref())
            .and_then(|op| apply(&acked, op));
        if stored == acked.as_ref() {
            return Ok(Verdict::Acknowledged);
        }
        if let Some(after) = &in_flight
            && stored == after.as_ref()
        {
            return Ok(Verdict::InFlightApplied);
        }
        let mut allowed = vec![acked];
        allowed.extend(in_flight);
        Err(Violation {
            game: game.to_string(),
            stored: stored.cloned(),
            allowed,
        })
    }
}

/// The state after `op`; `None` (outer) if `op` cannot apply (an undo at the start).
fn apply(state: &Option<GameState>, op: &Op) -> Option<Option<GameState>> {
    match (op, state) {
        (Op::New { start_fen }, _) => Some(Some(GameState {
            start_fen: start_fen.clone(),
            moves: Vec::new(),
            version: 0,
        })),
        (Op::Play { uci }, Some(s)) => {
            let mut s = s.clone();
            s.moves.push(uci.clone());
            s.version += 1;
            Some(Some(s))
        }
        (Op::Undo, Some(s)) => {
            let mut s = s.clone();
            s.moves.pop()?;
            s.version += 1;
            Some(Some(s))
        }
        (Op::Event { .. }, Some(s)) => {
            let mut s = s.clone();
            s.version += 1;
            Some(Some(s))
        }
        (Op::Delete, Some(_)) => Some(None),
        (_, None) => None,
    }
}
