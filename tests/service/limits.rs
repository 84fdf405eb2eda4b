//! Limits that keep a game from being jammed, through the real server: a full history
//! refuses moves and take-backs (FAILED_PRECONDITION, HISTORY_FULL) but every ending
//! still works (resignation, agreement, a claim, the flag); a side offers a draw at most
//! once per move; full-move numbers saturate instead of wrapping to 0.
//!
//! A history is filled by play/undo cycles: most of them in process, through the same
//! lifecycle and store the server uses (tens of thousands of cycles over gRPC would
//! rewrite a record of tens of KiB each time: gigabytes of store writes), the last ones
//! over gRPC until the server refuses one.

use std::time::Duration;

use chess_service::lifecycle::{GameMeta, Match, Start, TimeControl};
use chess_service::pb;
use chess_service::registry::wall_now_ms;
use chess_service::rules::{Position, Variant};
use chess_service::store::codec::{self, HISTORY_LIMIT, MAX_RECORD_LEN};
use chess_service::store::{Durability, SledConfig, SledStore};
use tonic::Code;

use crate::common::client::{
    BLACK, Client, WHITE, get, named, new_game, offer, play, play_request, respond, undo,
};
use crate::common::server::{Server, expect_error};

fn status(g: &pb::Game) -> pb::GameStatus {
    pb::GameStatus::try_from(g.status).expect("a known status")
}

/// How close to the limit the in-process part fills a history: the rest is filled over
/// gRPC (a few hundred cycles).
const LEFT_FOR_GRPC: usize = 400;

/// Plays `setup` on a new game, then plays `cycle` and takes it back until the record is
/// within [`LEFT_FOR_GRPC`] bytes of the history limit; the game and its metadata.
fn nearly_full(
    id: &str,
    setup: &[&str],
    cycle: &str,
    timed: Option<TimeControl>,
) -> (GameMeta, Match) {
    let now = wall_now_ms();
    let meta = GameMeta {
        id: id.into(),
        variant: Variant::Standard.into(),
        start: Start::Standard,
        created_unix_ms: now,
        tags: chess_service::lifecycle::Tags::none(),
    };
    let mut m = match timed {
        Some(control) => Match::timed(Position::new(), control, now),
        None => Match::untimed(Position::new()),
    };
    for mv in setup {
        m.play(now, None, mv).expect("a setup move");
    }
    loop {
        let len = codec::encode(&meta, &m).expect("encodes").len();
        if len + LEFT_FOR_GRPC >= HISTORY_LIMIT {
            break;
        }
        // About 1.3 bytes a cycle untimed, 3.3 timed: a few hundred cycles at a time.
        for _ in 0..(HISTORY_LIMIT - LEFT_FOR_GRPC - len) / 4 + 1 {
            m.play(now, None, cycle).expect("the cycle's move");
            m.undo(now, None).expect("its take-back");
        }
    }
    (meta, m)
}

/// Plays `cycle` and takes it back over gRPC until the server refuses; the refusal,
/// checked to be HISTORY_FULL with a message that says what still works.
async fn fill_over_grpc(c: &mut Client, id: &str, cycle: &str) -> tonic::Status {
    for _ in 0..10_000 {
        if let Err(s) = c.play(play_request(id, cycle)).await {
            return check_full(s);
        }
        if let Err(s) = c
            .undo(pb::UndoRequest {
                game_id: id.into(),
                ..Default::default()
            })
            .await
        {
            return check_full(s);
        }
    }
    panic!("{id}: 10,000 cycles over gRPC and the history is not full");
}

fn check_full(s: tonic::Status) -> tonic::Status {
    let s = expect_error::<()>(Err(s), Code::FailedPrecondition, "HISTORY_FULL");
    for works in ["Resign", "ClaimDraw", "OfferDraw", "RespondToDraw", "flag"] {
        assert!(s.message().contains(works), "{}", s.message());
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_history_refuses_moves_and_take_backs_but_every_ending_works() {
    const { assert!(HISTORY_LIMIT < MAX_RECORD_LEN && MAX_RECORD_LEN < 128 * 1024) };
    let data = tempfile::tempdir().expect("a data directory");
    let knights = ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"];
    // (game, setup, the move of each play/undo cycle). The claim game cycles with the move
    // that completes a threefold repetition, so whichever ply it stops at, a claim holds:
    // with that move, or about the position on the board.
    let plan: [(&str, &[&str], &str, Option<TimeControl>); 4] = [
        (
            "flag",
            &[],
            "Nf3",
            Some(TimeControl::new(20_000, 0).expect("a control")),
        ),
        ("agree", &[], "Nf3", None),
        ("resign", &["e4"], "e5", None),
        ("claim", &knights, "Ng8", None),
    ];
    {
        let store = SledStore::open(SledConfig::new(data.path()).durability(Durability::Fsync))
            .expect("the store opens");
        // The timed game last, so that its clock has run for as short a time as possible
        // when it is filled over gRPC (first).
        for (id, setup, cycle, timed) in plan.iter().rev() {
            let (meta, m) = nearly_full(id, setup, cycle, *timed);
            store.create_now(&meta, &m).expect("stored");
        }
        store.flush_blocking().expect("durable");
    }
    let server = Server::start_in(data.path(), &[]);
    let mut c = server.client().await;

    // Each fills up over gRPC; then moves and take-backs are refused, at either ply.
    for (id, setup, cycle, _) in &plan {
        let before = get(&mut c, id).await;
        assert!(before.version > 10_000, "{id}: version {}", before.version);
        fill_over_grpc(&mut c, id, cycle).await;
        let g = get(&mut c, id).await;
        assert_eq!(status(&g), pb::GameStatus::InProgress, "{id}");
        if g.ply as usize == setup.len() {
            check_full(
                c.play(play_request(id, cycle))
                    .await
                    .expect_err("a move on a full history"),
            );
        } else {
            check_full(
                c.undo(pb::UndoRequest {
                    game_id: id.to_string(),
                    ..Default::default()
                })
                .await
                .expect_err("a take-back on a full history"),
            );
        }
        // Reads still work, and nothing changed.
        assert_eq!(get(&mut c, id).await.version, g.version);
    }

    // An agreed draw: offers and answers still fit, at most one offer per side per move.
    c.offer_draw(offer("agree", WHITE)).await.expect("an offer");
    c.respond_to_draw(respond("agree", BLACK, false))
        .await
        .expect("declined");
    let again = c.offer_draw(offer("agree", WHITE)).await;
    expect_error(again, Code::FailedPrecondition, "DRAW_OFFER_TOO_SOON");
    c.offer_draw(offer("agree", BLACK)).await.expect("an offer");
    let g = c
        .respond_to_draw(respond("agree", WHITE, true))
        .await
        .expect("accepted")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(status(&g), pb::GameStatus::DrawAgreement);

    // A resignation.
    let g = c
        .resign(pb::ResignRequest {
            game_id: "resign".into(),
            color: BLACK,
            ..Default::default()
        })
        .await
        .expect("resigned")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(status(&g), pb::GameStatus::Resignation);

    // A claim: with the move that completes the repetition (the move alone would be
    // refused), or, if that move is on the board, about the position.
    let claim = if get(&mut c, "claim").await.ply as usize == knights.len() {
        pb::ClaimDrawRequest {
            game_id: "claim".into(),
            color: BLACK,
            r#move: "Ng8".into(),
            ..Default::default()
        }
    } else {
        pb::ClaimDrawRequest {
            game_id: "claim".into(),
            color: WHITE,
            ..Default::default()
        }
    };
    let g = c
        .claim_draw(claim)
        .await
        .expect("the claim")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(status(&g), pb::GameStatus::DrawClaimedThreefold);

    // The flag: the clock of the side to move runs out, and the server records it.
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    let g = loop {
        let g = get(&mut c, "flag").await;
        if status(&g) != pb::GameStatus::InProgress || std::time::Instant::now() > deadline {
            break g;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(status(&g), pb::GameStatus::OutOfTime, "{g:?}");

    // All four endings are durable: a restart shows them.
    drop(c);
    drop(server);
    let server = Server::start_in(data.path(), &[]);
    let mut c = server.client().await;
    for (id, ending) in [
        ("agree", pb::GameStatus::DrawAgreement),
        ("resign", pb::GameStatus::Resignation),
        ("claim", pb::GameStatus::DrawClaimedThreefold),
        ("flag", pb::GameStatus::OutOfTime),
    ] {
        assert_eq!(status(&get(&mut c, id).await), ending, "{id}");
    }
}

#[tokio::test]
async fn a_side_offers_a_draw_at_most_once_per_move_of_its_own() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    new_game(&mut c, named("offers")).await;
    // Offer, decline, offer again without a move: refused, for as long as no move is made.
    c.offer_draw(offer("offers", WHITE))
        .await
        .expect("an offer");
    c.respond_to_draw(respond("offers", BLACK, false))
        .await
        .expect("declined");
    for _ in 0..3 {
        let again = c.offer_draw(offer("offers", WHITE)).await;
        let s = expect_error(again, Code::FailedPrecondition, "DRAW_OFFER_TOO_SOON");
        assert!(s.message().contains("FIDE 9.1.2.1"), "{}", s.message());
    }
    // Black's own offer is not affected by white's.
    c.offer_draw(offer("offers", BLACK))
        .await
        .expect("black's offer");
    // White moves instead of answering (the offer lapses), then may offer again.
    play(&mut c, "offers", "e4").await;
    c.offer_draw(offer("offers", WHITE))
        .await
        .expect("after a move");
    // Black has not moved since its offer: still refused.
    let black = c.offer_draw(offer("offers", BLACK)).await;
    expect_error(black, Code::FailedPrecondition, "DRAW_OFFER_PENDING");
    play(&mut c, "offers", "e5").await; // lapses white's offer
    c.offer_draw(offer("offers", BLACK))
        .await
        .expect("after black's move");
    let g = get(&mut c, "offers").await;
    assert_eq!(g.draw_offered_by, BLACK);
}

#[tokio::test]
async fn full_move_numbers_saturate_at_the_largest_instead_of_wrapping() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 4294967295";
    new_game(
        &mut c,
        pb::NewGameRequest {
            fen: fen.into(),
            ..named("last-move")
        },
    )
    .await;
    play(&mut c, "last-move", "e5").await;
    let g = play(&mut c, "last-move", "Nf3").await;
    assert_eq!(
        g.fen,
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 4294967295"
    );
    let g = play(&mut c, "last-move", "Nc6").await;
    assert!(g.fen.ends_with(" 2 4294967295"), "{}", g.fen);
    assert!(g.pgn.contains("4294967295... e5"), "{}", g.pgn);
    // Taking back restores every position exactly.
    undo(&mut c, "last-move").await;
    undo(&mut c, "last-move").await;
    let g = undo(&mut c, "last-move").await;
    assert_eq!(g.fen, fen);
    // The same for a position given by FEN alone.
    let answer = c
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::Fen(fen.into())),
            ..Default::default()
        })
        .await
        .expect("legal moves")
        .into_inner();
    assert_eq!(answer.fen, fen);
}
