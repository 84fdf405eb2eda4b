//! The helpmate search: forced lines, then iterative deepening with chasolver's depth
//! heuristics and an optional transposition table. Everything is counted in nodes (one
//! node per move tried), so a verdict never depends on the clock.

use super::super::attacks::{self, Magic, Sliders};
use super::super::bitboard::Bitboard;
use super::super::moves::{Move, MoveKind};
use super::super::piece::Role;
use super::super::position::Position;
use super::super::square::{Color, Square};
use super::heuristics::{Guidance, NodeFacts, Variation, classify};
use super::identity::IdentitySet;
use super::material::insufficient_white_material;
use super::order::{Moves, gather};
use super::tt::Table;
use std::ops::ControlFlow;

/// The longest line the search builds (forced moves included).
pub(super) const MAX_LINE: usize = 128;

/// The state one search carries: budgets, counters and the line from the root.
pub(super) struct Search<'a> {
    /// Plies the current iteration searches to.
    max_depth: u8,
    /// Per-ply budget of an iteration: `max_depth * depth_node_limit` nodes.
    pub(super) depth_node_limit: u64,
    /// Budget of one `iterative_deepening` call.
    pub(super) global_node_limit: u64,
    iteration_nodes: u64,
    global_nodes: u64,
    /// A branch was cut by a depth or node limit: no proof of unwinnability this time.
    interrupted: bool,
    /// The caller's budget and what has been spent against it (all phases).
    pub(super) spent: &'a mut u64,
    pub(super) budget: u64,
    /// The caller's budget ran out.
    pub(super) exhausted: bool,
    /// Moves from the original root (forced moves first).
    pub(super) line: Vec<Move>,
    past_progress: bool,
    pub(super) table: Option<&'a mut Table>,
    pub(super) guidance: Option<&'a Guidance>,
}

/// What a search phase concluded.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Mate found: the line is in `Search::line`.
    Mate,
    /// Proven: no helpmate.
    NoMate,
    /// Limits reached.
    Unknown,
}

impl<'a> Search<'a> {
    pub(super) fn new(spent: &'a mut u64, budget: u64) -> Search<'a> {
        Search {
            max_depth: 0,
            depth_node_limit: u64::MAX,
            global_node_limit: 1_000_000,
            iteration_nodes: 0,
            global_nodes: 0,
            interrupted: false,
            spent,
            budget,
            exhausted: false,
            line: Vec::with_capacity(MAX_LINE + 8),
            past_progress: false,
            table: None,
            guidance: None,
        }
    }

    fn reset_iteration(&mut self) {
        self.global_nodes += self.iteration_nodes;
        self.iteration_nodes = 0;
        self.interrupted = false;
    }

    pub(super) fn reset_global_nodes(&mut self) {
        self.global_nodes = 0;
    }

    #[inline(always)]
    fn limit_reached(&self) -> bool {
        (self.depth_node_limit != u64::MAX
            && self.iteration_nodes > u64::from(self.max_depth) * self.depth_node_limit)
            || self.global_nodes + self.iteration_nodes > self.global_node_limit
    }

    /// Counts one node against the caller's budget; false once it is spent.
    #[inline(always)]
    fn charge(&mut self) -> bool {
        // One load and one store: re-reading `spent` after the increment would wait on
        // the store at every node.
        let mut spent = *self.spent + 1;
        if super::stop::requested(spent) {
            spent = u64::MAX / 2;
        }
        *self.spent = spent;
        if spent > self.budget {
            self.exhausted = true;
        }
        !self.exhausted
    }

    /// Plays moves while the side to move has exactly one (at most 16 of them). A forced
    /// line that repeats a position can never change, so it proves no mate: returns
    /// `Err(())` then. Otherwise the position reached, with the moves in `line`.
    pub(super) fn play_forced_moves(&mut self, root: &Position) -> Result<Position, ()> {
        let mut pos = *root;
        let mut seen: Option<IdentitySet> = None;
        for _ in 0..16 {
            let moves = pos.legal_moves();
            if moves.len() != 1 {
                break;
            }
            let seen = seen.get_or_insert_with(|| {
                let mut s = IdentitySet::default();
                s.insert(&pos);
                s
            });
            let m = moves[0];
            pos.play_trusted(m);
            self.line.push(m);
            self.iteration_nodes += 1;
            self.charge();
            if !seen.insert(&pos) {
                self.reset_iteration();
                return Err(());
            }
        }
        if seen.is_some() {
            self.reset_iteration();
        }
        Ok(pos)
    }

    /// Iterative deepening over `depths`: Mate as soon as one is found, NoMate when an
    /// iteration completes without any cut, Unknown when the limits end it first.
    pub(super) fn iterative_deepening(
        &mut self,
        root: &Position,
        depths: std::ops::RangeInclusive<u8>,
    ) -> Outcome {
        let base = self.line.len();
        for depth in depths {
            self.max_depth = depth;
            self.reset_iteration();
            self.past_progress = false;
            if self.helpmate(root, 0) {
                return Outcome::Mate;
            }
            self.line.truncate(base);
            if self.exhausted {
                return Outcome::Unknown;
            }
            if !self.interrupted {
                return Outcome::NoMate;
            }
        }
        Outcome::Unknown
    }

    /// Depth-first helpmate search from `pos`, `depth` plies charged so far. True when a
    /// mate is found (the line from the root is then in `self.line`).
    fn helpmate(&mut self, pos: &Position, depth: u8) -> bool {
        let at_leaf = depth >= self.max_depth || self.line.len() >= MAX_LINE;
        if at_leaf && self.interrupted {
            // Once this iteration is cut somewhere, a leaf can only change the result by
            // being Black's checkmate: a table hit, a stalemate, White's material and a
            // cut all return false alike. So only Black in check needs a look.
            return pos.turn() == Color::Black && pos.is_check() && !has_legal_move(pos);
        }
        let plies_left = self.max_depth.saturating_sub(depth);
        let key = pos.zobrist();
        if let Some(t) = self.table.as_deref()
            && let Some(stored) = t.probe(key)
            && stored >= plies_left
        {
            return false;
        }

        if at_leaf {
            // Only whether a move exists matters here: count instead of listing.
            if !has_legal_move(pos) {
                return pos.turn() == Color::Black && pos.is_check();
            }
            if insufficient_white_material(pos) {
                return false;
            }
            self.interrupted = true;
            return false;
        }

        let mut moves = Moves::new();
        gather(pos, &mut moves);
        if moves.is_empty() {
            return pos.turn() == Color::Black && pos.is_check();
        }
        if insufficient_white_material(pos) {
            return false;
        }
        if let Some(t) = self.table.as_deref_mut() {
            t.store(key, plies_left);
        }

        let facts = NodeFacts::new(pos);
        let mut checks: Option<Checks> = None;
        // The moves are visited straight from the generator's batches, in chasolver's
        // order, without building a list: most of them are only counted.
        match moves.visit(|m| {
            self.iteration_nodes += 1;
            if self.limit_reached() || !self.charge() {
                self.interrupted = true;
                return ControlFlow::Break(false);
            }
            let variation = classify(&facts, m, self.guidance);
            let new_depth = match variation {
                Variation::Reward => depth,
                Variation::Punish => depth.saturating_add(4),
                Variation::Normal => depth + u8::from(!self.past_progress),
            };
            // Once the iteration is cut, a leaf is false unless it is Black's checkmate
            // (see the top of this function): a move into a leaf with White to move need
            // not be played, nor a quiet White move that gives no check.
            let into_cut_leaf = self.interrupted
                && (new_depth >= self.max_depth || self.line.len() + 1 >= MAX_LINE);
            if into_cut_leaf
                && (facts.turn() == Color::Black
                    || (variation == Variation::Normal
                        && m.kind == MoveKind::Normal
                        && !checks
                            .get_or_insert_with(|| Checks::new(pos))
                            .gives_check(m)))
            {
                return ControlFlow::Continue(());
            }
            let mut next = *pos;
            next.play_trusted(m);
            self.line.push(m);
            let saved = self.past_progress;
            self.past_progress = variation == Variation::Reward;
            if self.helpmate(&next, new_depth) {
                return ControlFlow::Break(true);
            }
            self.past_progress = saved;
            self.line.pop();
            ControlFlow::Continue(())
        }) {
            ControlFlow::Break(found) => found,
            ControlFlow::Continue(()) => false,
        }
    }
}

/// Whether the side to move has a legal move: a safe king step answers most positions
/// without generating every move.
#[inline]
fn has_legal_move(pos: &Position) -> bool {
    let us = pos.turn();
    let king = pos.king(us);
    let occupied = pos.occupied().without(king);
    for t in attacks::king_attacks(king) & !pos.by_color(us) {
        if !pos.is_attacked_with::<Magic>(t, !us, occupied) {
            return true;
        }
    }
    pos.has_legal_move()
}

/// Which of the side to move's ordinary moves (neither castling, en passant nor a
/// promotion) give check, without playing them: the squares each piece would check the
/// enemy king from, and the pieces whose leaving a line uncovers a check.
struct Checks {
    king: Square,
    knight: Bitboard,
    bishop: Bitboard,
    rook: Bitboard,
    pawn: Bitboard,
    discoverers: Bitboard,
}

impl Checks {
    fn new(pos: &Position) -> Checks {
        let us = pos.turn();
        let king = pos.king(!us);
        let occupied = pos.occupied();
        let ours = pos.by_color(us);
        let queens = pos.by_role(Role::Queen);
        let snipers = ((attacks::rook_rays(king) & (pos.by_role(Role::Rook) | queens))
            | (attacks::bishop_rays(king) & (pos.by_role(Role::Bishop) | queens)))
            & ours;
        let mut discoverers = Bitboard::EMPTY;
        for sniper in snipers {
            let blockers = attacks::between(king, sniper) & occupied;
            if blockers.any() && !blockers.more_than_one() {
                discoverers |= blockers & ours;
            }
        }
        Checks {
            king,
            knight: attacks::knight_attacks(king),
            bishop: Magic::bishop(king, occupied),
            rook: Magic::rook(king, occupied),
            pawn: attacks::pawn_attacks(!us, king),
            discoverers,
        }
    }

    /// Whether `m`, an ordinary move of the side to move, checks the enemy king. Direct
    /// checks are read off the squares attacked from the king with the occupancy before
    /// the move: the piece's own square could only shorten that ray if the piece already
    /// gave check along it, which cannot be with the other side not to move.
    #[inline(always)]
    fn gives_check(&self, m: Move) -> bool {
        let direct = match m.role {
            Role::Pawn => self.pawn,
            Role::Knight => self.knight,
            Role::Bishop => self.bishop,
            Role::Rook => self.rook,
            Role::Queen => self.bishop | self.rook,
            Role::King => Bitboard::EMPTY,
        };
        direct.contains(m.to)
            || (self.discoverers.contains(m.from)
                && !attacks::line(self.king, m.from).contains(m.to))
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::position::Variant;
    use super::*;

    /// `Checks` agrees with playing the move, on every ordinary move of the first
    /// thousand positions of chasolver's lichess file, either side to move.
    #[test]
    fn gives_check_agrees_with_playing_the_move() {
        let text = include_str!("../../../tests/data/chasolver_lichess.txt");
        let mut tried = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')).take(1000) {
            let Some((_, fen)) = line.split_once(' ') else {
                continue;
            };
            let flipped = if fen.contains(" w ") {
                fen.replacen(" w ", " b ", 1)
            } else {
                fen.replacen(" b ", " w ", 1)
            };
            for fen in [fen, flipped.as_str()] {
                let Ok(pos) = Position::from_fen(fen, Variant::Standard) else {
                    continue;
                };
                if pos.is_check() || pos.attackers(pos.king(!pos.turn()), pos.turn()).any() {
                    continue;
                }
                let checks = Checks::new(&pos);
                for &m in pos.legal_moves().iter() {
                    if m.kind == MoveKind::Normal {
                        let mut next = pos;
                        next.play_trusted(m);
                        assert_eq!(checks.gives_check(m), next.is_check(), "{fen} {m:?}");
                        tried += 1;
                    }
                }
            }
        }
        assert!(tried > 10_000, "{tried}");
    }
}
