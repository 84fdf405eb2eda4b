//! Horde: white has 36 pawns and no king; black wins by capturing every white piece,
//! white by checkmate. White pawns on the first rank may step two squares (that leaves no
//! en passant square); black may castle.

use super::pseudo::{self, PseudoRules};
use super::{VariantEnd, VariantPosition, VariantRules, standard_ep_capturable, standard_moves};
use crate::rules::bitboard::Bitboard;
use crate::rules::fen::Placement;
use crate::rules::moves::MoveList;
use crate::rules::piece::Role;
use crate::rules::position::Position;
use crate::rules::square::{Color, Square};

/// Horde, as lichess plays it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Horde;

/// The horde's pseudo-legal rules: its first-rank pawns may step two squares.
const HORDE_PAWNS: PseudoRules = PseudoRules {
    king_promotions: false,
    first_rank_double_steps: true,
    castling_exempt: Bitboard::EMPTY,
};

impl VariantRules for Horde {
    const KEY: &'static str = "horde";
    const START: &'static str =
        "rnbqkbnr/pppppppp/8/1PP2PP1/PPPPPPPP/PPPPPPPP/PPPPPPPP/PPPPPPPP w kq - 0 1";
    const PLACEMENT: Placement = Placement {
        kings: [(0, 0), (1, 1)],
        max_pieces: 36,
        white_pawns_on_first_rank: true,
        promoted_marks: false,
    };

    fn generate(pos: &VariantPosition<Self>, list: &mut MoveList) {
        let board = &pos.board;
        if board.pieces(board.turn(), Role::King).any() {
            standard_moves(board, list);
        } else {
            // The horde has no king to expose: every move it can make is legal.
            pseudo::generate(board, &HORDE_PAWNS, list);
        }
    }

    fn count_moves(pos: &VariantPosition<Self>) -> u64 {
        let board = &pos.board;
        if board.pieces(board.turn(), Role::King).any() {
            board.count_legal_moves()
        } else {
            let mut count = pseudo::PseudoCount(0);
            pseudo::generate(board, &HORDE_PAWNS, &mut count);
            count.0
        }
    }

    fn ep_capturable(pos: &VariantPosition<Self>, ep: Square) -> bool {
        let board = &pos.board;
        // The horde has no king to expose: a pawn that attacks the square may take.
        board.pieces(board.turn(), Role::King).is_empty() || standard_ep_capturable(board, ep)
    }

    fn variant_end(pos: &VariantPosition<Self>) -> Option<VariantEnd> {
        let b = &pos.board;
        match (
            b.by_color(Color::White).any(),
            b.by_color(Color::Black).any(),
        ) {
            (true, true) => None,
            (false, _) => Some(VariantEnd::Win(Color::Black)),
            (true, false) => Some(VariantEnd::Win(Color::White)),
        }
    }

    fn has_insufficient_material(pos: &VariantPosition<Self>, color: Color) -> bool {
        // The side with the king can always win by capturing the horde.
        color == Color::White && horde_cannot_mate(&pos.board)
    }
}

/// python-chess's horde material rule (derived in stevepapazis's
/// horde-insufficient-material-tests): whether white cannot mate whatever black does.
/// The conditions are kept term for term as python-chess writes them (`not (...)`), so a
/// reader can check them against it line by line.
#[allow(clippy::nonminimal_bool)]
fn horde_cannot_mate(b: &Position) -> bool {
    let count = |bb: Bitboard| bb.count();
    let white = b.by_color(Color::White);
    let queens = count(white & b.by_role(Role::Queen));
    let pawns = count(white & b.by_role(Role::Pawn));
    let rooks = count(white & b.by_role(Role::Rook));
    let bishops = count(white & b.by_role(Role::Bishop));
    let knights = count(white & b.by_role(Role::Knight));
    let horde_darkb = count(Bitboard::DARK_SQUARES & white & b.by_role(Role::Bishop));
    let horde_lightb = count(Bitboard::LIGHT_SQUARES & white & b.by_role(Role::Bishop));
    // The colour of the squares of the horde's bishops (light when it has any there).
    let horde_bishops_light = horde_lightb >= 1;
    let horde_num = pawns + knights + rooks + queens + horde_darkb.min(2) + horde_lightb.min(2);

    let black = b.by_color(Color::Black);
    let p_pawns = count(black & b.by_role(Role::Pawn));
    let p_bishops = count(black & b.by_role(Role::Bishop));
    let p_knights = count(black & b.by_role(Role::Knight));
    let p_rooks = count(black & b.by_role(Role::Rook));
    let p_queens = count(black & b.by_role(Role::Queen));
    let p_darkb = count(Bitboard::DARK_SQUARES & black & b.by_role(Role::Bishop));
    let p_lightb = count(Bitboard::LIGHT_SQUARES & black & b.by_role(Role::Bishop));
    let p_num = count(black);
    let p_oppositeb_of = |light: bool| if light { p_darkb } else { p_lightb };
    let p_sameb_as = |light: bool| if light { p_lightb } else { p_darkb };
    let p_not = |n: u32| p_num - n;
    let white_pair = horde_lightb >= 1 && horde_darkb >= 1;
    let black_pair = p_lightb >= 1 && p_darkb >= 1;

    if horde_num == 0 {
        return true;
    }
    if horde_num >= 4 {
        return false;
    }
    if (pawns >= 1 || queens >= 1) && horde_num >= 2 {
        return false;
    }
    if rooks >= 1
        && horde_num >= 2
        && !(horde_num == 2
            && rooks == 1
            && bishops == 1
            && p_not(p_sameb_as(horde_bishops_light)) == 1)
    {
        return false;
    }
    match horde_num {
        1 => {
            if p_num == 1 {
                true
            } else if queens == 1 {
                !(p_pawns >= 1 || p_rooks >= 1 || p_lightb >= 2 || p_darkb >= 2)
            } else if pawns == 1 {
                // Promote the pawn to a queen or a knight and ask again.
                let sq = (white & b.by_role(Role::Pawn)).first_unchecked();
                let promoted = |role: Role| {
                    let mut next = *b;
                    next.remove(Color::White, Role::Pawn, sq);
                    next.put(Color::White, role, sq);
                    horde_cannot_mate(&next)
                };
                promoted(Role::Queen) && promoted(Role::Knight)
            } else if rooks == 1 {
                !(p_pawns >= 2
                    || (p_rooks >= 1 && p_pawns >= 1)
                    || (p_rooks >= 1 && p_knights >= 1)
                    || (p_pawns >= 1 && p_knights >= 1))
            } else if bishops == 1 {
                !(p_oppositeb_of(horde_bishops_light) >= 2
                    || (p_oppositeb_of(horde_bishops_light) >= 1 && p_pawns >= 1)
                    || p_pawns >= 2)
            } else if knights == 1 {
                !(p_num >= 4
                    && (p_knights >= 2
                        || p_pawns >= 2
                        || (p_rooks >= 1 && p_knights >= 1)
                        || (p_rooks >= 1 && p_bishops >= 1)
                        || (p_knights >= 1 && p_bishops >= 1)
                        || (p_rooks >= 1 && p_pawns >= 1)
                        || (p_knights >= 1 && p_pawns >= 1)
                        || (p_bishops >= 1 && p_pawns >= 1)
                        || (black_pair && p_pawns >= 1))
                    && (p_darkb < 2 || p_not(p_darkb) >= 3)
                    && (p_lightb < 2 || p_not(p_lightb) >= 3))
            } else {
                true
            }
        }
        2 => {
            if p_num == 1 {
                true
            } else if knights == 2 {
                !(p_pawns + p_bishops + p_knights >= 1)
            } else if white_pair {
                !(p_pawns >= 1 || p_bishops >= 1 || (p_knights >= 1 && p_rooks + p_queens >= 1))
            } else if bishops >= 1 && knights >= 1 {
                !(p_pawns >= 1
                    || p_oppositeb_of(horde_bishops_light) >= 1
                    || p_not(p_sameb_as(horde_bishops_light)) >= 3)
            } else {
                !((p_pawns >= 1 && p_oppositeb_of(horde_bishops_light) >= 1)
                    || (p_pawns >= 1 && p_knights >= 1)
                    || (p_oppositeb_of(horde_bishops_light) >= 1 && p_knights >= 1)
                    || p_oppositeb_of(horde_bishops_light) >= 2
                    || p_knights >= 2
                    || p_pawns >= 2)
            }
        }
        3 => {
            if (knights == 2 && bishops == 1) || knights == 3 || white_pair {
                false
            } else {
                p_num == 1
            }
        }
        _ => true,
    }
}
