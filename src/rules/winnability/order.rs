//! Moves in the order chasolver's search meets them (the `chess` crate's generator): pawns
//! by square, then knights, bishops, rooks and queens (unpinned before pinned, each by
//! square), then the king, each piece's destinations from a1 to h8 and promotions as
//! queen, knight, rook, bishop. Our generator is faster but orders moves otherwise; with
//! chasolver's node limits, the order decides how soon a helpmate turns up, so the search
//! uses this one. Built in one pass over the generator's batches, with no allocation.

use super::super::attacks::{self, Magic, Pext, Sliders};
use super::super::bitboard::Bitboard;
use super::super::movegen::{MoveSink, PawnBatch, generate};
#[cfg(test)]
use super::super::moves::MoveList;
use super::super::moves::{Move, MoveKind};
use super::super::piece::Role;
use super::super::position::Position;
use super::super::square::Square;
use std::mem::MaybeUninit;
use std::ops::ControlFlow;

/// The generator's batches, gathered for reordering (left uninitialised past the counts:
/// a node must not pay for zeroing them).
struct Collect {
    /// Non-pawn batches, in generation order: (role, from, destinations).
    pieces: [MaybeUninit<(Role, Square, Bitboard)>; 40],
    n_pieces: usize,
    /// Pawn moves as sortable keys: from, to, then 0 (not a promotion) or 1..=4 (Q, N, R, B).
    pawns: [MaybeUninit<u32>; 160],
    n_pawns: usize,
    /// En passant captures and castlings.
    specials: [MaybeUninit<Move>; 4],
    n_specials: usize,
}

impl MoveSink for Collect {
    #[inline(always)]
    fn piece(&mut self, role: Role, from: Square, to: Bitboard) {
        if to.any() && self.n_pieces < self.pieces.len() {
            self.pieces[self.n_pieces] = MaybeUninit::new((role, from, to));
            self.n_pieces += 1;
        }
    }

    #[inline(always)]
    fn pawns(&mut self, to: Bitboard, delta: i8, batch: PawnBatch) {
        for t in to {
            let from = (t as i8 - delta) as u32;
            let base = (from << 9) | ((t as u32) << 3);
            if batch == PawnBatch::Promotion {
                for code in 1..=4 {
                    self.push_pawn(base | code);
                }
            } else {
                self.push_pawn(base);
            }
        }
    }

    #[inline(always)]
    fn special(&mut self, m: Move) {
        if self.n_specials < self.specials.len() {
            self.specials[self.n_specials] = MaybeUninit::new(m);
            self.n_specials += 1;
        }
    }
}

impl Collect {
    #[inline(always)]
    fn pieces(&self) -> &[(Role, Square, Bitboard)] {
        // SAFETY: the first `n_pieces` entries were written by `piece`.
        unsafe { std::slice::from_raw_parts(self.pieces.as_ptr().cast(), self.n_pieces) }
    }

    #[inline(always)]
    fn pawns_mut(&mut self) -> &mut [u32] {
        // SAFETY: the first `n_pawns` entries were written by `push_pawn`.
        unsafe { std::slice::from_raw_parts_mut(self.pawns.as_mut_ptr().cast(), self.n_pawns) }
    }

    #[inline(always)]
    fn specials(&self) -> &[Move] {
        // SAFETY: the first `n_specials` entries were written by `special`.
        unsafe { std::slice::from_raw_parts(self.specials.as_ptr().cast(), self.n_specials) }
    }

    #[inline(always)]
    fn push_pawn(&mut self, key: u32) {
        if self.n_pawns < self.pawns.len() {
            self.pawns[self.n_pawns] = MaybeUninit::new(key);
            self.n_pawns += 1;
        }
    }
}

const PROMOTIONS: [MoveKind; 4] = [
    MoveKind::PromoteQueen,
    MoveKind::PromoteKnight,
    MoveKind::PromoteRook,
    MoveKind::PromoteBishop,
];

/// A node's legal moves as the generator's batches, ready to visit in chasolver's order.
pub(super) struct Moves {
    c: Collect,
    /// The side to move's king (where its steps start when it has none).
    king: Square,
}

#[inline(always)]
fn gather_with<S: Sliders>(pos: &Position, moves: &mut Moves) {
    generate::<S, _>(pos, &mut moves.c);
    moves.king = pos.king(pos.turn());
}

/// The legal moves of `pos`, gathered for [`Moves::visit`] in place (the batches are a
/// kilobyte or so: returning them by value would copy them at every node).
#[inline]
pub(super) fn gather(pos: &Position, moves: &mut Moves) {
    if attacks::has_bmi2() {
        // SAFETY: the CPU has BMI2.
        unsafe { gather_bmi2(pos, moves) }
    } else {
        gather_with::<Magic>(pos, moves)
    }
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "bmi2"))]
unsafe fn gather_bmi2(pos: &Position, moves: &mut Moves) {
    gather_with::<Pext>(pos, moves)
}

impl Moves {
    /// No moves yet (nothing is zeroed).
    #[inline(always)]
    pub(super) fn new() -> Moves {
        Moves {
            c: Collect {
                pieces: [MaybeUninit::uninit(); 40],
                n_pieces: 0,
                pawns: [MaybeUninit::uninit(); 160],
                n_pawns: 0,
                specials: [MaybeUninit::uninit(); 4],
                n_specials: 0,
            },
            king: Square::A1,
        }
    }

    /// No legal move.
    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.c.n_pieces == 0 && self.c.n_pawns == 0 && self.c.n_specials == 0
    }

    /// Calls `f` on every move in chasolver's order until it breaks.
    #[inline(always)]
    pub(super) fn visit<B>(&mut self, mut f: impl FnMut(Move) -> ControlFlow<B>) -> ControlFlow<B> {
        let c = &mut self.c;
        let pawns = c.pawns_mut();
        insertion_sort(pawns);
        for &key in pawns.iter() {
            let from = Square::new((key >> 9) as u8);
            let to = Square::new(((key >> 3) & 63) as u8);
            let kind = match key & 7 {
                0 if from.rank().index().abs_diff(to.rank().index()) == 2 => MoveKind::DoublePush,
                0 => MoveKind::Normal,
                code => PROMOTIONS[(code - 1) as usize],
            };
            f(Move::new(Role::Pawn, from, to, kind))?;
        }
        for &m in c.specials() {
            if m.kind == MoveKind::EnPassant {
                f(m)?;
            }
        }

        for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
            for &(r, from, to) in c.pieces() {
                if r == role {
                    for t in to {
                        f(Move::new(role, from, t, MoveKind::Normal))?;
                    }
                }
            }
        }

        // The king: steps and castlings merged by the square the king lands on.
        let mut steps = Bitboard::EMPTY;
        let mut from = self.king;
        for &(r, king, to) in c.pieces() {
            if r == Role::King {
                steps = to;
                from = king;
            }
        }
        let mut castles: [Option<Move>; 2] = [None, None];
        let mut n = 0;
        for &m in c.specials() {
            if m.kind == MoveKind::Castle && n < 2 {
                castles[n] = Some(m);
                n += 1;
            }
        }
        if n == 2
            && let (Some(a), Some(b)) = (castles[0], castles[1])
            && b.king_to() < a.king_to()
        {
            castles = [Some(b), Some(a)];
        }
        let mut pending = castles.into_iter().flatten().peekable();
        for t in steps {
            while let Some(m) = pending.next_if(|m| m.king_to() < t) {
                f(m)?;
            }
            f(Move::new(Role::King, from, t, MoveKind::Normal))?;
        }
        for m in pending {
            f(m)?;
        }
        ControlFlow::Continue(())
    }
}

#[inline(always)]
fn insertion_sort(keys: &mut [u32]) {
    for i in 1..keys.len() {
        let k = keys[i];
        let mut j = i;
        while j > 0 && keys[j - 1] > k {
            keys[j] = keys[j - 1];
            j -= 1;
        }
        keys[j] = k;
    }
}

/// The legal moves of `pos`, in chasolver's order, appended to `out`.
#[cfg(test)]
fn legal_moves_ordered(pos: &Position, out: &mut MoveList) {
    let mut moves = Moves::new();
    gather(pos, &mut moves);
    let _ = moves.visit(|m| {
        out.push(m);
        ControlFlow::<()>::Continue(())
    });
}

#[cfg(test)]
mod tests {
    use super::super::super::position::Variant;
    use super::*;

    #[test]
    fn the_same_moves_as_the_generator() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        ] {
            let pos = Position::from_fen(fen, Variant::Standard).expect("valid FEN");
            let mut list = MoveList::new();
            legal_moves_ordered(&pos, &mut list);
            let mut a: Vec<Move> = list.to_vec();
            let mut b: Vec<Move> = pos.legal_moves().to_vec();
            a.sort();
            b.sort();
            assert_eq!(a, b, "{fen}");
        }
    }
}
