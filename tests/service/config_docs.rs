//! docs/operations.md's configuration table is the server's flags: the same flags, each
//! with the environment variable and the default clap declares, so that neither the
//! table nor `--help` can drift from the other. (The Meaning column is prose: a person
//! keeps it true.)

use chess_service::server::Config;
use clap::CommandFactory;
use std::collections::BTreeMap;

const OPERATIONS_MD: &str = include_str!("../../docs/operations.md");

/// What the table says of one flag: its variable and its Default cell.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    env: String,
    default: String,
}

/// The rows of the table under `## Configuration`, by flag.
fn documented() -> BTreeMap<String, Row> {
    let section = OPERATIONS_MD
        .split("\n## ")
        .find(|s| s.starts_with("Configuration\n"))
        .expect("docs/operations.md has a `## Configuration` section");
    let mut rows = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `--")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert!(
            cells.len() >= 4,
            "a row needs Flag, Env, Default, Meaning: {line}"
        );
        let flag = unquote(cells[0]).unwrap_or_else(|| panic!("flag cell not `--flag`: {line}"));
        let env = unquote(cells[1]).unwrap_or_else(|| panic!("env cell not `VAR`: {line}"));
        let row = Row {
            env: env.to_string(),
            default: cells[2].to_string(),
        };
        assert!(
            rows.insert(flag.to_string(), row).is_none(),
            "{flag} has two rows"
        );
    }
    rows
}

/// The text of a cell that is exactly one `code` span.
fn unquote(cell: &str) -> Option<&str> {
    let inner = cell.strip_prefix('`')?.strip_suffix('`')?;
    (!inner.contains('`')).then_some(inner)
}

/// What clap declares, by flag: the variable and the default (None when it has none, and
/// for switches, whose "default" is only `false`).
fn declared() -> BTreeMap<String, (String, Option<String>)> {
    let mut command = Config::command();
    command.build();
    let mut flags = BTreeMap::new();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if id == "help" || id == "version" {
            continue;
        }
        let long = arg
            .get_long()
            .unwrap_or_else(|| panic!("{id} has no long flag"));
        let env = arg
            .get_env()
            .unwrap_or_else(|| panic!("--{long} has no environment variable"))
            .to_string_lossy()
            .into_owned();
        let default = if arg.get_action().takes_values() {
            let values: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            (!values.is_empty()).then(|| values.join(","))
        } else {
            None
        };
        flags.insert(format!("--{long}"), (env, default));
    }
    flags
}

#[test]
fn the_configuration_table_is_what_clap_declares() {
    let documented = documented();
    let declared = declared();
    assert!(declared.len() >= 30, "parsed {declared:?}");

    let only_declared: Vec<&String> = declared
        .keys()
        .filter(|f| !documented.contains_key(*f))
        .collect();
    let only_documented: Vec<&String> = documented
        .keys()
        .filter(|f| !declared.contains_key(*f))
        .collect();
    assert!(
        only_declared.is_empty() && only_documented.is_empty(),
        "docs/operations.md's configuration table and the server's flags differ: \
         flags without a row: {only_declared:?}; rows without a flag: {only_documented:?}"
    );

    for (flag, (env, default)) in &declared {
        let row = &documented[flag];
        assert_eq!(
            &row.env, env,
            "{flag}: the table names the variable {}, the server reads {env}",
            row.env
        );
        match default {
            // The cell opens with the value in code, optionally followed by a gloss:
            // `270336` (264 KiB).
            Some(value) => assert!(
                row.default == format!("`{value}`")
                    || row.default.starts_with(&format!("`{value}` ")),
                "{flag}: the table's default is {:?}, the server's is `{value}`",
                row.default
            ),
            // No default: the cell says what being unset means, in words.
            None => assert!(
                ["none", "off", "unlimited"]
                    .iter()
                    .any(|w| row.default.starts_with(w))
                    && !row.default.starts_with('`'),
                "{flag} has no default in the server, but the table says {:?} \
                 (write none, off or unlimited)",
                row.default
            ),
        }
    }
}

#[test]
fn the_log_lines_promised_are_the_ones_logged() {
    // `--help` and the table promise log lines that operators and scripts look for; they
    // must be the server's own words (src/server/: start-up in mod.rs, the metrics port
    // in compose.rs).
    let server = concat!(
        include_str!("../../src/server/mod.rs"),
        include_str!("../../src/server/compose.rs"),
    );
    let help = Config::command().render_long_help().to_string();
    for (promised, logged, in_help) in [
        ("listening on ADDR", "\"listening on {local}\"", false),
        (
            "Prometheus metrics on ADDR at /metrics",
            "\"Prometheus metrics on {bound} at /metrics\"",
            true,
        ),
    ] {
        assert!(server.contains(logged), "src/server/ does not log {logged}");
        assert!(
            OPERATIONS_MD.contains(&format!("logged as `{promised}`")),
            "docs/operations.md does not say the address is logged as `{promised}`"
        );
        assert!(
            !in_help || help.contains(&format!("logged as `{promised}`")),
            "--help does not say the address is logged as `{promised}`:\n{help}"
        );
    }
}
