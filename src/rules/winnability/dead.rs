//! Dead positions (FIDE 5.2.2): neither side can checkmate by any sequence of legal moves.
//! A game asks after every change that makes a new position, so the question has a fast
//! path ([`could_be_dead`]) in front of the solver.
//!
//! Why the fast path is shaped as it is: within a per-change budget the solver proves a
//! side unwinnable, beyond the material rule, in two ways only: the lines from the
//! position run out (a side has so few moves, and so little material, that every line is
//! forced into a draw), or pawns locked head to head wall the pieces off from the enemy
//! king. A position with neither shape is not examined: it is treated as undetermined,
//! which never ends a game. `tests/rules/dead_positions.rs` checks that every dead
//! position of chasolver's lichess file passes the fast path, and counts the composed ones
//! it clears.

use super::super::bitboard::Bitboard;
use super::super::piece::Role;
use super::super::position::Position;
use super::super::square::Color;
use super::{Solver, Verdict, WinnabilityError};

/// Pawn pairs locked head to head (a white pawn with a black pawn directly in front)
/// from which a wall may stand: fewer leave a king a way round or a pawn to take.
pub const RAMMED_PAIRS_FOR_A_WALL: u32 = 3;

/// Pieces (other than kings and pawns, both sides together) up to which a wall is worth
/// examining: more find a way through, or take too long to prove walled in.
pub const MAX_PIECES_BEHIND_A_WALL: u32 = 6;

/// Legal moves of the side to move up to which forced lines may decide the position.
pub const FEW_LEGAL_MOVES: u64 = 4;

/// Pieces (other than kings and pawns) up to which forced lines may decide the position.
pub const MAX_PIECES_FOR_FORCED_LINES: u32 = 3;

/// Whether `pos` may be dead for a reason other than the material rule, and so is worth
/// the solver's time: at least [`RAMMED_PAIRS_FOR_A_WALL`] locked pawn pairs with at most
/// [`MAX_PIECES_BEHIND_A_WALL`] pieces, or at most [`FEW_LEGAL_MOVES`] legal moves for the
/// side to move with at most [`MAX_PIECES_FOR_FORCED_LINES`] pieces. `false` clears the
/// position without search (the game goes on, as on an undetermined verdict). A few
/// nanoseconds of bit counting; moves are counted only in positions with few pieces.
pub fn could_be_dead(pos: &Position) -> bool {
    let white = pos.pieces(Color::White, Role::Pawn);
    let black = pos.pieces(Color::Black, Role::Pawn);
    let pieces = (pos.occupied() & !pos.by_role(Role::King) & !pos.by_role(Role::Pawn)).count();
    // A white pawn whose square one rank up holds a black pawn.
    let rammed: Bitboard = white & black.shift(-8);
    (pieces <= MAX_PIECES_BEHIND_A_WALL && rammed.count() >= RAMMED_PAIRS_FOR_A_WALL)
        || (pieces <= MAX_PIECES_FOR_FORCED_LINES && pos.count_legal_moves() <= FEW_LEGAL_MOVES)
}

/// The verdict on a position for both sides at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Deadness {
    /// Both sides proven unwinnable: the position is dead.
    Dead {
        /// Nodes spent, both sides together.
        nodes: u64,
    },
    /// A side can still mate (its helpmate found).
    Alive {
        /// Nodes spent.
        nodes: u64,
    },
    /// Not decided within the budget.
    Undetermined {
        /// Nodes spent.
        nodes: u64,
    },
}

impl Solver {
    /// Whether `pos` is dead: both sides judged within this solver's budget, shared
    /// between them (the side not to move first: it made the last move, and is the one
    /// more often still able to mate).
    pub fn dead(&mut self, pos: &Position) -> Result<Deadness, WinnabilityError> {
        let budget = self.budget;
        let mut spent = 0;
        let mut undetermined = false;
        for winner in [!pos.turn(), pos.turn()] {
            self.budget = budget.saturating_sub(spent);
            let verdict = self.solve(pos, winner);
            self.budget = budget;
            let verdict = verdict?;
            spent += verdict.nodes();
            match verdict {
                Verdict::Winnable { .. } => return Ok(Deadness::Alive { nodes: spent }),
                Verdict::Undetermined { .. } => undetermined = true,
                Verdict::Unwinnable { .. } => {}
            }
            if spent >= budget {
                undetermined = true;
                break;
            }
        }
        Ok(if undetermined {
            Deadness::Undetermined { nodes: spent }
        } else {
            Deadness::Dead { nodes: spent }
        })
    }
}
