//! Antichess (lichess's giveaway without castling): captures are compulsory, en passant
//! included; there is no check, and the king is an ordinary piece that pawns may promote
//! to. A side wins by losing all its pieces or by being stalemated.

use super::pseudo::{self, PseudoRules};
use super::{VariantEnd, VariantOutcome, VariantPosition, VariantRules};
use crate::rules::bitboard::Bitboard;
use crate::rules::fen::Placement;
use crate::rules::moves::MoveList;
use crate::rules::square::{Color, Square};

/// Antichess, as lichess plays it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Antichess;

impl VariantRules for Antichess {
    const KEY: &'static str = "antichess";
    const START: &'static str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1";
    const PLACEMENT: Placement = Placement {
        kings: [(0, u32::MAX), (0, u32::MAX)],
        ..Placement::STANDARD
    };
    const CASTLING: bool = false;

    fn generate(pos: &VariantPosition<Self>, list: &mut MoveList) {
        let board = &pos.board;
        let rules = PseudoRules {
            king_promotions: true,
            ..PseudoRules::default()
        };
        pseudo::generate(board, &rules, list);
        let theirs = board.by_color(!board.turn());
        let captures = |m: &crate::rules::moves::Move| m.is_en_passant() || theirs.contains(m.to);
        if list.iter().any(captures) {
            list.retain(captures);
        }
    }

    fn ep_capturable(_: &VariantPosition<Self>, _: Square) -> bool {
        // No king to expose, and a capture is always allowed: a pawn that attacks the
        // square may take.
        true
    }

    fn variant_end(pos: &VariantPosition<Self>) -> Option<VariantEnd> {
        let b = &pos.board;
        if b.by_color(b.turn()).is_empty() {
            Some(VariantEnd::Win(b.turn()))
        } else if b.by_color(!b.turn()).is_empty() {
            Some(VariantEnd::Win(!b.turn()))
        } else {
            None
        }
    }

    fn is_check(_: &VariantPosition<Self>) -> bool {
        false
    }

    fn impossible_check(_: &VariantPosition<Self>) -> Option<Color> {
        None
    }

    fn no_moves(pos: &VariantPosition<Self>) -> VariantOutcome {
        // Stalemated: the side to move wins.
        VariantOutcome::Variant(VariantEnd::Win(pos.board.turn()))
    }

    fn has_insufficient_material(pos: &VariantPosition<Self>, color: Color) -> bool {
        let b = &pos.board;
        let ours = b.by_color(color);
        let theirs = b.by_color(!color);
        if ours.is_empty() {
            return false;
        }
        if theirs.is_empty() {
            return true;
        }
        let occupied = b.occupied();
        if occupied == b.by_role(crate::rules::piece::Role::Bishop) {
            // Only bishops: ours can never all be captured if they stand on squares the
            // opponent's bishops never reach.
            let we_light = (ours & Bitboard::LIGHT_SQUARES).any();
            let we_dark = (ours & Bitboard::DARK_SQUARES).any();
            let they_all_dark = (theirs & Bitboard::LIGHT_SQUARES).is_empty();
            let they_all_light = (theirs & Bitboard::DARK_SQUARES).is_empty();
            return (we_light && they_all_dark) || (we_dark && they_all_light);
        }
        let knights = b.by_role(crate::rules::piece::Role::Knight);
        if occupied == knights && knights.count() == 2 {
            return (b.turn() == color)
                ^ (b.by_color(Color::White) & Bitboard::LIGHT_SQUARES).any()
                ^ (b.by_color(Color::Black) & Bitboard::DARK_SQUARES).any();
        }
        false
    }
}
