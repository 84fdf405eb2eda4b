//! The load generator (`chess-load`) against the real server: its figures are only worth
//! something if every call it counts succeeded, with each client kind and connection mode.

use std::process::Command;

use crate::common::server::Server;

fn chess_load(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_chess-load"))
        .args(args)
        .output()
        .expect("the chess-load binary runs")
}

#[test]
fn the_matrix_runs_every_kind_with_both_clients_and_connection_modes_without_errors() {
    let server = Server::start(&[]);
    let url = server.url();
    let out = chess_load(&[
        "--target",
        &url,
        "--matrix",
        "2",
        "--kinds",
        "health,legal-moves-game,legal-moves-fen-miss,play,mix",
        "--repeat",
        "1",
        "--duration",
        "0.3",
        "--warmup",
        "0",
        "--client",
        "both",
        "--connections",
        "1,per-client",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chess-load failed: {stderr}");
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("| 2 |"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    // 2 connection modes x 2 clients x 5 kinds.
    assert_eq!(rows.len(), 20, "one row per cell:\n{stdout}");
    for row in &rows {
        // | clients | connections | client | RPC | req/s | p50 | p99 | p99.9 | errors | ratio |
        let (connections, rpc, rate, errors) = (row[2], row[4], row[5], row[9]);
        assert!(
            connections == "1" || connections == "1 per client",
            "connections column: {row:?}"
        );
        assert_eq!(errors, "0", "{rpc} counted failed calls: {row:?}\n{stderr}");
        let rate: f64 = rate.parse().expect("req/s is a number");
        assert!(rate > 0.0, "{rpc} made no successful call: {row:?}");
    }
    assert!(
        rows.iter().filter(|r| r[2] == "1 per client").count() == 10
            && rows.iter().filter(|r| r[3] == "raw").count() == 10,
        "every cell with each mode and client:\n{stdout}"
    );
}

#[test]
fn one_connection_per_client_opens_one_per_caller() {
    let server = Server::start(&[]);
    let out = chess_load(&[
        "--target",
        &server.url(),
        "--rpc",
        "legal-moves-game",
        "--concurrency",
        "3",
        "--duration",
        "0.3",
        "--warmup",
        "0",
        "--connections",
        "per-client",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("concurrency=3 connections=3 ") && stdout.contains(" errors=0 "),
        "{stdout}"
    );
}

#[test]
fn a_bad_connections_value_is_refused_with_what_is_accepted() {
    let out = chess_load(&["--connections", "some"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--connections takes a number or `per-client`, not \"some\""),
        "{stderr}"
    );
}

#[test]
fn a_list_of_connection_modes_needs_the_matrix() {
    let out = chess_load(&["--connections", "1,per-client", "--duration", "0.1"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("a list of --connections needs --matrix"),
        "{stderr}"
    );
}

#[test]
fn a_play_watched_on_another_server_is_counted_once_the_spectator_has_it() {
    // Two servers with their own stores: the spectator on the second never sees the first's
    // games, so every call fails; on one server (the spectator on the same one, as with a
    // single target) every call must succeed and wait for the stream.
    let server = Server::start(&[]);
    let out = chess_load(&[
        "--target",
        &server.url(),
        "--rpc",
        "watch-other",
        "--concurrency",
        "4",
        "--duration",
        "0.5",
        "--warmup",
        "0",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("rpc=WatchOther") && stdout.contains(" errors=0 "),
        "{stdout}"
    );
    let ok: u64 = stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix("ok="))
        .and_then(|n| n.parse().ok())
        .expect("an ok= count");
    assert!(ok > 0, "no watched Play completed: {stdout}");
    let other = Server::start(&[]);
    let out = chess_load(&[
        "--target",
        &format!("{},{}", server.url(), other.url()),
        "--rpc",
        "watch-other",
        "--concurrency",
        "2",
        "--duration",
        "0.3",
        "--warmup",
        "0",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(" ok=0 ") && !stdout.contains(" errors=0 "),
        "a spectator on a server without the game must not count as seen: {stdout}"
    );
}
