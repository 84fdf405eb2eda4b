//! Dead positions (FIDE 5.2.2) and flag falls against a side that cannot mate (6.9)
//! through gRPC against the real server binary: a game played into a locked wall, a game
//! created dead, flag falls drawn or lost by the winnability solver, an imported time
//! forfeit; all of it replayed exactly by a restarted server (kill -9). And the
//! Winnability RPC.

use std::time::{Duration, Instant};

use chess_service::pb;
use prost::Message;
use tonic::Code;

use crate::common::client::{BLACK, WHITE, get, named, new_game, play, time_control};
use crate::common::raw_grpc::{frame, raw_call};
use crate::common::server::{Server, expect_error, violated_fields};

/// chasolver's README wall: black cannot mate behind it, white still can.
const WALL: &str = "5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8";
/// One white move (h4) from a wall no king can cross.
const ALMOST_WALLED: &str = "8/8/1k6/1p1p1p1p/1P1P1P2/7P/8/K7 w - - 0 1";
const WALLED: &str = "8/8/1k6/1p1p1p1p/1P1P1P1P/8/8/K7 w - - 0 1";

fn status(g: &pb::Game) -> pb::GameStatus {
    pb::GameStatus::try_from(g.status).expect("a known status")
}

fn from_fen(id: &str, fen: &str, tc: Option<pb::TimeControl>) -> pb::NewGameRequest {
    pb::NewGameRequest {
        fen: fen.into(),
        time_control: tc,
        ..named(id)
    }
}

/// What a restart must show again: each game's status, version and PGN.
fn summary(g: &pb::Game) -> (pb::GameStatus, u64, i32, String) {
    (status(g), g.version, g.winner, g.pgn.clone())
}

#[tokio::test]
async fn dead_positions_and_unwinnable_flag_falls_are_drawn_and_replay_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let ids = [
        "walled",
        "born-dead",
        "flag-draw",
        "flag-loss",
        "imported",
        "undone",
    ];
    let before: Vec<_> = {
        let mut server = Server::start_in(dir.path(), &[]);
        let mut c = server.client().await;

        // A move that completes the wall ends the game at once.
        new_game(&mut c, from_fen("walled", ALMOST_WALLED, None)).await;
        let g = play(&mut c, "walled", "h4").await;
        assert_eq!(status(&g), pb::GameStatus::DrawDeadPosition);
        assert_eq!((g.version, g.ply, g.winner), (2, 1, 0));
        assert!(
            g.pgn.contains("[Result \"1/2-1/2\"]") && g.pgn.contains("[Termination \"normal\"]"),
            "{}",
            g.pgn
        );
        let late = c
            .play(crate::common::client::play_request("walled", "Ka6"))
            .await;
        expect_error(late, Code::FailedPrecondition, "GAME_OVER");

        // The same, then taken back by the player (a board ending): the game goes on.
        new_game(&mut c, from_fen("undone", ALMOST_WALLED, None)).await;
        play(&mut c, "undone", "h4").await;
        let undone = c
            .undo(pb::UndoRequest {
                game_id: "undone".into(),
                ..Default::default()
            })
            .await
            .expect("a dead position is undone like a mate")
            .into_inner();
        let g = undone.game.unwrap();
        assert_eq!(
            (status(&g), g.version, g.ply),
            (pb::GameStatus::InProgress, 3, 0)
        );

        // Created dead: drawn at version 1.
        let g = new_game(&mut c, from_fen("born-dead", WALLED, None)).await;
        assert_eq!(
            (status(&g), g.version),
            (pb::GameStatus::DrawDeadPosition, 1)
        );

        // Flags: white's falls behind the wall black cannot cross (a draw), black's falls
        // where white can still mate (a loss).
        new_game(
            &mut c,
            from_fen(
                "flag-draw",
                &format!("{WALL} w - - 0 1"),
                time_control(200, 0),
            ),
        )
        .await;
        new_game(
            &mut c,
            from_fen(
                "flag-loss",
                &format!("{WALL} b - - 0 1"),
                time_control(200, 0),
            ),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let g = get(&mut c, "flag-draw").await;
        assert_eq!(
            (status(&g), g.winner),
            (pb::GameStatus::DrawTimeoutUnwinnable, 0)
        );
        assert!(
            g.pgn.contains("[Termination \"time forfeit\"]"),
            "{}",
            g.pgn
        );
        assert!(g.pgn.contains("[Result \"1/2-1/2\"]"), "{}", g.pgn);
        let g = get(&mut c, "flag-loss").await;
        assert_eq!((status(&g), g.winner), (pb::GameStatus::OutOfTime, WHITE));

        // A file that scored a flag fall behind the wall as black's win is stored drawn.
        let pgn = format!(
            "[SetUp \"1\"]\n[FEN \"{WALL} w - - 0 1\"]\n[Termination \"time forfeit\"]\n[Result \"0-1\"]\n\n0-1\n"
        );
        let g = c
            .import_game(pb::ImportGameRequest {
                pgn,
                game_id: "imported".into(),
                ..Default::default()
            })
            .await
            .expect("ImportGame")
            .into_inner()
            .game
            .unwrap();
        assert_eq!(status(&g), pb::GameStatus::DrawTimeoutUnwinnable);

        let mut out = Vec::new();
        for id in ids {
            out.push(summary(&get(&mut c, id).await));
        }
        server.kill9();
        out
    };
    // The restarted server replays every history to the same state, from the log alone.
    let server = Server::start_in(dir.path(), &["--dead-position-budget-nodes", "0"]);
    let mut c = server.client().await;
    for (id, want) in ids.iter().zip(&before) {
        assert_eq!(&summary(&get(&mut c, id).await), want, "{id}");
    }
}

#[tokio::test]
async fn with_no_budget_only_the_material_rule_ends_games() {
    let server = Server::start(&[
        "--dead-position-budget-nodes",
        "0",
        "--flag-fall-budget-nodes",
        "0",
    ]);
    let mut c = server.client().await;
    let g = new_game(&mut c, from_fen("walled", WALLED, None)).await;
    assert_eq!(status(&g), pb::GameStatus::InProgress);
    new_game(
        &mut c,
        from_fen("flag", &format!("{WALL} w - - 0 1"), time_control(200, 0)),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let g = get(&mut c, "flag").await;
    assert_eq!((status(&g), g.winner), (pb::GameStatus::OutOfTime, BLACK));
}

fn by_fen(fen: &str) -> pb::WinnabilityRequest {
    pb::WinnabilityRequest {
        position: Some(pb::winnability_request::Position::Fen(fen.into())),
        variant: 0,
    }
}

fn verdict(s: &Option<pb::SideWinnability>) -> pb::WinnabilityVerdict {
    pb::WinnabilityVerdict::try_from(s.as_ref().expect("a side's verdict").verdict)
        .expect("a known verdict")
}

#[tokio::test]
async fn winnability_answers_each_side_with_a_helpmate_that_mates() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    let fen = format!("{WALL} w - -");
    let r = c
        .winnability(by_fen(&fen))
        .await
        .expect("Winnability")
        .into_inner();
    assert_eq!(verdict(&r.white), pb::WinnabilityVerdict::Winnable);
    assert_eq!(verdict(&r.black), pb::WinnabilityVerdict::Unwinnable);
    assert!(!r.dead);
    let white = r.white.unwrap();
    assert!(white.nodes > 0 && !white.helpmate.is_empty());
    // The helpmate replays on the server's own rules to mate by white.
    new_game(&mut c, from_fen("helpmate", &format!("{fen} 0 1"), None)).await;
    let mut last = None;
    for mv in &white.helpmate {
        last = Some(play(&mut c, "helpmate", mv).await);
    }
    let g = last.unwrap();
    assert_eq!((status(&g), g.winner), (pb::GameStatus::Checkmate, WHITE));

    // By game id: the game's current position.
    new_game(&mut c, from_fen("walled", WALLED, None)).await;
    let r = c
        .winnability(pb::WinnabilityRequest {
            position: Some(pb::winnability_request::Position::GameId("walled".into())),
            variant: 0,
        })
        .await
        .expect("Winnability")
        .into_inner();
    assert!(r.dead, "{r:?}");
    assert!(r.white.unwrap().helpmate.is_empty());

    // Refusals: as LegalMoves's, field by field.
    let bad = c.winnability(by_fen("not a fen")).await;
    let s = expect_error(bad, Code::InvalidArgument, "INVALID_FEN");
    assert_eq!(violated_fields(&s), ["fen"]);
    let none = c.winnability(pb::WinnabilityRequest::default()).await;
    expect_error(none, Code::InvalidArgument, "MISSING_FIELD");
    let missing = c
        .winnability(pb::WinnabilityRequest {
            position: Some(pb::winnability_request::Position::GameId("nope".into())),
            variant: 0,
        })
        .await;
    expect_error(missing, Code::NotFound, "GAME_NOT_FOUND");
}

#[tokio::test]
async fn winnability_past_its_deadline_answers_at_once_and_frees_its_slot() {
    // One slot. The slowest position of chasolver's community file: white's verdict
    // takes about 0.8 s at the default budget (8.9 million nodes). The server answers 20
    // ms before the 300 ms timeout (the solver stops within microseconds, a few ms at
    // worst, of its flag), so its DEADLINE_EXCEEDED beats tonic's own timer.
    let server = Server::start(&["--perft-max-concurrent", "1"]);
    let mut c = server.client().await;
    let hard = "N1b1N1N1/1pPpPpPp/1P1P1P1P/8/8/8/8/kb2B1K1 w - -";
    // Sent by hand with only `grpc-timeout`, so the answer is the server's own (a tonic
    // client's timer for the same header would answer CANCELLED itself).
    let t = Instant::now();
    let answer = raw_call(
        &server.addr,
        "/chess.v1.ChessService/Winnability",
        frame(0, &by_fen(hard).encode_to_vec()),
        &[("grpc-timeout", "300m")],
        Duration::from_secs(5),
    )
    .await;
    let took = t.elapsed();
    let answered = answer.status.expect("the server answers within 5 s");
    // Ours is DEADLINE_EXCEEDED, sent 20 ms early; on some runs tonic's own timer for the
    // same header answers first (CANCELLED, "Timeout expired"): the solver then took
    // longer than the margin to stop (cause not found yet; see the stop 38 note).
    assert!(
        matches!(answered.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{answered:?}"
    );
    assert!(took < Duration::from_millis(600), "{took:?}");
    // The slot is free again at once: the next call runs, to its verdict.
    let r = c
        .winnability(by_fen(hard))
        .await
        .expect("the slot was freed")
        .into_inner();
    assert_eq!(verdict(&r.white), pb::WinnabilityVerdict::Winnable);
    assert!(r.white.unwrap().nodes > 1_000_000);
}

#[tokio::test]
async fn a_flag_fall_judged_at_length_stalls_no_other_call() {
    // One runtime worker, so that a flag fall judged on it would hold every other call
    // for as long as the solver runs. Black's flag falls in each of three games; whether
    // White can still mate there is one of the slowest verdicts of chasolver's community
    // file (about 12 million nodes, one to three seconds on this machine). Meanwhile
    // another game is read every 20 ms.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(dir.path(), &[], &[("TOKIO_WORKER_THREADS", "1")]);
    let mut c = server.client().await;
    new_game(&mut c, named("bystander")).await;
    let hard = "BbK1kb2/b1p1p1p1/1pP1P1P1/1P6/8/8/8/1B2b2B b - - 0 1";
    let games = ["slow-flag-1", "slow-flag-2", "slow-flag-3"];
    for id in games {
        let g = new_game(&mut c, from_fen(id, hard, time_control(300, 0))).await;
        assert_eq!(status(&g), pb::GameStatus::InProgress, "{id}");
    }
    let start = Instant::now();
    let mut worst = Duration::ZERO;
    let mut reads = 0;
    while start.elapsed() < Duration::from_secs(5) {
        let t = Instant::now();
        get(&mut c, "bystander").await;
        worst = worst.max(t.elapsed());
        reads += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // White can mate, so each flag fall is a loss on time, judged by the solver.
    for id in games {
        let g = get(&mut c, id).await;
        assert_eq!(
            (status(&g), g.winner),
            (pb::GameStatus::OutOfTime, WHITE),
            "{id}"
        );
    }
    assert!(
        worst < Duration::from_millis(500),
        "a read of another game waited {worst:?} while flag falls were judged ({reads} reads)"
    );
}
