//! Crazyhouse: captured pieces go to the capturer's pocket and may be dropped on any empty
//! square instead of a move (pawns not on the first or last rank). A promoted piece goes
//! back as a pawn, so promoted squares are tracked. In single check a drop may only block;
//! in double check no drop helps.

use super::pockets::POCKET_ROLES;
use super::{VariantEnd, VariantPosition, VariantRules, standard_ep_capturable, standard_moves};
use crate::rules::attacks;
use crate::rules::bitboard::Bitboard;
use crate::rules::fen::Placement;
use crate::rules::moves::{Move, MoveList};
use crate::rules::piece::Role;
use crate::rules::square::{Color, Rank, Square};

/// Crazyhouse, as lichess plays it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Crazyhouse;

/// The most pieces a crazyhouse position holds, board and pockets together: none ever
/// leaves the game. The bound also keeps the move list within its capacity.
pub const MAX_PIECES: u32 = 32;

impl VariantRules for Crazyhouse {
    const KEY: &'static str = "crazyhouse";
    const START: &'static str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1";
    const PLACEMENT: Placement = Placement {
        max_pieces: MAX_PIECES,
        promoted_marks: true,
        ..Placement::STANDARD
    };
    const POCKETS: bool = true;

    fn generate(pos: &VariantPosition<Self>, list: &mut MoveList) {
        let board = &pos.board;
        standard_moves(board, list);
        let us = board.turn();
        let empty = !board.occupied();
        let king = board.king(us);
        let checkers = board.attackers(king, !us);
        let squares = match checkers.first() {
            None => empty,
            Some(_) if checkers.more_than_one() => return,
            Some(checker) => attacks::between(king, checker) & empty,
        };
        let back_ranks = Bitboard::rank(Rank::First) | Bitboard::rank(Rank::Eighth);
        for role in POCKET_ROLES.into_iter().rev() {
            if pos.pockets.count(us, role) == 0 {
                continue;
            }
            let to = if role == Role::Pawn {
                squares & !back_ranks
            } else {
                squares
            };
            for sq in to {
                list.push(Move::drop(role, sq));
            }
        }
    }

    fn ep_capturable(pos: &VariantPosition<Self>, ep: Square) -> bool {
        standard_ep_capturable(&pos.board, ep)
    }

    fn variant_end(_: &VariantPosition<Self>) -> Option<VariantEnd> {
        None
    }

    fn has_insufficient_material(pos: &VariantPosition<Self>, _: Color) -> bool {
        // python-chess's rule: in practice nothing leaves the game, so only a near-empty
        // board of minor pieces with nothing in hand that can mate.
        let b = &pos.board;
        let p = &pos.pockets;
        let in_hand = p.total(Color::White) + p.total(Color::Black);
        let hand = |role| p.count(Color::White, role) + p.count(Color::Black, role);
        b.occupied().count() + in_hand <= 3
            && pos.promoted.is_empty()
            && b.by_role(Role::Pawn).is_empty()
            && b.by_role(Role::Rook).is_empty()
            && b.by_role(Role::Queen).is_empty()
            && hand(Role::Pawn) == 0
            && hand(Role::Rook) == 0
            && hand(Role::Queen) == 0
    }
}
