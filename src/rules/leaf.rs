//! Perft's leaf count: how many legal moves a position has, with the side to move fixed
//! at compile time. Most of perft's time is spent here (one call per node above the
//! leaves), so this is the one place the generator's work is specialised for counting:
//!
//! - the side to move is a type ([`White`] or [`Black`]), so pawn directions, ranks and
//!   colour indices are constants and the code carries no side-to-move branches;
//! - checkers and pins come from the enemy sliders on the king's empty-board lines and the
//!   between-squares table, with no sliding-attack lookup at all (most positions have
//!   none or one such slider);
//! - king steps are first filtered in bulk by the enemy pawns' and king's attacks, and
//!   only the remaining squares are tested against knights and sliders;
//! - moves are never produced: every piece adds the size of its target set.
//!
//! The service's generator ([`super::movegen`]) stays the one that lists moves; the perft
//! tests prove this counter against it on every published count, on both back-ends.

use super::attacks::{self, Sliders};
use super::bitboard::Bitboard;
use super::movegen;
use super::piece::Role;
use super::position::{Position, ep_captured_square};
use super::square::{Color, Square};

const NOT_FILE_A: u64 = movegen::NOT_FILE_A.0;
const NOT_FILE_H: u64 = movegen::NOT_FILE_H.0;

/// The side to move, as a type: its constants replace run-time colour tests.
pub(crate) trait Side {
    /// The opponent.
    type Them: Side;
    /// This side.
    const US: Color;
    /// The rank a double push passes over (the third rank from this side).
    const THIRD: u64;
    /// The rank this side's pawns promote on.
    const LAST: u64;
    /// This side's back rank.
    const BACK_RANK: u64;
    /// The index of the a-file square of the back rank (a shift from the first rank).
    const BACK_RANK_A: u32;
    /// Every square one rank forward.
    fn forward(b: u64) -> u64;
    /// Every square one rank forward and one file towards the a-file (callers mask the
    /// a-file first).
    fn forward_west(b: u64) -> u64;
    /// Every square one rank forward and one file towards the h-file (callers mask the
    /// h-file first).
    fn forward_east(b: u64) -> u64;
}

/// White to move.
pub(crate) struct White;
/// Black to move.
pub(crate) struct Black;

impl Side for White {
    type Them = Black;
    const US: Color = Color::White;
    const THIRD: u64 = 0x0000_0000_00FF_0000;
    const LAST: u64 = 0xFF00_0000_0000_0000;
    const BACK_RANK: u64 = 0xFF;
    const BACK_RANK_A: u32 = 0;
    #[inline(always)]
    fn forward(b: u64) -> u64 {
        b << 8
    }
    #[inline(always)]
    fn forward_west(b: u64) -> u64 {
        b << 7
    }
    #[inline(always)]
    fn forward_east(b: u64) -> u64 {
        b << 9
    }
}

impl Side for Black {
    type Them = White;
    const US: Color = Color::Black;
    const THIRD: u64 = 0x0000_FF00_0000_0000;
    const LAST: u64 = 0x0000_0000_0000_00FF;
    const BACK_RANK: u64 = 0xFF00_0000_0000_0000;
    const BACK_RANK_A: u32 = 56;
    #[inline(always)]
    fn forward(b: u64) -> u64 {
        b >> 8
    }
    #[inline(always)]
    fn forward_west(b: u64) -> u64 {
        b >> 9
    }
    #[inline(always)]
    fn forward_east(b: u64) -> u64 {
        b >> 7
    }
}

/// Every square the pawns `pawns` of side `C` attack.
#[inline(always)]
fn pawn_attacks<C: Side>(pawns: u64) -> u64 {
    C::forward_west(pawns & NOT_FILE_A) | C::forward_east(pawns & NOT_FILE_H)
}

/// Legal moves of side `C`'s pawns `movers` that land on `allowed` (the whole board, or a
/// pinned pawn's pin line). A move onto the last rank counts four times (four promotions).
#[inline(always)]
fn pawn_moves<C: Side>(movers: u64, empty: u64, theirs: u64, allowed: u64) -> u32 {
    let single = C::forward(movers) & empty;
    let double = C::forward(single & C::THIRD) & empty & allowed;
    let single = single & allowed;
    let west = C::forward_west(movers & NOT_FILE_A) & theirs & allowed;
    let east = C::forward_east(movers & NOT_FILE_H) & theirs & allowed;
    let mut n = single.count_ones() + double.count_ones() + west.count_ones() + east.count_ones();
    if (single | west | east) & C::LAST != 0 {
        n += 3
            * ((single & C::LAST).count_ones()
                + (west & C::LAST).count_ones()
                + (east & C::LAST).count_ones());
    }
    n
}

/// The knights and sliders of the side not to move, for testing squares the king would
/// step on (their pawns and king are tested in bulk).
struct Enemy<S> {
    knights: Bitboard,
    orth: Bitboard,
    diag: Bitboard,
    _s: std::marker::PhantomData<S>,
}

impl<S: Sliders> Enemy<S> {
    /// Whether one of these pieces attacks `t` given the occupancy `occ`. The empty-board
    /// rays decide most squares without a sliding-attack lookup.
    #[inline(always)]
    fn attacks(&self, t: Square, occ: Bitboard) -> bool {
        let orth = attacks::rook_rays(t) & self.orth;
        let diag = attacks::bishop_rays(t) & self.diag;
        (attacks::knight_attacks(t) & self.knights).any()
            || (orth.any() && (S::rook(t, occ) & orth).any())
            || (diag.any() && (S::bishop(t, occ) & diag).any())
    }
}

/// The squares of the first rank strictly between files `a` and `b`.
const fn between_files(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    if hi - lo < 2 {
        0
    } else {
        ((1u64 << hi) - 1) & !((1u64 << (lo + 1)) - 1)
    }
}

/// `CASTLING[king file][rook file]`: for castling with a king and rook on those files of
/// the first rank (Chess960 allows any pair), the squares that must be empty (king and
/// rook apart) and the squares the king crosses or lands on, which must be safe. The king
/// goes to the g-file and the rook to the f-file towards the h-file, c and d the other
/// way. Shifted by 56 for black.
static CASTLING: [[(u64, u64); 8]; 8] = {
    let mut table = [[(0, 0); 8]; 8];
    let mut k = 0;
    while k < 8 {
        let mut r = 0;
        while r < 8 {
            let (king_to, rook_to) = if r > k { (6, 5) } else { (2, 3) };
            let king_path = between_files(k, king_to) | 1 << king_to;
            let rook_path = between_files(r, rook_to) | 1 << rook_to;
            let must_be_empty = (king_path | rook_path) & !(1 << k) & !(1 << r);
            table[k as usize][r as usize] = (must_be_empty, king_path);
            r += 1;
        }
        k += 1;
    }
    table
};

/// The number of legal moves of `pos`, whose side to move must be `C`.
#[inline(always)]
pub(crate) fn count<S: Sliders, C: Side>(pos: &Position) -> u64 {
    debug_assert_eq!(pos.turn, C::US);
    let ours = pos.by_color[C::US.index()];
    let theirs = pos.by_color[<C::Them as Side>::US.index()];
    let occ = ours | theirs;
    let role = |r: Role| pos.by_role[r.index()];
    let king = (ours & role(Role::King)).first_unchecked();
    let queens = role(Role::Queen);
    let their_orth = (role(Role::Rook) | queens) & theirs;
    let their_diag = (role(Role::Bishop) | queens) & theirs;
    let their_knights = role(Role::Knight) & theirs;
    let their_pawns = role(Role::Pawn) & theirs;

    // Only enemy sliders on the king's lines (board taken as empty) can check or pin: a
    // sniper with nothing between checks, one with a single piece of ours between pins it.
    let snipers =
        (attacks::rook_rays(king) & their_orth) | (attacks::bishop_rays(king) & their_diag);
    let mut checkers = (attacks::knight_attacks(king) & their_knights)
        | (attacks::pawn_attacks(C::US, king) & their_pawns);
    let mut pinned = Bitboard::EMPTY;
    for sniper in snipers {
        let blockers = attacks::between(king, sniper) & occ;
        if blockers.is_empty() {
            checkers |= sniper;
        } else if !blockers.more_than_one() {
            pinned |= blockers & ours;
        }
    }

    // King steps: squares the enemy pawns and king attack are out at once; the rest are
    // tested against knights and sliders with the king lifted (so it cannot hide behind
    // itself from a slider).
    let their_king = (theirs & role(Role::King)).first_unchecked();
    let covered = pawn_attacks::<C::Them>(their_pawns.0) | attacks::king_attacks(their_king).0;
    let enemy = Enemy::<S> {
        knights: their_knights,
        orth: their_orth,
        diag: their_diag,
        _s: std::marker::PhantomData,
    };
    let without_king = occ.without(king);
    let mut n = 0u32;
    for t in attacks::king_attacks(king) & !ours & Bitboard(!covered) {
        n += u32::from(!enemy.attacks(t, without_king));
    }
    if checkers.more_than_one() {
        return u64::from(n);
    }
    let in_check = checkers.any();
    // Where other pieces may land: anywhere not ours, or, in check, onto the checker or
    // between it and the king.
    let target = match checkers.first() {
        Some(checker) => attacks::between(king, checker) | checker,
        None => !ours,
    };

    let free = ours & !pinned;
    for from in role(Role::Knight) & free {
        n += (attacks::knight_attacks(from) & target).count();
    }
    let our_diag = (role(Role::Bishop) | queens) & ours;
    let our_orth = (role(Role::Rook) | queens) & ours;
    for from in our_diag & free {
        n += (S::bishop(from, occ) & target).count();
    }
    for from in our_orth & free {
        n += (S::rook(from, occ) & target).count();
    }

    let pawns = role(Role::Pawn) & ours;
    let empty = !occ.0;
    n += pawn_moves::<C>((pawns & free).0, empty, theirs.0, target.0);
    if !in_check {
        // A pinned piece moves only along its pin line (in check it cannot move at all:
        // it could neither take the checker nor block without leaving the line).
        for from in pinned {
            let line = attacks::line(king, from);
            if pawns.contains(from) {
                n += pawn_moves::<C>(
                    Bitboard::from_square(from).0,
                    empty,
                    theirs.0,
                    (target & line).0,
                );
            } else {
                if our_diag.contains(from) {
                    n += (S::bishop(from, occ) & target & line).count();
                }
                if our_orth.contains(from) {
                    n += (S::rook(from, occ) & target & line).count();
                }
            }
        }
        // Castling (standard or Chess960: the king goes to the g- or c-file, the rook to
        // the f- or d-file), from a table of the squares each (king, rook) pair needs.
        // A side with a castling right has its king on its back rank.
        for rook in pos.castling & Bitboard(C::BACK_RANK) {
            let (must_be_empty, king_path) = CASTLING[king.file().index()][rook.file().index()];
            let (must_be_empty, king_path) = (
                Bitboard(must_be_empty << C::BACK_RANK_A),
                Bitboard(king_path << C::BACK_RANK_A),
            );
            if (must_be_empty & occ).any() || (king_path & Bitboard(covered)).any() {
                continue;
            }
            // Judged with king and rook lifted (the rook may shield the king's square).
            let lifted = occ.without(king).without(rook);
            let mut safe = true;
            for sq in king_path {
                if enemy.attacks(sq, lifted) {
                    safe = false;
                    break;
                }
            }
            n += u32::from(safe);
        }
    }

    if let Some(ep) = pos.ep_square {
        // Rare (kept only when a capture is legal for some pawn): the full simulation
        // decides pins, checks and the rank-emptying case.
        let captured = ep_captured_square(C::US, ep);
        for from in attacks::pawn_attacks(<C::Them as Side>::US, ep) & pawns {
            n += u32::from(pos.ep_from_is_legal::<S>(from, ep, captured));
        }
    }
    u64::from(n)
}
