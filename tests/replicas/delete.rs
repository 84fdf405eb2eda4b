//! DeleteGame's `expected_version` against a game deleted and created again on another
//! replica (issue 24's ABA, for deletes). Replica A caches game g at version 3 (e4 e5
//! Nf3) and is cut off from PostgreSQL (a TCP blackhole, `common::blackhole`); meanwhile
//! replica B deletes g and creates it again. After the heal, DeleteGame on A is decided on
//! the game stored under that id when the delete runs, never on A's copy:
//! - B's new game at version 4: DeleteGame on A with `expected_version` 3 (the version A
//!   held) answers ABORTED VERSION_MISMATCH with `current_version` 4 and deletes nothing;
//!   with 4 (the version the caller really saw, on B) it deletes B's game;
//! - B's new game at version 3 (the very version A held): DeleteGame on A with
//!   `expected_version` 3 deletes B's game. A version is all a caller can name, so a game
//!   created again under the same id and brought to the same version matches it (see
//!   DeleteGameRequest in the proto and docs/api.md).
//!
//! Why no write token in the delete's compare: the delete never answers from a cached
//! game. It is one statement, `DELETE … WHERE id = $1 AND version = $2`, on the row as
//! stored at that moment; a cached stamp in it could only fail where the stored version
//! matches, and deciding again on the reloaded game would then delete the same row.

use std::time::Duration;

use chess_service::pb;
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;

use super::common::blackhole::{Blackhole, upstream_of};
use super::server::{Server, error_info};
use super::{Client, Pg, get, new_game, play, replica, replica_args, wait_health};

async fn delete(c: &mut Client, id: &str, expected: u64) -> Result<(), tonic::Status> {
    c.delete_game(pb::DeleteGameRequest {
        game_id: id.into(),
        expected_version: Some(expected),
        allow_missing: false,
    })
    .await
    .map(|_| ())
}

/// A caches `id` at version 3 (its own moves), A is cut off, B deletes the game and
/// creates it again with `theirs`; then A is healed. Returns B's game.
async fn recreate_while_cut(
    hole: &Blackhole,
    a: &Server,
    ca: &mut Client,
    cb: &mut Client,
    id: &str,
    theirs: &[&str],
) -> pb::Game {
    new_game(ca, id, None).await;
    for mv in ["e2e4", "e7e5", "g1f3"] {
        play(ca, id, mv).await;
    }
    assert_eq!(get(ca, id).await.expect("GetGame on A").version, 3);
    hole.cut();
    wait_health(a, ServingStatus::NotServing, Duration::from_secs(10)).await;
    delete(cb, id, 3).await.expect("DeleteGame on B");
    new_game(cb, id, None).await;
    for mv in theirs {
        play(cb, id, mv).await;
    }
    hole.heal();
    wait_health(a, ServingStatus::Serving, Duration::from_secs(10)).await;
    get(cb, id).await.expect("GetGame on B")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_on_a_replica_that_held_an_older_game_is_decided_on_the_stored_one() {
    let Some(pg) = Pg::start("delete_aba").await else {
        return;
    };
    let hole = Blackhole::start(upstream_of(&pg.url)).await;
    let a = Server::start(&replica_args(&hole.url(&pg.url)));
    let b = replica(&pg);
    let (mut ca, mut cb) = (a.client().await, b.client().await);

    // B's game at version 4: A's version 3 is not it.
    let theirs = ["d2d4", "d7d5", "c2c4", "e7e6"];
    let game = recreate_while_cut(&hole, &a, &mut ca, &mut cb, "four", &theirs).await;
    assert_eq!(game.version, 4);
    let refused = delete(&mut ca, "four", 3)
        .await
        .expect_err("a delete at the version A held is refused");
    assert_eq!(refused.code(), Code::Aborted, "{refused:?}");
    let info = error_info(&refused);
    assert_eq!(info.reason, "VERSION_MISMATCH", "{refused:?}");
    assert_eq!(
        info.metadata.get("current_version").map(String::as_str),
        Some("4"),
        "{refused:?}"
    );
    let kept = get(&mut cb, "four").await.expect("B's game is kept");
    assert_eq!((kept.version, &kept.moves), (4, &game.moves));
    let on_a = get(&mut ca, "four").await.expect("A answers B's game");
    assert_eq!((on_a.version, &on_a.moves), (4, &game.moves));
    // At the version the caller saw on B: deleted, on both replicas.
    delete(&mut ca, "four", 4)
        .await
        .expect("a delete at B's version succeeds on A");
    for c in [&mut ca, &mut cb] {
        let gone = get(c, "four").await.expect_err("deleted");
        assert_eq!(gone.code(), Code::NotFound, "{gone:?}");
    }

    // B's game at version 3, the version A held: it is the game stored at 3, so a delete
    // at 3 deletes it.
    let theirs = ["d2d4", "d7d5", "c2c4"];
    let game = recreate_while_cut(&hole, &a, &mut ca, &mut cb, "three", &theirs).await;
    assert_eq!(game.version, 3);
    let wrong = delete(&mut ca, "three", 2)
        .await
        .expect_err("another version is refused");
    assert_eq!(error_info(&wrong).reason, "VERSION_MISMATCH", "{wrong:?}");
    assert_eq!(get(&mut cb, "three").await.expect("kept").moves, game.moves);
    delete(&mut ca, "three", 3)
        .await
        .expect("a delete at the stored version succeeds on A");
    for c in [&mut ca, &mut cb] {
        let gone = get(c, "three").await.expect_err("deleted");
        assert_eq!(gone.code(), Code::NotFound, "{gone:?}");
    }
    drop((a, b));
}
