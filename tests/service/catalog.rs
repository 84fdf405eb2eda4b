//! The catalog through gRPC against the real server: NewGame's PGN tags (kept, answered,
//! exported in order, refused with INVALID_TAG), ListGames (AIP-158 paging, filters,
//! the BASIC view, refused sizes and tokens) and DeleteGame (AIP-135: the version check,
//! NOT_FOUND afterwards, `allow_missing`, spectators' streams ended). The `replicas` crate
//! runs this file again with every server on PostgreSQL.

use std::collections::HashMap;
use std::time::Duration;

use chess_service::pb;
use tonic::Code;

use super::STORE;
use crate::common::client::{Client, WHITE, get, named, new_game, next_event, play, watch};
use crate::common::server::{Server, error_info, expect_error, violated_fields};

fn tags(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn with_tags(id: &str, pairs: &[(&str, &str)]) -> pb::NewGameRequest {
    pb::NewGameRequest {
        tags: tags(pairs),
        ..named(id)
    }
}

async fn resign(c: &mut Client, id: &str) {
    c.resign(pb::ResignRequest {
        game_id: id.into(),
        color: WHITE,
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("Resign {id}: {e:?}"));
}

async fn list(
    c: &mut Client,
    filter: pb::StatusFilter,
    page_size: i32,
    page_token: &str,
) -> Result<pb::ListGamesResponse, tonic::Status> {
    c.list_games(pb::ListGamesRequest {
        page_size,
        page_token: page_token.into(),
        status_filter: filter as i32,
        ..Default::default()
    })
    .await
    .map(tonic::Response::into_inner)
}

/// Every page of a listing, as ids.
async fn pages(c: &mut Client, filter: pb::StatusFilter, page_size: i32) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut token = String::new();
    loop {
        let page = list(c, filter, page_size, &token).await.expect("ListGames");
        out.push(page.games.into_iter().map(|g| g.game_id).collect());
        if page.next_page_token.is_empty() {
            return out;
        }
        token = page.next_page_token;
    }
}

fn delete_request(
    id: &str,
    expected_version: Option<u64>,
    allow_missing: bool,
) -> pb::DeleteGameRequest {
    pb::DeleteGameRequest {
        game_id: id.into(),
        expected_version,
        allow_missing,
    }
}

#[tokio::test]
async fn tags_are_kept_answered_and_exported_in_order() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    let given = [
        ("White", "Carlsen, Magnus"),
        ("Event", "Club \"Open\" \\ 2026"),
        ("zeta", "z"),
        ("Annotator", "me"),
        ("Date", "2026.12.01"),
    ];
    let game = new_game(&mut c, with_tags("tagged", &given)).await;
    assert_eq!(game.tags, tags(&given));
    play(&mut c, "tagged", "e4").await;
    let game = get(&mut c, "tagged").await;
    assert_eq!(game.tags, tags(&given));
    let header: Vec<&str> = game.pgn.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        header,
        [
            "[Event \"Club \\\"Open\\\" \\\\ 2026\"]",
            "[Site \"?\"]",
            "[Date \"2026.12.01\"]",
            "[Round \"?\"]",
            "[White \"Carlsen, Magnus\"]",
            "[Black \"?\"]",
            "[Result \"*\"]",
            "[ECO \"B00\"]",
            "[Opening \"King's Pawn Game\"]",
            "[Annotator \"me\"]",
            "[zeta \"z\"]",
        ],
        "{}",
        game.pgn
    );

    // A repeated NewGame: no tags, or the same tags, answer the game; other tags do not.
    assert_eq!(new_game(&mut c, named("tagged")).await.version, 1);
    assert_eq!(
        new_game(&mut c, with_tags("tagged", &given)).await.version,
        1
    );
    let status = expect_error(
        c.new_game(with_tags("tagged", &[("White", "Someone else")]))
            .await,
        Code::AlreadyExists,
        "GAME_ALREADY_EXISTS",
    );
    assert!(status.message().contains("other PGN tags"), "{status:?}");
}

#[tokio::test]
async fn tags_the_server_owns_or_that_break_the_rules_are_refused() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    let too_many: Vec<(String, String)> =
        (0..33).map(|i| (format!("T{i:02}"), "x".into())).collect();
    let cases: Vec<(HashMap<String, String>, &str, &str)> = vec![
        (tags(&[("Result", "1-0")]), "Result", "set by the server"),
        (tags(&[("result", "1-0")]), "result", "set by the server"),
        (
            tags(&[("FEN", "8/8/8/8/8/8/8/8 w - - 0 1")]),
            "FEN",
            "set by the server",
        ),
        (
            tags(&[("Variant", "Chess960")]),
            "Variant",
            "set by the server",
        ),
        (
            tags(&[("Time Control", "1")]),
            "Time Control",
            "not a PGN tag name",
        ),
        (
            tags(&[("_x", "1")]),
            "_x",
            "starts with a letter or a digit",
        ),
        (
            tags(&[("Event", "two\nlines")]),
            "Event",
            "control character",
        ),
        (
            tags(&[("Event", "x".repeat(257).as_str())]),
            "Event",
            "longer than 256 bytes",
        ),
        (too_many.into_iter().collect(), "T32", "at most 32"),
    ];
    for (given, tag, says) in cases {
        let status = expect_error(
            c.new_game(pb::NewGameRequest {
                tags: given,
                ..named("refused")
            })
            .await,
            Code::InvalidArgument,
            "INVALID_TAG",
        );
        assert_eq!(
            error_info(&status).metadata.get("tag").map(String::as_str),
            Some(tag),
            "{status:?}"
        );
        assert!(status.message().contains(says), "{says}: {status:?}");
        assert_eq!(violated_fields(&status), ["tags"]);
    }
    // Nothing was created.
    assert_eq!(
        c.get_game(pb::GetGameRequest {
            game_id: "refused".into(),
            ..Default::default()
        })
        .await
        .expect_err("no game")
        .code(),
        Code::NotFound
    );
}

#[tokio::test]
async fn list_games_pages_through_games_in_id_order_by_status() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    for id in ["b", "a", "B", "a10", "a9", "z", "_u"] {
        new_game(&mut c, with_tags(id, &[("Round", id)])).await;
    }
    play(&mut c, "a10", "d4").await;
    resign(&mut c, "a9").await;
    resign(&mut c, "z").await;
    let byte_order = ["B", "_u", "a", "a10", "a9", "b", "z"];
    assert_eq!(
        pages(&mut c, pb::StatusFilter::Unspecified, 3).await,
        [&byte_order[..3], &byte_order[3..6], &byte_order[6..]]
    );
    assert_eq!(
        pages(&mut c, pb::StatusFilter::All, 7).await,
        [byte_order.to_vec()],
        "a page that holds the rest is the last: no empty page after it"
    );
    assert_eq!(
        pages(&mut c, pb::StatusFilter::Ended, 1).await,
        [["a9"], ["z"]]
    );
    assert_eq!(
        pages(&mut c, pb::StatusFilter::InProgress, 0).await,
        [["B", "_u", "a", "a10", "b"]]
    );

    // The BASIC view: the state, the tags, no history.
    let page = list(&mut c, pb::StatusFilter::All, 4, "").await.unwrap();
    let a10 = &page.games[3];
    assert_eq!(a10.game_id, "a10");
    assert_eq!((a10.ply, a10.version), (1, 1));
    assert!(a10.moves.is_empty() && a10.san_moves.is_empty() && a10.pgn.is_empty());
    assert_eq!(a10.tags, tags(&[("Round", "a10")]));
    assert_eq!(a10.fen, get(&mut c, "a10").await.fen);
    let ended = &list(&mut c, pb::StatusFilter::Ended, 1, "")
        .await
        .unwrap()
        .games[0];
    assert_eq!(ended.status(), pb::GameStatus::Resignation);

    // A token is good only with its filter; garbage is not a token.
    let token = page.next_page_token;
    assert!(
        !token.is_empty() && !token.contains("a10"),
        "opaque: {token}"
    );
    for (filter, bad) in [
        (pb::StatusFilter::Ended, token.as_str()),
        (pb::StatusFilter::All, "bm90IGEgdG9rZW4"),
        (pb::StatusFilter::All, "!!"),
    ] {
        let status = expect_error(
            c.list_games(pb::ListGamesRequest {
                page_size: 2,
                page_token: bad.into(),
                status_filter: filter as i32,
                ..Default::default()
            })
            .await,
            Code::InvalidArgument,
            "INVALID_PAGE_TOKEN",
        );
        assert_eq!(violated_fields(&status), ["page_token"]);
    }
    // ALL and unset are the same filter.
    let next = list(&mut c, pb::StatusFilter::Unspecified, 2, &token)
        .await
        .unwrap();
    assert_eq!(
        next.games
            .iter()
            .map(|g| g.game_id.as_str())
            .collect::<Vec<_>>(),
        ["a9", "b"]
    );
    expect_error(
        list(&mut c, pb::StatusFilter::All, -1, "")
            .await
            .map(tonic::Response::new),
        Code::InvalidArgument,
        "INVALID_PAGE_SIZE",
    );
    expect_error(
        c.list_games(pb::ListGamesRequest {
            status_filter: 99,
            ..Default::default()
        })
        .await,
        Code::InvalidArgument,
        "INVALID_STATUS_FILTER",
    );
}

#[tokio::test]
async fn list_games_defaults_to_pages_of_fifty() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    for i in 0..51 {
        new_game(&mut c, named(&format!("g{i:03}"))).await;
    }
    let first = list(&mut c, pb::StatusFilter::All, 0, "").await.unwrap();
    assert_eq!(first.games.len(), 50);
    assert_eq!(first.games[49].game_id, "g049");
    let rest = list(&mut c, pb::StatusFilter::All, 0, &first.next_page_token)
        .await
        .unwrap();
    assert_eq!(
        rest.games
            .iter()
            .map(|g| g.game_id.as_str())
            .collect::<Vec<_>>(),
        ["g050"]
    );
    assert!(rest.next_page_token.is_empty());
    // Above the maximum is the maximum, not an error.
    let all = list(&mut c, pb::StatusFilter::All, 5000, "").await.unwrap();
    assert_eq!(all.games.len(), 51);
    assert!(all.next_page_token.is_empty());
}

#[tokio::test]
async fn a_page_of_large_games_ends_at_a_mebibyte_and_paging_lists_each_once() {
    use prost::Message as _;
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    // About 8 KB a game (31 tags of 250 bytes): 300 games are more than 2 MiB.
    let value = "v".repeat(250);
    let many: Vec<(String, String)> = (0..31)
        .map(|i| (format!("Tag{i}"), value.clone()))
        .collect();
    let pairs: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let ids: Vec<String> = (0..300).map(|i| format!("big{i:03}")).collect();
    for id in &ids {
        new_game(&mut c, with_tags(id, &pairs)).await;
    }
    let first = list(&mut c, pb::StatusFilter::All, 1000, "").await.unwrap();
    let bytes = first.encoded_len();
    assert!(bytes <= 1024 * 1024, "a page of {bytes} bytes");
    assert!(
        first.games.len() > 50 && first.games.len() < 300,
        "{} games on the first page",
        first.games.len()
    );
    assert!(
        !first.next_page_token.is_empty(),
        "a page cut short says where to go on"
    );
    let listed: Vec<String> = pages(&mut c, pb::StatusFilter::All, 1000).await.concat();
    assert_eq!(listed, ids, "every game once, in order");
}

#[tokio::test]
async fn delete_game_checks_the_version_and_removes_the_game() {
    let server = Server::on(STORE).start(&[]);
    let mut c = server.client().await;
    new_game(&mut c, with_tags("doomed", &[("Event", "x")])).await;
    play(&mut c, "doomed", "e4").await;
    let mut spectator = watch(&mut c, "doomed", 1).await;
    assert_eq!(next_event(&mut spectator).await.version, 1);

    let status = expect_error(
        c.delete_game(delete_request("doomed", Some(0), false))
            .await,
        Code::Aborted,
        "VERSION_MISMATCH",
    );
    let info = error_info(&status);
    assert_eq!(
        info.metadata.get("current_version").map(String::as_str),
        Some("1")
    );
    assert_eq!(
        info.metadata.get("expected_version").map(String::as_str),
        Some("0")
    );
    assert_eq!(
        get(&mut c, "doomed").await.version,
        1,
        "a refused delete changes nothing"
    );

    c.delete_game(delete_request("doomed", Some(1), false))
        .await
        .expect("DeleteGame");
    expect_error(
        c.get_game(pb::GetGameRequest {
            game_id: "doomed".into(),
            ..Default::default()
        })
        .await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
    // The spectator's stream ends with NOT_FOUND.
    let ended = tokio::time::timeout(Duration::from_secs(10), spectator.message())
        .await
        .expect("the stream ends in time");
    match ended {
        Err(status) => assert_eq!(status.code(), Code::NotFound, "{status:?}"),
        other => panic!("expected NOT_FOUND, got {other:?}"),
    }
    // Gone from listings; a retry without allow_missing is NOT_FOUND, with it success.
    assert_eq!(
        pages(&mut c, pb::StatusFilter::All, 10).await,
        [Vec::<String>::new()]
    );
    expect_error(
        c.delete_game(delete_request("doomed", None, false)).await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
    c.delete_game(delete_request("doomed", Some(1), true))
        .await
        .expect("allow_missing: a retry after a lost reply succeeds");
    c.delete_game(delete_request("never-was", None, true))
        .await
        .expect("allow_missing");
    expect_error(
        c.delete_game(delete_request("bad id!", None, true)).await,
        Code::InvalidArgument,
        "INVALID_GAME_ID",
    );
    // The id is free for a new game, without the old one's tags or moves.
    let again = new_game(&mut c, named("doomed")).await;
    assert_eq!((again.version, again.ply), (0, 0));
    assert!(again.tags.is_empty());
}

/// Deletes and tags are durable: a restarted server has the tags and not the deleted game.
#[tokio::test]
async fn tags_and_deletes_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut server = Server::on(STORE).start_in(dir.path(), &[]);
        let mut c = server.client().await;
        new_game(&mut c, with_tags("kept", &[("White", "Ann")])).await;
        new_game(&mut c, named("gone")).await;
        c.delete_game(delete_request("gone", Some(0), false))
            .await
            .expect("DeleteGame");
        server.kill9();
    }
    let server = Server::on(STORE).start_in(dir.path(), &[]);
    let mut c = server.client().await;
    assert_eq!(get(&mut c, "kept").await.tags, tags(&[("White", "Ann")]));
    assert_eq!(pages(&mut c, pb::StatusFilter::All, 10).await, [["kept"]]);
}
