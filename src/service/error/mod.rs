//! Every error a caller can meet, as one enum: each variant knows its gRPC code (AIP-193),
//! its `ErrorInfo` reason, its metadata and the request fields it blames, so the mapping
//! to a `tonic::Status` lives in exactly one place.
//!
//! This file is the catalogue: each variant, its message and its `ErrorReason`, and the
//! constructors from the lower layers' refusals. How an error becomes a `tonic::Status`
//! (its code, `ErrorInfo` metadata, `BadRequest` and the other details) is
//! `grpc_status.rs`; the unit tests of both are in `tests.rs`.

use crate::lifecycle::{Refusal, Status, TimeControlError};
use crate::rules::{Color, FenError, MoveTextError, PgnError};
use crate::service::edge::auth::{RateLimited, Role, TenantError};
use crate::store::StoreError;

mod grpc_status;
#[cfg(test)]
mod tests;

pub use grpc_status::{DOMAIN, MAX_MESSAGE_BYTES, MAX_METADATA_BYTES};

/// Why a call failed. Messages say what was wrong and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// A FEN that does not describe a legal position (`field` is the request field).
    #[error("invalid FEN in '{field}': {source}")]
    InvalidFen {
        /// The request field that held the FEN.
        field: &'static str,
        /// What is wrong with the FEN.
        source: FenError,
    },
    /// Move text that is neither UCI nor SAN.
    #[error("invalid move text: {error}")]
    InvalidMoveText {
        /// The game the move was for.
        id: String,
        /// What is wrong with the text.
        error: MoveTextError,
    },
    /// A well-formed move that the rules do not allow in this position.
    #[error("{error}")]
    IllegalMove {
        /// The game.
        id: String,
        /// The move and why it is illegal.
        error: MoveTextError,
    },
    /// SAN that fits more than one legal move.
    #[error("{error}")]
    AmbiguousMove {
        /// The game.
        id: String,
        /// The move and the legal moves it fits.
        error: MoveTextError,
    },
    /// The game has ended, so it takes no more moves, offers or claims.
    #[error("game '{id}' is over ({status}); undo a move to continue it")]
    GameOver {
        /// The game.
        id: String,
        /// How it ended.
        status: Status,
    },
    /// Undo on a game that has no move to take back.
    #[error("game '{id}' is at its start position: there is no move to undo")]
    NothingToUndo {
        /// The game.
        id: String,
    },
    /// The caller named a side that is not the side to move.
    #[error(
        "it is {to_move}'s turn in game '{id}', not {color}'s: {action} only for the side to move"
    )]
    NotYourTurn {
        /// The game.
        id: String,
        /// The side the caller named.
        color: Color,
        /// The side whose turn it is.
        to_move: Color,
        /// What only the side to move may do ("moves are played"), for the message.
        action: &'static str,
    },
    /// Undo named a side that did not make the last move.
    #[error(
        "the last move in game '{id}' was {last_mover}'s; {color} cannot take it back (name the side whose move it is, or no side)"
    )]
    NotYourMove {
        /// The game.
        id: String,
        /// The side the caller named.
        color: Color,
        /// The side that made the last move.
        last_mover: Color,
    },
    /// A draw offer while an offer is already pending.
    #[error("{}", pending_offer(id, *by, *color))]
    DrawOfferPending {
        /// The game.
        id: String,
        /// The side that made the pending offer.
        by: Color,
        /// The side the request was made for.
        color: Color,
    },
    /// A second draw offer by a side that has not moved since its last one.
    #[error(
        "{color} has already offered a draw in game '{id}' since its last move; a side offers at most once per move of its own (FIDE 9.1.2.1: an offer goes with a move), so offer again after your next move"
    )]
    DrawOfferTooSoon {
        /// The game.
        id: String,
        /// The side that offered.
        color: Color,
    },
    /// An answer to a draw offer when none is pending.
    #[error("no draw offer is pending in game '{id}'; offer one with OfferDraw")]
    NoDrawOffer {
        /// The game.
        id: String,
    },
    /// The side that made the pending draw offer tried to answer it.
    #[error(
        "{color} made the pending draw offer in game '{id}'; only {} can accept or decline it",
        !*color
    )]
    OwnDrawOffer {
        /// The game.
        id: String,
        /// The side that made the offer (and tried to answer it).
        color: Color,
    },
    /// A draw claim the position does not support.
    #[error("game '{id}': {why}")]
    ClaimRefused {
        /// The game.
        id: String,
        /// Why the claim does not hold.
        why: String,
    },
    /// A watch asked to start from a version beyond the game's next one.
    #[error(
        "game '{id}' is at version {current}; from_version {from} is ahead of it (the most is {current} + 1, which streams only new events)"
    )]
    VersionAhead {
        /// The game.
        id: String,
        /// The `from_version` the caller asked for.
        from: u64,
        /// The game's current version.
        current: u64,
    },
    /// A time control the lifecycle does not accept.
    #[error("invalid time_control.{}: {source}", source.field())]
    InvalidTimeControl {
        /// Which value is wrong, and why.
        source: TimeControlError,
    },
    /// A ClockStart enum value that is unknown.
    #[error(
        "invalid time_control.clock_start: {value} is not a known ClockStart; use CLOCK_START_ON_CREATE or CLOCK_START_AFTER_FIRST_MOVES"
    )]
    InvalidClockStart {
        /// The value sent.
        value: i32,
    },
    /// AddTime with zero or more than an hour.
    #[error(
        "invalid ms: {ms} ms cannot be added; add 1 ms to {} ms (an hour) at once",
        crate::lifecycle::MAX_ADD_TIME_MS
    )]
    InvalidAddTime {
        /// The time asked for, in milliseconds.
        ms: u64,
    },
    /// AddTime on a game without clocks.
    #[error(
        "game '{id}' is untimed: it has no clock to add time to (a time control is set when the game is created)"
    )]
    GameUntimed {
        /// The game.
        id: String,
    },
    /// The caller's `expected_version` is not the game's version (it decided on a stale
    /// state).
    #[error(
        "game '{id}' is at version {current}, not the expected version {expected}; read the game (GetGame) and decide again at version {current}"
    )]
    VersionMismatch {
        /// The game.
        id: String,
        /// The version the caller expected.
        expected: u64,
        /// The game's actual version.
        current: u64,
    },
    /// NewGame's PGN tags break a tag rule (one the server owns, a name that is not a PGN
    /// tag name, a value with control characters, too many or too long).
    #[error("invalid tags: {0}")]
    InvalidTag(crate::lifecycle::TagError),
    /// A ListGames page size below 0.
    #[error("invalid page_size: {why}")]
    InvalidPageSize {
        /// Why.
        why: String,
    },
    /// A ListGames page token this server did not make, or made for another filter.
    #[error("invalid page_token: {why}")]
    InvalidPageToken {
        /// Why.
        why: String,
    },
    /// A StatusFilter enum value that is unknown.
    #[error(
        "invalid status_filter: {value} is not a known StatusFilter; use STATUS_FILTER_ALL, STATUS_FILTER_IN_PROGRESS or STATUS_FILTER_ENDED (or leave it unset for all)"
    )]
    InvalidStatusFilter {
        /// The value sent.
        value: i32,
    },
    /// A repeated NewGame on a caller-chosen id whose game has other PGN tags.
    #[error(
        "game '{id}' already exists with other PGN tags; choose another game_id, or repeat the request with no tags or the same tags to get the existing game"
    )]
    GameAlreadyExistsWithOtherTags {
        /// The id.
        id: String,
    },
    /// A GameView enum value that is unknown.
    #[error(
        "invalid view: {value} is not a known GameView; use GAME_VIEW_BASIC or GAME_VIEW_FULL (or leave it unset for the full view)"
    )]
    InvalidView {
        /// The value sent.
        value: i32,
    },
    /// A Color enum value that is not a known Color.
    #[error("invalid {field}: {value} is not a known Color; use COLOR_WHITE or COLOR_BLACK")]
    InvalidColor {
        /// The request field.
        field: &'static str,
        /// The value sent.
        value: i32,
    },
    /// No game is stored under this id.
    #[error("no game with id '{id}'; create it with NewGame")]
    GameNotFound {
        /// The id asked for.
        id: String,
    },
    /// Other writers kept changing the game first, more often than this call retries.
    #[error(
        "game '{id}' kept changing under this call (other writers changed it first, again and again); read it (GetGame) and retry"
    )]
    ConcurrentChange {
        /// The game.
        id: String,
    },
    /// The caller's `expected_ply` is not the game's ply (it decided on a stale position).
    #[error(
        "game '{id}' is at ply {current}, not the expected ply {expected}; read the game (GetGame) and decide again at ply {current}"
    )]
    PlyMismatch {
        /// The game.
        id: String,
        /// The ply the caller expected.
        expected: u32,
        /// The game's actual ply.
        current: u32,
    },
    /// A caller-chosen game id that is already taken (by a game with another start).
    #[error(
        "game '{id}' already exists with another start ({existing}); choose another game_id, or repeat the request with no start or the same start to get the existing game"
    )]
    GameAlreadyExists {
        /// The id.
        id: String,
        /// The existing game's start, as described in the message.
        existing: String,
    },
    /// A game id that breaks the id rules.
    #[error("invalid game_id: {why}")]
    InvalidGameId {
        /// Which rule it breaks.
        why: String,
    },
    /// A ListGames `tenant` that is no tenant name.
    #[error("invalid tenant: {0}")]
    InvalidTenant(TenantError),
    /// ImportGame's `pgn` is not one legal game of PGN: a syntax error (line, column), an
    /// illegal or ambiguous move (ply, move number, token), or more than one game.
    #[error("{0}")]
    Pgn(PgnError),
    /// ImportGame's `pgn` is longer than one game is allowed to be.
    #[error(
        "the pgn is {len} bytes; at most {max} bytes (one game) are imported: the text goes past that at line {line}, column {column}"
    )]
    PgnTooLarge {
        /// The text's length in bytes.
        len: usize,
        /// The most accepted.
        max: usize,
        /// The line of the first character past the limit.
        line: u32,
        /// Its column (in characters).
        column: u32,
    },
    /// A required request field was left empty.
    #[error("missing {field}: {why}")]
    MissingField {
        /// The request field.
        field: &'static str,
        /// Why it is needed.
        why: &'static str,
    },
    /// Request fields that cannot be given together.
    #[error("{why}")]
    ConflictingFields {
        /// The request fields in conflict.
        fields: &'static [&'static str],
        /// Why they conflict, and what to send instead.
        why: &'static str,
    },
    /// A Variant enum value that is unknown.
    #[error(
        "invalid {field}: {value} is not a known Variant; use one of the Variant values, such as VARIANT_STANDARD"
    )]
    InvalidVariant {
        /// The request field.
        field: &'static str,
        /// The value sent.
        value: i32,
    },
    /// A Chess960 position number outside 0 to 959.
    #[error(
        "invalid chess960_position: {n} does not exist; Chess960 positions are numbered 0 to 959"
    )]
    InvalidChess960Position {
        /// The number sent.
        n: u32,
    },
    /// A perft depth above the server's configured maximum.
    #[error(
        "depth {depth} is above this server's maximum perft depth {max}; ask for depth {max} or less"
    )]
    DepthTooLarge {
        /// The depth asked for.
        depth: u32,
        /// The server's maximum perft depth.
        max: u32,
    },
    /// A request that needs a FEN sent none (a Chess960 perft).
    #[error("{why}")]
    FenRequired {
        /// Why a FEN is needed.
        why: &'static str,
    },
    /// Every perft slot is busy (or perft is turned off: `max` is 0).
    #[error("{}", too_many_perfts(*max))]
    TooManyPerfts {
        /// How many perfts the server runs at once.
        max: usize,
    },
    /// The call's deadline passed before it finished.
    #[error("the deadline of the call passed before {method} finished")]
    DeadlineExceeded {
        /// The method that ran out of time.
        method: &'static str,
    },
    /// The caller cancelled the call (or hung up).
    #[error("the call was cancelled")]
    Cancelled,
    /// The stored game is damaged and cannot be served.
    #[error("{0}")]
    DataLoss(StoreError),
    /// The store failed (I/O); the game itself is not known to be damaged.
    #[error("{0}")]
    Store(StoreError),
    /// The server (and its store) is shutting down.
    #[error("the server is shutting down; retry on another instance or after it restarts")]
    ShuttingDown,
    /// The game database cannot be reached: nothing was changed that is known to be lost;
    /// retry with backoff.
    #[error("{0}; retry with backoff")]
    StoreUnavailable(StoreError),
    /// The disk of the embedded store is full: the change is not acknowledged, and the
    /// server stops (fail-stop) so that it restarts from what is on disk.
    #[error(
        "{0}; this change is not acknowledged and the server is stopping: it restarts from what is on disk once space is freed (read the game again then: the change may or may not be there)"
    )]
    DiskFull(StoreError),
    /// The embedded store stopped after a failed or uncertain write or sync (fail-stop).
    #[error(
        "{0}: retry on another instance or after the restart (a change answered with this error may or may not be there then: read the game)"
    )]
    StoreStopped(StoreError),
    /// A change that does not end the game, on a game whose history is full.
    #[error(
        "game '{id}' has a full history: its record would be {len} bytes, and changes that do not end the game stop at {limit} bytes, so moves and take-backs are refused; what still works: Resign, ClaimDraw (also with the move that completes the claim), OfferDraw and RespondToDraw (a draw by agreement), the clock's flag, and every read"
    )]
    HistoryFull {
        /// The game.
        id: String,
        /// The size the record would have had.
        len: usize,
        /// The limit for changes that do not end the game.
        limit: usize,
    },
    /// A bug: something that should not happen did.
    #[error("internal error: {0}")]
    Internal(String),
    /// The server needs a bearer token and the call sent none.
    #[error("this server needs a token: send the header 'authorization: Bearer TOKEN'")]
    TokenMissing,
    /// The bearer token is not in the server's token table.
    #[error("the bearer token is not one this server knows; ask its operator for a token")]
    TokenUnknown,
    /// The caller's role is below the one the method needs.
    #[error("{caller} has the role {role}; {method} needs the role {needed} or above")]
    RoleForbids {
        /// The caller's name.
        caller: String,
        /// The caller's role.
        role: Role,
        /// The least role the method needs.
        needed: Role,
        /// The method called.
        method: &'static str,
    },
    /// A ListGames `tenant` naming a tenant the caller may not list: only an admin of no
    /// tenant lists another tenant's games.
    #[error(
        "{caller} may list only its own tenant's games; listing tenant '{tenant}' needs an admin token of no tenant"
    )]
    TenantForbidden {
        /// The caller's name.
        caller: String,
        /// The caller's role.
        role: Role,
        /// The tenant asked for.
        tenant: String,
    },
    /// Undo of an ending that is not on the board (resignation, agreed draw, timeout) by a
    /// caller below admin.
    #[error(
        "game '{id}' is over ({status}); with the role {role} that ending is final: only the role admin may undo it"
    )]
    EndingIsFinal {
        /// The game.
        id: String,
        /// How it ended.
        status: Status,
        /// The caller's role.
        role: Role,
    },
    /// More calls are in flight across the server than `--max-in-flight` allows: the call
    /// was shed, not queued.
    #[error(
        "the server is overloaded: {limit} calls are in flight, the most it handles at once (--max-in-flight); retry with backoff or on another instance"
    )]
    Overloaded {
        /// The server's limit of calls in flight.
        limit: usize,
    },
    /// The answer is large and the server already holds `--max-unsent-answer-mib` of
    /// large answers that callers have not read yet: the call was shed.
    #[error(
        "the server is overloaded: it holds {limit_mib} MiB of large answers not yet read by their callers, the most it keeps (--max-unsent-answer-mib); retry with backoff (or ask for a smaller page) or on another instance"
    )]
    UnsentAnswersFull {
        /// The budget, in MiB.
        limit_mib: usize,
    },
    /// A perft ran longer than the server allows (`--perft-max-seconds`), whatever the
    /// caller's deadline.
    #[error(
        "Perft ran for {seconds} s, the longest this server allows (--perft-max-seconds); ask for a smaller depth, or use divide and count the subtrees in separate calls"
    )]
    PerftTimeLimit {
        /// The server's limit, in seconds.
        seconds: u64,
    },
    /// The caller is over one of its quotas.
    #[error(
        "over this caller's quota of {} {}; retry in {} ms",
        .0.limit,
        .0.quota,
        .0.retry_after.as_millis().max(1)
    )]
    RateLimited(RateLimited),
    /// The request's bytes are not the method's request message (tonic's decoder refused
    /// them): the caller's fault, not the server's.
    #[error(
        "the request is not a valid request message of this method ({problem}); send the method's request message, encoded as protobuf, in one gRPC frame"
    )]
    MalformedRequest {
        /// What the decoder said (clipped).
        problem: String,
    },
    /// A `grpc-encoding` this server does not decompress.
    #[error(
        "the request is compressed with '{encoding}', which this server does not decompress; send it uncompressed (grpc-encoding identity)"
    )]
    CompressionNotAccepted {
        /// The encoding named (clipped).
        encoding: String,
    },
    /// A message marked compressed without a `grpc-encoding` (INTERNAL, as the gRPC
    /// compression spec demands).
    #[error(
        "protocol error: a message has its compressed flag set but the request names no grpc-encoding; send it uncompressed (flag 0)"
    )]
    CompressedWithoutEncoding,
    /// A gRPC-Web request on the main port, which speaks gRPC only.
    #[error(
        "this is the gRPC port, and the request is gRPC-Web (content-type {content_type}); send gRPC-Web to the server's gRPC-Web listener (--grpc-web-listen, CHESS_GRPC_WEB_LISTEN), or call this port with a gRPC client"
    )]
    GrpcWebOnGrpcPort {
        /// The request's content type (clipped).
        content_type: String,
    },
    /// The caller already has `--perft-max-per-caller` perfts computing.
    #[error(
        "this caller already has {max} perfts computing, the most one caller may (--perft-max-per-caller; a caller is a token, or a connection on a server without tokens); wait for one to finish"
    )]
    TooManyPerftsForCaller {
        /// The server's bound per caller.
        max: usize,
    },
}

fn pending_offer(id: &str, by: Color, color: Color) -> String {
    if by == color {
        format!(
            "{by}'s draw offer in game '{id}' is already pending; wait for {}'s answer",
            !by
        )
    } else {
        format!(
            "{by} has offered a draw in game '{id}'; {color} can accept or decline it with RespondToDraw"
        )
    }
}

/// The proto enum name of a status (`GAME_STATUS_CHECKMATE`), for messages and metadata;
/// not the stored column value (`store::postgres::stored_status_name`).
pub fn proto_status_name(status: Status) -> &'static str {
    crate::pb::GameStatus::from(status).as_str_name()
}

impl ServiceError {
    /// Sorts a refused move text into malformed (INVALID_ARGUMENT), ambiguous or illegal
    /// (both FAILED_PRECONDITION: the text is fine, the position does not allow it).
    pub fn from_move_text(id: &str, error: MoveTextError) -> ServiceError {
        let id = id.to_string();
        if error.is_syntax() {
            ServiceError::InvalidMoveText { id, error }
        } else if error.is_ambiguous() {
            ServiceError::AmbiguousMove { id, error }
        } else {
            ServiceError::IllegalMove { id, error }
        }
    }

    /// Why the lifecycle refused a request on game `id`. `action` completes the
    /// NOT_YOUR_TURN message ("moves are played", "a draw is claimed").
    pub fn from_refusal(id: &str, refusal: Refusal, action: &'static str) -> ServiceError {
        let id = id.to_string();
        match refusal {
            Refusal::GameOver(status) => ServiceError::GameOver { id, status },
            Refusal::NotYourTurn { color, to_move } => ServiceError::NotYourTurn {
                id,
                color,
                to_move,
                action,
            },
            Refusal::NotYourMove { color, last_mover } => ServiceError::NotYourMove {
                id,
                color,
                last_mover,
            },
            Refusal::Move(e) => ServiceError::from_move_text(&id, e),
            Refusal::NothingToUndo => ServiceError::NothingToUndo { id },
            Refusal::DrawOfferPending { by, color } => {
                ServiceError::DrawOfferPending { id, by, color }
            }
            Refusal::NoDrawOffer => ServiceError::NoDrawOffer { id },
            Refusal::OfferAgainAfterMove { color } => ServiceError::DrawOfferTooSoon { id, color },
            Refusal::OwnDrawOffer { color } => ServiceError::OwnDrawOffer { id, color },
            Refusal::ClaimRefused { why } => ServiceError::ClaimRefused { id, why },
            Refusal::Untimed => ServiceError::GameUntimed { id },
            Refusal::AddTimeOutOfRange { ms } => ServiceError::InvalidAddTime { ms },
            Refusal::Inconsistent(e) => {
                ServiceError::Internal(format!("game '{id}' refused its own event: {e}"))
            }
        }
    }

    /// A store failure while serving game `id`: damage is DATA_LOSS for that game alone.
    pub fn from_store(e: StoreError) -> ServiceError {
        match e {
            StoreError::DataLoss { .. } => ServiceError::DataLoss(e),
            StoreError::AlreadyExists { id } => ServiceError::GameAlreadyExists {
                id,
                existing: "a game stored under this id".into(),
            },
            StoreError::Closed => ServiceError::ShuttingDown,
            StoreError::Conflict { id, .. } => ServiceError::ConcurrentChange { id },
            StoreError::Unavailable(_) => ServiceError::StoreUnavailable(e),
            // A rollback is found only at open, before anything is served.
            StoreError::Io(_) | StoreError::Rollback(_) => ServiceError::Store(e),
            StoreError::DiskFull(_) => ServiceError::DiskFull(e),
            StoreError::Stopped(_) => ServiceError::StoreStopped(e),
            StoreError::HistoryFull { id, len, limit } => {
                ServiceError::HistoryFull { id, len, limit }
            }
        }
    }

    /// The `ErrorInfo.reason` as the proto's `ErrorReason`: every reason this server
    /// sends is one of its values (the type makes sure of it).
    pub fn error_reason(&self) -> crate::pb::ErrorReason {
        use crate::pb::ErrorReason as R;
        use ServiceError::*;
        match self {
            InvalidFen { .. } => R::InvalidFen,
            InvalidMoveText { .. } => R::InvalidMoveText,
            IllegalMove { .. } => R::IllegalMove,
            AmbiguousMove { .. } => R::AmbiguousMove,
            GameOver { .. } => R::GameOver,
            NothingToUndo { .. } => R::NothingToUndo,
            NotYourTurn { .. } | NotYourMove { .. } => R::NotYourTurn,
            DrawOfferPending { .. } => R::DrawOfferPending,
            NoDrawOffer { .. } => R::NoDrawOffer,
            DrawOfferTooSoon { .. } => R::DrawOfferTooSoon,
            HistoryFull { .. } => R::HistoryFull,
            DiskFull(_) => R::DiskFull,
            StoreStopped(_) => R::StoreStopped,
            OwnDrawOffer { .. } => R::OwnDrawOffer,
            ClaimRefused { .. } => R::ClaimRefused,
            VersionAhead { .. } => R::VersionAhead,
            InvalidTimeControl { .. } | InvalidClockStart { .. } => R::InvalidTimeControl,
            InvalidAddTime { .. } => R::InvalidAddTime,
            GameUntimed { .. } => R::GameUntimed,
            VersionMismatch { .. } => R::VersionMismatch,
            InvalidColor { .. } => R::InvalidColor,
            InvalidView { .. } => R::InvalidView,
            InvalidTag(_) => R::InvalidTag,
            InvalidPageSize { .. } => R::InvalidPageSize,
            InvalidPageToken { .. } => R::InvalidPageToken,
            InvalidStatusFilter { .. } => R::InvalidStatusFilter,
            GameNotFound { .. } => R::GameNotFound,
            PlyMismatch { .. } => R::PlyMismatch,
            ConcurrentChange { .. } => R::ConcurrentChange,
            GameAlreadyExists { .. } | GameAlreadyExistsWithOtherTags { .. } => {
                R::GameAlreadyExists
            }
            InvalidGameId { .. } => R::InvalidGameId,
            InvalidTenant(_) => R::InvalidTenant,
            MissingField { .. } => R::MissingField,
            Pgn(PgnError::Syntax { .. }) | PgnTooLarge { .. } => R::PgnSyntax,
            Pgn(PgnError::IllegalMove { .. }) => R::PgnIllegalMove,
            Pgn(PgnError::AmbiguousMove { .. }) => R::PgnAmbiguousMove,
            Pgn(PgnError::MultipleGames { .. }) => R::PgnMultipleGames,
            ConflictingFields { .. } => R::ConflictingFields,
            InvalidVariant { .. } => R::InvalidVariant,
            InvalidChess960Position { .. } => R::InvalidChess960Position,
            DepthTooLarge { .. } => R::DepthTooLarge,
            FenRequired { .. } => R::FenRequired,
            TooManyPerfts { .. } | TooManyPerftsForCaller { .. } => R::TooManyPerfts,
            DeadlineExceeded { .. } | PerftTimeLimit { .. } => R::DeadlineExceeded,
            Cancelled => R::Cancelled,
            DataLoss(_) => R::DataLoss,
            Store(_) => R::StoreFailure,
            ShuttingDown => R::ShuttingDown,
            StoreUnavailable(_) => R::StoreUnavailable,
            Internal(_) => R::Internal,
            TokenMissing => R::TokenMissing,
            TokenUnknown => R::TokenUnknown,
            RoleForbids { .. } | EndingIsFinal { .. } | TenantForbidden { .. } => R::RoleForbids,
            RateLimited(_) => R::RateLimited,
            Overloaded { .. } | UnsentAnswersFull { .. } => R::Overloaded,
            MalformedRequest { .. } => R::MalformedRequest,
            CompressionNotAccepted { .. } | CompressedWithoutEncoding => R::UnsupportedCompression,
            GrpcWebOnGrpcPort { .. } => R::GrpcWebOnGrpcPort,
        }
    }

    /// The `ErrorInfo.reason`: stable, UPPER_SNAKE, what callers branch on (the
    /// `ErrorReason` value's name).
    pub fn reason(&self) -> &'static str {
        self.error_reason().as_str_name()
    }
}

/// The message of [`ServiceError::TooManyPerfts`]: a server configured with no perft slots
/// says so rather than asking the caller to retry.
fn too_many_perfts(max: usize) -> String {
    if max == 0 {
        "Perft is turned off on this server (--perft-max-concurrent 0)".into()
    } else {
        format!(
            "{max} perft computations are already running, the most this server allows at once; retry later"
        )
    }
}
