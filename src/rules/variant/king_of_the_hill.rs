//! King of the Hill: standard chess, and a king that reaches d4, e4, d5 or e5 wins.

use super::{VariantEnd, VariantPosition, VariantRules, standard_ep_capturable, standard_moves};
use crate::rules::bitboard::Bitboard;
use crate::rules::fen::Placement;
use crate::rules::moves::MoveList;
use crate::rules::piece::Role;
use crate::rules::square::{Color, Square};

/// King of the Hill, as lichess plays it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KingOfTheHill;

/// d4, e4, d5 and e5.
pub const HILL: Bitboard = Bitboard(0x0000_0018_1800_0000);

impl VariantRules for KingOfTheHill {
    const KEY: &'static str = "kingOfTheHill";
    const START: &'static str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const PLACEMENT: Placement = Placement::STANDARD;

    fn generate(pos: &VariantPosition<Self>, list: &mut MoveList) {
        standard_moves(&pos.board, list);
    }

    fn count_moves(pos: &VariantPosition<Self>) -> u64 {
        pos.board.count_legal_moves()
    }

    fn ep_capturable(pos: &VariantPosition<Self>, ep: Square) -> bool {
        standard_ep_capturable(&pos.board, ep)
    }

    fn variant_end(pos: &VariantPosition<Self>) -> Option<VariantEnd> {
        Color::ALL
            .into_iter()
            .find(|&c| (pos.board.pieces(c, Role::King) & HILL).any())
            .map(VariantEnd::Win)
    }

    fn has_insufficient_material(_: &VariantPosition<Self>, _: Color) -> bool {
        // A king can always walk to the hill.
        false
    }
}
