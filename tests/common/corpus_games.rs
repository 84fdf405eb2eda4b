//! The corpus games as full games: each game's last record holds every move from its
//! start (`history_uci` plus `move_played_uci`). Shared by the store tests and the store
//! benchmark (which includes this file by path).

#![allow(dead_code)]
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

use chess_service::rules::chess960;
use chess_service::rules::{Game, Position, Variant};
use chess_service::store::Start;

pub struct CorpusGame {
    pub game_id: u64,
    pub variant: Variant,
    pub start: Start,
    pub game: Game,
}

/// How the store would name this start: the standard position, a Chess960 number, or
/// canonical FEN.
pub fn start_of(pos: &Position) -> Start {
    let variant = pos.variant();
    if *pos == Position::new() && variant == Variant::Standard {
        return Start::Standard;
    }
    if let Some(n) = chess960::number_of(pos)
        && chess960::start_position(n, variant).ok().as_ref() == Some(pos)
    {
        return Start::Chess960(n);
    }
    Start::Fen(pos.to_fen())
}

/// The corpus games, read once per test binary.
pub fn corpus_games() -> &'static [CorpusGame] {
    static GAMES: std::sync::OnceLock<Vec<CorpusGame>> = std::sync::OnceLock::new();
    GAMES.get_or_init(load_corpus_games)
}

pub fn load_corpus_games() -> Vec<CorpusGame> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus.jsonl.gz");
    let file = std::fs::File::open(&path).expect("tests/data/corpus.jsonl.gz is present");
    let reader = BufReader::new(flate2::read::GzDecoder::new(file));
    // game_id -> (ply, variant, start_fen, moves)
    let mut last: BTreeMap<u64, (u64, String, String, Vec<String>)> = BTreeMap::new();
    for line in reader.lines() {
        let line = line.expect("corpus is readable");
        let r: serde_json::Value = serde_json::from_str(&line).expect("corpus line is JSON");
        let id = r["game_id"].as_u64().expect("game_id");
        let ply = r["ply"].as_u64().expect("ply");
        if last.get(&id).is_some_and(|(p, ..)| *p >= ply) {
            continue;
        }
        let mut moves: Vec<String> = r["history_uci"]
            .as_array()
            .expect("history_uci")
            .iter()
            .map(|m| m.as_str().expect("uci string").to_string())
            .collect();
        if let Some(m) = r["move_played_uci"].as_str() {
            moves.push(m.to_string());
        }
        let variant = r["variant"].as_str().expect("variant").to_string();
        let start = r["start_fen"].as_str().expect("start_fen").to_string();
        last.insert(id, (ply, variant, start, moves));
    }
    last.into_iter()
        .map(|(game_id, (_, variant, start_fen, moves))| {
            let variant = match variant.as_str() {
                "standard" => Variant::Standard,
                "chess960" => Variant::Chess960,
                v => panic!("unknown variant {v}"),
            };
            let start = Position::from_fen(&start_fen, variant).expect("corpus start FEN parses");
            let mut game = Game::new(start);
            for m in &moves {
                let mv = game
                    .position()
                    .board()
                    .parse_uci(m)
                    .expect("corpus move parses");
                game.play(mv).expect("corpus move is legal");
            }
            CorpusGame {
                game_id,
                variant,
                start: start_of(&start),
                game,
            }
        })
        .collect()
}
