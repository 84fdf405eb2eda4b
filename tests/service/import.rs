//! ImportGame end to end: the real PGN files of `tests/data/pgn/` (ChessBase, cutechess,
//! lichess standard and Chess960, hand-written, engine UCI) imported through gRPC and
//! compared with what each records; retries with the same id; validate_only; every error's
//! reason and metadata; an imported game survives a restart and plays on.

use std::collections::HashMap;
use std::time::Duration;

use chess_service::pb;
use chess_service::rules::pgn_read::read_pgn;
use tonic::Code;

use super::STORE;
use crate::common::client::{Client, get, play, try_get};
use crate::common::server::{Server, error_info, expect_error, violated_fields};

/// The server's defaults: its request limit (264 KiB) lets a text of 256 KiB and a
/// little more reach ImportGame, whose own limit is what such a text meets.
const LARGE_REQUESTS: &[&str] = &[];

fn data(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pgn")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn request(id: &str, pgn: &str) -> pb::ImportGameRequest {
    pb::ImportGameRequest {
        pgn: pgn.into(),
        game_id: id.into(),
        ..Default::default()
    }
}

async fn import(c: &mut Client, req: pb::ImportGameRequest) -> pb::Game {
    let id = req.game_id.clone();
    c.import_game(req)
        .await
        .unwrap_or_else(|e| panic!("ImportGame {id}: {e:?}"))
        .into_inner()
        .game
        .expect("ImportGame returns a game")
}

/// What each real file imports to.
struct Expected {
    file: &'static str,
    id: &'static str,
    plies: u32,
    fen: &'static str,
    status: pb::GameStatus,
    winner: pb::Color,
    variant: pb::Variant,
    /// Text the game's PGN must hold: its moves, result, termination or start.
    pgn_holds: [&'static str; 2],
}

const FILES: [Expected; 7] = [
    Expected {
        file: "chessbase_morphy_opera_1858.pgn",
        id: "opera",
        plies: 33,
        fen: "1n1Rkb1r/p4ppp/4q3/4p1B1/4P3/8/PPP2PPP/2K5 b k - 1 17",
        status: pb::GameStatus::Checkmate,
        winner: pb::Color::White,
        variant: pb::Variant::Standard,
        pgn_holds: ["17. Rd8# 1-0", "16. Qb8+ Nxb8"],
    },
    Expected {
        file: "chessbase_deep_blue_kasparov_1997_no_marker.pgn",
        id: "deep-blue-6",
        plies: 37,
        fen: "r1k4r/p2nb1p1/2b4p/1p1n1p2/2PP4/3Q1NB1/1P3PPP/R5K1 b - - 0 19",
        status: pb::GameStatus::Resignation,
        winner: pb::Color::White,
        variant: pb::Variant::Standard,
        pgn_holds: ["19. c4 1-0", "[Termination \"normal\"]"],
    },
    Expected {
        file: "cutechess_kasparov_topalov_1999.pgn",
        id: "kasparov-topalov",
        plies: 87,
        fen: "8/Q6p/6p1/5p2/5P2/2p3P1/3r3P/2K1k3 b - - 3 44",
        status: pb::GameStatus::Resignation,
        winner: pb::Color::White,
        variant: pb::Variant::Standard,
        pgn_holds: ["44. Qa7 1-0", "[Result \"1-0\"]"],
    },
    Expected {
        file: "lichess_byrne_fischer_time_forfeit.pgn",
        id: "byrne-fischer",
        plies: 50,
        fen: "4r1k1/1p3pbp/1Qp3p1/8/r1b5/5N2/P4PPP/3n2KR w - - 0 26",
        status: pb::GameStatus::OutOfTime,
        winner: pb::Color::Black,
        variant: pb::Variant::Standard,
        pgn_holds: ["[Termination \"time forfeit\"]", "Nxd1 0-1"],
    },
    Expected {
        file: "lichess_chess960.pgn",
        id: "lichess-960",
        plies: 25,
        fen: "Q1kr1b1n/2prpqpp/p2p4/1p3p1b/nP1P3P/1N6/P1P1PPP1/RK1RBB1N b KQ - 13 13",
        status: pb::GameStatus::Checkmate,
        winner: pb::Color::White,
        variant: pb::Variant::Chess960,
        pgn_holds: ["[Variant \"Chess960\"]", "Qa8# 1-0"],
    },
    Expected {
        file: "handwritten_evergreen_1852_bom_crlf.pgn",
        id: "evergreen",
        plies: 47,
        fen: "1r3kr1/pbpBBp1p/1b3P2/8/8/2P2q2/P4PPP/3R2K1 b - - 0 24",
        status: pb::GameStatus::Checkmate,
        winner: pb::Color::White,
        variant: pb::Variant::Standard,
        pgn_holds: ["24. Bxe7# 1-0", "17. Nf6+ gxf6"],
    },
    Expected {
        file: "engine_pv_uci_kiwipete.pgn",
        id: "kiwipete-selfplay",
        plies: 136,
        fen: "8/8/8/8/6K1/8/3k3b/8 w - - 0 69",
        status: pb::GameStatus::DrawInsufficientMaterial,
        winner: pb::Color::Unspecified,
        variant: pb::Variant::Standard,
        pgn_holds: ["[SetUp \"1\"]", "a1=B"],
    },
];

fn check(e: &Expected, game: &pb::Game) {
    assert_eq!(game.game_id, e.id, "{}", e.file);
    assert_eq!(game.ply, e.plies, "{}", e.file);
    assert_eq!(game.fen, e.fen, "{}", e.file);
    assert_eq!(game.status(), e.status, "{}", e.file);
    assert_eq!(game.winner(), e.winner, "{}", e.file);
    assert_eq!(game.variant(), e.variant, "{}", e.file);
    assert!(game.clock.is_none(), "{}: an import is untimed", e.file);
    // The moves are the file's, as the rules engine reads them.
    let read = read_pgn(&data(e.file)).expect("the file reads");
    assert_eq!(game.san_moves, read.board().san_moves(), "{}", e.file);
    assert_eq!(game.moves, read.board().uci_moves(), "{}", e.file);
    for text in e.pgn_holds {
        assert!(
            game.pgn.contains(text),
            "{}: {text} in\n{}",
            e.file,
            game.pgn
        );
    }
}

#[tokio::test]
async fn real_files_import_as_recorded_and_survive_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::on(STORE).start_in(dir.path(), &[]);
    let mut client = server.client().await;
    for e in &FILES {
        let game = import(&mut client, request(e.id, &data(e.file))).await;
        check(e, &game);
        assert_eq!(get(&mut client, e.id).await, game, "{}", e.file);
    }
    server.terminate(Duration::from_secs(10));
    let server = Server::on(STORE).start_in(dir.path(), &[]);
    let mut client = server.client().await;
    for e in &FILES {
        check(e, &get(&mut client, e.id).await);
    }
}

#[tokio::test]
async fn the_same_id_and_text_answers_the_game_other_text_is_already_exists() {
    let server = Server::on(STORE).start(&[]);
    let mut client = server.client().await;
    let opera = data("chessbase_morphy_opera_1858.pgn");
    let first = import(&mut client, request("again", &opera)).await;
    let again = import(&mut client, request("again", &opera)).await;
    assert_eq!(first, again);
    assert_eq!(again.version, first.version, "nothing was applied twice");
    // Other text under the same id: another game.
    let other = client
        .import_game(request(
            "again",
            &data("chessbase_deep_blue_kasparov_1997_no_marker.pgn"),
        ))
        .await;
    let status = expect_error(other, Code::AlreadyExists, "GAME_ALREADY_EXISTS");
    assert_eq!(error_info(&status).metadata["game_id"], "again");
    // The same moves with another result are another game too.
    let prefix = opera.replace(
        "16.Qb8+\n$3 {[%csl Rd8][%cal Gb3b8,Gd1d8]} Nxb8 17.Rd8# 1-0",
        "*",
    );
    assert_ne!(prefix, opera, "the file's ending is cut");
    let shorter = client.import_game(request("again", &prefix)).await;
    expect_error(shorter, Code::AlreadyExists, "GAME_ALREADY_EXISTS");
    // A NewGame on the imported id is the existing game when it names no start.
    let named = client
        .new_game(pb::NewGameRequest {
            game_id: "again".into(),
            ..Default::default()
        })
        .await
        .expect("NewGame answers the existing game")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(named.ply, 33);
    // Without an id, the server makes one each time.
    let a = import(&mut client, request("", &prefix)).await;
    let b = import(&mut client, request("", &prefix)).await;
    assert_eq!(a.game_id.len(), 22, "{}", a.game_id);
    assert_ne!(a.game_id, b.game_id);
    assert_eq!((a.ply, a.status()), (30, pb::GameStatus::InProgress));
}

#[tokio::test]
async fn validate_only_answers_the_game_and_stores_nothing() {
    let server = Server::on(STORE).start(&[]);
    let mut client = server.client().await;
    let text = data("lichess_byrne_fischer_time_forfeit.pgn");
    let checked = import(
        &mut client,
        pb::ImportGameRequest {
            validate_only: true,
            ..request("checked-only", &text)
        },
    )
    .await;
    check(
        &FILES[3],
        &pb::Game {
            game_id: "byrne-fischer".into(),
            ..checked.clone()
        },
    );
    assert_eq!(checked.game_id, "checked-only");
    let missing = try_get(&mut client, "checked-only").await;
    assert_eq!(missing.expect_err("nothing stored").code(), Code::NotFound);
    // Stored for real, it is the same game.
    let stored = import(&mut client, request("checked-only", &text)).await;
    assert_eq!(stored.pgn, checked.pgn);
    assert_eq!(stored.version, checked.version);
    // A game left in progress ("*") plays on.
    let unfinished = import(&mut client, request("goes-on", "1. e4 e5 2. Nf3 *")).await;
    assert_eq!(unfinished.status(), pb::GameStatus::InProgress);
    let game = play(&mut client, "goes-on", "Nc6").await;
    assert_eq!(game.san_moves, ["e4", "e5", "Nf3", "Nc6"]);
}

fn metadata(status: &tonic::Status) -> HashMap<String, String> {
    error_info(status).metadata
}

#[tokio::test]
async fn every_error_has_its_reason_and_metadata() {
    let server = Server::on(STORE).start(LARGE_REQUESTS);
    let mut client = server.client().await;
    // Syntax: line and column.
    let status = expect_error(
        client
            .import_game(request("bad", "[Event \"x\"]\n1. e4 e5 )"))
            .await,
        Code::InvalidArgument,
        "PGN_SYNTAX",
    );
    let m = metadata(&status);
    assert_eq!((m["line"].as_str(), m["column"].as_str()), ("2", "10"));
    assert!(
        status.message().contains("line 2, column 10"),
        "{}",
        status.message()
    );
    assert_eq!(violated_fields(&status), ["pgn"]);
    // Illegal: ply, move number, token.
    let status = expect_error(
        client
            .import_game(request("bad", "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bb5"))
            .await,
        Code::InvalidArgument,
        "PGN_ILLEGAL_MOVE",
    );
    let m = metadata(&status);
    assert_eq!(
        (
            m["ply"].as_str(),
            m["move_number"].as_str(),
            m["token"].as_str()
        ),
        ("6", "4", "Bb5")
    );
    for part in ["'Bb5'", "ply 6", "move 4"] {
        assert!(status.message().contains(part), "{}", status.message());
    }
    // Ambiguous: the candidates too.
    let status = expect_error(
        client
            .import_game(request(
                "bad",
                "[FEN \"4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 30\"]\n30. Nd2 *",
            ))
            .await,
        Code::InvalidArgument,
        "PGN_AMBIGUOUS_MOVE",
    );
    let m = metadata(&status);
    assert_eq!(
        (
            m["ply"].as_str(),
            m["move_number"].as_str(),
            m["token"].as_str()
        ),
        ("0", "30", "Nd2")
    );
    assert_eq!(m["candidates"], "Nbd2,Nfd2");
    assert!(
        status.message().contains("Nbd2 or Nfd2"),
        "{}",
        status.message()
    );
    // Two games.
    let two = format!(
        "{}\n{}",
        data("chessbase_morphy_opera_1858.pgn"),
        data("chessbase_deep_blue_kasparov_1997_no_marker.pgn")
    );
    let status = expect_error(
        client.import_game(request("bad", &two)).await,
        Code::InvalidArgument,
        "PGN_MULTIPLE_GAMES",
    );
    let second = data("chessbase_morphy_opera_1858.pgn").lines().count() + 2;
    assert_eq!(metadata(&status)["line"], second.to_string());
    // No text, and too much text.
    let status = expect_error(
        client.import_game(request("bad", "")).await,
        Code::InvalidArgument,
        "MISSING_FIELD",
    );
    assert_eq!(violated_fields(&status), ["pgn"]);
    let huge = format!("{{{}}} *", "x".repeat(256 * 1024 - 3));
    assert_eq!(huge.len(), 256 * 1024 + 1);
    let status = expect_error(
        client.import_game(request("bad", &huge)).await,
        Code::InvalidArgument,
        "PGN_SYNTAX",
    );
    assert_eq!(violated_fields(&status), ["pgn"]);
    let m = metadata(&status);
    assert_eq!(m["max_bytes"], "262144");
    // The first character past the limit: the text is one line.
    assert_eq!((m["line"].as_str(), m["column"].as_str()), ("1", "262145"));
    // A bad id is the id's error, before the text is read.
    expect_error(
        client.import_game(request("no spaces", "*")).await,
        Code::InvalidArgument,
        "INVALID_GAME_ID",
    );
    // None of them stored anything.
    assert_eq!(
        try_get(&mut client, "bad")
            .await
            .expect_err("nothing stored")
            .code(),
        Code::NotFound
    );
}

#[tokio::test]
async fn a_large_real_game_fits_the_request_limit() {
    // The biggest file here, with comments added, to about 250 KiB.
    let server = Server::on(STORE).start(LARGE_REQUESTS);
    let mut client = server.client().await;
    let cute = data("cutechess_kasparov_topalov_1999.pgn");
    let (tags, moves) = cute.split_once("\n\n").expect("tags, then moves");
    let padding = "{ a long engine comment, repeated to fill the request }\n";
    let mut text = format!("{tags}\n\n");
    while text.len() + padding.len() + moves.len() < 250 * 1024 {
        text.push_str(padding);
    }
    text.push_str(moves);
    assert!(text.len() > 240 * 1024, "{}", text.len());
    let game = import(&mut client, request("large", &text)).await;
    check(
        &FILES[2],
        &pb::Game {
            game_id: FILES[2].id.into(),
            ..game
        },
    );
}
