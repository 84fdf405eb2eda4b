//! Tenants end to end, against the real `chess-server` binary with a token file whose
//! fourth column names tenants (issue 30, part 7): every RPC that names a game answers
//! another tenant's game exactly as a missing one (same code, message and details), the
//! same `game_id` in two tenants is two games, ListGames lists only the caller's tenant
//! (paging inside it, tokens refused in another tenant), an admin of a tenant is confined
//! to it, an admin of no tenant lists and filters every tenant, and the metrics carry no
//! tenant. Included by the `service` crate (sled) and the `replicas` crate (PostgreSQL).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::STORE;
use crate::common::server::{Server, expect_error};
use chess_service::pb::{self, chess_service_client::ChessServiceClient};
use sha2::{Digest, Sha256};
use tonic::Code;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic_types::StatusExt;

/// The tokens of the test's token file: (name, role, token, tenant).
const TOKENS: [(&str, &str, &str, &str); 8] = [
    ("a-play", "play", "a-play-token", "tenant-a"),
    ("a-admin", "admin", "a-admin-token", "tenant-a"),
    ("b-play", "play", "b-play-token", "tenant-b"),
    ("b-read", "read", "b-read-token", "tenant-b"),
    ("b-admin", "admin", "b-admin-token", "tenant-b"),
    ("d-play", "play", "d-play-token", ""),
    ("d-read", "read", "d-read-token", ""),
    ("root", "admin", "root-token", ""),
];

/// Adds `authorization: Bearer TOKEN` to every call.
#[derive(Clone)]
struct Bearer(String);

impl Interceptor for Bearer {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        let value: MetadataValue<_> = format!("Bearer {}", self.0)
            .parse()
            .map_err(|_| tonic::Status::internal("bad token text"))?;
        request.metadata_mut().insert("authorization", value);
        Ok(request)
    }
}

type Client = ChessServiceClient<InterceptedService<Channel, Bearer>>;

/// A client calling with the token of token line `name`.
fn as_caller(channel: &Channel, name: &str) -> Client {
    let (_, _, token, _) = TOKENS
        .iter()
        .find(|t| t.0 == name)
        .unwrap_or_else(|| panic!("no token named {name}"));
    ChessServiceClient::with_interceptor(channel.clone(), Bearer(token.to_string()))
}

/// A server admitting [`TOKENS`], with its metrics endpoint; the directory holds the
/// token file and the data.
fn start() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path: PathBuf = dir.path().join("tokens");
    let mut text = String::from("# NAME ROLE SHA256HEX [TENANT]\n");
    for (name, role, token, tenant) in TOKENS {
        let hash: String = Sha256::digest(token.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        text.push_str(&format!("{name} {role} {hash} {tenant}\n"));
    }
    std::fs::write(&path, text).expect("token file written");
    let tokens = path.to_str().expect("utf-8 path").to_string();
    let server = Server::on(STORE).start_with(
        &dir.path().join("data"),
        &["--auth-tokens", &tokens, "--metrics-listen", "127.0.0.1:0"],
        &[],
    );
    (dir, server)
}

/// What a call answered, as a caller can tell answers apart: the code, the message and
/// the error details (ErrorInfo's reason and metadata, BadRequest's violations).
type Answer = Result<(), (Code, String, Details)>;

/// An answer's error details, in an order that does not depend on how a map was encoded.
type Details = (String, BTreeMap<String, String>, Vec<(String, String)>);

fn answer<T>(result: Result<tonic::Response<T>, tonic::Status>) -> Answer {
    result.map(|_| ()).map_err(|s| {
        let details = s.get_error_details();
        let (reason, metadata) = details
            .error_info()
            .map(|i| (i.reason.clone(), i.metadata.clone().into_iter().collect()))
            .unwrap_or_default();
        let violations = details
            .bad_request()
            .map(|b| {
                b.field_violations
                    .iter()
                    .map(|v| (v.field.clone(), v.description.clone()))
                    .collect()
            })
            .unwrap_or_default();
        (
            s.code(),
            s.message().to_string(),
            (reason, metadata, violations),
        )
    })
}

/// Every RPC that names a game, called by `c` on game `id`, in a fixed order; each
/// would change the game if it existed for the caller.
async fn every_call_on(c: &mut Client, id: &str) -> Vec<(&'static str, Answer)> {
    let game_id = || id.to_string();
    let white = pb::Color::White as i32;
    let black = pb::Color::Black as i32;
    let by_id = || Some(pb::legal_moves_request::Position::GameId(game_id()));
    let winnable = || Some(pb::winnability_request::Position::GameId(game_id()));
    vec![
        (
            "GetGame",
            answer(
                c.get_game(pb::GetGameRequest {
                    game_id: game_id(),
                    ..Default::default()
                })
                .await,
            ),
        ),
        (
            "LegalMoves",
            answer(
                c.legal_moves(pb::LegalMovesRequest {
                    position: by_id(),
                    ..Default::default()
                })
                .await,
            ),
        ),
        (
            "Winnability",
            answer(
                c.winnability(pb::WinnabilityRequest {
                    position: winnable(),
                    ..Default::default()
                })
                .await,
            ),
        ),
        (
            "WatchGame",
            answer(
                c.watch_game(pb::WatchGameRequest {
                    game_id: game_id(),
                    from_version: 0,
                })
                .await,
            ),
        ),
        (
            "Play",
            answer(
                c.play(pb::PlayRequest {
                    game_id: game_id(),
                    r#move: "e7e5".into(),
                    ..Default::default()
                })
                .await,
            ),
        ),
        (
            "Undo",
            answer(
                c.undo(pb::UndoRequest {
                    game_id: game_id(),
                    ..Default::default()
                })
                .await,
            ),
        ),
        (
            "OfferDraw",
            answer(
                c.offer_draw(pb::OfferDrawRequest {
                    game_id: game_id(),
                    color: black,
                    ..Default::default()
                })
                .await,
            ),
        ),
        (
            "RespondToDraw",
            answer(
                c.respond_to_draw(pb::RespondToDrawRequest {
                    game_id: game_id(),
                    color: white,
                    accept: true,
                    ..Default::default()
                })
                .await,
            ),
        ),
        (
            "ClaimDraw",
            answer(
                c.claim_draw(pb::ClaimDrawRequest {
                    game_id: game_id(),
                    color: black,
                    ..Default::default()
                })
                .await,
            ),
        ),
        (
            "AddTime",
            answer(
                c.add_time(pb::AddTimeRequest {
                    game_id: game_id(),
                    color: white,
                    ms: 1000,
                    ..Default::default()
                })
                .await,
            ),
        ),
        (
            "Resign",
            answer(
                c.resign(pb::ResignRequest {
                    game_id: game_id(),
                    color: black,
                    ..Default::default()
                })
                .await,
            ),
        ),
        (
            "DeleteGame",
            answer(
                c.delete_game(pb::DeleteGameRequest {
                    game_id: game_id(),
                    ..Default::default()
                })
                .await,
            ),
        ),
    ]
}

async fn get(c: &mut Client, id: &str) -> Result<pb::Game, tonic::Status> {
    c.get_game(pb::GetGameRequest {
        game_id: id.into(),
        ..Default::default()
    })
    .await
    .map(|r| r.into_inner().game.expect("a game"))
}

async fn create(c: &mut Client, id: &str) -> pb::Game {
    c.new_game(pb::NewGameRequest {
        game_id: id.into(),
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("NewGame {id}: {e:?}"))
    .into_inner()
    .game
    .expect("a game")
}

async fn play(c: &mut Client, id: &str, mv: &str) -> pb::Game {
    c.play(pb::PlayRequest {
        game_id: id.into(),
        r#move: mv.into(),
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("Play {id} {mv}: {e:?}"))
    .into_inner()
    .game
    .expect("a game")
}

fn list_request(tenant: &str, page_size: i32, page_token: &str) -> pb::ListGamesRequest {
    pb::ListGamesRequest {
        page_size,
        page_token: page_token.into(),
        tenant: tenant.into(),
        ..Default::default()
    }
}

/// Every game `c` lists when asking for `tenant`, page by page of `page_size`, as
/// `(tenant, game_id)`.
async fn list_all(c: &mut Client, tenant: &str, page_size: i32) -> Vec<(String, String)> {
    let mut games = Vec::new();
    let mut token = String::new();
    loop {
        let page = c
            .list_games(list_request(tenant, page_size, &token))
            .await
            .unwrap_or_else(|e| panic!("ListGames {tenant:?}: {e:?}"))
            .into_inner();
        games.extend(page.games.into_iter().map(|g| (g.tenant, g.game_id)));
        if page.next_page_token.is_empty() {
            return games;
        }
        token = page.next_page_token;
    }
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(t, g)| (t.to_string(), g.to_string()))
        .collect()
}

#[tokio::test]
async fn another_tenants_game_answers_every_call_exactly_as_a_missing_game() {
    let (_dir, server) = start();
    let channel = server.channel().await;
    let mut a = as_caller(&channel, "a-play");
    // The answers of every caller outside tenant a, before game "g" exists anywhere.
    let outsiders = ["b-admin", "b-play", "b-read", "d-play", "root"];
    let mut missing = Vec::new();
    for name in outsiders {
        missing.push(every_call_on(&mut as_caller(&channel, name), "g").await);
    }
    for (method, answer) in &missing[0] {
        let (code, message, (_, metadata, _)) = answer.as_ref().expect_err(method);
        assert_eq!(*code, Code::NotFound, "{method}: {message}");
        // The caller's own tenant's key stays inside the server too.
        assert!(
            message.contains("'g'") && !message.contains("tenant-b"),
            "{message}"
        );
        assert_eq!(metadata.get("game_id").map(String::as_str), Some("g"));
    }
    // Tenant a makes game "g" and plays a move.
    create(&mut a, "g").await;
    let before = play(&mut a, "g", "e2e4").await;
    assert_eq!(
        (before.game_id.as_str(), before.tenant.as_str()),
        ("g", "tenant-a")
    );
    // Now every outsider's every call answers exactly as before: nothing tells the game
    // exists, and nothing changed it.
    for (name, missing) in outsiders.iter().zip(&missing) {
        let now = every_call_on(&mut as_caller(&channel, name), "g").await;
        for ((method, was), (_, is)) in missing.iter().zip(&now) {
            assert_eq!(was, is, "{name}'s {method} on tenant a's game");
        }
    }
    let after = get(&mut a, "g")
        .await
        .expect("tenant a's game is still there");
    assert_eq!(after, before, "no outsider's call changed it");
    // Tenant a's own admin reaches it: the outsiders' calls did not fail for a reason of
    // their own.
    let mut a_admin = as_caller(&channel, "a-admin");
    let mine = every_call_on(&mut a_admin, "g").await;
    let ok: Vec<&str> = mine
        .iter()
        .filter(|(_, answer)| answer.is_ok())
        .map(|(method, _)| *method)
        .collect();
    assert!(
        [
            "GetGame",
            "LegalMoves",
            "Winnability",
            "WatchGame",
            "Play",
            "Undo",
            "DeleteGame"
        ]
        .iter()
        .all(|m| ok.contains(m)),
        "{mine:?}"
    );
    expect_error(
        a_admin
            .get_game(pb::GetGameRequest {
                game_id: "g".into(),
                ..Default::default()
            })
            .await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
}

#[tokio::test]
async fn the_same_game_id_in_two_tenants_is_two_games() {
    let (_dir, server) = start();
    let channel = server.channel().await;
    let (mut a, mut b, mut d) = (
        as_caller(&channel, "a-play"),
        as_caller(&channel, "b-play"),
        as_caller(&channel, "d-play"),
    );
    create(&mut a, "g").await;
    create(&mut b, "g").await;
    create(&mut d, "g").await;
    play(&mut a, "g", "e2e4").await;
    play(&mut b, "g", "d2d4").await;
    let (ga, gb, gd) = (
        get(&mut a, "g").await.expect("a's"),
        get(&mut b, "g").await.expect("b's"),
        get(&mut d, "g").await.expect("d's"),
    );
    assert_eq!(ga.moves, ["e2e4"]);
    assert_eq!(gb.moves, ["d2d4"]);
    assert!(gd.moves.is_empty());
    for (g, tenant) in [(&ga, "tenant-a"), (&gb, "tenant-b"), (&gd, "")] {
        assert_eq!((g.game_id.as_str(), g.tenant.as_str()), ("g", tenant));
        assert!(
            !g.pgn.contains("tenant-") && !g.pgn.contains('#'),
            "{}",
            g.pgn
        );
    }
    // The unscoped admin's calls address the default tenant's game.
    let mut root = as_caller(&channel, "root");
    assert_eq!(get(&mut root, "g").await.expect("d's").moves, gd.moves);

    // ALREADY_EXISTS in a tenant names the plain id, never the tenant.
    let status = expect_error(
        a.new_game(pb::NewGameRequest {
            game_id: "g".into(),
            fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
            ..Default::default()
        })
        .await,
        Code::AlreadyExists,
        "GAME_ALREADY_EXISTS",
    );
    assert!(status.message().contains("'g'"), "{status:?}");
    assert!(!format!("{status:?}").contains("tenant-a"), "{status:?}");

    // ImportGame: the same id with other moves in each tenant; no id: made in the
    // caller's tenant only.
    let import = |pgn: &str, id: &str| pb::ImportGameRequest {
        pgn: pgn.into(),
        game_id: id.into(),
        ..Default::default()
    };
    let ia = a
        .import_game(import("1. e4 e5 *", "imp"))
        .await
        .expect("a imports")
        .into_inner()
        .game
        .expect("a game");
    let ib = b
        .import_game(import("1. d4 d5 *", "imp"))
        .await
        .expect("b imports")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(
        (ia.game_id.as_str(), ia.tenant.as_str()),
        ("imp", "tenant-a")
    );
    assert_eq!(ib.moves, ["d2d4", "d7d5"]);
    let made = a
        .import_game(import("1. c4 *", ""))
        .await
        .expect("a imports")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(made.tenant, "tenant-a");
    assert!(!made.game_id.contains('#') && !made.game_id.contains('/'));
    let fresh = a
        .new_game(pb::NewGameRequest::default())
        .await
        .expect("a server-made id")
        .into_inner()
        .game
        .expect("a game");
    for id in [&made.game_id, &fresh.game_id] {
        assert!(get(&mut a, id).await.is_ok());
        let status = get(&mut b, id).await.expect_err("not b's");
        assert_eq!(status.code(), Code::NotFound, "{status:?}");
    }

    // A spectator of tenant a sees plain ids.
    let mut stream = a
        .watch_game(pb::WatchGameRequest {
            game_id: "g".into(),
            from_version: 1,
        })
        .await
        .expect("a watches its game")
        .into_inner();
    let first = stream
        .message()
        .await
        .expect("a message")
        .expect("an event");
    match first.message {
        Some(pb::watch_game_response::Message::Event(e)) => assert_eq!(e.game_id, "g"),
        other => panic!("want an event, got {other:?}"),
    }

    // A scoped admin deletes its tenant's game only.
    let mut b_admin = as_caller(&channel, "b-admin");
    b_admin
        .delete_game(pb::DeleteGameRequest {
            game_id: "g".into(),
            ..Default::default()
        })
        .await
        .expect("b's admin deletes b's game");
    assert_eq!(
        get(&mut b, "g").await.expect_err("gone").code(),
        Code::NotFound
    );
    assert_eq!(get(&mut a, "g").await.expect("a's stays").moves, ["e2e4"]);
    assert!(get(&mut d, "g").await.is_ok(), "the default tenant's stays");

    // A tenant's admin reopens its tenant's resigned game, which its player may not.
    create(&mut a, "ended").await;
    play(&mut a, "ended", "e2e4").await;
    a.resign(pb::ResignRequest {
        game_id: "ended".into(),
        color: pb::Color::Black as i32,
        ..Default::default()
    })
    .await
    .expect("a resigns");
    let undo = || pb::UndoRequest {
        game_id: "ended".into(),
        ..Default::default()
    };
    expect_error(a.undo(undo()).await, Code::PermissionDenied, "ROLE_FORBIDS");
    expect_error(b_admin.undo(undo()).await, Code::NotFound, "GAME_NOT_FOUND");
    let reopened = as_caller(&channel, "a-admin")
        .undo(undo())
        .await
        .expect("a's admin reopens it")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(reopened.status, pb::GameStatus::InProgress as i32);

    // The flag timer ends a tenant's timed game, with no call.
    a.new_game(pb::NewGameRequest {
        game_id: "timed".into(),
        time_control: Some(pb::TimeControl {
            initial_ms: 200,
            ..Default::default()
        }),
        ..Default::default()
    })
    .await
    .expect("a timed game");
    let mut flagged = false;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let mut ended = a
            .list_games(pb::ListGamesRequest {
                status_filter: pb::StatusFilter::Ended as i32,
                ..Default::default()
            })
            .await
            .expect("a lists")
            .into_inner()
            .games
            .into_iter()
            .filter(|g| g.game_id == "timed");
        if let Some(g) = ended.next() {
            assert_eq!(g.status, pb::GameStatus::OutOfTime as i32);
            flagged = true;
            break;
        }
    }
    assert!(flagged, "the flag fell in tenant a");

    // The calls that name no game serve every tenant.
    let mut b_read = as_caller(&channel, "b-read");
    let perft = b_read
        .perft(pb::PerftRequest {
            depth: 2,
            ..Default::default()
        })
        .await
        .expect("perft")
        .into_inner();
    assert_eq!(perft.nodes, 400);
    b_read
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::Fen(
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
            )),
            ..Default::default()
        })
        .await
        .expect("legal moves by FEN");

    // No metric names a tenant.
    let metrics = crate::common::metrics::scrape(&server.metrics_addr()).await;
    assert!(!metrics.contains("tenant"), "a metric names a tenant");
}

#[tokio::test]
async fn list_games_lists_the_callers_tenant_and_an_unscoped_admin_every_tenant() {
    let (_dir, server) = start();
    let channel = server.channel().await;
    let (mut a, mut b, mut d) = (
        as_caller(&channel, "a-play"),
        as_caller(&channel, "b-play"),
        as_caller(&channel, "d-play"),
    );
    for id in ["a1", "a2", "a3", "x"] {
        create(&mut a, id).await;
    }
    for id in ["b1", "x"] {
        create(&mut b, id).await;
    }
    for id in ["-d", "d1", "x", "~d"] {
        create(&mut d, id).await;
    }
    let a_games = pairs(&[
        ("tenant-a", "a1"),
        ("tenant-a", "a2"),
        ("tenant-a", "a3"),
        ("tenant-a", "x"),
    ]);
    let b_games = pairs(&[("tenant-b", "b1"), ("tenant-b", "x")]);
    let d_games = pairs(&[("", "-d"), ("", "d1"), ("", "x"), ("", "~d")]);
    // Each caller lists its own tenant, in every page size, read tokens included.
    for size in [1, 2, 50] {
        assert_eq!(
            list_all(&mut a, "", size).await,
            a_games,
            "page size {size}"
        );
        assert_eq!(list_all(&mut b, "", size).await, b_games);
        assert_eq!(list_all(&mut d, "", size).await, d_games);
        let mut b_read = as_caller(&channel, "b-read");
        assert_eq!(list_all(&mut b_read, "", size).await, b_games);
        let mut d_read = as_caller(&channel, "d-read");
        assert_eq!(list_all(&mut d_read, "", size).await, d_games);
        let mut a_admin = as_caller(&channel, "a-admin");
        assert_eq!(list_all(&mut a_admin, "", size).await, a_games);
    }
    // Naming its own tenant is the same listing; naming another is refused.
    assert_eq!(list_all(&mut a, "tenant-a", 2).await, a_games);
    for (name, asked) in [
        ("a-play", "tenant-b"),
        ("a-admin", "tenant-b"),
        ("b-read", "tenant-a"),
        ("d-play", "tenant-a"),
        ("d-read", "nobody"),
    ] {
        let status = expect_error(
            as_caller(&channel, name)
                .list_games(list_request(asked, 0, ""))
                .await,
            Code::PermissionDenied,
            "ROLE_FORBIDS",
        );
        let info = crate::common::server::error_info(&status);
        assert_eq!(info.metadata.get("tenant").map(String::as_str), Some(asked));
    }
    // A page token is good only in the tenant it was made in.
    let first = a
        .list_games(list_request("", 1, ""))
        .await
        .expect("a lists")
        .into_inner();
    assert!(!first.next_page_token.is_empty());
    for name in ["b-play", "d-play", "root"] {
        let mut other = as_caller(&channel, name);
        let asked = if name == "root" { "tenant-b" } else { "" };
        expect_error(
            other
                .list_games(list_request(asked, 1, &first.next_page_token))
                .await,
            Code::InvalidArgument,
            "INVALID_PAGE_TOKEN",
        );
    }

    // An admin of no tenant lists every tenant (in key order: the named tenants first,
    // then the default one), pages through them all, and filters by tenant.
    let mut root = as_caller(&channel, "root");
    let every: Vec<(String, String)> = a_games
        .iter()
        .chain(&b_games)
        .chain(&d_games)
        .cloned()
        .collect();
    for size in [1, 3, 50] {
        assert_eq!(
            list_all(&mut root, "", size).await,
            every,
            "page size {size}"
        );
        assert_eq!(list_all(&mut root, "tenant-b", size).await, b_games);
        assert_eq!(list_all(&mut root, "tenant-a", size).await, a_games);
    }
    let none: Vec<(String, String)> = Vec::new();
    assert_eq!(list_all(&mut root, "tenant-c", 10).await, none);
    // A tenant that is no tenant name is the caller's mistake, for every caller.
    for (name, c) in [("root", &mut root), ("a-play", &mut a)] {
        let status = c
            .list_games(list_request("not/a tenant", 10, ""))
            .await
            .expect_err("no tenant name");
        assert_eq!(status.code(), Code::InvalidArgument, "{name}: {status:?}");
        let info = status.get_details_error_info().expect("an ErrorInfo");
        assert_eq!(info.reason, "INVALID_TENANT", "{name}: {status:?}");
        let fields: Vec<_> = status
            .get_details_bad_request()
            .expect("a BadRequest")
            .field_violations
            .into_iter()
            .map(|v| v.field)
            .collect();
        assert_eq!(fields, ["tenant"], "{name}");
    }
    // The status filter still applies inside a tenant.
    a.resign(pb::ResignRequest {
        game_id: "a2".into(),
        color: pb::Color::White as i32,
        ..Default::default()
    })
    .await
    .expect("a resigns");
    let ended = a
        .list_games(pb::ListGamesRequest {
            status_filter: pb::StatusFilter::Ended as i32,
            ..Default::default()
        })
        .await
        .expect("a lists")
        .into_inner();
    let ids: Vec<&str> = ended.games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids, ["a2"]);
}
