//! Exact sets of positions (placement, side to move, castling rights, en passant square),
//! hashed by their Zobrist key: the probes' visited sets must never merge two positions.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use super::super::position::Position;

/// A position compared by repetition identity (clocks ignored), hashed by its key.
#[derive(Clone, Copy)]
struct Identity(Position);

impl PartialEq for Identity {
    fn eq(&self, other: &Identity) -> bool {
        self.0.same_repetition_identity(&other.0)
    }
}

impl Eq for Identity {}

impl Hash for Identity {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.zobrist());
    }
}

/// Passes the Zobrist key through: it is already uniformly spread.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A set of positions by repetition identity.
#[derive(Default)]
pub(super) struct IdentitySet(HashSet<Identity, BuildHasherDefault<KeyHasher>>);

impl IdentitySet {
    /// Adds `pos`; false if it was already there.
    pub(super) fn insert(&mut self, pos: &Position) -> bool {
        self.0.insert(Identity(*pos))
    }

    /// Whether `pos` is in the set.
    pub(super) fn contains(&self, pos: &Position) -> bool {
        self.0.contains(&Identity(*pos))
    }

    /// How many positions the set holds.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}
