//! Searches other than the depth-limited helpmate search: a probe for non-pawn moves,
//! the exhaustive closure of a small reachable set, and check-chain following.

use super::super::moves::Move;
use super::super::piece::Role;
use super::super::position::Position;
use super::super::square::Color;
use super::identity::IdentitySet;
use super::material::{black_is_mated, insufficient_white_material};
use super::statics::is_statically_unwinnable;

/// A node counter with the caller's budget.
pub(super) struct Meter<'a> {
    pub(super) spent: &'a mut u64,
    pub(super) budget: u64,
}

impl Meter<'_> {
    /// Counts one node; false once the caller's budget is spent.
    #[inline]
    pub(super) fn charge(&mut self) -> bool {
        *self.spent += 1;
        if super::stop::requested(*self.spent) {
            *self.spent = u64::MAX / 2;
        }
        *self.spent <= self.budget
    }
}

/// Depth-first over at most `max_nodes` moves from `pos`, recording for each colour
/// whether it was seen to have a non-pawn move. Stops once both have.
pub(super) fn probe_non_pawn_moves(
    pos: &Position,
    seen: &mut [bool; 2],
    nodes: &mut u64,
    max_nodes: u64,
    meter: &mut Meter<'_>,
) {
    let moves = pos.legal_moves();
    for &m in moves.iter() {
        if m.role != Role::Pawn {
            seen[pos.turn().index()] = true;
        }
        *nodes += 1;
        if !meter.charge() || *nodes >= max_nodes || seen.iter().all(|&s| s) {
            return;
        }
        let mut next = *pos;
        next.play_trusted(m);
        probe_non_pawn_moves(&next, seen, nodes, max_nodes, meter);
        if *nodes >= max_nodes || seen.iter().all(|&s| s) {
            return;
        }
    }
}

/// What an exhaustive or check-chain probe concluded.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Probe {
    /// A mate is reachable (with the line from the probed position).
    Mate(Vec<Move>),
    /// Proven: no mate.
    NoMate,
    /// Gave up.
    Unknown,
}

/// Every position reachable from `root`, breadth first, each expanded once: NoMate when
/// the set closes (at most 3,000 positions) without a mate of Black.
pub(super) fn exhaustively_unwinnable(root: &Position, meter: &mut Meter<'_>) -> bool {
    let mut seen = IdentitySet::default();
    seen.insert(root);
    let mut table = vec![*root];
    let mut next_table = Vec::new();
    while !table.is_empty() {
        for pos in &table {
            if insufficient_white_material(pos) {
                continue;
            }
            let moves = pos.legal_moves();
            if moves.is_empty() {
                if black_is_mated(pos, false) {
                    return false;
                }
                continue;
            }
            for &m in moves.iter() {
                if !meter.charge() {
                    return false;
                }
                let mut next = *pos;
                next.play_trusted(m);
                if seen.insert(&next) {
                    if seen.len() > 3000 {
                        return false;
                    }
                    next_table.push(next);
                }
            }
        }
        table.clear();
        std::mem::swap(&mut table, &mut next_table);
    }
    true
}

/// Follows every line of checks from `pos` (and every first move at the root): a line
/// that stops giving check must reach a statically unwinnable position. Mate found on a
/// line of checks is returned with its moves; any other leaf gives up.
pub(super) fn check_chain_search(
    pos: &Position,
    visited: &mut IdentitySet,
    depth: u32,
    line: &mut Vec<Move>,
    meter: &mut Meter<'_>,
) -> Probe {
    if depth > 16 {
        return Probe::Unknown;
    }
    visited.insert(pos);
    let moves = pos.legal_moves();
    if moves.is_empty() {
        if pos.turn() == Color::Black && pos.is_check() {
            return Probe::Mate(line.clone());
        }
        return Probe::NoMate;
    }
    for &m in moves.iter() {
        if !meter.charge() {
            return Probe::Unknown;
        }
        let mut next = *pos;
        next.play_trusted(m);
        if visited.contains(&next) {
            continue;
        }
        if next.is_check() || depth == 0 {
            line.push(m);
            match check_chain_search(&next, visited, depth + 1, line, meter) {
                Probe::NoMate => {
                    line.pop();
                    continue;
                }
                other => return other,
            }
        }
        if !is_statically_unwinnable(&next) {
            return Probe::Unknown;
        }
    }
    Probe::NoMate
}
