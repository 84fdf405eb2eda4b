//! The LOG and CLOCK sections: every event of the game's log (one tag bit each, moves
//! coded as in MOVES, other events as a 4-bit kind and payload bits) and, for a timed
//! game, the time control and each event's time; encoded incrementally ([`LogEncoder`])
//! and replayed through the lifecycle on reading.

use crate::lifecycle::{ClaimRule, ClockStart, Event, LogEntry, Match, ReplayError, TimeControl};
use crate::rules::{Color, GamePosition, Move};

use super::CodecError;
use super::bits::{BitReader, BitWriter, check_padding, get_varint, put_index, put_varint};
use super::moves::{move_index, read_move};

/// Event kinds after a log entry's tag bit 1 (4 bits; 11..=15 are reserved, and a reader
/// that meets one refuses the record: "run a newer build"). 9 and 10 came with the
/// winnability solver: builds before it refuse records that hold them the same way.
mod kind {
    pub const UNDO: u32 = 0;
    pub const DRAW_OFFERED: u32 = 1;
    pub const DRAW_DECLINED: u32 = 2;
    pub const DRAW_LAPSED: u32 = 3;
    pub const DRAW_ACCEPTED: u32 = 4;
    pub const RESIGNED: u32 = 5;
    pub const DRAW_CLAIMED: u32 = 6;
    pub const FLAG_FELL: u32 = 7;
    /// Payload: 1 bit colour, then the milliseconds in [`super::ADD_TIME_BITS`] bits.
    pub const TIME_ADDED: u32 = 8;
    pub const DEAD_POSITION: u32 = 9;
    pub const FLAG_FELL_UNWINNABLE: u32 = 10;
    pub const BITS: u32 = 4;
}

/// Width of the milliseconds of a TIME_ADDED event: 2^22 ms is above the most added at
/// once ([`crate::lifecycle::MAX_ADD_TIME_MS`], an hour), which the replay enforces.
const ADD_TIME_BITS: u32 = 22;
const _: () = assert!(crate::lifecycle::MAX_ADD_TIME_MS < 1 << ADD_TIME_BITS);

/// Clock mode: Fischer increment, the clock running from the game's creation.
const CLOCK_FISCHER: u8 = 0;
/// Clock mode: Fischer increment, no clock running until both sides' first moves
/// ([`ClockStart::AfterFirstMoves`]). A build that knows only mode 0 refuses it ("run a
/// newer build") instead of running the clocks from the creation.
const CLOCK_FISCHER_AFTER_FIRST_MOVES: u8 = 1;

/// Writes one event: tag bit 0 and the move's index among the legal moves of `before`
/// (as in MOVES), or tag bit 1, the 4-bit kind and its payload bits.
fn put_event(
    bits: &mut BitWriter,
    event: Event,
    before: Option<&GamePosition>,
) -> Result<(), String> {
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
        Event::DeadPosition => (kind::DEAD_POSITION, 0, 0),
        Event::FlagFellUnwinnable => (kind::FLAG_FELL_UNWINNABLE, 0, 0),
        Event::TimeAdded { color, ms } => {
            let ms = u32::try_from(ms)
                .ok()
                .filter(|&v| v < 1 << ADD_TIME_BITS)
                .ok_or_else(|| format!("{ms} ms does not fit {ADD_TIME_BITS} bits"))?;
            bits.push(1, 1);
            bits.push(kind::TIME_ADDED, kind::BITS);
            bits.push(color.index() as u32, 1);
            bits.push(ms, ADD_TIME_BITS);
            return Ok(());
        }
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
    start: GamePosition,
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
    pub(super) fn new(start: GamePosition, clock: Option<(TimeControl, u64)>) -> LogEncoder {
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

    /// The start position the events are replayed from.
    pub fn start(&self) -> &GamePosition {
        &self.start
    }

    /// The packed events. For tests (`testing` feature).
    #[cfg(feature = "testing")]
    pub fn bits(&self) -> &BitWriter {
        &self.bits
    }

    /// The LOG section's payload: the event count and the packed events.
    pub(super) fn log_section(&self) -> Vec<u8> {
        let bytes = self.bits.as_bytes();
        let mut sec = Vec::with_capacity(bytes.len() + 3);
        put_varint(&mut sec, self.entries.len() as u64);
        sec.extend_from_slice(bytes);
        sec
    }

    /// The CLOCK section's payload (`None` for an untimed game): the clock mode, the time
    /// control and each event's time. `created` is the metadata's creation time, which
    /// must be the one the clock started at.
    pub(super) fn clock_section(&self, created: u64) -> Result<Option<Vec<u8>>, CodecError> {
        let Some((control, clock_start)) = self.clock else {
            return Ok(None);
        };
        if clock_start != created {
            return Err(CodecError::CreatedMismatch {
                clock: clock_start,
                created,
            });
        }
        let mut sec = Vec::with_capacity(self.times.len() + 8);
        sec.push(match control.clock_start() {
            ClockStart::OnCreate => CLOCK_FISCHER,
            ClockStart::AfterFirstMoves => CLOCK_FISCHER_AFTER_FIRST_MOVES,
        });
        put_varint(&mut sec, control.initial_ms());
        put_varint(&mut sec, control.increment_ms());
        sec.extend_from_slice(&self.times);
        Ok(Some(sec))
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

    fn push(&mut self, entry: LogEntry, before: Option<&GamePosition>) -> Result<(), CodecError> {
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

/// The CLOCK section: the time control, and the bytes of the event times.
pub(super) fn decode_clock_section(sec: &[u8]) -> Result<(TimeControl, &[u8]), CodecError> {
    let bad = |what: &str| CodecError::BadClockSection {
        what: what.to_string(),
    };
    let clock_start = match sec.first() {
        Some(&CLOCK_FISCHER) => ClockStart::OnCreate,
        Some(&CLOCK_FISCHER_AFTER_FIRST_MOVES) => ClockStart::AfterFirstMoves,
        Some(&mode) => return Err(CodecError::UnknownClockMode { mode }),
        None => return Err(bad("empty")),
    };
    let mut pos = 1;
    let initial = get_varint(sec, &mut pos).ok_or_else(|| bad("bad initial time"))?;
    let increment = get_varint(sec, &mut pos).ok_or_else(|| bad("bad increment"))?;
    let control = TimeControl::new(initial, increment)
        .map_err(|e| CodecError::BadClockSection {
            what: e.to_string(),
        })?
        .with_clock_start(clock_start);
    Ok((control, &sec[pos..]))
}

/// Replays the log section (and, for a timed game, the times after the CLOCK section's
/// time control) from `start`, validating every event through the lifecycle.
pub(super) fn replay_log(
    start: GamePosition,
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
                kind::DEAD_POSITION => Event::DeadPosition,
                kind::FLAG_FELL_UNWINNABLE => Event::FlagFellUnwinnable,
                kind::TIME_ADDED => Event::TimeAdded {
                    color: color_of_bit(read(1)?),
                    ms: u64::from(read(ADD_TIME_BITS)?),
                },
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
