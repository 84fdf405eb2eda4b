//! Time controls and clock readings.

use crate::rules::{ByColor, Color};

/// The longest initial time accepted: 24 hours.
pub const MAX_INITIAL_MS: u64 = 24 * 60 * 60 * 1000;
/// The largest increment accepted: 1 hour.
pub const MAX_INCREMENT_MS: u64 = 60 * 60 * 1000;
/// The most time added to a clock at once (AddTime): 1 hour.
pub const MAX_ADD_TIME_MS: u64 = 60 * 60 * 1000;

/// When a timed game's clocks start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClockStart {
    /// The side to move's clock runs from the game's creation (FIDE 6.5).
    #[default]
    OnCreate,
    /// No clock runs until both sides have made their first move (as on lichess, so a
    /// player slow to connect loses no time before the game has begun); from the second
    /// move on, the side to move's clock runs. Those first moves are not charged and get
    /// no increment. An undo back before the second move stops the clocks again.
    AfterFirstMoves,
}

/// Each side's time for the whole game plus a Fischer increment added after each of its
/// moves, and when the clocks start. (Delays, simple or Bronstein, are not offered.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeControl {
    initial_ms: u64,
    increment_ms: u64,
    clock_start: ClockStart,
}

/// A time control outside what the service accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeControlError {
    /// No initial time.
    #[error("the initial time must be at least 1 ms")]
    NoTime,
    /// An initial time above [`MAX_INITIAL_MS`].
    #[error("the initial time {ms} ms is above the maximum {MAX_INITIAL_MS} ms (24 hours)")]
    InitialTooLong {
        /// The initial time asked for.
        ms: u64,
    },
    /// An increment above [`MAX_INCREMENT_MS`].
    #[error("the increment {ms} ms is above the maximum {MAX_INCREMENT_MS} ms (1 hour)")]
    IncrementTooLong {
        /// The increment asked for.
        ms: u64,
    },
}

impl TimeControlError {
    /// The field of a time control the error is about: `initial_ms` or `increment_ms`.
    pub fn field(&self) -> &'static str {
        match self {
            TimeControlError::NoTime | TimeControlError::InitialTooLong { .. } => "initial_ms",
            TimeControlError::IncrementTooLong { .. } => "increment_ms",
        }
    }
}

impl TimeControl {
    /// A time control of `initial_ms` (1 ms to 24 hours) per side plus `increment_ms` (at
    /// most 1 hour) after each move. The bounds keep every clock sum far from overflow.
    pub fn new(initial_ms: u64, increment_ms: u64) -> Result<TimeControl, TimeControlError> {
        if initial_ms == 0 {
            return Err(TimeControlError::NoTime);
        }
        if initial_ms > MAX_INITIAL_MS {
            return Err(TimeControlError::InitialTooLong { ms: initial_ms });
        }
        if increment_ms > MAX_INCREMENT_MS {
            return Err(TimeControlError::IncrementTooLong { ms: increment_ms });
        }
        Ok(TimeControl {
            initial_ms,
            increment_ms,
            clock_start: ClockStart::OnCreate,
        })
    }

    /// The same time control with its clocks starting as `clock_start` says.
    pub fn with_clock_start(self, clock_start: ClockStart) -> TimeControl {
        TimeControl {
            clock_start,
            ..self
        }
    }

    /// When the clocks start.
    pub fn clock_start(&self) -> ClockStart {
        self.clock_start
    }

    /// Each side's time at the start, in milliseconds.
    pub fn initial_ms(&self) -> u64 {
        self.initial_ms
    }

    /// The time added to a side's clock after each of its moves (Fischer), in milliseconds.
    pub fn increment_ms(&self) -> u64 {
        self.increment_ms
    }

    /// The PGN `TimeControl` tag value: `seconds+increment`, e.g. `300+2` (fractions of a
    /// second written as decimals, `0.5+0.1`).
    pub fn pgn(&self) -> String {
        format!(
            "{}+{}",
            seconds(self.initial_ms),
            seconds(self.increment_ms)
        )
    }
}

fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        s.trim_end_matches('0').to_string()
    }
}

/// Both clocks at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockReading {
    /// The game's time control.
    pub control: TimeControl,
    /// Remaining milliseconds of each side.
    pub remaining_ms: ByColor<u64>,
    /// Whose clock runs; `None` once the game is over.
    pub running: Option<Color>,
    /// The instant of the reading (Unix milliseconds).
    pub as_of_ms: u64,
}

impl ClockReading {
    /// `color`'s time left at the reading, in milliseconds.
    pub fn remaining(&self, color: Color) -> u64 {
        self.remaining_ms[color]
    }
}

/// A clock time as PGN's `%clk` writes it: `h:mm:ss`, with tenths (`h:mm:ss.t`) when the
/// time is not a whole number of seconds (sub-second controls would otherwise read 0).
pub fn pgn_clk(ms: u64) -> String {
    let (h, m, s, tenths) = (
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000 / 100,
    );
    if ms.is_multiple_of(1000) {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{h}:{m:02}:{s:02}.{tenths}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_controls_are_bounded_and_written_for_pgn() {
        assert_eq!(TimeControl::new(0, 0), Err(TimeControlError::NoTime));
        assert!(TimeControl::new(MAX_INITIAL_MS + 1, 0).is_err());
        assert_eq!(
            TimeControl::new(1000, MAX_INCREMENT_MS + 1)
                .unwrap_err()
                .field(),
            "increment_ms"
        );
        assert_eq!(TimeControl::new(300_000, 2000).unwrap().pgn(), "300+2");
        assert_eq!(TimeControl::new(500, 100).unwrap().pgn(), "0.5+0.1");
        assert_eq!(TimeControl::new(1250, 0).unwrap().pgn(), "1.25+0");
    }

    #[test]
    fn pgn_clock_times() {
        assert_eq!(pgn_clk(300_000), "0:05:00");
        assert_eq!(pgn_clk(3_723_000), "1:02:03");
        assert_eq!(pgn_clk(59_950), "0:00:59.9");
        assert_eq!(pgn_clk(0), "0:00:00");
    }
}
