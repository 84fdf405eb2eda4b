//! Perft over the API: the one call whose cost the caller chooses, so it is bounded (a
//! maximum depth, a number of perfts at once), runs on the blocking pool, and stops within
//! microseconds when its deadline passes or its caller goes away.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use std::time::Duration;

use tokio::time::Instant;

use super::validate::{parse_fen, parse_variant_fen, rules_from_pb};
use super::{ChessService, ServiceError};
use crate::pb;
use crate::rules::GameRules;
use crate::rules::variant::AnyPosition;
use crate::rules::{self, Position, Variant};

/// Perft limits: perft is the one call whose cost the caller chooses.
#[derive(Debug, Clone, Copy)]
pub struct PerftLimits {
    /// The deepest perft accepted (depth 10 from the start is about 69 trillion nodes).
    pub max_depth: u32,
    /// Perfts computing at once; more are refused with RESOURCE_EXHAUSTED.
    pub max_concurrent: usize,
    /// Perfts one caller (a token, or a connection without tokens) may have computing
    /// at once (0: no bound per caller).
    pub max_per_caller: usize,
    /// The longest one perft may compute, whatever the caller's deadline (or none): past
    /// it the perft stops and answers DEADLINE_EXCEEDED, so that no caller holds a perft
    /// slot (and its cores) for hours.
    pub max_duration: Duration,
    /// Nodes one Winnability call may spend per side (Winnability is the other call whose
    /// cost can reach seconds: it computes within the same slots).
    pub winnability_nodes: u64,
}

impl ChessService {
    /// Perft handles its own deadline (rather than the generic one in [`Self::call`]): at
    /// the deadline it raises the stop flag and waits for the count to stop, so when the
    /// caller reads DEADLINE_EXCEEDED the cores and the perft slot are already free.
    pub(super) async fn perft(
        &self,
        req: pb::PerftRequest,
        deadline: Option<Instant>,
        caller: PerftCaller,
    ) -> Result<pb::PerftResponse, ServiceError> {
        let rules = rules_from_pb(req.variant, "variant")?;
        if req.depth > self.perft.max_depth {
            return Err(ServiceError::DepthTooLarge {
                depth: req.depth,
                max: self.perft.max_depth,
            });
        }
        let pos = match (rules, req.fen.is_empty()) {
            (GameRules::Chess(Variant::Chess960), true) => {
                return Err(ServiceError::FenRequired {
                    why: "a Chess960 perft needs the start position as a FEN",
                });
            }
            (GameRules::Chess(_), true) => PerftPosition::Chess(Position::new()),
            (GameRules::Chess(variant), false) => {
                PerftPosition::Chess(parse_fen("fen", &req.fen, variant)?)
            }
            (GameRules::Lichess(kind), true) => PerftPosition::Lichess(AnyPosition::start(kind)),
            (GameRules::Lichess(kind), false) => {
                PerftPosition::Lichess(parse_variant_fen("fen", &req.fen, kind)?)
            }
        };
        let permit = self.perft_slots.clone().try_acquire_owned().map_err(|_| {
            ServiceError::TooManyPerfts {
                max: self.perft.max_concurrent,
            }
        })?;
        // The server's slots first, then the caller's own (a full server says so).
        let own = self
            .perft_callers
            .take(caller, self.perft.max_per_caller)
            .ok_or(ServiceError::TooManyPerftsForCaller {
                max: self.perft.max_per_caller,
            })?;
        let threads = (req.threads as usize).min(rules::perft::available_threads());
        let stop = Arc::new(AtomicBool::new(false));
        // Dropping this future (deadline passed, caller hung up) raises the stop flag; the
        // count checks it at every node of depth 3 or more, so it stops in microseconds.
        let _raise = RaiseOnDrop(stop.clone());
        let (depth, divide) = (req.depth, req.divide);
        let flag = stop.clone();
        let mut task = tokio::task::spawn_blocking(move || {
            // Held while computing, released when the count stops.
            let (_permit, _own) = (permit, own);
            match &pos {
                PerftPosition::Chess(p) => rules::perft_parallel(p, depth, threads, divide, &flag),
                PerftPosition::Lichess(p) => {
                    rules::perft_parallel(p, depth, threads, divide, &flag)
                }
            }
            .map(|r| (pos, r))
        });
        // The caller's deadline, unless the server's own limit comes first.
        let limit = Instant::now() + self.perft.max_duration;
        let (until, ours) = match deadline {
            Some(deadline) if deadline <= limit => (deadline, false),
            _ => (limit, true),
        };
        let joined = match tokio::time::timeout_at(until, &mut task).await {
            Ok(joined) => joined,
            Err(_) => {
                stop.store(true, Ordering::Relaxed);
                let _ = task.await;
                return Err(if ours {
                    ServiceError::PerftTimeLimit {
                        seconds: self.perft.max_duration.as_secs(),
                    }
                } else {
                    ServiceError::DeadlineExceeded { method: "Perft" }
                });
            }
        };
        let (pos, result) = joined
            .map_err(|e| ServiceError::Internal(format!("perft task: {e}")))?
            .map_err(|_| ServiceError::Cancelled)?;
        let mut divide: Vec<pb::PerftDivide> = result
            .divide
            .iter()
            .map(|&(m, nodes)| pb::PerftDivide {
                r#move: pos.uci(m),
                nodes,
            })
            .collect();
        divide.sort_unstable_by(|a, b| a.r#move.cmp(&b.r#move));
        Ok(pb::PerftResponse {
            nodes: result.nodes,
            divide,
        })
    }
}

/// A perft's root: standard chess and Chess960 count on [`Position`]'s own generator,
/// each lichess variant on its own monomorphised one.
enum PerftPosition {
    Chess(Position),
    Lichess(AnyPosition),
}

impl PerftPosition {
    /// A root move in the position's UCI spelling.
    fn uci(&self, m: rules::Move) -> String {
        match self {
            PerftPosition::Chess(p) => p.uci(m),
            PerftPosition::Lichess(p) => p.uci(m),
        }
    }
}

/// Raises a stop flag when dropped (Perft's and Winnability's computations).
pub(super) struct RaiseOnDrop(pub(super) Arc<AtomicBool>);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Who a perft counts against for `--perft-max-per-caller`: the token's name, or the
/// connection (its peer address) on a server without tokens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PerftCaller {
    /// A caller named by its token.
    Token(Arc<str>),
    /// A connection of a server without tokens (`None`: its address is unknown).
    Connection(Option<std::net::SocketAddr>),
}

/// The perfts computing for each caller.
#[derive(Default)]
pub struct PerftCallers(Mutex<HashMap<PerftCaller, usize>>);

impl PerftCallers {
    /// A slot of `caller`'s own, if it has fewer than `max` perfts computing (0: no
    /// bound); given back when the returned guard is dropped.
    fn take(self: &Arc<Self>, caller: PerftCaller, max: usize) -> Option<CallerSlot> {
        let mut running = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let count = running.entry(caller.clone()).or_default();
        if max > 0 && *count >= max {
            return None;
        }
        *count += 1;
        Some(CallerSlot {
            callers: self.clone(),
            caller,
        })
    }
}

/// One perft of one caller; frees the caller's slot when dropped.
struct CallerSlot {
    callers: Arc<PerftCallers>,
    caller: PerftCaller,
}

impl Drop for CallerSlot {
    fn drop(&mut self) {
        let mut running = self.callers.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = running.get_mut(&self.caller) {
            *count -= 1;
            if *count == 0 {
                running.remove(&self.caller);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_caller_has_its_own_bound_and_gets_its_slots_back() {
        let callers = Arc::new(PerftCallers::default());
        let a = PerftCaller::Token(Arc::from("a"));
        let b = PerftCaller::Token(Arc::from("b"));
        let first = callers.take(a.clone(), 1).expect("a's first perft");
        assert!(
            callers.take(a.clone(), 1).is_none(),
            "a's second is refused"
        );
        let _other = callers.take(b.clone(), 1).expect("b has its own slot");
        drop(first);
        assert!(callers.take(a.clone(), 1).is_some(), "a's slot came back");
        assert!(
            callers.0.lock().unwrap().get(&a).is_none(),
            "a finished: forgotten"
        );
        let _x = callers.take(a.clone(), 0).expect("0: no bound");
        let _y = callers.take(a, 0).expect("0: no bound");
    }
}
