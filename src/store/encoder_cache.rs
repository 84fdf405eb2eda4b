//! The encoding of each recently saved game's history, kept between saves: a move is
//! encoded as its index among the legal moves, so encoding a whole history costs a move
//! generation per ply, and a save that re-encoded it every time spent a sixth of a
//! replica's CPU per Play there (a profile of `benches/postgres.sh`). With the cache a save
//! encodes only the moves since the last one. Both stores use it.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, MutexGuard};

use crate::lifecycle::Match;
use crate::rules::GameRules;

use super::codec::{self, RecordEncoder};
use super::{GameMeta, LoadedGame, Start, StoreError};

/// Encodes `game`, reusing `cached` (the encoding of its earlier history) when it
/// fits, and returns the record and the encoder to cache. The events after version
/// `since` are the change being written: past the history limit it is refused unless
/// it ends the game or only offers or answers a draw (see
/// [`codec::check_history_room`]).
pub(super) fn encode(
    meta: &GameMeta,
    game: &Match,
    cached: Option<CachedEncoder>,
    since: u64,
) -> Result<(Vec<u8>, CachedEncoder), StoreError> {
    let internal = |e: codec::CodecError| codec::store_error(&meta.id, e);
    let mut cached = match cached {
        Some(c)
            if c.variant == meta.variant
                && c.start == meta.start
                && c.encoder.start() == game.game().start() =>
        {
            c
        }
        _ => {
            codec::check_start(meta, game.game()).map_err(internal)?;
            CachedEncoder {
                variant: meta.variant,
                start: meta.start.clone(),
                version: 0,
                encoder: RecordEncoder::new(game),
            }
        }
    };
    cached.encoder.sync(game).map_err(internal)?;
    cached.version = game.version();
    let record = codec::encode_record(meta, &cached.encoder).map_err(internal)?;
    codec::check_history_room(record.len(), game, since).map_err(internal)?;
    Ok((record, cached))
}

pub(super) struct CachedEncoder {
    variant: GameRules,
    start: Start,
    /// The version of the stored record this is the encoding of.
    pub(super) version: u64,
    encoder: RecordEncoder,
}

impl CachedEncoder {
    /// A decoded record as the game it holds and its cache entry (without copying the
    /// game: a load needs both).
    pub(super) fn split(decoded: codec::Decoded) -> (LoadedGame, CachedEncoder) {
        let meta = &decoded.loaded.meta;
        let cached = CachedEncoder {
            variant: meta.variant,
            start: meta.start.clone(),
            version: decoded.loaded.game.version(),
            encoder: decoded.encoder,
        };
        (decoded.loaded, cached)
    }
}

const SHARDS: usize = 16;

/// A bounded map from game id to its encoded moves, in shards to keep writers of
/// different games apart. Each shard keeps two generations: new entries go to the young
/// one; when it is full it becomes the old one and the previous old one is dropped, so
/// recently used games stay (an approximate LRU without per-access bookkeeping). An entry
/// is taken out while a save uses it; a miss only costs a full re-encode.
pub(super) struct EncoderCache {
    shards: Vec<Mutex<Generations>>,
    per_generation: usize,
}

#[derive(Default)]
struct Generations {
    young: HashMap<String, CachedEncoder>,
    old: HashMap<String, CachedEncoder>,
}

impl EncoderCache {
    pub(super) fn new(capacity: usize) -> EncoderCache {
        let per_generation = capacity.div_ceil(2 * SHARDS);
        EncoderCache {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Generations::default()))
                .collect(),
            per_generation,
        }
    }

    fn shard(&self, id: &str) -> MutexGuard<'_, Generations> {
        let mut h = DefaultHasher::new();
        id.hash(&mut h);
        let i = (h.finish() % SHARDS as u64) as usize;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn take(&self, id: &str) -> Option<CachedEncoder> {
        if self.per_generation == 0 {
            return None;
        }
        let mut g = self.shard(id);
        g.young.remove(id).or_else(|| g.old.remove(id))
    }

    /// The version of game `id`'s cached encoding, if it is cached.
    pub(super) fn version(&self, id: &str) -> Option<u64> {
        if self.per_generation == 0 {
            return None;
        }
        let g = self.shard(id);
        g.young.get(id).or_else(|| g.old.get(id)).map(|c| c.version)
    }

    /// Forgets every encoding: after the change feed reconnected, nothing this replica
    /// remembers of a game is trusted (an encoding is still checked against the game it
    /// encodes, so this only keeps the cache from holding what is no longer stored).
    pub(super) fn clear(&self) {
        for shard in &self.shards {
            let mut g = shard.lock().unwrap_or_else(|p| p.into_inner());
            g.young.clear();
            g.old.clear();
        }
    }

    pub(super) fn put(&self, id: &str, enc: CachedEncoder) {
        if self.per_generation == 0 {
            return;
        }
        let mut g = self.shard(id);
        g.old.remove(id);
        g.young.insert(id.to_string(), enc);
        if g.young.len() > self.per_generation {
            g.old = std::mem::take(&mut g.young);
        }
    }
}
