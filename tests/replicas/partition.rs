//! Issue 24's ABA with a real partition: replica A caches game g at version 3 (e4 e5
//! Nf3) and is cut off from PostgreSQL (a TCP blackhole between A and the database,
//! `common::blackhole`: nothing arrives, nothing is refused); meanwhile replica B deletes
//! g, creates it again and plays d4 d5 c4 (version 3 again). After the cut heals, A must
//! answer B's game, and Nc6 on A with `expected_version` 3 must land on B's history (or
//! be refused), never on A's stale one. Before the write token and the invalidation on
//! reconnect, A answered e4 e5 Nf3 and stored e4 e5 Nf3 Nc6 over B's acknowledged moves.

use std::time::Duration;

use chess_service::pb;
use tonic_health::pb::health_check_response::ServingStatus;

use super::common::blackhole::{Blackhole, upstream_of};
use super::server::Server;
use super::{Pg, get, new_game, play, replica, replica_args, wait_health};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_cut_off_during_a_delete_and_re_create_serves_and_writes_only_the_new_game() {
    let Some(pg) = Pg::start("partition_aba").await else {
        return;
    };
    let hole = Blackhole::start(upstream_of(&pg.url)).await;
    let a = Server::start(&replica_args(&hole.url(&pg.url)));
    let b = replica(&pg);
    let (mut ca, mut cb) = (a.client().await, b.client().await);

    new_game(&mut ca, "g", None).await;
    for mv in ["e2e4", "e7e5", "g1f3"] {
        play(&mut ca, "g", mv).await;
    }
    let cached = get(&mut ca, "g").await.expect("GetGame on A");
    assert_eq!((cached.version, cached.san_moves.len()), (3, 3));

    // A is cut off; its health says so once its listener's ping goes unanswered.
    hole.cut();
    wait_health(&a, ServingStatus::NotServing, Duration::from_secs(10)).await;

    // Meanwhile on B: the game deleted, created again, and brought to version 3.
    cb.delete_game(pb::DeleteGameRequest {
        game_id: "g".into(),
        expected_version: Some(3),
        allow_missing: false,
    })
    .await
    .expect("DeleteGame on B");
    new_game(&mut cb, "g", None).await;
    for mv in ["d2d4", "d7d5", "c2c4"] {
        play(&mut cb, "g", mv).await;
    }
    let theirs = get(&mut cb, "g").await.expect("GetGame on B");
    assert_eq!(theirs.version, 3);
    // Held a while, as in the 3.5 s cut.
    tokio::time::sleep(Duration::from_millis(1500)).await;

    hole.heal();
    wait_health(&a, ServingStatus::Serving, Duration::from_secs(10)).await;

    let seen = get(&mut ca, "g")
        .await
        .expect("GetGame on A after the heal");
    assert_eq!(
        seen.san_moves, theirs.san_moves,
        "A answers B's game, not its stale copy"
    );
    assert_eq!(seen.version, 3);

    let played = ca
        .play(pb::PlayRequest {
            game_id: "g".into(),
            r#move: "b8c6".into(),
            expected_version: Some(3),
            ..Default::default()
        })
        .await;
    let stored = get(&mut cb, "g").await.expect("GetGame on B at the end");
    match played {
        Ok(reply) => {
            let game = reply.into_inner().game.expect("a game");
            assert_eq!(game.san_moves, ["d4", "d5", "c4", "Nc6"], "{game:?}");
            assert_eq!(stored.san_moves, ["d4", "d5", "c4", "Nc6"]);
        }
        Err(status) => {
            eprintln!("Nc6 on A was refused: {status:?}");
            assert_eq!(stored.san_moves, theirs.san_moves, "nothing was written");
        }
    }
    drop((a, b));
}
