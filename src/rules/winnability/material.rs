//! Cheap whole-position facts the search asks at every node: White's material rule, and
//! the shape of the pawn structure that decides which later phases are worth running.

use super::super::bitboard::Bitboard;
use super::super::piece::Role;
use super::super::position::Position;
use super::super::square::Color;

/// White cannot mate by material alone (chasolver's rule, checked at every node): a bare
/// king; king and knight against a side with nothing but king and queens; or king and
/// bishops on one colour, with no other bishops, knights or pawns on the board.
#[inline]
pub(super) fn insufficient_white_material(pos: &Position) -> bool {
    let white = pos.by_color(Color::White);
    let black = pos.by_color(Color::Black);
    let n = white.count();
    if n == 1 {
        return true;
    }
    let knights = pos.by_role(Role::Knight);
    let bishops = pos.by_role(Role::Bishop);
    let minors = knights | bishops;
    if n == 2
        && (white & knights).any()
        && (black & (minors | pos.by_role(Role::Rook) | pos.by_role(Role::Pawn))).is_empty()
    {
        return true;
    }
    let white_bishops = white & bishops;
    if white_bishops.any() {
        let complex = if (white_bishops & Bitboard::DARK_SQUARES).any() {
            Bitboard::DARK_SQUARES
        } else {
            Bitboard::LIGHT_SQUARES
        };
        if n == white_bishops.count() + 1
            && (!complex & bishops).is_empty()
            && knights.is_empty()
            && pos.by_role(Role::Pawn).is_empty()
        {
            return true;
        }
    }
    false
}

/// No knights, rooks or queens on the board.
#[inline]
pub(super) fn only_pawns_and_bishops(pos: &Position) -> bool {
    (pos.by_role(Role::Knight) | pos.by_role(Role::Rook) | pos.by_role(Role::Queen)).is_empty()
}

/// Any queen, rook or knight on the board.
#[inline]
pub(super) fn has_queens_rooks_or_knights(pos: &Position) -> bool {
    !only_pawns_and_bishops(pos)
}

/// Black is checkmated (the goal of every search here).
#[inline]
pub(super) fn black_is_mated(pos: &Position, has_moves: bool) -> bool {
    !has_moves && pos.turn() == Color::Black && pos.is_check()
}
