//! The transposition table of the helpmate search: Zobrist key -> the most plies left with
//! which the position was already searched during the current run (one iterative
//! deepening), as in chasolver: a hit with at least as many plies left prunes, across
//! iterations too. That pruning is what lets a search over a small closed set of
//! positions finish, but on its own it is not a proof: the solver confirms every "no
//! mate" of such a search with an exact closure (`closure.rs`).
//!
//! Entries carry the run's generation and only entries of the current run count, so a new
//! run needs no clearing. Keys are the full 64-bit Zobrist key.

/// One slot: 16 bytes, four to a cache line.
#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    generation: u32,
    plies_left: u8,
}

const WAYS: usize = 4;

/// A fixed-size, 4-way set-associative table; allocated once per solver and reused.
pub(super) struct Table {
    entries: Vec<Entry>,
    mask: usize,
    generation: u32,
}

impl Table {
    /// A table of `2^log2` slots.
    pub(super) fn new(log2: u32) -> Table {
        let len = 1usize << log2;
        Table {
            entries: vec![Entry::default(); len],
            mask: (len / WAYS) - 1,
            generation: 1,
        }
    }

    /// Starts a new run: every older entry stops pruning.
    pub(super) fn new_run(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Wrapped after 2^32 runs: old tags could look current again.
            self.entries.fill(Entry::default());
            self.generation = 1;
        }
    }

    #[inline(always)]
    fn bucket(&self, key: u64) -> usize {
        ((key >> 32) as usize & self.mask) * WAYS
    }

    /// The plies left stored for `key` in this run, if any.
    #[inline]
    pub(super) fn probe(&self, key: u64) -> Option<u8> {
        let b = self.bucket(key);
        self.entries[b..b + WAYS]
            .iter()
            .find(|e| e.key == key && e.generation == self.generation)
            .map(|e| e.plies_left)
    }

    /// Records that `key` is being searched with `plies_left`. Replaces, in order: the
    /// same key, an entry of an older iteration, the entry with the fewest plies left.
    #[inline]
    pub(super) fn store(&mut self, key: u64, plies_left: u8) {
        let generation = self.generation;
        let b = self.bucket(key);
        let bucket = &mut self.entries[b..b + WAYS];
        let mut victim = 0;
        let mut victim_score = u32::MAX;
        for (i, e) in bucket.iter().enumerate() {
            if e.key == key && e.generation == generation {
                victim = i;
                break;
            }
            let score = if e.generation != generation {
                0
            } else {
                1 + u32::from(e.plies_left)
            };
            if score < victim_score {
                victim = i;
                victim_score = score;
            }
        }
        bucket[victim] = Entry {
            key,
            generation,
            plies_left,
        };
    }
}
