//! One caller: its connection, its game and the call it makes next.

use std::sync::Arc;

use chess_service::pb::{
    self, chess_service_client::ChessServiceClient, legal_moves_request::Position as Requested,
};
use chess_service::seeded_rng::Rng;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use crate::args::{Args, ClientKind, Rpc};
use crate::positions::next_fen_serial;
use crate::raw_codec::RawCodec;
use crate::workload::{long_game, random_game};

/// One caller's state.
pub(crate) struct Caller {
    pub(crate) chess: ChessServiceClient<Channel>,
    pub(crate) health: HealthClient<Channel>,
    pub(crate) raw: tonic::client::Grpc<Channel>,
    pub(crate) client: ClientKind,
    pub(crate) positions: Arc<Vec<(String, i32)>>,
    pub(crate) fen: String,
    pub(crate) game_id: String,
    pub(crate) script: Vec<String>,
    pub(crate) ply: usize,
    pub(crate) rng: Rng,
    /// The `view` of Play and Undo requests.
    pub(crate) view: i32,
    /// For [`Rpc::PlayUndo`]: the next call takes the move back.
    pub(crate) undo_next: bool,
    /// For [`Rpc::WatchOther`]: the channel the spectator uses, and its open stream on
    /// the current game.
    pub(crate) watcher: Option<Channel>,
    pub(crate) watch: Option<tonic::Streaming<pb::WatchGameResponse>>,
}

impl Caller {
    pub(crate) async fn new(
        channel: Channel,
        args: &Args,
        rpc: Rpc,
        positions: Arc<Vec<(String, i32)>>,
        client: ClientKind,
        seed: u64,
    ) -> Result<Caller, tonic::Status> {
        let mut chess = ChessServiceClient::new(channel.clone());
        let game = chess
            .new_game(pb::NewGameRequest::default())
            .await?
            .into_inner()
            .game
            .unwrap_or_default();
        // A game a few moves in, so LegalMoves by game is not the opening position; for
        // play-undo, a game that goes on past the ply asked for.
        let (script, setup) = if rpc == Rpc::PlayUndo {
            (long_game(seed, args.at_ply + 1), args.at_ply)
        } else {
            (random_game(seed, 120), 6)
        };
        let mut caller = Caller {
            chess,
            health: HealthClient::new(channel.clone()),
            raw: tonic::client::Grpc::new(channel),
            client,
            positions,
            fen: args.fen.clone(),
            game_id: game.game_id,
            script,
            ply: 0,
            rng: Rng(seed.wrapping_mul(7919)),
            view: args.view.pb(),
            undo_next: false,
            watcher: None,
            watch: None,
        };
        for _ in 0..setup.min(caller.script.len()) {
            caller.play().await?;
        }
        Ok(caller)
    }

    /// Sends `req` to `path` and counts the answer's bytes without decoding it.
    pub(crate) async fn raw_call<Req: prost::Message + Send + Sync + 'static>(
        &mut self,
        path: &'static str,
        req: Req,
    ) -> Result<u64, tonic::Status> {
        self.raw
            .ready()
            .await
            .map_err(|e| tonic::Status::unavailable(format!("channel not ready: {e}")))?;
        let answer = self
            .raw
            .unary(
                tonic::Request::new(req),
                PathAndQuery::from_static(path),
                RawCodec::<Req>::default(),
            )
            .await?;
        Ok(answer.into_inner() as u64)
    }

    /// LegalMoves, by the configured client; returns the answer's bytes (raw client) or 0.
    pub(crate) async fn legal_moves(
        &mut self,
        req: pb::LegalMovesRequest,
    ) -> Result<u64, tonic::Status> {
        if self.client == ClientKind::Raw {
            return self
                .raw_call("/chess.v1.ChessService/LegalMoves", req)
                .await;
        }
        self.chess.legal_moves(req).await.map(|_| 0)
    }

    pub(crate) async fn play(&mut self) -> Result<u64, tonic::Status> {
        if self.ply >= self.script.len() {
            let game = self
                .chess
                .new_game(pb::NewGameRequest::default())
                .await?
                .into_inner()
                .game;
            self.game_id = game.unwrap_or_default().game_id;
            self.ply = 0;
            self.watch = None;
        }
        let req = pb::PlayRequest {
            game_id: self.game_id.clone(),
            r#move: self.script[self.ply].clone(),
            expected_ply: Some(self.ply as u32),
            color: 0,
            view: self.view,
            ..Default::default()
        };
        let bytes = if self.client == ClientKind::Raw {
            self.raw_call("/chess.v1.ChessService/Play", req).await?
        } else {
            self.chess.play(req).await?;
            0
        };
        self.ply += 1;
        Ok(bytes)
    }

    /// Play and Undo in turn: the game stays at the ply it was brought to.
    pub(crate) async fn play_undo(&mut self) -> Result<u64, tonic::Status> {
        if !self.undo_next {
            self.undo_next = true;
            return self.play().await;
        }
        let req = pb::UndoRequest {
            game_id: self.game_id.clone(),
            expected_ply: Some(self.ply as u32),
            view: self.view,
            ..Default::default()
        };
        let bytes = if self.client == ClientKind::Raw {
            self.raw_call("/chess.v1.ChessService/Undo", req).await?
        } else {
            self.chess.undo(req).await?;
            0
        };
        self.ply -= 1;
        self.undo_next = false;
        Ok(bytes)
    }

    /// A Play, then the wait until the spectator on the other replica has its move.
    pub(crate) async fn play_watched(&mut self) -> Result<u64, tonic::Status> {
        if self.ply >= self.script.len() {
            // A new game (and so a new stream), before the timed part of the next call.
            return self.play().await;
        }
        if self.watch.is_none() {
            let channel = self
                .watcher
                .clone()
                .ok_or_else(|| tonic::Status::internal("no spectator channel"))?;
            let stream = ChessServiceClient::new(channel)
                .watch_game(pb::WatchGameRequest {
                    game_id: self.game_id.clone(),
                    from_version: self.ply as u64 + 1,
                })
                .await?
                .into_inner();
            self.watch = Some(stream);
        }
        // Each move is one event: the move of ply n makes version n + 1.
        let want = self.ply as u64 + 1;
        self.play().await?;
        let Some(watch) = self.watch.as_mut() else {
            return Err(tonic::Status::internal("the watch stream is gone"));
        };
        loop {
            let message = watch
                .message()
                .await?
                .ok_or_else(|| tonic::Status::unavailable("the watch stream ended"))?;
            match message.message {
                Some(pb::watch_game_response::Message::Event(e)) if e.version >= want => {
                    return Ok(0);
                }
                Some(pb::watch_game_response::Message::Event(_)) => {}
                _ => {
                    self.watch = None;
                    return Err(tonic::Status::data_loss("the spectator was told to resync"));
                }
            }
        }
    }

    /// One call; returns the answer's bytes (raw client) or 0.
    pub(crate) async fn call(&mut self, rpc: Rpc) -> Result<u64, tonic::Status> {
        match rpc {
            Rpc::Health => {
                let req = HealthCheckRequest {
                    service: "chess.v1.ChessService".into(),
                };
                if self.client == ClientKind::Raw {
                    return self.raw_call("/grpc.health.v1.Health/Check", req).await;
                }
                self.health.check(req).await.map(|_| 0)
            }
            Rpc::LegalMovesGame => {
                let req = pb::LegalMovesRequest {
                    position: Some(Requested::GameId(self.game_id.clone())),
                    variant: 0,
                };
                self.legal_moves(req).await
            }
            Rpc::LegalMovesFen => {
                let req = pb::LegalMovesRequest {
                    position: Some(Requested::Fen(self.fen.clone())),
                    variant: 0,
                };
                self.legal_moves(req).await
            }
            Rpc::LegalMovesFenMiss => {
                let serial = next_fen_serial();
                let (fen, variant) =
                    &self.positions[(serial % self.positions.len() as u64) as usize];
                // Full-move numbers 1..=4e9 (the rules keep them as u32).
                let fullmove = 1 + serial % 4_000_000_000;
                let req = pb::LegalMovesRequest {
                    position: Some(Requested::Fen(format!("{fen} {fullmove}"))),
                    variant: *variant,
                };
                self.legal_moves(req).await
            }
            Rpc::Play => self.play().await,
            Rpc::WatchOther => self.play_watched().await,
            Rpc::PlayUndo => self.play_undo().await,
            Rpc::Mix => {
                let pick = self.rng.next_u64() % 100;
                let rpc = match pick {
                    0..50 => Rpc::LegalMovesGame,
                    50..70 => Rpc::LegalMovesFen,
                    70..95 => Rpc::Play,
                    _ => {
                        let req = pb::GetGameRequest {
                            game_id: self.game_id.clone(),
                            ..Default::default()
                        };
                        return self.chess.get_game(req).await.map(|_| 0);
                    }
                };
                Box::pin(self.call(rpc)).await
            }
        }
    }
}
