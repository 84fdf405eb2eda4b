//! Racing Kings: no checks at all (a move that gives check is illegal), and the first
//! king on the eighth rank wins. If white arrives first and black can arrive on the very
//! next move, black gets that move, and arriving too draws.

use super::{VariantEnd, VariantPosition, VariantRules, standard_moves};
use crate::rules::attacks;
use crate::rules::bitboard::Bitboard;
use crate::rules::fen::Placement;
use crate::rules::moves::MoveList;
use crate::rules::piece::Role;
use crate::rules::square::{Color, Rank};

/// Racing Kings, as lichess plays it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RacingKings;

impl VariantRules for RacingKings {
    const KEY: &'static str = "racingKings";
    const START: &'static str = "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w - - 0 1";
    const PLACEMENT: Placement = Placement::STANDARD;

    fn generate(pos: &VariantPosition<Self>, list: &mut MoveList) {
        standard_moves(&pos.board, list);
        let board = &pos.board;
        list.retain(|&m| !board.after_trusted(m).is_check());
    }

    fn variant_end(pos: &VariantPosition<Self>) -> Option<VariantEnd> {
        let b = &pos.board;
        let goal = Bitboard::rank(Rank::Eighth);
        let white_in = (b.pieces(Color::White, Role::King) & goal).any();
        let black_in = (b.pieces(Color::Black, Role::King) & goal).any();
        match (white_in, black_in) {
            (false, false) => None,
            (true, true) => Some(VariantEnd::Draw),
            (false, true) => Some(VariantEnd::Win(Color::Black)),
            (true, false) => {
                if b.turn() == Color::White {
                    return Some(VariantEnd::Win(Color::White));
                }
                // White arrived; black, to move, may still arrive: the game goes on if
                // some goal square next to black's king is not attacked by white.
                let Some(king) = b.pieces(Color::Black, Role::King).first() else {
                    return Some(VariantEnd::Win(Color::White));
                };
                let targets = attacks::king_attacks(king) & goal & !b.by_color(Color::Black);
                if targets
                    .into_iter()
                    .all(|t| b.attackers(t, Color::White).any())
                {
                    Some(VariantEnd::Win(Color::White))
                } else {
                    None
                }
            }
        }
    }

    fn impossible_check(pos: &VariantPosition<Self>) -> Option<Color> {
        // No move may give check, so no position has a king in check.
        Color::ALL.into_iter().find(|&c| {
            let king = pos.board.king(c);
            pos.board.attackers(king, !c).any()
        })
    }

    fn has_insufficient_material(_: &VariantPosition<Self>, _: Color) -> bool {
        false
    }
}
