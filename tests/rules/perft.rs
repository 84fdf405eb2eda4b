//! Perft against published counts: the proof that move generation follows the rules.
//! Every position of the three suites, every depth whose count is at most 10,000,000,
//! plus the two deep classics.

use std::sync::atomic::AtomicBool;

use crate::common::epd::load_epd;
use chess_service::rules::perft::perft_portable;
use chess_service::rules::{Position, Variant, perft, perft_divide, perft_parallel};

const MAX_NODES: u64 = 10_000_000;
const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

fn check_suite(name: &str, variant: Variant) {
    let suite = load_epd(name, variant);
    assert!(!suite.is_empty());
    let mut checked = 0;
    let mut failures = Vec::new();
    let never = AtomicBool::new(false);
    for entry in &suite {
        for &(depth, expected) in entry.counts.iter().filter(|(_, n)| *n <= MAX_NODES) {
            let got = perft_parallel(&entry.position, depth, 0, false, &never)
                .expect("not stopped")
                .nodes;
            if got != expected {
                failures.push(format!(
                    "{} depth {depth}: expected {expected}, got {got}",
                    entry.fen
                ));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} of {checked} counts differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!(
        "{name}: {checked} counts over {} positions match",
        suite.len()
    );
}

#[test]
fn cpw_suite() {
    check_suite("cpw.epd", Variant::Standard);
}

#[test]
fn standard_suite() {
    check_suite("standard.epd", Variant::Standard);
}

#[test]
fn chess960_suite() {
    check_suite("chess960.epd", Variant::Chess960);
}

#[test]
fn start_position_depth_6() {
    assert_eq!(perft(&Position::new(), 6), 119_060_324);
}

#[test]
fn kiwipete_depth_5() {
    let pos = Position::from_fen(KIWIPETE, Variant::Standard).unwrap();
    assert_eq!(perft(&pos, 5), 193_690_690);
}

/// The two bugs the seeds planted: castling through an attacked square (2,043 instead of
/// 2,039) and keeping a castling right after the rook is captured at home (4,085,659
/// instead of 4,085,603).
#[test]
fn kiwipete_planted_bugs() {
    let pos = Position::from_fen(KIWIPETE, Variant::Standard).unwrap();
    assert_eq!(perft(&pos, 2), 2_039);
    assert_eq!(perft(&pos, 4), 4_085_603);
}

/// The portable (magic multiplication) back-end gives the same counts as the BMI2 one.
#[test]
fn portable_backend_matches() {
    for entry in load_epd("cpw.epd", Variant::Standard) {
        for &(depth, expected) in entry.counts.iter().filter(|(_, n)| *n <= 2_000_000) {
            assert_eq!(
                perft_portable(&entry.position, depth),
                expected,
                "{} depth {depth}",
                entry.fen
            );
        }
    }
    for entry in load_epd("chess960.epd", Variant::Chess960)
        .iter()
        .step_by(20)
    {
        for &(depth, expected) in entry.counts.iter().filter(|(_, n)| *n <= 200_000) {
            assert_eq!(
                perft_portable(&entry.position, depth),
                expected,
                "{} depth {depth}",
                entry.fen
            );
        }
    }
}

#[test]
fn divide_sums_to_total_and_depth_zero_is_one() {
    let pos = Position::from_fen(KIWIPETE, Variant::Standard).unwrap();
    let divide = perft_divide(&pos, 3);
    assert_eq!(divide.len(), 48);
    assert_eq!(divide.iter().map(|(_, n)| n).sum::<u64>(), 97_862);
    assert_eq!(perft(&pos, 0), 1);
    let never = AtomicBool::new(false);
    let r = perft_parallel(&pos, 0, 2, true, &never).unwrap();
    assert_eq!(r.nodes, 1);
}

#[test]
fn parallel_matches_single_thread_and_stops() {
    let pos = Position::new();
    let never = AtomicBool::new(false);
    let r = perft_parallel(&pos, 5, 2, true, &never).unwrap();
    assert_eq!(r.nodes, 4_865_609);
    assert_eq!(r.divide.iter().map(|(_, n)| n).sum::<u64>(), 4_865_609);
    let stop = AtomicBool::new(true);
    assert!(perft_parallel(&pos, 7, 2, false, &stop).is_err());
}
