//! Differential test of the variants against python-chess 1.11.2 (an independent
//! implementation): every record of tests/data/variants/corpus_variants.jsonl.gz must
//! agree on the legal moves, the SAN sample, check, the outcome, insufficient material
//! for each side and the position after the move played.

use std::collections::HashMap;

use crate::common::variant_corpus::{Record, records};
use chess_service::rules::Color;
use chess_service::rules::variant::{
    Antichess, Atomic, Crazyhouse, Horde, KingOfTheHill, RacingKings, ThreeCheck, VariantEnd,
    VariantOutcome, VariantPosition, VariantRules,
};

/// python-chess's (result, termination) for a position with no move left, or `None`
/// where the game goes on (or ends only by a rule of the game's history).
fn expected_end<R: VariantRules>(pos: &VariantPosition<R>) -> Option<(String, &'static str)> {
    let result = |c: Color| if c == Color::White { "1-0" } else { "0-1" }.to_string();
    match pos.outcome() {
        Some(VariantOutcome::Variant(VariantEnd::Win(c))) => Some((
            result(c),
            if c == pos.turn() {
                "variant_win"
            } else {
                "variant_loss"
            },
        )),
        Some(VariantOutcome::Variant(VariantEnd::Draw)) => Some(("1/2-1/2".into(), "variant_draw")),
        Some(VariantOutcome::Checkmate { winner }) => Some((result(winner), "checkmate")),
        Some(VariantOutcome::Stalemate)
            if !(pos.has_insufficient_material(Color::White)
                && pos.has_insufficient_material(Color::Black)) =>
        {
            Some(("1/2-1/2".into(), "stalemate"))
        }
        _ if pos.has_insufficient_material(Color::White)
            && pos.has_insufficient_material(Color::Black) =>
        {
            Some(("1/2-1/2".into(), "insufficient_material"))
        }
        _ => None,
    }
}

/// What one variant's records exercised: positions, SAN strings, endings by kind.
#[derive(Default)]
struct Exercised {
    positions: usize,
    sans: usize,
    ends: HashMap<String, usize>,
}

fn check_variant<R: VariantRules>(records: &[&Record], exercised: &mut Exercised) {
    let mut failures = Vec::new();
    let mut fail = |what: String| {
        if failures.len() < 20 {
            failures.push(what);
        }
    };
    let mut seen = HashMap::<String, u32>::new();
    let mut previous_after: Option<&str> = None;
    for r in records {
        if previous_after != Some(r.fen.as_str()) {
            seen.clear();
        }
        previous_after = r.fen_after.as_deref();
        let pos = match VariantPosition::<R>::from_fen(&r.fen) {
            Ok(pos) => pos,
            Err(e) => {
                fail(format!("{}: refused: {e}", r.fen));
                continue;
            }
        };
        // The repetition identity: the FEN without its clocks.
        let identity: Vec<&str> = r.fen.split(' ').collect();
        let key = format!(
            "{} {} {} {}",
            identity[0], identity[1], identity[2], identity[3]
        );
        let repeats = {
            let n = seen.entry(key).or_insert(0);
            *n += 1;
            *n
        };
        let legal = pos.legal_moves();
        let mut ours: Vec<String> = legal.iter().map(|&m| pos.uci(m)).collect();
        ours.sort();
        if ours != r.legal {
            fail(format!(
                "{}: legal moves differ:\n  ours   {ours:?}\n  theirs {:?}",
                r.fen, r.legal
            ));
            continue;
        }
        if pos.is_check() != r.check {
            fail(format!(
                "{}: check: ours {}, theirs {}",
                r.fen,
                pos.is_check(),
                r.check
            ));
        }
        let insufficient = [
            pos.has_insufficient_material(Color::White),
            pos.has_insufficient_material(Color::Black),
        ];
        if insufficient != r.insufficient {
            fail(format!(
                "{}: insufficient material: ours {insufficient:?}, theirs {:?}",
                r.fen, r.insufficient
            ));
        }
        let theirs_end = r.end.as_ref().map(|e| (e.result.clone(), e.why.as_str()));
        if let Some(end) = &r.end {
            *exercised.ends.entry(end.why.clone()).or_default() += 1;
        }
        exercised.sans += r.san.len();
        let ours_end = expected_end(&pos);
        let history_end = matches!(
            theirs_end.as_ref().map(|e| e.1),
            Some("seventyfive_moves" | "fivefold_repetition")
        );
        if history_end && ours_end.is_none() {
            let why = theirs_end.as_ref().expect("history end").1;
            let halfmoves = pos.board().halfmoves();
            let agrees = match why {
                "seventyfive_moves" => halfmoves >= 150 && R::KEY != "crazyhouse",
                _ => repeats >= 5,
            };
            if !agrees {
                fail(format!(
                    "{}: {why}, but halfmoves {halfmoves}, repeats {repeats}",
                    r.fen
                ));
            }
        } else if ours_end.as_ref().map(|(r, w)| (r.clone(), *w)) != theirs_end {
            fail(format!(
                "{}: end: ours {ours_end:?}, theirs {theirs_end:?}",
                r.fen
            ));
        }
        // Every legal move reads back from its UCI.
        for &m in legal.iter() {
            if pos.parse_uci(&pos.uci(m)) != Ok(m) {
                fail(format!(
                    "{}: {} does not read back as UCI",
                    r.fen,
                    pos.uci(m)
                ));
            }
        }
        for (uci, san) in &r.san {
            match legal.iter().find(|&&m| pos.uci(m) == *uci) {
                Some(&m) if pos.san(m) == *san && pos.parse_san(san) == Ok(m) => {}
                Some(&m) => fail(format!(
                    "{}: {uci}: SAN ours {}, theirs {san}",
                    r.fen,
                    pos.san(m)
                )),
                None => fail(format!("{}: {uci} is not one of our moves", r.fen)),
            }
        }
        if let (Some(played), Some(fen_after)) = (&r.played, &r.fen_after) {
            let Some(&m) = legal.iter().find(|&&m| pos.uci(m) == *played) else {
                fail(format!(
                    "{}: played {played} is not one of our moves",
                    r.fen
                ));
                continue;
            };
            let ours = pos.after(m);
            // Our own FEN reads back as the same position, key included.
            match VariantPosition::<R>::from_fen(&ours.to_fen()) {
                Ok(again) if again == ours => {}
                _ => fail(format!("{}: our FEN does not read back", ours.to_fen())),
            }
            if ours.board().zobrist() != ours.board().zobrist_from_scratch() {
                fail(format!(
                    "{}: the key drifted from the position",
                    ours.to_fen()
                ));
            }
            match VariantPosition::<R>::from_fen(fen_after) {
                Ok(theirs) if theirs == ours => {}
                Ok(_) => fail(format!(
                    "{} {played}: after: ours {}, theirs {fen_after}",
                    r.fen,
                    ours.to_fen()
                )),
                Err(e) => fail(format!("{fen_after}: refused: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}: {} disagreements with python-chess (first 20):\n{}",
        R::KEY,
        failures.len(),
        failures.join("\n")
    );
    exercised.positions += records.len();
}

#[test]
fn every_variant_agrees_with_python_chess() {
    let all = records();
    let of = |key: &str| all.iter().filter(|r| r.variant == key).collect::<Vec<_>>();
    let mut seen = Exercised::default();
    check_variant::<Atomic>(&of("atomic"), &mut seen);
    check_variant::<Crazyhouse>(&of("crazyhouse"), &mut seen);
    check_variant::<Antichess>(&of("antichess"), &mut seen);
    check_variant::<Horde>(&of("horde"), &mut seen);
    check_variant::<RacingKings>(&of("racingKings"), &mut seen);
    check_variant::<KingOfTheHill>(&of("kingOfTheHill"), &mut seen);
    check_variant::<ThreeCheck>(&of("threeCheck"), &mut seen);
    assert_eq!(seen.positions, all.len(), "a record of an unknown variant");
    // The corpus must exercise what it claims to: SAN, and the variants' own endings.
    assert!(
        seen.sans > 100_000,
        "only {} SAN strings compared",
        seen.sans
    );
    for why in ["checkmate", "variant_win", "variant_loss"] {
        assert!(
            seen.ends.get(why).is_some_and(|&n| n > 0),
            "no game ended by {why}"
        );
    }
    eprintln!(
        "{} variant positions and {} SAN strings agree with python-chess; endings: {:?}",
        seen.positions, seen.sans, seen.ends
    );
}
