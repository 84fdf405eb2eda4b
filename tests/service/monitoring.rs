//! What an operator's alerts and dashboards rely on, against the real binary: every counter
//! exported from the start at 0 with every label value it can take; the build, health and
//! the store as metrics; the games created and ended, each counted once where its durable
//! write happened (never again on a load after a restart); and the kit of
//! `deploy/monitoring/`: every metric the Grafana dashboard and the alert rules query is
//! one a running server exports.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use chess_service::pb;

use crate::common::client::{
    BLACK, WHITE, get, named, new_game, offer, play, respond, time_control, undo,
};
use crate::common::metrics::{Samples, by_label, families, parse_samples, sample, scrape};
use crate::common::server::{Server, expect_error};

/// The names of an enum's values, by trying every number up to 1000 (independent of the
/// descriptor set the server reads them from).
fn names_of<E>(
    name: impl Fn(i32) -> Option<E>,
    show: impl Fn(&E) -> &'static str,
) -> Vec<&'static str> {
    (0..=1000).filter_map(name).map(|e| show(&e)).collect()
}

fn error_reasons() -> Vec<&'static str> {
    names_of(|n| pb::ErrorReason::try_from(n).ok(), |r| r.as_str_name())
        .into_iter()
        .filter(|r| *r != "ERROR_REASON_UNSPECIFIED")
        .collect()
}

/// The `status` labels of `chess_games_ended_total`: every GameStatus that ends a game,
/// less its prefix, in lower case.
fn ending_labels() -> BTreeSet<String> {
    names_of(|n| pb::GameStatus::try_from(n).ok(), |s| s.as_str_name())
        .into_iter()
        .filter(|s| !matches!(*s, "GAME_STATUS_UNSPECIFIED" | "GAME_STATUS_IN_PROGRESS"))
        .map(|s| s.trim_start_matches("GAME_STATUS_").to_ascii_lowercase())
        .collect()
}

/// Every method the server serves, as (grpc_service, grpc_method), from the descriptor
/// sets it registers.
fn served_methods() -> Vec<(String, String)> {
    use prost::Message as _;
    let mut methods = Vec::new();
    for set in [
        pb::FILE_DESCRIPTOR_SET,
        tonic_health::pb::FILE_DESCRIPTOR_SET,
    ] {
        let set = prost_types::FileDescriptorSet::decode(set).expect("a descriptor set");
        for file in set.file {
            for service in &file.service {
                for m in &service.method {
                    methods.push((
                        format!("{}.{}", file.package(), service.name()),
                        m.name().to_string(),
                    ));
                }
            }
        }
    }
    methods
}

async fn scrape_until(addr: &str, what: &str, ok: impl Fn(&Samples) -> bool) -> Samples {
    let start = Instant::now();
    loop {
        let s = parse_samples(&scrape(addr).await);
        if ok(&s) {
            return s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{what} within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn a_fresh_server_exports_every_counter_at_zero_with_every_label_value() {
    let server = Server::start(&["--metrics-listen", "127.0.0.1:0"]);
    let addr = server.metrics_addr();
    let text = scrape(&addr).await;
    let s = parse_samples(&text);

    // Every counter family has samples before anything happened, and all are 0.
    let kinds = families(&text);
    let counters: Vec<&String> = kinds
        .iter()
        .filter(|(_, kind)| kind.as_str() == "counter")
        .map(|(name, _)| name)
        .collect();
    assert!(counters.len() >= 10, "{kinds:?}");
    for family in &counters {
        let total = format!("{family}_total");
        let values: Vec<f64> = s
            .iter()
            .filter(|((name, _), _)| *name == total)
            .map(|(_, v)| *v)
            .collect();
        assert!(
            !values.is_empty(),
            "counter {family} has no sample at the start:\n{text}"
        );
        // The process's own CPU time and the store's sync time grow from the start; the
        // counts of events are 0 until something happens.
        if !matches!(
            family.as_str(),
            "process_cpu_seconds" | "chess_store_sync_seconds"
        ) {
            assert!(values.iter().all(|v| *v == 0.0), "{family}: {values:?}");
        }
    }

    // Each served method with each of the 17 gRPC codes, started and timed.
    let methods = served_methods();
    assert!(methods.iter().any(|(_, m)| m == "Play") && methods.iter().any(|(_, m)| m == "Check"));
    // Go's `codes.Code.String()`, which go-grpc-prometheus's labels use: tonic's names for
    // the 17 codes but two, "OK" and the American "Canceled".
    let codes: Vec<String> = (0..17)
        .map(|n| match format!("{:?}", tonic::Code::from(n)).as_str() {
            "Ok" => "OK".to_string(),
            "Cancelled" => "Canceled".to_string(),
            name => name.to_string(),
        })
        .collect();
    assert_eq!(codes[16], "Unauthenticated");
    for (service, method) in &methods {
        let with = |name: &str, extra: &[(&str, &str)]| {
            let mut labels = vec![
                ("grpc_service", service.as_str()),
                ("grpc_method", method.as_str()),
            ];
            labels.extend_from_slice(extra);
            s.iter()
                .filter(|((n, l), _)| {
                    n == name
                        && labels
                            .iter()
                            .all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v))
                })
                .map(|(_, v)| *v)
                .collect::<Vec<f64>>()
        };
        assert_eq!(
            with("grpc_server_started_total", &[]),
            vec![0.0],
            "{service}/{method}"
        );
        assert_eq!(
            with("grpc_server_handling_seconds_count", &[]),
            vec![0.0],
            "{service}/{method}"
        );
        for code in &codes {
            assert_eq!(
                with("grpc_server_handled_total", &[("grpc_code", code.as_str())]),
                vec![0.0],
                "{service}/{method} {code}"
            );
        }
    }

    // Every refusal reason, connection refusal and failed accept.
    let refusals = by_label(&s, "chess_refusals_total", "reason");
    let reasons = error_reasons();
    assert!(reasons.contains(&"DISK_FULL") && reasons.contains(&"OVERLOADED"));
    assert_eq!(
        refusals.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        reasons.iter().copied().collect::<BTreeSet<_>>()
    );
    assert!(refusals.values().all(|v| *v == 0.0), "{refusals:?}");
    let refused = by_label(&s, "chess_connections_refused_total", "reason");
    assert_eq!(
        refused,
        [
            "max_connections",
            "handshake_timeout",
            "not_http2",
            "handshake_failed"
        ]
        .into_iter()
        .map(|r| (r.to_string(), 0.0))
        .collect::<HashMap<_, _>>()
    );
    let accepts = by_label(&s, "chess_accept_errors_total", "kind");
    assert_eq!(
        accepts,
        [
            ("out_of_descriptors".to_string(), 0.0),
            ("other".to_string(), 0.0)
        ]
        .into_iter()
        .collect::<HashMap<_, _>>()
    );

    // The business counters: every ending status, at 0.
    assert_eq!(sample(&s, "chess_games_created_total", &[]), Some(0.0));
    let ended = by_label(&s, "chess_games_ended_total", "status");
    let labels = ending_labels();
    assert!(
        labels.contains("checkmate") && labels.contains("out_of_time"),
        "{labels:?}"
    );
    assert_eq!(ended.keys().cloned().collect::<BTreeSet<_>>(), labels);
    assert!(ended.values().all(|v| *v == 0.0), "{ended:?}");

    // The build, at 1: this crate's version, the commit it was built from, the store.
    let build: Vec<(&Vec<(String, String)>, f64)> = s
        .iter()
        .filter(|((name, _), _)| name == "chess_build_info")
        .map(|((_, labels), v)| (labels, *v))
        .collect();
    assert_eq!(build.len(), 1, "{build:?}");
    let (labels, value) = build[0];
    assert_eq!(value, 1.0);
    let label = |k: &str| labels.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(label("version"), Some(env!("CARGO_PKG_VERSION")));
    assert_eq!(label("store"), Some("sled"));
    let commit = label("commit").expect("a commit label");
    assert_eq!(commit, env!("CHESS_BUILD_COMMIT"));
    // In a checkout the commit is HEAD's when the build ran (unless the build named another
    // on purpose): HEAD itself, or an ancestor of it if commits were made since the build.
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    assert!(
        commit == "unknown"
            || (commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{commit}"
    );
    if env!("CHESS_BUILD_COMMIT_SOURCE") == "git" {
        let head =
            git(&["rev-parse", "HEAD"]).expect("git rev-parse HEAD works where the build's did");
        assert!(
            commit == head || git(&["merge-base", "--is-ancestor", commit, "HEAD"]).is_some(),
            "chess_build_info{{commit}} {commit} is neither HEAD ({head}) nor an ancestor of it"
        );
    }

    // Health and the store: serving (once the health mirror has seen SERVING), reachable,
    // not stopped.
    scrape_until(&addr, "chess_serving 1", |s| {
        sample(s, "chess_serving", &[]) == Some(1.0)
    })
    .await;
    assert_eq!(sample(&s, "chess_store_available", &[]), Some(1.0));
    assert_eq!(sample(&s, "chess_store_stopped", &[]), Some(0.0));
}

/// Fool's mate: 1. f3 e5 2. g4 Qh4#.
const FOOLS_MATE: [&str; 4] = ["f3", "e5", "g4", "Qh4"];
/// Black to move and stalemated: Kh8 against Qf7 and Kg6.
const STALEMATE_FEN: &str = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1";

fn ended(s: &Samples) -> HashMap<String, f64> {
    by_label(s, "chess_games_ended_total", "status")
        .into_iter()
        .filter(|(_, n)| *n > 0.0)
        .collect()
}

fn counts(pairs: &[(&str, f64)]) -> HashMap<String, f64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[tokio::test]
async fn games_created_and_ended_are_counted_once_where_made_durable_and_not_again_after_a_restart()
{
    let data = tempfile::tempdir().expect("a data directory");
    let args = ["--metrics-listen", "127.0.0.1:0"];
    let mut server = Server::start_in(data.path(), &args);
    let addr = server.metrics_addr();
    let mut c = server.client().await;

    // Checkmate on the board.
    new_game(&mut c, named("mate")).await;
    for mv in FOOLS_MATE {
        play(&mut c, "mate", mv).await;
    }
    assert_eq!(
        get(&mut c, "mate").await.status,
        pb::GameStatus::Checkmate as i32
    );
    // A resignation, an agreed draw.
    new_game(&mut c, named("resigned")).await;
    c.resign(pb::ResignRequest {
        game_id: "resigned".into(),
        color: WHITE,
        ..Default::default()
    })
    .await
    .expect("Resign");
    new_game(&mut c, named("agreed")).await;
    play(&mut c, "agreed", "e4").await;
    c.offer_draw(offer("agreed", WHITE))
        .await
        .expect("OfferDraw");
    c.respond_to_draw(respond("agreed", BLACK, true))
        .await
        .expect("RespondToDraw");
    // A flag that falls with nobody calling: the flag timer records it.
    new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: time_control(300, 0),
            ..named("flagged")
        },
    )
    .await;
    scrape_until(&addr, "the flag fall counted", |s| {
        ended(s).get("out_of_time") == Some(&1.0)
    })
    .await;
    // Created over: a stalemate start, and an imported game that ended in mate.
    let stalemate = new_game(
        &mut c,
        pb::NewGameRequest {
            fen: STALEMATE_FEN.into(),
            ..named("stalemate")
        },
    )
    .await;
    assert_eq!(stalemate.status, pb::GameStatus::Stalemate as i32);
    let pgn = "1. f3 e5 2. g4 Qh4# 0-1";
    let import = |id: &str, validate_only| pb::ImportGameRequest {
        pgn: pgn.into(),
        game_id: id.into(),
        validate_only,
        ..Default::default()
    };
    // A dry run creates nothing.
    c.import_game(import("imported", true))
        .await
        .expect("ImportGame validate_only");
    c.import_game(import("imported", false))
        .await
        .expect("ImportGame");
    new_game(&mut c, named("going")).await;

    // Nothing counts twice: a NewGame answered with the existing game, reads of ended
    // games (each loads nothing new), a move refused on an ended game.
    new_game(&mut c, named("going")).await;
    for id in [
        "mate",
        "resigned",
        "agreed",
        "flagged",
        "stalemate",
        "imported",
    ] {
        get(&mut c, id).await;
    }
    expect_error(
        c.play(crate::common::client::play_request("mate", "a3"))
            .await,
        tonic::Code::FailedPrecondition,
        "GAME_OVER",
    );

    let s = parse_samples(&scrape(&addr).await);
    assert_eq!(sample(&s, "chess_games_created_total", &[]), Some(7.0));
    let first_run = counts(&[
        ("checkmate", 2.0),
        ("resignation", 1.0),
        ("draw_agreement", 1.0),
        ("out_of_time", 1.0),
        ("stalemate", 1.0),
    ]);
    assert_eq!(ended(&s), first_run);

    // An ending taken back and made again is a second ending: each is counted where it
    // is made.
    undo(&mut c, "mate").await;
    play(&mut c, "mate", "Qh4").await;
    let s = parse_samples(&scrape(&addr).await);
    assert_eq!(ended(&s).get("checkmate"), Some(&3.0));

    // A timed game whose flag falls while the server is down.
    new_game(
        &mut c,
        pb::NewGameRequest {
            time_control: time_control(1500, 0),
            ..named("late-flag")
        },
    )
    .await;
    let created = Instant::now();
    drop(c);
    server
        .terminate(Duration::from_secs(20))
        .expect("the server stops on SIGTERM");
    tokio::time::sleep(Duration::from_millis(1600).saturating_sub(created.elapsed())).await;

    // Restarted on the same store: loading and reading every game counts nothing; the
    // flag that fell while it was down is recorded here, once.
    let restarted = Server::start_in(data.path(), &args);
    let addr = restarted.metrics_addr();
    let mut c = restarted.client().await;
    for id in [
        "mate",
        "resigned",
        "agreed",
        "flagged",
        "stalemate",
        "imported",
        "going",
    ] {
        get(&mut c, id).await;
    }
    assert_eq!(
        get(&mut c, "late-flag").await.status,
        pb::GameStatus::OutOfTime as i32
    );
    get(&mut c, "late-flag").await;
    let s = parse_samples(&scrape(&addr).await);
    assert!(sample(&s, "chess_games_loaded", &[]).is_some_and(|n| n >= 8.0));
    assert_eq!(sample(&s, "chess_games_created_total", &[]), Some(0.0));
    assert_eq!(ended(&s), counts(&[("out_of_time", 1.0)]));
}

// ---------------------------------------------------------------------------------------
// deploy/monitoring/: the dashboard and the alerts query what the server exports.

/// Words of PromQL that are not metric names: aggregations, set and comparison keywords.
const PROMQL_KEYWORDS: &[&str] = &[
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
    "limitk",
    "limit_ratio",
    "and",
    "or",
    "unless",
    "bool",
    "offset",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "inf",
    "nan",
    "atan2",
];

/// The metric names a PromQL expression (with Grafana's `$variables`) selects: what is
/// left once string literals, label matchers `{...}`, ranges and subqueries `[...]`,
/// variables, numbers and durations, function and aggregation names, and the label lists
/// of `by`, `without`, `on`, `ignoring`, `group_left` and `group_right` are taken out.
fn metric_names(expr: &str) -> BTreeSet<String> {
    // 1. Strings, matchers, ranges, variables and comments become spaces.
    let chars: Vec<char> = expr.chars().collect();
    let mut bare = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            q @ ('"' | '\'' | '`') => {
                i += 1;
                while i < chars.len() && chars[i] != q {
                    i += if chars[i] == '\\' && q != '`' { 2 } else { 1 };
                }
                bare.push(' ');
            }
            open @ ('{' | '[') => {
                let close = if open == '{' { '}' } else { ']' };
                i += 1;
                while i < chars.len() && chars[i] != close {
                    if let q @ ('"' | '\'' | '`') = chars[i] {
                        i += 1;
                        while i < chars.len() && chars[i] != q {
                            i += if chars[i] == '\\' { 2 } else { 1 };
                        }
                    }
                    i += 1;
                }
                bare.push(' ');
            }
            '$' => {
                i += 1;
                if chars.get(i) == Some(&'{') {
                    while i < chars.len() && chars[i] != '}' {
                        i += 1;
                    }
                } else {
                    while i + 1 < chars.len()
                        && (chars[i + 1].is_alphanumeric() || chars[i + 1] == '_')
                    {
                        i += 1;
                    }
                }
                bare.push(' ');
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            c => bare.push(c),
        }
        i += 1;
    }
    // 2. Words: a name followed by `(` is a function; a grouping keyword's `(...)` holds
    //    label names; numbers and durations start with a digit (or a dot).
    let bytes = bare.as_bytes();
    let mut names = BTreeSet::new();
    let mut i = 0;
    let next_non_space = |from: usize| {
        bytes[from..]
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .map(|p| from + p)
    };
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_digit() || b == b'.' {
            // 0.99, 5m, 1e-3, 0x1f: letters, digits, dots, and an exponent's sign.
            i += 1;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric()
                    || bytes[i] == b'.'
                    || (matches!(bytes[i], b'+' | b'-')
                        && bytes[i - 1].eq_ignore_ascii_case(&b'e')
                        && i >= 2
                        && bytes[i - 2].is_ascii_digit()))
            {
                i += 1;
            }
            continue;
        }
        if !(b.is_ascii_alphabetic() || b == b'_' || b == b':') {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len()
            && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b':')
        {
            i += 1;
        }
        let word = &bare[start..i];
        let after = next_non_space(i);
        let opens = after.is_some_and(|a| bytes[a] == b'(');
        if matches!(
            word,
            "by" | "without" | "on" | "ignoring" | "group_left" | "group_right"
        ) {
            if let (true, Some(a)) = (opens, after) {
                i = a + bare[a..].find(')').map_or(bare.len() - a, |p| p + 1);
            }
            continue;
        }
        if opens || PROMQL_KEYWORDS.contains(&word) {
            continue;
        }
        names.insert(word.to_string());
    }
    names
}

#[test]
fn metric_names_are_read_from_promql_and_grafana_expressions() {
    let names = |e: &str| metric_names(e).into_iter().collect::<Vec<_>>();
    assert_eq!(
        names(
            r#"histogram_quantile(0.99, sum by (grpc_method, le) (rate(grpc_server_handling_seconds_bucket{job=~"$job", grpc_type="unary", x="a}b"}[$__rate_interval])))"#
        ),
        ["grpc_server_handling_seconds_bucket"]
    );
    assert_eq!(
        names(
            "sum without (instance) (rate(a_total[5m] offset 1h)) / on (job) group_left (version) chess_build_info > bool 1e3"
        ),
        ["a_total", "chess_build_info"]
    );
    assert_eq!(
        names(
            "max_over_time(x[10m:1m]) == 1 or sum by(job)(increase(y{reason=\"DISK_FULL\"}[15m])) > 0.5 unless z"
        ),
        ["x", "y", "z"]
    );
    assert_eq!(
        names("time() - process_start_time_seconds{job=~\"${job:regex}\"}"),
        ["process_start_time_seconds"]
    );
    assert_eq!(names("rate (foo [1m]) and topk(3, bar)"), ["bar", "foo"]);
    assert!(names("vector(1) + 2").is_empty());
}

/// Every PromQL expression of the dashboard: the panels' targets, and the metric of each
/// `label_values(...)` query of the templating.
fn dashboard_expressions(dashboard: &serde_json::Value) -> Vec<String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Array(targets)) = map.get("targets") {
                    for t in targets {
                        if let Some(e) = t.get("expr").and_then(|e| e.as_str()) {
                            out.push(e.to_string());
                        }
                    }
                }
                for child in map.values() {
                    walk(child, out);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(dashboard, &mut out);
    for var in dashboard["templating"]["list"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let query = var["query"]["query"]
            .as_str()
            .or_else(|| var["query"].as_str());
        if let (Some("query"), Some(q)) = (var["type"].as_str(), query) {
            // label_values(selector, label): the selector is PromQL, the label is a name.
            let inner = q
                .strip_prefix("label_values(")
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or_else(|| panic!("a templating query other than label_values: {q}"));
            let selector = inner.rsplit_once(',').map_or(inner, |(sel, _)| sel);
            out.push(selector.to_string());
        }
    }
    out
}

/// The `expr:` values of a rules file (plain, or a `>-`/`|` block).
fn rule_expressions(rules: &str) -> Vec<String> {
    let lines: Vec<&str> = rules.lines().collect();
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("expr:") else {
            continue;
        };
        let indent = line.len() - line.trim_start().len();
        let rest = rest.trim();
        if rest.starts_with('>') || rest.starts_with('|') {
            let block: Vec<&str> = lines[n + 1..]
                .iter()
                .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
                .map(|l| l.trim())
                .collect();
            out.push(block.join(" "));
        } else {
            out.push(rest.trim_matches(|c| c == '\'' || c == '"').to_string());
        }
    }
    out
}

fn repo_file(path: &str) -> String {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

#[tokio::test]
async fn every_metric_the_dashboard_and_the_alerts_query_is_exported_by_a_running_server() {
    let server = Server::start(&["--metrics-listen", "127.0.0.1:0"]);
    let text = scrape(&server.metrics_addr()).await;
    // What /metrics has: every sample name, and each histogram family's series names.
    let mut exported: HashSet<String> = parse_samples(&text).into_keys().map(|(n, _)| n).collect();
    for (family, kind) in families(&text) {
        if kind == "histogram" {
            for suffix in ["_bucket", "_sum", "_count"] {
                exported.insert(format!("{family}{suffix}"));
            }
        }
    }

    let dashboard: serde_json::Value =
        serde_json::from_str(&repo_file("deploy/monitoring/grafana-dashboard.json"))
            .expect("the dashboard is JSON");
    let panel_queries = dashboard_expressions(&dashboard);
    assert!(panel_queries.len() >= 20, "{panel_queries:?}");
    let mut queried = BTreeSet::new();
    for e in &panel_queries {
        let names = metric_names(e);
        assert!(
            !names.is_empty(),
            "a dashboard query selects no metric: {e}"
        );
        for name in names {
            assert!(
                exported.contains(&name),
                "the dashboard queries {name}, which /metrics does not have: {e}"
            );
            queried.insert(name);
        }
    }
    // It shows what the operator's kit promises.
    for needed in [
        "grpc_server_started_total",
        "grpc_server_handled_total",
        "chess_refusals_total",
        "grpc_server_handling_seconds_bucket",
        "chess_calls_in_flight",
        "chess_store_commits_total",
        "chess_store_syncs_total",
        "chess_store_sync_seconds_total",
        "chess_games_loaded",
        "chess_spectators",
        "chess_connections_open",
        "chess_perfts_running",
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "chess_games_created_total",
        "chess_games_ended_total",
    ] {
        assert!(queried.contains(needed), "the dashboard shows no {needed}");
    }

    // The alert rules, and the PrometheusRule that carries the same groups. `up` is
    // Prometheus's own, from each scrape.
    for file in [
        "deploy/monitoring/alerts.yaml",
        "deploy/k8s/components/monitoring/prometheusrule.yaml",
    ] {
        let exprs = rule_expressions(&repo_file(file));
        assert!(exprs.len() >= 10, "{file}: {exprs:?}");
        for e in &exprs {
            let names = metric_names(e);
            assert!(!names.is_empty(), "{file}: a rule selects no metric: {e}");
            for name in names {
                assert!(
                    name == "up" || exported.contains(&name),
                    "{file} queries {name}, which /metrics does not have: {e}"
                );
            }
        }
    }
}
