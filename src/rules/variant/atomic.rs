//! Atomic chess: a capture explodes the capturer and every piece but pawns on the eight
//! squares around. Kings cannot capture; kings side by side cannot check each other
//! (taking one would explode the other); exploding the enemy king wins even from check.

use super::pseudo::{self, PseudoRules};
use super::{VariantEnd, VariantPosition, VariantRules};
use crate::rules::attacks;
use crate::rules::bitboard::Bitboard;
use crate::rules::fen::Placement;
use crate::rules::moves::{Move, MoveList};
use crate::rules::piece::Role;
use crate::rules::position::{Position, ep_captured_square};
use crate::rules::square::{Color, Square};

/// Atomic chess, as lichess plays it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Atomic;

/// The explosion of a capture on `center`: the capturer and every non-pawn around it
/// leave the board, and rooks (or kings) that leave take their castling rights along.
/// Returns the castling rights that remain.
pub(super) fn explode(
    board: &mut Position,
    m: Move,
    center: Square,
    castling: Bitboard,
) -> Bitboard {
    let radius = attacks::king_attacks(center) & !board.by_role(Role::Pawn);
    let mut castling = castling & !radius;
    for color in Color::ALL {
        if (radius & board.pieces(color, Role::King)).any() {
            castling &= !Bitboard::back_rank(color);
        }
    }
    let capturer_color = board.turn();
    let capturer = board.occupied_role_at(m.to);
    board.remove(capturer_color, capturer, m.to);
    for sq in radius & board.occupied() {
        let color = if board.by_color(Color::White).contains(sq) {
            Color::White
        } else {
            Color::Black
        };
        let role = board.occupied_role_at(sq);
        board.remove(color, role, sq);
    }
    castling
}

/// Whether `m` (a pseudo-legal move other than castling, with both kings on the board)
/// is legal in atomic: our king survives the explosion, and either the enemy king does
/// not, or the kings touch afterwards, or no enemy piece left attacks our king. Computed
/// on bitboards, without playing the move.
fn leaves_king_safe(board: &Position, m: Move) -> bool {
    let us = board.turn();
    let them = !us;
    let (Some(our_king), Some(their_king)) = (
        board.pieces(us, Role::King).first(),
        board.pieces(them, Role::King).first(),
    ) else {
        return false;
    };
    let mut occ = board.occupied().without(m.from);
    let mut theirs = board.by_color(them);
    let captured = if m.is_en_passant() {
        Some(ep_captured_square(us, m.to))
    } else if theirs.contains(m.to) {
        Some(m.to)
    } else {
        None
    };
    let king = if m.role == Role::King { m.to } else { our_king };
    match captured {
        Some(victim) => {
            if m.role == Role::King {
                // The capturing king explodes with its capture.
                return false;
            }
            let blast = attacks::king_attacks(m.to) & !board.by_role(Role::Pawn);
            if blast.contains(our_king) {
                return false;
            }
            if blast.contains(their_king) {
                return true;
            }
            let gone = blast | Bitboard::from_square(victim) | Bitboard::from_square(m.to);
            occ &= !gone;
            theirs &= !gone;
        }
        None => occ |= Bitboard::from_square(m.to),
    }
    if attacks::king_attacks(king).contains(their_king) {
        return true;
    }
    let queens = board.by_role(Role::Queen);
    let rooks = (board.by_role(Role::Rook) | queens) & theirs;
    let bishops = (board.by_role(Role::Bishop) | queens) & theirs;
    (attacks::knight_attacks(king) & board.by_role(Role::Knight) & theirs).is_empty()
        && (attacks::pawn_attacks(us, king) & board.by_role(Role::Pawn) & theirs).is_empty()
        && (attacks::rook_attacks(king, occ) & rooks).is_empty()
        && (attacks::bishop_attacks(king, occ) & bishops).is_empty()
}

/// The two kings stand side by side.
fn kings_touch(board: &Position) -> bool {
    match (
        board.pieces(Color::White, Role::King).first(),
        board.pieces(Color::Black, Role::King).first(),
    ) {
        (Some(w), Some(b)) => attacks::king_attacks(w).contains(b),
        _ => false,
    }
}

/// `color`'s king is attacked, in atomic's sense: it exists, the kings do not touch, and
/// an enemy piece attacks it.
fn king_attacked(board: &Position, color: Color) -> bool {
    match board.pieces(color, Role::King).first() {
        Some(king) => !kings_touch(board) && board.attackers(king, !color).any(),
        None => false,
    }
}

impl VariantRules for Atomic {
    const KEY: &'static str = "atomic";
    const START: &'static str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const PLACEMENT: Placement = Placement {
        kings: [(0, 1), (0, 1)],
        ..Placement::STANDARD
    };
    const EXPLODES: bool = true;

    fn generate(pos: &VariantPosition<Self>, list: &mut MoveList) {
        let board = &pos.board;
        let us = board.turn();
        let exempt = board
            .pieces(!us, Role::King)
            .into_iter()
            .fold(Bitboard::EMPTY, |acc, k| acc | attacks::king_attacks(k));
        let rules = PseudoRules {
            castling_exempt: exempt,
            ..PseudoRules::default()
        };
        let mut pseudo = MoveList::new();
        pseudo::generate(board, &rules, &mut pseudo);
        for &m in pseudo.iter() {
            let legal = if m.is_castle() {
                let mut after = *pos;
                after.play_board(m);
                let b = &after.board;
                !king_attacked(b, us)
            } else {
                leaves_king_safe(board, m)
            };
            if legal {
                list.push(m);
            }
        }
    }

    fn variant_end(pos: &VariantPosition<Self>) -> Option<VariantEnd> {
        let b = &pos.board;
        match (
            b.pieces(Color::White, Role::King).any(),
            b.pieces(Color::Black, Role::King).any(),
        ) {
            (true, true) => None,
            (true, false) => Some(VariantEnd::Win(Color::White)),
            (false, true) => Some(VariantEnd::Win(Color::Black)),
            // No reachable position loses both kings: the move that would is illegal.
            (false, false) => Some(VariantEnd::Win(!b.turn())),
        }
    }

    fn is_check(pos: &VariantPosition<Self>) -> bool {
        king_attacked(&pos.board, pos.board.turn())
    }

    fn impossible_check(pos: &VariantPosition<Self>) -> Option<Color> {
        // Once a king has exploded the game is over, and nothing is in check.
        if Self::variant_end(pos).is_some() {
            return None;
        }
        let them = !pos.board.turn();
        king_attacked(&pos.board, them).then_some(them)
    }

    fn has_insufficient_material(pos: &VariantPosition<Self>, color: Color) -> bool {
        let b = &pos.board;
        let kings = b.by_role(Role::King);
        let ours = b.by_color(color);
        let theirs = b.by_color(!color);
        // Remaining material does not matter once the enemy king has exploded.
        if (theirs & kings).is_empty() {
            return false;
        }
        // A bare king cannot win.
        if (ours & !kings).is_empty() {
            return true;
        }
        let bishops = b.by_role(Role::Bishop);
        // While the enemy king is not alone, its own pieces may explode next to it.
        if (theirs & !kings).any() {
            // Unless only bishops remain that can never explode each other.
            if b.occupied() == bishops | kings {
                let white = b.by_color(Color::White) & bishops;
                let black = b.by_color(Color::Black) & bishops;
                if (white & Bitboard::DARK_SQUARES).is_empty() {
                    return (black & Bitboard::LIGHT_SQUARES).is_empty();
                }
                if (white & Bitboard::LIGHT_SQUARES).is_empty() {
                    return (black & Bitboard::DARK_SQUARES).is_empty();
                }
            }
            return false;
        }
        // A queen or a pawn (a future queen) mates a bare king.
        if (b.by_role(Role::Queen) | b.by_role(Role::Pawn)).any() {
            return false;
        }
        let minors_and_rooks = b.by_role(Role::Knight) | bishops | b.by_role(Role::Rook);
        // A single knight, bishop or rook cannot mate a bare king.
        if minors_and_rooks.count() == 1 {
            return true;
        }
        // Two knights cannot either.
        if b.occupied() == b.by_role(Role::Knight) | kings {
            return b.by_role(Role::Knight).count() <= 2;
        }
        false
    }
}
