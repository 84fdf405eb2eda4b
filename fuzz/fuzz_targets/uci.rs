//! Any bytes as UCI move text, in a few positions of every kind: never panics, and what
//! parses is a legal move that prints back to a form that parses to the same move.
#![no_main]

use chess_service::rules::{Position, Variant};
use libfuzzer_sys::fuzz_target;

const FENS: [(&str, Variant); 4] = [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", Variant::Standard),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", Variant::Standard),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", Variant::Standard),
    ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", Variant::Chess960),
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for (fen, variant) in FENS {
        let pos = Position::from_fen(fen, variant).expect("fixed FENs are valid");
        if let Ok(m) = pos.parse_uci(text) {
            assert!(pos.is_legal(m));
            assert_eq!(pos.parse_uci(&pos.uci(m)), Ok(m));
        }
    }
});
