//! PGN export of a [`Match`]: the board's PGN with the result decided off the board and
//! the caller's tags, a `Termination` tag once the game is over, for timed games a
//! `TimeControl` tag and each move's `%clk` (the mover's remaining time after the move,
//! increment included), and `ECO` and `Opening` tags once the game has reached a named
//! opening position.
//!
//! Tag order, the same in every build (the caller's tags are sorted by name):
//! 1. the Seven Tag Roster in its order: Event, Site, Date, Round, White, Black (the
//!    caller's value when set, else `?`, `????.??.??` for Date), Result;
//! 2. the tags the server sets: Variant, SetUp, FEN (by the start), TimeControl,
//!    Termination, then ECO and Opening when the game has a named opening (a caller's
//!    ECO and Opening take their place when the server names none);
//! 3. the caller's other tags, sorted by name (byte order).

use crate::rules::pgn::{PgnExtras, ROSTER, to_pgn_with};

use super::Match;
use super::Tags;
use super::clock::pgn_clk;

/// The game as PGN; `sans[i]` is the SAN of move `i` (kept by the caller as the game
/// goes), `tags` the caller's tags.
pub fn to_pgn(m: &Match, sans: &[String], tags: &Tags) -> String {
    let status = m.status();
    let mut pairs: Vec<(String, String)> = Vec::new();
    if let Some(tc) = m.time_control() {
        pairs.push(("TimeControl".into(), tc.pgn()));
    }
    if status.is_over() {
        pairs.push(("Termination".into(), status.termination().to_string()));
    }
    match m.opening() {
        Some(opening) => {
            pairs.push(("ECO".into(), opening.eco.to_string()));
            pairs.push(("Opening".into(), opening.name.to_string()));
        }
        None => {
            for name in ["ECO", "Opening"] {
                if let Some(value) = tags.get(name) {
                    pairs.push((name.into(), value.into()));
                }
            }
        }
    }
    // Sorted by name already (a BTreeMap's order).
    pairs.extend(
        tags.iter()
            .filter(|(name, _)| !ROSTER.contains(name) && !["ECO", "Opening"].contains(name))
            .map(|(name, value)| (name.to_string(), value.to_string())),
    );
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
            roster: ROSTER.map(|name| tags.get(name).map(str::to_string)),
            tags: pairs,
            comments,
        },
    )
}
