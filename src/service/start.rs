//! NewGame's start: which position, variant and time control a request asks for, and
//! whether an existing game of the same id started that way (a repeated NewGame then
//! answers the existing game instead of failing).

use crate::lifecycle::{Match, Start, TimeControl};
use crate::pb;
use crate::registry::GameEntry;
use crate::rules::variant::AnyPosition;
use crate::rules::{GamePosition, GameRules, Position, Variant, chess960};

use super::ServiceError;
use super::validate::{
    parse_fen, parse_variant_fen, rules_from_pb, time_control_from_pb, validate_game_id,
};

/// The start a NewGame request asks for, resolved.
pub struct RequestedStart {
    /// The rules: standard chess, Chess960 or a lichess variant.
    pub variant: GameRules,
    /// How the game starts, as stored.
    pub start: Start,
    /// The start position.
    pub position: GamePosition,
    /// The time control, if the game is timed.
    pub time_control: Option<TimeControl>,
    /// Whether the request named a start (a FEN, a Chess960 number, a variant or a time
    /// control): an existing game of the id must then have started that way; otherwise
    /// any existing game of the id is the answer.
    named: bool,
    /// The start position an existing game must have, as FEN (none for a random
    /// Chess960 start, which any Chess960 game matches).
    wanted_fen: Option<String>,
}

impl RequestedStart {
    /// Reads the start fields of `req` and checks its game id, if it names one (a random
    /// Chess960 start is drawn here).
    pub fn of(req: &pb::NewGameRequest) -> Result<RequestedStart, ServiceError> {
        let variant = rules_from_pb(req.variant, "variant")?;
        if !req.fen.is_empty() && req.chess960_position.is_some() {
            return Err(ServiceError::ConflictingFields {
                fields: &["fen", "chess960_position"],
                why: "give the start either as a FEN or as a Chess960 position number, not both",
            });
        }
        if req.chess960_position.is_some() && variant != GameRules::Chess(Variant::Chess960) {
            return Err(ServiceError::ConflictingFields {
                fields: &["chess960_position", "variant"],
                why: "chess960_position needs variant VARIANT_CHESS960",
            });
        }
        // The game id is checked here, between the start's fields, to keep the order in
        // which a request with several faults has always been answered.
        if !req.game_id.is_empty() {
            validate_game_id(&req.game_id)?;
        }
        let time_control = time_control_from_pb(req.time_control.as_ref())?;
        let explicit_start = !req.fen.is_empty() || req.chess960_position.is_some();
        let (start, position): (Start, GamePosition) = if !req.fen.is_empty() {
            // A FEN start is stored as a FEN unless it is the rules' own start.
            let (pos, own_start): (GamePosition, bool) = match variant {
                GameRules::Chess(v) => {
                    let pos = parse_fen("fen", &req.fen, v)?;
                    (pos.into(), v == Variant::Standard && pos == Position::new())
                }
                GameRules::Lichess(kind) => {
                    let pos = parse_variant_fen("fen", &req.fen, kind)?;
                    (pos.into(), pos == AnyPosition::start(kind))
                }
            };
            let start = if own_start {
                Start::Standard
            } else {
                Start::Fen(pos.to_fen())
            };
            (start, pos)
        } else if let Some(n) = req.chess960_position {
            let pos = chess960::start_position(n, Variant::Chess960)
                .map_err(|_| ServiceError::InvalidChess960Position { n })?;
            (Start::Chess960(n), pos.into())
        } else {
            match variant {
                GameRules::Chess(Variant::Chess960) => {
                    let n = random_u32()? % chess960::CHESS960_POSITIONS;
                    let pos = chess960::start_position(n, Variant::Chess960).map_err(|e| {
                        ServiceError::Internal(format!("random Chess960 start: {e}"))
                    })?;
                    (Start::Chess960(n), pos.into())
                }
                GameRules::Chess(Variant::Standard) => (Start::Standard, Position::new().into()),
                GameRules::Lichess(kind) => (Start::Standard, AnyPosition::start(kind).into()),
            }
        };
        // For a repeated game_id: a request with no start and no variant takes any
        // existing game; a named start must be the existing game's; a random Chess960
        // start matches any Chess960 game. A named time control is part of the start: it
        // must be the existing game's.
        let named = explicit_start || req.variant != 0 || time_control.is_some();
        let wanted_fen = (explicit_start || variant != GameRules::Chess(Variant::Chess960))
            .then(|| position.to_fen());
        Ok(RequestedStart {
            variant,
            start,
            position,
            time_control,
            named,
            wanted_fen,
        })
    }

    /// The new game, its clock (if timed) started at `now`; drawn at once when its start
    /// is a dead position (FIDE 5.2.2, [`Match::end_if_dead`]).
    pub fn game(&self, now: u64) -> Result<Match, ServiceError> {
        let mut game = match self.time_control {
            Some(tc) => Match::timed(self.position, tc, now),
            None => Match::untimed(self.position),
        };
        game.end_if_dead(now)
            .map_err(|e| ServiceError::Internal(format!("a new game does not replay: {e}")))?;
        Ok(game)
    }

    /// Whether `existing` (a game of the requested id) is the answer to this request.
    pub fn accepts(&self, existing: &GameEntry) -> bool {
        !self.named
            || (existing.game().rules() == self.variant
                && self
                    .wanted_fen
                    .as_ref()
                    .is_none_or(|fen| *fen == existing.game().start().to_fen())
                && self
                    .time_control
                    .is_none_or(|tc| existing.lifecycle().time_control() == Some(tc)))
    }
}

fn random_u32() -> Result<u32, ServiceError> {
    getrandom::u32().map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))
}
