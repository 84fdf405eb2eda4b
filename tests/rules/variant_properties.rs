//! Properties of the variants over seeded random games: every legal move's SAN and UCI
//! read back to it, FEN round-trips, the key follows the position, and positions that are
//! equal have equal repetition keys while pockets and checks given tell positions apart.

use std::collections::HashMap;

use crate::common::rng::Rng;
use chess_service::rules::variant::{
    Antichess, Atomic, Crazyhouse, Horde, KingOfTheHill, RacingKings, ThreeCheck, VariantPosition,
    VariantRules,
};

const GAMES: u64 = 12;
const MAX_PLIES: usize = 160;

fn random_games<R: VariantRules>(seed: u64) -> usize {
    let mut rng = Rng(seed);
    let mut checked = 0;
    // Repetition key -> the FEN without clocks of a position that had it.
    let mut keys: HashMap<u64, String> = HashMap::new();
    for _ in 0..GAMES {
        let mut pos = VariantPosition::<R>::new();
        for _ in 0..MAX_PLIES {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                assert!(
                    pos.outcome().is_some(),
                    "{}: no move but no outcome",
                    pos.to_fen()
                );
                break;
            }
            for &m in legal.iter() {
                let san = pos.san(m);
                assert_eq!(pos.parse_san(&san), Ok(m), "{}: SAN {san}", pos.to_fen());
                let uci = pos.uci(m);
                assert_eq!(pos.parse_move(&uci), Ok(m), "{}: UCI {uci}", pos.to_fen());
            }
            let fen = pos.to_fen();
            let again = VariantPosition::<R>::from_fen(&fen).expect("our FEN reads back");
            assert_eq!(again, pos, "{fen}");
            assert_eq!(
                pos.board().zobrist(),
                pos.board().zobrist_from_scratch(),
                "{fen}"
            );
            let identity: Vec<&str> = fen.split(' ').collect();
            // Placement (with pocket), side, castling, en passant, and three-check's counter.
            let mut id = identity[..4].join(" ");
            if let Some(checks) = identity.get(6) {
                id = format!("{id} {checks}");
            }
            let seen = keys
                .entry(pos.repetition_key())
                .or_insert_with(|| id.clone());
            assert_eq!(*seen, id, "two positions share a repetition key");
            checked += 1;
            let m = legal[rng.below(legal.len())];
            pos.play(m);
        }
    }
    checked
}

#[test]
fn variants_hold_their_properties_over_random_games() {
    let mut checked = 0;
    checked += random_games::<Atomic>(1);
    checked += random_games::<Crazyhouse>(2);
    checked += random_games::<Antichess>(3);
    checked += random_games::<Horde>(4);
    checked += random_games::<RacingKings>(5);
    checked += random_games::<KingOfTheHill>(6);
    checked += random_games::<ThreeCheck>(7);
    assert!(checked > 5_000, "only {checked} positions");
    eprintln!("{checked} positions of random variant games hold every property");
}
