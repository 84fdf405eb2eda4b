//! The exact proof behind every "no mate" of the iterative-deepening search: the set of
//! positions reachable from the root, expanded breadth first, each once (by repetition
//! identity), stopping only at positions where White lacks mating material or nobody can
//! move. If that set closes without a mate of Black, no helpmate exists; if it holds one,
//! its line is the helpmate. A set too large to close is no proof.

use super::super::moves::Move;
use super::super::position::Position;
use super::identity::IdentitySet;
use super::material::{black_is_mated, insufficient_white_material};
use super::probes::Meter;

/// What the closure showed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Closure {
    /// Every reachable position was seen; none is a mate of Black.
    NoMate,
    /// A mate of Black is reachable by these moves.
    Mate(Vec<Move>),
    /// More than the cap of positions, or the caller's budget ran out.
    TooLarge,
}

/// Expands at most `cap` positions reachable from `root`.
pub(super) fn close(root: &Position, cap: usize, meter: &mut Meter<'_>) -> Closure {
    // Each node: the position, its parent's index and the move from it.
    let mut nodes: Vec<(Position, u32, Option<Move>)> = vec![(*root, 0, None)];
    let mut seen = IdentitySet::default();
    seen.insert(root);
    let mut next = 0;
    while next < nodes.len() {
        let pos = nodes[next].0;
        let index = next;
        next += 1;
        if insufficient_white_material(&pos) {
            continue;
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            if black_is_mated(&pos, false) {
                return Closure::Mate(line_to(&nodes, index));
            }
            continue;
        }
        for &m in moves.iter() {
            if !meter.charge() {
                return Closure::TooLarge;
            }
            let mut child = pos;
            child.play_trusted(m);
            if seen.insert(&child) {
                if nodes.len() >= cap {
                    return Closure::TooLarge;
                }
                nodes.push((child, index as u32, Some(m)));
            }
        }
    }
    Closure::NoMate
}

/// The moves from the root to node `index`.
fn line_to(nodes: &[(Position, u32, Option<Move>)], mut index: usize) -> Vec<Move> {
    let mut line = Vec::new();
    while let Some(m) = nodes[index].2 {
        line.push(m);
        index = nodes[index].1 as usize;
    }
    line.reverse();
    line
}
