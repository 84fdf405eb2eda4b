//! `chess.v1.ChessService`: the gRPC service over the registry. What every request meets
//! before it (load shedding, auth, the gRPC metrics, trace context) is the edge,
//! [`crate::service::edge`]. Each concern has its file:
//! - [`call`]: the glue every call goes through (deadline, span, logging, code names);
//! - [`validate`]: request fields read into domain types, or an error naming the field;
//! - [`game_key`]: a tenant's game id as the registry's key, and a tenant's keys as a
//!   listing's range;
//! - [`start`]: NewGame's start resolution;
//! - [`games`]: the calls on games (NewGame, GetGame, Play, Undo, the draws, LegalMoves);
//! - [`import`]: ImportGame, PGN text into a stored game;
//! - [`watch`]: the spectator stream;
//! - [`perft`]: Perft on the blocking pool, bounded and cancellable;
//! - [`winnability`]: Winnability (can each side still mate?), the same way, in Perft's
//!   slots;
//! - [`convert`], [`wire`], [`views`]: domain types into `chess.v1` messages, the
//!   pre-encoded LegalMoves answer, and the answers cached per game state;
//! - [`error`]: every error a caller can meet and its gRPC status;
//! - [`answer_budget`]: the server-wide bound on bytes of large answers not yet sent;
//! - [`proto_enums`]: the values of a `chess.v1` enum, from the descriptor set;
//! - [`log_text`]: client-supplied text made safe for a log line;
//! - [`malformed`]: tonic's answers to undecodable requests made caller errors.
//!
//! The registry answers in domain types and [`RegistryError`]; they become messages and
//! statuses here, through one `From` each.

pub mod answer_budget;
mod call;
mod catalog;
pub mod convert;
pub mod cpu_pool;
pub mod edge;
pub mod error;
pub mod fen_cache;
pub mod game_key;
mod games;
mod import;
pub mod log_text;
pub mod malformed;
mod perft;
pub mod proto_enums;
mod start;
pub mod validate;
mod views;
mod watch;
mod winnability;
mod wire;

/// The generated gRPC server of `chess.v1.ChessService`: the client's messages, except
/// that LegalMoves answers with pre-encoded bytes (see `build/proto.rs` and [`wire`]).
pub mod grpc {
    #![allow(missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/server/chess.v1.rs"));
}

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use tokio::sync::Semaphore;
use tonic::{Request, Response};

pub use error::ServiceError;
pub use perft::PerftLimits;

use crate::pb;
use crate::registry::{Registry, RegistryError};
use crate::store::StoreError;

/// The service: a registry of games plus the stateless calls.
pub struct ChessService {
    registry: Arc<Registry>,
    cpu: cpu_pool::CpuPool,
    fen_cache: Arc<fen_cache::FenCache>,
    perft: PerftLimits,
    perft_slots: Arc<Semaphore>,
    perft_callers: Arc<perft::PerftCallers>,
    in_flight: Arc<AtomicUsize>,
    answers: Arc<answer_budget::AnswerBudget>,
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
        // Parse the opening names now (a few milliseconds), not in the first call that
        // shows a game.
        crate::lifecycle::opening::book();
        Ok(ChessService {
            registry,
            cpu: cpu_pool::CpuPool::new(cpu_threads)?,
            fen_cache: Arc::new(fen_cache::FenCache::new(fen_cache_entries)),
            perft,
            perft_slots: Arc::new(Semaphore::new(perft.max_concurrent)),
            perft_callers: Arc::default(),
            in_flight: Arc::new(AtomicUsize::new(0)),
            answers: answer_budget::AnswerBudget::new(answer_budget::DEFAULT_MIB),
        })
    }

    /// The service with `answers` as its budget of unsent answer bytes (else one of
    /// [`answer_budget::DEFAULT_MIB`]).
    pub fn with_answer_budget(mut self, answers: Arc<answer_budget::AnswerBudget>) -> Self {
        self.answers = answers;
        self
    }

    /// Calls of this service running now: shutdown waits for them to reach zero.
    pub fn in_flight(&self) -> Arc<AtomicUsize> {
        self.in_flight.clone()
    }

    /// The cache and hit/miss counts of LegalMoves by FEN.
    pub fn fen_cache(&self) -> Arc<fen_cache::FenCache> {
        self.fen_cache.clone()
    }

    /// How many perfts are computing now, for metrics.
    pub fn perfts_running(&self) -> impl Fn() -> usize + Send + Sync + 'static {
        let slots = self.perft_slots.clone();
        let max = self.perft.max_concurrent;
        move || max.saturating_sub(slots.available_permits())
    }
}

/// The game id of key `key` as answers show it (see [`game_key`]): an error about a
/// tenant's game never names the tenant, so it reads exactly as one about a missing game.
fn plain(id: String) -> String {
    match game_key::GameKey::plain_id(&id) {
        plain if plain.len() == id.len() => id,
        plain => plain.to_string(),
    }
}

/// A store error with the game keys it names made plain game ids.
fn plain_store_error(e: StoreError) -> StoreError {
    match e {
        StoreError::AlreadyExists { id } => StoreError::AlreadyExists { id: plain(id) },
        StoreError::DataLoss { id, reason } => StoreError::DataLoss {
            id: plain(id),
            reason,
        },
        StoreError::Conflict { id, current } => StoreError::Conflict {
            id: plain(id),
            current,
        },
        StoreError::HistoryFull { id, len, limit } => StoreError::HistoryFull {
            id: plain(id),
            len,
            limit,
        },
        other => other,
    }
}

impl From<RegistryError> for ServiceError {
    fn from(e: RegistryError) -> ServiceError {
        match e {
            RegistryError::NotFound { id } => ServiceError::GameNotFound { id: plain(id) },
            RegistryError::Damaged(e) => ServiceError::DataLoss(plain_store_error(e)),
            RegistryError::Store(e) => ServiceError::from_store(plain_store_error(e)),
            RegistryError::Refused { id, refusal } => {
                ServiceError::from_refusal(&plain(id), refusal, "")
            }
            RegistryError::ConcurrentChange { id } => {
                ServiceError::ConcurrentChange { id: plain(id) }
            }
            RegistryError::VersionMismatch {
                id,
                expected,
                current,
            } => ServiceError::VersionMismatch {
                id: plain(id),
                expected,
                current,
            },
            RegistryError::VersionAhead { id, from, current } => ServiceError::VersionAhead {
                id: plain(id),
                from,
                current,
            },
            RegistryError::ShuttingDown => ServiceError::ShuttingDown,
            RegistryError::Internal(why) => ServiceError::Internal(why),
        }
    }
}

#[tonic::async_trait]
impl grpc::chess_service_server::ChessService for ChessService {
    async fn new_game(
        &self,
        request: Request<pb::NewGameRequest>,
    ) -> Result<Response<pb::NewGameResponse>, tonic::Status> {
        self.serve("NewGame", request, |r, c| self.new_game(r, c.tenant))
            .await
    }

    async fn get_game(
        &self,
        request: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::GetGameResponse>, tonic::Status> {
        self.serve("GetGame", request, |r, c| self.get_game(r, c.tenant))
            .await
    }

    async fn play(
        &self,
        request: Request<pb::PlayRequest>,
    ) -> Result<Response<pb::PlayResponse>, tonic::Status> {
        self.serve("Play", request, |r, c| self.play(r, c.tenant))
            .await
    }

    async fn undo(
        &self,
        request: Request<pb::UndoRequest>,
    ) -> Result<Response<pb::UndoResponse>, tonic::Status> {
        self.serve("Undo", request, |r, c| self.undo(r, c)).await
    }

    async fn legal_moves(
        &self,
        request: Request<pb::LegalMovesRequest>,
    ) -> Result<Response<wire::EncodedLegalMoves>, tonic::Status> {
        self.serve("LegalMoves", request, |r, c| self.legal_moves(r, c.tenant))
            .await
    }

    async fn perft(
        &self,
        request: Request<pb::PerftRequest>,
    ) -> Result<Response<pb::PerftResponse>, tonic::Status> {
        // Perft handles its own deadline, so the generic one is not set.
        let deadline = call::deadline_of(&request);
        let caller = call::caller_of(&request);
        let parent = crate::service::edge::trace_context::parent_of(&request);
        let counted = if caller.from_token {
            perft::PerftCaller::Token(caller.name.clone())
        } else {
            perft::PerftCaller::Connection(request.remote_addr())
        };
        let req = request.into_inner();
        self.call(
            "Perft",
            &caller,
            "",
            None,
            parent,
            None,
            self.perft(req, deadline, counted),
        )
        .await
    }

    async fn resign(
        &self,
        request: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::ResignResponse>, tonic::Status> {
        self.serve("Resign", request, |r, c| self.resign(r, c.tenant))
            .await
    }

    async fn offer_draw(
        &self,
        request: Request<pb::OfferDrawRequest>,
    ) -> Result<Response<pb::OfferDrawResponse>, tonic::Status> {
        self.serve("OfferDraw", request, |r, c| self.offer_draw(r, c.tenant))
            .await
    }

    async fn respond_to_draw(
        &self,
        request: Request<pb::RespondToDrawRequest>,
    ) -> Result<Response<pb::RespondToDrawResponse>, tonic::Status> {
        self.serve("RespondToDraw", request, |r, c| {
            self.respond_to_draw(r, c.tenant)
        })
        .await
    }

    async fn claim_draw(
        &self,
        request: Request<pb::ClaimDrawRequest>,
    ) -> Result<Response<pb::ClaimDrawResponse>, tonic::Status> {
        self.serve("ClaimDraw", request, |r, c| self.claim_draw(r, c.tenant))
            .await
    }

    async fn add_time(
        &self,
        request: Request<pb::AddTimeRequest>,
    ) -> Result<Response<pb::AddTimeResponse>, tonic::Status> {
        self.serve("AddTime", request, |r, c| self.add_time(r, c.tenant))
            .await
    }

    type WatchGameStream = watch::WatchStream;

    async fn watch_game(
        &self,
        request: Request<pb::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, tonic::Status> {
        self.serve("WatchGame", request, |r, c| self.watch_game(r, c.tenant))
            .await
    }

    async fn import_game(
        &self,
        request: Request<pb::ImportGameRequest>,
    ) -> Result<Response<pb::ImportGameResponse>, tonic::Status> {
        self.serve("ImportGame", request, |r, c| self.import_game(r, c.tenant))
            .await
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, tonic::Status> {
        self.serve_large("ListGames", request, catalog::MAX_PAGE_BYTES, |r, c| {
            self.list_games(r, c)
        })
        .await
    }

    async fn delete_game(
        &self,
        request: Request<pb::DeleteGameRequest>,
    ) -> Result<Response<pb::DeleteGameResponse>, tonic::Status> {
        self.serve("DeleteGame", request, |r, c| self.delete_game(r, c.tenant))
            .await
    }

    async fn winnability(
        &self,
        request: Request<pb::WinnabilityRequest>,
    ) -> Result<Response<pb::WinnabilityResponse>, tonic::Status> {
        // Winnability handles its own deadline, as Perft does.
        let deadline = call::deadline_of(&request);
        let caller = call::caller_of(&request);
        let parent = crate::service::edge::trace_context::parent_of(&request);
        let req = request.into_inner();
        let game_id = call::logged_key(&caller, call::AboutGame::game_id(&req));
        let tenant = caller.tenant.clone();
        self.call(
            "Winnability",
            &caller,
            &game_id,
            None,
            parent,
            None,
            self.winnability(req, deadline, tenant),
        )
        .await
    }
}
