//! Perft for lichess's variants against scalachess's published suites
//! (tests/data/variants/*.perft): every position, every depth up to 10,000,000 nodes.

use chess_service::rules::variant::{
    Antichess, Atomic, Crazyhouse, Horde, RacingKings, ThreeCheck, VariantPosition, VariantRules,
};

const MAX_NODES: u64 = 10_000_000;

/// One suite entry: its id, EPD and (depth, nodes) counts.
struct Entry {
    id: String,
    epd: String,
    counts: Vec<(u32, u64)>,
}

fn load(file: &str) -> Vec<Entry> {
    let path = format!("{}/tests/data/variants/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut entries: Vec<Entry> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "id" => entries.push(Entry {
                id: rest.to_string(),
                epd: String::new(),
                counts: Vec::new(),
            }),
            "epd" => entries.last_mut().expect("id first").epd = rest.to_string(),
            "perft" => {
                let (depth, nodes) = rest.split_once(' ').expect("perft DEPTH NODES");
                entries
                    .last_mut()
                    .expect("id first")
                    .counts
                    .push((depth.parse().unwrap(), nodes.parse().unwrap()));
            }
            other => panic!("{path}: unknown line kind {other:?}"),
        }
    }
    assert!(!entries.is_empty(), "{path} holds no position");
    entries
}

fn check<R: VariantRules>(file: &str) {
    let mut failures = Vec::new();
    let mut checked = 0;
    let entries = load(file);
    for entry in &entries {
        let pos = VariantPosition::<R>::from_fen(&entry.epd)
            .unwrap_or_else(|e| panic!("{} ({}): {e}", entry.id, entry.epd));
        for &(depth, expected) in entry.counts.iter().filter(|(_, n)| *n <= MAX_NODES) {
            let got = pos.perft(depth);
            if got != expected {
                failures.push(format!(
                    "{} ({}) depth {depth}: expected {expected}, got {got}",
                    entry.id, entry.epd
                ));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{file}: {} of {checked} counts differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!(
        "{file}: {checked} counts over {} positions match",
        entries.len()
    );
}

#[test]
fn atomic() {
    check::<Atomic>("atomic.perft");
}

#[test]
fn crazyhouse() {
    check::<Crazyhouse>("crazyhouse.perft");
}

#[test]
fn antichess() {
    check::<Antichess>("antichess.perft");
}

#[test]
fn horde() {
    check::<Horde>("horde.perft");
}

#[test]
fn racing_kings() {
    check::<RacingKings>("racingkings.perft");
}

#[test]
fn three_check() {
    check::<ThreeCheck>("3check.perft");
}
