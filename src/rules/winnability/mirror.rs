//! Colour mirroring: the solver reasons for White only, so a question about Black is asked
//! of the position flipped top to bottom with the colours swapped, and the answer's moves
//! are flipped back.

use super::super::bitboard::Bitboard;
use super::super::moves::Move;
use super::super::position::Position;
use super::super::square::Color;

/// Flips a bitboard top to bottom (rank 1 <-> rank 8).
#[inline(always)]
pub(super) fn flip(bb: Bitboard) -> Bitboard {
    Bitboard(bb.0.swap_bytes())
}

/// The position seen from the other side: every piece moves to the mirrored square and
/// changes colour, the side to move changes, and castling rights and the en passant square
/// follow. Helpmates of White here are helpmates of Black there, move for move.
pub(super) fn mirror(pos: &Position) -> Position {
    let mut m = *pos;
    m.by_color = [flip(pos.by_color[1]), flip(pos.by_color[0])];
    for (dst, src) in m.by_role.iter_mut().zip(pos.by_role.iter()) {
        *dst = flip(*src);
    }
    m.turn = !pos.turn;
    m.castling = flip(pos.castling);
    m.ep_square = pos.ep_square.map(|sq| sq.flip_vertical());
    m.hash = m.zobrist_from_scratch();
    m
}

/// A move of the mirrored position as a move of the original one.
#[inline]
pub(super) fn mirror_move(m: Move) -> Move {
    Move::new(m.role, m.from.flip_vertical(), m.to.flip_vertical(), m.kind)
}

/// The side the analysis treats as White.
#[inline]
pub(super) fn oriented(pos: &Position, winner: Color) -> Position {
    match winner {
        Color::White => *pos,
        Color::Black => mirror(pos),
    }
}
