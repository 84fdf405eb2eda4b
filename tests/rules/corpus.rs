//! Differential test against an independent implementation: every record of the corpus
//! (60,600 positions from 300 games, produced by python-chess) must agree exactly on legal
//! moves (UCI and SAN), check, status, winner, both draw claims and the next position,
//! and perft's own counters (depths 1 and 2) agree with the move lists.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};

use chess_service::rules::perft::{perft, perft_portable};
use chess_service::rules::{Color, Game, Position, Status, Variant};
use serde::Deserialize;

#[derive(Deserialize)]
struct Record {
    variant: String,
    game_id: u32,
    ply: usize,
    start_fen: String,
    history_uci: Vec<String>,
    fen: String,
    legal_uci: Vec<String>,
    legal_san: Vec<String>,
    in_check: bool,
    status: String,
    winner: Option<String>,
    can_claim_threefold: bool,
    can_claim_fifty: bool,
    move_played_uci: Option<String>,
    move_played_san: Option<String>,
    fen_after: Option<String>,
}

fn status_name(s: Status) -> &'static str {
    match s {
        Status::InProgress => "in_progress",
        Status::Checkmate { .. } => "checkmate",
        Status::Stalemate => "stalemate",
        Status::InsufficientMaterial => "insufficient_material",
        Status::FivefoldRepetition => "fivefold_repetition",
        Status::SeventyFiveMoves => "seventyfive_moves",
        Status::VariantWin { .. } | Status::VariantDraw => "variant_end",
    }
}

fn load() -> Vec<Record> {
    let file = std::fs::File::open(crate::common::epd::data_path("corpus.jsonl.gz"))
        .expect("corpus present");
    let reader = BufReader::new(flate2::read::GzDecoder::new(file));
    reader
        .lines()
        .map(|l| serde_json::from_str(&l.expect("readable")).expect("valid JSON record"))
        .collect()
}

/// Compares one record; returns the differences found.
fn check(r: &Record, games: &mut HashMap<u32, Game>) -> Vec<String> {
    let mut diffs = Vec::new();
    let mut diff = |what: &str, ours: String, theirs: String| {
        if ours != theirs {
            diffs.push(format!(
                "game {} ply {} {what}: ours {ours} / theirs {theirs}",
                r.game_id, r.ply
            ));
        }
    };
    let variant = if r.variant == "chess960" {
        Variant::Chess960
    } else {
        Variant::Standard
    };
    // Replay history_uci from start_fen, as the corpus README asks (every record on its own).
    let start = match Position::from_fen(&r.start_fen, variant) {
        Ok(p) => p,
        Err(e) => return vec![format!("game {} start FEN refused: {e}", r.game_id)],
    };
    let mut game = Game::new(start);
    for uci in &r.history_uci {
        let parsed = game.position().board().parse_uci(uci);
        match parsed.map(|m| game.play(m)) {
            Ok(Ok(())) => {}
            other => {
                return vec![format!(
                    "game {} ply {}: history move {uci} refused: {other:?}",
                    r.game_id, r.ply
                )];
            }
        }
    }
    let pos = *game.position().board();
    match Position::from_fen(&r.fen, variant) {
        Ok(theirs) => diff("position", format!("{pos:?}"), format!("{theirs:?}")),
        Err(e) => diff("fen", String::new(), format!("refused: {e}")),
    }
    let legal = pos.legal_moves();
    let mut uci: Vec<String> = legal.iter().map(|m| pos.uci(*m)).collect();
    uci.sort();
    diff("legal_uci", uci.join(" "), r.legal_uci.join(" "));
    let mut san: Vec<String> = legal.iter().map(|m| pos.san(*m)).collect();
    san.sort();
    diff("legal_san", san.join(" "), r.legal_san.join(" "));
    // Perft counts the last ply with its own counter and makes the children above it
    // with a reduced make (src/rules/leaf.rs, src/rules/perft.rs): both must agree with
    // the oracle's move count and with the generator one ply further, on both back-ends.
    let below: u64 = legal
        .iter()
        .map(|m| pos.after(*m).legal_moves().len() as u64)
        .sum();
    for (backend, count) in [
        ("perft", perft as fn(&Position, u32) -> u64),
        ("perft_portable", perft_portable),
    ] {
        diff(
            &format!("{backend} depth 1"),
            count(&pos, 1).to_string(),
            r.legal_uci.len().to_string(),
        );
        diff(
            &format!("{backend} depth 2"),
            count(&pos, 2).to_string(),
            below.to_string(),
        );
    }
    diff(
        "in_check",
        pos.is_check().to_string(),
        r.in_check.to_string(),
    );
    let status = game.status();
    diff("status", status_name(status).into(), r.status.clone());
    let winner = status
        .winner()
        .map(|c| if c == Color::White { "white" } else { "black" });
    diff(
        "winner",
        format!("{winner:?}"),
        format!("{:?}", r.winner.as_deref()),
    );
    diff(
        "can_claim_threefold",
        game.can_claim_threefold().to_string(),
        r.can_claim_threefold.to_string(),
    );
    diff(
        "can_claim_fifty",
        game.can_claim_fifty_moves().to_string(),
        r.can_claim_fifty.to_string(),
    );
    if let (Some(played), Some(san_played), Some(after)) =
        (&r.move_played_uci, &r.move_played_san, &r.fen_after)
    {
        match pos.parse_uci(played) {
            Ok(m) => {
                diff("move_played_san", pos.san(m), san_played.clone());
                diff(
                    "san parses back",
                    format!("{:?}", pos.parse_san(san_played)),
                    format!("{:?}", Ok::<_, ()>(m)),
                );
                let next = pos.after(m);
                match Position::from_fen(after, variant) {
                    Ok(theirs) => diff("fen_after", format!("{next:?}"), format!("{theirs:?}")),
                    Err(e) => diff("fen_after", String::new(), format!("refused: {e}")),
                }
            }
            Err(e) => diff("move_played_uci", format!("refused: {e}"), played.clone()),
        }
    }
    games.insert(r.game_id, game);
    diffs
}

#[test]
fn corpus_agrees_with_python_chess() {
    let records = load();
    assert_eq!(records.len(), 60_600, "the whole corpus is read");
    let mut games = HashMap::new();
    let mut diffs = Vec::new();
    for r in &records {
        diffs.extend(check(r, &mut games));
    }
    let statuses: std::collections::BTreeSet<&str> =
        records.iter().map(|r| r.status.as_str()).collect();
    eprintln!("statuses covered: {statuses:?}");
    assert!(
        diffs.is_empty(),
        "{} differences, first ones:\n{}",
        diffs.len(),
        diffs[..diffs.len().min(30)].join("\n")
    );
}
