//! PGN export of a [`Game`].

use std::fmt::Write as _;

use super::game::Game;
use super::position::{Position, Variant};
use super::square::Color;

/// Writes the game as PGN: the seven-tag roster with `Result`, plus `Variant`, `SetUp` and
/// `FEN` for Chess960 games and any non-standard start, then the movetext.
pub fn to_pgn(game: &Game) -> String {
    let status = game.status();
    let result = status.result();
    let mut out = String::new();
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
    let mut text = String::new();
    let sans = game.san_moves();
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
