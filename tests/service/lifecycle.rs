//! The game lifecycle through gRPC against the real server binary: every ending
//! (resignation, agreement, claimed threefold on the board and with the announced move,
//! claimed fifty moves, out of time, timeout against insufficient material), whose turn,
//! an offer that lapses, a refused claim, a flag decided at the next call at its exact
//! time (also after the game was evicted), and clocks restored by undo.
//!
//! Time controls are short (hundreds of milliseconds) so the tests stay fast; assertions
//! use the times the server reports, and margins only where real time must pass.

use std::time::Duration;

use chess_service::pb;
use tonic::Code;

use super::STORE;
use crate::common::client::{
    BLACK, WHITE, get, named, new_game, offer, play, play_request, respond, time_control,
};
use crate::common::server::{Server, error_info, expect_error, violated_fields};

fn status(g: &pb::Game) -> pb::GameStatus {
    pb::GameStatus::try_from(g.status).expect("a known status")
}

fn claim(id: &str, color: i32, mv: &str) -> pb::ClaimDrawRequest {
    pb::ClaimDrawRequest {
        game_id: id.into(),
        color,
        r#move: mv.into(),
        expected_ply: None,
        ..Default::default()
    }
}

fn clock(g: &pb::Game) -> pb::Clock {
    g.clock.expect("a timed game shows its clocks")
}

#[tokio::test]
async fn resignation_ends_the_game_and_the_other_side_wins() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    new_game(&mut c, named("resign")).await;
    play(&mut c, "resign", "e4").await;
    // The side must be named, and be a known colour.
    let missing = c
        .resign(pb::ResignRequest {
            game_id: "resign".into(),
            color: 0,
            ..Default::default()
        })
        .await;
    let s = expect_error(missing, Code::InvalidArgument, "MISSING_FIELD");
    assert_eq!(violated_fields(&s), ["color"]);
    let unknown = c
        .resign(pb::ResignRequest {
            game_id: "resign".into(),
            color: 9,
            ..Default::default()
        })
        .await;
    let s = expect_error(unknown, Code::InvalidArgument, "INVALID_COLOR");
    assert_eq!(violated_fields(&s), ["color"]);

    let g = c
        .resign(pb::ResignRequest {
            game_id: "resign".into(),
            color: BLACK,
            ..Default::default()
        })
        .await
        .expect("resign")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(status(&g), pb::GameStatus::Resignation);
    assert_eq!(g.winner, WHITE);
    assert_eq!(g.version, 2);
    assert!(
        g.pgn.contains("[Result \"1-0\"]\n[Termination \"normal\"]"),
        "{}",
        g.pgn
    );
    assert!(g.pgn.ends_with("1. e4 1-0\n"), "{}", g.pgn);
    let over = c.play(play_request("resign", "e5")).await;
    let s = expect_error(over, Code::FailedPrecondition, "GAME_OVER");
    assert_eq!(
        error_info(&s).metadata.get("status").map(String::as_str),
        Some("GAME_STATUS_RESIGNATION")
    );
    let legal = c
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::GameId("resign".into())),
            variant: 0,
        })
        .await
        .expect("legal moves")
        .into_inner();
    assert!(legal.moves.is_empty(), "no moves once resigned");
    assert_eq!(legal.status, pb::GameStatus::Resignation as i32);
}

#[tokio::test]
async fn draw_by_agreement_and_an_offer_that_lapses() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    new_game(&mut c, named("agree")).await;
    play(&mut c, "agree", "e4").await;
    let g = c
        .offer_draw(offer("agree", WHITE))
        .await
        .expect("offer")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!((g.draw_offered_by, g.version), (WHITE, 2));
    // White cannot answer its own offer, nor offer again.
    let own = c.respond_to_draw(respond("agree", WHITE, true)).await;
    expect_error(own, Code::FailedPrecondition, "OWN_DRAW_OFFER");
    let again = c.offer_draw(offer("agree", WHITE)).await;
    expect_error(again, Code::FailedPrecondition, "DRAW_OFFER_PENDING");
    // Black moves instead of answering: the offer lapses (an event of its own).
    let g = play(&mut c, "agree", "e5").await;
    assert_eq!(g.draw_offered_by, pb::Color::Unspecified as i32);
    assert_eq!(
        (g.ply, g.version),
        (2, 4),
        "lapse and move are two versions"
    );
    let none = c.respond_to_draw(respond("agree", BLACK, true)).await;
    let s = expect_error(none, Code::FailedPrecondition, "NO_DRAW_OFFER");
    assert!(s.message().contains("OfferDraw"), "{}", s.message());
    // Black offers, white declines; black offers again, white accepts.
    c.offer_draw(offer("agree", BLACK)).await.expect("offer");
    let g = c
        .respond_to_draw(respond("agree", WHITE, false))
        .await
        .expect("decline")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(
        (status(&g), g.draw_offered_by),
        (pb::GameStatus::InProgress, 0)
    );
    // A side offers at most once per move of its own (FIDE 9.1.2.1): black must move
    // before it offers again, and so must white, whose offer lapsed.
    let again = c.offer_draw(offer("agree", BLACK)).await;
    let s = expect_error(again, Code::FailedPrecondition, "DRAW_OFFER_TOO_SOON");
    assert!(
        s.message().contains("after your next move"),
        "{}",
        s.message()
    );
    let again = c.offer_draw(offer("agree", WHITE)).await;
    expect_error(again, Code::FailedPrecondition, "DRAW_OFFER_TOO_SOON");
    play(&mut c, "agree", "Nf3").await;
    play(&mut c, "agree", "Nc6").await;
    c.offer_draw(offer("agree", BLACK)).await.expect("offer");
    let g = c
        .respond_to_draw(respond("agree", WHITE, true))
        .await
        .expect("accept")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(status(&g), pb::GameStatus::DrawAgreement);
    assert_eq!(g.winner, 0);
    assert!(g.pgn.contains("[Result \"1/2-1/2\"]"), "{}", g.pgn);
}

const KNIGHTS: [&str; 8] = ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"];

#[tokio::test]
async fn threefold_claims_refused_then_granted_on_the_board() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    new_game(&mut c, named("rep")).await;
    for mv in &KNIGHTS[..4] {
        play(&mut c, "rep", mv).await;
    }
    // The start position twice: refused, saying what is missing.
    let refused = c.claim_draw(claim("rep", WHITE, "")).await;
    let s = expect_error(refused, Code::FailedPrecondition, "CLAIM_REFUSED");
    assert!(
        s.message()
            .contains("the position has occurred twice; a third occurrence is needed"),
        "{}",
        s.message()
    );
    // Only the side to move claims.
    let not_yours = c.claim_draw(claim("rep", BLACK, "")).await;
    expect_error(not_yours, Code::FailedPrecondition, "NOT_YOUR_TURN");
    for mv in &KNIGHTS[4..] {
        play(&mut c, "rep", mv).await;
    }
    let stale = c
        .claim_draw(pb::ClaimDrawRequest {
            expected_ply: Some(7),
            ..claim("rep", WHITE, "")
        })
        .await;
    expect_error(stale, Code::Aborted, "PLY_MISMATCH");
    let r = c
        .claim_draw(claim("rep", WHITE, ""))
        .await
        .expect("a correct claim")
        .into_inner();
    let g = r.game.expect("a game");
    assert_eq!(status(&g), pb::GameStatus::DrawClaimedThreefold);
    assert!(r.r#move.is_none(), "no move was announced");
    assert_eq!(g.ply, 8);
}

#[tokio::test]
async fn threefold_claimed_with_the_announced_move() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    new_game(&mut c, named("announce")).await;
    for mv in &KNIGHTS[..7] {
        play(&mut c, "announce", mv).await;
    }
    // With a move that does not repeat: refused, and nothing is played.
    let refused = c.claim_draw(claim("announce", BLACK, "Nc6")).await;
    let s = expect_error(refused, Code::FailedPrecondition, "CLAIM_REFUSED");
    assert!(s.message().contains("with Nc6"), "{}", s.message());
    assert_eq!(get(&mut c, "announce").await.ply, 7);
    let r = c
        .claim_draw(claim("announce", BLACK, "Ng8"))
        .await
        .expect("a correct claim with its move")
        .into_inner();
    let g = r.game.expect("a game");
    assert_eq!(r.r#move.map(|m| m.san), Some("Ng8".to_string()));
    assert_eq!(status(&g), pb::GameStatus::DrawClaimedThreefold);
    assert_eq!((g.ply, g.version), (8, 9), "the move, then the claim");
}

#[tokio::test]
async fn fifty_moves_claimed() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    new_game(
        &mut c,
        pb::NewGameRequest {
            fen: "8/8/4k3/8/8/3K4/8/R7 w - - 98 80".into(),
            ..named("fifty")
        },
    )
    .await;
    let refused = c.claim_draw(claim("fifty", WHITE, "Ra2")).await;
    let s = expect_error(refused, Code::FailedPrecondition, "CLAIM_REFUSED");
    assert!(s.message().contains("99 half-moves"), "{}", s.message());
    play(&mut c, "fifty", "Ra2").await;
    let g = c
        .claim_draw(claim("fifty", BLACK, "Kd6"))
        .await
        .expect("the 100th half-move completes the fifty moves")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(status(&g), pb::GameStatus::DrawClaimedFiftyMoves);
    // On the board, without a move, at 100 half-moves.
    new_game(
        &mut c,
        pb::NewGameRequest {
            fen: "8/8/4k3/8/8/3K4/8/R7 w - - 100 80".into(),
            ..named("fifty-2")
        },
    )
    .await;
    let g = c
        .claim_draw(claim("fifty-2", WHITE, ""))
        .await
        .expect("claim")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(status(&g), pb::GameStatus::DrawClaimedFiftyMoves);
}

#[tokio::test]
async fn a_move_for_the_side_not_to_move_is_refused_before_its_legality() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    new_game(&mut c, named("turn")).await;
    // Ke2 is illegal, but the turn is checked first.
    let wrong = c
        .play(pb::PlayRequest {
            color: BLACK,
            ..play_request("turn", "Ke2")
        })
        .await;
    let s = expect_error(wrong, Code::FailedPrecondition, "NOT_YOUR_TURN");
    let meta = error_info(&s).metadata;
    assert_eq!(
        meta.get("side_to_move").map(String::as_str),
        Some("COLOR_WHITE")
    );
    assert_eq!(meta.get("color").map(String::as_str), Some("COLOR_BLACK"));
    assert!(s.message().contains("white's turn"), "{}", s.message());
    let g = c
        .play(pb::PlayRequest {
            color: WHITE,
            ..play_request("turn", "e4")
        })
        .await
        .expect("white's move")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(g.ply, 1);
    let bad = c
        .play(pb::PlayRequest {
            color: 7,
            ..play_request("turn", "e5")
        })
        .await;
    expect_error(bad, Code::InvalidArgument, "INVALID_COLOR");
    // Undo names the side whose move is taken back: white made the last move.
    let wrong_undo = c
        .undo(pb::UndoRequest {
            game_id: "turn".into(),
            expected_ply: None,
            color: BLACK,
            ..Default::default()
        })
        .await;
    let s = expect_error(wrong_undo, Code::FailedPrecondition, "NOT_YOUR_TURN");
    assert!(s.message().contains("was white's"), "{}", s.message());
    let undone = c
        .undo(pb::UndoRequest {
            game_id: "turn".into(),
            expected_ply: Some(1),
            color: WHITE,
            ..Default::default()
        })
        .await
        .expect("white takes back its own move")
        .into_inner();
    assert_eq!(undone.undone.map(|m| m.san), Some("e4".to_string()));
}

/// The flag falls while the game is evicted (its timer went with it): the next call
/// records it, at the exact flag time, not when the call noticed it.
#[tokio::test]
async fn a_flag_is_decided_at_the_next_call_at_its_exact_time() {
    let server = Server::on(STORE).start(&["--cache-games", "1"]);
    let mut c = server.client().await;
    new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: time_control(300, 0),
            ..named("flag")
        },
    )
    .await;
    let g = play(&mut c, "flag", "e4").await;
    let ck = clock(&g);
    assert_eq!(ck.running, BLACK);
    assert_eq!(
        ck.black_remaining_ms, 300,
        "black's clock starts with the move"
    );
    let flag_time = ck.as_of_unix_ms + 300;
    // Evict it: another game takes the only cache slot.
    new_game(&mut c, named("other")).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    let g = get(&mut c, "flag").await;
    assert_eq!(status(&g), pb::GameStatus::OutOfTime);
    assert_eq!(g.winner, WHITE);
    let ck = clock(&g);
    assert_eq!(ck.running, pb::Color::Unspecified as i32);
    assert_eq!(ck.black_remaining_ms, 0);
    assert_eq!(
        ck.as_of_unix_ms, flag_time,
        "decided at the flag time, not when GetGame noticed it"
    );
    assert!(
        g.pgn
            .contains("[Result \"1-0\"]\n[TimeControl \"0.3+0\"]\n[Termination \"time forfeit\"]"),
        "{}",
        g.pgn
    );
    let late = c.play(play_request("flag", "e5")).await;
    expect_error(late, Code::FailedPrecondition, "GAME_OVER");
}

#[tokio::test]
async fn a_flag_against_insufficient_material_is_a_draw() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    // Black to move runs out; white has only king and knight against king and queen.
    let g = new_game(
        &mut c,
        pb::NewGameRequest {
            fen: "4k3/8/8/8/8/8/q7/4KN2 b - - 0 1".into(),
            time_control: time_control(200, 0),
            ..named("dead")
        },
    )
    .await;
    // Black's clock runs from the creation; the reading says when it will run out.
    let ck = clock(&g);
    assert_eq!(ck.running, BLACK);
    let flag_time = ck.as_of_unix_ms + ck.black_remaining_ms;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let g = get(&mut c, "dead").await;
    assert_eq!(status(&g), pb::GameStatus::DrawTimeoutInsufficientMaterial);
    assert_eq!(g.winner, 0);
    assert_eq!(clock(&g).as_of_unix_ms, flag_time);
    assert!(
        g.pgn.contains("[Result \"1/2-1/2\"]\n")
            && g.pgn
                .contains("[TimeControl \"0.2+0\"]\n[Termination \"time forfeit\"]\n"),
        "{}",
        g.pgn
    );
}

#[tokio::test]
async fn undo_restores_both_clocks_and_the_pgn_shows_them() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    let created = new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: time_control(60_000, 1000),
            ..named("clocks")
        },
    )
    .await;
    let c0 = clock(&created);
    assert_eq!(c0.running, WHITE);
    // White's clock started at the creation (the reading came a moment later, after the
    // new game was durable).
    assert!(c0.white_remaining_ms <= 60_000 && c0.white_remaining_ms > 59_000);
    let created_at = c0.as_of_unix_ms - (60_000 - c0.white_remaining_ms);
    tokio::time::sleep(Duration::from_millis(30)).await;
    let after_e4 = clock(&play(&mut c, "clocks", "e4").await);
    let white_used = after_e4.as_of_unix_ms - created_at;
    assert!(white_used >= 30);
    assert_eq!(after_e4.white_remaining_ms, 60_000 - white_used + 1000);
    assert_eq!(
        (after_e4.running, after_e4.black_remaining_ms),
        (BLACK, 60_000)
    );
    tokio::time::sleep(Duration::from_millis(30)).await;
    let after_e5 = clock(&play(&mut c, "clocks", "e5").await);
    assert!(after_e5.black_remaining_ms < 60_000 + 1000 - 29);
    tokio::time::sleep(Duration::from_millis(30)).await;
    // A reading in between: the running side's time goes down, the other's stands.
    let now = clock(&get(&mut c, "clocks").await);
    assert_eq!(now.black_remaining_ms, after_e5.black_remaining_ms);
    assert_eq!(
        now.white_remaining_ms + (now.as_of_unix_ms - after_e5.as_of_unix_ms),
        after_e5.white_remaining_ms
    );
    assert!(
        get(&mut c, "clocks")
            .await
            .pgn
            .contains("[TimeControl \"60+1\"]")
    );
    let undone = c
        .undo(pb::UndoRequest {
            game_id: "clocks".into(),
            expected_ply: Some(2),
            color: BLACK,
            ..Default::default()
        })
        .await
        .expect("undo")
        .into_inner()
        .game
        .expect("a game");
    let back = clock(&undone);
    // Both clocks as they were when black's turn began; black's runs from the undo.
    assert_eq!(
        (
            back.white_remaining_ms,
            back.black_remaining_ms,
            back.running
        ),
        (after_e4.white_remaining_ms, 60_000, BLACK)
    );
    // The PGN gives white's clock after e4 (increment included) in %clk form.
    let ms = after_e4.white_remaining_ms;
    let (m, sec, tenths) = (ms / 60_000, ms / 1000 % 60, ms % 1000 / 100);
    let clk = if ms.is_multiple_of(1000) {
        format!("1. e4 {{[%clk 0:{m:02}:{sec:02}]}} *")
    } else {
        format!("1. e4 {{[%clk 0:{m:02}:{sec:02}.{tenths}]}} *")
    };
    assert!(undone.pgn.contains(&clk), "{clk} in {}", undone.pgn);
}

#[tokio::test]
async fn time_controls_are_checked_and_part_of_a_repeated_new_game() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    let bad = c
        .new_game(pb::NewGameRequest {
            time_control: Some(pb::TimeControl {
                initial_ms: 0,
                increment_ms: 0,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await;
    let s = expect_error(bad, Code::InvalidArgument, "INVALID_TIME_CONTROL");
    assert_eq!(violated_fields(&s), ["time_control.initial_ms"]);
    let g = new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: time_control(5000, 0),
            ..named("timed")
        },
    )
    .await;
    // The same id with the same time control, or none named: the existing game.
    assert_eq!(
        new_game(
            &mut c,
            pb::NewGameRequest {
                time_control: time_control(5000, 0),
                ..named("timed")
            }
        )
        .await
        .game_id,
        g.game_id
    );
    assert_eq!(new_game(&mut c, named("timed")).await.game_id, g.game_id);
    let other = c
        .new_game(pb::NewGameRequest {
            game_id: "timed".into(),
            time_control: Some(pb::TimeControl {
                initial_ms: 6000,
                increment_ms: 0,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await;
    let s = expect_error(other, Code::AlreadyExists, "GAME_ALREADY_EXISTS");
    assert!(s.message().contains("5000 ms"), "{}", s.message());
}
