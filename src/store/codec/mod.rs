//! The stored record of one game: a versioned, sectioned, checksummed byte string holding
//! the start position, the creation time and the game's history, each move as its index
//! in the position's [`legal_moves_sorted`] order written with a truncated binary code.
//! `docs/STORAGE.md` gives the exact byte layout.
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
//!
//! The modules follow the layers of the format: `bits` (varints, bit strings, the code of
//! one choice), `moves` (the MOVES section), `log` (the LOG and CLOCK sections) and
//! `record` (framing, checksum, the GAME section, the choice of form). The product uses
//! [`encode`] and [`decode`]; the encoder internals that tests and benchmarks reach are
//! in `testing`, which only the `testing` cargo feature builds.
//!
//! [`legal_moves_sorted`]: crate::rules::Position::legal_moves_sorted
//! [`Match::apply`]: crate::lifecycle::Match::apply
#![warn(missing_docs)]

mod bits;
mod log;
mod moves;
mod record;

use crate::lifecycle::ReplayError;

use super::Start;

pub use record::{Decoded, checked_version, decode, encode, peek_version};
pub(crate) use record::{RecordEncoder, check_start, encode_record};

/// The newest record format this build writes and reads. A game without tags is still
/// written as version 1 (byte for byte as before, so a build before tags reads it); a
/// game with tags as version 2, which adds the TAGS section (`0x05`); a game in one of
/// lichess's variants as version 3, which adds their variant codes (and whose MOVES and
/// LOG sections index drops like any move).
pub const FORMAT_VERSION: u8 = 3;

/// The format version that holds PGN tags (section `0x05` TAGS).
pub const TAGS_VERSION: u8 = 2;

/// The format version that holds games in lichess's variants (GAME section variant codes
/// 2..=8).
pub const VARIANTS_VERSION: u8 = 3;

/// A game still going is refused a change that would take its record past this many
/// bytes, unless the change only offers or answers a draw (FAILED_PRECONDITION,
/// `HISTORY_FULL`). Only moves and take-backs fill a history this far (a side offers a
/// draw at most once per move of its own): about 40,000 take-backs of a move. It is the
/// hard limit of earlier builds, so a game they filled can still be ended.
pub const HISTORY_LIMIT: usize = 64 * 1024;

/// The room kept above [`HISTORY_LIMIT`] for what may follow a full history: at most
/// two draw offers and their answers (no move fits any more, so no side can offer
/// twice) and the ending (at most a lapse, the announced move and the claim), so that a
/// resignation, a flag fall or an agreed or claimed draw is always accepted. Each such
/// event takes under 2 bytes of log plus, in a timed game, a time varint of at most 10
/// bytes: under 100 bytes in all, so 2 KiB is ample.
pub const ENDING_ROOM: usize = 2 * 1024;

/// Records larger than this are refused when written (the hard limit). A 600-ply game
/// takes about 500 bytes; the limit keeps every record far below sled's blob threshold
/// (about 128 KiB: a segment of 512 KiB over 4), so sled never writes a record to a
/// separate blob file on its own.
pub const MAX_RECORD_LEN: usize = HISTORY_LIMIT + ENDING_ROOM;

/// Refuses a record of `len` bytes for `game` past [`HISTORY_LIMIT`] when `game` is
/// still going and the events after version `since` include a move or a take-back
/// (what the caller's change appended). Both stores call it on the record they are
/// about to write.
pub fn check_history_room(
    len: usize,
    game: &crate::lifecycle::Match,
    since: u64,
) -> Result<(), CodecError> {
    use crate::lifecycle::Event;
    if len <= HISTORY_LIMIT || game.status().is_over() {
        return Ok(());
    }
    let appended = game
        .log()
        .get(usize::try_from(since).unwrap_or(usize::MAX)..)
        .unwrap_or_default();
    let offers_only = !appended.is_empty()
        && appended
            .iter()
            .all(|e| matches!(e.event, Event::DrawOffered(_) | Event::DrawDeclined));
    if offers_only {
        return Ok(());
    }
    Err(CodecError::HistoryFull { len })
}

/// The store's error for a record of game `id` that cannot be written: a full history
/// is [`super::StoreError::HistoryFull`] (the caller's change is refused), anything else
/// a bug ([`super::StoreError::Io`]).
pub fn store_error(id: &str, e: CodecError) -> super::StoreError {
    match e {
        CodecError::HistoryFull { len } => super::StoreError::HistoryFull {
            id: id.to_string(),
            len,
            limit: HISTORY_LIMIT,
        },
        e => super::StoreError::Io(format!("internal error: cannot store game '{id}': {e}")),
    }
}

/// Why a record could not be written or read. Every decoding variant means the stored
/// bytes cannot be trusted: the store answers DATA_LOSS for that game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// Too short for a version byte and a checksum.
    #[error("record is {len} bytes, too short to hold a version byte and a checksum")]
    TooShort {
        /// The record's length.
        len: usize,
    },
    /// The checksum does not match: damaged bytes, or a record of another id.
    #[error(
        "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the record's bytes were damaged or belong to another game id"
    )]
    Checksum {
        /// The checksum in the record.
        stored: u32,
        /// The checksum of its bytes under the id.
        computed: u32,
    },
    /// Written by a newer build, in a format this one does not read.
    #[error(
        "record format version {found} is newer than this build reads (up to {FORMAT_VERSION}): run a newer build of the service"
    )]
    NewerVersion {
        /// The record's format version.
        found: u8,
    },
    /// Format version 0, which no build writes.
    #[error("record format version 0 does not exist")]
    ZeroVersion,
    /// A section's tag and length do not fit the record.
    #[error("section framing is broken at byte {offset}: {what}")]
    Framing {
        /// Where the broken section starts.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// A required section this build does not know.
    #[error(
        "required section {tag:#04x} is not known to this build (format {FORMAT_VERSION}): run a newer build of the service"
    )]
    UnknownRequiredSection {
        /// The section's tag.
        tag: u8,
    },
    /// Sections not in increasing tag order.
    #[error("section {tag:#04x} appears out of order or twice")]
    SectionOrder {
        /// The tag out of order.
        tag: u8,
    },
    /// A required section is missing.
    #[error("required section {name} is missing")]
    MissingSection {
        /// The missing section.
        name: &'static str,
    },
    /// The GAME section does not decode.
    #[error("the game section is malformed: {what}")]
    BadGameSection {
        /// What is wrong.
        what: String,
    },
    /// The MOVES section does not decode.
    #[error("the moves section is malformed: {what}")]
    BadMovesSection {
        /// What is wrong.
        what: String,
    },
    /// A move of the MOVES section does not replay through the rules.
    #[error("replay failed at ply {ply}: {what}")]
    Replay {
        /// The ply of the move.
        ply: usize,
        /// What is wrong.
        what: String,
    },
    /// The LOG section does not decode.
    #[error("the log section is malformed: {what}")]
    BadLogSection {
        /// What is wrong.
        what: String,
    },
    /// The CLOCK section does not decode.
    #[error("the clock section is malformed: {what}")]
    BadClockSection {
        /// What is wrong.
        what: String,
    },
    /// An event of the LOG section does not replay through the lifecycle.
    #[error("replay of the log failed at {0}")]
    LogReplay(ReplayError),
    /// An event kind this build does not know.
    #[error(
        "event {version} has kind {kind}, which this build does not know: run a newer build of the service"
    )]
    UnknownEventKind {
        /// The event's version.
        version: u64,
        /// Its kind code.
        kind: u32,
    },
    /// The TAGS section does not decode, or holds tags a game cannot have.
    #[error("the tags section is malformed: {what}")]
    BadTagsSection {
        /// What is wrong.
        what: String,
    },
    /// A clock mode this build does not know.
    #[error("clock mode {mode} is not known to this build: run a newer build of the service")]
    UnknownClockMode {
        /// The mode code.
        mode: u8,
    },
    /// Encoding: the clock did not start at the creation time of the metadata.
    #[error(
        "cannot encode: the game's clock started at {clock} ms, but its metadata says it was created at {created} ms"
    )]
    CreatedMismatch {
        /// When the clock started (ms since the epoch).
        clock: u64,
        /// The metadata's creation time.
        created: u64,
    },
    /// Encoding: an event the log cannot hold.
    #[error("cannot encode: event {version} ({what}) does not fit the log: {why}")]
    BadEvent {
        /// The event's version.
        version: u64,
        /// What kind of event it is.
        what: &'static str,
        /// Why it does not fit.
        why: String,
    },
    /// Encoding: the game does not start where its metadata says.
    #[error(
        "cannot encode: the game's start position is not the one its metadata names ({start:?})"
    )]
    StartMismatch {
        /// The start the metadata names.
        start: Start,
    },
    /// Encoding: the metadata names a start that does not exist.
    #[error("cannot encode: the metadata's start is invalid: {what}")]
    BadStart {
        /// What is wrong with it.
        what: String,
    },
    /// Encoding: a move that is not legal where it stands.
    #[error("cannot encode: move {ply} ({mv}) is not legal in the position before it")]
    NotLegal {
        /// The ply of the move.
        ply: usize,
        /// The move.
        mv: String,
    },
    /// Encoding: a change that does not end the game would take the record past
    /// [`HISTORY_LIMIT`] (see [`check_history_room`]).
    #[error(
        "the history is full: the record would be {len} bytes, above the {HISTORY_LIMIT}-byte limit for changes that do not end the game"
    )]
    HistoryFull {
        /// The record's length.
        len: usize,
    },
    /// Encoding: the record would exceed [`MAX_RECORD_LEN`].
    #[error(
        "cannot encode: the record would be {len} bytes, above the {MAX_RECORD_LEN}-byte limit"
    )]
    TooLarge {
        /// The record's length.
        len: usize,
    },
}

#[cfg(feature = "testing")]
impl Decoded {
    /// The encoded history the store caches (tests check its size).
    pub fn encoder(&self) -> &RecordEncoder {
        &self.encoder
    }
}

/// What tests and benchmarks reach below [`encode`] and [`decode`]: the incremental
/// encoders, hand-built records, the move order and the size measure. Built only with
/// the `testing` cargo feature (on for `cargo test` and `cargo bench`), so none of it is
/// part of the product's API.
#[cfg(feature = "testing")]
pub mod testing {
    pub use super::bits::{BitWriter, put_index, put_varint};
    pub use super::log::LogEncoder;
    pub use super::moves::{MoveEncoder, move_bits, order_key};
    pub use super::record::{RecordEncoder, checksum, encode_record, encode_with, frame, tag};
}
