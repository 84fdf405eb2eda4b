//! Any bytes as SAN (or any move text), in a few positions: never panics, and what parses
//! is a legal move whose own SAN parses back to it.
#![no_main]

use chess_service::rules::{Position, Variant};
use libfuzzer_sys::fuzz_target;

const FENS: [(&str, Variant); 4] = [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", Variant::Standard),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", Variant::Standard),
    ("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", Variant::Standard),
    ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", Variant::Chess960),
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for (fen, variant) in FENS {
        let pos = Position::from_fen(fen, variant).expect("fixed FENs are valid");
        if let Ok(m) = pos.parse_san(text) {
            assert!(pos.is_legal(m));
            assert_eq!(pos.parse_san(&pos.san(m)), Ok(m));
        }
        let _ = pos.parse_move(text);
    }
});
