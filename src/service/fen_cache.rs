//! A bounded cache of LegalMoves-by-FEN answers, keyed by the FEN text as sent and the
//! variant.
//!
//! Why: callers that validate moves statelessly send the same positions again and again
//! (openings, a game's current position before and after a look-up); the answer to a FEN
//! never changes, and computing it (parse, generate, the SAN of every move, encode) costs
//! far more than a hash look-up. A hit is answered on the async worker without the hop to
//! the CPU pool (a look-up is well under a microsecond); a miss is computed on the pool as
//! before, then stored. Only successful answers are stored.
//!
//! Bounded: about `capacity` entries (rounded up to a multiple of the 16 shards; 1-2 KB
//! each), in shards with their own lock;
//! a full shard drops one entry per insert, the oldest not used since it was last looked
//! at (CLOCK, O(1) amortised, so a stream of distinct FENs costs no scans).

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::rules::Variant;

use super::wire::EncodedLegalMoves;

const SHARDS: usize = 16;

struct Entry {
    answer: EncodedLegalMoves,
    /// Used since the eviction hand last passed it (CLOCK's second chance).
    referenced: bool,
}

/// One map per variant, so a look-up by `&str` needs no key to be built; `order` is the
/// insertion order the eviction hand walks.
#[derive(Default)]
struct Shard {
    maps: [HashMap<Arc<str>, Entry>; 2],
    order: VecDeque<(usize, Arc<str>)>,
}

impl Shard {
    /// Drops one entry: the oldest not used since the hand last passed it (CLOCK), in
    /// O(1) amortised time, so a stream of distinct FENs costs no scans. False if there
    /// was nothing to drop.
    fn evict_one(&mut self) -> bool {
        while let Some((v, key)) = self.order.pop_front() {
            match self.maps[v].get_mut(&key) {
                Some(entry) if entry.referenced => {
                    entry.referenced = false;
                    self.order.push_back((v, key));
                }
                Some(_) => {
                    self.maps[v].remove(&key);
                    return true;
                }
                None => {}
            }
        }
        false
    }
}

/// The cache. `capacity` 0 turns it off.
pub struct FenCache {
    shards: Box<[Mutex<Shard>]>,
    per_shard: usize,
    hasher: RandomState,
    hits: AtomicU64,
    misses: AtomicU64,
}

fn variant_index(variant: Variant) -> usize {
    match variant {
        Variant::Standard => 0,
        Variant::Chess960 => 1,
    }
}

impl FenCache {
    /// A cache of about `capacity` answers (0: no caching).
    pub fn new(capacity: usize) -> FenCache {
        let shards = if capacity == 0 { 0 } else { SHARDS };
        FenCache {
            shards: (0..shards).map(|_| Mutex::new(Shard::default())).collect(),
            per_shard: capacity.div_ceil(SHARDS),
            hasher: RandomState::new(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    fn shard(&self, fen: &str) -> Option<&Mutex<Shard>> {
        if self.shards.is_empty() {
            return None;
        }
        let i = (self.hasher.hash_one(fen) % self.shards.len() as u64) as usize;
        Some(&self.shards[i])
    }

    /// The stored answer for `fen` in `variant`, if any.
    pub fn get(&self, fen: &str, variant: Variant) -> Option<EncodedLegalMoves> {
        let shard = self.shard(fen)?;
        let found = shard.lock().ok().and_then(|mut shard| {
            shard.maps[variant_index(variant)].get_mut(fen).map(|e| {
                e.referenced = true;
                e.answer.clone()
            })
        });
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Stores the answer for `fen` in `variant`.
    pub fn insert(&self, fen: &str, variant: Variant, answer: EncodedLegalMoves) {
        let Some(shard) = self.shard(fen) else {
            return;
        };
        let Ok(mut shard) = shard.lock() else {
            return;
        };
        let v = variant_index(variant);
        if let Some(entry) = shard.maps[v].get_mut(fen) {
            entry.answer = answer; // two misses computed it at once
            return;
        }
        while shard.maps[0].len() + shard.maps[1].len() >= self.per_shard {
            if !shard.evict_one() {
                break;
            }
        }
        let key: Arc<str> = fen.into();
        shard.order.push_back((v, key.clone()));
        shard.maps[v].insert(
            key,
            Entry {
                answer,
                referenced: false,
            },
        );
    }

    /// Answers found and not found so far.
    pub fn hits_and_misses(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                s.lock()
                    .map_or(0, |s| s.maps.iter().map(HashMap::len).sum())
            })
            .sum()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Position;
    use crate::service::wire::position_legal_moves;

    #[test]
    fn stores_answers_per_variant_and_stays_bounded() {
        let cache = FenCache::new(64);
        let start = Position::new().to_fen();
        assert!(cache.get(&start, Variant::Standard).is_none());
        let answer = position_legal_moves(&Position::new());
        cache.insert(&start, Variant::Standard, answer.clone());
        assert_eq!(cache.get(&start, Variant::Standard), Some(answer));
        assert!(
            cache.get(&start, Variant::Chess960).is_none(),
            "the variant is part of the key"
        );
        for i in 0..1000 {
            let fen = format!("4k3/8/8/8/8/8/8/4K3 w - - 0 {}", i + 1);
            cache.insert(&fen, Variant::Standard, EncodedLegalMoves::default());
        }
        assert!(cache.len() <= 64, "{} entries", cache.len());
        assert_eq!(cache.hits_and_misses(), (1, 2));
    }

    #[test]
    fn an_entry_in_use_survives_a_stream_of_new_ones() {
        let cache = FenCache::new(SHARDS * 8);
        let hot = Position::new().to_fen();
        cache.insert(&hot, Variant::Standard, EncodedLegalMoves::default());
        for i in 0..10_000 {
            assert!(
                cache.get(&hot, Variant::Standard).is_some(),
                "evicted at {i}"
            );
            let fen = format!("4k3/8/8/8/8/8/8/4K3 w - - 0 {}", i + 1);
            cache.insert(&fen, Variant::Standard, EncodedLegalMoves::default());
        }
        assert!(cache.len() <= SHARDS * 8);
    }

    #[test]
    fn capacity_zero_stores_nothing() {
        let cache = FenCache::new(0);
        cache.insert("x", Variant::Standard, EncodedLegalMoves::default());
        assert!(cache.get("x", Variant::Standard).is_none());
        assert!(cache.is_empty());
    }
}
