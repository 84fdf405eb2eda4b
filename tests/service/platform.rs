//! What a chess platform shows and needs (issue 18), through gRPC against the real server:
//! opening names (on every game, in the PGN, checked over a sample of the whole dataset),
//! clocks that start only after both first moves, and AddTime (an event of the history:
//! streamed, restored by a restart, refused with its reasons).

use std::time::Duration;

use chess_service::lifecycle::opening;
use chess_service::pb;
use chess_service::pb::game_event::Kind;
use tonic::Code;

use crate::common::client::{
    BLACK, Client, WHITE, get, history, named, new_game, play, time_control, undo,
};
use crate::common::server::{Server, error_info, expect_error, violated_fields};

fn opening_of(g: &pb::Game) -> Option<(String, String, u32)> {
    g.opening
        .as_ref()
        .map(|o| (o.eco.clone(), o.name.clone(), o.ply))
}

async fn play_all(c: &mut Client, id: &str, moves: &[&str]) -> pb::Game {
    let mut last = None;
    for mv in moves {
        last = Some(play(c, id, mv).await);
    }
    last.expect("at least one move")
}

#[tokio::test]
async fn a_game_shows_its_opening_and_its_pgn_carries_it() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    let g = new_game(&mut c, named("najdorf")).await;
    assert_eq!(g.opening, None, "the start position is not named");
    let g = play(&mut c, "najdorf", "e4").await;
    assert_eq!(
        opening_of(&g),
        Some(("B00".to_string(), "King's Pawn Game".to_string(), 1))
    );
    let g = play_all(
        &mut c,
        "najdorf",
        &["c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6"],
    )
    .await;
    let najdorf = Some((
        "B90".to_string(),
        "Sicilian Defense: Najdorf Variation".to_string(),
        10,
    ));
    assert_eq!(opening_of(&g), najdorf);
    assert!(
        g.pgn
            .contains("[ECO \"B90\"]\n[Opening \"Sicilian Defense: Najdorf Variation\"]\n"),
        "{}",
        g.pgn
    );
    // Out of the book: the last named position stays, with the ply it was reached at.
    let g = play_all(&mut c, "najdorf", &["a3", "h6"]).await;
    assert_eq!(opening_of(&g), najdorf);
    // Undo below it: the name before it.
    undo(&mut c, "najdorf").await;
    undo(&mut c, "najdorf").await;
    let g = undo(&mut c, "najdorf").await;
    let before = opening_of(&g).expect("still named");
    assert!(before.2 < 10, "{before:?}");
    assert_ne!(Some(before), najdorf);
    assert_eq!(get(&mut c, "najdorf").await.opening, g.opening);

    // Transpositions count: the Queen's Gambit Declined reached from the English.
    new_game(&mut c, named("qgd")).await;
    let direct = play_all(&mut c, "qgd", &["d4", "d5", "c4", "e6", "Nc3", "Nf6"]).await;
    new_game(&mut c, named("qgd-transposed")).await;
    let transposed = play_all(
        &mut c,
        "qgd-transposed",
        &["c4", "e6", "Nc3", "d5", "d4", "Nf6"],
    )
    .await;
    let (d, t) = (
        direct.opening.expect("named"),
        transposed.opening.expect("named"),
    );
    assert_eq!(
        (d.eco.as_str(), d.name.as_str()),
        ("D35", "Queen's Gambit Declined: Normal Defense")
    );
    assert_eq!((&d.eco, &d.name, t.ply), (&t.eco, &t.name, 6));

    // Chess960 and FEN games have none, whatever is played.
    let g = new_game(
        &mut c,
        pb::NewGameRequest {
            variant: pb::Variant::Chess960 as i32,
            chess960_position: Some(518),
            ..named("no-name-960")
        },
    )
    .await;
    assert_eq!(g.opening, None);
    let g = play_all(&mut c, "no-name-960", &["e4", "c5"]).await;
    assert_eq!(g.opening, None);
    assert!(!g.pgn.contains("[ECO"), "{}", g.pgn);
    new_game(
        &mut c,
        pb::NewGameRequest {
            fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
            ..named("no-name-fen")
        },
    )
    .await;
    let g = play_all(&mut c, "no-name-fen", &["c5", "Nf3"]).await;
    assert_eq!(g.opening, None);
}

/// A sample of the whole dataset (every 16th line, so a few thousand Plays) played over
/// gRPC: each ends classified as its own entry or one with the same position. The whole
/// dataset is checked in the library (`lifecycle::opening`'s tests), without the wire.
#[tokio::test]
async fn lines_of_the_dataset_played_over_grpc_are_named_by_their_entry() {
    let server = Server::start(&["--durability", "none"]);
    let mut c = server.client().await;
    let book = opening::book();
    assert!(book.problems().is_empty(), "{:?}", book.problems());
    let mut checked = 0;
    for (i, line) in book.lines().iter().enumerate().step_by(16) {
        let id = format!("line-{i}");
        new_game(&mut c, named(&id)).await;
        let moves: Vec<&str> = line
            .pgn
            .split_whitespace()
            .filter(|t| !t.ends_with('.'))
            .collect();
        let g = play_all(&mut c, &id, &moves).await;
        let o = g
            .opening
            .unwrap_or_else(|| panic!("{}: no opening", line.pgn));
        assert_eq!(o.ply as usize, line.plies, "{}", line.pgn);
        let same_position = book
            .lines()
            .iter()
            .filter(|l| l.key == line.key)
            .any(|l| l.eco == o.eco && l.name == o.name);
        assert!(
            same_position,
            "{} ({} {}) answered {} {}",
            line.pgn, line.eco, line.name, o.eco, o.name
        );
        assert!(
            g.pgn.contains(&format!("[Opening \"{}\"]", o.name)),
            "{}",
            g.pgn
        );
        checked += 1;
    }
    assert!(checked > 200, "{checked} lines checked");
}

fn after_first_moves(initial_ms: u64, increment_ms: u64) -> Option<pb::TimeControl> {
    Some(pb::TimeControl {
        initial_ms,
        increment_ms,
        clock_start: pb::ClockStart::AfterFirstMoves as i32,
    })
}

fn clock(g: &pb::Game) -> pb::Clock {
    g.clock.expect("a timed game shows its clocks")
}

fn running(c: &pb::Clock) -> pb::Color {
    pb::Color::try_from(c.running).expect("a known colour")
}

#[tokio::test]
async fn clocks_that_start_after_both_first_moves_and_survive_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start_in(dir.path(), &[]);
    let mut c = server.client().await;
    let id = "late-clock";
    let g = new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: after_first_moves(60_000, 1000),
            ..named(id)
        },
    )
    .await;
    let tc = clock(&g).time_control.expect("the time control");
    assert_eq!(tc.clock_start, pb::ClockStart::AfterFirstMoves as i32);
    assert_eq!(running(&clock(&g)), pb::Color::Unspecified);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The first moves are not charged and get no increment; nothing runs meanwhile.
    let g = play(&mut c, id, "e4").await;
    let k = clock(&g);
    assert_eq!(
        (k.white_remaining_ms, k.black_remaining_ms, running(&k)),
        (60_000, 60_000, pb::Color::Unspecified)
    );
    assert!(g.pgn.contains("1. e4 {[%clk 0:01:00]}"), "{}", g.pgn);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let g = play(&mut c, id, "e5").await;
    let k = clock(&g);
    assert_eq!(
        (k.white_remaining_ms, k.black_remaining_ms, running(&k)),
        (60_000, 60_000, pb::Color::White),
        "white's clock runs from black's first move"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let g = play(&mut c, id, "Nf3").await;
    let k = clock(&g);
    assert!(
        k.white_remaining_ms <= 60_000 + 1000 - 200 && k.white_remaining_ms > 60_000,
        "white was charged about 200 ms and got the increment: {k:?}"
    );
    assert_eq!(running(&k), pb::Color::Black);
    // Undo back before the start stops the clocks again.
    undo(&mut c, id).await;
    let g = undo(&mut c, id).await;
    let k = clock(&g);
    assert_eq!(
        (k.white_remaining_ms, k.black_remaining_ms, running(&k)),
        (60_000, 60_000, pb::Color::Unspecified)
    );
    let g = play(&mut c, id, "c5").await;
    let stopped_at = clock(&g);
    assert_eq!(running(&stopped_at), pb::Color::White);

    // The spectator's view of the creation names the clock start.
    let events = history(&mut c, id).await;
    match &events[0].kind {
        Some(Kind::Started(s)) => assert_eq!(
            s.time_control.map(|t| t.clock_start),
            Some(pb::ClockStart::AfterFirstMoves as i32)
        ),
        other => panic!("version 0 is the creation: {other:?}"),
    }

    // A repeated NewGame must name the same clock start; an unknown one is refused.
    let same = new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: after_first_moves(60_000, 1000),
            ..named(id)
        },
    )
    .await;
    assert_eq!(same.version, g.version);
    let other = c
        .new_game(pb::NewGameRequest {
            time_control: time_control(60_000, 1000),
            ..named(id)
        })
        .await;
    expect_error(other, Code::AlreadyExists, "GAME_ALREADY_EXISTS");
    let unknown = c
        .new_game(pb::NewGameRequest {
            time_control: Some(pb::TimeControl {
                initial_ms: 1000,
                increment_ms: 0,
                clock_start: 9,
            }),
            ..named("unknown-clock-start")
        })
        .await;
    let status = expect_error(unknown, Code::InvalidArgument, "INVALID_TIME_CONTROL");
    assert_eq!(violated_fields(&status), ["time_control.clock_start"]);

    // A restart restores it exactly: same clocks (the running one as of the same instant),
    // same history.
    let before = get(&mut c, id).await;
    server
        .terminate(Duration::from_secs(20))
        .expect("the server stops");
    let server = Server::start_in(dir.path(), &[]);
    let mut c = server.client().await;
    let after = get(&mut c, id).await;
    assert_eq!(after.version, before.version);
    assert_eq!(after.moves, before.moves);
    let (b, a) = (clock(&before), clock(&after));
    assert_eq!(a.time_control, b.time_control);
    assert_eq!(a.black_remaining_ms, b.black_remaining_ms);
    assert_eq!(running(&a), pb::Color::White);
    assert_eq!(
        a.white_remaining_ms + a.as_of_unix_ms,
        stopped_at.white_remaining_ms + stopped_at.as_of_unix_ms,
        "white's clock ran from the same instant with the same time"
    );
    assert_eq!(
        history(&mut c, id).await,
        events,
        "the history survives the restart"
    );
}

fn add_time(id: &str, color: i32, ms: u64) -> pb::AddTimeRequest {
    pb::AddTimeRequest {
        game_id: id.into(),
        color,
        ms,
        expected_version: None,
        ..Default::default()
    }
}

async fn add(c: &mut Client, req: pb::AddTimeRequest) -> pb::Game {
    let what = format!("AddTime {} {}", req.game_id, req.ms);
    c.add_time(req)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e:?}"))
        .into_inner()
        .game
        .expect("AddTime returns the game")
}

#[tokio::test]
async fn add_time_is_an_event_of_the_history_and_is_refused_with_reasons() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start_in(dir.path(), &[]);
    let mut c = server.client().await;
    let id = "plus-fifteen";
    new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: time_control(300_000, 0),
            ..named(id)
        },
    )
    .await;
    let g = play(&mut c, id, "e4").await;
    let mut spectator = crate::common::client::watch(&mut c, id, g.version + 1).await;
    let g = add(
        &mut c,
        pb::AddTimeRequest {
            expected_version: Some(g.version),
            ..add_time(id, BLACK, 15_000)
        },
    )
    .await;
    assert_eq!(g.version, 2);
    let k = clock(&g);
    assert!(
        k.black_remaining_ms > 300_000 && k.black_remaining_ms <= 315_000,
        "black got 15 s while its clock runs: {k:?}"
    );
    assert!(
        k.white_remaining_ms < 300_000,
        "white's move was charged: {k:?}"
    );
    // WatchGame streams it, with the clocks after it.
    let event = crate::common::client::next_event(&mut spectator).await;
    assert_eq!(event.version, 2);
    match &event.kind {
        Some(Kind::TimeAdded(t)) => assert_eq!((t.color, t.ms), (BLACK, 15_000)),
        other => panic!("expected time_added, got {other:?}"),
    }
    let state_clock = event.state.and_then(|s| s.clock).expect("clocks");
    assert!(state_clock.black_remaining_ms > 300_000);

    // A stale expected_version: ABORTED, VERSION_MISMATCH, with both versions.
    let stale = c
        .add_time(pb::AddTimeRequest {
            expected_version: Some(1),
            ..add_time(id, WHITE, 1000)
        })
        .await;
    let status = expect_error(stale, Code::Aborted, "VERSION_MISMATCH");
    let info = error_info(&status);
    assert_eq!(info.metadata["current_version"], "2");
    assert_eq!(info.metadata["expected_version"], "1");
    assert_eq!(info.metadata["game_id"], id);

    // Zero, more than an hour, no colour: INVALID_ARGUMENT naming the field.
    for ms in [0, 3_600_001] {
        let status = expect_error(
            c.add_time(add_time(id, WHITE, ms)).await,
            Code::InvalidArgument,
            "INVALID_ADD_TIME",
        );
        assert_eq!(violated_fields(&status), ["ms"]);
    }
    add(&mut c, add_time(id, WHITE, 3_600_000)).await;
    expect_error(
        c.add_time(add_time(id, 0, 1000)).await,
        Code::InvalidArgument,
        "MISSING_FIELD",
    );
    expect_error(
        c.add_time(add_time("no-such-game", WHITE, 1000)).await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );

    // Undo keeps the time given.
    let g = undo(&mut c, id).await;
    let k = clock(&g);
    assert_eq!(
        (k.white_remaining_ms, k.black_remaining_ms),
        (300_000 + 3_600_000, 300_000 + 15_000)
    );

    // An untimed game: GAME_UNTIMED; an ended one: GAME_OVER.
    new_game(&mut c, named("untimed")).await;
    let status = expect_error(
        c.add_time(add_time("untimed", WHITE, 1000)).await,
        Code::FailedPrecondition,
        "GAME_UNTIMED",
    );
    assert_eq!(error_info(&status).metadata["game_id"], "untimed");
    c.resign(pb::ResignRequest {
        game_id: id.into(),
        color: WHITE,
        ..Default::default()
    })
    .await
    .expect("resign");
    expect_error(
        c.add_time(add_time(id, BLACK, 1000)).await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );

    // A restart replays it: the same clocks and the same history.
    let before = get(&mut c, id).await;
    let events = history(&mut c, id).await;
    server
        .terminate(Duration::from_secs(20))
        .expect("the server stops");
    let server = Server::start_in(dir.path(), &[]);
    let mut c = server.client().await;
    let after = get(&mut c, id).await;
    assert_eq!(after.clock, before.clock);
    assert_eq!(after.version, before.version);
    assert_eq!(history(&mut c, id).await, events);
}
