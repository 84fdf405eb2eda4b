//! `chess.v1.ChessService`: request validation, the semantics of each call (idempotent
//! NewGame, `expected_ply`, undo, whose turn, draws, resignation, the spectator stream),
//! perft on the blocking pool, and one tracing span per call with its method, game,
//! status code and latency.

pub mod convert;
pub mod cpu_pool;
pub mod error;
pub mod fen_cache;
pub mod wire;

/// The generated gRPC server of `chess.v1.ChessService`: the client's messages, except
/// that LegalMoves answers with pre-encoded bytes (see `build/proto.rs` and [`wire`]).
pub mod grpc {
    #![allow(missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/server/chess.v1.rs"));
}

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response};
use tracing::Instrument as _;

pub use error::ServiceError;

use crate::games::{GameEntry, Registry, StartRequest, WatchItem};
use crate::lifecycle::Match;
use crate::pb;
use crate::pb::legal_moves_request::Position as RequestedPosition;
use crate::rules::{self, Position, Variant, chess960};
use crate::store::{GameMeta, Start};
use convert::{
    color_from_pb, move_to_pb, parse_fen, ply_u32, required_color, time_control_from_pb,
    validate_game_id, validate_move_text, variant_from_pb,
};

/// Messages a spectator's stream buffers between its forwarding task and the transport.
/// Small: the per-game broadcast buffer is the one that bounds how far a spectator may
/// fall behind.
const WATCH_STREAM_BUFFER: usize = 16;

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

/// Perft limits: perft is the one call whose cost the caller chooses.
#[derive(Debug, Clone, Copy)]
pub struct PerftLimits {
    /// The deepest perft accepted (depth 10 from the start is ~70 billion nodes).
    pub max_depth: u32,
    /// Perfts computing at once; more are refused with RESOURCE_EXHAUSTED.
    pub max_concurrent: usize,
}

/// The service: a registry of games plus the stateless calls.
pub struct ChessService {
    registry: Arc<Registry>,
    cpu: cpu_pool::CpuPool,
    fen_cache: Arc<fen_cache::FenCache>,
    perft: PerftLimits,
    perft_slots: Arc<Semaphore>,
    in_flight: Arc<AtomicUsize>,
}

impl ChessService {
    /// The service over `registry`, with a pool of `cpu_threads` threads for short CPU
    /// work (LegalMoves by FEN) and a cache of `fen_cache_entries` LegalMoves-by-FEN
    /// answers (0: none).
    pub fn new(
        registry: Arc<Registry>,
        perft: PerftLimits,
        cpu_threads: usize,
        fen_cache_entries: usize,
    ) -> std::io::Result<ChessService> {
        Ok(ChessService {
            registry,
            cpu: cpu_pool::CpuPool::new(cpu_threads)?,
            fen_cache: Arc::new(fen_cache::FenCache::new(fen_cache_entries)),
            perft,
            perft_slots: Arc::new(Semaphore::new(perft.max_concurrent)),
            in_flight: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Calls of this service running now: shutdown waits for them to reach zero.
    pub fn in_flight(&self) -> Arc<AtomicUsize> {
        self.in_flight.clone()
    }

    async fn new_game(&self, req: pb::NewGameRequest) -> Result<pb::NewGameResponse, ServiceError> {
        let variant = variant_from_pb(req.variant, "variant")?;
        if !req.fen.is_empty() && req.chess960_position.is_some() {
            return Err(ServiceError::ConflictingFields {
                fields: &["fen", "chess960_position"],
                why: "give the start either as a FEN or as a Chess960 position number, not both",
            });
        }
        if req.chess960_position.is_some() && variant != Variant::Chess960 {
            return Err(ServiceError::ConflictingFields {
                fields: &["chess960_position", "variant"],
                why: "chess960_position needs variant VARIANT_CHESS960",
            });
        }
        if !req.game_id.is_empty() {
            validate_game_id(&req.game_id)?;
        }
        let time_control = time_control_from_pb(req.time_control.as_ref())?;
        let explicit_start = !req.fen.is_empty() || req.chess960_position.is_some();
        let (start, start_position) = if !req.fen.is_empty() {
            let pos = parse_fen("fen", &req.fen, variant)?;
            let start = if variant == Variant::Standard && pos == Position::new() {
                Start::Standard
            } else {
                Start::Fen(pos.to_fen())
            };
            (start, pos)
        } else if let Some(n) = req.chess960_position {
            let pos = chess960::start_position(n, Variant::Chess960)
                .map_err(|_| ServiceError::InvalidChess960Position { n })?;
            (Start::Chess960(n), pos)
        } else if variant == Variant::Chess960 {
            let n = random_u32()? % chess960::CHESS960_POSITIONS;
            let pos = chess960::start_position(n, Variant::Chess960)
                .map_err(|e| ServiceError::Internal(format!("random Chess960 start: {e}")))?;
            (Start::Chess960(n), pos)
        } else {
            (Start::Standard, Position::new())
        };
        // For a repeated game_id: a request with no start and no variant takes any
        // existing game; a named start must be the existing game's; a random Chess960
        // start matches any Chess960 game.
        // A named time control is part of the start: it must be the existing game's.
        let request = if explicit_start || req.variant != 0 || time_control.is_some() {
            StartRequest::Named
        } else {
            StartRequest::Unspecified
        };
        let wanted_fen =
            (explicit_start || variant == Variant::Standard).then(|| start_position.to_fen());
        let same_start = move |existing: &GameEntry| {
            existing.game().variant() == variant
                && wanted_fen
                    .as_ref()
                    .is_none_or(|fen| *fen == existing.game().start().to_fen())
                && time_control.is_none_or(|tc| existing.lifecycle().time_control() == Some(tc))
        };
        // The clock of a timed game starts now.
        let created_unix_ms = crate::games::now_ms();
        let game = match time_control {
            Some(tc) => Match::timed(start_position, tc, created_unix_ms),
            None => Match::untimed(start_position),
        };
        if !req.game_id.is_empty() {
            let meta = GameMeta {
                id: req.game_id,
                variant,
                start,
                created_unix_ms,
            };
            let (game, _) = self
                .registry
                .create(meta, game, request, same_start)
                .await?;
            return Ok(pb::NewGameResponse { game: Some(game) });
        }
        // A server-made id: 128 random bits; a collision is retried, not reported.
        for _ in 0..3 {
            let meta = GameMeta {
                id: new_game_id()?,
                variant,
                start: start.clone(),
                created_unix_ms,
            };
            match self
                .registry
                .create(meta, game.clone(), StartRequest::Named, |_| false)
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

    async fn get_game(&self, req: pb::GetGameRequest) -> Result<pb::GetGameResponse, ServiceError> {
        validate_game_id(&req.game_id)?;
        let game = self
            .registry
            .read(&req.game_id, |e, now| e.view(now))
            .await?;
        Ok(pb::GetGameResponse { game: Some(game) })
    }

    async fn play(&self, req: pb::PlayRequest) -> Result<pb::PlayResponse, ServiceError> {
        validate_game_id(&req.game_id)?;
        validate_move_text(&req.r#move)?;
        let color = color_from_pb(req.color, "color")?;
        let id = req.game_id.clone();
        let text = req.r#move;
        let expected = req.expected_ply;
        self.registry
            .update(req.game_id, move |e, now| {
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
                        let mv = move_to_pb(&pos, played);
                        return Ok((e.view(now), mv));
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
                Ok((e.view(now), mv))
            })
            .await
            .map(|(game, mv)| pb::PlayResponse {
                game: Some(game),
                r#move: Some(mv),
            })
    }

    async fn undo(&self, req: pb::UndoRequest) -> Result<pb::UndoResponse, ServiceError> {
        validate_game_id(&req.game_id)?;
        let color = color_from_pb(req.color, "color")?;
        let id = req.game_id.clone();
        let expected = req.expected_ply;
        self.registry
            .update(req.game_id, move |e, now| {
                check_ply(e, &id, expected)?;
                let mv = e
                    .undo(now, color)
                    .map_err(|r| ServiceError::from_refusal(&id, r, "moves are taken back"))?;
                Ok((e.view(now), mv))
            })
            .await
            .map(|(game, mv)| pb::UndoResponse {
                game: Some(game),
                undone: Some(mv),
            })
    }

    /// The cache and hit/miss counts of LegalMoves by FEN.
    pub fn fen_cache(&self) -> Arc<fen_cache::FenCache> {
        self.fen_cache.clone()
    }

    /// A side's action off the board (resign, offer a draw, answer an offer): the side
    /// named in `color` (`why` says why it must be), the change made under the game's
    /// lock, and the game as it then stands.
    async fn side_action<F>(
        &self,
        game_id: String,
        color: i32,
        why: &'static str,
        mut act: F,
    ) -> Result<pb::Game, ServiceError>
    where
        F: FnMut(&mut GameEntry, u64, rules::Color) -> Result<(), crate::lifecycle::Refusal>
            + Send
            + 'static,
    {
        validate_game_id(&game_id)?;
        let color = required_color(color, why)?;
        let id = game_id.clone();
        self.registry
            .update(game_id, move |e, now| {
                act(e, now, color).map_err(|r| ServiceError::from_refusal(&id, r, ""))?;
                Ok(e.view(now))
            })
            .await
    }

    async fn resign(&self, req: pb::ResignRequest) -> Result<pb::ResignResponse, ServiceError> {
        let game = self
            .side_action(
                req.game_id,
                req.color,
                "name the side that resigns",
                |e, now, c| e.resign(now, c),
            )
            .await?;
        Ok(pb::ResignResponse { game: Some(game) })
    }

    async fn offer_draw(
        &self,
        req: pb::OfferDrawRequest,
    ) -> Result<pb::OfferDrawResponse, ServiceError> {
        let why = "name the side that offers the draw";
        let game = self
            .side_action(req.game_id, req.color, why, |e, now, c| {
                e.offer_draw(now, c)
            })
            .await?;
        Ok(pb::OfferDrawResponse { game: Some(game) })
    }

    async fn respond_to_draw(
        &self,
        req: pb::RespondToDrawRequest,
    ) -> Result<pb::RespondToDrawResponse, ServiceError> {
        let why = "name the side that answers the offer";
        let accept = req.accept;
        let game = self
            .side_action(req.game_id, req.color, why, move |e, now, c| {
                e.respond_to_draw(now, c, accept)
            })
            .await?;
        Ok(pb::RespondToDrawResponse { game: Some(game) })
    }

    async fn claim_draw(
        &self,
        req: pb::ClaimDrawRequest,
    ) -> Result<pb::ClaimDrawResponse, ServiceError> {
        validate_game_id(&req.game_id)?;
        let color = required_color(req.color, "name the side that claims (the side to move)")?;
        let text = if req.r#move.trim().is_empty() {
            None
        } else {
            validate_move_text(&req.r#move)?;
            Some(req.r#move)
        };
        let id = req.game_id.clone();
        let expected = req.expected_ply;
        self.registry
            .update(req.game_id, move |e, now| {
                check_ply(e, &id, expected)?;
                let mv = e
                    .claim_draw(now, color, text.as_deref())
                    .map_err(|r| ServiceError::from_refusal(&id, r, "a draw is claimed"))?;
                Ok((e.view(now), mv))
            })
            .await
            .map(|(game, mv)| pb::ClaimDrawResponse {
                game: Some(game),
                r#move: mv,
            })
    }

    /// Subscribes (the backlog and the live channel) and starts the task that feeds the
    /// spectator's stream. The call itself ends here; the stream does not count as a call
    /// in flight, and the registry's shutdown ends it.
    async fn watch_game(
        &self,
        req: pb::WatchGameRequest,
    ) -> Result<ReceiverStream<Result<pb::WatchGameResponse, tonic::Status>>, ServiceError> {
        validate_game_id(&req.game_id)?;
        let mut sub = self
            .registry
            .subscribe(&req.game_id, req.from_version)
            .await?;
        let (tx, rx) = tokio::sync::mpsc::channel(WATCH_STREAM_BUFFER);
        let id = req.game_id;
        tokio::spawn(async move {
            use pb::watch_game_response::Message;
            loop {
                let item = tokio::select! {
                    item = sub.next() => item,
                    () = tx.closed() => break,
                };
                let (message, last) = match item {
                    WatchItem::Event(event) => (
                        Ok(pb::WatchGameResponse {
                            message: Some(Message::Event((*event).clone())),
                        }),
                        false,
                    ),
                    WatchItem::Resync(version) => {
                        tracing::info!(game_id = %id, resume_from_version = version, "a spectator fell behind; told to resync");
                        (
                            Ok(pb::WatchGameResponse {
                                message: Some(Message::Resync(pb::Resync {
                                    resume_from_version: version,
                                })),
                            }),
                            true,
                        )
                    }
                    WatchItem::End(e) => (Err(tonic::Status::from(e)), true),
                };
                if tx.send(message).await.is_err() || last {
                    break;
                }
            }
        });
        Ok(ReceiverStream::new(rx))
    }

    async fn legal_moves(
        &self,
        req: pb::LegalMovesRequest,
    ) -> Result<wire::EncodedLegalMoves, ServiceError> {
        match req.position {
            Some(RequestedPosition::GameId(id)) => {
                validate_game_id(&id)?;
                self.registry.read(&id, |e, _| e.legal_moves()).await
            }
            Some(RequestedPosition::Fen(fen)) => {
                let variant = variant_from_pb(req.variant, "variant")?;
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

    /// Perft handles its own deadline (rather than the generic one in [`Self::call`]): at
    /// the deadline it raises the stop flag and waits for the count to stop, so when the
    /// caller reads DEADLINE_EXCEEDED the cores and the perft slot are already free.
    async fn perft(
        &self,
        req: pb::PerftRequest,
        deadline: Option<Instant>,
    ) -> Result<pb::PerftResponse, ServiceError> {
        let variant = variant_from_pb(req.variant, "variant")?;
        if req.depth > self.perft.max_depth {
            return Err(ServiceError::DepthTooLarge {
                depth: req.depth,
                max: self.perft.max_depth,
            });
        }
        let pos = if req.fen.is_empty() {
            if variant == Variant::Chess960 {
                return Err(ServiceError::FenRequired {
                    why: "a Chess960 perft needs the start position as a FEN",
                });
            }
            Position::new()
        } else {
            parse_fen("fen", &req.fen, variant)?
        };
        let permit = self.perft_slots.clone().try_acquire_owned().map_err(|_| {
            ServiceError::TooManyPerfts {
                max: self.perft.max_concurrent,
            }
        })?;
        let threads = (req.threads as usize).min(rules::perft::available_threads());
        let stop = Arc::new(AtomicBool::new(false));
        // Dropping this future (deadline passed, caller hung up) raises the stop flag; the
        // count checks it at every node of depth 3 or more, so it stops in microseconds.
        let _raise = RaiseOnDrop(stop.clone());
        let (depth, divide) = (req.depth, req.divide);
        let flag = stop.clone();
        let mut task = tokio::task::spawn_blocking(move || {
            let _permit = permit; // held while computing, released when the count stops
            rules::perft_parallel(&pos, depth, threads, divide, &flag).map(|r| (pos, r))
        });
        let joined = match deadline {
            None => task.await,
            Some(deadline) => match tokio::time::timeout_at(deadline, &mut task).await {
                Ok(joined) => joined,
                Err(_) => {
                    stop.store(true, Ordering::Relaxed);
                    let _ = task.await;
                    return Err(ServiceError::DeadlineExceeded { method: "Perft" });
                }
            },
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

/// Raises a stop flag when dropped.
struct RaiseOnDrop(Arc<AtomicBool>);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn random_u32() -> Result<u32, ServiceError> {
    getrandom::u32().map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))
}

/// A new server-made game id: 128 random bits as 22 URL-safe characters.
fn new_game_id() -> Result<String, ServiceError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ServiceError::Internal(format!("no randomness: {e}")))?;
    Ok(convert::base64url(&bytes))
}

/// The call's deadline from its `grpc-timeout` header, set a little early (a tenth of
/// the timeout, at most 20 ms): tonic's own timers for the same header, on the server
/// and in tonic clients, report CANCELLED ("Timeout expired"), so our DEADLINE_EXCEEDED
/// must be sent, and arrive, before they fire, even on a busy machine.
fn deadline_of<T>(request: &Request<T>) -> Option<Instant> {
    let value = request.metadata().get("grpc-timeout")?.to_str().ok()?;
    let timeout = parse_grpc_timeout(value)?;
    let margin = (timeout / 10).min(Duration::from_millis(20));
    Some(Instant::now() + timeout - margin)
}

/// Parses a gRPC timeout value: up to 8 digits and a unit (H, M, S, m, u, n).
fn parse_grpc_timeout(value: &str) -> Option<Duration> {
    if value.len() < 2 || value.len() > 9 {
        return None;
    }
    let (digits, unit) = value.split_at(value.len() - 1);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.checked_mul(3600)?),
        "M" => Duration::from_secs(n.checked_mul(60)?),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// Tracks one call: counts it in flight, and logs it as cancelled if it is dropped
/// before it finished (the caller hung up).
struct CallGuard {
    in_flight: Arc<AtomicUsize>,
    span: tracing::Span,
    start: Instant,
    finished: bool,
}

impl CallGuard {
    fn new(in_flight: &Arc<AtomicUsize>, span: tracing::Span) -> CallGuard {
        in_flight.fetch_add(1, Ordering::SeqCst);
        CallGuard {
            in_flight: in_flight.clone(),
            span,
            start: Instant::now(),
            finished: false,
        }
    }

    fn finish(&mut self, result: &Result<(), &ServiceError>) {
        self.finished = true;
        let _entered = self.span.enter();
        let (code, level) = match result {
            Ok(()) => (tonic::Code::Ok, tracing::Level::DEBUG),
            Err(e) => match e.code() {
                code @ (tonic::Code::Internal | tonic::Code::DataLoss | tonic::Code::Unknown) => {
                    (code, tracing::Level::ERROR)
                }
                code => (code, tracing::Level::INFO),
            },
        };
        // Recording makes the log layer format the field into the span's text, so it is
        // done only when the event below is logged (a success logs at DEBUG, off by
        // default): the log lines are the same, a success costs less.
        let logged = match level {
            tracing::Level::DEBUG => tracing::enabled!(tracing::Level::DEBUG),
            tracing::Level::ERROR => tracing::enabled!(tracing::Level::ERROR),
            _ => tracing::enabled!(tracing::Level::INFO),
        };
        if !logged {
            return;
        }
        let latency_us = self.start.elapsed().as_micros() as u64;
        self.span
            .record("code", tracing::field::display(code_name(code)));
        self.span.record("latency_us", latency_us);
        match result {
            Ok(()) => tracing::debug!("ok"),
            Err(e) if level == tracing::Level::ERROR => {
                tracing::error!(reason = e.reason(), "{e}")
            }
            Err(e) => tracing::info!(reason = e.reason(), "{e}"),
        }
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        if !self.finished {
            let latency_us = self.start.elapsed().as_micros() as u64;
            self.span.record("code", "CANCELLED");
            self.span.record("latency_us", latency_us);
            let _entered = self.span.enter();
            tracing::info!("the caller went away before the call finished");
        }
    }
}

/// The canonical upper-case name of a gRPC code, for logs.
fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

impl ChessService {
    /// Runs `handler` on the request as one call ([`Self::call`]) under the deadline the
    /// caller sent, its span naming the request's game.
    async fn serve<Req, T, Fut>(
        &self,
        method: &'static str,
        request: Request<Req>,
        handler: impl FnOnce(Req) -> Fut,
    ) -> Result<Response<T>, tonic::Status>
    where
        Req: AboutGame,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let deadline = deadline_of(&request);
        let req = request.into_inner();
        let id = req.game_id().to_owned();
        self.call(method, &id, deadline, handler(req)).await
    }

    /// Runs one call inside its span, under its deadline, and maps its error.
    async fn call<T>(
        &self,
        method: &'static str,
        game_id: &str,
        deadline: Option<Instant>,
        work: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<Response<T>, tonic::Status> {
        let span = tracing::info_span!(
            "rpc",
            method,
            game_id,
            code = tracing::field::Empty,
            latency_us = tracing::field::Empty
        );
        let mut guard = CallGuard::new(&self.in_flight, span.clone());
        let work = async {
            match deadline {
                Some(deadline) => tokio::time::timeout_at(deadline, work)
                    .await
                    .unwrap_or(Err(ServiceError::DeadlineExceeded { method })),
                None => work.await,
            }
        };
        let result = work.instrument(span).await;
        guard.finish(&result.as_ref().map(|_| ()));
        result.map(Response::new).map_err(tonic::Status::from)
    }
}

#[tonic::async_trait]
impl grpc::chess_service_server::ChessService for ChessService {
    async fn new_game(
        &self,
        request: Request<pb::NewGameRequest>,
    ) -> Result<Response<pb::NewGameResponse>, tonic::Status> {
        self.serve("NewGame", request, |r| self.new_game(r)).await
    }

    async fn get_game(
        &self,
        request: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::GetGameResponse>, tonic::Status> {
        self.serve("GetGame", request, |r| self.get_game(r)).await
    }

    async fn play(
        &self,
        request: Request<pb::PlayRequest>,
    ) -> Result<Response<pb::PlayResponse>, tonic::Status> {
        self.serve("Play", request, |r| self.play(r)).await
    }

    async fn undo(
        &self,
        request: Request<pb::UndoRequest>,
    ) -> Result<Response<pb::UndoResponse>, tonic::Status> {
        self.serve("Undo", request, |r| self.undo(r)).await
    }

    async fn legal_moves(
        &self,
        request: Request<pb::LegalMovesRequest>,
    ) -> Result<Response<wire::EncodedLegalMoves>, tonic::Status> {
        self.serve("LegalMoves", request, |r| self.legal_moves(r))
            .await
    }

    async fn perft(
        &self,
        request: Request<pb::PerftRequest>,
    ) -> Result<Response<pb::PerftResponse>, tonic::Status> {
        // Perft handles its own deadline, so the generic one is not set.
        let deadline = deadline_of(&request);
        let req = request.into_inner();
        self.call("Perft", "", None, self.perft(req, deadline))
            .await
    }

    async fn resign(
        &self,
        request: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::ResignResponse>, tonic::Status> {
        self.serve("Resign", request, |r| self.resign(r)).await
    }

    async fn offer_draw(
        &self,
        request: Request<pb::OfferDrawRequest>,
    ) -> Result<Response<pb::OfferDrawResponse>, tonic::Status> {
        self.serve("OfferDraw", request, |r| self.offer_draw(r))
            .await
    }

    async fn respond_to_draw(
        &self,
        request: Request<pb::RespondToDrawRequest>,
    ) -> Result<Response<pb::RespondToDrawResponse>, tonic::Status> {
        self.serve("RespondToDraw", request, |r| self.respond_to_draw(r))
            .await
    }

    async fn claim_draw(
        &self,
        request: Request<pb::ClaimDrawRequest>,
    ) -> Result<Response<pb::ClaimDrawResponse>, tonic::Status> {
        self.serve("ClaimDraw", request, |r| self.claim_draw(r))
            .await
    }

    type WatchGameStream = ReceiverStream<Result<pb::WatchGameResponse, tonic::Status>>;

    async fn watch_game(
        &self,
        request: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, tonic::Status> {
        self.serve("WatchGame", request, |r| self.watch_game(r))
            .await
    }
}

/// The game a request is about, for its call's span ("" when it names none).
trait AboutGame {
    fn game_id(&self) -> &str;
}

macro_rules! about_game_by_field {
    ($($request:ty),* $(,)?) => {
        $(impl AboutGame for $request {
            fn game_id(&self) -> &str {
                &self.game_id
            }
        })*
    };
}

about_game_by_field!(
    pb::NewGameRequest,
    pb::GetGameRequest,
    pb::PlayRequest,
    pb::UndoRequest,
    pb::ResignRequest,
    pb::OfferDrawRequest,
    pb::RespondToDrawRequest,
    pb::ClaimDrawRequest,
    pb::WatchGameRequest,
);

impl AboutGame for pb::LegalMovesRequest {
    fn game_id(&self) -> &str {
        match &self.position {
            Some(RequestedPosition::GameId(id)) => id,
            _ => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_parse() {
        assert_eq!(parse_grpc_timeout("300m"), Some(Duration::from_millis(300)));
        assert_eq!(parse_grpc_timeout("2S"), Some(Duration::from_secs(2)));
        assert_eq!(parse_grpc_timeout("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(
            parse_grpc_timeout("99999999u"),
            Some(Duration::from_micros(99_999_999))
        );
        assert_eq!(parse_grpc_timeout("m"), None);
        assert_eq!(parse_grpc_timeout("123456789S"), None, "at most 8 digits");
        assert_eq!(parse_grpc_timeout("10x"), None);
    }
}
