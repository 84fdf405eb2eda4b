//! Three-check: standard chess, and the side that gives a third check wins.

use super::{VariantEnd, VariantPosition, VariantRules, standard_ep_capturable, standard_moves};
use crate::rules::fen::Placement;
use crate::rules::moves::MoveList;
use crate::rules::piece::Role;
use crate::rules::square::{Color, Square};

/// Three-check, as lichess plays it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ThreeCheck;

/// Checks that win.
pub const CHECKS_TO_WIN: u8 = 3;

impl VariantRules for ThreeCheck {
    const KEY: &'static str = "threeCheck";
    const START: &'static str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 +0+0";
    const PLACEMENT: Placement = Placement::STANDARD;
    const COUNTS_CHECKS: bool = true;

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
            .find(|&c| pos.checks_given[c.index()] >= CHECKS_TO_WIN)
            .map(VariantEnd::Win)
    }

    fn has_insufficient_material(pos: &VariantPosition<Self>, color: Color) -> bool {
        // Any piece but the king can give check.
        (pos.board.by_color(color) & !pos.board.by_role(Role::King)).is_empty()
    }
}
