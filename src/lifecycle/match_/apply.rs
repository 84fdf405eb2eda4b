//! [`Match::apply`]: the one place a game's state changes. A live operation and the
//! replay of a stored log both go through it, so the checks here decide what a valid
//! history is. The checks every event shares come first (`check_entry`), then
//! one function per kind of event, then the bookkeeping every applied event gets
//! (`log_applied`).

use std::sync::OnceLock;

use crate::rules::{Color, GamePosition, Move, MoveList};

use super::super::clock::MAX_ADD_TIME_MS;
use super::super::event::{ClaimRule, Event, LogEntry, Status};
use super::commands::claim_refusal;
use super::{Match, ReplayError};

/// An event that passed the common checks, with the state it applies to: what the
/// per-kind functions need without recomputing it.
struct Step {
    /// The version the event will have.
    version: u64,
    /// The event's name, for errors.
    what: &'static str,
    /// The event's time (`None` in an untimed game).
    at: Option<u64>,
    /// The status before the event.
    status: Status,
    /// The side to move before the event.
    to_move: Color,
    /// For a move, the legal moves before it (one generation serves the status too).
    legal: Option<MoveList>,
}

impl Step {
    fn fail(&self, why: String) -> ReplayError {
        ReplayError {
            version: self.version,
            what: self.what,
            why,
        }
    }

    /// Refuses an event that needs the game going when the game is over.
    fn going(&self) -> Result<(), ReplayError> {
        if self.status.is_over() {
            return Err(self.fail(format!("the game is already over ({})", self.status)));
        }
        Ok(())
    }
}

/// What an applied event did, for its spectator record.
struct Effect {
    /// The side the event is attributed to.
    by: Option<Color>,
    /// For a move or an undo, the position before the move and the move.
    moved: Option<(GamePosition, Move)>,
}

impl Effect {
    fn by(by: Option<Color>) -> Effect {
        Effect { by, moved: None }
    }
}

impl Match {
    /// Checks `entry` against the current state and applies it (the replay step, used
    /// for live changes and for reading stored logs alike).
    pub fn apply(&mut self, entry: LogEntry) -> Result<(), ReplayError> {
        let step = self.check_entry(entry)?;
        let effect = match entry.event {
            Event::Move(m) => self.apply_move(&step, m)?,
            Event::Undo => self.apply_undo(&step)?,
            Event::DrawOffered(color) => self.apply_draw_offered(&step, color)?,
            Event::DrawDeclined | Event::DrawAccepted => {
                self.apply_draw_answer(&step, entry.event == Event::DrawAccepted)?
            }
            Event::DrawLapsed => self.apply_draw_lapsed(&step)?,
            Event::Resigned(color) => self.apply_resigned(&step, color)?,
            Event::DrawClaimed { rule, announced } => {
                self.apply_draw_claimed(&step, rule, announced)?
            }
            Event::FlagFell => self.apply_flag_fell(&step)?,
            Event::FlagFellUnwinnable => self.apply_flag_fell_unwinnable(&step)?,
            Event::DeadPosition => self.apply_dead_position(&step)?,
            Event::TimeAdded { color, ms } => self.apply_time_added(&step, color, ms)?,
        };
        self.log_applied(entry, &step, effect);
        Ok(())
    }

    /// The checks every event shares: its time against the game's clocks and the
    /// latest event, a pending lapse, the flag time. Changes nothing but the cached
    /// status.
    fn check_entry(&self, entry: LogEntry) -> Result<Step, ReplayError> {
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
        Ok(Step {
            version,
            what,
            at,
            status: self.status(),
            to_move: self.game.position().turn(),
            legal,
        })
    }

    /// What every applied event leaves behind: the log entry, the latest time, the
    /// status to recompute, and a spectator record when someone watches.
    fn log_applied(&mut self, entry: LogEntry, s: &Step, effect: Effect) {
        if !matches!(entry.event, Event::Move(_)) {
            self.only_moves = false;
        }
        if let Some(t) = s.at {
            self.last_ms = t;
        }
        self.log.push(entry);
        self.status = OnceLock::new();
        if self.recording {
            let record = self.record(s.version, Some(entry.event), s.at, effect.by, effect.moved);
            self.records.push(record);
        }
    }

    fn apply_move(&mut self, s: &Step, m: Move) -> Result<Effect, ReplayError> {
        s.going()?;
        let to_move = s.to_move;
        if self.offer == Some(!to_move) {
            return Err(s.fail(format!(
                "{}'s draw offer is pending; it lapses (an event of its own) before {to_move} moves",
                !to_move
            )));
        }
        let before = *self.game.position();
        if !s.legal.as_ref().is_some_and(|l| l.contains(&m)) {
            return Err(s.fail(format!(
                "{} is not legal in {}",
                before.uci(m),
                before.to_fen()
            )));
        }
        // Legal, and the game is going on (checked above): no second status check.
        let ply = self.game.ply();
        self.game.push_unchecked(m);
        self.opening.push(self.game.position());
        if let (Some(c), Some(t)) = (self.clocks.as_mut(), s.at) {
            // A move made before the clocks started is neither charged nor given
            // the increment.
            if c.started_at(ply) {
                let r = &mut c.remaining[to_move];
                // The flag check (`check_entry`) guarantees t - since < r.
                *r = r.saturating_sub(t - c.since_ms) + c.control.increment_ms();
            }
            c.since_ms = t;
            c.before.push(c.remaining);
        }
        self.lapse_pending = false;
        self.offered_since_move[to_move] = false;
        Ok(Effect {
            by: Some(to_move),
            moved: Some((before, m)),
        })
    }

    fn apply_undo(&mut self, s: &Step) -> Result<Effect, ReplayError> {
        let Some(m) = self.game.undo() else {
            return Err(s.fail("there is no move to take back".into()));
        };
        self.opening.pop();
        let moved = Some((*self.game.position(), m));
        let by = Some(self.game.position().turn());
        self.ending = None;
        if let (Some(c), Some(t)) = (self.clocks.as_mut(), s.at) {
            c.before.pop();
            c.remaining = c.before.last().copied().unwrap_or(c.remaining);
            c.since_ms = t;
        }
        Ok(Effect { by, moved })
    }

    fn apply_draw_offered(&mut self, s: &Step, color: Color) -> Result<Effect, ReplayError> {
        s.going()?;
        if let Some(o) = self.offer {
            return Err(s.fail(format!("{o}'s draw offer is already pending")));
        }
        self.offer = Some(color);
        self.offered_since_move[color] = true;
        Ok(Effect::by(Some(color)))
    }

    /// A pending offer accepted (a draw by agreement) or declined: by its receiver.
    fn apply_draw_answer(&mut self, s: &Step, accepted: bool) -> Result<Effect, ReplayError> {
        s.going()?;
        let Some(o) = self.offer.take() else {
            return Err(s.fail("no draw offer is pending".into()));
        };
        if accepted {
            self.end(Status::DrawAgreement, s.to_move, s.at);
        }
        Ok(Effect::by(Some(!o)))
    }

    fn apply_draw_lapsed(&mut self, s: &Step) -> Result<Effect, ReplayError> {
        s.going()?;
        let to_move = s.to_move;
        if self.offer != Some(!to_move) {
            return Err(s.fail(format!(
                "no draw offer by {} is pending for {to_move}'s move to lapse",
                !to_move
            )));
        }
        self.offer = None;
        self.lapse_pending = true;
        Ok(Effect::by(Some(to_move)))
    }

    fn apply_resigned(&mut self, s: &Step, color: Color) -> Result<Effect, ReplayError> {
        s.going()?;
        self.end(Status::Resignation { winner: !color }, s.to_move, s.at);
        Ok(Effect::by(Some(color)))
    }

    fn apply_draw_claimed(
        &mut self,
        s: &Step,
        rule: ClaimRule,
        announced: bool,
    ) -> Result<Effect, ReplayError> {
        s.going()?;
        let claimant = if announced {
            match self.log.last() {
                Some(LogEntry {
                    event: Event::Move(_),
                    at_ms,
                }) if *at_ms == s.at => !s.to_move,
                _ => {
                    return Err(s.fail(
                        "a claim made with a move must directly follow that move, at the same time"
                            .into(),
                    ));
                }
            }
        } else {
            s.to_move
        };
        if !rule.holds(&self.game) {
            return Err(s.fail(format!(
                "the claim does not hold: {}",
                claim_refusal(&self.game, None)
            )));
        }
        let ending = match rule {
            ClaimRule::Threefold => Status::DrawClaimedThreefold,
            ClaimRule::FiftyMoves => Status::DrawClaimedFiftyMoves,
        };
        self.end(ending, s.to_move, s.at);
        Ok(Effect::by(Some(claimant)))
    }

    fn apply_flag_fell(&mut self, s: &Step) -> Result<Effect, ReplayError> {
        s.going()?;
        let to_move = s.to_move;
        // An untimed game's flag fall comes only from an imported PGN whose
        // Termination says "time forfeit" (see `super::super::import`): no operation
        // makes one, since `settle` needs a clock. Its time is not known.
        let pos = self.game.position();
        let ending = if pos.has_insufficient_material(!to_move) {
            Status::DrawTimeoutInsufficientMaterial
        } else {
            Status::OutOfTime { winner: !to_move }
        };
        self.end(ending, to_move, s.at);
        Ok(Effect::by(Some(to_move)))
    }

    fn apply_flag_fell_unwinnable(&mut self, s: &Step) -> Result<Effect, ReplayError> {
        s.going()?;
        let to_move = s.to_move;
        // The verdict is the record's (a replay never runs the solver); only what
        // the material rule decides is checked, since that case has its own event.
        if self.game.position().has_insufficient_material(!to_move) {
            return Err(s.fail(format!(
                "{} has no mating material, which a plain flag fall records",
                !to_move
            )));
        }
        self.end(Status::DrawTimeoutUnwinnable, to_move, s.at);
        Ok(Effect::by(Some(to_move)))
    }

    fn apply_dead_position(&mut self, s: &Step) -> Result<Effect, ReplayError> {
        s.going()?;
        let at = s.at;
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
            return Err(s.fail(
                "a dead position is recorded right after the move that made it, at the same time, or first at the creation".into(),
            ));
        }
        self.end(Status::DrawDeadPosition, s.to_move, at);
        Ok(Effect::by(None))
    }

    fn apply_time_added(&mut self, s: &Step, color: Color, ms: u64) -> Result<Effect, ReplayError> {
        s.going()?;
        let Some(c) = self.clocks.as_mut() else {
            return Err(s.fail("an untimed game has no clock to add time to".into()));
        };
        if ms == 0 || ms > MAX_ADD_TIME_MS {
            return Err(s.fail(format!("{ms} ms is not in 1 ..= {MAX_ADD_TIME_MS} ms")));
        }
        // Given for good: an undo later restores the clocks of an earlier turn,
        // which get the time too.
        c.remaining[color] = c.remaining[color].saturating_add(ms);
        for b in &mut c.before {
            b[color] = b[color].saturating_add(ms);
        }
        Ok(Effect::by(Some(color)))
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
}
