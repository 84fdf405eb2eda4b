//! Zobrist keys: a 64-bit hash of everything that makes two positions the same for the
//! repetition rule (placement, side to move, castling rights, a legal en passant square).

use super::piece::Role;
use super::square::{Color, Square};

/// splitmix64: the key tables' generator, and the variants' mixer of pockets and checks
/// into a repetition key.
pub(crate) const fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct Keys {
    pieces: [[[u64; 64]; 6]; 2],
    castling: [u64; 64],
    en_passant: [u64; 8],
    black_to_move: u64,
}

const KEYS: Keys = {
    let mut state = 0x5EED_C0DE_CAFE_F00Du64;
    let mut pieces = [[[0u64; 64]; 6]; 2];
    let mut c = 0;
    while c < 2 {
        let mut r = 0;
        while r < 6 {
            let mut s = 0;
            while s < 64 {
                pieces[c][r][s] = splitmix(&mut state);
                s += 1;
            }
            r += 1;
        }
        c += 1;
    }
    let mut castling = [0u64; 64];
    let mut s = 0;
    while s < 64 {
        castling[s] = splitmix(&mut state);
        s += 1;
    }
    let mut en_passant = [0u64; 8];
    let mut f = 0;
    while f < 8 {
        en_passant[f] = splitmix(&mut state);
        f += 1;
    }
    let black_to_move = splitmix(&mut state);
    Keys {
        pieces,
        castling,
        en_passant,
        black_to_move,
    }
};

static TABLE: Keys = KEYS;

#[inline(always)]
pub(crate) fn piece(color: Color, role: Role, sq: Square) -> u64 {
    TABLE.pieces[color.index()][role.index()][sq.index()]
}

/// Key of a castling right, by the castling rook's square.
#[inline(always)]
pub(crate) fn castling(rook: Square) -> u64 {
    TABLE.castling[rook.index()]
}

#[inline(always)]
pub(crate) fn en_passant(sq: Square) -> u64 {
    TABLE.en_passant[sq.file().index()]
}

#[inline(always)]
pub(crate) fn black_to_move() -> u64 {
    TABLE.black_to_move
}
