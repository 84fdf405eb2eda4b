//! The life of a game beyond the board, as a pure library (no I/O, no async, no gRPC;
//! time is passed in as Unix milliseconds): whose turn it is, resignation, draw offers
//! and claims, clocks and flag fall, all kept as an append-only, versioned event log.
//!
//! Why a log: the store keeps it, spectators stream it, and a restart replays it, so the
//! one function that applies an event ([`Match::apply`]) is the only place that decides
//! what a game's state is. Every change is one [`Event`] with a version one above the
//! previous (the game's creation is version 0), and the current state is the replay of
//! the log from the start. Board endings (mate, stalemate, the automatic draws) are *not*
//! events: they follow from the moves and are derived, as in the rules engine; the
//! endings a player or the clock decides (resignation, agreement, a claim, a flag fall)
//! are events. One board ending is an event too: a dead position beyond the material
//! rule ([`Event::DeadPosition`]), because the solver decides it and a replay must not
//! run the solver again ([`judge`]).
//!
//! Clock rules (the server is the clock's authority):
//! - The side to move's clock starts when the game is created (FIDE 6.5: the white clock
//!   is started at the start of the game), so a game should be created when both players
//!   are ready; no clock can be stalled by never moving. With
//!   [`ClockStart::AfterFirstMoves`] no clock runs until both sides have made their first
//!   move (those moves are neither charged nor given the increment); then the side to
//!   move's clock runs from the second move, and an undo back before it stops the clocks.
//! - A move made at time `t` charges the mover `t - turn start`, then adds the Fischer
//!   increment; the opponent's clock runs from `t`.
//! - The flag falls at exactly `turn start + remaining` of the side to move. Any operation
//!   at or after that instant first records the flag fall at that exact instant (and is
//!   then refused, the game being over). It is a loss for the side whose flag fell, or a
//!   draw when the opponent could not checkmate by any sequence of legal moves (FIDE 6.9):
//!   by the material rule ([`crate::rules::Position::has_insufficient_material`]), or
//!   proven by the winnability solver when the flag fell ([`judge`],
//!   [`Event::FlagFellUnwinnable`]). An undetermined verdict is a loss on time.
//! - Undo puts both clocks back to what they were when the undone move's turn began; the
//!   side to move's clock then runs from the undo.
//! - Resignation, agreement and claims stop the clocks at the time of the event.
//! - Time added to a side ([`Event::TimeAdded`], 1 ms to an hour at once, while the game
//!   goes on) is added to its remaining time, and stays through later undos (it is added
//!   to the clock of every earlier turn as well).
//! - Times never run backwards within a game: a reading earlier than the game's latest
//!   event counts as that event's time.
//!
//! Untimed games keep no times at all: an untimed record stays under a byte per ply.

mod clock;
mod event;
pub mod import;
pub mod judge;
mod match_;
mod meta;
pub mod opening;
pub mod pgn;
pub mod tags;

pub use clock::{
    ClockReading, ClockStart, MAX_ADD_TIME_MS, MAX_INCREMENT_MS, MAX_INITIAL_MS, TimeControl,
    TimeControlError, pgn_clk,
};
pub use event::{ClaimRule, Event, EventRecord, LogEntry, Status};
pub use match_::{Match, Refusal, ReplayError};
pub use meta::{GameMeta, Start};
pub use opening::Opening;
pub use tags::{TagError, Tags};

#[cfg(test)]
mod tests;
