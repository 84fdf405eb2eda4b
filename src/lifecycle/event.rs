//! The events of a game's log, where a game stands, and what a spectator is told.

use std::fmt;

use crate::rules::{self, Color, GamePosition, Move};

use super::clock::ClockReading;

/// The rule a draw claim invokes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClaimRule {
    /// FIDE 9.2: the same position for at least the third time.
    Threefold,
    /// FIDE 9.3: fifty moves by each side without a capture or a pawn move.
    FiftyMoves,
}

impl ClaimRule {
    /// Whether the rule holds for the position on the board of `game` (a claim made with
    /// a move is judged after that move).
    pub fn holds(self, game: &rules::Game) -> bool {
        match self {
            ClaimRule::Threefold => game.repetitions() >= 3,
            ClaimRule::FiftyMoves => game.position().halfmoves() >= 100,
        }
    }
}

/// One change in a game's life. A game's log is a list of these; its state is their
/// replay. Which side an event is by is implied where the rules leave no choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The side to move played this move.
    Move(Move),
    /// The last move was taken back, together with a resignation, agreement, claim or
    /// flag fall recorded after it (the game is in progress again).
    Undo,
    /// This side offered a draw. It stays pending until the other side accepts or
    /// declines it, or lapses it by moving, or the game ends (FIDE 9.1.2.3).
    DrawOffered(Color),
    /// The side that did not offer declined the pending offer.
    DrawDeclined,
    /// The side that did not offer is moving instead of answering: the offer lapses. Always
    /// immediately followed by that side's [`Event::Move`].
    DrawLapsed,
    /// The side that did not offer accepted: a draw by agreement.
    DrawAccepted,
    /// This side resigned: the other side wins.
    Resigned(Color),
    /// A draw claimed under `rule`. `announced`: the claim was made with the move just
    /// before it (FIDE 9.2.1.1, 9.3.1), by the side that played it; otherwise it was made
    /// by the side to move, about the position on the board (FIDE 9.2.1.2, 9.3.2).
    DrawClaimed {
        /// Threefold repetition or the fifty-move rule.
        rule: ClaimRule,
        /// Made with the move just before it, by the side that played it.
        announced: bool,
    },
    /// The side to move ran out of time. Untimed (no time, no clock) only in a game
    /// imported from PGN whose `Termination` says "time forfeit" ([`super::import`]).
    FlagFell,
    /// The side to move ran out of time, and the other side was proven unable to mate by
    /// any sequence of legal moves for a reason beyond the material rule (FIDE 6.9): a
    /// draw. Decided by the solver when the flag fell ([`super::judge`]); a replay takes
    /// the record's word for it.
    FlagFellUnwinnable,
    /// The position on the board was proven dead (FIDE 5.2.2) for a reason beyond the
    /// material rule: neither side can mate by any sequence of legal moves. Recorded by
    /// the change that made the position (a move, or the creation from a FEN), at its
    /// time; the game is drawn. An undo of that move takes it back with the move.
    DeadPosition,
    /// `ms` milliseconds were added to `color`'s clock (a player giving the opponent
    /// time, or an arbiter after an interruption): 1 ms to [`super::MAX_ADD_TIME_MS`],
    /// timed games only, while the game goes on.
    TimeAdded {
        /// The side whose clock gets the time.
        color: Color,
        /// How much, in milliseconds.
        ms: u64,
    },
}

impl Event {
    /// Short lower-case name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Move(_) => "move",
            Event::Undo => "undo",
            Event::DrawOffered(_) => "draw offer",
            Event::DrawDeclined => "draw declined",
            Event::DrawLapsed => "draw offer lapsed",
            Event::DrawAccepted => "draw accepted",
            Event::Resigned(_) => "resignation",
            Event::DrawClaimed { .. } => "draw claim",
            Event::FlagFell => "flag fall",
            Event::FlagFellUnwinnable => "flag fall against a side that cannot mate",
            Event::DeadPosition => "dead position",
            Event::TimeAdded { .. } => "time added",
        }
    }
}

/// One entry of the log: an event and, in a timed game, when it happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogEntry {
    /// What happened.
    pub event: Event,
    /// Unix milliseconds; `Some` exactly in timed games. For a move, the time it arrived;
    /// for a flag fall, the exact flag time.
    pub at_ms: Option<u64>,
}

/// Where a game stands. Every value but `InProgress` ends the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// The game goes on.
    InProgress,
    // On the board (derived from the moves, as the rules engine says).
    /// Checkmate on the board.
    Checkmate {
        /// The side that gave mate.
        winner: Color,
    },
    /// Stalemate on the board: a draw.
    Stalemate,
    /// Neither side can mate by the material rule (K v K, K+minor v K, bishops all on
    /// one colour): a draw.
    InsufficientMaterial,
    /// The same position a fifth time: a draw, automatic.
    FivefoldRepetition,
    /// 75 moves by each side without a capture or pawn move: a draw, automatic.
    SeventyFiveMoves,
    /// A lichess variant's own win on the board: an exploded king, the hill, the third
    /// check, the race, all pieces lost (antichess) or the horde captured.
    VariantWin {
        /// The side that won.
        winner: Color,
    },
    /// Racing Kings' tie: both kings reached the eighth rank.
    VariantDraw,
    // Decided by a player or the clock (events in the log).
    /// A side resigned.
    Resignation {
        /// The side that did not resign.
        winner: Color,
    },
    /// A draw offer was accepted.
    DrawAgreement,
    /// A draw claimed by threefold repetition.
    DrawClaimedThreefold,
    /// A draw claimed under the fifty-move rule.
    DrawClaimedFiftyMoves,
    /// A flag fell and the other side could still mate.
    OutOfTime {
        /// The side whose flag did not fall.
        winner: Color,
    },
    /// The flag fell, but the opponent could not have checkmated by the material rule: a
    /// draw (FIDE 6.9).
    DrawTimeoutInsufficientMaterial,
    /// Neither side can mate by any sequence of legal moves, for a reason beyond the
    /// material rule (a locked pawn wall, forced lines): a draw (FIDE 5.2.2).
    DrawDeadPosition,
    /// The flag fell, but the opponent could not have checkmated by any sequence of legal
    /// moves, for a reason beyond the material rule: a draw (FIDE 6.9).
    DrawTimeoutUnwinnable,
}

impl From<rules::Status> for Status {
    fn from(s: rules::Status) -> Status {
        match s {
            rules::Status::InProgress => Status::InProgress,
            rules::Status::Checkmate { winner } => Status::Checkmate { winner },
            rules::Status::Stalemate => Status::Stalemate,
            rules::Status::InsufficientMaterial => Status::InsufficientMaterial,
            rules::Status::FivefoldRepetition => Status::FivefoldRepetition,
            rules::Status::SeventyFiveMoves => Status::SeventyFiveMoves,
            rules::Status::VariantWin { winner } => Status::VariantWin { winner },
            rules::Status::VariantDraw => Status::VariantDraw,
        }
    }
}

impl Status {
    /// Whether the game has ended.
    pub fn is_over(self) -> bool {
        self != Status::InProgress
    }

    /// The board's own status, when the board decides it (not an ending decided by a
    /// player or the clock).
    pub fn on_board(self) -> Option<rules::Status> {
        Some(match self {
            Status::InProgress => rules::Status::InProgress,
            Status::Checkmate { winner } => rules::Status::Checkmate { winner },
            Status::Stalemate => rules::Status::Stalemate,
            Status::InsufficientMaterial => rules::Status::InsufficientMaterial,
            Status::FivefoldRepetition => rules::Status::FivefoldRepetition,
            Status::SeventyFiveMoves => rules::Status::SeventyFiveMoves,
            Status::VariantWin { winner } => rules::Status::VariantWin { winner },
            Status::VariantDraw => rules::Status::VariantDraw,
            _ => return None,
        })
    }

    /// An ending on the board: what the moves decided (mate, stalemate, the automatic
    /// draws, a dead position), not a player or the clock. An undo of the last move may
    /// take it back, as any move may be taken back.
    pub fn is_board_ending(self) -> bool {
        self.is_over() && (self.on_board().is_some() || self == Status::DrawDeadPosition)
    }

    /// Who won, if anyone did.
    pub fn winner(self) -> Option<Color> {
        match self {
            Status::Checkmate { winner }
            | Status::VariantWin { winner }
            | Status::Resignation { winner }
            | Status::OutOfTime { winner } => Some(winner),
            _ => None,
        }
    }

    /// PGN result: `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub fn result(self) -> &'static str {
        match (self, self.winner()) {
            (Status::InProgress, _) => "*",
            (_, Some(Color::White)) => "1-0",
            (_, Some(Color::Black)) => "0-1",
            (_, None) => "1/2-1/2",
        }
    }

    /// The PGN `Termination` tag: `time forfeit` when a flag fell (a loss or, against a
    /// side that cannot mate, a draw), `normal` for every other ending (the result says
    /// who won), `unterminated` while the game goes on.
    pub fn termination(self) -> &'static str {
        match self {
            Status::InProgress => "unterminated",
            Status::OutOfTime { .. }
            | Status::DrawTimeoutInsufficientMaterial
            | Status::DrawTimeoutUnwinnable => "time forfeit",
            _ => "normal",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Resignation { winner } => write!(f, "{} resigned, {winner} wins", !*winner),
            Status::DrawAgreement => f.write_str("a draw by agreement"),
            Status::DrawClaimedThreefold => f.write_str("a draw claimed by threefold repetition"),
            Status::DrawClaimedFiftyMoves => f.write_str("a draw claimed by the fifty-move rule"),
            Status::OutOfTime { winner } => {
                write!(f, "{} ran out of time, {winner} wins", !*winner)
            }
            Status::DrawTimeoutInsufficientMaterial => f.write_str(
                "a draw: a flag fell, but the other side had no mating material",
            ),
            Status::DrawDeadPosition => f.write_str(
                "a draw: the position is dead, neither side can checkmate by any sequence of legal moves",
            ),
            Status::DrawTimeoutUnwinnable => f.write_str(
                "a draw: a flag fell, but the other side could not checkmate by any sequence of legal moves",
            ),
            // The board's statuses read as the rules engine writes them.
            board => board.on_board().map_or(Ok(()), |b| b.fmt(f)),
        }
    }
}

/// What a spectator is told about one version of a game: the event and the state it left
/// the game in. Built by the same code that applies the event ([`super::Match::apply`]),
/// so an event streamed live and the same event replayed from the store are identical.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRecord {
    /// 0 for the game's creation, then one more per event.
    pub version: u64,
    /// The event; `None` for version 0, the creation.
    pub event: Option<Event>,
    /// In a timed game, when it happened (the creation time for version 0).
    pub at_ms: Option<u64>,
    /// The side the event is by: the mover, the side offering, declining (or lapsing the
    /// offer by moving), accepting, resigning or claiming, the side whose flag fell, the
    /// side whose move was taken back, or the side that was given time.
    pub by: Option<Color>,
    /// For a move played or taken back: the position before the move, and the move.
    pub moved: Option<(GamePosition, Move)>,
    /// The position after the event.
    pub position: GamePosition,
    /// Moves on the board after the event.
    pub ply: usize,
    /// Where the game stands after the event.
    pub status: Status,
    /// The side whose draw offer is pending after the event.
    pub offer: Option<Color>,
    /// Both clocks as of the event (timed games).
    pub clock: Option<ClockReading>,
}
