//! Which moves the helpmate search extends and which it cuts short (chasolver's
//! heuristics): progress for White (pawn moves, captures, a king or knight closing in on
//! the mating corner, a bishop closing in along its path) costs no depth; Black's captures
//! cost four plies. Only the search's reach depends on this, never the soundness.

use super::super::bitboard::Bitboard;
use super::super::moves::{Move, MoveKind};
use super::super::piece::Role;
use super::super::position::Position;
use super::super::square::{Color, Square};

/// How a move changes the plies left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Variation {
    /// One ply, or none right after a rewarded move.
    Normal,
    /// No ply: a promising move.
    Reward,
    /// Four plies: a move that usually simplifies away from a mate.
    Punish,
}

/// What the classification of one node's moves shares, computed once per node.
pub(super) struct NodeFacts {
    turn: Color,
    theirs: Bitboard,
    pawns: Bitboard,
    occupied_count: u32,
    dark_corner: bool,
}

impl NodeFacts {
    #[inline]
    pub(super) fn new(pos: &Position) -> NodeFacts {
        let bishops = pos.by_role(Role::Bishop);
        let white_bishops = bishops & pos.by_color(Color::White);
        let black_bishops = bishops & pos.by_color(Color::Black);
        let dark_corner = (white_bishops & Bitboard::DARK_SQUARES).any()
            || (white_bishops.is_empty() && (black_bishops & Bitboard::LIGHT_SQUARES).any());
        NodeFacts {
            turn: pos.turn(),
            theirs: pos.by_color(!pos.turn()),
            pawns: pos.by_role(Role::Pawn),
            occupied_count: pos.occupied().count(),
            dark_corner,
        }
    }

    /// The side to move.
    #[inline(always)]
    pub(super) fn turn(&self) -> Color {
        self.turn
    }
}

/// A move that captures a piece on its destination (en passant and castling do not count,
/// as in chasolver).
#[inline(always)]
fn is_capture(facts: &NodeFacts, m: Move) -> bool {
    m.kind != MoveKind::Castle && m.kind != MoveKind::EnPassant && facts.theirs.contains(m.to)
}

/// Optional guidance of the last, deepest phase.
#[derive(Default)]
pub(super) struct Guidance {
    /// Root moves into a statically unwinnable position, matched by from, to and promotion.
    pub(super) punishable: Vec<Move>,
    /// Bishop-move distances to the mating corner (255: unreachable).
    pub(super) bishop_distances: Option<[u8; 64]>,
}

impl Guidance {
    #[inline]
    fn is_punishable(&self, m: Move) -> bool {
        self.punishable
            .iter()
            .any(|p| p.from == m.from && p.to == m.to && p.promotion() == m.promotion())
    }
}

/// The depth class of `m` in the node described by `facts`.
#[inline]
pub(super) fn classify(facts: &NodeFacts, m: Move, guidance: Option<&Guidance>) -> Variation {
    if let Some(g) = guidance
        && !g.punishable.is_empty()
        && g.is_punishable(m)
    {
        return Variation::Punish;
    }
    let distances = guidance.and_then(|g| g.bishop_distances.as_ref());
    match facts.turn {
        Color::White => classify_white(facts, m, distances),
        Color::Black => classify_black(facts, m, distances),
    }
}

fn classify_white(facts: &NodeFacts, m: Move, distances: Option<&[u8; 64]>) -> Variation {
    if m.role == Role::Pawn || is_capture(facts, m) || approaches_target(facts, m) {
        return Variation::Reward;
    }
    if let Some(ds) = distances
        && m.role == Role::Bishop
    {
        let src = ds[m.from.index()];
        let dst = ds[m.to.index()];
        if src > 200 {
            return Variation::Normal;
        }
        if (src <= 1 && src < dst) || (src > 2 && src > dst) {
            return Variation::Reward;
        }
    }
    Variation::Normal
}

fn classify_black(facts: &NodeFacts, m: Move, distances: Option<&[u8; 64]>) -> Variation {
    let capture = is_capture(facts, m);
    if let Some(ds) = distances {
        if facts.occupied_count > 5
            && capture
            && (m.role == Role::Pawn || facts.pawns.contains(m.to))
        {
            return Variation::Reward;
        }
        if m.role == Role::Bishop && ds[m.from.index()] > ds[m.to.index()] {
            return Variation::Reward;
        }
    }
    if approaches_target(facts, m) {
        return Variation::Reward;
    }
    if capture {
        return Variation::Punish;
    }
    Variation::Normal
}

/// A king or knight move that gets closer to its mating-pattern square.
#[inline]
fn approaches_target(facts: &NodeFacts, m: Move) -> bool {
    let target = match (facts.turn, m.role) {
        (Color::White, Role::King) => Square::G7,
        (Color::White, Role::Knight) => Square::E5,
        (Color::Black, Role::King) => Square::H8,
        (Color::Black, Role::Knight) => Square::G8,
        _ => return false,
    };
    let target = if facts.dark_corner {
        target
    } else {
        flip_file(target)
    };
    let to = m.king_to();
    match m.role {
        Role::King => king_distance(to, target) < king_distance(m.from, target),
        _ => knight_distance(to, target) < knight_distance(m.from, target),
    }
}

/// The same rank, the mirrored file (a <-> h).
#[inline]
pub(super) fn flip_file(sq: Square) -> Square {
    Square::new(sq as u8 ^ 7)
}

#[inline]
fn king_distance(a: Square, b: Square) -> u8 {
    let df = (a.file() as i8 - b.file() as i8).unsigned_abs();
    let dr = (a.rank() as i8 - b.rank() as i8).unsigned_abs();
    df.max(dr)
}

#[inline]
fn knight_distance(a: Square, b: Square) -> u8 {
    KNIGHT_DISTANCE[a.index()][b.index()]
}

/// Knight-move distances, from the closed form with the corner exception.
static KNIGHT_DISTANCE: [[u8; 64]; 64] = {
    let mut table = [[0u8; 64]; 64];
    let mut i = 0;
    while i < 64 {
        let mut j = 0;
        while j < 64 {
            table[i][j] = compute_knight_distance(i, j);
            j += 1;
        }
        i += 1;
    }
    table
};

const fn is_corner(s: usize) -> bool {
    matches!(s, 0 | 7 | 56 | 63)
}

const fn compute_knight_distance(x: usize, y: usize) -> u8 {
    let fd = ((x % 8) as i32 - (y % 8) as i32).unsigned_abs();
    let rd = ((x / 8) as i32 - (y / 8) as i32).unsigned_abs();
    let (lo, hi) = if fd < rd { (fd, rd) } else { (rd, fd) };
    if lo == 1 && hi == 1 && (is_corner(x) || is_corner(y)) {
        return 4;
    }
    if lo % 2 == hi % 2 {
        match (lo, hi) {
            (0, 0) => 0,
            (0, 2) | (0, 4) | (2, 4) | (1, 1) | (1, 3) | (3, 3) => 2,
            (7, 7) => 6,
            _ => 4,
        }
    } else {
        match (lo, hi) {
            (_, 7) => 5,
            (1, 2) => 1,
            (5, 6) => 5,
            _ => 3,
        }
    }
}

/// Bishop-move distances from the mating corner (h8, g8, h7 when White's bishops are dark
/// or Black's light; a8, b8, a7 otherwise), moving through squares outside `steady`.
pub(super) fn bishop_distances(pos: &Position, steady: Bitboard) -> [u8; 64] {
    let facts = NodeFacts::new(pos);
    let corner: Bitboard = if facts.dark_corner {
        [Square::H8, Square::G8, Square::H7].into_iter().collect()
    } else {
        [Square::A8, Square::B8, Square::A7].into_iter().collect()
    };
    let mut distances = [u8::MAX; 64];
    let mut visited = Bitboard::EMPTY;
    let mut active = corner;
    let mut d = 0u8;
    loop {
        for s in active {
            distances[s.index()] = d;
        }
        visited |= active;
        d += 1;
        let mut next = Bitboard::EMPTY;
        for s in active {
            next |= super::super::attacks::bishop_attacks(s, steady) & !steady;
        }
        active = next & !visited;
        if active.is_empty() {
            break;
        }
    }
    distances
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knight_distances_match_a_breadth_first_search() {
        for from in Square::ALL {
            let mut dist = [u8::MAX; 64];
            dist[from.index()] = 0;
            let mut frontier = Bitboard::from_square(from);
            let mut d = 0;
            while frontier.any() {
                d += 1;
                let mut next = Bitboard::EMPTY;
                for s in frontier {
                    for t in super::super::super::attacks::knight_attacks(s) {
                        if dist[t.index()] == u8::MAX {
                            dist[t.index()] = d;
                            next |= t;
                        }
                    }
                }
                frontier = next;
            }
            for to in Square::ALL {
                assert_eq!(knight_distance(from, to), dist[to.index()], "{from} {to}");
            }
        }
    }
}
