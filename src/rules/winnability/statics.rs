//! Static proof of unwinnability (chasolver's `is_statically_unwinnable`): saturate the
//! analysis, and if a mate still looks possible, split on the fate of the first pieces
//! found both steady and capturable (never captured while steady / captured only where
//! they stand) and saturate again under each assumption. True only if every case rules
//! mate out; false is "no proof".

use super::super::attacks;
use super::super::bitboard::Bitboard;
use super::super::moves::{Move, MoveKind};
use super::super::piece::Role;
use super::super::position::Position;
use super::super::square::Color;
use super::analysis::Analysis;

/// Whether every castling right is dead: some square the castling needs empty holds a
/// piece the fixpoint (which ignores castling) proves steady. That proof is valid up to
/// the first castling of any game, and that castling would need the square empty: so no
/// castling ever happens, and the fixpoint's results hold for the whole game.
fn castling_is_blocked_for_good(pos: &Position) -> bool {
    let rooks = pos.castling_rooks();
    if rooks.is_empty() {
        return true;
    }
    let mut analysis = Analysis::new(pos);
    analysis.saturate();
    rooks.into_iter().all(|rook| {
        let color = if pos.by_color(Color::White).contains(rook) {
            Color::White
        } else {
            Color::Black
        };
        let king = pos.king(color);
        let m = Move::new(Role::King, king, rook, MoveKind::Castle);
        let (king_to, rook_to) = (m.king_to(), m.rook_to());
        let must_be_empty =
            (attacks::between(king, king_to) | king_to | attacks::between(rook, rook_to) | rook_to)
                .without(king)
                .without(rook);
        (must_be_empty & analysis.steady).any()
    })
}

/// Whether the structure alone proves White cannot mate.
pub(super) fn is_statically_unwinnable(pos: &Position) -> bool {
    // The fixpoint knows neither en passant nor castling: no proof with en passant
    // pending, nor with a castling that might still happen.
    if pos.ep_square().is_some() || !castling_is_blocked_for_good(pos) {
        return false;
    }
    let white = pos.by_color(Color::White);
    let mut analysis = Analysis::new(pos);
    if white.count() == 2 {
        analysis.uncapturable_while_steady = Some(white & !pos.by_role(Role::King));
    }
    analysis.saturate();
    if !analysis.black_could_get_mated() {
        return true;
    }
    let Some(squares) = analysis.first_steady_capturable else {
        return false;
    };

    let saturated = |uncapturable: Option<Bitboard>, only_while_steady: Option<Bitboard>| {
        let mut a = Analysis::new(pos);
        a.uncapturable_while_steady = uncapturable;
        a.capturable_only_while_steady = only_while_steady;
        a.saturate();
        a.black_could_get_mated()
    };

    for s in squares {
        let one = Some(Bitboard::from_square(s));
        if saturated(one, None) {
            continue;
        }
        if !saturated(None, one) {
            return true;
        }
    }

    if squares.count() == 2 {
        let s1 = squares.first_unchecked();
        let s2 = squares.without(s1).first_unchecked();
        let (b1, b2) = (Bitboard::from_square(s1), Bitboard::from_square(s2));
        if saturated(Some(squares), None)
            || saturated(Some(b1), Some(b2))
            || saturated(Some(b2), Some(b1))
        {
            return false;
        }
        return !saturated(None, Some(squares));
    }
    false
}
