//! The static analysis' state (chasolver's `Analysis`): for every piece on the board, an
//! over-approximation of the squares it may ever reach, and what follows from those sets
//! (pieces that can never move, squares nothing can ever enter, squares always attacked).
//! White is the intended winner. [`Analysis::saturate`] (in `saturation.rs`) grows the
//! sets to a fixpoint; only then do the approximations hold.

use super::super::attacks;
use super::super::bitboard::Bitboard;
use super::super::piece::Role;
use super::super::position::Position;
use super::super::square::{Color, Square};

/// Squares a `role` of `color` on `sq` moves to with `blockers` in the way: pushes only,
/// for pawns (as the `chess` crate's tables, which chasolver's fixpoint was tuned on).
#[inline]
pub(super) fn piece_moves(role: Role, color: Color, sq: Square, blockers: Bitboard) -> Bitboard {
    match role {
        Role::King => attacks::king_attacks(sq),
        Role::Queen => attacks::queen_attacks(sq, blockers),
        Role::Rook => attacks::rook_attacks(sq, blockers),
        Role::Bishop => attacks::bishop_attacks(sq, blockers),
        Role::Knight => attacks::knight_attacks(sq),
        Role::Pawn => pawn_quiets(sq, color, blockers),
    }
}

/// Squares a `role` of `color` on `sq` attacks (a king also "attacks" its own square).
#[inline]
pub(super) fn piece_attacks(role: Role, color: Color, sq: Square, blockers: Bitboard) -> Bitboard {
    match role {
        Role::King => attacks::king_attacks(sq) | sq,
        Role::Pawn => attacks::pawn_attacks(color, sq),
        _ => piece_moves(role, color, sq, blockers),
    }
}

/// A pawn's pushes: one square, two from its second rank, none past the last rank.
#[inline]
fn pawn_quiets(sq: Square, color: Color, blockers: Bitboard) -> Bitboard {
    let (step, second, last): (i8, u8, u8) = match color {
        Color::White => (8, 1, 7),
        Color::Black => (-8, 6, 0),
    };
    let rank = sq.rank() as u8;
    // The square in front, wrapping around the board as the `chess` crate does.
    let front = Square::new(((sq as i8 + step).rem_euclid(64)) as u8);
    if blockers.contains(front) || rank == last {
        return Bitboard::EMPTY;
    }
    let mut moves = Bitboard::from_square(front);
    if rank == second {
        moves |= Square::new((front as i8 + step) as u8);
    }
    moves & !blockers
}

/// The whole line through `a` and `b`, empty if they are the same square or not aligned.
#[inline]
pub(super) fn line(a: Square, b: Square) -> Bitboard {
    if a == b {
        Bitboard::EMPTY
    } else {
        attacks::line(a, b)
    }
}

/// Every square of the file of `sq`.
#[inline]
pub(super) fn file_of(sq: Square) -> Bitboard {
    Bitboard::file(sq.file())
}

/// The first and last ranks.
pub(super) const PROMOTION_RANKS: Bitboard = Bitboard(0xFF00_0000_0000_00FF);

/// The analysis state; see the module comment for what each set approximates.
pub(super) struct Analysis {
    /// The position, White to win.
    pub(super) pos: Position,
    /// The role on each square (pieces never change during the analysis).
    pub(super) roles: [Option<Role>; 64],
    /// White's pieces (`by_color` cached).
    pub(super) white: Bitboard,
    pub(super) black: Bitboard,
    pub(super) occupied: Bitboard,
    pub(super) kings: Bitboard,
    /// Over-approximation: squares the piece now on `s` may reach.
    pub(super) reachable: [Bitboard; 64],
    /// Under-approximation: pieces that will never move nor be captured.
    pub(super) steady: Bitboard,
    /// Under-approximation: squares no piece will ever enter.
    pub(super) clear: Bitboard,
    /// Under-approximation: squares always attacked by each colour.
    pub(super) attacked: [Bitboard; 2],
    /// Over-approximation: pieces that may be captured.
    pub(super) capturable: Bitboard,
    /// Over-approximation: pieces that may leave their square.
    pub(super) movable: Bitboard,
    /// Over-approximation: squares non-bishops of each colour may reach.
    pub(super) reachable_by_non_bishop: [Bitboard; 2],
    /// Over-approximation: squares where each colour may give up a non-king piece.
    pub(super) sacrificable: [Bitboard; 2],
    /// Assumption of a case split: these pieces are not captured while steady.
    pub(super) uncapturable_while_steady: Option<Bitboard>,
    /// Assumption of a case split: these pieces never move (and may be captured there).
    pub(super) capturable_only_while_steady: Option<Bitboard>,
    /// The first steady-and-capturable pieces found: what the case split branches on.
    pub(super) first_steady_capturable: Option<Bitboard>,
    /// Some pawn may promote.
    pub(super) promotable: bool,
}

impl Analysis {
    /// The state before saturation: every piece reaches only its own square.
    pub(super) fn new(pos: &Position) -> Analysis {
        let occupied = pos.occupied();
        let mut roles = [None; 64];
        let mut reachable = [Bitboard::EMPTY; 64];
        for s in occupied {
            roles[s.index()] = pos.role_at(s);
            reachable[s.index()] = Bitboard::from_square(s);
        }
        let mut a = Analysis {
            pos: *pos,
            roles,
            white: pos.by_color(Color::White),
            black: pos.by_color(Color::Black),
            occupied,
            kings: pos.by_role(Role::King),
            reachable,
            steady: occupied,
            clear: !occupied,
            attacked: [Bitboard::EMPTY; 2],
            capturable: Bitboard::EMPTY,
            movable: Bitboard::EMPTY,
            reachable_by_non_bishop: [Bitboard::EMPTY; 2],
            sacrificable: [Bitboard::EMPTY; 2],
            uncapturable_while_steady: None,
            capturable_only_while_steady: None,
            first_steady_capturable: None,
            promotable: false,
        };
        a.update_attacked_squares();
        a
    }

    /// The role on an occupied square.
    #[inline(always)]
    pub(super) fn role(&self, s: Square) -> Role {
        self.roles[s.index()].unwrap_or(Role::King)
    }

    /// The colour of the piece on an occupied square.
    #[inline(always)]
    pub(super) fn color(&self, s: Square) -> Color {
        if self.white.contains(s) {
            Color::White
        } else {
            Color::Black
        }
    }

    /// The pieces of `color`.
    #[inline(always)]
    pub(super) fn side(&self, color: Color) -> Bitboard {
        match color {
            Color::White => self.white,
            Color::Black => self.black,
        }
    }

    /// The pieces of `role` (both colours).
    #[inline(always)]
    pub(super) fn role_bb(&self, role: Role) -> Bitboard {
        self.pos.by_role(role)
    }

    /// Whether some square could host a mate of Black: a white piece can attack it, and
    /// Black's pieces plus White's king can cover every flight square. Only meaningful
    /// after saturation.
    pub(super) fn black_could_get_mated(&self) -> bool {
        let white_king = self.pos.king(Color::White);
        let white_king_reachable = self.reachable[white_king.index()];
        let black_king = self.pos.king(Color::Black);
        let black_king_region = self.reachable[black_king.index()];
        let (visitors, visited_region) = self.visitors(black_king_region);
        if visitors.is_empty() {
            return false;
        }
        for mating_square in visited_region {
            let escaping =
                attacks::king_attacks(mating_square) & black_king_region & !visited_region;
            let (blockers, blocking_region) = self.blockers(escaping);
            let n = blockers.count().min(blocking_region.count());
            let mut found = false;
            for_each_subset_of_size(blocking_region, n, |covered| {
                let remaining = escaping & !covered;
                if remaining.is_empty() {
                    found = true;
                    return true;
                }
                let mut candidates = Bitboard::EMPTY;
                for r in remaining {
                    candidates |= attacks::king_attacks(r);
                }
                candidates &= !(attacks::king_attacks(mating_square) | mating_square);
                if (candidates & white_king_reachable)
                    .into_iter()
                    .any(|s| attacks::king_attacks(s) & remaining == remaining)
                {
                    found = true;
                    return true;
                }
                false
            });
            if found {
                return true;
            }
        }
        false
    }

    /// White's non-king pieces that can move and attack `region`, and what of it they attack.
    fn visitors(&self, region: Bitboard) -> (Bitboard, Bitboard) {
        let mut visitors = Bitboard::EMPTY;
        let mut visited = Bitboard::EMPTY;
        for s in self.white & !self.kings {
            let reach = self.reachable[s.index()];
            if reach == Bitboard::from_square(s) {
                continue;
            }
            let role = self.role(s);
            for t in reach {
                let att = piece_attacks(role, Color::White, t, !self.clear);
                if (region & att).any() {
                    visitors |= s;
                    visited |= region & att;
                }
            }
        }
        (visitors, visited)
    }

    /// Black's non-king pieces that can reach `region`, and what of it they reach.
    fn blockers(&self, region: Bitboard) -> (Bitboard, Bitboard) {
        let mut blockers = Bitboard::EMPTY;
        let mut blocking = Bitboard::EMPTY;
        for s in self.black & !self.kings {
            let reach = self.reachable[s.index()];
            if (region & reach).any() {
                blockers |= s;
                blocking |= region & reach;
            }
        }
        (blockers, blocking)
    }
}

/// Calls `f` on every subset of `bb` with exactly `n` squares (Gosper's hack), until it
/// returns true.
fn for_each_subset_of_size(bb: Bitboard, n: u32, mut f: impl FnMut(Bitboard) -> bool) {
    let k = bb.count();
    if n > k {
        return;
    }
    let squares: Vec<Square> = bb.into_iter().collect();
    let to_bb = |mask: u64| -> Bitboard {
        squares
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1u64 << i) != 0)
            .fold(Bitboard::EMPTY, |acc, (_, &sq)| acc | sq)
    };
    if n == 0 {
        f(Bitboard::EMPTY);
        return;
    }
    let mut mask: u64 = (1u64 << n) - 1;
    loop {
        if f(to_bb(mask)) {
            return;
        }
        let c = mask & mask.wrapping_neg();
        let r = mask + c;
        let next = (((r ^ mask) >> 2) / c) | r;
        if k >= 64 || next >= (1u64 << k) {
            return;
        }
        mask = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_of_size_are_all_enumerated() {
        let bb: Bitboard = [Square::A1, Square::C3, Square::E5, Square::H8]
            .into_iter()
            .collect();
        for n in 0..=5 {
            let mut seen = Vec::new();
            for_each_subset_of_size(bb, n, |s| {
                assert_eq!(s.count(), n);
                assert_eq!(s & !bb, Bitboard::EMPTY);
                seen.push(s.0);
                false
            });
            let expected = [1, 4, 6, 4, 1, 0][n as usize];
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), expected, "n = {n}");
        }
    }
}
