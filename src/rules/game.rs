//! `Game`: a start position plus the moves played, with the status after every move:
//! checkmate, stalemate, the automatic draws, and the draws a player may claim.

use super::game_position::{GamePosition, GameRules};
use super::illegal::{CastleSide, IllegalMove};
use super::moves::{Move, MoveList};
use super::position::Position;
use super::san::MoveTextError;
use super::square::Color;
use super::variant::{VariantEnd, VariantMoveError, VariantOutcome};

/// Where a game stands. Every value but `InProgress` ends the game on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// The game goes on.
    InProgress,
    /// The side to move is in check and has no legal move.
    Checkmate {
        /// The side that gave mate.
        winner: Color,
    },
    /// The side to move is not in check and has no legal move: a draw.
    Stalemate,
    /// Neither side can mate by the material rule (K v K, K+minor v K, same-coloured bishops).
    InsufficientMaterial,
    /// The same position for the fifth time: FIDE 9.6.1, automatic.
    FivefoldRepetition,
    /// 75 moves by each side without a capture or pawn move: FIDE 9.6.2, automatic
    /// (a mate on the last move is still mate).
    SeventyFiveMoves,
    /// A lichess variant's own win: an exploded king, the hill, the third check, the
    /// race, all pieces lost (antichess) or the horde captured.
    VariantWin {
        /// The side that won.
        winner: Color,
    },
    /// Racing Kings' tie: both kings reached the eighth rank.
    VariantDraw,
}

impl Status {
    /// Whether the game has ended.
    pub fn is_over(self) -> bool {
        self != Status::InProgress
    }

    /// Who won, if anyone did.
    pub fn winner(self) -> Option<Color> {
        match self {
            Status::Checkmate { winner } | Status::VariantWin { winner } => Some(winner),
            _ => None,
        }
    }

    /// PGN result: `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub fn result(self) -> &'static str {
        match self {
            Status::InProgress => "*",
            _ => match self.winner() {
                Some(Color::White) => "1-0",
                Some(Color::Black) => "0-1",
                None => "1/2-1/2",
            },
        }
    }

    /// The status of a position taken alone (no history): mate, stalemate, insufficient
    /// material and the 75-move count. Repetition needs a [`Game`].
    pub fn of_position(pos: &Position) -> Status {
        Status::of_position_with(pos, pos.has_legal_move())
    }

    /// As [`Status::of_position`], for a caller that already knows whether a legal move
    /// exists (it generated them anyway).
    pub fn of_position_with(pos: &Position, has_move: bool) -> Status {
        if !has_move && pos.is_check() {
            return Status::Checkmate {
                winner: !pos.turn(),
            };
        }
        if pos.is_insufficient_material() {
            return Status::InsufficientMaterial;
        }
        if !has_move {
            return Status::Stalemate;
        }
        if pos.halfmoves() >= 150 {
            return Status::SeventyFiveMoves;
        }
        Status::InProgress
    }

    /// The status of a game's position taken alone, in any rules. A lichess variant is
    /// read in python-chess's order: its own end or mate, then both sides without winning
    /// material, then stalemate as the variant reads it, then the 75-move count (not in
    /// crazyhouse).
    pub fn of_game_position(pos: &GamePosition) -> Status {
        match pos {
            GamePosition::Chess(p) => Status::of_position(p),
            GamePosition::Lichess(p) => {
                let outcome = p.outcome();
                match outcome {
                    Some(VariantOutcome::Checkmate { winner }) => Status::Checkmate { winner },
                    Some(VariantOutcome::Variant(VariantEnd::Win(winner))) => {
                        Status::VariantWin { winner }
                    }
                    Some(VariantOutcome::Variant(VariantEnd::Draw)) => Status::VariantDraw,
                    _ if pos.is_insufficient_material() => Status::InsufficientMaterial,
                    Some(VariantOutcome::Stalemate) => Status::Stalemate,
                    None if p.kind().has_move_count_rule() && p.board().halfmoves() >= 150 => {
                        Status::SeventyFiveMoves
                    }
                    None => Status::InProgress,
                }
            }
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::InProgress => f.write_str("in progress"),
            Status::Checkmate { winner } => write!(f, "checkmate, {winner} wins"),
            Status::Stalemate => f.write_str("stalemate, a draw"),
            Status::InsufficientMaterial => f.write_str("a draw: neither side has mating material"),
            Status::FivefoldRepetition => f.write_str("a draw by fivefold repetition"),
            Status::SeventyFiveMoves => f.write_str("a draw by the 75-move rule"),
            Status::VariantWin { winner } => write!(f, "{winner} wins by the variant's rule"),
            Status::VariantDraw => f.write_str("a draw by the variant's rule"),
        }
    }
}

/// Why a move could not be played in a game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    /// The game has ended (with this status).
    #[error("the game is over ({0}); undo a move to continue")]
    GameOver(Status),
    /// The move text was refused.
    #[error(transparent)]
    Text(#[from] MoveTextError),
    /// The move is not legal in the current position.
    #[error("illegal move: {0}")]
    Illegal(IllegalMove),
}

/// A game: the start position and every move since, with the positions in between kept
/// so that undo is exact and repetitions are compared position by position.
#[derive(Clone, Debug)]
pub struct Game {
    /// positions[0] is the start; positions[i] follows moves[i - 1].
    positions: Vec<GamePosition>,
    moves: Vec<Move>,
}

impl Game {
    /// A game from `start` (a [`Position`] or any [`GamePosition`]), with no move yet.
    pub fn new(start: impl Into<GamePosition>) -> Game {
        Game {
            positions: vec![start.into()],
            moves: Vec::new(),
        }
    }

    /// The start position.
    pub fn start(&self) -> &GamePosition {
        &self.positions[0]
    }

    /// The current position.
    pub fn position(&self) -> &GamePosition {
        self.positions
            .last()
            .expect("a game always has its start position")
    }

    /// The rules the game follows.
    pub fn rules(&self) -> GameRules {
        self.start().rules()
    }

    /// Every move since the start.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Moves played since the start.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// The position before move `i` was played (`i == ply()` gives the current one).
    pub fn position_at(&self, ply: usize) -> Option<&GamePosition> {
        self.positions.get(ply)
    }

    /// Plays a legal move. Refused once the game is over.
    pub fn play(&mut self, m: Move) -> Result<(), PlayError> {
        let status = self.status();
        if status.is_over() {
            return Err(PlayError::GameOver(status));
        }
        let pos = self.position();
        if !pos.is_legal(m) {
            return Err(match pos {
                GamePosition::Chess(p) => PlayError::Illegal(explain_illegal(p, m)),
                GamePosition::Lichess(p) => {
                    PlayError::Text(MoveTextError::Variant(VariantMoveError::Illegal {
                        text: p.uci(m),
                        variant: p.kind().key(),
                    }))
                }
            });
        }
        self.push_unchecked(m);
        Ok(())
    }

    /// Plays a move given as UCI or SAN text; returns the move.
    pub fn play_text(&mut self, text: &str) -> Result<Move, PlayError> {
        let status = self.status();
        if status.is_over() {
            return Err(PlayError::GameOver(status));
        }
        let m = self.position().parse_move(text)?;
        self.push_unchecked(m);
        Ok(m)
    }

    /// Appends a move already known to be legal in the current position.
    pub(crate) fn push_unchecked(&mut self, m: Move) {
        let next = self.position().after(m);
        self.positions.push(next);
        self.moves.push(m);
    }

    /// Takes back the last move; `None` at the start. Allowed after the game has ended.
    pub fn undo(&mut self) -> Option<Move> {
        let m = self.moves.pop()?;
        self.positions.pop();
        Some(m)
    }

    /// Legal moves playable now: none once the game is over.
    pub fn legal_moves(&self) -> MoveList {
        if self.status().is_over() {
            MoveList::new()
        } else {
            self.position().legal_moves()
        }
    }

    /// The status after the last move. Precedence when several apply: checkmate,
    /// insufficient material, stalemate, the 75-move rule, fivefold repetition.
    pub fn status(&self) -> Status {
        match self.position() {
            // A variant's status generates its moves itself: asking first would do it twice.
            GamePosition::Lichess(_) => self.status_with(true),
            chess => self.status_with(chess.has_legal_move()),
        }
    }

    /// As [`Game::status`], for a caller that already knows whether the current position
    /// has a legal move (a replay that generated the moves anyway).
    pub fn status_with(&self, has_legal_move: bool) -> Status {
        let on_board = match self.position() {
            GamePosition::Chess(p) => Status::of_position_with(p, has_legal_move),
            lichess => Status::of_game_position(lichess),
        };
        match on_board {
            // Five occurrences need at least 16 reversible plies (four round trips).
            Status::InProgress if self.position().halfmoves() >= 16 && self.repetitions() >= 5 => {
                Status::FivefoldRepetition
            }
            s => s,
        }
    }

    /// Positions that may repeat the current one: same side to move, within the
    /// reversible stretch since the last capture or pawn move.
    fn reversible_window(&self) -> &[GamePosition] {
        let current = self.positions.len() - 1;
        let back = (self.position().halfmoves() as usize).min(current);
        &self.positions[current - back..]
    }

    /// How many times the current position has occurred, this time included.
    pub fn repetitions(&self) -> usize {
        let current = self.position();
        // Only positions with the same side to move can match: every second one, counting
        // back from the current position.
        self.reversible_window()
            .iter()
            .rev()
            .step_by(2)
            .filter(|p| p.same_repetition_identity(current))
            .count()
    }

    /// FIDE 9.2: the current position has occurred three times, or some legal move would
    /// make a position occur for the third time (a claim by announcing that move).
    pub fn can_claim_threefold(&self) -> bool {
        // A position comes back after four plies at the soonest, so a third occurrence
        // needs eight reversible plies: on the board, or after one more move.
        if self.position().halfmoves() < 7 {
            return false;
        }
        if self.repetitions() >= 3 {
            return true;
        }
        let window = self.reversible_window();
        let pos = self.position();
        pos.legal_moves().iter().any(|&m| {
            if pos.is_zeroing(m) {
                return false;
            }
            let next = pos.after(m);
            window
                .iter()
                .filter(|p| p.same_repetition_identity(&next))
                .count()
                >= 2
        })
    }

    /// FIDE 9.3: fifty moves by each side without a capture or pawn move, or a move that
    /// completes them (which must leave the game going: a mate ends it instead).
    pub fn can_claim_fifty_moves(&self) -> bool {
        let pos = self.position();
        if !pos.rules().has_move_count_rule() {
            return false;
        }
        if pos.halfmoves() >= 100 && pos.has_legal_move() {
            return true;
        }
        pos.halfmoves() >= 99
            && pos.legal_moves().iter().any(|&m| {
                if pos.is_zeroing(m) {
                    return false;
                }
                let next = pos.after(m);
                next.halfmoves() >= 100 && next.has_legal_move()
            })
    }

    /// The moves in SAN, from the start.
    pub fn san_moves(&self) -> Vec<String> {
        self.moves
            .iter()
            .zip(&self.positions)
            .map(|(m, p)| p.san(*m))
            .collect()
    }

    /// The moves in the variant's UCI spelling, from the start.
    pub fn uci_moves(&self) -> Vec<String> {
        self.moves
            .iter()
            .zip(&self.positions)
            .map(|(m, p)| p.uci(*m))
            .collect()
    }
}

/// Why `m`, a move that is not legal in the standard or Chess960 position `pos`, is refused.
fn explain_illegal(pos: &Position, m: Move) -> IllegalMove {
    if m.is_castle() {
        let side = if m.is_king_side_castle() {
            CastleSide::King
        } else {
            CastleSide::Queen
        };
        pos.explain_castling(side)
            .unwrap_or(IllegalMove::NoPiece { square: m.from })
    } else {
        pos.explain_illegal(m.from, m.to, m.promotion())
    }
}
