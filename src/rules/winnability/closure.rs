//! The exact proof behind every "no mate" of the iterative-deepening search: the set of
//! positions reachable from the root, expanded breadth first, each once, stopping only at
//! positions where White lacks mating material or nobody can move. If that set closes
//! without a mate of Black, no helpmate exists. A set too large to close is no proof, and
//! neither is a reachable mate the search missed (the phases go on then).
//!
//! Positions are told apart by a 128-bit fingerprint (the Zobrist key and an independent
//! hash of the placement, side to move, castling rights and en passant square), so a
//! closure of millions of positions needs 16 bytes for each and only one layer at a time.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::super::position::Position;
use super::material::{black_is_mated, insufficient_white_material};
use super::probes::Meter;

/// What the closure showed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Closure {
    /// Every reachable position was seen; none is a mate of Black.
    NoMate,
    /// A mate of Black is reachable.
    MateReachable,
    /// More than the cap of positions, or the caller's budget ran out.
    TooLarge,
}

/// Passes the fingerprint's first word through: it is already uniformly spread.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64;
    }
}

#[inline(always)]
fn mix(h: u64, x: u64) -> u64 {
    let v = (h ^ x).wrapping_mul(0x9FB2_1C65_1E98_DF25);
    v ^ (v >> 29)
}

/// The Zobrist key in the low word; an independent multiply-xorshift hash in the high word.
#[inline]
fn fingerprint(pos: &Position) -> u128 {
    let mut h = 0x243F_6A88_85A3_08D3u64;
    for bb in pos.by_color.iter().chain(pos.by_role.iter()) {
        h = mix(h, bb.0);
    }
    h = mix(h, pos.castling.0);
    h = mix(
        h,
        pos.ep_square.map_or(64, |s| s as u64) | ((pos.turn as u64) << 8),
    );
    (u128::from(h) << 64) | u128::from(pos.zobrist())
}

/// Expands at most `cap` positions reachable from `root`.
pub(super) fn close(root: &Position, cap: usize, meter: &mut Meter<'_>) -> Closure {
    let mut seen: HashSet<u128, BuildHasherDefault<PassThrough>> = HashSet::default();
    seen.insert(fingerprint(root));
    let mut layer = vec![*root];
    let mut next_layer = Vec::new();
    while !layer.is_empty() {
        for pos in &layer {
            if insufficient_white_material(pos) {
                continue;
            }
            let moves = pos.legal_moves();
            if moves.is_empty() {
                if black_is_mated(pos, false) {
                    return Closure::MateReachable;
                }
                continue;
            }
            for &m in moves.iter() {
                if !meter.charge() {
                    return Closure::TooLarge;
                }
                let mut child = *pos;
                child.play_trusted(m);
                if seen.insert(fingerprint(&child)) {
                    if seen.len() > cap {
                        return Closure::TooLarge;
                    }
                    next_layer.push(child);
                }
            }
        }
        layer.clear();
        std::mem::swap(&mut layer, &mut next_layer);
    }
    Closure::NoMate
}
