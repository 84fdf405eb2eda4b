//! Winnability: can a side still checkmate by any sequence of legal moves (FIDE 5.2.2 and
//! 6.9)? A pure solver on our own move generator, after M. Ambrona, "A Practical
//! Algorithm for Chess Unwinnability" (FUN 2022) and its MIT implementation `chasolver`.
//!
//! The answer is one of three verdicts, each with the nodes spent:
//! - [`Verdict::Winnable`] with a *helpmate*: legal moves, both sides cooperating, ending
//!   in checkmate by the intended winner. It always replays to mate with our own rules.
//! - [`Verdict::Unwinnable`]: proven; never given where a helpmate exists.
//! - [`Verdict::Undetermined`]: the node budget ran out first, or every phase gave up.
//!
//! The budget is counted in nodes (one per move tried), so the same position always gets
//! the same verdict. Chess960 works (castling is an ordinary move to the search; the
//! static analysis does not claim anything while castling rights remain).
//!
//! ```
//! use chess_service::rules::winnability::{Solver, Verdict};
//! use chess_service::rules::{Color, Position, Variant};
//!
//! // White's only move takes the queen: bare kings, nobody can mate.
//! let pos = Position::from_fen("8/8/8/2k5/8/8/1q6/K7 w - -", Variant::Standard)?;
//! let mut solver = Solver::new();
//! assert!(matches!(solver.solve(&pos, Color::Black)?, Verdict::Unwinnable { .. }));
//! // The locked wall of chasolver's README: Black cannot mate, White still can.
//! let wall = Position::from_fen("5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8 w - -", Variant::Standard)?;
//! assert!(matches!(solver.solve(&wall, Color::Black)?, Verdict::Unwinnable { .. }));
//! assert!(matches!(solver.solve(&wall, Color::White)?, Verdict::Winnable { .. }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod analysis;
mod closure;
mod dead;
mod full;
mod heuristics;
mod identity;
mod material;
mod mirror;
mod order;
mod probes;
mod saturation;
mod search;
mod statics;
mod stop;
mod tt;

pub use dead::{
    Deadness, FEW_LEGAL_MOVES, MAX_PIECES_BEHIND_A_WALL, MAX_PIECES_FOR_FORCED_LINES,
    RAMMED_PAIRS_FOR_A_WALL, could_be_dead,
};

use super::moves::Move;
use super::position::Position;
use super::square::Color;

/// Nodes a verdict may spend by default: more than all of chasolver's phase limits
/// together (1,000 + 1,000,000 + 2^24 search nodes and the probes), so by default only
/// those limits decide when a verdict is Undetermined.
pub const DEFAULT_BUDGET: u64 = 1 << 26;

/// The verdict for one intended winner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A helpmate exists; `helpmate` is one, from the given position.
    Winnable {
        /// The moves, from the given position to the mate.
        helpmate: Vec<Move>,
        /// Nodes spent.
        nodes: u64,
    },
    /// Proven: no sequence of legal moves ends in mate by the intended winner.
    Unwinnable {
        /// Nodes spent.
        nodes: u64,
    },
    /// Not decided within the budget.
    Undetermined {
        /// Nodes spent.
        nodes: u64,
    },
}

impl Verdict {
    /// Nodes spent.
    pub fn nodes(&self) -> u64 {
        match self {
            Verdict::Winnable { nodes, .. }
            | Verdict::Unwinnable { nodes }
            | Verdict::Undetermined { nodes } => *nodes,
        }
    }
}

/// A position the solver refuses to judge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WinnabilityError {
    /// The side not to move is in check: no game reaches such a position, and the king
    /// could be captured.
    #[error("the side not to move is in check")]
    OpponentInCheck,
}

/// A reusable solver: it keeps its transposition tables between calls, so a caller with
/// many positions allocates once.
pub struct Solver {
    small: tt::Table,
    large: Option<tt::Table>,
    budget: u64,
}

impl Default for Solver {
    fn default() -> Self {
        Solver::new()
    }
}

impl Solver {
    /// A solver with [`DEFAULT_BUDGET`].
    pub fn new() -> Solver {
        Solver::with_budget(DEFAULT_BUDGET)
    }

    /// A solver that spends at most `budget` nodes per verdict.
    pub fn with_budget(budget: u64) -> Solver {
        Solver {
            small: tt::Table::new(full::SMALL_TABLE_LOG2),
            large: None,
            budget,
        }
    }

    /// Nodes a verdict may spend.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Sets the nodes a verdict may spend from now on.
    pub fn set_budget(&mut self, budget: u64) {
        self.budget = budget;
    }

    /// As [`Solver::solve`], stopping early (Undetermined) once `stop` is raised, as a
    /// caller that gave up does (checked every 1,024 nodes).
    pub fn solve_stoppable(
        &mut self,
        pos: &Position,
        winner: Color,
        stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> Result<Verdict, WinnabilityError> {
        // Already raised (a caller that gave up between verdicts): not even the phases that
        // count no nodes for a while are started.
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(Verdict::Undetermined { nodes: 0 });
        }
        let _guard = stop::set(stop);
        self.solve(pos, winner)
    }

    /// Can `winner` still checkmate in `pos`?
    pub fn solve(&mut self, pos: &Position, winner: Color) -> Result<Verdict, WinnabilityError> {
        let opponent_king = pos.king(!pos.turn());
        if !pos.attackers(opponent_king, pos.turn()).is_empty() {
            return Err(WinnabilityError::OpponentInCheck);
        }
        let oriented = mirror::oriented(pos, winner);
        let mut spent = 0u64;
        let found = full::analysis(
            &oriented,
            &mut self.small,
            &mut self.large,
            &mut spent,
            self.budget,
        );
        let nodes = spent;
        Ok(match found {
            full::Found::Mate(line) => {
                let helpmate = match winner {
                    Color::White => line,
                    Color::Black => line.into_iter().map(mirror::mirror_move).collect(),
                };
                Verdict::Winnable { helpmate, nodes }
            }
            full::Found::NoMate => Verdict::Unwinnable { nodes },
            full::Found::Unknown => Verdict::Undetermined { nodes },
        })
    }
}

/// One verdict with a fresh solver and the default budget.
pub fn winnability(pos: &Position, winner: Color) -> Result<Verdict, WinnabilityError> {
    Solver::new().solve(pos, winner)
}
