//! The phases of a verdict (chasolver's `full::analysis`), cheapest first, for White as
//! the intended winner: forced lines, a one-ply search extended on progress, static
//! analysis, iterative deepening with a transposition table, exhaustive closure when one
//! side only has pawn moves, check chains, and a long guided search.

use super::super::moves::Move;
use super::super::position::Position;
use super::analysis::Analysis;
use super::closure::{Closure, close};
use super::heuristics::{Guidance, bishop_distances};
use super::identity::IdentitySet;
use super::material::has_queens_rooks_or_knights;
use super::probes::{
    Meter, Probe, check_chain_search, exhaustively_unwinnable, probe_non_pawn_moves,
};
use super::search::{Outcome, Search};
use super::statics::is_statically_unwinnable;
use super::tt::Table;

/// The answer for White, before the moves are turned back for Black.
#[derive(Debug)]
pub(super) enum Found {
    Mate(Vec<Move>),
    NoMate,
    Unknown,
}

/// Slots of the table for the iterative deepening phase and the long guided phase.
pub(super) const SMALL_TABLE_LOG2: u32 = 12;
pub(super) const LARGE_TABLE_LOG2: u32 = 21;

/// Positions the exact closure may hold before it gives up.
const CLOSURE_CAP: usize = 4_000_000;

/// Turns a search's "no mate" into a proof: the search's pruning is chasolver's, the
/// closure is exact. None: no proof (the phases go on).
fn confirm_no_mate(pos: &Position, spent: &mut u64, budget: u64) -> Option<Found> {
    let mut meter = Meter { spent, budget };
    match close(pos, CLOSURE_CAP, &mut meter) {
        Closure::NoMate => Some(Found::NoMate),
        Closure::MateReachable | Closure::TooLarge => None,
    }
}

/// Runs the phases on `root` (White to win), spending nodes from `spent` up to `budget`.
pub(super) fn analysis(
    root: &Position,
    small: &mut Table,
    large: &mut Option<Table>,
    spent: &mut u64,
    budget: u64,
) -> Found {
    // Phase 1: forced moves.
    let (pos, forced) = {
        let mut search = Search::new(spent, budget);
        match search.play_forced_moves(root) {
            Err(()) => return Found::NoMate,
            Ok(pos) => (pos, search.line),
        }
    };

    // Phase 2: one ply, extended on progress moves, at most 1,000 nodes.
    {
        let mut search = Search::new(spent, budget);
        search.line.extend_from_slice(&forced);
        search.depth_node_limit = 1000;
        search.reset_global_nodes();
        match search.iterative_deepening(&pos, 1..=1) {
            Outcome::Mate => return Found::Mate(search.line),
            // No table here, so nothing was pruned: an uninterrupted search has followed
            // every line to its end, which is already the proof.
            Outcome::NoMate => return Found::NoMate,
            Outcome::Unknown if search.exhausted => return Found::Unknown,
            Outcome::Unknown => {}
        }
    }

    // Phase 3: static analysis, early only without queens, rooks and knights.
    let heavy = has_queens_rooks_or_knights(&pos);
    if !heavy && is_statically_unwinnable(&pos) {
        return Found::NoMate;
    }

    // Phase 4: iterative deepening with a transposition table.
    {
        let mut search = Search::new(spent, budget);
        search.line.extend_from_slice(&forced);
        search.depth_node_limit = 7000;
        small.new_run();
        search.table = Some(small);
        search.reset_global_nodes();
        let o = search.iterative_deepening(&pos, 2..=128);
        match o {
            Outcome::Mate => return Found::Mate(search.line),
            Outcome::NoMate => {
                if let Some(found) = confirm_no_mate(&pos, spent, budget) {
                    return found;
                }
            }
            Outcome::Unknown if search.exhausted => return Found::Unknown,
            Outcome::Unknown => {}
        }
    }

    // Phase 5: static analysis for the positions phase 3 skipped.
    if heavy && is_statically_unwinnable(&pos) {
        return Found::NoMate;
    }

    // Phase 6: exhaustive closure when a side showed no non-pawn move in 1,000 nodes.
    {
        let mut meter = Meter { spent, budget };
        let mut seen = [false; 2];
        probe_non_pawn_moves(&pos, &mut seen, &mut 0, 1_000, &mut meter);
        if seen.iter().any(|&s| !s) && exhaustively_unwinnable(&pos, &mut meter) {
            return Found::NoMate;
        }
        if *meter.spent > meter.budget {
            return Found::Unknown;
        }
    }

    // Phase 7: check chains, with static analysis at the quiet leaves.
    {
        let mut meter = Meter { spent, budget };
        let mut visited = IdentitySet::default();
        let mut line = forced.clone();
        match check_chain_search(&pos, &mut visited, 0, &mut line, &mut meter) {
            Probe::Mate(line) => return Found::Mate(line),
            Probe::NoMate => return Found::NoMate,
            Probe::Unknown => {}
        }
        if *meter.spent > meter.budget {
            return Found::Unknown;
        }
    }

    // Phase 8: a long search guided by bishop distances and punished root moves.
    let mut analysis = Analysis::new(&pos);
    analysis.saturate();
    let mut guidance = Guidance {
        punishable: Vec::new(),
        bishop_distances: Some(bishop_distances(&pos, analysis.steady)),
    };
    for &m in pos.legal_moves().iter() {
        let mut next = pos;
        next.play_trusted(m);
        if is_statically_unwinnable(&next) {
            guidance.punishable.push(m);
        }
    }
    let table = large.get_or_insert_with(|| Table::new(LARGE_TABLE_LOG2));
    table.new_run();
    let mut search = Search::new(spent, budget);
    search.line.extend_from_slice(&forced);
    search.depth_node_limit = u64::MAX;
    search.global_node_limit = 1 << 24;
    search.table = Some(table);
    search.guidance = Some(&guidance);
    search.reset_global_nodes();
    let o = search.iterative_deepening(&pos, 2..=128);
    match o {
        Outcome::Mate => Found::Mate(search.line),
        Outcome::NoMate => {
            drop(search);
            confirm_no_mate(&pos, spent, budget).unwrap_or(Found::Unknown)
        }
        Outcome::Unknown => Found::Unknown,
    }
}
