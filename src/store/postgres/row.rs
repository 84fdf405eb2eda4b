//! A game's row: the columns a game's state gives (`Row`), a game read back from its
//! record (checked against the row's version), and the `token` column's conversions to
//! the store's [`Stamp`].

use super::errors::to_i64;
use crate::lifecycle::{Match, Status};
use crate::store::codec;
use crate::store::encoder_cache::{self, CachedEncoder};
use crate::store::{GameMeta, Stamp, StoreError};

/// The status column's value (`checkmate`): a stable name for listing by status, kept
/// apart from the proto enum name a caller reads (`service::error::proto_status_name`).
pub fn stored_status_name(status: Status) -> &'static str {
    match status {
        Status::InProgress => "in_progress",
        Status::Checkmate { .. } => "checkmate",
        Status::Stalemate => "stalemate",
        Status::InsufficientMaterial => "insufficient_material",
        Status::FivefoldRepetition => "fivefold_repetition",
        Status::SeventyFiveMoves => "seventy_five_moves",
        Status::VariantWin { .. } => "variant_win",
        Status::VariantDraw => "variant_draw",
        Status::Resignation { .. } => "resignation",
        Status::DrawAgreement => "draw_agreement",
        Status::DrawClaimedThreefold => "draw_claimed_threefold",
        Status::DrawClaimedFiftyMoves => "draw_claimed_fifty_moves",
        Status::OutOfTime { .. } => "out_of_time",
        Status::DrawTimeoutInsufficientMaterial => "draw_timeout_insufficient_material",
        Status::DrawDeadPosition => "draw_dead_position",
        Status::DrawTimeoutUnwinnable => "draw_timeout_unwinnable",
    }
}

/// A token as the `bigint` column holds it: the same 64 bits, read as signed.
pub(super) fn token_to_db(token: u64) -> i64 {
    i64::from_ne_bytes(token.to_ne_bytes())
}

/// A token as the column holds it, back as the store's `u64`.
pub(super) fn token_from_db(token: i64) -> u64 {
    u64::from_ne_bytes(token.to_ne_bytes())
}

/// The stamp of a row's `version` and `token` columns.
pub(super) fn stamp_of(version: i64, token: i64) -> Stamp {
    Stamp {
        version: version.max(0) as u64,
        token: Some(token_from_db(token)),
    }
}

/// The columns a game's row gets from its current state.
pub(super) struct Row {
    pub(super) version: i64,
    /// The fresh token this write draws.
    pub(super) token: i64,
    pub(super) record: Vec<u8>,
    pub(super) status: &'static str,
    pub(super) flag_at_ms: Option<i64>,
}

impl Row {
    /// The row of `game`, whose changes since version `since` are being written (the
    /// record is refused past the history limit unless they end the game: see
    /// [`codec::check_history_room`]), encoded from `cached` (the encoding of an earlier
    /// history of the game, if this replica has one); returns the encoding to cache.
    pub(super) fn of(
        meta: &GameMeta,
        game: &Match,
        cached: Option<CachedEncoder>,
        since: u64,
    ) -> Result<(Row, CachedEncoder), StoreError> {
        let (record, cached) = encoder_cache::encode(meta, game, cached, since)?;
        let row = Row {
            version: to_i64(game.version(), "version")?,
            token: token_to_db(Stamp::fresh_token()?),
            record,
            status: stored_status_name(game.status()),
            flag_at_ms: game
                .flag_time()
                .map(|t| to_i64(t, "flag time"))
                .transpose()?,
        };
        Ok((row, cached))
    }
}

/// Reads a row back into a game, checking that the record says the version the row does.
pub(super) fn decode_row(
    id: &str,
    version: i64,
    record: &[u8],
) -> Result<codec::Decoded, StoreError> {
    let decoded = codec::decode(id, record).map_err(|e| StoreError::DataLoss {
        id: id.to_string(),
        reason: e.to_string(),
    })?;
    let loaded = &decoded.loaded;
    if i64::try_from(loaded.game.version()).ok() != Some(version) {
        return Err(StoreError::DataLoss {
            id: id.to_string(),
            reason: format!(
                "the row says version {version} but its record holds version {}",
                loaded.game.version()
            ),
        });
    }
    Ok(decoded)
}
