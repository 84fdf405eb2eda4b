//! PGN export of a [`Match`]: the board's PGN with the result decided off the board, a
//! `Termination` tag once the game is over, for timed games a `TimeControl` tag and each
//! move's `%clk` (the mover's remaining time after the move, increment included), and
//! `ECO` and `Opening` tags once the game has reached a named opening position.

use crate::rules::pgn::{PgnExtras, to_pgn_with};

use super::Match;
use super::clock::pgn_clk;

/// The game as PGN; `sans[i]` is the SAN of move `i` (kept by the caller as the game goes).
pub fn to_pgn(m: &Match, sans: &[String]) -> String {
    let status = m.status();
    let mut tags = Vec::new();
    if status.is_over() {
        tags.push(("Termination", status.termination().to_string()));
    }
    if let Some(tc) = m.time_control() {
        tags.push(("TimeControl", tc.pgn()));
    }
    if let Some(opening) = m.opening() {
        // The dataset's names hold no `"` or `\` (checked by the opening tests), so they
        // need no escaping.
        tags.push(("ECO", opening.eco.to_string()));
        tags.push(("Opening", opening.name.to_string()));
    }
    let comments = m
        .move_clocks()
        .map(|clocks| {
            clocks
                .into_iter()
                .map(|ms| format!("[%clk {}]", pgn_clk(ms)))
                .collect()
        })
        .unwrap_or_default();
    to_pgn_with(
        m.game(),
        sans,
        &PgnExtras {
            result: Some(status.result()),
            tags,
            comments,
        },
    )
}
