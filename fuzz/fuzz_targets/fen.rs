//! Any bytes as FEN: never panics; whatever parses round-trips and generates moves.
#![no_main]

use chess_service::rules::variant::{
    Antichess, Atomic, Crazyhouse, Horde, KingOfTheHill, RacingKings, ThreeCheck, VariantPosition,
    VariantRules,
};
use chess_service::rules::{Position, Variant};
use libfuzzer_sys::fuzz_target;

/// The same promises for a variant's FEN: parse, write, parse back equal, play every move.
fn variant<R: VariantRules>(text: &str) {
    if let Ok(pos) = VariantPosition::<R>::from_fen(text) {
        let again = VariantPosition::<R>::from_fen(&pos.to_fen()).expect("FEN out parses back");
        assert_eq!(again, pos);
        for m in pos.legal_moves().iter() {
            let _ = pos.san(*m);
            let _ = pos.after(*m).to_fen();
        }
        let _ = pos.outcome();
    }
}

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
    variant::<Atomic>(text);
    variant::<Crazyhouse>(text);
    variant::<Antichess>(text);
    variant::<Horde>(text);
    variant::<RacingKings>(text);
    variant::<KingOfTheHill>(text);
    variant::<ThreeCheck>(text);
});
