//! [`Match`]: a rules [`Game`] plus its event log, clocks, pending draw offer and the
//! ending a player or the clock decided.
//!
//! Split by concern: this file holds the state and how it is read; `apply.rs` the one
//! place the state changes (an event checked and applied); `commands.rs` the operations
//! that turn requests into events; `clocks.rs` the clocks and their readings.

mod apply;
mod clocks;
mod commands;

use std::sync::OnceLock;

use crate::rules::{ByColor, Color, Game, GamePosition, Move, MoveTextError};

use super::clock::{MAX_ADD_TIME_MS, TimeControl};
use super::event::{Event, EventRecord, LogEntry, Status};
use super::opening::{Opening, OpeningTrack};

use clocks::Clocks;

/// One game as it is played: the board (a rules [`Game`]), the event log, the clocks,
/// the pending draw offer and a decided ending. See the module docs for the rules.
///
/// Its state is always the replay of its log: every change goes through
/// [`Match::apply`], which checks the event against the state and applies it. The
/// operations ([`Match::play`], [`Match::resign`], ...) check a request, answer why it
/// cannot be done ([`Refusal`]), and otherwise append the events it amounts to.
#[derive(Clone, Debug)]
pub struct Match {
    game: Game,
    /// The opening, kept move by move beside the board.
    opening: OpeningTrack,
    log: Vec<LogEntry>,
    clocks: Option<Clocks>,
    offer: Option<Color>,
    /// The ending decided by an event (resignation, agreement, claim, flag fall).
    ending: Option<Status>,
    /// The latest event's time (the creation time before any): time never runs backward.
    last_ms: u64,
    /// A `DrawLapsed` was applied; the next event must be the move that lapsed it.
    lapse_pending: bool,
    /// Every event so far is a move.
    only_moves: bool,
    /// Each side's draw offer made since its last move (pending, declined or lapsed): a
    /// side offers at most once per move of its own ([`Match::offer_draw`]).
    offered_since_move: ByColor<bool>,
    /// The status, computed at most once per state (it needs the legal moves).
    status: OnceLock<Status>,
    /// Whether [`Match::apply`] keeps an [`EventRecord`] of each event for spectators.
    recording: bool,
    records: Vec<EventRecord>,
}

/// A log that does not replay: the stored history is damaged (or a bug wrote it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {version} ({what}): {why}")]
pub struct ReplayError {
    /// The version of the event that does not replay.
    pub version: u64,
    /// What kind of event it is.
    pub what: &'static str,
    /// Why it does not replay.
    pub why: String,
}

/// Why a request cannot change the game. Nothing was changed, except that a flag that
/// had fallen before the request arrived is recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The game has ended (with this status).
    #[error("the game is over ({0})")]
    GameOver(Status),
    /// A move for the side that is not to move.
    #[error("it is {to_move}'s turn, not {color}'s")]
    NotYourTurn {
        /// The side the request was made for.
        color: Color,
        /// The side to move.
        to_move: Color,
    },
    /// An undo asked for by the side that did not make the last move.
    #[error("the last move was {last_mover}'s; {color} cannot take it back")]
    NotYourMove {
        /// The side the request was made for.
        color: Color,
        /// The side that made the last move.
        last_mover: Color,
    },
    /// The move text was refused (syntax or legality).
    #[error(transparent)]
    Move(MoveTextError),
    /// An undo at the start.
    #[error("there is no move to take back")]
    NothingToUndo,
    /// A draw offer while an offer is already pending.
    #[error("{}", pending_offer_message(*by, *color))]
    DrawOfferPending {
        /// The side that made the offer.
        by: Color,
        /// The side the request was made for.
        color: Color,
    },
    /// A second draw offer by a side that has not moved since its last one.
    #[error(
        "{color} has already offered a draw since its last move; it may offer again after its next move"
    )]
    OfferAgainAfterMove {
        /// The side that offered.
        color: Color,
    },
    /// An answer to a draw offer when none is pending.
    #[error("no draw offer is pending")]
    NoDrawOffer,
    /// An answer to one's own draw offer.
    #[error("{color} made the pending draw offer; only {} can accept or decline it", !*color)]
    OwnDrawOffer {
        /// The side that made the offer and tried to answer it.
        color: Color,
    },
    /// A draw claim the position does not support.
    #[error("{why}")]
    ClaimRefused {
        /// Why the claim does not hold.
        why: String,
    },
    /// Time added to an untimed game.
    #[error("the game is untimed: it has no clock to add time to")]
    Untimed,
    /// Time added that is zero or more than [`MAX_ADD_TIME_MS`].
    #[error("{ms} ms cannot be added: add 1 ms to {MAX_ADD_TIME_MS} ms (an hour) at once")]
    AddTimeOutOfRange {
        /// The time asked for.
        ms: u64,
    },
    /// The game's own log does not replay: a bug or damage.
    #[error("internal inconsistency: {0}")]
    Inconsistent(ReplayError),
}

fn pending_offer_message(by: Color, color: Color) -> String {
    if by == color {
        format!(
            "{by}'s draw offer is already pending; wait for {}'s answer",
            !by
        )
    } else {
        format!("{by} has offered a draw; {color} can accept or decline it instead of offering one")
    }
}

impl Match {
    /// A new untimed game from `start`.
    pub fn untimed(start: impl Into<GamePosition>) -> Match {
        Match::with_clocks(Game::new(start), None)
    }

    /// A new timed game from `start`, created at `created_ms`: the side to move's clock
    /// runs from then.
    pub fn timed(start: impl Into<GamePosition>, control: TimeControl, created_ms: u64) -> Match {
        let initial = control.initial_ms();
        Match::with_clocks(
            Game::new(start),
            Some(Clocks {
                control,
                created_ms,
                remaining: ByColor::splat(initial),
                since_ms: created_ms,
                before: vec![ByColor::splat(initial)],
            }),
        )
    }

    /// An untimed game whose log is the moves of `game` (how a record of the first
    /// format, which kept only the moves, is read). The moves are legal already.
    pub fn from_moves(game: Game) -> Match {
        let log = game
            .moves()
            .iter()
            .map(|&m| LogEntry {
                event: Event::Move(m),
                at_ms: None,
            })
            .collect();
        let mut m = Match::with_clocks(game, None);
        m.log = log;
        m
    }

    fn with_clocks(game: Game, clocks: Option<Clocks>) -> Match {
        Match {
            last_ms: clocks.as_ref().map_or(0, |c| c.created_ms),
            opening: OpeningTrack::new(&game),
            game,
            log: Vec::new(),
            clocks,
            offer: None,
            ending: None,
            lapse_pending: false,
            only_moves: true,
            offered_since_move: ByColor::splat(false),
            status: OnceLock::new(),
            recording: false,
            records: Vec::new(),
        }
    }

    /// The same game as created: same start and time control, no events.
    pub fn restart(&self) -> Match {
        let start = *self.game.start();
        match &self.clocks {
            Some(c) => Match::timed(start, c.control, c.created_ms),
            None => Match::untimed(start),
        }
    }

    /// The game as it stood at `version` (its first `version` events): what a request
    /// that expected that version was decided on, so that a retry can be recognised by
    /// deciding it again there. `None` when the game has not reached `version`.
    pub fn at_version(&self, version: u64) -> Option<Result<Match, ReplayError>> {
        let events = self.log.get(..usize::try_from(version).ok()?)?;
        let mut m = self.restart();
        Some(events.iter().try_for_each(|&e| m.apply(e)).map(|()| m))
    }

    /// Replays a whole log onto a new game, checking every event.
    pub fn replay(
        start: impl Into<GamePosition>,
        clock: Option<(TimeControl, u64)>,
        log: &[LogEntry],
    ) -> Result<Match, ReplayError> {
        let start = start.into();
        let mut m = match clock {
            Some((control, created_ms)) => Match::timed(start, control, created_ms),
            None => Match::untimed(start),
        };
        for &entry in log {
            m.apply(entry)?;
        }
        m.check_complete()?;
        Ok(m)
    }

    // ---- reading ----------------------------------------------------------------------

    /// The board: start, moves, positions.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Every event since the game was created, in order.
    pub fn log(&self) -> &[LogEntry] {
        &self.log
    }

    /// The version of the latest event (0: just created).
    pub fn version(&self) -> u64 {
        self.log.len() as u64
    }

    /// Every event is a move (no undo, offer, ending or flag).
    pub fn only_moves(&self) -> bool {
        self.only_moves
    }

    /// Whether the game has a clock.
    pub fn is_timed(&self) -> bool {
        self.clocks.is_some()
    }

    /// The time control of a timed game.
    pub fn time_control(&self) -> Option<TimeControl> {
        self.clocks.as_ref().map(|c| c.control)
    }

    /// When a timed game was created (its clock started).
    pub fn created_ms(&self) -> Option<u64> {
        self.clocks.as_ref().map(|c| c.created_ms)
    }

    /// The side whose draw offer is pending.
    pub fn offer(&self) -> Option<Color> {
        self.offer
    }

    /// The game's opening: the named position met last, walking back from the current
    /// one (standard chess from the standard start only; see [`super::opening`]).
    pub fn opening(&self) -> Option<Opening> {
        self.opening.current()
    }
    /// Where the game stands: a decided ending, else what the board says.
    pub fn status(&self) -> Status {
        *self
            .status
            .get_or_init(|| self.ending.unwrap_or_else(|| self.game.status().into()))
    }

    // ---- spectators -------------------------------------------------------------------

    /// Keep (or stop keeping) an [`EventRecord`] of every applied event, to be collected
    /// with [`Match::take_records`]. Off by default: building records costs a status per
    /// event, worth it only while someone watches.
    pub fn set_recording(&mut self, on: bool) {
        self.recording = on;
        if !on {
            self.records.clear();
        }
    }

    /// The records kept since the last call.
    pub fn take_records(&mut self) -> Vec<EventRecord> {
        std::mem::take(&mut self.records)
    }

    /// The record of version 0: the game as created.
    pub fn initial_record(&self) -> EventRecord {
        let fresh = self.restart();
        let at = fresh.created_ms();
        fresh.record(0, None, at, None, None)
    }

    /// The records of every version from `from` (inclusive) to the current one, by
    /// replaying the log: exactly what a spectator watching live was sent.
    pub fn records_since(&self, from: u64) -> Result<Vec<EventRecord>, ReplayError> {
        let mut replay = self.restart();
        let mut out = Vec::new();
        if from == 0 {
            out.push(replay.initial_record());
        }
        for (i, &entry) in self.log.iter().enumerate() {
            let version = i as u64 + 1;
            replay.recording = version >= from;
            replay.apply(entry)?;
            out.append(&mut replay.records);
        }
        Ok(out)
    }

    pub(super) fn record(
        &self,
        version: u64,
        event: Option<Event>,
        at_ms: Option<u64>,
        by: Option<Color>,
        moved: Option<(GamePosition, Move)>,
    ) -> EventRecord {
        EventRecord {
            version,
            event,
            at_ms,
            by,
            moved,
            position: *self.game.position(),
            ply: self.game.ply(),
            status: self.status(),
            offer: self.offer,
            clock: at_ms.and_then(|t| self.clock_at(t)),
        }
    }
}
