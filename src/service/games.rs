//! The calls on games: each reads its request, runs one decision on the game in the
//! registry (under the game's lock) and answers in `chess.v1` messages.

use crate::lifecycle::{GameMeta, Match, Refusal};
use crate::pb;
use crate::pb::legal_moves_request::Position as RequestedPosition;
use crate::registry::GameEntry;
use crate::rules::Color;
use crate::rules::GameRules;
use crate::service::edge::auth::{Caller, Role, Tenant};

use super::convert::{self, ply_u32};
use super::game_key::GameKey;
use super::start::RequestedStart;
use super::validate::{
    color_from_pb, parse_fen, parse_variant_fen, required_color, rules_from_pb, time_to_add,
    validate_game_id, validate_move_text, view_from_pb,
};
use super::views;
use super::wire::{self, EncodedLegalMoves};
use super::{ChessService, ServiceError};

/// Checks `expected_ply` against game `e`: ABORTED with the current ply on a mismatch.
fn check_ply(e: &GameEntry, id: &str, expected: Option<u32>) -> Result<(), ServiceError> {
    let ply = e.game().ply();
    match expected {
        Some(expected) if expected as usize != ply => Err(ServiceError::PlyMismatch {
            id: id.to_string(),
            expected,
            current: ply_u32(ply),
        }),
        _ => Ok(()),
    }
}

/// What `expected_version` says about a change.
enum Expected<R> {
    /// Unset, or the game's version: decide the change now.
    Current,
    /// The change was made already (its answer was lost): answer the game as it stands,
    /// with what deciding the change again said (the move, for Play).
    Retried(R),
}

/// Checks a change's `expected_version` against game `e`. On a mismatch, `change` decides
/// the request again on the game as it stood at that version, at the time of the first
/// event after it: when the events it makes are exactly the events recorded after that
/// version, the request is an exact retry ([`Expected::Retried`]); otherwise the answer
/// is ABORTED, VERSION_MISMATCH. Costs a replay, on a mismatch only.
fn check_version<R>(
    e: &GameEntry,
    id: &str,
    expected: Option<u64>,
    now: u64,
    change: impl FnOnce(&mut Match, u64) -> Result<R, Refusal>,
) -> Result<Expected<R>, ServiceError> {
    let game = e.lifecycle();
    let current = game.version();
    let Some(expected) = expected.filter(|&v| v != current) else {
        return Ok(Expected::Current);
    };
    let mismatch = || ServiceError::VersionMismatch {
        id: id.to_string(),
        expected,
        current,
    };
    let Some(Ok(mut past)) = game.at_version(expected) else {
        return Err(mismatch());
    };
    let since = usize::try_from(expected).map_err(|_| mismatch())?;
    let recorded = &game.log()[since..];
    let at = recorded
        .first()
        .and_then(|entry| entry.at_ms)
        .unwrap_or(now);
    match change(&mut past, at) {
        Ok(answer)
            if past.log()[since..]
                .iter()
                .map(|entry| entry.event)
                .eq(recorded.iter().map(|entry| entry.event)) =>
        {
            Ok(Expected::Retried(answer))
        }
        _ => Err(mismatch()),
    }
}

/// The error for a NewGame on an id that holds a game with another start.
pub(super) fn already_exists(existing: &GameEntry) -> ServiceError {
    ServiceError::GameAlreadyExists {
        id: GameKey::plain_id(&existing.meta().id).to_string(),
        existing: convert::describe_start(existing.meta(), existing.lifecycle()),
    }
}

/// The fields every side action's request has.
struct SideAction {
    game_id: String,
    tenant: Option<Tenant>,
    color: i32,
    expected_version: Option<u64>,
    view: i32,
}

impl ChessService {
    pub(super) async fn new_game(
        &self,
        req: pb::NewGameRequest,
        tenant: Option<Tenant>,
    ) -> Result<pb::NewGameResponse, ServiceError> {
        let requested = RequestedStart::of(&req)?;
        let view = view_from_pb(req.view)?;
        let tags = super::catalog::tags_from_pb(&req.tags)?;
        let tags_named = !req.tags.is_empty();
        let answer = move |e: &mut GameEntry, now| views::game(e, now, view);
        // The clock of a timed game starts now.
        let created_unix_ms = self.registry.now_ms();
        let game = requested.game(created_unix_ms)?;
        if !req.game_id.is_empty() {
            let meta = GameMeta {
                id: GameKey::key_of(tenant.as_ref(), &req.game_id),
                variant: requested.variant,
                start: requested.start.clone(),
                created_unix_ms,
                tags: tags.clone(),
            };
            let existing = move |e: &GameEntry| {
                if !requested.accepts(e) {
                    Err(already_exists(e))
                } else if tags_named && e.meta().tags != tags {
                    Err(ServiceError::GameAlreadyExistsWithOtherTags {
                        id: GameKey::plain_id(&e.meta().id).to_string(),
                    })
                } else {
                    Ok(())
                }
            };
            let (game, _) = self.registry.create(meta, game, existing, answer).await?;
            return Ok(pb::NewGameResponse { game: Some(game) });
        }
        // A server-made id: 128 random bits; a collision is retried, not reported.
        for _ in 0..3 {
            let meta = GameMeta {
                id: GameKey::key_of(tenant.as_ref(), &new_game_id()?),
                variant: requested.variant,
                start: requested.start.clone(),
                created_unix_ms,
                tags: tags.clone(),
            };
            let taken = |e: &GameEntry| Err(already_exists(e));
            match self
                .registry
                .create(meta, game.clone(), taken, answer)
                .await
            {
                Ok((game, _)) => return Ok(pb::NewGameResponse { game: Some(game) }),
                Err(ServiceError::GameAlreadyExists { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(ServiceError::Internal(
            "could not find a free game id".into(),
        ))
    }

    pub(super) async fn get_game(
        &self,
        req: pb::GetGameRequest,
        tenant: Option<Tenant>,
    ) -> Result<pb::GetGameResponse, ServiceError> {
        validate_game_id(&req.game_id)?;
        let view = view_from_pb(req.view)?;
        let game = self
            .registry
            .read(
                &GameKey::key_of(tenant.as_ref(), &req.game_id),
                move |e, now| views::game(e, now, view),
            )
            .await?;
        Ok(pb::GetGameResponse { game: Some(game) })
    }

    pub(super) async fn play(
        &self,
        req: pb::PlayRequest,
        tenant: Option<Tenant>,
    ) -> Result<pb::PlayResponse, ServiceError> {
        validate_game_id(&req.game_id)?;
        validate_move_text(&req.game_id, &req.r#move)?;
        let color = color_from_pb(req.color, "color")?;
        let view = view_from_pb(req.view)?;
        let id = req.game_id.clone();
        let text = req.r#move;
        let expected = req.expected_ply;
        let expected_version = req.expected_version;
        let key = GameKey::key_of(tenant.as_ref(), &req.game_id);
        self.registry
            .update(key, move |e, now| {
                let replay = |past: &mut Match, at| {
                    let before = *past.game().position();
                    past.play(at, color, &text).map(|m| (before, m))
                };
                if let Expected::Retried((before, m)) =
                    check_version(e, &id, expected_version, now, replay)?
                {
                    return Ok((views::game(e, now, view), convert::move_to_pb(&before, m)));
                }
                let ply = e.game().ply();
                if let Some(expected) = expected.filter(|&x| x as usize != ply) {
                    // A retry of the move already played at `expected` succeeds without
                    // playing anything.
                    let at = expected as usize;
                    let game = e.game();
                    let earlier = game
                        .position_at(at)
                        .copied()
                        .zip(game.moves().get(at).copied());
                    if let Some((pos, played)) = earlier
                        && pos.parse_move(&text).is_ok_and(|m| m == played)
                    {
                        let mv = convert::move_to_pb(&pos, played);
                        return Ok((views::game(e, now, view), mv));
                    }
                    return Err(ServiceError::PlyMismatch {
                        id: id.clone(),
                        expected,
                        current: ply_u32(ply),
                    });
                }
                let mv = e
                    .play(now, color, &text)
                    .map_err(|r| ServiceError::from_refusal(&id, r, "moves are played"))?;
                Ok((views::game(e, now, view), mv.into()))
            })
            .await
            .map(|(game, mv)| pb::PlayResponse {
                game: Some(game),
                r#move: Some(mv),
            })
    }

    /// Takes back the last move. With a role below admin, an ending a player or the clock
    /// decided (resignation, agreed or claimed draw, flag fall) is final: checked here, at
    /// the edge, for new requests only (stored histories with such undos replay as ever).
    /// An ending on the board (mate, stalemate, an automatic draw, a dead position) may be
    /// undone.
    pub(super) async fn undo(
        &self,
        req: pb::UndoRequest,
        caller: Caller,
    ) -> Result<pb::UndoResponse, ServiceError> {
        let role = caller.role;
        validate_game_id(&req.game_id)?;
        let color = color_from_pb(req.color, "color")?;
        let view = view_from_pb(req.view)?;
        let id = req.game_id.clone();
        let expected = req.expected_ply;
        let expected_version = req.expected_version;
        let key = GameKey::key_of(caller.tenant.as_ref(), &req.game_id);
        self.registry
            .update(key, move |e, now| {
                let replay = |past: &mut Match, at| past.undo(at, color);
                if let Expected::Retried((before, m)) =
                    check_version(e, &id, expected_version, now, replay)?
                {
                    return Ok((views::game(e, now, view), convert::move_to_pb(&before, m)));
                }
                check_ply(e, &id, expected)?;
                let status = e.lifecycle().status();
                if role < Role::Admin && status.is_over() && !status.is_board_ending() {
                    return Err(ServiceError::EndingIsFinal {
                        id: id.clone(),
                        status,
                        role,
                    });
                }
                let mv = e
                    .undo(now, color)
                    .map_err(|r| ServiceError::from_refusal(&id, r, "moves are taken back"))?;
                Ok((views::game(e, now, view), mv.into()))
            })
            .await
            .map(|(game, mv)| pb::UndoResponse {
                game: Some(game),
                undone: Some(mv),
            })
    }

    /// A side's action off the board (resign, offer a draw, answer an offer, add time):
    /// the side named in `color` (`why` says why it must be), the change made under the
    /// game's lock unless `expected_version` shows it made already (see
    /// [`check_version`]), and the game as it then stands. `act` runs on the game's entry,
    /// `replay` (the same change) on the game at the expected version.
    async fn side_action<F, P>(
        &self,
        action: SideAction,
        why: &'static str,
        mut act: F,
        replay: P,
    ) -> Result<pb::Game, ServiceError>
    where
        F: FnMut(&mut GameEntry, u64, Color) -> Result<(), Refusal> + Send + 'static,
        P: Fn(&mut Match, u64, Color) -> Result<(), Refusal> + Send + 'static,
    {
        let SideAction {
            game_id,
            tenant,
            color,
            expected_version,
            view,
        } = action;
        validate_game_id(&game_id)?;
        let color = required_color(color, why)?;
        let view = view_from_pb(view)?;
        let id = game_id.clone();
        self.registry
            .update(GameKey::key_of(tenant.as_ref(), &game_id), move |e, now| {
                let again = |past: &mut Match, at| replay(past, at, color);
                if let Expected::Current = check_version(e, &id, expected_version, now, again)? {
                    act(e, now, color).map_err(|r| ServiceError::from_refusal(&id, r, ""))?;
                }
                Ok(views::game(e, now, view))
            })
            .await
    }

    pub(super) async fn resign(
        &self,
        req: pb::ResignRequest,
        tenant: Option<Tenant>,
    ) -> Result<pb::ResignResponse, ServiceError> {
        let why = "name the side that resigns";
        let action = SideAction {
            game_id: req.game_id,
            tenant,
            color: req.color,
            expected_version: req.expected_version,
            view: req.view,
        };
        let game = self
            .side_action(
                action,
                why,
                |e, now, c| e.resign(now, c),
                |m, now, c| m.resign(now, c),
            )
            .await?;
        Ok(pb::ResignResponse { game: Some(game) })
    }

    pub(super) async fn offer_draw(
        &self,
        req: pb::OfferDrawRequest,
        tenant: Option<Tenant>,
    ) -> Result<pb::OfferDrawResponse, ServiceError> {
        let why = "name the side that offers the draw";
        let action = SideAction {
            game_id: req.game_id,
            tenant,
            color: req.color,
            expected_version: req.expected_version,
            view: req.view,
        };
        let game = self
            .side_action(
                action,
                why,
                |e, now, c| e.offer_draw(now, c),
                |m, now, c| m.offer_draw(now, c),
            )
            .await?;
        Ok(pb::OfferDrawResponse { game: Some(game) })
    }

    pub(super) async fn respond_to_draw(
        &self,
        req: pb::RespondToDrawRequest,
        tenant: Option<Tenant>,
    ) -> Result<pb::RespondToDrawResponse, ServiceError> {
        let why = "name the side that answers the offer";
        let accept = req.accept;
        let action = SideAction {
            game_id: req.game_id,
            tenant,
            color: req.color,
            expected_version: req.expected_version,
            view: req.view,
        };
        let game = self
            .side_action(
                action,
                why,
                move |e, now, c| e.respond_to_draw(now, c, accept),
                move |m, now, c| m.respond_to_draw(now, c, accept),
            )
            .await?;
        Ok(pb::RespondToDrawResponse { game: Some(game) })
    }

    /// Adds time to one side's clock: an event of the game's history. `expected_version`
    /// guards against giving the time twice (a retry) or on a game that changed.
    pub(super) async fn add_time(
        &self,
        req: pb::AddTimeRequest,
        tenant: Option<Tenant>,
    ) -> Result<pb::AddTimeResponse, ServiceError> {
        let ms = time_to_add(req.ms)?;
        let why = "name the side whose clock gets the time";
        let action = SideAction {
            game_id: req.game_id,
            tenant,
            color: req.color,
            expected_version: req.expected_version,
            view: req.view,
        };
        let game = self
            .side_action(
                action,
                why,
                move |e, now, c| e.add_time(now, c, ms),
                move |m, now, c| m.add_time(now, c, ms),
            )
            .await?;
        Ok(pb::AddTimeResponse { game: Some(game) })
    }

    pub(super) async fn claim_draw(
        &self,
        req: pb::ClaimDrawRequest,
        tenant: Option<Tenant>,
    ) -> Result<pb::ClaimDrawResponse, ServiceError> {
        validate_game_id(&req.game_id)?;
        let color = required_color(req.color, "name the side that claims (the side to move)")?;
        let text = if req.r#move.trim().is_empty() {
            None
        } else {
            validate_move_text(&req.game_id, &req.r#move)?;
            Some(req.r#move)
        };
        let view = view_from_pb(req.view)?;
        let id = req.game_id.clone();
        let expected = req.expected_ply;
        let expected_version = req.expected_version;
        let key = GameKey::key_of(tenant.as_ref(), &req.game_id);
        self.registry
            .update(key, move |e, now| {
                let replay = |past: &mut Match, at| past.claim_draw(at, color, text.as_deref());
                if let Expected::Retried(played) =
                    check_version(e, &id, expected_version, now, replay)?
                {
                    let mv = played.map(|(before, m)| convert::move_to_pb(&before, m));
                    return Ok((views::game(e, now, view), mv));
                }
                check_ply(e, &id, expected)?;
                let mv = e
                    .claim_draw(now, color, text.as_deref())
                    .map_err(|r| ServiceError::from_refusal(&id, r, "a draw is claimed"))?;
                Ok((views::game(e, now, view), mv.map(pb::Move::from)))
            })
            .await
            .map(|(game, mv)| pb::ClaimDrawResponse {
                game: Some(game),
                r#move: mv,
            })
    }

    pub(super) async fn legal_moves(
        &self,
        req: pb::LegalMovesRequest,
        tenant: Option<Tenant>,
    ) -> Result<EncodedLegalMoves, ServiceError> {
        match req.position {
            Some(RequestedPosition::GameId(id)) => {
                validate_game_id(&id)?;
                Ok(self
                    .registry
                    .read(&GameKey::key_of(tenant.as_ref(), &id), |e, _| {
                        views::legal_moves(e)
                    })
                    .await?)
            }
            Some(RequestedPosition::Fen(fen)) => {
                let variant = match rules_from_pb(req.variant, "variant")? {
                    GameRules::Chess(variant) => variant,
                    GameRules::Lichess(kind) => {
                        return self
                            .cpu
                            .run(move || {
                                parse_variant_fen("fen", &fen, kind).map(|p| {
                                    EncodedLegalMoves::from_message(&convert::variant_legal_moves(
                                        &p,
                                    ))
                                })
                            })
                            .await
                            .map_err(|e| {
                                ServiceError::Internal(format!("legal moves by FEN: {e}"))
                            })?;
                    }
                };
                if let Some(answer) = self.fen_cache.get(&fen, variant) {
                    return Ok(answer);
                }
                // Parsing and generating are CPU work: keep them off the async workers.
                let cache = self.fen_cache.clone();
                self.cpu
                    .run(move || {
                        let answer =
                            parse_fen("fen", &fen, variant).map(|p| wire::position_legal_moves(&p));
                        if let Ok(answer) = &answer {
                            cache.insert(&fen, variant, answer.clone());
                        }
                        answer
                    })
                    .await
                    .map_err(|e| ServiceError::Internal(format!("legal moves by FEN: {e}")))?
            }
            None => Err(ServiceError::MissingField {
                field: "position",
                why: "set either game_id or fen",
            }),
        }
    }
}

/// A new server-made game id: 128 random bits as 22 URL-safe characters.
pub(super) fn new_game_id() -> Result<String, ServiceError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))?;
    Ok(convert::base64url(&bytes))
}
