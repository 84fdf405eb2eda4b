//! The stored record of one game: a versioned, sectioned, checksummed byte string holding
//! the start position, the creation time and the game's history, each move as its index
//! in the position's [`Position::legal_moves_sorted`] order written with a truncated
//! binary code. `docs/STORAGE.md` gives the exact byte layout.
//!
//! Two forms of the history, chosen per save: a game whose log is only moves and that is
//! untimed is written as a MOVES section (the first form, which every build reads); any
//! other game as a LOG section (every event, one tag bit each, moves coded as in MOVES)
//! plus, when timed, a CLOCK section (the time control and every event's time).
//!
//! Decoding replays the history through the rules and the lifecycle ([`Match::apply`]:
//! the game must still be going, each move is taken from the rules' legal list of the
//! position, each event must be allowed where it stands); a record that fails its
//! checksum, its framing or its replay is a [`CodecError`], which the store turns into
//! `StoreError::DataLoss` for that game alone.

use crate::lifecycle::{ClaimRule, Event, LogEntry, Match, ReplayError, TimeControl};
use crate::rules::chess960::{self, CHESS960_POSITIONS};
use crate::rules::{Color, Game, Move, Position, Variant};

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
    /// Ply count and the packed move indexes: the history of an untimed game whose log
    /// is only moves. Required (exactly one of MOVES and LOG).
    pub const MOVES: u8 = 0x02;
    /// Event count and the packed events: every other history. Required (exactly one of
    /// MOVES and LOG).
    pub const LOG: u8 = 0x03;
    /// The time control and each event's time: timed games, with LOG. Required.
    pub const CLOCK: u8 = 0x04;
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
    #[error("the log section is malformed: {what}")]
    BadLogSection { what: String },
    #[error("the clock section is malformed: {what}")]
    BadClockSection { what: String },
    #[error("replay of the log failed at {0}")]
    LogReplay(ReplayError),
    #[error(
        "event {version} has kind {kind}, which this build does not know: run a newer build of the service"
    )]
    UnknownEventKind { version: u64, kind: u32 },
    #[error("clock mode {mode} is not known to this build: run a newer build of the service")]
    UnknownClockMode { mode: u8 },
    #[error(
        "cannot encode: the game's clock started at {clock} ms, but its metadata says it was created at {created} ms"
    )]
    CreatedMismatch { clock: u64, created: u64 },
    #[error("cannot encode: event {version} ({what}) does not fit the log: {why}")]
    BadEvent {
        version: u64,
        what: &'static str,
        why: String,
    },
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
            let (r, n) = move_index(pos, m).ok_or_else(|| CodecError::NotLegal {
                ply,
                mv: pos.uci(m),
            })?;
            put_index(&mut self.bits, r, n);
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

// ---- the log, incrementally ---------------------------------------------------------------

/// Event kinds after a log entry's tag bit 1 (4 bits; 8..=15 are reserved, and a reader
/// that meets one refuses the record: "run a newer build").
mod kind {
    pub const UNDO: u32 = 0;
    pub const DRAW_OFFERED: u32 = 1;
    pub const DRAW_DECLINED: u32 = 2;
    pub const DRAW_LAPSED: u32 = 3;
    pub const DRAW_ACCEPTED: u32 = 4;
    pub const RESIGNED: u32 = 5;
    pub const DRAW_CLAIMED: u32 = 6;
    pub const FLAG_FELL: u32 = 7;
    pub const BITS: u32 = 4;
}

/// The only clock mode so far: Fischer increment.
const CLOCK_FISCHER: u8 = 0;

/// How a move is coded: its index among the legal moves of `pos` in the sorted order
/// (counted, not sorted: the moves before it) and their number; `None` if `m` is not
/// legal there.
fn move_index(pos: &Position, m: Move) -> Option<(u32, u32)> {
    let legal = pos.legal_moves();
    if !legal.contains(&m) {
        return None;
    }
    let key = order_key(&m);
    let r = legal.iter().filter(|x| order_key(x) < key).count();
    Some((r as u32, legal.len() as u32))
}

/// Reads a move coded by [`move_index`] among `legal` (the position's legal moves, in any
/// order; reordered here). `None` when the bits run out.
fn read_move(reader: &mut BitReader<'_>, legal: &mut [Move]) -> Option<Move> {
    let r = get_index(reader, legal.len() as u32)?;
    // The r-th move in sorted order, found without sorting the whole list.
    let (_, &mut m, _) = legal.select_nth_unstable_by_key(r as usize, order_key);
    Some(m)
}

/// Writes one event: tag bit 0 and the move's index among the legal moves of `before`
/// (as in MOVES), or tag bit 1, the 4-bit kind and its payload bits.
fn put_event(bits: &mut BitWriter, event: Event, before: Option<&Position>) -> Result<(), String> {
    let (code, payload, width) = match event {
        Event::Move(m) => {
            let pos = before.ok_or("the position before the move is unknown")?;
            let (r, n) = move_index(pos, m)
                .ok_or_else(|| format!("{} is not legal in {}", pos.uci(m), pos.to_fen()))?;
            bits.push(0, 1);
            put_index(bits, r, n);
            return Ok(());
        }
        Event::Undo => (kind::UNDO, 0, 0),
        Event::DrawOffered(c) => (kind::DRAW_OFFERED, c.index() as u32, 1),
        Event::DrawDeclined => (kind::DRAW_DECLINED, 0, 0),
        Event::DrawLapsed => (kind::DRAW_LAPSED, 0, 0),
        Event::DrawAccepted => (kind::DRAW_ACCEPTED, 0, 0),
        Event::Resigned(c) => (kind::RESIGNED, c.index() as u32, 1),
        Event::DrawClaimed { rule, announced } => {
            let rule_bit = u32::from(rule == ClaimRule::FiftyMoves);
            (kind::DRAW_CLAIMED, rule_bit << 1 | u32::from(announced), 2)
        }
        Event::FlagFell => (kind::FLAG_FELL, 0, 0),
    };
    bits.push(1, 1);
    bits.push(code, kind::BITS);
    bits.push(payload, width);
    Ok(())
}

fn color_of_bit(bit: u32) -> Color {
    if bit == 0 { Color::White } else { Color::Black }
}

/// The encoded log of one game (the LOG and CLOCK sections' content), kept so a save
/// encodes only the events appended since the last one. A pure cache: [`LogEncoder::sync`]
/// checks that the game's log still starts with what it encoded and rebuilds otherwise.
#[derive(Clone, Debug)]
pub struct LogEncoder {
    start: Position,
    /// Time control and creation time of a timed game.
    clock: Option<(TimeControl, u64)>,
    /// The events encoded, to check that a game's log extends them.
    entries: Vec<LogEntry>,
    /// The board's ply after the encoded events.
    ply: usize,
    bits: BitWriter,
    /// Each event's time minus the previous one's (the first: minus the creation), varints.
    times: Vec<u8>,
    last_ms: u64,
}

impl LogEncoder {
    fn new(start: Position, clock: Option<(TimeControl, u64)>) -> LogEncoder {
        LogEncoder {
            start,
            clock,
            entries: Vec::new(),
            ply: 0,
            bits: BitWriter::new(),
            times: Vec::new(),
            last_ms: clock.map_or(0, |(_, created)| created),
        }
    }

    pub fn bits(&self) -> &BitWriter {
        &self.bits
    }

    /// Brings the encoding in line with `m`'s log; returns how many events it encoded.
    pub fn sync(&mut self, m: &Match) -> Result<usize, CodecError> {
        let clock = m.time_control().zip(m.created_ms());
        if self.start != *m.game().start()
            || self.clock != clock
            || !m.log().starts_with(&self.entries)
        {
            *self = LogEncoder::new(*m.game().start(), clock);
        }
        let tail = &m.log()[self.entries.len()..];
        let Some(plies) = self.tail_plies(m, tail) else {
            *self = LogEncoder::rebuild(m)?;
            return Ok(m.log().len());
        };
        for (&entry, ply) in tail.iter().zip(plies) {
            let before = match entry.event {
                Event::Move(_) => m.game().position_at(ply),
                _ => None,
            };
            self.push(entry, before)?;
        }
        Ok(tail.len())
    }

    /// The board's ply before each event of `tail`, when every move in it can be encoded
    /// from `m`'s current board: its position there is still the one it was played in (no
    /// later undo went below it). `None` otherwise (then the log is replayed instead).
    fn tail_plies(&self, m: &Match, tail: &[LogEntry]) -> Option<Vec<usize>> {
        let mut plies = Vec::with_capacity(tail.len());
        let mut ply = self.ply;
        for entry in tail {
            plies.push(ply);
            match entry.event {
                Event::Move(_) => ply += 1,
                Event::Undo => ply = ply.checked_sub(1)?,
                _ => {}
            }
        }
        if ply != m.game().ply() {
            return None;
        }
        let mut lowest_after = ply;
        for (entry, &before) in tail.iter().zip(&plies).rev() {
            if matches!(entry.event, Event::Move(_)) && lowest_after < before {
                return None;
            }
            lowest_after = lowest_after.min(before);
        }
        Some(plies)
    }

    /// Encodes `m`'s whole log by replaying it (each move needs the position it was
    /// played in, which an undo may have removed from the board).
    fn rebuild(m: &Match) -> Result<LogEncoder, CodecError> {
        let mut enc = LogEncoder::new(*m.game().start(), m.time_control().zip(m.created_ms()));
        let mut replay = m.restart();
        for &entry in m.log() {
            enc.push(entry, Some(replay.game().position()))?;
            replay.apply(entry).map_err(CodecError::LogReplay)?;
        }
        Ok(enc)
    }

    fn push(&mut self, entry: LogEntry, before: Option<&Position>) -> Result<(), CodecError> {
        let version = self.entries.len() as u64 + 1;
        let bad = |why: String| CodecError::BadEvent {
            version,
            what: entry.event.name(),
            why,
        };
        put_event(&mut self.bits, entry.event, before).map_err(bad)?;
        match (self.clock, entry.at_ms) {
            (Some(_), Some(t)) => {
                let delta = t.checked_sub(self.last_ms).ok_or_else(|| {
                    bad(format!(
                        "its time {t} is before the previous {}",
                        self.last_ms
                    ))
                })?;
                put_varint(&mut self.times, delta);
                self.last_ms = t;
            }
            (None, None) => {}
            _ => return Err(bad("it has a time exactly when the game is untimed".into())),
        }
        match entry.event {
            Event::Move(_) => self.ply += 1,
            Event::Undo => self.ply = self.ply.saturating_sub(1),
            _ => {}
        }
        self.entries.push(entry);
        Ok(())
    }
}

/// A game's history, encoded in the form its next record takes: MOVES for an untimed
/// game whose log is only moves (readable by every build), LOG otherwise.
#[derive(Clone, Debug)]
pub enum RecordEncoder {
    Moves(MoveEncoder),
    Log(LogEncoder),
}

/// Whether `m` is written in the MOVES form.
fn moves_form(m: &Match) -> bool {
    !m.is_timed() && m.only_moves()
}

impl RecordEncoder {
    /// An empty encoder of the form `m` needs.
    pub fn new(m: &Match) -> RecordEncoder {
        let start = *m.game().start();
        if moves_form(m) {
            RecordEncoder::Moves(MoveEncoder::new(start))
        } else {
            RecordEncoder::Log(LogEncoder::new(start, m.time_control().zip(m.created_ms())))
        }
    }

    /// The start position the history is encoded from.
    pub fn start(&self) -> &Position {
        match self {
            RecordEncoder::Moves(e) => e.start(),
            RecordEncoder::Log(e) => &e.start,
        }
    }

    /// The packed moves (MOVES) or events (LOG).
    pub fn bits(&self) -> &BitWriter {
        match self {
            RecordEncoder::Moves(e) => e.bits(),
            RecordEncoder::Log(e) => e.bits(),
        }
    }

    /// Brings the encoding in line with `m` (switching form when the game leaves the
    /// MOVES form); returns how many moves or events had to be encoded.
    pub fn sync(&mut self, m: &Match) -> Result<usize, CodecError> {
        match self {
            RecordEncoder::Moves(e) if moves_form(m) => e.sync(m.game()),
            RecordEncoder::Log(e) if !moves_form(m) => e.sync(m),
            _ => {
                *self = RecordEncoder::new(m);
                match self {
                    RecordEncoder::Moves(e) => e.sync(m.game()),
                    RecordEncoder::Log(e) => e.sync(m),
                }
            }
        }
    }
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

/// The GAME section: variant, creation time, start.
fn game_section(meta: &GameMeta) -> Result<Vec<u8>, CodecError> {
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
    Ok(game_sec)
}

/// Frames `sections` (tag and payload, in increasing tag order) behind the format
/// `version` and ends them with the checksum. Public for tools and tests that build
/// records by hand; the encoder adds the size limit ([`MAX_RECORD_LEN`]).
pub fn frame<P: AsRef<[u8]>>(id: &str, version: u8, sections: &[(u8, P)]) -> Vec<u8> {
    let len: usize = sections.iter().map(|(_, p)| p.as_ref().len() + 6).sum();
    let mut out = Vec::with_capacity(len + 5);
    out.push(version);
    for (tag, payload) in sections {
        put_section(&mut out, *tag, payload.as_ref());
    }
    let sum = checksum(id, &out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A record of the current format, refused when it is larger than the store accepts.
fn seal(meta: &GameMeta, sections: &[(u8, &[u8])]) -> Result<Vec<u8>, CodecError> {
    let out = frame(&meta.id, FORMAT_VERSION, sections);
    if out.len() > MAX_RECORD_LEN {
        return Err(CodecError::TooLarge { len: out.len() });
    }
    Ok(out)
}

/// Builds the record of an untimed, moves-only game whose moves are already in `moves`
/// (kept in sync with the game by the caller): sections GAME and MOVES. The checksum
/// covers the game id, so a record copied under another key fails to load.
pub fn encode_with(meta: &GameMeta, moves: &MoveEncoder) -> Result<Vec<u8>, CodecError> {
    let game_sec = game_section(meta)?;
    let bits = moves.bits();
    let mut moves_sec = Vec::with_capacity(bits.as_bytes().len() + 3);
    put_varint(&mut moves_sec, moves.ply() as u64);
    moves_sec.extend_from_slice(bits.as_bytes());
    seal(meta, &[(tag::GAME, &game_sec), (tag::MOVES, &moves_sec)])
}

/// Builds the record of a game whose history is already in `enc` (kept in sync with the
/// game by the caller): GAME and MOVES, or GAME, LOG and (timed games) CLOCK.
pub fn encode_record(meta: &GameMeta, enc: &RecordEncoder) -> Result<Vec<u8>, CodecError> {
    let log = match enc {
        RecordEncoder::Moves(moves) => return encode_with(meta, moves),
        RecordEncoder::Log(log) => log,
    };
    let game_sec = game_section(meta)?;
    let bytes = log.bits.as_bytes();
    let mut log_sec = Vec::with_capacity(bytes.len() + 3);
    put_varint(&mut log_sec, log.entries.len() as u64);
    log_sec.extend_from_slice(bytes);
    let Some((control, created)) = log.clock else {
        return seal(meta, &[(tag::GAME, &game_sec), (tag::LOG, &log_sec)]);
    };
    if created != meta.created_unix_ms {
        return Err(CodecError::CreatedMismatch {
            clock: created,
            created: meta.created_unix_ms,
        });
    }
    let mut clock_sec = Vec::with_capacity(log.times.len() + 8);
    clock_sec.push(CLOCK_FISCHER);
    put_varint(&mut clock_sec, control.initial_ms());
    put_varint(&mut clock_sec, control.increment_ms());
    clock_sec.extend_from_slice(&log.times);
    seal(
        meta,
        &[
            (tag::GAME, &game_sec),
            (tag::LOG, &log_sec),
            (tag::CLOCK, &clock_sec),
        ],
    )
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
pub fn encode(meta: &GameMeta, m: &Match) -> Result<Vec<u8>, CodecError> {
    check_start(meta, m.game())?;
    let mut enc = RecordEncoder::new(m);
    enc.sync(m)?;
    encode_record(meta, &enc)
}

/// A decoded record: the replayed game and, to seed the store's encoder cache, its
/// encoded history.
pub struct Decoded {
    pub loaded: LoadedGame,
    pub encoder: RecordEncoder,
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
    let mut log_sec: Option<&[u8]> = None;
    let mut clock_sec: Option<&[u8]> = None;
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
            tag::LOG => log_sec = Some(payload),
            tag::CLOCK => clock_sec = Some(payload),
            t if t >= tag::FIRST_OPTIONAL => skipped.push(t),
            t => return Err(CodecError::UnknownRequiredSection { tag: t }),
        }
        pos = end;
    }
    let game_sec = game_sec.ok_or(CodecError::MissingSection {
        name: "game (0x01)",
    })?;

    let meta = decode_game_section(id, game_sec)?;
    let start = start_position(meta.variant, &meta.start)
        .map_err(|what| CodecError::BadGameSection { what })?;
    let (game, encoder) = match (moves_sec, log_sec) {
        (Some(_), Some(_)) => {
            return Err(CodecError::BadLogSection {
                what: "the record has both a moves and a log section".into(),
            });
        }
        (None, None) => {
            return Err(CodecError::MissingSection {
                name: "moves (0x02) or log (0x03)",
            });
        }
        (Some(moves), None) => {
            if clock_sec.is_some() {
                return Err(CodecError::BadClockSection {
                    what: "a clock section comes only with a log section".into(),
                });
            }
            let (game, moves) = replay(start, moves)?;
            (Match::from_moves(game), RecordEncoder::Moves(moves))
        }
        (None, Some(log)) => {
            let clock = clock_sec.map(decode_clock_section).transpose()?;
            let (m, enc) = replay_log(start, meta.created_unix_ms, clock, log)?;
            (m, RecordEncoder::Log(enc))
        }
    };
    Ok(Decoded {
        loaded: LoadedGame { meta, game },
        encoder,
        skipped_sections: skipped,
    })
}

/// The CLOCK section: the time control, and the bytes of the event times.
fn decode_clock_section(sec: &[u8]) -> Result<(TimeControl, &[u8]), CodecError> {
    let bad = |what: &str| CodecError::BadClockSection {
        what: what.to_string(),
    };
    match sec.first() {
        Some(&CLOCK_FISCHER) => {}
        Some(&mode) => return Err(CodecError::UnknownClockMode { mode }),
        None => return Err(bad("empty")),
    }
    let mut pos = 1;
    let initial = get_varint(sec, &mut pos).ok_or_else(|| bad("bad initial time"))?;
    let increment = get_varint(sec, &mut pos).ok_or_else(|| bad("bad increment"))?;
    let control =
        TimeControl::new(initial, increment).map_err(|e| CodecError::BadClockSection {
            what: e.to_string(),
        })?;
    Ok((control, &sec[pos..]))
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
        let m = read_move(&mut reader, &mut legal).ok_or_else(|| CodecError::Replay {
            ply: i,
            what: format!("the move bits end after {} of {ply} moves", i),
        })?;
        // Legal by construction (taken from the legal list of this very position), so
        // the second legality check inside `Game::play` is skipped.
        game.push_unchecked(m);
        encoder.moves.push(m);
        encoder.ends.push(reader.pos);
    }
    check_padding(bytes, reader.pos, &format!("the {ply} moves"))
        .map_err(|what| CodecError::BadMovesSection { what })?;
    encoder.bits = BitWriter {
        bytes: bytes.to_vec(),
        len: reader.pos,
    };
    Ok((game, encoder))
}

/// Replays the log section (and, for a timed game, the times after the CLOCK section's
/// time control) from `start`, validating every event through the lifecycle.
fn replay_log(
    start: Position,
    created_ms: u64,
    clock: Option<(TimeControl, &[u8])>,
    sec: &[u8],
) -> Result<(Match, LogEncoder), CodecError> {
    let bad = |what: String| CodecError::BadLogSection { what };
    let mut pos = 0;
    let count = get_varint(sec, &mut pos).ok_or_else(|| bad("bad event count".into()))?;
    // Every event takes at least one bit (its tag), so a count beyond the bits is caught
    // below; cap it anyway so a damaged count cannot run the loop for long.
    const MAX_EVENTS: u64 = 1 << 20;
    if count > MAX_EVENTS {
        return Err(bad(format!("event count {count} is implausible")));
    }
    let bytes = &sec[pos..];
    let mut reader = BitReader { bytes, pos: 0 };
    let params = clock.map(|(control, _)| (control, created_ms));
    let mut m = match params {
        Some((control, created)) => Match::timed(start, control, created),
        None => Match::untimed(start),
    };
    let mut enc = LogEncoder::new(start, params);
    let (times, mut at) = (clock.map_or(&[][..], |(_, t)| t), created_ms);
    let mut times_pos = 0;
    let mut legal: Vec<Move> = Vec::with_capacity(64);
    for i in 0..count {
        let version = i + 1;
        let ran_out = || bad(format!("the event bits end after {i} of {count} events"));
        let event = if reader.read(1).ok_or_else(ran_out)? == 0 {
            legal.clear();
            legal.extend_from_slice(&m.game().position().legal_moves());
            if legal.is_empty() {
                return Err(CodecError::LogReplay(ReplayError {
                    version,
                    what: "move",
                    why: "a move where no move is legal".into(),
                }));
            }
            Event::Move(read_move(&mut reader, &mut legal).ok_or_else(ran_out)?)
        } else {
            let mut read = |width| reader.read(width).ok_or_else(ran_out);
            match read(kind::BITS)? {
                kind::UNDO => Event::Undo,
                kind::DRAW_OFFERED => Event::DrawOffered(color_of_bit(read(1)?)),
                kind::DRAW_DECLINED => Event::DrawDeclined,
                kind::DRAW_LAPSED => Event::DrawLapsed,
                kind::DRAW_ACCEPTED => Event::DrawAccepted,
                kind::RESIGNED => Event::Resigned(color_of_bit(read(1)?)),
                kind::DRAW_CLAIMED => {
                    let bits = read(2)?;
                    let rule = if bits >> 1 == 0 {
                        ClaimRule::Threefold
                    } else {
                        ClaimRule::FiftyMoves
                    };
                    Event::DrawClaimed {
                        rule,
                        announced: bits & 1 == 1,
                    }
                }
                kind::FLAG_FELL => Event::FlagFell,
                k => return Err(CodecError::UnknownEventKind { version, kind: k }),
            }
        };
        let at_ms = match clock {
            Some(_) => {
                let delta = get_varint(times, &mut times_pos).ok_or_else(|| {
                    CodecError::BadClockSection {
                        what: format!("the times end after {i} of {count} events"),
                    }
                })?;
                at = at
                    .checked_add(delta)
                    .ok_or_else(|| CodecError::BadClockSection {
                        what: format!("the time of event {version} overflows"),
                    })?;
                Some(at)
            }
            None => None,
        };
        let entry = LogEntry { event, at_ms };
        m.apply(entry).map_err(CodecError::LogReplay)?;
        match event {
            Event::Move(_) => enc.ply += 1,
            Event::Undo => enc.ply = enc.ply.saturating_sub(1),
            _ => {}
        }
        enc.entries.push(entry);
    }
    m.check_complete().map_err(CodecError::LogReplay)?;
    check_padding(bytes, reader.pos, "events").map_err(bad)?;
    if times_pos != times.len() {
        return Err(CodecError::BadClockSection {
            what: format!(
                "{} bytes of times, but the {count} events use {times_pos}",
                times.len()
            ),
        });
    }
    enc.bits = BitWriter {
        bytes: bytes.to_vec(),
        len: reader.pos,
    };
    enc.times = times.to_vec();
    enc.last_ms = at;
    Ok((m, enc))
}

/// The packed bits must end inside the last byte, and the padding bits must be zero, so
/// that every history has exactly one spelling.
fn check_padding(bytes: &[u8], bit_len: u64, what: &str) -> Result<(), String> {
    let used_bytes = bit_len.div_ceil(8) as usize;
    if used_bytes != bytes.len() {
        return Err(format!(
            "{} bytes of {what}, but they use {used_bytes}",
            bytes.len()
        ));
    }
    let pad = (bit_len % 8) as u32;
    if pad != 0 && bytes[used_bytes - 1] & (0xFFu8 >> pad) != 0 {
        return Err(format!(
            "non-zero padding bits after the last of the {what}"
        ));
    }
    Ok(())
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
