//! The EPD perft suites of `tests/data/`: each line a FEN and its published counts
//! (`;D1 20 ;D2 400 ...`).

use chess_service::rules::{Position, Variant};

/// One EPD line: a position and its published perft counts by depth (index 0 = depth 1).
pub struct EpdEntry {
    pub fen: String,
    pub position: Position,
    pub counts: Vec<(u32, u64)>,
}

pub fn data_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

pub fn load_epd(name: &str, variant: Variant) -> Vec<EpdEntry> {
    let text = std::fs::read_to_string(data_path(name)).expect("test data present");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut parts = line.split(';');
            let fen = parts
                .next()
                .expect("a FEN before the counts")
                .trim()
                .to_string();
            let counts = parts
                .map(|p| {
                    let p = p.trim();
                    let (d, n) = p
                        .split_once(' ')
                        .unwrap_or_else(|| panic!("bad count '{p}' in {line}"));
                    (
                        d.trim_start_matches('D').parse().expect("depth"),
                        n.trim().parse().expect("count"),
                    )
                })
                .collect();
            let position =
                Position::from_fen(&fen, variant).unwrap_or_else(|e| panic!("{fen}: {e}"));
            EpdEntry {
                fen,
                position,
                counts,
            }
        })
        .collect()
}
