//! Pseudo-legal move generation for the variants whose legality is not standard chess's:
//! every move the pieces can make, before the variant decides which are legal. Atomic
//! filters it by playing each move, antichess by compulsory capture, and horde's kingless
//! side takes it as it is (no king, nothing to expose).

use crate::rules::attacks::{self, Magic, Sliders};
use crate::rules::bitboard::Bitboard;
use crate::rules::movegen::{NOT_FILE_A, NOT_FILE_H, unobstructed_castle};
use crate::rules::moves::{Move, MoveKind, MoveList};
use crate::rules::piece::Role;
use crate::rules::position::Position;
use crate::rules::square::{Color, Rank, Square};

/// What the variant adds to the moves of standard chess.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PseudoRules {
    /// Pawns may also promote to a king (antichess).
    pub king_promotions: bool,
    /// White pawns on the first rank may step two squares, without an en passant square
    /// (horde).
    pub first_rank_double_steps: bool,
    /// Squares the castling king may cross or land on even when attacked: those next to
    /// the enemy king in atomic, where the enemy king cannot capture.
    pub castling_exempt: Bitboard,
}

/// Receives pseudo-legal moves: a list, or a counter for perft's last ply.
pub(crate) trait PseudoSink {
    /// One move.
    fn push(&mut self, m: Move);
    /// `role` on `from` to every square of `to`.
    fn targets(&mut self, role: Role, from: Square, to: Bitboard) {
        for t in to {
            self.push(Move::new(role, from, t, MoveKind::Normal));
        }
    }
    /// Pawns to every square `t` of `to` from `t - delta`, each one move of `kind`.
    fn pawns(&mut self, to: Bitboard, delta: i8, kind: MoveKind) {
        for t in to {
            self.push(Move::new(
                Role::Pawn,
                Square::new((t as i8 - delta) as u8),
                t,
                kind,
            ));
        }
    }
}

impl PseudoSink for MoveList {
    #[inline(always)]
    fn push(&mut self, m: Move) {
        MoveList::push(self, m);
    }
}

/// Counts moves without listing them.
pub(crate) struct PseudoCount(pub u64);

impl PseudoSink for PseudoCount {
    #[inline(always)]
    fn push(&mut self, _: Move) {
        self.0 += 1;
    }
    #[inline(always)]
    fn targets(&mut self, _: Role, _: Square, to: Bitboard) {
        self.0 += u64::from(to.count());
    }
    #[inline(always)]
    fn pawns(&mut self, to: Bitboard, _: i8, _: MoveKind) {
        self.0 += u64::from(to.count());
    }
}

/// Every pseudo-legal move of the side to move, castling included when its path is safe.
pub(crate) fn generate<L: PseudoSink>(pos: &Position, rules: &PseudoRules, list: &mut L) {
    let us = pos.turn();
    let ours = pos.by_color(us);
    let theirs = pos.by_color(!us);
    let occ = ours | theirs;
    for from in pos.pieces(us, Role::Knight) {
        push_targets(
            list,
            Role::Knight,
            from,
            attacks::knight_attacks(from) & !ours,
        );
    }
    for from in pos.pieces(us, Role::Bishop) {
        push_targets(list, Role::Bishop, from, Magic::bishop(from, occ) & !ours);
    }
    for from in pos.pieces(us, Role::Rook) {
        push_targets(list, Role::Rook, from, Magic::rook(from, occ) & !ours);
    }
    for from in pos.pieces(us, Role::Queen) {
        push_targets(list, Role::Queen, from, Magic::queen(from, occ) & !ours);
    }
    for from in pos.pieces(us, Role::King) {
        push_targets(list, Role::King, from, attacks::king_attacks(from) & !ours);
    }
    pawns(pos, rules, list);
    castling(pos, rules, list);
}

fn push_targets<L: PseudoSink>(list: &mut L, role: Role, from: Square, to: Bitboard) {
    list.targets(role, from, to);
}

fn pawns<L: PseudoSink>(pos: &Position, rules: &PseudoRules, list: &mut L) {
    let us = pos.turn();
    let theirs = pos.by_color(!us);
    let empty = !pos.occupied();
    let fwd: i8 = if us == Color::White { 8 } else { -8 };
    let last = Bitboard::promotion_rank(us);
    let pawns = pos.pieces(us, Role::Pawn);
    // Set-wise, one direction at a time: every target of a batch came from `t - delta`.
    let single = pawns.shift(fwd) & empty;
    let west = (pawns & NOT_FILE_A).shift(fwd - 1) & theirs;
    let east = (pawns & NOT_FILE_H).shift(fwd + 1) & theirs;
    for (targets, delta) in [(single, fwd), (west, fwd - 1), (east, fwd + 1)] {
        list.pawns(targets & !last, delta, MoveKind::Normal);
        for to in targets & last {
            let from = Square::new((to as i8 - delta) as u8);
            for kind in [
                MoveKind::PromoteQueen,
                MoveKind::PromoteRook,
                MoveKind::PromoteBishop,
                MoveKind::PromoteKnight,
            ] {
                list.push(Move::new(Role::Pawn, from, to, kind));
            }
            if rules.king_promotions {
                list.push(Move::new(Role::Pawn, from, to, MoveKind::PromoteKing));
            }
        }
    }
    let third = Bitboard::rank(us.relative_rank(Rank::Third));
    list.pawns(
        (single & third).shift(fwd) & empty,
        2 * fwd,
        MoveKind::DoublePush,
    );
    if rules.first_rank_double_steps && us == Color::White {
        // Horde: from the first rank over the second to the third, with no en passant.
        let first = Bitboard::rank(Rank::First);
        let to = ((pawns & first).shift(fwd) & empty).shift(fwd) & empty;
        list.pawns(to, 2 * fwd, MoveKind::Normal);
    }
    if let Some(ep) = pos.ep_square() {
        for from in attacks::pawn_attacks(!us, ep) & pawns {
            list.push(Move::new(Role::Pawn, from, ep, MoveKind::EnPassant));
        }
    }
}

/// Castling as python-chess and lichess define it: the squares between king and rook and
/// the destinations free (king and rook aside), and the king's square, path and target not
/// attacked, except the exempt squares.
fn castling<L: PseudoSink>(pos: &Position, rules: &PseudoRules, list: &mut L) {
    let us = pos.turn();
    let rights = pos.castling_rooks() & Bitboard::back_rank(us);
    if rights.is_empty() {
        return;
    }
    let Some(king) = pos.pieces(us, Role::King).first() else {
        return;
    };
    let occ = pos.occupied();
    for rook in rights {
        let Some(m) = unobstructed_castle(occ, king, rook) else {
            continue;
        };
        let (king_to, rook_to) = (m.king_to(), m.rook_to());
        let path = (attacks::between(king, king_to) | king) & !rules.castling_exempt;
        let without_king = occ.without(king);
        if path
            .into_iter()
            .any(|sq| pos.is_attacked_with::<Magic>(sq, !us, without_king))
        {
            continue;
        }
        let landed = (occ.without(king).without(rook)) | rook_to;
        if !rules.castling_exempt.contains(king_to)
            && pos.is_attacked_with::<Magic>(king_to, !us, landed)
        {
            continue;
        }
        list.push(m);
    }
}
