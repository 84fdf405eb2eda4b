//! Request validation: request fields become checked domain types, or a
//! [`ServiceError`] naming the field and saying what to send instead.

use crate::lifecycle::{ClockStart, MAX_ADD_TIME_MS, TimeControl};
use crate::pb;
use crate::rules::variant::{AnyPosition, VariantKind};
use crate::rules::{Color, GameRules, MoveTextError, Position, Variant};

use super::error::ServiceError;
use super::views::View;

/// The longest caller-chosen game id. Long enough for a UUID or a match id with a prefix,
/// short enough to keep keys and log lines small.
pub const MAX_GAME_ID_LEN: usize = 64;
/// The longest move text accepted (the rules engine's limit: the longest SAN is ~10).
pub const MAX_MOVE_TEXT_LEN: usize = crate::rules::san::MAX_SAN_LEN;
/// The longest FEN accepted (the rules engine's limit; a real FEN is under 100 bytes).
pub const MAX_FEN_LEN: usize = crate::rules::fen::MAX_FEN_LEN;

/// Reads a `Variant` field: unspecified means standard; unknown numbers are refused.
pub fn rules_from_pb(value: i32, field: &'static str) -> Result<GameRules, ServiceError> {
    use GameRules::{Chess, Lichess};
    Ok(match pb::Variant::try_from(value) {
        Ok(pb::Variant::Unspecified | pb::Variant::Standard) => Chess(Variant::Standard),
        Ok(pb::Variant::Chess960) => Chess(Variant::Chess960),
        Ok(pb::Variant::Crazyhouse) => Lichess(VariantKind::Crazyhouse),
        Ok(pb::Variant::Atomic) => Lichess(VariantKind::Atomic),
        Ok(pb::Variant::Antichess) => Lichess(VariantKind::Antichess),
        Ok(pb::Variant::Horde) => Lichess(VariantKind::Horde),
        Ok(pb::Variant::RacingKings) => Lichess(VariantKind::RacingKings),
        Ok(pb::Variant::KingOfTheHill) => Lichess(VariantKind::KingOfTheHill),
        Ok(pb::Variant::ThreeCheck) => Lichess(VariantKind::ThreeCheck),
        Err(_) => return Err(ServiceError::InvalidVariant { field, value }),
    })
}

/// Parses a FEN request field in a lichess variant.
pub fn parse_variant_fen(
    field: &'static str,
    fen: &str,
    kind: VariantKind,
) -> Result<AnyPosition, ServiceError> {
    AnyPosition::from_fen(kind, fen).map_err(|source| ServiceError::InvalidFen { field, source })
}

/// Reads a `GameView` field: unspecified is the full view; unknown numbers are refused.
pub fn view_from_pb(value: i32) -> Result<View, ServiceError> {
    match pb::GameView::try_from(value) {
        Ok(pb::GameView::Unspecified | pb::GameView::Full) => Ok(View::Full),
        Ok(pb::GameView::Basic) => Ok(View::Basic),
        Err(_) => Err(ServiceError::InvalidView { value }),
    }
}

/// Reads a `Color` field: unspecified is `None` (no side named); unknown numbers are
/// refused.
pub fn color_from_pb(value: i32, field: &'static str) -> Result<Option<Color>, ServiceError> {
    match pb::Color::try_from(value) {
        Ok(pb::Color::Unspecified) => Ok(None),
        Ok(pb::Color::White) => Ok(Some(Color::White)),
        Ok(pb::Color::Black) => Ok(Some(Color::Black)),
        Err(_) => Err(ServiceError::InvalidColor { field, value }),
    }
}

/// Reads a `Color` field that must name a side.
pub fn required_color(value: i32, why: &'static str) -> Result<Color, ServiceError> {
    color_from_pb(value, "color")?.ok_or(ServiceError::MissingField {
        field: "color",
        why,
    })
}

/// Reads an optional time control.
pub fn time_control_from_pb(
    tc: Option<&pb::TimeControl>,
) -> Result<Option<TimeControl>, ServiceError> {
    tc.map(|tc| {
        let control = TimeControl::new(tc.initial_ms, tc.increment_ms)
            .map_err(|source| ServiceError::InvalidTimeControl { source })?;
        let clock_start = match pb::ClockStart::try_from(tc.clock_start) {
            Ok(pb::ClockStart::Unspecified | pb::ClockStart::OnCreate) => ClockStart::OnCreate,
            Ok(pb::ClockStart::AfterFirstMoves) => ClockStart::AfterFirstMoves,
            Err(_) => {
                return Err(ServiceError::InvalidClockStart {
                    value: tc.clock_start,
                });
            }
        };
        Ok(control.with_clock_start(clock_start))
    })
    .transpose()
}

/// Reads AddTime's `ms`: 1 ms to an hour.
pub fn time_to_add(ms: u64) -> Result<u64, ServiceError> {
    if ms == 0 || ms > MAX_ADD_TIME_MS {
        return Err(ServiceError::InvalidAddTime { ms });
    }
    Ok(ms)
}

/// Parses a FEN request field. An empty field is the caller's business (it usually
/// means "the standard start"), so it is refused here only as a malformed FEN.
pub fn parse_fen(
    field: &'static str,
    fen: &str,
    variant: Variant,
) -> Result<Position, ServiceError> {
    Position::from_fen(fen, variant).map_err(|source| ServiceError::InvalidFen { field, source })
}

/// Checks a caller-chosen game id: 1..=64 URL-safe characters (RFC 3986 unreserved).
pub fn validate_game_id(id: &str) -> Result<(), ServiceError> {
    if id.is_empty() {
        return Err(ServiceError::MissingField {
            field: "game_id",
            why: "name the game (the id NewGame returned)",
        });
    }
    if id.len() > MAX_GAME_ID_LEN {
        return Err(ServiceError::InvalidGameId {
            why: format!(
                "it is {} bytes long; at most {MAX_GAME_ID_LEN} are allowed",
                id.len()
            ),
        });
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~')))
    {
        return Err(ServiceError::InvalidGameId {
            why: format!("character {c:?} is not allowed; use only A-Z a-z 0-9 - _ . ~"),
        });
    }
    Ok(())
}

/// Checks move text for game `id` before it reaches a position: present and within the
/// length limit.
pub fn validate_move_text(id: &str, text: &str) -> Result<(), ServiceError> {
    if text.trim().is_empty() {
        return Err(ServiceError::MissingField {
            field: "move",
            why: "give a move in UCI (e2e4) or SAN (Nf3)",
        });
    }
    if text.len() > MAX_MOVE_TEXT_LEN {
        return Err(ServiceError::InvalidMoveText {
            id: id.to_string(),
            error: MoveTextError::TooLong { len: text.len() },
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_ids_are_checked() {
        assert!(validate_game_id("match-2024.11_a~b").is_ok());
        assert!(matches!(
            validate_game_id(""),
            Err(ServiceError::MissingField {
                field: "game_id",
                ..
            })
        ));
        assert!(matches!(
            validate_game_id("a/b"),
            Err(ServiceError::InvalidGameId { .. })
        ));
        assert!(matches!(
            validate_game_id(&"x".repeat(65)),
            Err(ServiceError::InvalidGameId { .. })
        ));
    }
}
