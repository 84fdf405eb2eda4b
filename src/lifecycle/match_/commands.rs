//! The operations a player or an arbiter asks of a [`Match`] ([`Match::play`],
//! [`Match::undo`], draw offers and claims, resignation, added time, flag falls): each
//! checks the request, answers why it cannot be done ([`Refusal`]), and otherwise
//! appends the events it amounts to through [`Match::apply`], so that a live game and a
//! replayed one cannot differ.

use crate::rules::{Color, Game, GamePosition, Move};

use super::super::clock::MAX_ADD_TIME_MS;
use super::super::event::{ClaimRule, Event, LogEntry};
use super::super::judge;
use super::{Match, Refusal};

impl Match {
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
    pub fn undo(
        &mut self,
        now: u64,
        color: Option<Color>,
    ) -> Result<(GamePosition, Move), Refusal> {
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
    ) -> Result<Option<(GamePosition, Move)>, Refusal> {
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
pub(super) fn claim_refusal(game: &Game, announced: Option<&str>) -> String {
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
