//! [`Match`]: a rules [`Game`] plus its event log, clocks, pending draw offer and the
//! ending a player or the clock decided.

use std::sync::OnceLock;

use crate::rules::{ByColor, Color, Game, Move, MoveTextError, Position};

use super::clock::{ClockReading, ClockStart, MAX_ADD_TIME_MS, TimeControl};
use super::event::{ClaimRule, Event, EventRecord, LogEntry, Status};
use super::judge;
use super::opening::{Opening, OpeningTrack};

/// The clocks of a timed game.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Clocks {
    control: TimeControl,
    created_ms: u64,
    /// Remaining milliseconds by colour: the side to move's as of `since_ms` (its clock
    /// runs from then while the game goes on), the other side's as it stands.
    remaining: ByColor<u64>,
    /// When the running clock last started (creation, a move, an undo) or, once the game
    /// is over, when it stopped.
    since_ms: u64,
    /// `before[p]`: both sides' remaining time when the turn of ply `p` began (after the
    /// previous move's increment). Undo returns to it; `before.len() == ply + 1`.
    before: Vec<ByColor<u64>>,
}

impl Clocks {
    /// Whether the clocks run at ply `ply` (of a game still going): always, unless they
    /// start only after both sides' first moves and those are not made yet.
    fn started_at(&self, ply: usize) -> bool {
        match self.control.clock_start() {
            ClockStart::OnCreate => true,
            ClockStart::AfterFirstMoves => ply >= 2,
        }
    }
}

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
    pub fn untimed(start: Position) -> Match {
        Match::with_clocks(Game::new(start), None)
    }

    /// A new timed game from `start`, created at `created_ms`: the side to move's clock
    /// runs from then.
    pub fn timed(start: Position, control: TimeControl, created_ms: u64) -> Match {
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
        start: Position,
        clock: Option<(TimeControl, u64)>,
        log: &[LogEntry],
    ) -> Result<Match, ReplayError> {
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

    /// Whether the running side's clock is running now: a timed game going on whose
    /// clocks have started.
    fn clock_runs(&self) -> bool {
        self.clocks
            .as_ref()
            .is_some_and(|c| c.started_at(self.game.ply()))
            && !self.status().is_over()
    }

    /// Where the game stands: a decided ending, else what the board says.
    pub fn status(&self) -> Status {
        *self
            .status
            .get_or_init(|| self.ending.unwrap_or_else(|| self.game.status().into()))
    }

    /// When the side to move's flag falls, while a timed game goes on.
    pub fn flag_time(&self) -> Option<u64> {
        let c = self.clocks.as_ref()?;
        if !self.clock_runs() {
            return None;
        }
        Some(c.since_ms + c.remaining[self.game.position().turn()])
    }

    /// Both clocks as of `now` (never before the running clock's start), for timed games.
    /// The running side's remaining time stops at zero: a flag due by then is recorded by
    /// the next operation ([`Match::settle`]).
    pub fn clock_at(&self, now: u64) -> Option<ClockReading> {
        let c = self.clocks.as_ref()?;
        let running = self.clock_runs().then(|| self.game.position().turn());
        let as_of_ms = now.max(c.since_ms);
        let mut remaining_ms = c.remaining;
        if let Some(side) = running {
            let r = &mut remaining_ms[side];
            *r = r.saturating_sub(as_of_ms - c.since_ms);
        }
        Some(ClockReading {
            control: c.control,
            remaining_ms,
            running,
            as_of_ms,
        })
    }

    /// For each move on the board, the mover's remaining time just after it (increment
    /// included): the PGN `%clk` of that move. `None` for untimed games.
    pub fn move_clocks(&self) -> Option<Vec<u64>> {
        let c = self.clocks.as_ref()?;
        Some(
            (0..self.game.ply())
                .map(|i| {
                    self.game
                        .position_at(i)
                        .zip(c.before.get(i + 1))
                        .map_or(0, |(p, b)| b[p.turn()])
                })
                .collect(),
        )
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

    fn record(
        &self,
        version: u64,
        event: Option<Event>,
        at_ms: Option<u64>,
        by: Option<Color>,
        moved: Option<(Position, Move)>,
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

    // ---- the one place state changes ---------------------------------------------------

    /// Checks `entry` against the current state and applies it (the replay step, used
    /// for live changes and for reading stored logs alike).
    pub fn apply(&mut self, entry: LogEntry) -> Result<(), ReplayError> {
        let version = self.version() + 1;
        let what = entry.event.name();
        let fail = |why: String| ReplayError { version, what, why };
        let at = match (&self.clocks, entry.at_ms) {
            (Some(_), Some(t)) if t < self.last_ms => {
                return Err(fail(format!(
                    "its time {t} is before the previous event's time {}",
                    self.last_ms
                )));
            }
            (Some(_), Some(t)) => Some(t),
            (None, None) => None,
            (Some(_), None) => return Err(fail("an event of a timed game has no time".into())),
            (None, Some(_)) => return Err(fail("an event of an untimed game has a time".into())),
        };
        if self.lapse_pending && !matches!(entry.event, Event::Move(_)) {
            return Err(fail(
                "a lapsed draw offer must be followed by the move that lapsed it".into(),
            ));
        }
        // While a timed game goes on, nothing happens at or after the flag time except
        // the flag fall itself, at exactly that time.
        if let (Some(t), Some(flag)) = (at, self.flag_time()) {
            let to_move = self.game.position().turn();
            match entry.event {
                Event::FlagFell | Event::FlagFellUnwinnable if t != flag => {
                    return Err(fail(format!("{to_move}'s flag fell at {flag}, not at {t}")));
                }
                Event::FlagFell | Event::FlagFellUnwinnable => {}
                _ if t >= flag => {
                    return Err(fail(format!(
                        "it happened at {t}, at or after {to_move}'s flag time {flag}; the flag fall comes first"
                    )));
                }
                _ => {}
            }
        }
        // A move is checked against the legal list, which also answers the status: one
        // generation serves both.
        let legal = matches!(entry.event, Event::Move(_)).then(|| self.game.legal_moves());
        if let Some(legal) = &legal {
            let _ = self.status.get_or_init(|| {
                self.ending
                    .unwrap_or_else(|| self.game.status_with(!legal.is_empty()).into())
            });
        }
        let status = self.status();
        let to_move = self.game.position().turn();
        let game_over = || fail(format!("the game is already over ({status})"));
        let mut moved = None;
        let by;
        match entry.event {
            Event::Move(m) => {
                if status.is_over() {
                    return Err(game_over());
                }
                if self.offer == Some(!to_move) {
                    return Err(fail(format!(
                        "{}'s draw offer is pending; it lapses (an event of its own) before {to_move} moves",
                        !to_move
                    )));
                }
                let before = *self.game.position();
                if !legal.as_ref().is_some_and(|l| l.contains(&m)) {
                    return Err(fail(format!(
                        "{} is not legal in {}",
                        before.uci(m),
                        before.to_fen()
                    )));
                }
                // Legal, and the game is going on (checked above): no second status check.
                let ply = self.game.ply();
                self.game.push_unchecked(m);
                self.opening.push(self.game.position());
                if let (Some(c), Some(t)) = (self.clocks.as_mut(), at) {
                    // A move made before the clocks started is neither charged nor given
                    // the increment.
                    if c.started_at(ply) {
                        let r = &mut c.remaining[to_move];
                        // The flag check above guarantees t - since < r.
                        *r = r.saturating_sub(t - c.since_ms) + c.control.increment_ms();
                    }
                    c.since_ms = t;
                    c.before.push(c.remaining);
                }
                self.lapse_pending = false;
                self.offered_since_move[to_move] = false;
                moved = Some((before, m));
                by = Some(to_move);
            }
            Event::Undo => {
                let Some(m) = self.game.undo() else {
                    return Err(fail("there is no move to take back".into()));
                };
                self.opening.pop();
                moved = Some((*self.game.position(), m));
                by = Some(self.game.position().turn());
                self.ending = None;
                if let (Some(c), Some(t)) = (self.clocks.as_mut(), at) {
                    c.before.pop();
                    c.remaining = c.before.last().copied().unwrap_or(c.remaining);
                    c.since_ms = t;
                }
            }
            Event::DrawOffered(color) => {
                if status.is_over() {
                    return Err(game_over());
                }
                if let Some(o) = self.offer {
                    return Err(fail(format!("{o}'s draw offer is already pending")));
                }
                self.offer = Some(color);
                self.offered_since_move[color] = true;
                by = Some(color);
            }
            Event::DrawDeclined | Event::DrawAccepted => {
                if status.is_over() {
                    return Err(game_over());
                }
                let Some(o) = self.offer.take() else {
                    return Err(fail("no draw offer is pending".into()));
                };
                by = Some(!o);
                if entry.event == Event::DrawAccepted {
                    self.end(Status::DrawAgreement, to_move, at);
                }
            }
            Event::DrawLapsed => {
                if status.is_over() {
                    return Err(game_over());
                }
                if self.offer != Some(!to_move) {
                    return Err(fail(format!(
                        "no draw offer by {} is pending for {to_move}'s move to lapse",
                        !to_move
                    )));
                }
                self.offer = None;
                self.lapse_pending = true;
                by = Some(to_move);
            }
            Event::Resigned(color) => {
                if status.is_over() {
                    return Err(game_over());
                }
                self.end(Status::Resignation { winner: !color }, to_move, at);
                by = Some(color);
            }
            Event::DrawClaimed { rule, announced } => {
                if status.is_over() {
                    return Err(game_over());
                }
                let claimant = if announced {
                    match self.log.last() {
                        Some(LogEntry {
                            event: Event::Move(_),
                            at_ms,
                        }) if *at_ms == at => !to_move,
                        _ => {
                            return Err(fail(
                                "a claim made with a move must directly follow that move, at the same time".into(),
                            ));
                        }
                    }
                } else {
                    to_move
                };
                if !rule.holds(&self.game) {
                    return Err(fail(format!(
                        "the claim does not hold: {}",
                        claim_refusal(&self.game, None)
                    )));
                }
                let ending = match rule {
                    ClaimRule::Threefold => Status::DrawClaimedThreefold,
                    ClaimRule::FiftyMoves => Status::DrawClaimedFiftyMoves,
                };
                self.end(ending, to_move, at);
                by = Some(claimant);
            }
            Event::FlagFell => {
                if status.is_over() {
                    return Err(game_over());
                }
                // An untimed game's flag fall comes only from an imported PGN whose
                // Termination says "time forfeit" (see `super::import`): no operation
                // makes one, since `settle` needs a clock. Its time is not known.
                let pos = self.game.position();
                let ending = if pos.has_insufficient_material(!to_move) {
                    Status::DrawTimeoutInsufficientMaterial
                } else {
                    Status::OutOfTime { winner: !to_move }
                };
                self.end(ending, to_move, at);
                by = Some(to_move);
            }
            Event::FlagFellUnwinnable => {
                if status.is_over() {
                    return Err(game_over());
                }
                // The verdict is the record's (a replay never runs the solver); only what
                // the material rule decides is checked, since that case has its own event.
                if self.game.position().has_insufficient_material(!to_move) {
                    return Err(fail(format!(
                        "{} has no mating material, which a plain flag fall records",
                        !to_move
                    )));
                }
                self.end(Status::DrawTimeoutUnwinnable, to_move, at);
                by = Some(to_move);
            }
            Event::DeadPosition => {
                if status.is_over() {
                    return Err(game_over());
                }
                // Recorded by the change that made the position: right after its move, at
                // the same time, or first of all at the creation.
                let follows_its_change = match self.log.last() {
                    Some(LogEntry {
                        event: Event::Move(_),
                        at_ms,
                    }) => *at_ms == at,
                    Some(_) => false,
                    None => at.is_none_or(|t| t == self.last_ms),
                };
                if !follows_its_change {
                    return Err(fail(
                        "a dead position is recorded right after the move that made it, at the same time, or first at the creation".into(),
                    ));
                }
                self.end(Status::DrawDeadPosition, to_move, at);
                by = None;
            }
            Event::TimeAdded { color, ms } => {
                if status.is_over() {
                    return Err(game_over());
                }
                let Some(c) = self.clocks.as_mut() else {
                    return Err(fail("an untimed game has no clock to add time to".into()));
                };
                if ms == 0 || ms > MAX_ADD_TIME_MS {
                    return Err(fail(format!(
                        "{ms} ms is not in 1 ..= {MAX_ADD_TIME_MS} ms"
                    )));
                }
                // Given for good: an undo later restores the clocks of an earlier turn,
                // which get the time too.
                c.remaining[color] = c.remaining[color].saturating_add(ms);
                for b in &mut c.before {
                    b[color] = b[color].saturating_add(ms);
                }
                by = Some(color);
            }
        }
        if !matches!(entry.event, Event::Move(_)) {
            self.only_moves = false;
        }
        if let Some(t) = at {
            self.last_ms = t;
        }
        self.log.push(entry);
        self.status = OnceLock::new();
        if self.recording {
            let record = self.record(version, Some(entry.event), at, by, moved);
            self.records.push(record);
        }
        Ok(())
    }

    /// Records a decided ending: the offer is concluded and the clocks stop at `at`
    /// (the side to move is charged its time so far).
    fn end(&mut self, ending: Status, to_move: Color, at: Option<u64>) {
        self.ending = Some(ending);
        self.offer = None;
        let ply = self.game.ply();
        if let (Some(c), Some(t)) = (self.clocks.as_mut(), at) {
            if c.started_at(ply) {
                let r = &mut c.remaining[to_move];
                *r = r.saturating_sub(t - c.since_ms);
            }
            c.since_ms = t;
        }
    }

    /// A stored log must not end between a lapse and its move.
    pub fn check_complete(&self) -> Result<(), ReplayError> {
        if self.lapse_pending {
            return Err(ReplayError {
                version: self.version(),
                what: Event::DrawLapsed.name(),
                why: "the log ends before the move that lapsed the draw offer".into(),
            });
        }
        Ok(())
    }

    // ---- operations ---------------------------------------------------------------------

    /// The time to record for an event at `now`: in a timed game `now`, but never before
    /// the latest event; `None` in an untimed game.
    fn stamp(&self, now: u64) -> Option<u64> {
        self.clocks.as_ref().map(|_| now.max(self.last_ms))
    }

    fn push(&mut self, event: Event, at_ms: Option<u64>) -> Result<(), Refusal> {
        self.apply(LogEntry { event, at_ms })
            .map_err(Refusal::Inconsistent)
    }

    /// Records the flag fall if the side to move's time was gone by `now` (at the exact
    /// flag time, not at `now`). Every operation starts with it; call it also before
    /// answering a read, so that a game whose time ran out says so. True if a flag fell.
    pub fn settle(&mut self, now: u64) -> Result<bool, Refusal> {
        match self.flag_time() {
            Some(flag) if now >= flag => {
                let event = judge::flag_fall(self.game.position());
                self.push(event, Some(flag))?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn check_going(&self) -> Result<(), Refusal> {
        let status = self.status();
        if status.is_over() {
            return Err(Refusal::GameOver(status));
        }
        Ok(())
    }

    fn check_turn(&self, color: Option<Color>) -> Result<(), Refusal> {
        let to_move = self.game.position().turn();
        match color {
            Some(color) if color != to_move => Err(Refusal::NotYourTurn { color, to_move }),
            _ => Ok(()),
        }
    }

    /// Plays a move (UCI or SAN) for the side to move at time `now`. `color`, when given,
    /// must be the side to move (checked before the move's legality). A pending draw offer
    /// by the other side lapses.
    pub fn play(&mut self, now: u64, color: Option<Color>, text: &str) -> Result<Move, Refusal> {
        self.settle(now)?;
        self.check_going()?;
        self.check_turn(color)?;
        let m = self
            .game
            .position()
            .parse_move(text)
            .map_err(Refusal::Move)?;
        let at = self.stamp(now);
        self.push_move(m, at)?;
        self.end_if_dead(now)?;
        Ok(m)
    }

    /// Ends the game drawn with [`Event::DeadPosition`] if the position on the board is
    /// proven dead (FIDE 5.2.2) within the per-change budget ([`judge::is_dead`]), while
    /// the board has not ended it already. Every change that makes a new position calls
    /// it: a move, and the creation from a FEN or an import (by their callers). True if
    /// the game ended.
    pub fn end_if_dead(&mut self, now: u64) -> Result<bool, Refusal> {
        if self.status().is_over() || !judge::is_dead(self.game.position()) {
            return Ok(false);
        }
        let at = self.stamp(now);
        self.push(Event::DeadPosition, at)?;
        Ok(true)
    }

    fn push_move(&mut self, m: Move, at: Option<u64>) -> Result<(), Refusal> {
        if self.offer == Some(!self.game.position().turn()) {
            self.push(Event::DrawLapsed, at)?;
        }
        self.push(Event::Move(m), at)
    }

    /// Takes back the last move, with any decided ending after it. `color`, when given,
    /// must be the side that made that move. Returns the move and the position before it.
    pub fn undo(&mut self, now: u64, color: Option<Color>) -> Result<(Position, Move), Refusal> {
        self.settle(now)?;
        let ply = self.game.ply();
        let (Some(&before), Some(&m)) = (
            ply.checked_sub(1).and_then(|p| self.game.position_at(p)),
            self.game.moves().last(),
        ) else {
            return Err(Refusal::NothingToUndo);
        };
        let last_mover = before.turn();
        if let Some(color) = color.filter(|&c| c != last_mover) {
            return Err(Refusal::NotYourMove { color, last_mover });
        }
        let at = self.stamp(now);
        self.push(Event::Undo, at)?;
        Ok((before, m))
    }

    /// `color` offers a draw (either side may, whoever is to move), at most once per move
    /// of its own: a side that offered since its last move (the offer pending, declined or
    /// lapsed) must move before it offers again (FIDE 9.1.2.1 ties an offer to the
    /// offerer's move). A rule for new requests only: [`Match::apply`] replays stored
    /// histories as they are.
    pub fn offer_draw(&mut self, now: u64, color: Color) -> Result<(), Refusal> {
        self.settle(now)?;
        self.check_going()?;
        if let Some(by) = self.offer {
            return Err(Refusal::DrawOfferPending { by, color });
        }
        if self.offered_since_move[color] {
            return Err(Refusal::OfferAgainAfterMove { color });
        }
        let at = self.stamp(now);
        self.push(Event::DrawOffered(color), at)
    }

    /// `color` accepts (a draw by agreement) or declines the other side's pending offer.
    pub fn respond_to_draw(&mut self, now: u64, color: Color, accept: bool) -> Result<(), Refusal> {
        self.settle(now)?;
        self.check_going()?;
        match self.offer {
            None => return Err(Refusal::NoDrawOffer),
            Some(by) if by == color => return Err(Refusal::OwnDrawOffer { color }),
            Some(_) => {}
        }
        let at = self.stamp(now);
        let event = if accept {
            Event::DrawAccepted
        } else {
            Event::DrawDeclined
        };
        self.push(event, at)
    }

    /// Adds `ms` milliseconds to `color`'s clock at `now` (1 ms to an hour at once; timed
    /// games only, while the game goes on).
    pub fn add_time(&mut self, now: u64, color: Color, ms: u64) -> Result<(), Refusal> {
        self.settle(now)?;
        self.check_going()?;
        if self.clocks.is_none() {
            return Err(Refusal::Untimed);
        }
        if ms == 0 || ms > MAX_ADD_TIME_MS {
            return Err(Refusal::AddTimeOutOfRange { ms });
        }
        let at = self.stamp(now);
        self.push(Event::TimeAdded { color, ms }, at)
    }

    /// `color` resigns: the other side wins.
    pub fn resign(&mut self, now: u64, color: Color) -> Result<(), Refusal> {
        self.settle(now)?;
        self.check_going()?;
        let at = self.stamp(now);
        self.push(Event::Resigned(color), at)
    }

    /// `color`, the side to move, claims a draw by threefold repetition (FIDE 9.2) or the
    /// fifty-move rule (9.3): about the position on the board, or, with `text`, about the
    /// position after that move, which is then played (threefold is preferred when both
    /// hold). Refused with the reason when neither holds; then nothing is played. A move
    /// that ends the game on the board by itself (mate, an automatic draw) is simply
    /// played: the board's ending stands and no claim is needed.
    pub fn claim_draw(
        &mut self,
        now: u64,
        color: Color,
        text: Option<&str>,
    ) -> Result<Option<(Position, Move)>, Refusal> {
        self.settle(now)?;
        self.check_going()?;
        self.check_turn(Some(color))?;
        let at = self.stamp(now);
        let Some(text) = text else {
            let rule = claimable(&self.game).ok_or_else(|| Refusal::ClaimRefused {
                why: claim_refusal(&self.game, None),
            })?;
            self.push(
                Event::DrawClaimed {
                    rule,
                    announced: false,
                },
                at,
            )?;
            return Ok(None);
        };
        let before = *self.game.position();
        let m = before.parse_move(text).map_err(Refusal::Move)?;
        let mut after = self.game.clone();
        after.push_unchecked(m);
        let ended = after.status().is_over();
        let dead = !ended && judge::is_dead(after.position());
        if ended || dead {
            self.push_move(m, at)?;
            if dead {
                self.push(Event::DeadPosition, at)?;
            }
            return Ok(Some((before, m)));
        }
        let rule = claimable(&after).ok_or_else(|| Refusal::ClaimRefused {
            why: claim_refusal(&after, Some(&before.san(m))),
        })?;
        self.push_move(m, at)?;
        self.push(
            Event::DrawClaimed {
                rule,
                announced: true,
            },
            at,
        )?;
        Ok(Some((before, m)))
    }
}

/// The rule a claim about the current position of `game` can invoke, threefold first.
fn claimable(game: &Game) -> Option<ClaimRule> {
    [ClaimRule::Threefold, ClaimRule::FiftyMoves]
        .into_iter()
        .find(|rule| rule.holds(game))
}

/// Why no draw can be claimed in the current position of `game` (reached with the
/// announced move `san`, if any), with what each rule still needs.
fn claim_refusal(game: &Game, announced: Option<&str>) -> String {
    let times = match game.repetitions() {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    };
    let half = game.position().halfmoves();
    let (head, occurred, played) = match announced {
        Some(san) => (
            format!("no draw can be claimed with {san}: after it the position "),
            "would have occurred",
            "would have been played",
        ),
        None => (
            "no draw can be claimed: the position ".to_string(),
            "has occurred",
            "have been played",
        ),
    };
    let mut why = format!(
        "{head}{occurred} {times}; a third occurrence is needed (FIDE 9.2); and {half} half-moves {played} since the last capture or pawn move; the fifty-move rule needs 100 (FIDE 9.3)"
    );
    if announced.is_none() && (game.can_claim_threefold() || game.can_claim_fifty_moves()) {
        why.push_str(
            "; a move that completes the repetition or the fifty moves can be announced with the claim",
        );
    }
    why
}
