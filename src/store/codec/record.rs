//! The record: a format version byte, sections (tag, varint length, payload) in
//! increasing tag order, and a CRC-32 that covers the game id; the GAME section
//! (variant, creation time, start); and the choice between the MOVES and LOG forms.

use crate::lifecycle::Match;
use crate::rules::chess960::{self, CHESS960_POSITIONS};
use crate::rules::variant::{AnyPosition, VariantKind};
use crate::rules::{Game, GamePosition, GameRules, Position, Variant};
use crate::store::{GameMeta, LoadedGame, Start};

#[cfg(feature = "testing")]
use super::bits::BitWriter;
use super::bits::{get_varint, put_varint};
use super::log::{LogEncoder, decode_clock_section, replay_log};
use super::moves::{MoveEncoder, replay};
use super::{CodecError, FORMAT_VERSION, MAX_RECORD_LEN, TAGS_VERSION, VARIANTS_VERSION};
use crate::lifecycle::Tags;

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
    /// The caller's PGN tags. Required, and only in format version 2: a record with tags
    /// is written as version 2 (which builds before tags refuse as newer), one without as
    /// version 1.
    pub const TAGS: u8 = 0x05;
    /// The first optional tag: anything at or above it may be skipped by a reader that
    /// does not know it.
    pub const FIRST_OPTIONAL: u8 = 0x80;
}

const VARIANT_STANDARD: u8 = 0;
const VARIANT_CHESS960: u8 = 1;
/// lichess's variants, codes 2..=8 in [`VariantKind::ALL`]'s order (format version 3).
const FIRST_LICHESS_VARIANT: u8 = 2;
const START_STANDARD: u8 = 0;
const START_CHESS960: u8 = 1;
const START_FEN: u8 = 2;
const CRC_LEN: usize = 4;

/// A game's history, encoded in the form its next record takes: MOVES for an untimed
/// game whose log is only moves (readable by every build), LOG otherwise.
#[derive(Clone, Debug)]
pub enum RecordEncoder {
    /// The MOVES form.
    Moves(MoveEncoder),
    /// The LOG form (with CLOCK when timed).
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
    pub fn start(&self) -> &GamePosition {
        match self {
            RecordEncoder::Moves(e) => e.start(),
            RecordEncoder::Log(e) => e.start(),
        }
    }

    /// The packed moves (MOVES) or events (LOG). For tests (`testing` feature).
    #[cfg(feature = "testing")]
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

/// The position a game's metadata names as its start.
pub(super) fn start_position(variant: GameRules, start: &Start) -> Result<GamePosition, String> {
    let variant = match variant {
        GameRules::Chess(variant) => variant,
        GameRules::Lichess(kind) => {
            return match start {
                Start::Standard => Ok(AnyPosition::start(kind).into()),
                Start::Chess960(n) => Err(format!(
                    "a {kind} game names Chess960 start {n}; its starts are its own or a FEN"
                )),
                Start::Fen(fen) => AnyPosition::from_fen(kind, fen)
                    .map(GamePosition::from)
                    .map_err(|e| format!("FEN '{fen}': {e}")),
            };
        }
    };
    let pos = match start {
        Start::Standard => chess960::start_position(518, variant).map_err(|e| e.to_string()),
        Start::Chess960(n) => chess960::start_position(*n, variant).map_err(|e| e.to_string()),
        Start::Fen(fen) => {
            Position::from_fen(fen, variant).map_err(|e| format!("FEN '{fen}': {e}"))
        }
    }?;
    Ok(pos.into())
}

/// The GAME section's variant code.
fn variant_code(variant: GameRules) -> u8 {
    match variant {
        GameRules::Chess(Variant::Standard) => VARIANT_STANDARD,
        GameRules::Chess(Variant::Chess960) => VARIANT_CHESS960,
        GameRules::Lichess(kind) => {
            let i = VariantKind::ALL
                .iter()
                .position(|&k| k == kind)
                .expect("every kind is in ALL");
            FIRST_LICHESS_VARIANT + i as u8
        }
    }
}

/// The variant a GAME section's code names; lichess's variants only from format version 3.
fn variant_of_code(code: u8, version: u8) -> Option<GameRules> {
    match code {
        VARIANT_STANDARD => Some(GameRules::Chess(Variant::Standard)),
        VARIANT_CHESS960 => Some(GameRules::Chess(Variant::Chess960)),
        c if version >= VARIANTS_VERSION => VariantKind::ALL
            .get(usize::from(c.checked_sub(FIRST_LICHESS_VARIANT)?))
            .map(|&k| GameRules::Lichess(k)),
        _ => None,
    }
}

/// The record checksum: CRC-32 (IEEE) of the varint length of `id`, `id`'s bytes and
/// the record body (every byte before the checksum).
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
    game_sec.push(variant_code(meta.variant));
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
/// `version` and ends them with the checksum (tests build records by hand with it); the
/// encoder adds the size limit ([`MAX_RECORD_LEN`]).
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

/// The TAGS section: the tag count, then each tag (sorted by name) as its name's length,
/// the name, its value's length and the value (lengths as varints, text as UTF-8).
fn tags_section(tags: &Tags) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        1 + tags
            .iter()
            .map(|(k, v)| k.len() + v.len() + 2)
            .sum::<usize>(),
    );
    put_varint(&mut out, tags.len() as u64);
    for (name, value) in tags.iter() {
        put_varint(&mut out, name.len() as u64);
        out.extend_from_slice(name.as_bytes());
        put_varint(&mut out, value.len() as u64);
        out.extend_from_slice(value.as_bytes());
    }
    out
}

fn decode_tags_section(sec: &[u8]) -> Result<Tags, CodecError> {
    let bad = |what: String| CodecError::BadTagsSection { what };
    let mut pos = 0;
    let count = get_varint(sec, &mut pos).ok_or_else(|| bad("bad tag count".into()))?;
    let mut text = |what: &str| -> Result<String, CodecError> {
        let len = get_varint(sec, &mut pos).ok_or_else(|| bad(format!("bad {what} length")))?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| pos.checked_add(l))
            .filter(|&e| e <= sec.len())
            .ok_or_else(|| bad(format!("a {what} runs past the end of the section")))?;
        let s = std::str::from_utf8(&sec[pos..end])
            .map_err(|_| bad(format!("a {what} is not UTF-8")))?
            .to_string();
        pos = end;
        Ok(s)
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for _ in 0..count.min(crate::lifecycle::tags::MAX_TAGS as u64 + 1) {
        let name = text("tag name")?;
        let value = text("tag value")?;
        if pairs.last().is_some_and(|(last, _)| *last >= name) {
            return Err(bad(format!("tag '{name}' is out of order")));
        }
        pairs.push((name, value));
    }
    if pairs.len() as u64 != count {
        return Err(bad(format!("{count} tags are more than a game may have")));
    }
    if pos != sec.len() {
        return Err(bad("bytes after the last tag".into()));
    }
    Tags::new(pairs).map_err(|e| bad(e.to_string()))
}

/// A record of the oldest format that holds the game (version 1 without tags, so that
/// builds before tags still read it; [`super::TAGS_VERSION`] with them;
/// [`super::VARIANTS_VERSION`] for a lichess variant's game), refused when it is larger
/// than the store accepts.
fn seal(meta: &GameMeta, sections: &[(u8, &[u8])]) -> Result<Vec<u8>, CodecError> {
    let tags_sec;
    let mut all: Vec<(u8, &[u8])> = sections.to_vec();
    let mut version = if meta.tags.is_empty() {
        1
    } else {
        tags_sec = tags_section(&meta.tags);
        all.push((tag::TAGS, &tags_sec));
        TAGS_VERSION
    };
    if matches!(meta.variant, GameRules::Lichess(_)) {
        version = VARIANTS_VERSION;
    }
    let out = frame(&meta.id, version, &all);
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
    seal(
        meta,
        &[(tag::GAME, &game_sec), (tag::MOVES, &moves.section())],
    )
}

/// Builds the record of a game whose history is already in `enc` (kept in sync with the
/// game by the caller): GAME and MOVES, or GAME, LOG and (timed games) CLOCK.
pub fn encode_record(meta: &GameMeta, enc: &RecordEncoder) -> Result<Vec<u8>, CodecError> {
    let log = match enc {
        RecordEncoder::Moves(moves) => return encode_with(meta, moves),
        RecordEncoder::Log(log) => log,
    };
    let game_sec = game_section(meta)?;
    let log_sec = log.log_section();
    match log.clock_section(meta.created_unix_ms)? {
        None => seal(meta, &[(tag::GAME, &game_sec), (tag::LOG, &log_sec)]),
        Some(clock_sec) => seal(
            meta,
            &[
                (tag::GAME, &game_sec),
                (tag::LOG, &log_sec),
                (tag::CLOCK, &clock_sec),
            ],
        ),
    }
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

/// The version a record holds (the count of its MOVES or LOG section), read from its
/// framing alone, without the checksum or a replay: for listings and deletes, which need a
/// game's version but not the game. `None` when the framing is broken (a damaged record;
/// [`decode`] says what is wrong).
pub fn peek_version(record: &[u8]) -> Option<u64> {
    let body = record.get(1..record.len().checked_sub(CRC_LEN)?)?;
    let mut pos = 0;
    while pos < body.len() {
        let t = body[pos];
        pos += 1;
        let len = usize::try_from(get_varint(body, &mut pos)?).ok()?;
        let end = pos.checked_add(len).filter(|&e| e <= body.len())?;
        if t == tag::MOVES || t == tag::LOG {
            let mut at = pos;
            return get_varint(&body[..end], &mut at);
        }
        pos = end;
    }
    None
}

/// The version a record holds if its checksum holds (no replay): what a start compares
/// with the commit ledger. `None` for a damaged record.
pub fn checked_version(id: &str, record: &[u8]) -> Option<u64> {
    let (body, sum) = record.split_at(record.len().checked_sub(CRC_LEN)?);
    let stored = u32::from_le_bytes(sum.try_into().ok()?);
    (!body.is_empty() && checksum(id, body) == stored)
        .then(|| peek_version(record))
        .flatten()
}

/// A decoded record: the replayed game and, to seed the store's encoder cache, its
/// encoded history.
pub struct Decoded {
    /// The game and its metadata.
    pub loaded: LoadedGame,
    pub(crate) encoder: RecordEncoder,
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
    let mut tags_sec: Option<&[u8]> = None;
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
            tag::TAGS if body[0] >= TAGS_VERSION => tags_sec = Some(payload),
            tag::TAGS => {
                return Err(CodecError::Framing {
                    offset: start,
                    what: "a tags section in a record of format version 1",
                });
            }
            t if t >= tag::FIRST_OPTIONAL => skipped.push(t),
            t => return Err(CodecError::UnknownRequiredSection { tag: t }),
        }
        pos = end;
    }
    let game_sec = game_sec.ok_or(CodecError::MissingSection {
        name: "game (0x01)",
    })?;

    let mut meta = decode_game_section(id, game_sec, body[0])?;
    if let Some(sec) = tags_sec {
        meta.tags = decode_tags_section(sec)?;
    }
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
        loaded: LoadedGame {
            meta,
            game,
            token: None,
        },
        encoder,
        skipped_sections: skipped,
    })
}

fn decode_game_section(id: &str, sec: &[u8], version: u8) -> Result<GameMeta, CodecError> {
    let bad = |what: &str| CodecError::BadGameSection {
        what: what.to_string(),
    };
    let code = *sec.first().ok_or_else(|| bad("empty"))?;
    let variant = variant_of_code(code, version).ok_or_else(|| CodecError::BadGameSection {
        what: format!("unknown variant code {code} in format version {version}"),
    })?;
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
        tags: crate::lifecycle::Tags::none(),
    })
}
