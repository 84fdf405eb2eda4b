//! Winnability over the API: can each side still checkmate (FIDE 5.2.2 and 6.9)? A
//! verdict may take seconds, so like Perft it runs on the blocking pool within Perft's
//! slots, and stops when its caller goes away or its deadline passes (the solver's stop
//! flag: tens of microseconds, a few milliseconds at worst).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::time::Instant;

use super::perft::RaiseOnDrop;
use super::validate::{parse_fen, parse_variant_fen, rules_from_pb, validate_game_id};
use super::{ChessService, ServiceError};
use crate::pb;
use crate::pb::winnability_request::Position as RequestedPosition;
use crate::rules::GameRules;
use crate::rules::variant::AnyPosition;
use crate::rules::winnability::{Solver, Verdict};
use crate::rules::{Color, Game, GamePosition, Position};
use crate::service::edge::auth::Tenant;
use crate::service::game_key::GameKey;

impl ChessService {
    /// Like Perft, Winnability handles its own deadline: at the deadline it raises the
    /// stop flag and waits for the verdict to stop, so when the caller reads
    /// DEADLINE_EXCEEDED the slot is already free.
    pub(super) async fn winnability(
        &self,
        req: pb::WinnabilityRequest,
        deadline: Option<Instant>,
        tenant: Option<Tenant>,
    ) -> Result<pb::WinnabilityResponse, ServiceError> {
        let pos: Position = match req.position {
            Some(RequestedPosition::GameId(id)) => {
                validate_game_id(&id)?;
                let key = GameKey::key_of(tenant.as_ref(), &id);
                match self
                    .registry
                    .read(&key, |e, _| *e.game().position())
                    .await?
                {
                    GamePosition::Chess(pos) => pos,
                    GamePosition::Lichess(pos) => return Ok(by_material(&pos)),
                }
            }
            Some(RequestedPosition::Fen(fen)) => match rules_from_pb(req.variant, "variant")? {
                GameRules::Chess(variant) => parse_fen("fen", &fen, variant)?,
                GameRules::Lichess(kind) => {
                    return Ok(by_material(&parse_variant_fen("fen", &fen, kind)?));
                }
            },
            None => {
                return Err(ServiceError::MissingField {
                    field: "position",
                    why: "set either game_id or fen",
                });
            }
        };
        let permit = self.perft_slots.clone().try_acquire_owned().map_err(|_| {
            ServiceError::TooManyPerfts {
                max: self.perft.max_concurrent,
            }
        })?;
        let budget = self.perft.winnability_nodes;
        let stop = Arc::new(AtomicBool::new(false));
        // Dropping this future (deadline passed, caller hung up) raises the stop flag.
        let _raise = RaiseOnDrop(stop.clone());
        let flag = stop.clone();
        let mut task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut solver = Solver::with_budget(budget);
            let mut judge = |winner| solver.solve_stoppable(&pos, winner, flag.clone());
            Ok::<_, crate::rules::winnability::WinnabilityError>((
                judge(Color::White)?,
                judge(Color::Black)?,
            ))
        });
        let joined = match deadline {
            Some(deadline) => match tokio::time::timeout_at(deadline, &mut task).await {
                Ok(joined) => joined,
                Err(_) => {
                    stop.store(true, Ordering::Relaxed);
                    let _ = task.await;
                    return Err(ServiceError::DeadlineExceeded {
                        method: "Winnability",
                    });
                }
            },
            None => task.await,
        };
        let verdicts = joined
            .map_err(|e| ServiceError::Internal(format!("winnability task: {e}")))?
            // A position that parsed never has the side not to move in check.
            .map_err(|e| {
                ServiceError::Internal(format!("the solver refused a legal position: {e}"))
            })?;
        let (white, black) = verdicts;
        let dead = matches!(white, Verdict::Unwinnable { .. })
            && matches!(black, Verdict::Unwinnable { .. });
        Ok(pb::WinnabilityResponse {
            white: Some(side(&pos, &white)),
            black: Some(side(&pos, &black)),
            dead,
        })
    }
}

/// The verdicts in a lichess variant: the solver is for standard chess and Chess960, so a
/// side the variant's material rule rules out is unwinnable, and any other undetermined
/// (never a draw). Costs no search, so it takes no perft slot.
fn by_material(pos: &AnyPosition) -> pb::WinnabilityResponse {
    let side = |color| {
        let verdict = if pos.has_insufficient_material(color) {
            pb::WinnabilityVerdict::Unwinnable
        } else {
            pb::WinnabilityVerdict::Undetermined
        };
        pb::SideWinnability {
            verdict: verdict as i32,
            helpmate: Vec::new(),
            nodes: 0,
        }
    };
    let (white, black) = (side(Color::White), side(Color::Black));
    let unwinnable = pb::WinnabilityVerdict::Unwinnable as i32;
    pb::WinnabilityResponse {
        dead: white.verdict == unwinnable && black.verdict == unwinnable,
        white: Some(white),
        black: Some(black),
    }
}

/// One side's verdict on the wire: the helpmate in the position's UCI spelling.
fn side(pos: &Position, verdict: &Verdict) -> pb::SideWinnability {
    let (v, helpmate) = match verdict {
        Verdict::Winnable { helpmate, .. } => {
            // The solver's helpmates are legal (its tests replay every one).
            let mut line = Game::new(*pos);
            helpmate.iter().for_each(|&m| line.push_unchecked(m));
            (pb::WinnabilityVerdict::Winnable, line.uci_moves())
        }
        Verdict::Unwinnable { .. } => (pb::WinnabilityVerdict::Unwinnable, Vec::new()),
        Verdict::Undetermined { .. } => (pb::WinnabilityVerdict::Undetermined, Vec::new()),
    };
    pb::SideWinnability {
        verdict: v as i32,
        helpmate,
        nodes: verdict.nodes(),
    }
}
