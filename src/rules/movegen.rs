//! Legal move generation. Checkers and pins are computed once per position and only legal
//! moves are produced: nothing is made and unmade, so generating never writes to the
//! position (the "read that writes" trap cannot happen here).
//!
//! The generator reports moves in batches to a [`MoveSink`]: a piece's target set, or a
//! set of pawn destinations sharing one direction. Perft's bulk counting adds up the
//! batches' sizes without expanding them into moves.

use super::attacks::{self, Magic, Pext, Sliders};
use super::bitboard::Bitboard;
use super::moves::{Move, MoveKind, MoveList};
use super::piece::Role;
use super::position::{Position, ep_captured_square};
use super::square::{Color, Square};

/// The kinds of pawn batch.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PawnBatch {
    /// Single pushes and captures that do not promote.
    Normal,
    DoublePush,
    /// Moves onto the last rank: four moves per destination.
    Promotion,
}

/// Receives generated moves in batches.
pub(crate) trait MoveSink {
    /// `role` on `from` may move to every square of `to` (never castling).
    fn piece(&mut self, role: Role, from: Square, to: Bitboard);
    /// Pawns may move to every square `t` of `to`, from `t - delta`.
    fn pawns(&mut self, to: Bitboard, delta: i8, batch: PawnBatch);
    /// One special move: castling or an en passant capture.
    fn special(&mut self, m: Move);
}

/// Counts moves (perft's bulk counting).
pub(crate) struct Counter(pub u64);

impl MoveSink for Counter {
    #[inline(always)]
    fn piece(&mut self, _: Role, _: Square, to: Bitboard) {
        self.0 += u64::from(to.count());
    }
    #[inline(always)]
    fn pawns(&mut self, to: Bitboard, _: i8, batch: PawnBatch) {
        let n = u64::from(to.count());
        self.0 += if batch == PawnBatch::Promotion {
            4 * n
        } else {
            n
        };
    }
    #[inline(always)]
    fn special(&mut self, _: Move) {
        self.0 += 1;
    }
}

impl MoveSink for MoveList {
    #[inline(always)]
    fn piece(&mut self, role: Role, from: Square, to: Bitboard) {
        for t in to {
            self.push(Move::new(role, from, t, MoveKind::Normal));
        }
    }
    #[inline(always)]
    fn pawns(&mut self, to: Bitboard, delta: i8, batch: PawnBatch) {
        for t in to {
            let from = Square::new((t as i8 - delta) as u8);
            match batch {
                PawnBatch::Normal => self.push(Move::new(Role::Pawn, from, t, MoveKind::Normal)),
                PawnBatch::DoublePush => {
                    self.push(Move::new(Role::Pawn, from, t, MoveKind::DoublePush))
                }
                PawnBatch::Promotion => {
                    for kind in [
                        MoveKind::PromoteQueen,
                        MoveKind::PromoteRook,
                        MoveKind::PromoteBishop,
                        MoveKind::PromoteKnight,
                    ] {
                        self.push(Move::new(Role::Pawn, from, t, kind));
                    }
                }
            }
        }
    }
    #[inline(always)]
    fn special(&mut self, m: Move) {
        self.push(m);
    }
}

/// Pinned pieces of the side to move (pieces of either colour standing alone between the
/// king and an enemy slider are considered; only ours are returned).
#[inline(always)]
fn pinned<S: Sliders>(pos: &Position, king: Square, us: Color) -> Bitboard {
    let them = !us;
    let theirs = pos.by_color[them.index()];
    let queens = pos.by_role[Role::Queen.index()];
    let snipers = ((S::rook(king, theirs) & (pos.by_role[Role::Rook.index()] | queens))
        | (S::bishop(king, theirs) & (pos.by_role[Role::Bishop.index()] | queens)))
        & theirs;
    let occ = pos.occupied();
    let ours = pos.by_color[us.index()];
    let mut pinned = Bitboard::EMPTY;
    for sniper in snipers {
        let blockers = attacks::between(king, sniper) & occ;
        if !blockers.more_than_one() {
            pinned |= blockers & ours;
        }
    }
    pinned
}

#[inline(always)]
const fn forward(color: Color) -> i8 {
    match color {
        Color::White => 8,
        Color::Black => -8,
    }
}

/// Every square off the a-file (h-file): the pawns that can capture towards it.
pub(super) const NOT_FILE_A: Bitboard = Bitboard(!0x0101_0101_0101_0101);
pub(super) const NOT_FILE_H: Bitboard = Bitboard(!0x8080_8080_8080_8080);

/// Generates every legal move of `pos` into `sink`.
#[inline(always)]
pub(crate) fn generate<S: Sliders, K: MoveSink>(pos: &Position, sink: &mut K) {
    let us = pos.turn;
    let them = !us;
    let ours = pos.by_color[us.index()];
    let theirs = pos.by_color[them.index()];
    let occ = ours | theirs;
    let king = pos.king(us);
    let checkers = pos.attackers_with::<S>(king, them, occ);

    // King steps: test each target with the king lifted off the board, so it cannot hide
    // behind itself from a slider.
    let without_king = occ.without(king);
    let mut king_to = Bitboard::EMPTY;
    for t in attacks::king_attacks(king) & !ours {
        if !pos.is_attacked_with::<S>(t, them, without_king) {
            king_to |= t;
        }
    }
    sink.piece(Role::King, king, king_to);

    if checkers.more_than_one() {
        return;
    }
    // Where non-king moves may land: anywhere not ours, or, in check, the checker or a
    // square between it and the king.
    let target = match checkers.first() {
        Some(checker) => attacks::between(king, checker) | checker,
        None => !ours,
    };
    let pinned = pinned::<S>(pos, king, us);
    let in_check = checkers.any();

    // Knights: a pinned knight can never move.
    for from in pos.by_role[Role::Knight.index()] & ours & !pinned {
        sink.piece(Role::Knight, from, attacks::knight_attacks(from) & target);
    }

    let queens = pos.by_role[Role::Queen.index()];
    let bishops = pos.by_role[Role::Bishop.index()] & ours;
    let rooks = pos.by_role[Role::Rook.index()] & ours;
    let our_queens = queens & ours;
    for from in bishops & !pinned {
        sink.piece(Role::Bishop, from, S::bishop(from, occ) & target);
    }
    for from in rooks & !pinned {
        sink.piece(Role::Rook, from, S::rook(from, occ) & target);
    }
    for from in our_queens & !pinned {
        sink.piece(Role::Queen, from, S::queen(from, occ) & target);
    }
    if !in_check {
        // A pinned slider may still move along its pin line.
        for from in (bishops | rooks | our_queens) & pinned {
            let role = pos.occupied_role_at(from);
            let attacks = match role {
                Role::Bishop => S::bishop(from, occ),
                Role::Rook => S::rook(from, occ),
                _ => S::queen(from, occ),
            };
            sink.piece(role, from, attacks & target & attacks::line(king, from));
        }
    }

    generate_pawns::<S, K>(pos, sink, king, pinned, target, in_check);

    if let Some(ep) = pos.ep_square {
        let captured = ep_captured_square(us, ep);
        // In check, en passant is legal only if it removes the checker or blocks; the
        // simulation in `ep_from_is_legal` decides that along with pins.
        for from in attacks::pawn_attacks(them, ep) & pos.by_role[Role::Pawn.index()] & ours {
            if pos.ep_from_is_legal::<S>(from, ep, captured) {
                sink.special(Move::new(Role::Pawn, from, ep, MoveKind::EnPassant));
            }
        }
    }

    if !in_check {
        generate_castling::<S, K>(pos, sink, king);
    }
}

#[inline(always)]
fn generate_pawns<S: Sliders, K: MoveSink>(
    pos: &Position,
    sink: &mut K,
    king: Square,
    pinned: Bitboard,
    target: Bitboard,
    in_check: bool,
) {
    let us = pos.turn;
    let ours = pos.by_color[us.index()];
    let theirs = pos.by_color[(!us).index()];
    let empty = !(ours | theirs);
    let pawns = pos.by_role[Role::Pawn.index()] & ours;
    let fwd = forward(us);
    let last = Bitboard::promotion_rank(us);
    let third = match us {
        Color::White => Bitboard(0x0000_0000_00FF_0000),
        Color::Black => Bitboard(0x0000_FF00_0000_0000),
    };

    // Pawns pinned on a file may push; pinned on a diagonal may capture the pinner.
    // Batches are emitted per group so that every batch shares one direction.
    let ctx = PawnContext {
        theirs,
        empty,
        target,
        last,
        third,
        fwd,
    };
    emit_pawns(sink, &ctx, pawns & !pinned, Bitboard::FULL);
    if !in_check {
        for from in pawns & pinned {
            emit_pawns(
                sink,
                &ctx,
                Bitboard::from_square(from),
                attacks::line(king, from),
            );
        }
    }
}

/// What every pawn batch of one position shares.
struct PawnContext {
    theirs: Bitboard,
    empty: Bitboard,
    target: Bitboard,
    last: Bitboard,
    third: Bitboard,
    fwd: i8,
}

/// Pushes, double pushes and captures of `movers`, restricted to `allowed` squares.
#[inline(always)]
fn emit_pawns<K: MoveSink>(sink: &mut K, ctx: &PawnContext, movers: Bitboard, allowed: Bitboard) {
    let fwd = ctx.fwd;
    // Capture directions: towards the a-file and towards the h-file.
    let (west, east) = (fwd - 1, fwd + 1);
    let single = movers.shift(fwd) & ctx.empty;
    let double = (single & ctx.third).shift(fwd) & ctx.empty & ctx.target & allowed;
    let single = single & ctx.target & allowed;
    let west_caps = (movers & NOT_FILE_A).shift(west) & ctx.theirs & ctx.target & allowed;
    let east_caps = (movers & NOT_FILE_H).shift(east) & ctx.theirs & ctx.target & allowed;
    let last = ctx.last;
    if ((single | west_caps | east_caps) & last).any() {
        sink.pawns(single & last, fwd, PawnBatch::Promotion);
        sink.pawns(west_caps & last, west, PawnBatch::Promotion);
        sink.pawns(east_caps & last, east, PawnBatch::Promotion);
    }
    sink.pawns(single & !last, fwd, PawnBatch::Normal);
    sink.pawns(west_caps & !last, west, PawnBatch::Normal);
    sink.pawns(east_caps & !last, east, PawnBatch::Normal);
    sink.pawns(double, fwd + fwd, PawnBatch::DoublePush);
}

/// Castling with `rook`, if the squares between king and rook and both destinations are
/// empty (the king and the rook themselves aside); whether the king's path is safe is the
/// caller's question, as variants answer it differently.
#[inline(always)]
pub(crate) fn unobstructed_castle(occ: Bitboard, king: Square, rook: Square) -> Option<Move> {
    let m = Move::new(Role::King, king, rook, MoveKind::Castle);
    let (king_to, rook_to) = (m.king_to(), m.rook_to());
    let must_be_empty =
        (attacks::between(king, king_to) | king_to | attacks::between(rook, rook_to) | rook_to)
            .without(king)
            .without(rook);
    (must_be_empty & occ).is_empty().then_some(m)
}

#[inline(always)]
fn generate_castling<S: Sliders, K: MoveSink>(pos: &Position, sink: &mut K, king: Square) {
    let us = pos.turn;
    let rights = pos.castling & Bitboard::back_rank(us);
    if rights.is_empty() {
        return;
    }
    let occ = pos.occupied();
    for rook in rights {
        let Some(m) = unobstructed_castle(occ, king, rook) else {
            continue;
        };
        let king_to = m.king_to();
        // Every square the king crosses or lands on must be safe, judged with king and
        // rook lifted (the rook may have been shielding the king's destination).
        let lifted = occ.without(king).without(rook);
        let king_path = attacks::between(king, king_to) | king_to;
        if king_path
            .into_iter()
            .all(|sq| !pos.is_attacked_with::<S>(sq, !us, lifted))
        {
            sink.special(m);
        }
    }
}

/// Runs `f` with the best slider back-end for this CPU.
macro_rules! with_sliders {
    ($body:ident ( $($arg:expr),* )) => {{
        if attacks::has_bmi2() {
            // SAFETY: the CPU has BMI2.
            unsafe { $body::bmi2($($arg),*) }
        } else {
            $body::portable($($arg),*)
        }
    }};
}
pub(crate) use with_sliders;

mod legal_list {
    use super::*;
    #[inline(never)]
    pub fn portable(pos: &Position) -> MoveList {
        let mut list = MoveList::new();
        generate::<Magic, _>(pos, &mut list);
        list
    }
    #[cfg_attr(target_arch = "x86_64", target_feature(enable = "bmi2"))]
    pub unsafe fn bmi2(pos: &Position) -> MoveList {
        let mut list = MoveList::new();
        generate::<Pext, _>(pos, &mut list);
        list
    }
}

mod legal_into {
    use super::*;
    #[inline(never)]
    pub fn portable(pos: &Position, list: &mut MoveList) {
        generate::<Magic, _>(pos, list);
    }
    #[cfg_attr(target_arch = "x86_64", target_feature(enable = "bmi2"))]
    pub unsafe fn bmi2(pos: &Position, list: &mut MoveList) {
        generate::<Pext, _>(pos, list);
    }
}

mod legal_count {
    use super::*;
    #[inline(never)]
    pub fn portable(pos: &Position) -> u64 {
        let mut c = Counter(0);
        generate::<Magic, _>(pos, &mut c);
        c.0
    }
    #[cfg_attr(target_arch = "x86_64", target_feature(enable = "bmi2"))]
    pub unsafe fn bmi2(pos: &Position) -> u64 {
        let mut c = Counter(0);
        generate::<Pext, _>(pos, &mut c);
        c.0
    }
}

impl Position {
    /// Every legal move, in generation order: pins, checks, castling through attacked
    /// squares and the en passant capture that exposes the king are all accounted for.
    ///
    /// ```
    /// use chess_service::rules::{Position, Variant};
    ///
    /// assert_eq!(Position::new().legal_moves().len(), 20);
    /// // b5 may not take en passant: that would empty the rank between king and rook.
    /// let pos = Position::from_fen("8/8/8/KPp4r/8/8/8/4k3 w - c6 0 2", Variant::Standard).unwrap();
    /// let uci: Vec<String> = pos.legal_moves().iter().map(|&m| pos.uci(m)).collect();
    /// assert!(!uci.contains(&"b5c6".to_string()));
    /// assert_eq!(pos.count_legal_moves(), uci.len() as u64);
    /// ```
    pub fn legal_moves(&self) -> MoveList {
        with_sliders!(legal_list(self))
    }

    /// Appends every legal move to `list` (the variants add their own moves after).
    pub(crate) fn legal_moves_into(&self, list: &mut MoveList) {
        with_sliders!(legal_into(self, list))
    }

    /// How many legal moves there are, without listing them.
    pub fn count_legal_moves(&self) -> u64 {
        with_sliders!(legal_count(self))
    }

    /// Whether the side to move has any legal move.
    pub fn has_legal_move(&self) -> bool {
        self.count_legal_moves() > 0
    }

    /// Legal moves sorted by (from, to, kind): a deterministic order that does not depend
    /// on the generator, used by the store's compact move encoding.
    pub fn legal_moves_sorted(&self) -> MoveList {
        let mut list = self.legal_moves();
        list.sort();
        list
    }

    /// Whether the side to move is checkmated.
    pub fn is_checkmate(&self) -> bool {
        self.is_check() && !self.has_legal_move()
    }

    /// Whether the side to move is stalemated.
    pub fn is_stalemate(&self) -> bool {
        !self.is_check() && !self.has_legal_move()
    }

    /// Whether `m` is legal here.
    pub fn is_legal(&self, m: Move) -> bool {
        self.legal_moves().contains(&m)
    }
}
