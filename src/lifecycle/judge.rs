//! What the winnability solver decides for a game while it is played, never on replay:
//! whether a change left a dead position (FIDE 5.2.2), and whether a flag fell against a
//! side that could not have mated anyway (FIDE 6.9). Each decision is recorded in the log
//! as an event ([`Event::DeadPosition`], [`Event::FlagFellUnwinnable`]), so a later build
//! with a better solver changes no stored game.
//!
//! Budgets are nodes, not time, so a decision does not depend on the machine's load. They
//! are the process's settings ([`set_budgets`], from the server's flags): a game's
//! decisions never depend on anything else.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::rules::winnability::{Deadness, Solver, Verdict, could_be_dead};
use crate::rules::{Color, GamePosition, Position};

use super::event::Event;

/// Nodes the per-change dead-position check may spend by default, both sides together:
/// under 2 ms on the slowest positions of chasolver's files on the reference machine
/// (see BENCHMARKS.md).
pub const DEFAULT_CHANGE_BUDGET: u64 = 20_000;

/// Nodes a flag fall's verdict may spend by default: the solver's own full budget.
pub const DEFAULT_FLAG_BUDGET: u64 = crate::rules::winnability::DEFAULT_BUDGET;

static CHANGE_BUDGET: AtomicU64 = AtomicU64::new(DEFAULT_CHANGE_BUDGET);
static FLAG_BUDGET: AtomicU64 = AtomicU64::new(DEFAULT_FLAG_BUDGET);

/// The solver's budgets for this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budgets {
    /// Nodes the dead-position check after one change may spend (0: only the material
    /// rule ends games).
    pub change_nodes: u64,
    /// Nodes a flag fall's verdict may spend (0: only the material rule draws them).
    pub flag_nodes: u64,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            change_nodes: DEFAULT_CHANGE_BUDGET,
            flag_nodes: DEFAULT_FLAG_BUDGET,
        }
    }
}

/// Sets the budgets for every later decision (the server does it once, at start).
pub fn set_budgets(b: Budgets) {
    CHANGE_BUDGET.store(b.change_nodes, Ordering::Relaxed);
    FLAG_BUDGET.store(b.flag_nodes, Ordering::Relaxed);
}

/// The budgets in force.
pub fn budgets() -> Budgets {
    Budgets {
        change_nodes: CHANGE_BUDGET.load(Ordering::Relaxed),
        flag_nodes: FLAG_BUDGET.load(Ordering::Relaxed),
    }
}

thread_local! {
    /// One solver per thread for the per-change check: its small table is allocated
    /// once, and a per-change budget never reaches the phase that allocates the large one
    /// for long.
    static CHANGE_SOLVER: RefCell<Solver> = RefCell::new(Solver::with_budget(DEFAULT_CHANGE_BUDGET));
}

/// Whether a game in progress at `pos` (not ended by the board: the material rule,
/// stalemate and mate come first) is proven dead within the per-change budget. The solver
/// is for standard chess and Chess960; a lichess variant's games end by its own rules.
pub fn is_dead(pos: &GamePosition) -> bool {
    let Some(pos) = pos.as_chess() else {
        return false;
    };
    let budget = CHANGE_BUDGET.load(Ordering::Relaxed);
    if budget == 0 || !could_be_dead(pos) {
        return false;
    }
    CHANGE_SOLVER.with(|solver| {
        let mut solver = solver.borrow_mut();
        solver.set_budget(budget);
        matches!(solver.dead(pos), Ok(Deadness::Dead { .. }))
    })
}

/// The event for the flag fall of the side to move at `pos`: a draw by the material rule
/// is [`Event::FlagFell`] (the replay sees the material), a proof that the other side
/// cannot mate is [`Event::FlagFellUnwinnable`], and anything else (the other side can
/// mate, or the budget ran out) is a loss on time, [`Event::FlagFell`]. In a lichess
/// variant only the variant's material rule draws a flag fall.
pub fn flag_fall(pos: &GamePosition) -> Event {
    let winner = !pos.turn();
    if pos.has_insufficient_material(winner) {
        return Event::FlagFell;
    }
    let Some(pos) = pos.as_chess() else {
        return Event::FlagFell;
    };
    if unwinnable(pos, winner, FLAG_BUDGET.load(Ordering::Relaxed)) {
        Event::FlagFellUnwinnable
    } else {
        Event::FlagFell
    }
}

/// Whether `winner` is proven unable to mate at `pos` within `budget` nodes (a fresh
/// solver: a flag fall is rare, and a long verdict's large table is not kept).
pub fn unwinnable(pos: &Position, winner: Color, budget: u64) -> bool {
    budget > 0
        && matches!(
            Solver::with_budget(budget).solve(pos, winner),
            Ok(Verdict::Unwinnable { .. })
        )
}
