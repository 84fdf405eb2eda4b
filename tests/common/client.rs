//! The gRPC client helpers every server test uses: one way to make a game, play, undo,
//! read and watch it. Each panics with the call and its status when the call fails, so a
//! test states only what it checks; a test that expects a failure makes the raw call and
//! checks it with [`super::server::expect_error`].

use std::time::Duration;

use chess_service::pb::{self, chess_service_client::ChessServiceClient};
use tonic::transport::Channel;

/// A typed client on one channel.
pub type Client = ChessServiceClient<Channel>;
/// A WatchGame stream.
pub type Stream = tonic::Streaming<pb::WatchGameResponse>;

/// The `color` field of a call made for White.
pub const WHITE: i32 = pb::Color::White as i32;
/// The `color` field of a call made for Black.
pub const BLACK: i32 = pb::Color::Black as i32;

/// A NewGame request for the standard start under `id`; fill in other fields with
/// `NewGameRequest { fen: ..., ..named(id) }`.
pub fn named(id: &str) -> pb::NewGameRequest {
    pb::NewGameRequest {
        game_id: id.into(),
        ..Default::default()
    }
}

/// A time control of `initial_ms` plus `increment_ms` a move, as NewGame takes it.
pub fn time_control(initial_ms: u64, increment_ms: u64) -> Option<pb::TimeControl> {
    Some(pb::TimeControl {
        initial_ms,
        increment_ms,
        ..Default::default()
    })
}

/// Creates a game; the game as the server returns it.
pub async fn new_game(c: &mut Client, req: pb::NewGameRequest) -> pb::Game {
    let id = req.game_id.clone();
    c.new_game(req)
        .await
        .unwrap_or_else(|e| panic!("NewGame {id}: {e:?}"))
        .into_inner()
        .game
        .expect("NewGame returns a game")
}

/// A Play request for `mv` on `id`, with no expected ply and no colour.
pub fn play_request(id: &str, mv: &str) -> pb::PlayRequest {
    pb::PlayRequest {
        game_id: id.into(),
        r#move: mv.into(),
        ..Default::default()
    }
}

/// Plays `req`; the whole response (the move as played and the game after it).
/// An OfferDraw request by `color` in game `id`.
pub fn offer(id: &str, color: i32) -> pb::OfferDrawRequest {
    pb::OfferDrawRequest {
        game_id: id.into(),
        color,
        ..Default::default()
    }
}

/// A RespondToDraw request: `color` accepts or declines the pending offer in game `id`.
pub fn respond(id: &str, color: i32, accept: bool) -> pb::RespondToDrawRequest {
    pb::RespondToDrawRequest {
        game_id: id.into(),
        color,
        accept,
        ..Default::default()
    }
}

pub async fn play_with(c: &mut Client, req: pb::PlayRequest) -> pb::PlayResponse {
    let what = format!("Play {} {}", req.game_id, req.r#move);
    c.play(req)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e:?}"))
        .into_inner()
}

/// Plays `mv` on `id`; the game after it.
pub async fn play(c: &mut Client, id: &str, mv: &str) -> pb::Game {
    play_with(c, play_request(id, mv))
        .await
        .game
        .expect("Play returns the game")
}

/// Takes back the last move of `id`; the whole response.
pub async fn undo_with(c: &mut Client, id: &str) -> pb::UndoResponse {
    c.undo(pb::UndoRequest {
        game_id: id.into(),
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("Undo {id}: {e:?}"))
    .into_inner()
}

/// Takes back the last move of `id`; the game after it.
pub async fn undo(c: &mut Client, id: &str) -> pb::Game {
    undo_with(c, id).await.game.expect("Undo returns the game")
}

/// GetGame, keeping a failure for the caller to check.
pub async fn try_get(c: &mut Client, id: &str) -> Result<pb::Game, tonic::Status> {
    c.get_game(pb::GetGameRequest {
        game_id: id.into(),
        ..Default::default()
    })
    .await
    .map(|r| r.into_inner().game.expect("GetGame returns a game"))
}

/// The game `id` as the server holds it now.
pub async fn get(c: &mut Client, id: &str) -> pb::Game {
    try_get(c, id)
        .await
        .unwrap_or_else(|e| panic!("GetGame {id}: {e:?}"))
}

/// Opens a WatchGame stream on `id` from `from_version`.
pub async fn watch(c: &mut Client, id: &str, from_version: u64) -> Stream {
    c.watch_game(pb::WatchGameRequest {
        game_id: id.into(),
        from_version,
    })
    .await
    .unwrap_or_else(|e| panic!("WatchGame {id}: {e:?}"))
    .into_inner()
}

/// The next event of a stream (panics on anything else, or after 10 s).
pub async fn next_event(s: &mut Stream) -> pb::GameEvent {
    let msg = tokio::time::timeout(Duration::from_secs(10), s.message())
        .await
        .expect("an event within 10 s")
        .expect("the stream is healthy")
        .expect("the stream goes on");
    match msg.message {
        Some(pb::watch_game_response::Message::Event(e)) => e,
        other => panic!("expected an event, got {other:?}"),
    }
}

/// The whole event history of a game, as a new spectator gets it.
pub async fn history(c: &mut Client, id: &str) -> Vec<pb::GameEvent> {
    let last = get(c, id).await.version;
    let mut stream = watch(c, id, 0).await;
    let mut events = Vec::new();
    while events.len() as u64 <= last {
        events.push(next_event(&mut stream).await);
    }
    events
}

/// Plays `mv` on `id` at `expected_ply` (`None`: whatever the ply is); the whole response.
pub async fn play_at(
    c: &mut Client,
    id: &str,
    mv: &str,
    expected_ply: Option<u32>,
) -> pb::PlayResponse {
    play_with(
        c,
        pb::PlayRequest {
            expected_ply,
            ..play_request(id, mv)
        },
    )
    .await
}
