//! The clocks of a timed [`Match`] and how they read: kept apart from the log logic
//! because every reading (a flag time, a clock display, a PGN `%clk`) is derived from
//! the same few fields and must agree with how [`Match::apply`] charges time.

use crate::rules::ByColor;

use super::super::clock::{ClockReading, ClockStart, TimeControl};
use super::Match;

/// The clocks of a timed game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Clocks {
    pub(super) control: TimeControl,
    pub(super) created_ms: u64,
    /// Remaining milliseconds by colour: the side to move's as of `since_ms` (its clock
    /// runs from then while the game goes on), the other side's as it stands.
    pub(super) remaining: ByColor<u64>,
    /// When the running clock last started (creation, a move, an undo) or, once the game
    /// is over, when it stopped.
    pub(super) since_ms: u64,
    /// `before[p]`: both sides' remaining time when the turn of ply `p` began (after the
    /// previous move's increment). Undo returns to it; `before.len() == ply + 1`.
    pub(super) before: Vec<ByColor<u64>>,
}

impl Clocks {
    /// Whether the clocks run at ply `ply` (of a game still going): always, unless they
    /// start only after both sides' first moves and those are not made yet.
    pub(super) fn started_at(&self, ply: usize) -> bool {
        match self.control.clock_start() {
            ClockStart::OnCreate => true,
            ClockStart::AfterFirstMoves => ply >= 2,
        }
    }
}

impl Match {
    /// Whether the running side's clock is running now: a timed game going on whose
    /// clocks have started.
    pub(super) fn clock_runs(&self) -> bool {
        self.clocks
            .as_ref()
            .is_some_and(|c| c.started_at(self.game.ply()))
            && !self.status().is_over()
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
}
