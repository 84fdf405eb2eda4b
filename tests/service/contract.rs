//! The contract integrators build on: every change is safe to retry with
//! `expected_version` (an exact retry answers success and applies nothing twice, anything
//! else answers VERSION_MISMATCH with the versions), the light view keeps its size as the
//! game grows, and every error reason is a value of the proto's `ErrorReason`, each
//! documented in the error table of docs/api.md.

use chess_service::pb;
use tonic::Code;

use crate::common::client::{
    BLACK, Client, WHITE, get, named, new_game, offer, play, play_request, play_with, respond,
    time_control,
};
use crate::common::server::{Server, error_info, expect_error};

/// The VERSION_MISMATCH of `result`, checked: its metadata names both versions.
fn expect_version_mismatch<T: std::fmt::Debug>(
    result: Result<tonic::Response<T>, tonic::Status>,
    expected: u64,
    current: u64,
) {
    let status = expect_error(result, Code::Aborted, "VERSION_MISMATCH");
    let info = error_info(&status);
    assert_eq!(info.metadata["expected_version"], expected.to_string());
    assert_eq!(info.metadata["current_version"], current.to_string());
}

fn versioned_play(id: &str, mv: &str, version: u64) -> pb::PlayRequest {
    pb::PlayRequest {
        expected_version: Some(version),
        ..play_request(id, mv)
    }
}

/// The game's whole history as a spectator reads it: what a retry must leave unchanged.
async fn history(c: &mut Client, id: &str) -> Vec<pb::GameEvent> {
    let version = get(c, id).await.version;
    let mut stream = crate::common::client::watch(c, id, 0).await;
    let mut events = Vec::new();
    while events.len() as u64 <= version {
        events.push(crate::common::client::next_event(&mut stream).await);
    }
    events
}

#[tokio::test]
async fn play_and_undo_are_safe_to_retry_with_expected_version() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    new_game(&mut c, named("retry-play")).await;

    let first = play_with(&mut c, versioned_play("retry-play", "e4", 0)).await;
    let retried = play_with(&mut c, versioned_play("retry-play", "e4", 0)).await;
    assert_eq!(
        retried.game, first.game,
        "an exact retry answers the same game"
    );
    assert_eq!(retried.r#move, first.r#move, "and the move as played");
    assert_eq!(get(&mut c, "retry-play").await.version, 1);
    // The same move in another notation is the same request.
    let san = play_with(&mut c, versioned_play("retry-play", "e2e4", 0)).await;
    assert_eq!(san.game.map(|g| g.version), Some(1));
    // Another move decided on version 0 is stale.
    let other = c.play(versioned_play("retry-play", "d4", 0)).await;
    expect_version_mismatch(other, 0, 1);
    // A version the game has not reached is never a retry.
    let ahead = c.play(versioned_play("retry-play", "e5", 7)).await;
    expect_version_mismatch(ahead, 7, 1);

    // Black's move, then the retried one after white has moved again: a mismatch, since
    // the events after version 1 are not just this move.
    play_with(&mut c, versioned_play("retry-play", "e5", 1)).await;
    play_with(&mut c, versioned_play("retry-play", "Nf3", 2)).await;
    let late = c.play(versioned_play("retry-play", "e5", 1)).await;
    expect_version_mismatch(late, 1, 3);

    // Undo: a retry takes back nothing more.
    let undo = |version| pb::UndoRequest {
        game_id: "retry-play".into(),
        expected_version: Some(version),
        ..Default::default()
    };
    let undone = c.undo(undo(3)).await.expect("undo").into_inner();
    let again = c.undo(undo(3)).await.expect("retried undo").into_inner();
    assert_eq!(again.game, undone.game);
    assert_eq!(again.undone.as_ref().map(|m| m.uci.as_str()), Some("g1f3"));
    let game = get(&mut c, "retry-play").await;
    assert_eq!((game.ply, game.version), (2, 4), "one undo, not two");
    // `expected_ply` keeps working beside it.
    let by_ply = c
        .play(pb::PlayRequest {
            expected_ply: Some(1),
            ..play_request("retry-play", "e5")
        })
        .await
        .expect("a retry by expected_ply");
    assert_eq!(by_ply.into_inner().game.map(|g| g.ply), Some(2));
}

#[tokio::test]
async fn a_move_that_lapses_an_offer_is_one_request_of_two_events() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    new_game(&mut c, named("retry-lapse")).await;
    play(&mut c, "retry-lapse", "e4").await;
    c.offer_draw(offer("retry-lapse", WHITE))
        .await
        .expect("offer");
    // Black moves instead of answering: the offer lapses, then the move (versions 3, 4).
    let first = play_with(&mut c, versioned_play("retry-lapse", "c5", 2)).await;
    assert_eq!(first.game.as_ref().map(|g| g.version), Some(4));
    let before = history(&mut c, "retry-lapse").await;
    let retried = play_with(&mut c, versioned_play("retry-lapse", "c5", 2)).await;
    assert_eq!(retried.game, first.game);
    assert_eq!(
        history(&mut c, "retry-lapse").await,
        before,
        "nothing applied twice"
    );
}

/// LegalMoves by game names the version its moves belong to, so "read the moves, then
/// play one with `expected_version`" needs no other call; a FEN answers version 0.
#[tokio::test]
async fn legal_moves_carry_the_version_to_play_against() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    let id = "moves-version";
    new_game(&mut c, named(id)).await;
    let by_game = |id: &str| pb::LegalMovesRequest {
        position: Some(pb::legal_moves_request::Position::GameId(id.into())),
        variant: 0,
    };
    let legal = c
        .legal_moves(by_game(id))
        .await
        .expect("moves")
        .into_inner();
    assert_eq!(legal.version, 0);
    play_with(&mut c, versioned_play(id, "e4", legal.version)).await;
    // A draw offer changes the version, not the ply: a move read before it is refused.
    let before_offer = c
        .legal_moves(by_game(id))
        .await
        .expect("moves")
        .into_inner();
    assert_eq!((before_offer.ply, before_offer.version), (1, 1));
    c.offer_draw(offer(id, WHITE)).await.expect("offer");
    let after_offer = c
        .legal_moves(by_game(id))
        .await
        .expect("moves")
        .into_inner();
    assert_eq!((after_offer.ply, after_offer.version), (1, 2));
    expect_version_mismatch(
        c.play(versioned_play(id, "e5", before_offer.version)).await,
        1,
        2,
    );
    play_with(&mut c, versioned_play(id, "e5", after_offer.version)).await;
    assert_eq!(
        get(&mut c, id).await.version,
        4,
        "the offer lapsed, then e5"
    );
    let by_fen = c
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::Fen(
                "4k3/8/8/8/8/8/8/4K2R w K - 0 1".into(),
            )),
            variant: 0,
        })
        .await
        .expect("moves")
        .into_inner();
    assert_eq!(by_fen.version, 0);
}

#[tokio::test]
async fn resign_offer_answer_claim_and_add_time_are_safe_to_retry() {
    let server = Server::start(&[]);
    let mut c = server.client().await;

    // Resign: the retry used to answer GAME_OVER.
    new_game(&mut c, named("retry-resign")).await;
    let resign = |color, version| pb::ResignRequest {
        game_id: "retry-resign".into(),
        color,
        expected_version: Some(version),
        ..Default::default()
    };
    let resigned = c
        .resign(resign(WHITE, 0))
        .await
        .expect("resign")
        .into_inner();
    let again = c
        .resign(resign(WHITE, 0))
        .await
        .expect("retried")
        .into_inner();
    assert_eq!(again.game, resigned.game);
    // The other side resigning on the same version is another request.
    expect_version_mismatch(c.resign(resign(BLACK, 0)).await, 0, 1);
    // Without expected_version a retry still answers GAME_OVER, as documented.
    let bare = c
        .resign(pb::ResignRequest {
            game_id: "retry-resign".into(),
            color: WHITE,
            ..Default::default()
        })
        .await;
    expect_error(bare, Code::FailedPrecondition, "GAME_OVER");

    // OfferDraw (was DRAW_OFFER_PENDING) and a declining RespondToDraw (was NO_DRAW_OFFER).
    new_game(&mut c, named("retry-offer")).await;
    let with_version = |mut req: pb::OfferDrawRequest, v| {
        req.expected_version = Some(v);
        req
    };
    let offered = c
        .offer_draw(with_version(offer("retry-offer", WHITE), 0))
        .await
        .expect("offer")
        .into_inner();
    let again = c
        .offer_draw(with_version(offer("retry-offer", WHITE), 0))
        .await
        .expect("retried offer")
        .into_inner();
    assert_eq!(again.game, offered.game);
    let answer = |accept, v| pb::RespondToDrawRequest {
        expected_version: Some(v),
        ..respond("retry-offer", BLACK, accept)
    };
    let declined = c.respond_to_draw(answer(false, 1)).await.expect("decline");
    let again = c.respond_to_draw(answer(false, 1)).await.expect("retried");
    assert_eq!(again.into_inner().game, declined.into_inner().game);
    // Accepting on the version the decline was decided on is not that decline.
    expect_version_mismatch(c.respond_to_draw(answer(true, 1)).await, 1, 2);
    assert_eq!(get(&mut c, "retry-offer").await.version, 2);

    // ClaimDraw with the move that completes a threefold repetition (was PLY_MISMATCH).
    new_game(&mut c, named("retry-claim")).await;
    for mv in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"] {
        play(&mut c, "retry-claim", mv).await;
    }
    let claim = pb::ClaimDrawRequest {
        game_id: "retry-claim".into(),
        color: BLACK,
        r#move: "Ng8".into(),
        expected_version: Some(7),
        ..Default::default()
    };
    let claimed = c
        .claim_draw(claim.clone())
        .await
        .expect("claim")
        .into_inner();
    assert_eq!(
        claimed.game.as_ref().map(|g| g.status),
        Some(pb::GameStatus::DrawClaimedThreefold as i32)
    );
    let again = c
        .claim_draw(claim)
        .await
        .expect("retried claim")
        .into_inner();
    assert_eq!(again.game, claimed.game);
    assert_eq!(
        again.r#move, claimed.r#move,
        "the announced move, as played"
    );

    // AddTime (timed game): the time is given once.
    new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: time_control(600_000, 0),
            ..named("retry-time")
        },
    )
    .await;
    let add = pb::AddTimeRequest {
        game_id: "retry-time".into(),
        color: BLACK,
        ms: 30_000,
        expected_version: Some(0),
        ..Default::default()
    };
    c.add_time(add.clone()).await.expect("add time");
    let again = c.add_time(add).await.expect("retried").into_inner();
    let clock = again.game.and_then(|g| g.clock).expect("a clock");
    assert_eq!(clock.black_remaining_ms, 630_000, "the time is added once");
}

#[tokio::test]
async fn a_retried_move_of_a_timed_game_is_recognised() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: time_control(60_000, 1_000),
            ..named("retry-timed")
        },
    )
    .await;
    let first = play_with(&mut c, versioned_play("retry-timed", "e4", 0)).await;
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    let again = play_with(&mut c, versioned_play("retry-timed", "e4", 0)).await;
    let (first, again) = (first.game.expect("game"), again.game.expect("game"));
    assert_eq!((again.version, again.ply), (first.version, first.ply));
    let white = |g: &pb::Game| g.clock.map(|c| c.white_remaining_ms);
    assert_eq!(
        white(&again),
        white(&first),
        "white's clock is charged once"
    );
}

#[tokio::test]
async fn the_basic_view_leaves_the_history_out_and_keeps_its_size() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    let basic = pb::GameView::Basic as i32;
    let created = c
        .new_game(pb::NewGameRequest {
            view: basic,
            ..named("view")
        })
        .await
        .expect("new game")
        .into_inner()
        .game
        .expect("a game");
    assert!(created.pgn.is_empty() && created.moves.is_empty());
    let moves = long_game(300);
    let mut sizes = Vec::new();
    for (ply, mv) in moves.iter().enumerate() {
        let r = play_with(
            &mut c,
            pb::PlayRequest {
                view: basic,
                ..play_request("view", mv)
            },
        )
        .await;
        let game = r.game.as_ref().expect("a game");
        assert!(game.moves.is_empty() && game.san_moves.is_empty() && game.pgn.is_empty());
        sizes.push((ply + 1, prost::Message::encoded_len(&r)));
    }
    let plies = moves.len();
    let full = get(&mut c, "view").await;
    assert_eq!(full.moves.len(), plies, "the full view keeps the history");
    let largest = sizes.iter().map(|&(_, s)| s).max().expect("sizes");
    let smallest = sizes.iter().map(|&(_, s)| s).min().expect("sizes");
    // What varies is the position (the FEN's length, the move's SAN and flags) and the
    // version's digits, never the history: every answer stays under a bound that a full
    // answer passes within a few moves.
    assert!(
        largest <= 320,
        "a basic Play answer reached {largest} bytes (smallest {smallest}) over {plies} plies"
    );
    let full_len = prost::Message::encoded_len(&full);
    assert!(
        full_len > 10 * largest,
        "the full view at ply {plies} ({full_len} bytes) carries the history"
    );
    let unknown = c
        .get_game(pb::GetGameRequest {
            game_id: "view".into(),
            view: 7,
        })
        .await;
    expect_error(unknown, Code::InvalidArgument, "INVALID_VIEW");
}

/// A game of `plies` random legal moves (UCI) from the standard start that never ends
/// on the board: each move is drawn from those that leave the game going.
fn long_game(plies: usize) -> Vec<String> {
    use chess_service::rules::{Game, Position};
    for seed in 0.. {
        let mut rng = crate::common::rng::Rng(seed);
        let mut game = Game::new(Position::new());
        let mut moves = Vec::new();
        while moves.len() < plies {
            let legal: Vec<_> = game.legal_moves().iter().copied().collect();
            let start = rng.below(legal.len().max(1));
            let next = (0..legal.len())
                .map(|i| legal[(start + i) % legal.len()])
                .find(|&m| {
                    let mut after = game.clone();
                    after.play(m).is_ok()
                        && !after.status().is_over()
                        && !chess_service::lifecycle::judge::is_dead(after.position())
                });
            let Some(m) = next else { break };
            moves.push(game.position().uci(m));
            game.play(m).expect("a legal move");
        }
        if moves.len() == plies {
            return moves;
        }
    }
    unreachable!("some seed gives a long game")
}

/// The enum values of `enum ErrorReason` in the proto file, in order.
fn proto_reasons() -> Vec<String> {
    let proto = include_str!("../../proto/chess/v1/error_reason.proto");
    proto
        .lines()
        .map(str::trim)
        .filter_map(|l| l.split_once(" = "))
        .map(|(name, _)| name.to_string())
        .filter(|name| {
            name.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .filter(|name| name != "ERROR_REASON_UNSPECIFIED")
        .collect()
}

#[test]
fn every_error_reason_is_in_the_enum_and_the_api_docs() {
    let reasons = proto_reasons();
    assert!(reasons.len() > 40, "parsed {reasons:?}");
    let readme = include_str!("../../docs/api.md");
    // The error table's rows: a gRPC code, then the reasons in backticks.
    let table: Vec<&str> = readme
        .lines()
        .filter(|l| {
            let mut cells = l.split(" | ");
            let code = cells
                .next()
                .and_then(|c| c.strip_prefix("| "))
                .unwrap_or("");
            !code.is_empty()
                && code.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                && cells.next().is_some_and(|r| r.starts_with('`'))
        })
        .collect();
    for reason in &reasons {
        assert!(
            pb::ErrorReason::from_str_name(reason).is_some(),
            "{reason} is in the proto but not the generated enum"
        );
        assert!(
            table.iter().any(|row| row.contains(&format!("`{reason}`"))),
            "the error table of docs/api.md has no row for {reason}"
        );
    }
    // And the other way: every reason the table names is a value of the enum.
    for row in &table {
        let reason_cell = row.split(" | ").nth(1).unwrap_or("");
        for name in reason_cell.split('`').skip(1).step_by(2) {
            assert!(
                reasons.iter().any(|r| r == name),
                "docs/api.md's error table names {name}, which ErrorReason lacks"
            );
        }
    }
}

#[test]
fn no_field_is_named_after_a_keyword_of_a_client_language() {
    // Python, Go, Java, JavaScript and C++ keywords (and Python's soft ones).
    const KEYWORDS: &[&str] = &[
        "False",
        "None",
        "True",
        "and",
        "as",
        "assert",
        "async",
        "await",
        "break",
        "class",
        "continue",
        "def",
        "del",
        "elif",
        "else",
        "except",
        "finally",
        "for",
        "from",
        "global",
        "if",
        "import",
        "in",
        "is",
        "lambda",
        "nonlocal",
        "not",
        "or",
        "pass",
        "raise",
        "return",
        "try",
        "while",
        "with",
        "yield",
        "match",
        "case",
        "type",
        "chan",
        "const",
        "default",
        "defer",
        "fallthrough",
        "func",
        "go",
        "goto",
        "interface",
        "map",
        "package",
        "range",
        "select",
        "struct",
        "switch",
        "var",
        "abstract",
        "boolean",
        "byte",
        "catch",
        "char",
        "double",
        "enum",
        "extends",
        "final",
        "float",
        "implements",
        "instanceof",
        "int",
        "long",
        "native",
        "new",
        "private",
        "protected",
        "public",
        "short",
        "static",
        "strictfp",
        "super",
        "synchronized",
        "this",
        "throw",
        "throws",
        "transient",
        "void",
        "volatile",
        "debugger",
        "delete",
        "do",
        "export",
        "function",
        "let",
        "typeof",
        "arguments",
        "eval",
        "yield",
        "alignas",
        "alignof",
        "asm",
        "auto",
        "bitand",
        "bitor",
        "bool",
        "compl",
        "concept",
        "constexpr",
        "consteval",
        "constinit",
        "const_cast",
        "decltype",
        "dynamic_cast",
        "explicit",
        "extern",
        "friend",
        "inline",
        "mutable",
        "namespace",
        "noexcept",
        "operator",
        "or_eq",
        "register",
        "reinterpret_cast",
        "requires",
        "signed",
        "sizeof",
        "static_assert",
        "static_cast",
        "template",
        "thread_local",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "wchar_t",
        "xor",
        "xor_eq",
        "and_eq",
        "not_eq",
        "null",
        "true",
        "false",
        "nullptr",
    ];
    let proto = include_str!("../../proto/chess/v1/chess.proto");
    let mut fields = 0;
    for line in proto.lines().map(str::trim) {
        if line.starts_with("//") || !line.ends_with(';') || !line.contains(" = ") {
            continue;
        }
        // `[optional|repeated] TYPE NAME = N;` or `map<K, V> NAME = N;`
        let before_eq = line.split(" = ").next().unwrap_or("");
        let Some(name) = before_eq.split_whitespace().last() else {
            continue;
        };
        if name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            continue; // an enum value
        }
        fields += 1;
        assert!(
            !KEYWORDS.contains(&name),
            "the field `{name}` is a keyword of a client language: {line}"
        );
    }
    assert!(fields > 80, "parsed only {fields} fields");
}
