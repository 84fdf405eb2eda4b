//! PGN export of a [`Game`].

use std::fmt::Write as _;

use super::game::Game;
use super::position::{Position, Variant};
use super::square::Color;

/// Writes the game as PGN: the seven-tag roster with `Result`, plus `Variant`, `SetUp` and
/// `FEN` for Chess960 games and any non-standard start, then the movetext.
pub fn to_pgn(game: &Game) -> String {
    to_pgn_with_san(game, &game.san_moves())
}

/// As [`to_pgn`], from the game's moves already in SAN (`san[i]` is move `i`), for callers
/// that keep them as the game goes rather than recompute them all.
pub fn to_pgn_with_san(game: &Game, sans: &[String]) -> String {
    let result = game.status().result();
    let mut out = String::with_capacity(200 + sans.len() * 7);
    for (tag, value) in [
        ("Event", "?"),
        ("Site", "?"),
        ("Date", "????.??.??"),
        ("Round", "?"),
        ("White", "?"),
        ("Black", "?"),
        ("Result", result),
    ] {
        writeln!(out, "[{tag} \"{value}\"]").expect("writing to a String");
    }
    let start = game.start();
    let standard_start = start.variant() == Variant::Standard && *start == Position::new();
    if game.variant() == Variant::Chess960 {
        out.push_str("[Variant \"Chess960\"]\n");
    }
    if !standard_start {
        out.push_str("[SetUp \"1\"]\n");
        writeln!(out, "[FEN \"{}\"]", start.to_fen()).expect("writing to a String");
    }
    out.push('\n');
    let mut text = String::with_capacity(sans.len() * 7 + 8);
    for (i, san) in sans.iter().enumerate() {
        let pos = game.position_at(i).expect("a position precedes every move");
        if pos.turn() == Color::White {
            write!(text, "{}. ", pos.fullmoves()).expect("writing to a String");
        } else if i == 0 {
            write!(text, "{}... ", pos.fullmoves()).expect("writing to a String");
        }
        text.push_str(san);
        text.push(' ');
    }
    text.push_str(result);
    out.push_str(&wrap(&text, 79));
    out.push('\n');
    out
}

/// Wraps movetext at word boundaries, as PGN export format asks (lines under 80 columns).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / width);
    let mut line_len = 0;
    for word in text.split(' ') {
        if line_len > 0 && line_len + 1 + word.len() > width {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += word.len();
    }
    out
}
