//! How a [`ServiceError`] becomes a `tonic::Status` (AIP-193): its gRPC code, the
//! `ErrorInfo` (reason, domain, metadata), `BadRequest` field violations, `RetryInfo` and
//! `ResourceInfo`, each message and metadata value bounded. Kept apart from the catalogue
//! (`mod.rs`) so that the enum reads as the list of what a caller can meet, and the wire
//! form of it is in one place.

use std::collections::HashMap;

use tonic::Code;
use tonic_types::{ErrorDetails, StatusExt};

use super::{ServiceError, proto_status_name};
use crate::lifecycle::TimeControlError;
use crate::rules::clip::{clip_to, clipped};
use crate::rules::{Color, PgnError};
use crate::service::edge::auth::Role;
use crate::store::StoreError;

/// The `ErrorInfo.domain` of every error this service returns.
pub const DOMAIN: &str = "chess.v1";

/// The proto enum name of a colour, for metadata.
fn color_name(color: Color) -> &'static str {
    crate::pb::Color::from(color).as_str_name()
}

/// The request field of a time control error.
fn source_field(e: &TimeControlError) -> &'static str {
    match e.field() {
        "increment_ms" => "time_control.increment_ms",
        _ => "time_control.initial_ms",
    }
}

impl ServiceError {
    /// The gRPC status code (AIP-193).
    pub fn code(&self) -> Code {
        use ServiceError::*;
        match self {
            InvalidFen { .. }
            | InvalidMoveText { .. }
            | Pgn(_)
            | PgnTooLarge { .. }
            | InvalidGameId { .. }
            | InvalidTenant(_)
            | MissingField { .. }
            | ConflictingFields { .. }
            | InvalidVariant { .. }
            | InvalidChess960Position { .. }
            | DepthTooLarge { .. }
            | FenRequired { .. }
            | InvalidTimeControl { .. }
            | InvalidClockStart { .. }
            | InvalidAddTime { .. }
            | InvalidView { .. }
            | InvalidTag(_)
            | InvalidPageSize { .. }
            | InvalidPageToken { .. }
            | InvalidStatusFilter { .. }
            | InvalidColor { .. } => Code::InvalidArgument,
            IllegalMove { .. }
            | AmbiguousMove { .. }
            | GameOver { .. }
            | NothingToUndo { .. }
            | NotYourTurn { .. }
            | NotYourMove { .. }
            | DrawOfferPending { .. }
            | NoDrawOffer { .. }
            | OwnDrawOffer { .. }
            | GameUntimed { .. }
            | DrawOfferTooSoon { .. }
            | HistoryFull { .. }
            | ClaimRefused { .. } => Code::FailedPrecondition,
            VersionAhead { .. } => Code::OutOfRange,
            GameNotFound { .. } => Code::NotFound,
            PlyMismatch { .. } | VersionMismatch { .. } | ConcurrentChange { .. } => Code::Aborted,
            GameAlreadyExists { .. } | GameAlreadyExistsWithOtherTags { .. } => Code::AlreadyExists,
            TooManyPerfts { .. } | DiskFull(_) => Code::ResourceExhausted,
            DeadlineExceeded { .. } | PerftTimeLimit { .. } => Code::DeadlineExceeded,
            Cancelled => Code::Cancelled,
            DataLoss(_) => Code::DataLoss,
            Store(_) | Internal(_) => Code::Internal,
            ShuttingDown | StoreUnavailable(_) | StoreStopped(_) => Code::Unavailable,
            TokenMissing | TokenUnknown => Code::Unauthenticated,
            RoleForbids { .. } | EndingIsFinal { .. } | TenantForbidden { .. } => {
                Code::PermissionDenied
            }
            RateLimited(_) | Overloaded { .. } | UnsentAnswersFull { .. } => {
                Code::ResourceExhausted
            }
            MalformedRequest { .. } => Code::InvalidArgument,
            CompressionNotAccepted { .. } | GrpcWebOnGrpcPort { .. } => Code::Unimplemented,
            CompressedWithoutEncoding => Code::Internal,
            TooManyPerftsForCaller { .. } => Code::ResourceExhausted,
        }
    }

    /// Structured facts for `ErrorInfo.metadata`, for callers that act on them.
    pub fn metadata(&self) -> HashMap<String, String> {
        use ServiceError::*;
        let mut m = HashMap::new();
        let mut put = |k: &str, v: String| {
            m.insert(k.to_string(), v);
        };
        match self {
            InvalidFen { source, .. } => put("fen_field", source.field().to_string()),
            InvalidMoveText { id, error }
            | IllegalMove { id, error }
            | AmbiguousMove { id, error } => {
                put("game_id", id.clone());
                if let Some(text) = error.text() {
                    put("move", clipped(text));
                }
            }
            InvalidTag(e) => put("tag", e.tag().to_string()),
            MalformedRequest { problem } => put("problem", problem.clone()),
            CompressionNotAccepted { encoding } => put("encoding", encoding.clone()),
            GrpcWebOnGrpcPort { content_type } => put("content_type", content_type.clone()),
            GameOver { id, status } => {
                put("game_id", id.clone());
                put("status", proto_status_name(*status).to_string());
            }
            NothingToUndo { id }
            | GameNotFound { id }
            | ConcurrentChange { id }
            | GameAlreadyExists { id, .. }
            | GameAlreadyExistsWithOtherTags { id }
            | NoDrawOffer { id }
            | GameUntimed { id }
            | ClaimRefused { id, .. } => put("game_id", id.clone()),
            NotYourTurn {
                id, color, to_move, ..
            } => {
                put("game_id", id.clone());
                put("color", color_name(*color).to_string());
                put("side_to_move", color_name(*to_move).to_string());
            }
            NotYourMove {
                id,
                color,
                last_mover,
            } => {
                put("game_id", id.clone());
                put("color", color_name(*color).to_string());
                put("last_mover", color_name(*last_mover).to_string());
            }
            DrawOfferPending { id, by, .. } => {
                put("game_id", id.clone());
                put("offered_by", color_name(*by).to_string());
            }
            OwnDrawOffer { id, color } | DrawOfferTooSoon { id, color } => {
                put("game_id", id.clone());
                put("offered_by", color_name(*color).to_string());
            }
            HistoryFull { id, limit, .. } => {
                put("game_id", id.clone());
                put("limit_bytes", limit.to_string());
            }
            VersionAhead { id, current, .. } => {
                put("game_id", id.clone());
                put("current_version", current.to_string());
            }
            PlyMismatch {
                id,
                expected,
                current,
            } => {
                put("game_id", id.clone());
                put("current_ply", current.to_string());
                put("expected_ply", expected.to_string());
            }
            VersionMismatch {
                id,
                expected,
                current,
            } => {
                put("game_id", id.clone());
                put("current_version", current.to_string());
                put("expected_version", expected.to_string());
            }
            Pgn(PgnError::Syntax { line, column, .. }) => {
                put("line", line.to_string());
                put("column", column.to_string());
            }
            PgnTooLarge {
                max, line, column, ..
            } => {
                put("line", line.to_string());
                put("column", column.to_string());
                put("max_bytes", max.to_string());
            }
            Pgn(
                PgnError::IllegalMove {
                    ply,
                    move_number,
                    token,
                    line,
                    column,
                    ..
                }
                | PgnError::AmbiguousMove {
                    ply,
                    move_number,
                    token,
                    line,
                    column,
                    ..
                },
            ) => {
                put("ply", ply.to_string());
                put("move_number", move_number.to_string());
                put("token", clipped(token));
                put("line", line.to_string());
                put("column", column.to_string());
                if let Pgn(PgnError::AmbiguousMove { candidates, .. }) = self {
                    put("candidates", candidates.join(","));
                }
            }
            Pgn(PgnError::MultipleGames { line }) => put("line", line.to_string()),
            DepthTooLarge { max, .. } => put("max_depth", max.to_string()),
            TooManyPerfts { max } => put("max_concurrent_perfts", max.to_string()),
            TooManyPerftsForCaller { max } => put("max_perfts_per_caller", max.to_string()),
            Overloaded { limit } => put("max_in_flight", limit.to_string()),
            UnsentAnswersFull { limit_mib } => put("max_unsent_answer_mib", limit_mib.to_string()),
            PerftTimeLimit { seconds } => put("perft_max_seconds", seconds.to_string()),
            DataLoss(StoreError::DataLoss { id, .. }) => put("game_id", id.clone()),
            RoleForbids { role, needed, .. } => {
                put("role", role.to_string());
                put("needed", needed.to_string());
            }
            TenantForbidden { role, tenant, .. } => {
                put("role", role.to_string());
                put("needed", Role::Admin.to_string());
                put("tenant", tenant.clone());
            }
            EndingIsFinal { id, status, role } => {
                put("role", role.to_string());
                put("needed", Role::Admin.to_string());
                put("game_id", id.clone());
                put("status", proto_status_name(*status).to_string());
            }
            RateLimited(limited) => {
                put("quota", limited.quota.to_string());
                put("limit", limited.limit.to_string());
            }
            _ => {}
        }
        m
    }

    /// The malformed request fields, for `BadRequest` (only for INVALID_ARGUMENT).
    pub fn field_violations(&self) -> Vec<(&'static str, String)> {
        use ServiceError::*;
        match self {
            InvalidFen { field, source } => vec![(field, source.to_string())],
            InvalidMoveText { error, .. } => vec![("move", error.to_string())],
            InvalidGameId { why } => vec![("game_id", why.clone())],
            InvalidTenant(why) => vec![("tenant", why.to_string())],
            MissingField { field, why } => vec![(field, (*why).to_string())],
            ConflictingFields { fields, why } => {
                fields.iter().map(|f| (*f, (*why).to_string())).collect()
            }
            InvalidVariant { field, value } => {
                vec![(field, format!("{value} is not a known Variant"))]
            }
            InvalidChess960Position { n } => {
                vec![("chess960_position", format!("{n} is not in 0..=959"))]
            }
            DepthTooLarge { depth, max } => {
                vec![("depth", format!("{depth} is above the maximum {max}"))]
            }
            FenRequired { why } => vec![("fen", (*why).to_string())],
            Pgn(e) => vec![("pgn", e.to_string())],
            PgnTooLarge { .. } => vec![("pgn", self.to_string())],
            InvalidTimeControl { source } => {
                vec![(source_field(source), source.to_string())]
            }
            InvalidColor { field, value } => {
                vec![(field, format!("{value} is not a known Color"))]
            }
            InvalidView { value } => vec![("view", format!("{value} is not a known GameView"))],
            InvalidTag(e) => vec![("tags", e.to_string())],
            InvalidPageSize { why } => vec![("page_size", why.clone())],
            InvalidPageToken { why } => vec![("page_token", why.clone())],
            InvalidStatusFilter { value } => vec![(
                "status_filter",
                format!("{value} is not a known StatusFilter"),
            )],
            InvalidClockStart { value } => vec![(
                "time_control.clock_start",
                format!("{value} is not a known ClockStart"),
            )],
            InvalidAddTime { ms } => vec![(
                "ms",
                format!("{ms} is not in 1 ..= {}", crate::lifecycle::MAX_ADD_TIME_MS),
            )],
            _ => Vec::new(),
        }
    }

    /// The game the error is about, for `ResourceInfo`.
    fn game_resource(&self) -> Option<&str> {
        match self {
            ServiceError::GameNotFound { id } | ServiceError::GameAlreadyExists { id, .. } => {
                Some(id)
            }
            ServiceError::DataLoss(StoreError::DataLoss { id, .. }) => Some(id),
            _ => None,
        }
    }
}

/// A pure conversion: it counts nothing. The glue that answers a caller with the status
/// counts the refusal there (`metrics::refused`), so that a conversion made to inspect or
/// test an error is not counted as a refusal.
impl From<ServiceError> for tonic::Status {
    fn from(e: ServiceError) -> tonic::Status {
        let mut details = ErrorDetails::new();
        // Metadata values are the caller's text, clipped where the error is made
        // (`rules::clip`), or short facts: the backstop bound leaves a clipped text (its
        // marker included) as it is, and bounds whatever a variant holds.
        let metadata = e
            .metadata()
            .into_iter()
            .map(|(k, v)| (k, clip_to(&v, MAX_METADATA_BYTES).into_owned()));
        details.set_error_info(e.reason(), DOMAIN, metadata.collect::<HashMap<_, _>>());
        for (field, description) in e.field_violations() {
            details.add_bad_request_violation(field, bounded(&description));
        }
        if let ServiceError::RateLimited(limited) = &e {
            details.set_retry_info(Some(limited.retry_after));
        }
        if let Some(id) = e.game_resource() {
            details.set_resource_info("chess.v1.Game", id, "", bounded(&e.to_string()));
        }
        tonic::Status::with_error_details(e.code(), bounded(&e.to_string()), details)
    }
}

/// The longest message or description an error carries, in bytes: a backstop behind
/// the clipping of each echo (`rules::clip`), so that no error can make metadata a
/// client refuses, whatever a message repeats.
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// The longest `ErrorInfo` metadata value, in bytes: a clipped text (at most
/// `MAX_ECHO_BYTES` of the caller's, plus its marker) fits.
pub const MAX_METADATA_BYTES: usize = 192;

/// `text` cut at [`MAX_MESSAGE_BYTES`] (at a character boundary), saying so.
fn bounded(text: &str) -> String {
    clip_to(text, MAX_MESSAGE_BYTES).into_owned()
}
