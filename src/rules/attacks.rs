//! Attack sets: leaper tables, rays between squares, and sliding attacks through one of
//! two lookup back-ends (`Magic`, portable; `Pext`, BMI2) picked once at run time.

use super::bitboard::Bitboard;
use super::square::{Color, Square};

mod generated {
    /// One square's entry for a sliding piece: relevant-occupancy mask, magic factor,
    /// shift and offset into the shared attack table.
    pub(crate) struct SliderEntry {
        pub mask: u64,
        pub magic: u64,
        pub shift: u32,
        pub offset: u32,
    }
    include!(concat!(env!("OUT_DIR"), "/slider_tables.rs"));

    // SAFETY (both): the build script writes exactly SLIDER_TABLE_LEN u64 values in the
    // target's byte order; transmuting the byte array yields a properly aligned [u64; N].
    pub(crate) static MAGIC_ATTACKS: [u64; SLIDER_TABLE_LEN] = unsafe {
        std::mem::transmute(*include_bytes!(concat!(
            env!("OUT_DIR"),
            "/magic_attacks.bin"
        )))
    };
    pub(crate) static PEXT_ATTACKS: [u64; SLIDER_TABLE_LEN] = unsafe {
        std::mem::transmute(*include_bytes!(concat!(
            env!("OUT_DIR"),
            "/pext_attacks.bin"
        )))
    };
}

use generated::{BISHOP_ENTRIES, MAGIC_ATTACKS, PEXT_ATTACKS, ROOK_ENTRIES};

const fn leaper_table(deltas: &[(i8, i8)]) -> [Bitboard; 64] {
    let mut table = [Bitboard::EMPTY; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
        let mut bits = 0u64;
        let mut i = 0;
        while i < deltas.len() {
            let (nf, nr) = (f + deltas[i].0, r + deltas[i].1);
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                bits |= 1 << (nr * 8 + nf);
            }
            i += 1;
        }
        table[sq] = Bitboard(bits);
        sq += 1;
    }
    table
}

static KNIGHT: [Bitboard; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
static KING: [Bitboard; 64] = leaper_table(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);
static PAWN: [[Bitboard; 64]; 2] = [
    leaper_table(&[(-1, 1), (1, 1)]),
    leaper_table(&[(-1, -1), (1, -1)]),
];

const DIRECTIONS: [(i8, i8); 8] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
];

const fn ray_tables() -> ([[Bitboard; 64]; 64], [[Bitboard; 64]; 64]) {
    let mut between = [[Bitboard::EMPTY; 64]; 64];
    let mut line = [[Bitboard::EMPTY; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let (f, r) = ((a % 8) as i8, (a / 8) as i8);
        let mut d = 0;
        while d < 8 {
            let (df, dr) = DIRECTIONS[d];
            // The whole line through `a` in this direction (both ways), `a` included.
            let mut full = 1u64 << a;
            let mut k = 1;
            while k < 8 {
                let (nf, nr) = (f + df * k, r + dr * k);
                if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                    full |= 1 << (nr * 8 + nf);
                }
                let (pf, pr) = (f - df * k, r - dr * k);
                if pf >= 0 && pf < 8 && pr >= 0 && pr < 8 {
                    full |= 1 << (pr * 8 + pf);
                }
                k += 1;
            }
            let mut walked = 0u64;
            let mut k = 1;
            while k < 8 {
                let (nf, nr) = (f + df * k, r + dr * k);
                if nf < 0 || nf >= 8 || nr < 0 || nr >= 8 {
                    break;
                }
                let b = (nr * 8 + nf) as usize;
                between[a][b] = Bitboard(walked);
                line[a][b] = Bitboard(full);
                walked |= 1 << b;
                k += 1;
            }
            d += 1;
        }
        a += 1;
    }
    (between, line)
}

static RAYS: ([[Bitboard; 64]; 64], [[Bitboard; 64]; 64]) = ray_tables();

/// Attacks of a slider moving in `dirs` from each square on an empty board.
const fn empty_board_table(dirs: [(i8, i8); 4]) -> [Bitboard; 64] {
    let mut table = [Bitboard::EMPTY; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i8, (sq / 8) as i8);
        let mut bits = 0u64;
        let mut d = 0;
        while d < 4 {
            let (df, dr) = dirs[d];
            let (mut nf, mut nr) = (f + df, r + dr);
            while nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                bits |= 1 << (nr * 8 + nf);
                nf += df;
                nr += dr;
            }
            d += 1;
        }
        table[sq] = Bitboard(bits);
        sq += 1;
    }
    table
}

static ROOK_RAYS: [Bitboard; 64] = empty_board_table([(1, 0), (-1, 0), (0, 1), (0, -1)]);
static BISHOP_RAYS: [Bitboard; 64] = empty_board_table([(1, 1), (1, -1), (-1, 1), (-1, -1)]);

/// The squares a knight on `sq` attacks.
#[inline(always)]
pub fn knight_attacks(sq: Square) -> Bitboard {
    KNIGHT[sq.index()]
}

/// The squares a king on `sq` attacks.
#[inline(always)]
pub fn king_attacks(sq: Square) -> Bitboard {
    KING[sq.index()]
}

/// The squares a pawn of `color` on `sq` attacks.
#[inline(always)]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    PAWN[color.index()][sq.index()]
}

/// Squares strictly between `a` and `b` when they share a rank, file or diagonal; else empty.
#[inline(always)]
pub fn between(a: Square, b: Square) -> Bitboard {
    RAYS.0[a.index()][b.index()]
}

/// The whole line (edge to edge) through `a` and `b` when they are aligned; else empty.
#[inline(always)]
pub fn line(a: Square, b: Square) -> Bitboard {
    RAYS.1[a.index()][b.index()]
}

/// Rook attacks from `sq` on an empty board: the only squares a rook or queen can check
/// or pin a king on `sq` from.
#[inline(always)]
pub fn rook_rays(sq: Square) -> Bitboard {
    ROOK_RAYS[sq.index()]
}

/// Bishop attacks from `sq` on an empty board (see [`rook_rays`]).
#[inline(always)]
pub fn bishop_rays(sq: Square) -> Bitboard {
    BISHOP_RAYS[sq.index()]
}

/// Whether `a`, `b` and `c` lie on one line.
#[inline(always)]
pub fn aligned(a: Square, b: Square, c: Square) -> bool {
    line(a, b).contains(c)
}

/// A sliding-attack back-end. The move generator is generic over it so the BMI2 build of
/// the hot path inlines `pext` while the portable one uses magic multiplication.
pub(crate) trait Sliders: Copy {
    fn rook(sq: Square, occupied: Bitboard) -> Bitboard;
    fn bishop(sq: Square, occupied: Bitboard) -> Bitboard;
    #[inline(always)]
    fn queen(sq: Square, occupied: Bitboard) -> Bitboard {
        Self::rook(sq, occupied) | Self::bishop(sq, occupied)
    }
}

/// Portable "fancy magic" lookups.
#[derive(Clone, Copy)]
pub(crate) struct Magic;

impl Sliders for Magic {
    #[inline(always)]
    fn rook(sq: Square, occupied: Bitboard) -> Bitboard {
        let e = &ROOK_ENTRIES[sq.index()];
        let idx = ((occupied.0 & e.mask).wrapping_mul(e.magic) >> e.shift) as usize;
        Bitboard(MAGIC_ATTACKS[e.offset as usize + idx])
    }

    #[inline(always)]
    fn bishop(sq: Square, occupied: Bitboard) -> Bitboard {
        let e = &BISHOP_ENTRIES[sq.index()];
        let idx = ((occupied.0 & e.mask).wrapping_mul(e.magic) >> e.shift) as usize;
        Bitboard(MAGIC_ATTACKS[e.offset as usize + idx])
    }
}

/// BMI2 `pext` lookups. Only call these from code compiled with the `bmi2` target
/// feature, after [`has_bmi2`] said yes.
#[derive(Clone, Copy)]
pub(crate) struct Pext;

#[cfg(target_arch = "x86_64")]
impl Sliders for Pext {
    #[inline(always)]
    fn rook(sq: Square, occupied: Bitboard) -> Bitboard {
        let e = &ROOK_ENTRIES[sq.index()];
        // SAFETY: reached only through entry points that checked `has_bmi2()`.
        let idx = unsafe { std::arch::x86_64::_pext_u64(occupied.0, e.mask) } as usize;
        Bitboard(PEXT_ATTACKS[e.offset as usize + idx])
    }

    #[inline(always)]
    fn bishop(sq: Square, occupied: Bitboard) -> Bitboard {
        let e = &BISHOP_ENTRIES[sq.index()];
        // SAFETY: as above.
        let idx = unsafe { std::arch::x86_64::_pext_u64(occupied.0, e.mask) } as usize;
        Bitboard(PEXT_ATTACKS[e.offset as usize + idx])
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Sliders for Pext {
    #[inline(always)]
    fn rook(sq: Square, occupied: Bitboard) -> Bitboard {
        Magic::rook(sq, occupied)
    }
    #[inline(always)]
    fn bishop(sq: Square, occupied: Bitboard) -> Bitboard {
        Magic::bishop(sq, occupied)
    }
}

/// Whether this CPU has a fast `pext` (BMI2), and with it the bit instructions every BMI2
/// CPU also has (BMI1's `tzcnt`/`blsr`, `popcnt`), which perft's BMI2 path compiles in.
/// Detected once; `CHESS_NO_BMI2=1` forces the portable path (used by the tests to cover
/// both back-ends).
#[inline]
pub fn has_bmi2() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    static STATE: AtomicU8 = AtomicU8::new(0);
    match STATE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            #[cfg(target_arch = "x86_64")]
            let yes = std::is_x86_feature_detected!("bmi2")
                && std::is_x86_feature_detected!("bmi1")
                && std::is_x86_feature_detected!("popcnt")
                && std::env::var_os("CHESS_NO_BMI2").is_none();
            #[cfg(not(target_arch = "x86_64"))]
            let yes = false;
            STATE.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
    }
}

/// Rook attacks from `sq` given the occupied squares (portable lookup).
#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    Magic::rook(sq, occupied)
}

/// Bishop attacks from `sq` given the occupied squares (portable lookup).
#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    Magic::bishop(sq, occupied)
}

/// Queen attacks from `sq` given the occupied squares.
#[inline]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow(sq: Square, occ: Bitboard, dirs: &[(i8, i8)]) -> Bitboard {
        let mut out = Bitboard::EMPTY;
        for &(df, dr) in dirs {
            let (mut f, mut r) = (sq.file() as i8 + df, sq.rank() as i8 + dr);
            while (0..8).contains(&f) && (0..8).contains(&r) {
                let s = Square::new((r * 8 + f) as u8);
                out |= s;
                if occ.contains(s) {
                    break;
                }
                f += df;
                r += dr;
            }
        }
        out
    }

    #[test]
    fn both_backends_agree_with_ray_walking() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for sq in Square::ALL {
            for _ in 0..200 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let occ = Bitboard(x & x.rotate_left(17));
                let rook = slow(sq, occ, &[(1, 0), (-1, 0), (0, 1), (0, -1)]);
                let bishop = slow(sq, occ, &[(1, 1), (1, -1), (-1, 1), (-1, -1)]);
                assert_eq!(Magic::rook(sq, occ), rook);
                assert_eq!(Magic::bishop(sq, occ), bishop);
                if has_bmi2() {
                    assert_eq!(Pext::rook(sq, occ), rook);
                    assert_eq!(Pext::bishop(sq, occ), bishop);
                }
            }
        }
    }

    #[test]
    fn rays() {
        assert_eq!(
            between(Square::A1, Square::D4),
            Bitboard::EMPTY | Square::B2 | Square::C3
        );
        assert_eq!(between(Square::A1, Square::B3), Bitboard::EMPTY);
        assert!(line(Square::A1, Square::H8).contains(Square::E5));
        assert!(line(Square::A1, Square::B3).is_empty());
        for sq in Square::ALL {
            assert_eq!(rook_rays(sq), Magic::rook(sq, Bitboard::EMPTY));
            assert_eq!(bishop_rays(sq), Magic::bishop(sq, Bitboard::EMPTY));
        }
        assert_eq!(knight_attacks(Square::A1).count(), 2);
        assert_eq!(
            pawn_attacks(Color::White, Square::E2),
            Bitboard::EMPTY | Square::D3 | Square::F3
        );
    }
}
