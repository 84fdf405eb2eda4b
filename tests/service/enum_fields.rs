//! Every enum field of every request refuses a number its enum does not have with
//! INVALID_ARGUMENT, a reason and a `BadRequest` violation naming the field, instead of
//! reading it as the default (a misspelt enum in a client that sends numbers must not
//! become "unspecified" without a word).

use chess_service::pb;
use tonic::Code;

use crate::common::client::{WHITE, new_game, time_control};
use crate::common::server::{Server, expect_error, violated_fields};

/// A number no enum of the API has.
const UNKNOWN: i32 = 77;

/// Checks one refusal: the code, the reason and the violated field.
fn refused<T: std::fmt::Debug>(
    call: &str,
    result: Result<tonic::Response<T>, tonic::Status>,
    reason: &str,
    field: &str,
) {
    let status = expect_error(result, Code::InvalidArgument, reason);
    assert!(
        violated_fields(&status).iter().any(|f| f == field),
        "{call}: the BadRequest names {:?}, not {field}: {status:?}",
        violated_fields(&status)
    );
}

#[tokio::test]
async fn every_enum_field_of_every_request_refuses_an_unknown_number() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    let id = "enums";
    new_game(
        &mut c,
        pb::NewGameRequest {
            game_id: id.into(),
            time_control: time_control(60_000, 0),
            ..Default::default()
        },
    )
    .await;
    let game = || id.to_string();

    // NewGame: variant, view, time_control.clock_start.
    let r = c
        .new_game(pb::NewGameRequest {
            game_id: "e-variant".into(),
            variant: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("NewGame.variant", r, "INVALID_VARIANT", "variant");
    let r = c
        .new_game(pb::NewGameRequest {
            game_id: "e-view".into(),
            view: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("NewGame.view", r, "INVALID_VIEW", "view");
    let r = c
        .new_game(pb::NewGameRequest {
            game_id: "e-clock".into(),
            time_control: Some(pb::TimeControl {
                initial_ms: 60_000,
                increment_ms: 0,
                clock_start: UNKNOWN,
            }),
            ..Default::default()
        })
        .await;
    refused(
        "NewGame.time_control.clock_start",
        r,
        "INVALID_TIME_CONTROL",
        "time_control.clock_start",
    );

    // GetGame, ImportGame: view.
    let r = c
        .get_game(pb::GetGameRequest {
            game_id: game(),
            view: UNKNOWN,
        })
        .await;
    refused("GetGame.view", r, "INVALID_VIEW", "view");
    let r = c
        .import_game(pb::ImportGameRequest {
            pgn: "1. e4 *".into(),
            game_id: "e-import".into(),
            view: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("ImportGame.view", r, "INVALID_VIEW", "view");

    // The changes: color and view.
    let r = c
        .play(pb::PlayRequest {
            game_id: game(),
            r#move: "e2e4".into(),
            color: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("Play.color", r, "INVALID_COLOR", "color");
    let r = c
        .play(pb::PlayRequest {
            game_id: game(),
            r#move: "e2e4".into(),
            view: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("Play.view", r, "INVALID_VIEW", "view");
    let r = c
        .undo(pb::UndoRequest {
            game_id: game(),
            color: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("Undo.color", r, "INVALID_COLOR", "color");
    let r = c
        .undo(pb::UndoRequest {
            game_id: game(),
            view: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("Undo.view", r, "INVALID_VIEW", "view");
    let r = c
        .resign(pb::ResignRequest {
            game_id: game(),
            color: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("Resign.color", r, "INVALID_COLOR", "color");
    let r = c
        .resign(pb::ResignRequest {
            game_id: game(),
            color: WHITE,
            view: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("Resign.view", r, "INVALID_VIEW", "view");
    let r = c
        .offer_draw(pb::OfferDrawRequest {
            game_id: game(),
            color: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("OfferDraw.color", r, "INVALID_COLOR", "color");
    let r = c
        .offer_draw(pb::OfferDrawRequest {
            game_id: game(),
            color: WHITE,
            view: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("OfferDraw.view", r, "INVALID_VIEW", "view");
    let r = c
        .respond_to_draw(pb::RespondToDrawRequest {
            game_id: game(),
            color: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("RespondToDraw.color", r, "INVALID_COLOR", "color");
    let r = c
        .respond_to_draw(pb::RespondToDrawRequest {
            game_id: game(),
            color: WHITE,
            view: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("RespondToDraw.view", r, "INVALID_VIEW", "view");
    let r = c
        .claim_draw(pb::ClaimDrawRequest {
            game_id: game(),
            color: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("ClaimDraw.color", r, "INVALID_COLOR", "color");
    let r = c
        .claim_draw(pb::ClaimDrawRequest {
            game_id: game(),
            color: WHITE,
            view: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("ClaimDraw.view", r, "INVALID_VIEW", "view");
    let r = c
        .add_time(pb::AddTimeRequest {
            game_id: game(),
            color: UNKNOWN,
            ms: 1_000,
            ..Default::default()
        })
        .await;
    refused("AddTime.color", r, "INVALID_COLOR", "color");
    let r = c
        .add_time(pb::AddTimeRequest {
            game_id: game(),
            color: WHITE,
            ms: 1_000,
            view: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("AddTime.view", r, "INVALID_VIEW", "view");

    // The position reads: variant.
    let r = c
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::Fen(
                "4k3/8/8/8/8/8/8/4K3 w - - 0 1".into(),
            )),
            variant: UNKNOWN,
        })
        .await;
    refused("LegalMoves.variant", r, "INVALID_VARIANT", "variant");
    let r = c
        .perft(pb::PerftRequest {
            depth: 1,
            variant: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused("Perft.variant", r, "INVALID_VARIANT", "variant");
    let r = c
        .winnability(pb::WinnabilityRequest {
            position: Some(pb::winnability_request::Position::Fen(
                "4k3/8/8/8/8/8/8/4K3 w - - 0 1".into(),
            )),
            variant: UNKNOWN,
        })
        .await;
    refused("Winnability.variant", r, "INVALID_VARIANT", "variant");

    // ListGames: status_filter.
    let r = c
        .list_games(pb::ListGamesRequest {
            status_filter: UNKNOWN,
            ..Default::default()
        })
        .await;
    refused(
        "ListGames.status_filter",
        r,
        "INVALID_STATUS_FILTER",
        "status_filter",
    );

    // Nothing above changed the game.
    let after = crate::common::client::get(&mut c, id).await;
    assert_eq!(after.version, 0, "a refused request changed nothing");
}
