//! Racing Kings: no checks at all (a move that gives check is illegal), and the first
//! king on the eighth rank wins. If white arrives first and black can arrive on the very
//! next move, black gets that move, and arriving too draws.

use super::{VariantEnd, VariantPosition, VariantRules, standard_ep_capturable, standard_moves};
use crate::rules::attacks;
use crate::rules::bitboard::Bitboard;
use crate::rules::fen::Placement;
use crate::rules::moves::{Move, MoveList};
use crate::rules::piece::Role;
use crate::rules::position::Position;
use crate::rules::square::{Color, Rank, Square};

/// Racing Kings, as lichess plays it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RacingKings;

/// Whether `m`, a legal move of `board`, checks the enemy king: directly from its
/// destination, or by uncovering one of our sliders. Castling and en passant (which a
/// Racing Kings game never has, but a FEN may describe) are played out instead.
fn gives_check(board: &Position, m: Move) -> bool {
    if m.is_castle() || m.is_en_passant() {
        return board.after_trusted(m).is_check();
    }
    let us = board.turn();
    let Some(king) = board.pieces(!us, Role::King).first() else {
        return false;
    };
    let occ = board.occupied().without(m.from) | Bitboard::from_square(m.to);
    let direct = match m.promotion().unwrap_or(m.role) {
        Role::Pawn => attacks::pawn_attacks(us, m.to),
        Role::Knight => attacks::knight_attacks(m.to),
        Role::Bishop => attacks::bishop_attacks(m.to, occ),
        Role::Rook => attacks::rook_attacks(m.to, occ),
        Role::Queen => attacks::queen_attacks(m.to, occ),
        Role::King => attacks::king_attacks(m.to),
    };
    if direct.contains(king) {
        return true;
    }
    let ours = board.by_color(us).without(m.from);
    let queens = board.by_role(Role::Queen);
    let rooks = (board.by_role(Role::Rook) | queens) & ours;
    let bishops = (board.by_role(Role::Bishop) | queens) & ours;
    (attacks::rook_attacks(king, occ) & rooks).any()
        || (attacks::bishop_attacks(king, occ) & bishops).any()
}

/// What makes a move of `board` give check, worked out once for all its moves: the
/// squares from which each kind of piece attacks the enemy king, and our pieces whose
/// leaving uncovers one of our sliders' lines to it. Why: the filter runs on every
/// generated move, and a Racing Kings perft spends most of its time in it.
struct CheckSquares {
    king: Square,
    /// By [`Role`] index: where a piece of that role attacks the king from.
    direct: [Bitboard; 6],
    /// Our pieces that alone stand between the king and one of our sliders.
    uncovering: Bitboard,
}

impl CheckSquares {
    /// `None` when the enemy king is missing (no move can check it then).
    fn of(board: &Position) -> Option<CheckSquares> {
        let us = board.turn();
        let king = board.pieces(!us, Role::King).first()?;
        let occ = board.occupied();
        let diagonal = attacks::bishop_attacks(king, occ);
        let straight = attacks::rook_attacks(king, occ);
        let ours = board.by_color(us);
        let queens = board.by_role(Role::Queen);
        let snipers = ((attacks::rook_rays(king) & (board.by_role(Role::Rook) | queens))
            | (attacks::bishop_rays(king) & (board.by_role(Role::Bishop) | queens)))
            & ours;
        let mut uncovering = Bitboard::EMPTY;
        for sniper in snipers {
            let blockers = attacks::between(king, sniper) & occ;
            if blockers.count() == 1 && (blockers & ours).any() {
                uncovering |= blockers;
            }
        }
        let mut direct = [Bitboard::EMPTY; 6];
        direct[Role::Pawn as usize] = attacks::pawn_attacks(!us, king);
        direct[Role::Knight as usize] = attacks::knight_attacks(king);
        direct[Role::Bishop as usize] = diagonal;
        direct[Role::Rook as usize] = straight;
        direct[Role::Queen as usize] = diagonal | straight;
        direct[Role::King as usize] = attacks::king_attacks(king);
        Some(CheckSquares {
            king,
            direct,
            uncovering,
        })
    }

    /// Whether `m`, a legal move of `board` (a position in which no king is in check, as
    /// every Racing Kings position is), checks the enemy king. A slider that reaches the
    /// king's line from the far side of its own square would have been checking already,
    /// so the lines seen through today's occupancy are exact; castling, en passant and
    /// promotions change more than one square's worth and are played out.
    fn gives_check(&self, board: &Position, m: Move) -> bool {
        if m.is_castle() || m.is_en_passant() || m.promotion().is_some() {
            return gives_check(board, m);
        }
        self.direct[m.role as usize].contains(m.to)
            || (self.uncovering.contains(m.from) && !attacks::aligned(self.king, m.from, m.to))
    }
}

impl VariantRules for RacingKings {
    const KEY: &'static str = "racingKings";
    const START: &'static str = "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w - - 0 1";
    const PLACEMENT: Placement = Placement::STANDARD;

    fn generate(pos: &VariantPosition<Self>, list: &mut MoveList) {
        standard_moves(&pos.board, list);
        let board = &pos.board;
        if let Some(checks) = CheckSquares::of(board) {
            list.retain(|&m| !checks.gives_check(board, m));
        }
    }

    fn ep_capturable(pos: &VariantPosition<Self>, ep: Square) -> bool {
        standard_ep_capturable(&pos.board, ep)
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

    fn impossible_placement(pos: &VariantPosition<Self>) -> Option<&'static str> {
        // python-chess's rule: the race starts without pawns and with two rooks, bishops
        // and knights and a queen a side, and no move adds any; and the race is over once
        // both kings stand on the eighth rank with black to move.
        let board = &pos.board;
        if board.by_role(Role::Pawn).any() {
            return Some("Racing Kings has no pawns");
        }
        for color in Color::ALL {
            for (role, most) in [
                (Role::Knight, 2),
                (Role::Bishop, 2),
                (Role::Rook, 2),
                (Role::Queen, 1),
            ] {
                if board.pieces(color, role).count() > most {
                    return Some("a side has at most two knights, bishops and rooks and one queen");
                }
            }
        }
        let on_eighth = |c| (board.pieces(c, Role::King) & Bitboard::rank(Rank::Eighth)).any();
        if board.turn() == Color::Black && on_eighth(Color::White) && on_eighth(Color::Black) {
            return Some("both kings have reached the eighth rank: the race is over");
        }
        None
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
