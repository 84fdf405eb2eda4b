//! LegalMoves-by-FEN's positions: the perft suites, each call with a FEN no call sent before.

use chess_service::pb;

/// The perft suites' positions (FEN without the move counters, and the variant), for
/// LegalMoves by FEN with a new FEN on every call.
pub(crate) fn suite_positions() -> Vec<(String, i32)> {
    let files = [
        (
            include_str!("../../../tests/data/standard.epd"),
            pb::Variant::Standard,
        ),
        (
            include_str!("../../../tests/data/cpw.epd"),
            pb::Variant::Standard,
        ),
        (
            include_str!("../../../tests/data/chess960.epd"),
            pb::Variant::Chess960,
        ),
    ];
    let mut out = Vec::new();
    for (text, variant) in files {
        for line in text.lines() {
            let fen = line.split(';').next().unwrap_or("");
            let fields: Vec<&str> = fen.split_whitespace().collect();
            if fields.len() < 4 {
                continue;
            }
            // Placement, side, castling, en passant and the half-move clock; the
            // full-move number is added per call.
            let halfmoves = fields.get(4).copied().unwrap_or("0");
            out.push((
                format!("{} {halfmoves}", fields[..4].join(" ")),
                variant as i32,
            ));
        }
    }
    out
}

/// Numbers LegalMoves-by-FEN calls across the whole process (all runs), so no two calls
/// send the same FEN. Starts at a value taken from the clock so that two processes in a
/// row against one server do not repeat each other's FENs either.
pub(crate) static FEN_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Which call of the process this is, for a FEN no other call sent.
pub(crate) fn next_fen_serial() -> u64 {
    FEN_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
