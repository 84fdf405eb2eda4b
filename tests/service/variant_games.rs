//! Games in lichess's variants, end to end against the real server: each variant's corpus
//! game (python-chess's moves, tests/data/pgn/variants/) played over gRPC to its ending,
//! with every position checked against python-chess's FEN; the ending undone and played
//! again; the history streamed; the PGN exported with lichess's `[Variant]` tag and
//! imported back; the lichess-format exports imported as they are; and every game read
//! back the same after a kill -9 restart. Runs on sled and on PostgreSQL (`STORE`).

use chess_service::pb;
use chess_service::rules::GamePosition;
use chess_service::rules::variant::{AnyPosition, VariantKind};
use tonic::Code;

use super::STORE;
use crate::common::client::{Client, get, history, named, new_game, play, undo};
use crate::common::server::{Server, expect_error};

/// Each variant's game: (the variant, its lichess key (the PGN file's name), the status
/// it ends in, the winner).
const GAMES: [(pb::Variant, VariantKind, pb::GameStatus, pb::Color); 7] = [
    (
        pb::Variant::Atomic,
        VariantKind::Atomic,
        pb::GameStatus::VariantWin,
        pb::Color::White,
    ),
    (
        pb::Variant::Crazyhouse,
        VariantKind::Crazyhouse,
        pb::GameStatus::Checkmate,
        pb::Color::White,
    ),
    (
        pb::Variant::Antichess,
        VariantKind::Antichess,
        pb::GameStatus::VariantWin,
        pb::Color::Black,
    ),
    (
        pb::Variant::Horde,
        VariantKind::Horde,
        pb::GameStatus::Checkmate,
        pb::Color::White,
    ),
    (
        pb::Variant::RacingKings,
        VariantKind::RacingKings,
        pb::GameStatus::VariantWin,
        pb::Color::Black,
    ),
    (
        pb::Variant::KingOfTheHill,
        VariantKind::KingOfTheHill,
        pb::GameStatus::VariantWin,
        pb::Color::Black,
    ),
    (
        pb::Variant::ThreeCheck,
        VariantKind::ThreeCheck,
        pb::GameStatus::VariantWin,
        pb::Color::Black,
    ),
];

/// The lichess-format export of a variant's game (python-chess wrote its moves).
fn export(kind: VariantKind) -> String {
    let path = format!(
        "{}/tests/data/pgn/variants/{}.pgn",
        env!("CARGO_MANIFEST_DIR"),
        kind.key()
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The SAN moves of a PGN's movetext (move numbers, the result and tags left out).
fn san_moves(pgn: &str) -> Vec<String> {
    pgn.lines()
        .filter(|l| !l.starts_with('[') && !l.trim().is_empty())
        .flat_map(str::split_whitespace)
        .filter(|w| !w.ends_with('.') && !matches!(*w, "1-0" | "0-1" | "1/2-1/2" | "*"))
        .map(str::to_string)
        .collect()
}

fn status(g: &pb::Game) -> pb::GameStatus {
    pb::GameStatus::try_from(g.status).expect("a known status")
}

/// Two FENs of `kind` name the same position (the server writes lichess's forms).
fn same_position(kind: VariantKind, a: &str, b: &str) -> bool {
    let read = |fen: &str| {
        AnyPosition::from_fen(kind, fen).unwrap_or_else(|e| panic!("{kind} FEN {fen}: {e}"))
    };
    read(a) == read(b)
}

/// Plays the export's moves in game `id` (SAN as python-chess wrote it, drops included),
/// checking each answer against the library's own replay of the same moves.
async fn play_export(c: &mut Client, id: &str, kind: VariantKind, sans: &[String]) -> pb::Game {
    let mut board = GamePosition::from(AnyPosition::start(kind));
    let mut last = None;
    for (ply, san) in sans.iter().enumerate() {
        let m = board
            .parse_move(san)
            .unwrap_or_else(|e| panic!("{kind} ply {ply} {san}: {e}"));
        board = board.after(m);
        let g = play(c, id, san).await;
        assert_eq!(g.ply as usize, ply + 1, "{kind} {san}");
        assert!(
            same_position(kind, &g.fen, &board.to_fen()),
            "{kind} ply {ply} {san}: {} / {}",
            g.fen,
            board.to_fen()
        );
        assert_eq!(g.san_moves.last(), Some(san), "{kind}: SAN as python-chess");
        last = Some(g);
    }
    last.expect("a game of moves")
}

/// What a restart must show again.
fn summary(g: &pb::Game) -> (i32, u64, i32, String, String, Vec<String>) {
    (
        g.status,
        g.version,
        g.winner,
        g.fen.clone(),
        g.pgn.clone(),
        g.moves.clone(),
    )
}

#[tokio::test]
async fn every_variant_is_played_to_its_ending_imported_and_replayed_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut before = Vec::new();
    {
        let mut server = Server::on(STORE).start_in(dir.path(), &[]);
        let mut c = server.client().await;
        for (variant, kind, ending, winner) in GAMES {
            let id = kind.key();
            let g = new_game(
                &mut c,
                pb::NewGameRequest {
                    variant: variant as i32,
                    ..named(id)
                },
            )
            .await;
            assert_eq!(g.variant, variant as i32, "{kind}");
            assert_eq!(g.fen, AnyPosition::start(kind).to_fen(), "{kind}");
            let sans = san_moves(&export(kind));
            let g = play_export(&mut c, id, kind, &sans).await;
            assert_eq!((status(&g), g.winner), (ending, winner as i32), "{kind}");
            let result = if winner == pb::Color::White {
                "1-0"
            } else {
                "0-1"
            };
            let tag = format!("[Variant \"{}\"]", kind.name());
            assert!(
                g.pgn.contains(&tag) && g.pgn.contains(&format!("[Result \"{result}\"]")),
                "{kind}: {}",
                g.pgn
            );
            // The ending is the board's: no more moves, and an undo takes it back.
            let late = c
                .play(crate::common::client::play_request(id, &sans[0]))
                .await;
            expect_error(late, Code::FailedPrecondition, "GAME_OVER");
            let reopened = undo(&mut c, id).await;
            assert_eq!(status(&reopened), pb::GameStatus::InProgress, "{kind}");
            let again = play(&mut c, id, sans.last().expect("moves")).await;
            assert_eq!((status(&again), again.winner), (ending, winner as i32));

            // A spectator sees the variant, every move and the ending.
            let events = history(&mut c, id).await;
            match &events[0].kind {
                Some(pb::game_event::Kind::Started(s)) => {
                    assert_eq!(s.variant, variant as i32, "{kind}")
                }
                other => panic!("{kind}: the first event is {other:?}"),
            }
            match &events.last().expect("events").kind {
                Some(pb::game_event::Kind::MovePlayed(_)) => {}
                other => panic!("{kind}: the last event is {other:?}"),
            }
            let last_state = events.last().and_then(|e| e.state.clone()).expect("state");
            assert_eq!(last_state.status, ending as i32, "{kind}");

            // The export reads back into the same game, and so does lichess's form.
            for (copy, pgn) in [
                (format!("{id}-exported"), again.pgn.clone()),
                (format!("{id}-lichess"), export(kind)),
            ] {
                let imported = c
                    .import_game(pb::ImportGameRequest {
                        game_id: copy.clone(),
                        pgn,
                        ..Default::default()
                    })
                    .await
                    .unwrap_or_else(|e| panic!("{kind} ImportGame {copy}: {e:?}"))
                    .into_inner()
                    .game
                    .expect("a game");
                assert_eq!(imported.variant, variant as i32, "{copy}");
                assert_eq!(imported.moves, again.moves, "{copy}");
                assert_eq!(
                    (status(&imported), imported.winner),
                    (ending, winner as i32),
                    "{copy}"
                );
            }
            before.push((id.to_string(), summary(&get(&mut c, id).await)));
        }
        // A variant game from a FEN: horde's last white pawn is taken, black wins.
        let g = new_game(
            &mut c,
            pb::NewGameRequest {
                variant: pb::Variant::Horde as i32,
                fen: "k7/8/8/8/8/8/8/Pq6 b - - 0 1".into(),
                ..named("horde-captured")
            },
        )
        .await;
        assert_eq!(status(&g), pb::GameStatus::InProgress);
        let g = play(&mut c, "horde-captured", "Qxa1").await;
        assert_eq!(
            (status(&g), g.winner),
            (pb::GameStatus::VariantWin, pb::Color::Black as i32)
        );
        before.push(("horde-captured".into(), summary(&g)));
        server.kill9();
    }
    let server = Server::on(STORE).start_in(dir.path(), &[]);
    let mut c = server.client().await;
    for (id, summary_before) in before {
        assert_eq!(summary(&get(&mut c, &id).await), summary_before, "{id}");
    }
}

#[tokio::test]
async fn a_variant_game_keeps_its_rules_clocks_offers_and_retries() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    // Crazyhouse: a drop is a move like any other, in UCI or SAN, and refused where the
    // rules refuse it.
    new_game(
        &mut c,
        pb::NewGameRequest {
            variant: pb::Variant::Crazyhouse as i32,
            time_control: crate::common::client::time_control(60_000, 1_000),
            ..named("zh")
        },
    )
    .await;
    for mv in ["e4", "d5", "exd5", "Qxd5", "Nc3", "Qa5"] {
        play(&mut c, "zh", mv).await;
    }
    let g = play(&mut c, "zh", "P@e6").await;
    assert_eq!(g.moves.last().map(String::as_str), Some("P@e6"));
    let g = get(&mut c, "zh").await;
    assert!(
        g.fen.contains("[p") || g.fen.contains('['),
        "pockets: {}",
        g.fen
    );
    let legal = c
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::GameId("zh".into())),
            ..Default::default()
        })
        .await
        .expect("LegalMoves")
        .into_inner();
    assert!(
        legal
            .moves
            .iter()
            .any(|m| m.drop.eq_ignore_ascii_case("p") && m.from_square.is_empty()),
        "black may drop its captured pawn: {:?}",
        legal.moves.iter().map(|m| &m.uci).collect::<Vec<_>>()
    );
    assert_eq!(legal.version, g.version);
    // A pawn on the first rank cannot be dropped: the text is fine, the move is illegal.
    let refused = c
        .play(crate::common::client::play_request("zh", "P@b1"))
        .await;
    expect_error(refused, Code::FailedPrecondition, "ILLEGAL_MOVE");
    // The same move retried at the version it was decided on is the same answer.
    let first = c
        .play(pb::PlayRequest {
            expected_version: Some(g.version),
            ..crate::common::client::play_request("zh", "Bxe6")
        })
        .await
        .expect("Play")
        .into_inner();
    let retried = c
        .play(pb::PlayRequest {
            expected_version: Some(g.version),
            ..crate::common::client::play_request("zh", "Bxe6")
        })
        .await
        .expect("a retry")
        .into_inner();
    assert_eq!(
        first.game.as_ref().map(|g| g.version),
        retried.game.as_ref().map(|g| g.version)
    );
    // Offers and agreement work in a variant game as in chess.
    c.offer_draw(crate::common::client::offer(
        "zh",
        crate::common::client::BLACK,
    ))
    .await
    .expect("OfferDraw");
    let agreed = c
        .respond_to_draw(crate::common::client::respond(
            "zh",
            crate::common::client::WHITE,
            true,
        ))
        .await
        .expect("RespondToDraw")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(status(&agreed), pb::GameStatus::DrawAgreement);
    assert!(
        agreed.pgn.contains("[Variant \"Crazyhouse\"]"),
        "{}",
        agreed.pgn
    );

    // Three-check: the checks given are part of the position (lichess's FEN form).
    new_game(
        &mut c,
        pb::NewGameRequest {
            variant: pb::Variant::ThreeCheck as i32,
            ..named("3c")
        },
    )
    .await;
    for mv in ["e4", "e5", "Bc4", "Nc6"] {
        play(&mut c, "3c", mv).await;
    }
    let g = play(&mut c, "3c", "Bxf7+").await;
    assert!(g.in_check);
    assert!(g.fen.contains("+1+0"), "{}", g.fen);

    // Winnability of a variant game answers from the variant's material rule.
    let w = c
        .winnability(pb::WinnabilityRequest {
            position: Some(pb::winnability_request::Position::GameId("3c".into())),
            ..Default::default()
        })
        .await
        .expect("Winnability")
        .into_inner();
    assert!(!w.dead);
    assert_eq!(
        w.white.map(|s| s.verdict),
        Some(pb::WinnabilityVerdict::Undetermined as i32)
    );

    // A FEN that is not a position of the variant asked for is refused, naming the field.
    let refused = c
        .new_game(pb::NewGameRequest {
            variant: pb::Variant::RacingKings as i32,
            fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
            ..named("rk-bad")
        })
        .await;
    expect_error(refused, Code::InvalidArgument, "INVALID_FEN");
    // And a Chess960 number names a Chess960 game only.
    let refused = c
        .new_game(pb::NewGameRequest {
            variant: pb::Variant::Atomic as i32,
            chess960_position: Some(3),
            ..named("atomic-960")
        })
        .await;
    expect_error(refused, Code::InvalidArgument, "CONFLICTING_FIELDS");
}

#[tokio::test]
async fn racing_kings_is_a_tie_when_black_reaches_the_eighth_rank_on_its_reply() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    // White's king reaches the 8th rank first; Black, a move behind, may still tie.
    for id in ["rk-tie", "rk-white"] {
        let g = new_game(
            &mut c,
            pb::NewGameRequest {
                variant: pb::Variant::RacingKings as i32,
                fen: "8/k1K5/8/8/8/8/8/8 w - - 0 1".into(),
                ..named(id)
            },
        )
        .await;
        assert_eq!(status(&g), pb::GameStatus::InProgress, "{id}");
        let g = play(&mut c, id, "Kd8").await;
        assert_eq!(
            status(&g),
            pb::GameStatus::InProgress,
            "{id}: Black can still reach the 8th rank"
        );
    }
    let tie = play(&mut c, "rk-tie", "Kb8").await;
    assert_eq!(
        (status(&tie), tie.winner),
        (pb::GameStatus::VariantDraw, pb::Color::Unspecified as i32)
    );
    assert!(tie.pgn.contains("[Result \"1/2-1/2\"]"), "{}", tie.pgn);
    let late = c
        .play(crate::common::client::play_request("rk-tie", "Ke7"))
        .await;
    expect_error(late, Code::FailedPrecondition, "GAME_OVER");
    // Undo reopens the race; a move that does not reach the 8th rank loses it.
    let reopened = undo(&mut c, "rk-tie").await;
    assert_eq!(status(&reopened), pb::GameStatus::InProgress);
    let lost = play(&mut c, "rk-white", "Ka6").await;
    assert_eq!(
        (status(&lost), lost.winner),
        (pb::GameStatus::VariantWin, pb::Color::White as i32)
    );
    assert!(lost.pgn.contains("[Result \"1-0\"]"), "{}", lost.pgn);
}
