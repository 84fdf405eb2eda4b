//! The real server on a store that lost acknowledged commits (issue 29): it refuses to
//! start, naming the gap, and exits non-zero before it ever serves; `chess-server verify`
//! says so and exits non-zero; `--accept-store-rollback` starts it anyway, and the games
//! behind answer DATA_LOSS. The damage matrix on the `db` file itself is in the `store`
//! crate (`damaged_file`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tonic::Code;

use crate::common::client::{named, new_game, play, try_get};
use crate::common::server::{Server, error_info};
use crate::faults::start_and_wait;

const IDS: [&str; 5] = ["a", "b", "c", "d", "e"];

fn verify(dir: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chess-server"))
        .args(["verify", "--data-dir"])
        .arg(dir)
        .output()
        .expect("chess-server verify runs");
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_behind_its_ledger_is_refused_verified_as_damaged_and_served_only_when_accepted() {
    let data = tempfile::tempdir().expect("a data directory");
    let mut server = Server::start_in(data.path(), &[]);
    let mut c = server.client().await;
    for id in IDS {
        new_game(&mut c, named(id)).await;
        play(&mut c, id, "e4").await;
        play(&mut c, id, "e5").await;
    }
    drop(c);
    server
        .terminate(Duration::from_secs(20))
        .expect("a clean stop");

    // verify on a copy: sled's recovery may rewrite the files it opens (a snapshot),
    // and the damage below must meet the files exactly as the server left them.
    let clean = tempfile::tempdir().expect("a directory for the copy");
    crate::common::damage::copy_dir(data.path(), clean.path());
    let (code, out) = verify(clean.path());
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("OK: 5 games, 5 read and replayed cleanly"),
        "{out}"
    );

    // The db file emptied while the server was stopped.
    std::fs::File::options()
        .write(true)
        .open(data.path().join("db"))
        .expect("the db file")
        .set_len(0)
        .expect("truncated");
    let (code, out) = start_and_wait(data.path(), &[], Duration::from_secs(30));
    assert!(code.is_some_and(|c| c != 0), "exit {code:?}: {out}");
    assert!(
        out.contains("sled recovered up to commit 0, the ledger says")
            && out.contains("acknowledged commits are missing")
            && out.contains("--accept-store-rollback"),
        "{out}"
    );
    assert!(!out.contains("listening on"), "it must never serve: {out}");

    let (code, out) = verify(data.path());
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("REFUSED") && out.contains("DAMAGED: "),
        "{out}"
    );

    let server = Server::start_in(data.path(), &["--accept-store-rollback"]);
    let mut c = server.client().await;
    for id in IDS {
        let err = try_get(&mut c, id).await.expect_err("DATA_LOSS");
        assert_eq!(err.code(), Code::DataLoss, "{id}: {err:?}");
        assert_eq!(error_info(&err).reason, "DATA_LOSS", "{id}");
    }
    assert!(
        server
            .wait_for_log("lost by the accepted rollback", Duration::from_secs(5))
            .is_some(),
        "the log says what is lost"
    );
}
