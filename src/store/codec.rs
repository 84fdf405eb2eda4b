//! The stored record of one game: a versioned, sectioned, checksummed byte string holding
//! the start position, the creation time and the moves, each move as its index in the
//! position's [`Position::legal_moves_sorted`] order written with a truncated binary code.
//! `docs/STORAGE.md` gives the exact byte layout.
//!
//! Decoding replays every move through the rules (the game must still be going and the
//! move is taken from the rules' legal list of the position); a record that fails
//! its checksum, its framing or its replay is a [`CodecError`], which the store turns into
//! `StoreError::DataLoss` for that game alone.

use crate::rules::chess960::{self, CHESS960_POSITIONS};
use crate::rules::{Game, Move, Position, Variant};

use super::{GameMeta, LoadedGame, Start};

/// The record format this build writes, and the newest it reads.
pub const FORMAT_VERSION: u8 = 1;

/// Records larger than this are refused when written. A 600-ply game takes about 500
/// bytes; the limit keeps every record far below sled's blob threshold (about 128 KiB),
/// so sled never writes a record to a separate blob file.
pub const MAX_RECORD_LEN: usize = 64 * 1024;

/// Section tags. Tags `0x01..=0x7F` are *required*: a reader that does not know one must
/// refuse the record. Tags `0x80..=0xFF` are *optional*: an older reader skips them.
pub mod tag {
    /// Variant, creation time, start position. Required, first.
    pub const GAME: u8 = 0x01;
    /// Ply count and the packed move indexes. Required.
    pub const MOVES: u8 = 0x02;
    /// The first optional tag: anything at or above it may be skipped by a reader that
    /// does not know it.
    pub const FIRST_OPTIONAL: u8 = 0x80;
}

const VARIANT_STANDARD: u8 = 0;
const VARIANT_CHESS960: u8 = 1;
const START_STANDARD: u8 = 0;
const START_CHESS960: u8 = 1;
const START_FEN: u8 = 2;
const CRC_LEN: usize = 4;

/// Why a record could not be written or read. Every decoding variant means the stored
/// bytes cannot be trusted: the store answers DATA_LOSS for that game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    #[error("record is {len} bytes, too short to hold a version byte and a checksum")]
    TooShort { len: usize },
    #[error(
        "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the record's bytes were damaged or belong to another game id"
    )]
    Checksum { stored: u32, computed: u32 },
    #[error(
        "record format version {found} is newer than this build reads (up to {FORMAT_VERSION}): run a newer build of the service"
    )]
    NewerVersion { found: u8 },
    #[error("record format version 0 does not exist")]
    ZeroVersion,
    #[error("section framing is broken at byte {offset}: {what}")]
    Framing { offset: usize, what: &'static str },
    #[error(
        "required section {tag:#04x} is not known to this build (format {FORMAT_VERSION}): run a newer build of the service"
    )]
    UnknownRequiredSection { tag: u8 },
    #[error("section {tag:#04x} appears out of order or twice")]
    SectionOrder { tag: u8 },
    #[error("required section {name} is missing")]
    MissingSection { name: &'static str },
    #[error("the game section is malformed: {what}")]
    BadGameSection { what: String },
    #[error("the moves section is malformed: {what}")]
    BadMovesSection { what: String },
    #[error("replay failed at ply {ply}: {what}")]
    Replay { ply: usize, what: String },
    #[error(
        "cannot encode: the game's start position is not the one its metadata names ({start:?})"
    )]
    StartMismatch { start: Start },
    #[error("cannot encode: the metadata's start is invalid: {what}")]
    BadStart { what: String },
    #[error("cannot encode: move {ply} ({mv}) is not legal in the position before it")]
    NotLegal { ply: usize, mv: String },
    #[error(
        "cannot encode: the record would be {len} bytes, above the {MAX_RECORD_LEN}-byte limit"
    )]
    TooLarge { len: usize },
}

// ---- varints -----------------------------------------------------------------------------

/// Appends `v` as an unsigned LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7F) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an unsigned LEB128 varint at `*pos`, advancing it. Refuses overlong encodings,
/// so every value has exactly one spelling.
fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for i in 0..10 {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        let low = u64::from(b & 0x7F);
        if i == 9 && b > 1 {
            return None; // more than 64 bits
        }
        v |= low << (7 * i);
        if b & 0x80 == 0 {
            if i > 0 && b == 0 {
                return None; // overlong: a trailing zero group
            }
            return Some(v);
        }
    }
    None
}

// ---- bits ---------------------------------------------------------------------------------

/// An append-only bit string, most significant bit of each byte first. Bits past the end
/// in the last byte are always zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BitWriter {
    bytes: Vec<u8>,
    len: u64,
}

impl BitWriter {
    pub fn new() -> BitWriter {
        BitWriter::default()
    }

    /// Number of bits written.
    pub fn bit_len(&self) -> u64 {
        self.len
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Appends the low `width` bits of `value`, most significant first.
    pub fn push(&mut self, value: u32, width: u32) {
        for i in (0..width).rev() {
            let bit = (value >> i) & 1;
            let offset = (self.len % 8) as u32;
            if offset == 0 {
                self.bytes.push(0);
            }
            if bit == 1
                && let Some(last) = self.bytes.last_mut()
            {
                *last |= 0x80 >> offset;
            }
            self.len += 1;
        }
    }

    /// Cuts the string back to its first `len` bits (no-op if it is not longer).
    pub fn truncate(&mut self, len: u64) {
        if len >= self.len {
            return;
        }
        let byte_len = len.div_ceil(8) as usize;
        self.bytes.truncate(byte_len);
        let used = (len % 8) as u32;
        if used != 0
            && let Some(last) = self.bytes.last_mut()
        {
            *last &= !(0xFFu8 >> used);
        }
        self.len = len;
    }
}

/// Reads a bit string written by [`BitWriter`].
struct BitReader<'a> {
    bytes: &'a [u8],
    pos: u64,
}

impl BitReader<'_> {
    fn read(&mut self, width: u32) -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..width {
            let byte = *self.bytes.get((self.pos / 8) as usize)?;
            let bit = (byte >> (7 - (self.pos % 8) as u32)) & 1;
            v = (v << 1) | u32::from(bit);
            self.pos += 1;
        }
        Some(v)
    }
}

// ---- one move -----------------------------------------------------------------------------

/// `(k, u)` of the truncated binary code for `n` symbols: the first `u` symbols take `k`
/// bits, the others `k + 1`. The optimal prefix code when all `n` are equally likely.
#[inline]
fn truncated_binary(n: u32) -> (u32, u32) {
    let k = 31 - n.leading_zeros();
    let u = (1u32 << (k + 1)) - n;
    (k, u)
}

/// Writes index `r` of `n` choices. A forced move (`n == 1`) takes no bits.
#[inline]
pub fn put_index(bits: &mut BitWriter, r: u32, n: u32) {
    debug_assert!(r < n);
    if n <= 1 {
        return;
    }
    let (k, u) = truncated_binary(n);
    if r < u {
        bits.push(r, k);
    } else {
        bits.push(r + u, k + 1);
    }
}

/// Reads an index of `n` choices; `None` if the bits run out. Every bit pattern decodes
/// to an index below `n`.
#[inline]
fn get_index(bits: &mut BitReader<'_>, n: u32) -> Option<u32> {
    if n <= 1 {
        return Some(0);
    }
    let (k, u) = truncated_binary(n);
    let v = bits.read(k)?;
    if v < u {
        return Some(v);
    }
    let v = (v << 1) | bits.read(1)?;
    Some(v - u)
}

// ---- the moves, incrementally ------------------------------------------------------------

/// The encoded moves of one game, kept so that a save after one more move (or an undo)
/// encodes only what changed. It is a pure cache: [`MoveEncoder::sync`] checks the game's
/// start and move prefix against what it holds and re-encodes whatever differs.
#[derive(Clone, Debug)]
pub struct MoveEncoder {
    start: Position,
    moves: Vec<Move>,
    /// `ends[i]` is the bit length after move `i`.
    ends: Vec<u64>,
    bits: BitWriter,
}

impl MoveEncoder {
    pub fn new(start: Position) -> MoveEncoder {
        MoveEncoder {
            start,
            moves: Vec::new(),
            ends: Vec::new(),
            bits: BitWriter::new(),
        }
    }

    /// The start position the moves are indexed from.
    pub fn start(&self) -> &Position {
        &self.start
    }

    /// Moves encoded.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    pub fn bits(&self) -> &BitWriter {
        &self.bits
    }

    /// Brings the encoding in line with `game`: keeps the common prefix, encodes the
    /// rest. Returns how many moves had to be encoded.
    pub fn sync(&mut self, game: &Game) -> Result<usize, CodecError> {
        if *game.start() != self.start {
            *self = MoveEncoder::new(*game.start());
        }
        let moves = game.moves();
        let common = self
            .moves
            .iter()
            .zip(moves)
            .take_while(|(a, b)| a == b)
            .count();
        self.moves.truncate(common);
        self.ends.truncate(common);
        self.bits.truncate(if common == 0 {
            0
        } else {
            self.ends[common - 1]
        });
        for (ply, &m) in moves.iter().enumerate().skip(common) {
            let pos = game.position_at(ply).ok_or_else(|| CodecError::NotLegal {
                ply,
                mv: m.to_string(),
            })?;
            let legal = pos.legal_moves();
            if !legal.contains(&m) {
                return Err(CodecError::NotLegal {
                    ply,
                    mv: pos.uci(m),
                });
            }
            // The move's index in the sorted order, without sorting: moves before it.
            let key = order_key(&m);
            let r = legal.iter().filter(|x| order_key(x) < key).count();
            put_index(&mut self.bits, r as u32, legal.len() as u32);
            self.moves.push(m);
            self.ends.push(self.bits.bit_len());
        }
        Ok(moves.len() - common)
    }
}

/// The order of [`Position::legal_moves_sorted`] — by (from, to, role, kind), the
/// derived order of [`Move`] — as one integer, so the codec can rank and select moves
/// without sorting whole lists. The fields are `repr(u8)` enums declared in that order.
#[inline(always)]
pub fn order_key(m: &Move) -> u32 {
    (m.from as u32) << 24 | (m.to as u32) << 16 | (m.role as u32) << 8 | m.kind as u32
}

// ---- the start ----------------------------------------------------------------------------

/// The position a game's metadata names as its start.
pub fn start_position(variant: Variant, start: &Start) -> Result<Position, String> {
    match start {
        Start::Standard => chess960::start_position(518, variant).map_err(|e| e.to_string()),
        Start::Chess960(n) => chess960::start_position(*n, variant).map_err(|e| e.to_string()),
        Start::Fen(fen) => {
            Position::from_fen(fen, variant).map_err(|e| format!("FEN '{fen}': {e}"))
        }
    }
}

// ---- records ------------------------------------------------------------------------------

/// The record checksum: CRC-32 (IEEE) of the varint length of `id`, `id`'s bytes and
/// the record body (every byte before the checksum). Public for tools and tests that
/// build records by hand.
pub fn checksum(id: &str, body: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    let mut prefix = Vec::with_capacity(10);
    put_varint(&mut prefix, id.len() as u64);
    h.update(&prefix);
    h.update(id.as_bytes());
    h.update(body);
    h.finalize()
}

fn put_section(out: &mut Vec<u8>, tag: u8, payload: &[u8]) {
    out.push(tag);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// Builds the record of a game whose moves are already in `moves` (kept in sync with
/// `game` by the caller). The checksum covers the game id, so a record copied under
/// another key fails to load.
pub fn encode_with(meta: &GameMeta, moves: &MoveEncoder) -> Result<Vec<u8>, CodecError> {
    let mut game_sec = Vec::with_capacity(16);
    game_sec.push(match meta.variant {
        Variant::Standard => VARIANT_STANDARD,
        Variant::Chess960 => VARIANT_CHESS960,
    });
    put_varint(&mut game_sec, meta.created_unix_ms);
    match &meta.start {
        Start::Standard => game_sec.push(START_STANDARD),
        Start::Chess960(n) => {
            let n16 = u16::try_from(*n)
                .ok()
                .filter(|&v| u32::from(v) < CHESS960_POSITIONS)
                .ok_or_else(|| CodecError::BadStart {
                    what: format!("Chess960 number {n} is not in 0..=959"),
                })?;
            game_sec.push(START_CHESS960);
            game_sec.extend_from_slice(&n16.to_le_bytes());
        }
        Start::Fen(fen) => {
            game_sec.push(START_FEN);
            game_sec.extend_from_slice(fen.as_bytes());
        }
    }
    let bits = moves.bits();
    let mut moves_sec = Vec::with_capacity(bits.as_bytes().len() + 3);
    put_varint(&mut moves_sec, moves.ply() as u64);
    moves_sec.extend_from_slice(bits.as_bytes());

    let mut out = Vec::with_capacity(game_sec.len() + moves_sec.len() + 12);
    out.push(FORMAT_VERSION);
    put_section(&mut out, tag::GAME, &game_sec);
    put_section(&mut out, tag::MOVES, &moves_sec);
    let sum = checksum(&meta.id, &out);
    out.extend_from_slice(&sum.to_le_bytes());
    if out.len() > MAX_RECORD_LEN {
        return Err(CodecError::TooLarge { len: out.len() });
    }
    Ok(out)
}

/// Checks that `game` starts where `meta` says. Needed before encoding: a record whose
/// moves were indexed from another start would replay into a different game.
pub fn check_start(meta: &GameMeta, game: &Game) -> Result<(), CodecError> {
    let start =
        start_position(meta.variant, &meta.start).map_err(|what| CodecError::BadStart { what })?;
    if start != *game.start() {
        return Err(CodecError::StartMismatch {
            start: meta.start.clone(),
        });
    }
    Ok(())
}

/// Encodes a game from scratch.
pub fn encode(meta: &GameMeta, game: &Game) -> Result<Vec<u8>, CodecError> {
    check_start(meta, game)?;
    let mut moves = MoveEncoder::new(*game.start());
    moves.sync(game)?;
    encode_with(meta, &moves)
}

/// A decoded record: the replayed game and, to seed the store's encoder cache, its
/// encoded moves.
pub struct Decoded {
    pub loaded: LoadedGame,
    pub encoder: MoveEncoder,
    /// Optional sections this build skipped (tags), for logging.
    pub skipped_sections: Vec<u8>,
}

/// Reads and replays the record stored under `id`.
pub fn decode(id: &str, record: &[u8]) -> Result<Decoded, CodecError> {
    if record.len() < 1 + CRC_LEN {
        return Err(CodecError::TooShort { len: record.len() });
    }
    let (body, sum) = record.split_at(record.len() - CRC_LEN);
    let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
    let computed = checksum(id, body);
    if stored != computed {
        return Err(CodecError::Checksum { stored, computed });
    }
    match body[0] {
        0 => return Err(CodecError::ZeroVersion),
        v if v > FORMAT_VERSION => return Err(CodecError::NewerVersion { found: v }),
        _ => {}
    }

    let mut game_sec: Option<&[u8]> = None;
    let mut moves_sec: Option<&[u8]> = None;
    let mut skipped = Vec::new();
    let mut last_tag = 0u8;
    let mut pos = 1;
    while pos < body.len() {
        let start = pos;
        let t = body[pos];
        pos += 1;
        let len = get_varint(body, &mut pos).ok_or(CodecError::Framing {
            offset: start,
            what: "bad section length",
        })?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| pos.checked_add(l))
            .filter(|&e| e <= body.len())
            .ok_or(CodecError::Framing {
                offset: start,
                what: "section runs past the end of the record",
            })?;
        if t <= last_tag {
            return Err(CodecError::SectionOrder { tag: t });
        }
        last_tag = t;
        let payload = &body[pos..end];
        match t {
            tag::GAME => game_sec = Some(payload),
            tag::MOVES => moves_sec = Some(payload),
            t if t >= tag::FIRST_OPTIONAL => skipped.push(t),
            t => return Err(CodecError::UnknownRequiredSection { tag: t }),
        }
        pos = end;
    }
    let game_sec = game_sec.ok_or(CodecError::MissingSection {
        name: "game (0x01)",
    })?;
    let moves_sec = moves_sec.ok_or(CodecError::MissingSection {
        name: "moves (0x02)",
    })?;

    let meta = decode_game_section(id, game_sec)?;
    let start = start_position(meta.variant, &meta.start)
        .map_err(|what| CodecError::BadGameSection { what })?;
    let (game, encoder) = replay(start, moves_sec)?;
    Ok(Decoded {
        loaded: LoadedGame { meta, game },
        encoder,
        skipped_sections: skipped,
    })
}

fn decode_game_section(id: &str, sec: &[u8]) -> Result<GameMeta, CodecError> {
    let bad = |what: &str| CodecError::BadGameSection {
        what: what.to_string(),
    };
    let variant = match sec.first() {
        Some(&VARIANT_STANDARD) => Variant::Standard,
        Some(&VARIANT_CHESS960) => Variant::Chess960,
        Some(v) => {
            return Err(CodecError::BadGameSection {
                what: format!("unknown variant code {v}"),
            });
        }
        None => return Err(bad("empty")),
    };
    let mut pos = 1;
    let created_unix_ms = get_varint(sec, &mut pos).ok_or_else(|| bad("bad creation time"))?;
    let kind = *sec.get(pos).ok_or_else(|| bad("no start kind"))?;
    let rest = &sec[pos + 1..];
    let start = match kind {
        START_STANDARD if rest.is_empty() => Start::Standard,
        START_CHESS960 if rest.len() == 2 => {
            let n = u32::from(u16::from_le_bytes([rest[0], rest[1]]));
            if n >= CHESS960_POSITIONS {
                return Err(CodecError::BadGameSection {
                    what: format!("Chess960 number {n} is not in 0..=959"),
                });
            }
            Start::Chess960(n)
        }
        START_FEN => {
            let fen = std::str::from_utf8(rest).map_err(|_| bad("start FEN is not UTF-8"))?;
            Start::Fen(fen.to_string())
        }
        START_STANDARD | START_CHESS960 => return Err(bad("start payload has the wrong length")),
        k => {
            return Err(CodecError::BadGameSection {
                what: format!("unknown start kind {k}"),
            });
        }
    };
    Ok(GameMeta {
        id: id.to_string(),
        variant,
        start,
        created_unix_ms,
    })
}

/// Replays the moves section from `start`, validating every move through the rules.
fn replay(start: Position, sec: &[u8]) -> Result<(Game, MoveEncoder), CodecError> {
    let mut pos = 0;
    let ply = get_varint(sec, &mut pos).ok_or_else(|| CodecError::BadMovesSection {
        what: "bad ply count".into(),
    })?;
    let bytes = &sec[pos..];
    // Each move beyond forced ones takes at least one bit; forced moves take none, so the
    // count is bounded only by the rules (the 75-move rule and fivefold repetition end
    // every game). Cap it anyway so a damaged count cannot run the loop for long.
    const MAX_PLY: u64 = 1 << 20;
    if ply > MAX_PLY {
        return Err(CodecError::BadMovesSection {
            what: format!("ply count {ply} is implausible"),
        });
    }
    let ply = ply as usize;
    let mut reader = BitReader { bytes, pos: 0 };
    let mut game = Game::new(start);
    let mut encoder = MoveEncoder::new(start);
    encoder.moves.reserve(ply);
    encoder.ends.reserve(ply);
    let mut legal: Vec<Move> = Vec::with_capacity(64);
    for i in 0..ply {
        // The rules decide: the game must still be going, and the move is drawn from the
        // rules' own list of legal moves in the current position.
        legal.clear();
        legal.extend_from_slice(&game.position().legal_moves());
        let status = game.status_with(!legal.is_empty());
        if status.is_over() {
            return Err(CodecError::Replay {
                ply: i,
                what: format!(
                    "the game had already ended ({status:?}), yet the record has more moves"
                ),
            });
        }
        let r = get_index(&mut reader, legal.len() as u32).ok_or_else(|| CodecError::Replay {
            ply: i,
            what: format!("the move bits end after {} of {ply} moves", i),
        })?;
        // The r-th move in sorted order, found without sorting the whole list.
        let (_, &mut m, _) = legal.select_nth_unstable_by_key(r as usize, order_key);
        // Legal by construction (taken from the legal list of this very position), so
        // the second legality check inside `Game::play` is skipped.
        game.push_unchecked(m);
        encoder.moves.push(m);
        encoder.ends.push(reader.pos);
    }
    let used_bytes = reader.pos.div_ceil(8) as usize;
    if used_bytes != bytes.len() {
        return Err(CodecError::BadMovesSection {
            what: format!(
                "{} bytes of moves, but the {ply} moves use {used_bytes}",
                bytes.len()
            ),
        });
    }
    let pad = (reader.pos % 8) as u32;
    if pad != 0 {
        let last = bytes[used_bytes - 1];
        if last & (0xFFu8 >> pad) != 0 {
            return Err(CodecError::BadMovesSection {
                what: "non-zero padding bits after the last move".into(),
            });
        }
    }
    encoder.bits = BitWriter {
        bytes: bytes.to_vec(),
        len: reader.pos,
    };
    Ok((game, encoder))
}

/// Bits the moves of `game` take in this encoding, and the floor for the same uniform
/// model (the sum of log2 of the number of legal moves before each move): for measuring.
pub fn move_bits(game: &Game) -> Result<(u64, f64), CodecError> {
    let floor = (0..game.ply())
        .filter_map(|ply| game.position_at(ply))
        .map(|pos| (pos.count_legal_moves() as f64).log2())
        .sum();
    let mut enc = MoveEncoder::new(*game.start());
    enc.sync(game)?;
    Ok((enc.bits.bit_len(), floor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip_and_rejects_overlong() {
        for v in [0u64, 1, 127, 128, 300, 1 << 35, 1_700_000_000_000, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut pos = 0;
            assert_eq!(get_varint(&out, &mut pos), Some(v));
            assert_eq!(pos, out.len());
        }
        let mut pos = 0;
        assert_eq!(get_varint(&[0x80, 0x00], &mut pos), None, "overlong zero");
        let mut pos = 0;
        assert_eq!(get_varint(&[0xFF; 10], &mut pos), None, "more than 64 bits");
        let mut pos = 0;
        assert_eq!(get_varint(&[0x80], &mut pos), None, "truncated");
    }

    #[test]
    fn truncated_binary_round_trips_every_index() {
        for n in 1..=256u32 {
            let mut w = BitWriter::new();
            for r in 0..n {
                put_index(&mut w, r, n);
            }
            let mut rd = BitReader {
                bytes: w.as_bytes(),
                pos: 0,
            };
            for r in 0..n {
                assert_eq!(get_index(&mut rd, n), Some(r), "n={n}");
            }
            assert_eq!(rd.pos, w.bit_len());
            // The code is complete: average length within one bit of log2(n).
            if n > 1 {
                let avg = w.bit_len() as f64 / f64::from(n);
                assert!(
                    avg >= f64::from(n).log2() - 1e-9 && avg < f64::from(n).log2() + 0.1,
                    "n={n} avg={avg}"
                );
            }
        }
    }

    #[test]
    fn bitwriter_truncate_clears_tail() {
        let mut w = BitWriter::new();
        w.push(0b1_1111_1111, 9);
        w.truncate(3);
        assert_eq!(w.as_bytes(), &[0b1110_0000]);
        assert_eq!(w.bit_len(), 3);
        w.push(0, 1);
        w.push(1, 1);
        assert_eq!(w.as_bytes(), &[0b1110_1000]);
    }
}
