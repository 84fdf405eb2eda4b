//! python-chess's corpus of the lichess variants (tests/data/variants/corpus_variants.jsonl.gz):
//! one record per position of seeded random games, as tests/data/variants/SOURCES.md says.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};

use serde::Deserialize;

/// How python-chess says a position ends.
#[derive(Deserialize)]
pub struct End {
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// python-chess's termination: `checkmate`, `variant_win`, `stalemate`...
    pub why: String,
}

/// One position.
#[derive(Deserialize)]
pub struct Record {
    /// lichess's key of the variant (`atomic`, `kingOfTheHill`).
    pub variant: String,
    pub fen: String,
    /// Every legal move in UCI.
    pub legal: Vec<String>,
    /// SAN of a sample of the legal moves, by UCI.
    #[serde(default)]
    pub san: HashMap<String, String>,
    pub check: bool,
    pub end: Option<End>,
    /// Insufficient material of white, then black.
    pub insufficient: [bool; 2],
    /// The move the game went on with, and the FEN after it.
    pub played: Option<String>,
    pub fen_after: Option<String>,
}

/// Every record, in file order (games one after another).
pub fn records() -> Vec<Record> {
    let path = format!(
        "{}/tests/data/variants/corpus_variants.jsonl.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|line| serde_json::from_str(&line.expect("readable")).expect("a corpus record"))
        .collect()
}
