//! The gRPC service end to end: the real `chess-server` binary, a tonic client.

use std::time::{Duration, Instant};

use chess_service::pb;
use tonic::Code;

use super::STORE;
use crate::common::client::{named, new_game, play_at, undo_with};
use crate::common::raw_grpc::{frame, raw_call};
use crate::common::server::{Server, error_info, expect_error, violated_fields};

const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[tokio::test]
async fn fools_mate_then_four_undos_back_to_the_start() {
    let server = Server::on(STORE).start(&[]);
    let mut client = server.client().await;
    let game = new_game(&mut client, named("fools-mate")).await;
    assert_eq!(game.fen, START_FEN);
    assert_eq!(game.status(), pb::GameStatus::InProgress);

    let mut last = None;
    for (ply, mv) in ["f2f3", "e7e5", "g2g4", "d8h4"].into_iter().enumerate() {
        last = Some(play_at(&mut client, "fools-mate", mv, Some(ply as u32)).await);
    }
    let last = last.expect("four moves played");
    let game = last.game.expect("a game");
    let mate = last.r#move.expect("a move");
    assert_eq!(game.status(), pb::GameStatus::Checkmate);
    assert_eq!(game.winner(), pb::Color::Black);
    assert_eq!(game.ply, 4);
    assert!(game.in_check);
    assert_eq!(game.san_moves, ["f3", "e5", "g4", "Qh4#"]);
    assert!(
        game.pgn.contains("[Result \"0-1\"]") && game.pgn.contains("2. g4 Qh4# 0-1"),
        "{}",
        game.pgn
    );
    assert_eq!(
        (mate.san.as_str(), mate.check, mate.checkmate),
        ("Qh4#", true, true)
    );

    // The game is over: no legal moves, no more play.
    let legal = client
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::GameId(
                "fools-mate".into(),
            )),
            variant: 0,
        })
        .await
        .expect("LegalMoves succeeds")
        .into_inner();
    assert!(legal.moves.is_empty());
    assert_eq!(legal.status(), pb::GameStatus::Checkmate);
    let over = client.play(pb::PlayRequest {
        game_id: "fools-mate".into(),
        r#move: "e2e4".into(),
        expected_ply: None,
        color: 0,
        ..Default::default()
    });
    let status = expect_error(over.await, Code::FailedPrecondition, "GAME_OVER");
    assert!(status.message().contains("undo"), "{}", status.message());

    // Undo is allowed after the end; four of them restore the start exactly.
    let first = undo_with(&mut client, "fools-mate").await;
    assert_eq!(
        first.game.as_ref().expect("a game").status(),
        pb::GameStatus::InProgress
    );
    assert_eq!(first.undone.expect("the undone move").uci, "d8h4");
    for _ in 0..3 {
        undo_with(&mut client, "fools-mate").await;
    }
    let game = client
        .get_game(pb::GetGameRequest {
            game_id: "fools-mate".into(),
            ..Default::default()
        })
        .await
        .expect("GetGame")
        .into_inner();
    let game = game.game.expect("a game");
    assert_eq!(
        (game.fen.as_str(), game.ply, game.moves.len()),
        (START_FEN, 0, 0)
    );
    let nothing = client
        .undo(pb::UndoRequest {
            game_id: "fools-mate".into(),
            expected_ply: None,
            color: 0,
            ..Default::default()
        })
        .await;
    expect_error(nothing, Code::FailedPrecondition, "NOTHING_TO_UNDO");
}

#[tokio::test]
async fn san_input_with_castling() {
    let server = Server::on(STORE).start(&[]);
    let mut client = server.client().await;
    let id = new_game(&mut client, pb::NewGameRequest::default())
        .await
        .game_id;
    for mv in ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5"] {
        play_at(&mut client, &id, mv, None).await;
    }
    let castled = play_at(&mut client, &id, "O-O", Some(6)).await;
    let mv = castled.r#move.expect("a move");
    assert_eq!(
        (
            mv.uci.as_str(),
            mv.san.as_str(),
            mv.from_square.as_str(),
            mv.to_square.as_str()
        ),
        ("e1g1", "O-O", "e1", "g1")
    );
    assert!(mv.castle && !mv.capture);
    let game = castled.game.expect("a game");
    assert_eq!(
        game.fen,
        "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 5 4"
    );
    assert_eq!(game.moves.last().map(String::as_str), Some("e1g1"));
}

#[tokio::test]
async fn chess960_game_castles_king_takes_rook_and_king_two_squares() {
    let server = Server::on(STORE).start(&[]);
    let mut client = server.client().await;
    // Position 771 is BQRKNRNB: king d1, king-side rook f1, knights on e1 and g1.
    let req = pb::NewGameRequest {
        variant: pb::Variant::Chess960 as i32,
        chess960_position: Some(771),
        game_id: "fr-771".into(),
        ..Default::default()
    };
    let game = new_game(&mut client, req).await;
    assert_eq!(
        game.initial_fen,
        "bqrknrnb/pppppppp/8/8/8/8/PPPPPPPP/BQRKNRNB w KQkq - 0 1"
    );
    assert_eq!(game.chess960_position, Some(771));
    assert!(
        game.pgn.contains("[Variant \"Chess960\"]") && game.pgn.contains("[SetUp \"1\"]"),
        "{}",
        game.pgn
    );
    for mv in ["e1d3", "e8d6", "g1h3", "g8h6"] {
        play_at(&mut client, "fr-771", mv, None).await;
    }
    // King takes rook: the Chess960 UCI spelling.
    let castled = play_at(&mut client, "fr-771", "d1f1", Some(4)).await;
    let mv = castled.r#move.expect("a move");
    assert_eq!(
        (
            mv.uci.as_str(),
            mv.san.as_str(),
            mv.from_square.as_str(),
            mv.to_square.as_str()
        ),
        ("d1f1", "O-O", "d1", "g1")
    );
    assert!(mv.castle);
    let after = castled.game.expect("a game").fen;
    assert!(after.ends_with("/BQR2RKB b kq - 5 3"), "{after}");

    // The king-two-squares form (here three files) means the same move.
    undo_with(&mut client, "fr-771").await;
    let again = play_at(&mut client, "fr-771", "d1g1", Some(4)).await;
    assert_eq!(again.r#move.expect("a move").uci, "d1f1");
    assert_eq!(again.game.expect("a game").fen, after);

    // Black castles with SAN; the game lists castling king-takes-rook.
    let black = play_at(&mut client, "fr-771", "O-O", Some(5)).await;
    let game = black.game.expect("a game");
    assert_eq!(game.moves, ["e1d3", "e8d6", "g1h3", "g8h6", "d1f1", "d8f8"]);
    assert_eq!(black.r#move.expect("a move").to_square, "g8");
}

#[tokio::test]
async fn every_error_code_from_a_real_request() {
    let server =
        Server::on(STORE).start(&["--perft-max-depth", "9", "--perft-max-concurrent", "1"]);
    let mut client = server.client().await;

    // INVALID_ARGUMENT: malformed FEN, with the field named.
    let bad_fen = client.new_game(pb::NewGameRequest {
        fen: "8/8/8 w - - 0 1".into(),
        ..Default::default()
    });
    let status = expect_error(bad_fen.await, Code::InvalidArgument, "INVALID_FEN");
    assert_eq!(violated_fields(&status), ["fen"]);
    assert_eq!(error_info(&status).metadata["fen_field"], "placement");
    // ... a FEN over the length limit.
    let long_fen = client.legal_moves(pb::LegalMovesRequest {
        position: Some(pb::legal_moves_request::Position::Fen("8".repeat(300))),
        variant: 0,
    });
    let status = expect_error(long_fen.await, Code::InvalidArgument, "INVALID_FEN");
    assert!(
        status.message().contains("at most 256"),
        "{}",
        status.message()
    );
    // ... conflicting fields.
    let conflict = client.new_game(pb::NewGameRequest {
        fen: START_FEN.into(),
        variant: pb::Variant::Chess960 as i32,
        chess960_position: Some(3),
        ..Default::default()
    });
    let status = expect_error(conflict.await, Code::InvalidArgument, "CONFLICTING_FIELDS");
    assert_eq!(violated_fields(&status), ["fen", "chess960_position"]);
    // ... a Chess960 number that does not exist, a game id that is not URL-safe.
    let n = client.new_game(pb::NewGameRequest {
        variant: pb::Variant::Chess960 as i32,
        chess960_position: Some(960),
        ..Default::default()
    });
    expect_error(n.await, Code::InvalidArgument, "INVALID_CHESS960_POSITION");
    let bad_id = client.new_game(named("no spaces please"));
    expect_error(bad_id.await, Code::InvalidArgument, "INVALID_GAME_ID");
    // ... move text that is neither UCI nor SAN, or too long.
    new_game(&mut client, named("errors")).await;
    let bad_move = client.play(pb::PlayRequest {
        game_id: "errors".into(),
        r#move: "e2-e9".into(),
        expected_ply: None,
        color: 0,
        ..Default::default()
    });
    let status = expect_error(bad_move.await, Code::InvalidArgument, "INVALID_MOVE_TEXT");
    assert_eq!(violated_fields(&status), ["move"]);
    let long_move = client.play(pb::PlayRequest {
        game_id: "errors".into(),
        r#move: "N".repeat(40),
        expected_ply: None,
        color: 0,
        ..Default::default()
    });
    expect_error(long_move.await, Code::InvalidArgument, "INVALID_MOVE_TEXT");
    // ... perft too deep (naming the maximum), Chess960 perft without a FEN.
    let deep = client.perft(pb::PerftRequest {
        depth: 10,
        ..Default::default()
    });
    let status = expect_error(deep.await, Code::InvalidArgument, "DEPTH_TOO_LARGE");
    assert_eq!(error_info(&status).metadata["max_depth"], "9");
    assert!(
        status.message().contains("maximum perft depth 9"),
        "{}",
        status.message()
    );
    let no_fen = client.perft(pb::PerftRequest {
        depth: 1,
        variant: pb::Variant::Chess960 as i32,
        ..Default::default()
    });
    expect_error(no_fen.await, Code::InvalidArgument, "FEN_REQUIRED");
    // ... LegalMoves naming no position.
    let none = client.legal_moves(pb::LegalMovesRequest {
        position: None,
        variant: 0,
    });
    expect_error(none.await, Code::InvalidArgument, "MISSING_FIELD");

    // NOT_FOUND.
    let missing = client.get_game(pb::GetGameRequest {
        game_id: "no-such-game".into(),
        ..Default::default()
    });
    expect_error(missing.await, Code::NotFound, "GAME_NOT_FOUND");
    let missing = client.play(pb::PlayRequest {
        game_id: "no-such-game".into(),
        r#move: "e4".into(),
        expected_ply: None,
        color: 0,
        ..Default::default()
    });
    expect_error(missing.await, Code::NotFound, "GAME_NOT_FOUND");

    // FAILED_PRECONDITION: an illegal move, with a reason a person can act on.
    let through_check = pb::NewGameRequest {
        fen: "4k3/8/8/8/2b5/8/8/4K2R w K - 0 1".into(),
        game_id: "castle-through-check".into(),
        ..Default::default()
    };
    new_game(&mut client, through_check).await;
    let castle = client.play(pb::PlayRequest {
        game_id: "castle-through-check".into(),
        r#move: "e1g1".into(),
        expected_ply: None,
        color: 0,
        ..Default::default()
    });
    let status = expect_error(castle.await, Code::FailedPrecondition, "ILLEGAL_MOVE");
    assert_eq!(
        status.message(),
        "illegal move e1g1: castling through f1, which the black bishop on c4 attacks"
    );
    let info = crate::common::server::error_info(&status);
    assert_eq!(info.metadata["game_id"], "castle-through-check");
    assert_eq!(info.metadata["move"], "e1g1");
    // ... an ambiguous SAN move.
    let two_knights = pb::NewGameRequest {
        fen: "4k3/8/8/8/8/8/8/4KN1N w - - 0 1".into(),
        game_id: "two-knights".into(),
        ..Default::default()
    };
    new_game(&mut client, two_knights).await;
    let ambiguous = client.play(pb::PlayRequest {
        game_id: "two-knights".into(),
        r#move: "Ng3".into(),
        expected_ply: None,
        color: 0,
        ..Default::default()
    });
    let status = expect_error(ambiguous.await, Code::FailedPrecondition, "AMBIGUOUS_MOVE");
    assert!(
        status.message().contains("Nfg3") && status.message().contains("Nhg3"),
        "{}",
        status.message()
    );
    // ... nothing to undo (game over is covered by the fool's mate test).
    let nothing = client.undo(pb::UndoRequest {
        game_id: "errors".into(),
        expected_ply: None,
        color: 0,
        ..Default::default()
    });
    expect_error(nothing.await, Code::FailedPrecondition, "NOTHING_TO_UNDO");

    // ABORTED: a ply mismatch, with the current ply in the metadata.
    play_at(&mut client, "errors", "e4", Some(0)).await;
    let stale = client.play(pb::PlayRequest {
        game_id: "errors".into(),
        r#move: "d5".into(),
        expected_ply: Some(0),
        color: 0,
        ..Default::default()
    });
    let status = expect_error(stale.await, Code::Aborted, "PLY_MISMATCH");
    assert_eq!(error_info(&status).metadata["current_ply"], "1");
    let stale_undo = client.undo(pb::UndoRequest {
        game_id: "errors".into(),
        expected_ply: Some(0),
        color: 0,
        ..Default::default()
    });
    let status = expect_error(stale_undo.await, Code::Aborted, "PLY_MISMATCH");
    assert_eq!(error_info(&status).metadata["current_ply"], "1");

    // ALREADY_EXISTS: the same id with another start.
    let other_start = client.new_game(pb::NewGameRequest {
        game_id: "errors".into(),
        variant: pb::Variant::Chess960 as i32,
        ..Default::default()
    });
    expect_error(
        other_start.await,
        Code::AlreadyExists,
        "GAME_ALREADY_EXISTS",
    );

    // RESOURCE_EXHAUSTED: a second perft while the only slot computes.
    let mut busy = client.clone();
    let long = tokio::spawn(async move {
        let mut req = tonic::Request::new(pb::PerftRequest {
            depth: 9,
            threads: 1,
            ..Default::default()
        });
        req.set_timeout(Duration::from_secs(1));
        busy.perft(req).await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = client.perft(pb::PerftRequest {
        depth: 1,
        ..Default::default()
    });
    let status = expect_error(second.await, Code::ResourceExhausted, "TOO_MANY_PERFTS");
    assert_eq!(error_info(&status).metadata["max_concurrent_perfts"], "1");

    // DEADLINE_EXCEEDED: the long perft hits its deadline.
    let long = long.await.expect("the perft task joins");
    expect_error(long, Code::DeadlineExceeded, "DEADLINE_EXCEEDED");
}

#[tokio::test]
async fn request_size_is_limited() {
    let server = Server::on(STORE).start(&["--max-request-bytes", "4096"]);
    let mut client = server.client().await;
    let huge = client
        .new_game(pb::NewGameRequest {
            fen: "x".repeat(10_000),
            ..Default::default()
        })
        .await;
    let status = huge.expect_err("an oversized request is refused");
    assert!(
        matches!(
            status.code(),
            Code::OutOfRange | Code::ResourceExhausted | Code::InvalidArgument
        ),
        "{status:?}"
    );
    // The server still answers normal requests.
    new_game(&mut client, pb::NewGameRequest::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_two_concurrent_plays_at_one_ply_play_exactly_one_move() {
    let server = Server::on(STORE).start(&[]);
    let mut client = server.client().await;
    new_game(&mut client, named("race")).await;
    let legal = client
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::GameId("race".into())),
            variant: 0,
        })
        .await
        .expect("LegalMoves")
        .into_inner();
    assert_eq!(legal.moves.len(), 20);
    // Separate connections, so the calls really arrive at once.
    let mut tasks = Vec::new();
    for i in 0..32 {
        let mv = legal.moves[i % 20].uci.clone();
        let mut c = server.client().await;
        tasks.push(tokio::spawn(async move {
            let req = pb::PlayRequest {
                game_id: "race".into(),
                r#move: mv.clone(),
                expected_ply: Some(0),
                color: 0,
                ..Default::default()
            };
            (mv, c.play(req).await)
        }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.expect("task joins"));
    }
    let game = client
        .get_game(pb::GetGameRequest {
            game_id: "race".into(),
            ..Default::default()
        })
        .await
        .expect("GetGame")
        .into_inner();
    let game = game.game.expect("a game");
    assert_eq!(game.ply, 1, "exactly one move was played");
    let winner = game.moves[0].clone();
    for (mv, result) in results {
        match result {
            Ok(response) => {
                let response = response.into_inner();
                assert_eq!(mv, winner, "only the winning move may succeed");
                assert_eq!(response.r#move.expect("a move").uci, winner);
                assert_eq!(response.game.expect("a game").ply, 1);
            }
            Err(status) => {
                assert_ne!(mv, winner, "the winning move's retries succeed");
                assert_eq!(status.code(), Code::Aborted, "{status:?}");
                assert_eq!(error_info(&status).metadata["current_ply"], "1");
            }
        }
    }
}

#[tokio::test]
async fn retrying_a_play_after_a_lost_reply_is_safe() {
    let server = Server::on(STORE).start(&[]);
    let mut client = server.client().await;
    new_game(&mut client, named("retry")).await;
    play_at(&mut client, "retry", "e2e4", Some(0)).await;
    play_at(&mut client, "retry", "c7c5", Some(1)).await;
    // The first reply was "lost": the same move at the same ply again, in SAN this time.
    let again = play_at(&mut client, "retry", "e4", Some(0)).await;
    assert_eq!(again.r#move.expect("a move").uci, "e2e4");
    let game = again.game.expect("a game");
    assert_eq!(
        (game.ply, game.moves.clone()),
        (2, vec!["e2e4".to_string(), "c7c5".to_string()])
    );
    // A different move at an old ply is a mismatch.
    let other = client.play(pb::PlayRequest {
        game_id: "retry".into(),
        r#move: "d2d4".into(),
        expected_ply: Some(0),
        color: 0,
        ..Default::default()
    });
    expect_error(other.await, Code::Aborted, "PLY_MISMATCH");
}

#[tokio::test]
async fn new_game_ids_and_idempotent_creation() {
    let server = Server::on(STORE).start(&[]);
    let mut client = server.client().await;
    let a = new_game(&mut client, pb::NewGameRequest::default())
        .await
        .game_id;
    let b = new_game(&mut client, pb::NewGameRequest::default())
        .await
        .game_id;
    assert_ne!(a, b);
    for id in [&a, &b] {
        assert_eq!(id.len(), 22);
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "{id}"
        );
    }
    // A caller id: the same request again answers the existing game (with its moves).
    new_game(&mut client, named("match-42")).await;
    play_at(&mut client, "match-42", "d4", None).await;
    assert_eq!(new_game(&mut client, named("match-42")).await.ply, 1);
    let same_start = pb::NewGameRequest {
        fen: START_FEN.into(),
        ..named("match-42")
    };
    assert_eq!(new_game(&mut client, same_start).await.ply, 1);
    let other = pb::NewGameRequest {
        fen: "4k3/8/8/8/8/8/8/4K2R w K - 0 1".into(),
        ..named("match-42")
    };
    let status = expect_error(
        client.new_game(other).await,
        Code::AlreadyExists,
        "GAME_ALREADY_EXISTS",
    );
    assert!(
        status.message().contains("standard start"),
        "{}",
        status.message()
    );
    // A random Chess960 start.
    let random = pb::NewGameRequest {
        variant: pb::Variant::Chess960 as i32,
        ..named("fr-random")
    };
    let game = new_game(&mut client, random.clone()).await;
    assert!(game.chess960_position.is_some_and(|n| n < 960));
    assert_eq!(game.variant(), pb::Variant::Chess960);
    // Asking again for "a random Chess960 game" under the same id answers that game.
    assert_eq!(
        new_game(&mut client, random).await.initial_fen,
        game.initial_fen
    );
}

#[tokio::test]
async fn legal_moves_by_fen_are_stateless_and_report_automatic_draws() {
    let server = Server::on(STORE).start(&[]);
    let mut client = server.client().await;
    let by_fen = |fen: &str| pb::LegalMovesRequest {
        position: Some(pb::legal_moves_request::Position::Fen(fen.into())),
        variant: 0,
    };
    let start = client
        .legal_moves(by_fen(START_FEN))
        .await
        .expect("LegalMoves")
        .into_inner();
    assert_eq!(start.moves.len(), 20);
    assert_eq!(start.status(), pb::GameStatus::InProgress);
    // Kings alone: a dead position, but its moves are still listed.
    let bare = client
        .legal_moves(by_fen("8/8/8/4k3/8/8/8/4K3 w - - 0 1"))
        .await
        .expect("LegalMoves")
        .into_inner();
    assert_eq!(bare.status(), pb::GameStatus::DrawInsufficientMaterial);
    assert_eq!(bare.moves.len(), 5);
    // 75 moves without capture or pawn move.
    let long = client
        .legal_moves(by_fen("4k3/8/8/8/8/8/8/R3K3 w - - 150 120"))
        .await
        .expect("LegalMoves")
        .into_inner();
    assert_eq!(long.status(), pb::GameStatus::DrawSeventyFiveMoves);
    assert!(!long.moves.is_empty());
    // En passant and promotion flags.
    let ep = client
        .legal_moves(by_fen("4k3/1P6/8/3pP3/8/8/8/4K3 w - d6 0 2"))
        .await
        .expect("LegalMoves")
        .into_inner();
    let exd6 = ep
        .moves
        .iter()
        .find(|m| m.uci == "e5d6")
        .expect("en passant is legal");
    assert!(exd6.en_passant && exd6.capture);
    let promotions: Vec<&str> = ep
        .moves
        .iter()
        .filter(|m| m.from_square == "b7")
        .map(|m| m.promotion.as_str())
        .collect();
    assert_eq!(promotions, ["b", "n", "q", "r"]);
}

#[tokio::test]
async fn perft_start_depth_5_with_divide() {
    let server = Server::on(STORE).start(&[]);
    let mut client = server.client().await;
    let result = client
        .perft(pb::PerftRequest {
            depth: 5,
            divide: true,
            ..Default::default()
        })
        .await
        .expect("Perft")
        .into_inner();
    assert_eq!(result.nodes, 4_865_609);
    assert_eq!(result.divide.len(), 20);
    assert_eq!(
        result.divide.iter().map(|d| d.nodes).sum::<u64>(),
        4_865_609
    );
    let e2e4 = result
        .divide
        .iter()
        .find(|d| d.r#move == "e2e4")
        .expect("e2e4 in the divide");
    assert_eq!(e2e4.nodes, 405_385);
    // Depth 0 counts one node; Kiwipete depth 2 catches castling through check.
    let zero = client
        .perft(pb::PerftRequest {
            depth: 0,
            ..Default::default()
        })
        .await
        .expect("Perft")
        .into_inner();
    assert_eq!(zero.nodes, 1);
    let kiwipete = pb::PerftRequest {
        fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1".into(),
        depth: 2,
        threads: 1,
        ..Default::default()
    };
    assert_eq!(
        client
            .perft(kiwipete)
            .await
            .expect("Perft")
            .into_inner()
            .nodes,
        2_039
    );
}

#[tokio::test]
async fn perft_past_its_deadline_stops_and_the_server_answers_at_once() {
    use prost::Message;
    let server = Server::on(STORE).start(&["--perft-max-concurrent", "1"]);
    let mut client = server.client().await;
    // Sent by hand with only the `grpc-timeout` header: a tonic client also runs its own
    // timer for it, which races the server's answer (and sometimes wins, as CANCELLED).
    let request = pb::PerftRequest {
        depth: 9,
        threads: 1,
        ..Default::default()
    };
    let started = Instant::now();
    let answer = raw_call(
        &server.addr,
        "/chess.v1.ChessService/Perft",
        frame(0, &request.encode_to_vec()),
        &[("grpc-timeout", "300m")],
        Duration::from_secs(5),
    )
    .await;
    let waited = started.elapsed();
    let answered = answer.status.expect("the server answers within 5 s");
    let status = expect_error::<()>(Err(answered), Code::DeadlineExceeded, "DEADLINE_EXCEEDED");
    assert!(
        waited < Duration::from_millis(600),
        "answered after {waited:?}: {status:?}"
    );
    // The next call is answered at once, and the only perft slot is free again: the
    // depth-9 count stopped.
    let started = Instant::now();
    let next = client
        .perft(pb::PerftRequest {
            depth: 3,
            ..Default::default()
        })
        .await
        .expect("the next perft runs");
    assert_eq!(next.into_inner().nodes, 8_902);
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "next call took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_cancelled_perft_stops_computing_within_100ms() {
    let server = Server::on(STORE).start(&["--perft-max-concurrent", "1"]);
    let mut client = server.client().await;
    // The caller gives up after 200 ms without any deadline on the call: the request is
    // reset, and the server must stop the count.
    let abandoned = tokio::time::timeout(
        Duration::from_millis(200),
        client.perft(pb::PerftRequest {
            depth: 9,
            threads: 1,
            ..Default::default()
        }),
    )
    .await;
    assert!(
        abandoned.is_err(),
        "a depth-9 perft does not finish in 200 ms"
    );
    let gave_up = Instant::now();
    // The slot frees once the count has stopped.
    loop {
        match client
            .perft(pb::PerftRequest {
                depth: 1,
                ..Default::default()
            })
            .await
        {
            Ok(r) => {
                assert_eq!(r.into_inner().nodes, 20);
                break;
            }
            Err(status) => {
                assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
                assert!(
                    gave_up.elapsed() < Duration::from_millis(100),
                    "still computing after {:?}",
                    gave_up.elapsed()
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
    assert!(
        gave_up.elapsed() < Duration::from_millis(100),
        "stopped after {:?}",
        gave_up.elapsed()
    );
    let cancelled_logged = server
        .log()
        .iter()
        .any(|l| l.contains("method=\"Perft\"") && l.contains("CANCELLED"));
    assert!(
        cancelled_logged,
        "the cancelled call is logged: {:?}",
        server.log()
    );
}

#[tokio::test]
async fn evicted_games_come_back_intact() {
    let server = Server::on(STORE).start(&["--cache-games", "2"]);
    let mut client = server.client().await;
    for i in 0..6 {
        let id = format!("cached-{i}");
        new_game(&mut client, named(&id)).await;
        play_at(&mut client, &id, "e4", Some(0)).await;
        play_at(&mut client, &id, "e5", Some(1)).await;
    }
    for i in 0..6 {
        let game = client
            .get_game(pb::GetGameRequest {
                game_id: format!("cached-{i}"),
                ..Default::default()
            })
            .await
            .expect("GetGame");
        assert_eq!(
            game.into_inner().game.expect("a game").moves,
            ["e2e4", "e7e5"]
        );
    }
}

#[tokio::test]
async fn health_and_reflection_are_served() {
    use tonic_health::pb::{
        HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
    };
    use tonic_reflection::pb::{v1, v1alpha};

    let server = Server::on(STORE).start(&[]);
    let channel = server.channel().await;
    let mut health = HealthClient::new(channel.clone());
    for service in ["", "chess.v1.ChessService"] {
        let status = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .expect("Check")
            .into_inner();
        assert_eq!(
            status.status(),
            ServingStatus::Serving,
            "health of {service:?}"
        );
    }

    // v1: list services, and resolve the error detail types (registered from tonic-types).
    let mut reflection = v1::server_reflection_client::ServerReflectionClient::new(channel.clone());
    let requests = vec![
        v1::ServerReflectionRequest {
            host: String::new(),
            message_request: Some(v1::server_reflection_request::MessageRequest::ListServices(
                String::new(),
            )),
        },
        v1::ServerReflectionRequest {
            host: String::new(),
            message_request: Some(
                v1::server_reflection_request::MessageRequest::FileContainingSymbol(
                    "google.rpc.ErrorInfo".into(),
                ),
            ),
        },
    ];
    let mut stream = reflection
        .server_reflection_info(tokio_stream::iter(requests))
        .await
        .expect("reflection v1")
        .into_inner();
    let listed = stream
        .message()
        .await
        .expect("a response")
        .expect("a message");
    let names: Vec<String> = match listed.message_response {
        Some(v1::server_reflection_response::MessageResponse::ListServicesResponse(list)) => {
            list.service.into_iter().map(|s| s.name).collect()
        }
        other => panic!("unexpected reflection answer {other:?}"),
    };
    for wanted in ["chess.v1.ChessService", "grpc.health.v1.Health"] {
        assert!(
            names.iter().any(|n| n == wanted),
            "{wanted} missing from {names:?}"
        );
    }
    let file = stream
        .message()
        .await
        .expect("a response")
        .expect("a message");
    assert!(
        matches!(
            file.message_response,
            Some(v1::server_reflection_response::MessageResponse::FileDescriptorResponse(_))
        ),
        "ErrorInfo resolves: {:?}",
        file.message_response
    );

    // v1alpha (what grpcurl 1.8.6 speaks).
    let mut alpha = v1alpha::server_reflection_client::ServerReflectionClient::new(channel);
    let request = v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            v1alpha::server_reflection_request::MessageRequest::FileContainingSymbol(
                "chess.v1.ChessService".into(),
            ),
        ),
    };
    let mut stream = alpha
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .expect("reflection v1alpha")
        .into_inner();
    let file = stream
        .message()
        .await
        .expect("a response")
        .expect("a message");
    assert!(
        matches!(
            file.message_response,
            Some(v1alpha::server_reflection_response::MessageResponse::FileDescriptorResponse(_))
        ),
        "{:?}",
        file.message_response
    );
}

#[tokio::test]
async fn sigterm_with_an_open_health_watch_exits_promptly_and_cleanly() {
    use tonic_health::pb::{
        HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
    };

    let mut server = Server::on(STORE).start(&["--shutdown-grace-secs", "5"]);
    let mut health = HealthClient::new(server.channel().await);
    let mut watch = health
        .watch(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .expect("Watch")
        .into_inner();
    let first = watch.message().await.expect("a status").expect("a message");
    assert_eq!(first.status(), ServingStatus::Serving);

    let (status, took) = server
        .terminate(Duration::from_secs(10))
        .expect("the server exits after SIGTERM");
    assert!(status.success(), "exit status {status:?}");
    assert!(
        took < Duration::from_secs(2),
        "the open Watch held the server for {took:?}"
    );
    // The watcher saw NOT_SERVING before the connection closed.
    let mut saw_not_serving = false;
    while let Ok(Some(update)) = watch.message().await {
        saw_not_serving |= update.status() == ServingStatus::NotServing;
    }
    assert!(saw_not_serving, "the Watch stream reported NOT_SERVING");
    // The log reader thread may lag the exit by a moment.
    let flushed = || server.log().iter().any(|l| l.contains("store flushed"));
    let deadline = Instant::now() + Duration::from_secs(2);
    while !flushed() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(flushed(), "{:?}", server.log());
}
