//! Any bytes as FEN: never panics; whatever parses round-trips and generates moves.
#![no_main]

use chess_service::rules::{Position, Variant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for variant in [Variant::Standard, Variant::Chess960] {
        if let Ok(pos) = Position::from_fen(text, variant) {
            assert_eq!(pos.zobrist(), pos.zobrist_from_scratch());
            let again = Position::from_fen(&pos.to_fen(), variant).expect("FEN out parses back");
            assert_eq!(again, pos);
            for m in pos.legal_moves().iter() {
                let _ = pos.san(*m);
            }
        }
    }
});
