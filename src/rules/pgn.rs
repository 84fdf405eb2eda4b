//! PGN export of a [`Game`].

use std::fmt::Write as _;

use super::game::Game;
use super::game_position::{GamePosition, GameRules};
use super::position::{Position, Variant};
use super::square::Color;
use super::variant::AnyPosition;

/// Writes the game as PGN: the seven-tag roster with `Result`, plus `Variant`, `SetUp` and
/// `FEN` for Chess960 games and any non-standard start, then the movetext.
pub fn to_pgn(game: &Game) -> String {
    to_pgn_with_san(game, &game.san_moves())
}

/// As [`to_pgn`], from the game's moves already in SAN (`san[i]` is move `i`), for callers
/// that keep them as the game goes rather than recompute them all.
pub fn to_pgn_with_san(game: &Game, sans: &[String]) -> String {
    to_pgn_with(game, sans, &PgnExtras::default())
}

/// The Seven Tag Roster's first six tags, in its order (the seventh is `Result`).
pub const ROSTER: [&str; 6] = ["Event", "Site", "Date", "Round", "White", "Black"];

/// What a caller that knows more than the board adds to a game's PGN (the service's game
/// lifecycle: the caller's tags, endings decided off the board, clocks).
#[derive(Clone, Debug, Default)]
pub struct PgnExtras {
    /// The `Result` tag and movetext result; `None`: the board's result.
    pub result: Option<&'static str>,
    /// Values of the roster's first six tags, in [`ROSTER`] order; `None` writes the
    /// unknown value (`?`, and `????.??.??` for `Date`).
    pub roster: [Option<String>; 6],
    /// Tags written after the roster and the start tags (`Variant`, `SetUp`, `FEN`), in
    /// order. Values are escaped as PGN asks (`\"` and `\\`); names must be PGN tag names.
    pub tags: Vec<(String, String)>,
    /// `comments[i]`: a comment written after move `i` (without braces).
    pub comments: Vec<String>,
}

/// A tag value as PGN writes it between its quotes: `"` as `\"` and `\` as `\\`
/// (export format, section 8.1.1).
pub fn escape_tag_value(value: &str) -> std::borrow::Cow<'_, str> {
    if !value.contains(['"', '\\']) {
        return std::borrow::Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len() + 4);
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

fn tag_pair(out: &mut String, name: &str, value: &str) {
    writeln!(out, "[{name} \"{}\"]", escape_tag_value(value)).expect("writing to a String");
}

/// As [`to_pgn_with_san`], with a caller's result, tags and a comment after each move.
/// Tag order: the Seven Tag Roster (with the caller's values), then `Variant`, `SetUp`
/// and `FEN` where the start needs them, then [`PgnExtras::tags`]. After a comment,
/// black's move gets its move number (`1... e5`), as PGN's export format asks.
pub fn to_pgn_with(game: &Game, sans: &[String], extras: &PgnExtras) -> String {
    let result = extras.result.unwrap_or_else(|| game.status().result());
    let mut out = String::with_capacity(200 + sans.len() * 7);
    for (name, value) in ROSTER.iter().zip(&extras.roster) {
        let unknown = if *name == "Date" { "????.??.??" } else { "?" };
        tag_pair(&mut out, name, value.as_deref().unwrap_or(unknown));
    }
    tag_pair(&mut out, "Result", result);
    let start = game.start();
    let standard_start = match start {
        GamePosition::Chess(p) => p.variant() == Variant::Standard && *p == Position::new(),
        GamePosition::Lichess(p) => *p == AnyPosition::start(p.kind()),
    };
    if game.rules() != GameRules::Chess(Variant::Standard) {
        // lichess's names: "Chess960", "Atomic", "King of the Hill", "Three-check".
        writeln!(out, "[Variant \"{}\"]", game.rules().name()).expect("writing to a String");
    }
    if !standard_start {
        out.push_str("[SetUp \"1\"]\n");
        writeln!(out, "[FEN \"{}\"]", start.to_fen()).expect("writing to a String");
    }
    for (name, value) in &extras.tags {
        tag_pair(&mut out, name, value);
    }
    out.push('\n');
    let mut text = String::with_capacity(sans.len() * 7 + 8);
    let mut after_comment = false;
    for (i, san) in sans.iter().enumerate() {
        let pos = game.position_at(i).expect("a position precedes every move");
        if pos.turn() == Color::White {
            write!(text, "{}. ", pos.fullmoves()).expect("writing to a String");
        } else if i == 0 || after_comment {
            write!(text, "{}... ", pos.fullmoves()).expect("writing to a String");
        }
        text.push_str(san);
        text.push(' ');
        after_comment = false;
        if let Some(comment) = extras.comments.get(i) {
            write!(text, "{{{comment}}} ").expect("writing to a String");
            after_comment = true;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extras_add_tags_result_and_comments_with_black_move_numbers() {
        let mut game = Game::new(Position::new());
        for m in ["e2e4", "e7e5", "g1f3"] {
            game.play_text(m).expect("legal");
        }
        let sans = game.san_moves();
        let extras = PgnExtras {
            result: Some("0-1"),
            tags: vec![("Termination".into(), "normal".into())],
            comments: vec!["a".into(), "b".into(), "c".into()],
            ..PgnExtras::default()
        };
        let pgn = to_pgn_with(&game, &sans, &extras);
        assert!(
            pgn.contains("[Result \"0-1\"]\n[Termination \"normal\"]\n"),
            "{pgn}"
        );
        assert!(
            pgn.ends_with("1. e4 {a} 1... e5 {b} 2. Nf3 {c} 0-1\n"),
            "{pgn}"
        );
        // No extras: exactly the plain export.
        assert!(to_pgn(&game).starts_with(
            "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n[White \"?\"]\n[Black \"?\"]\n[Result \"*\"]\n\n"
        ));
        assert_eq!(
            to_pgn_with(&game, &sans, &PgnExtras::default()),
            to_pgn(&game)
        );
    }

    #[test]
    fn roster_values_start_tags_then_extra_tags_in_order_and_escaped() {
        let start = Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", Variant::Standard)
            .expect("a legal FEN");
        let game = Game::new(start);
        let mut roster: [Option<String>; 6] = Default::default();
        roster[0] = Some("Club \"Open\" \\ 2026".into());
        roster[2] = Some("2026.12.01".into());
        roster[5] = Some("Doe, Jane".into());
        let extras = PgnExtras {
            roster,
            tags: vec![
                ("TimeControl".into(), "60+1".into()),
                ("Annotator".into(), "a\\b".into()),
            ],
            ..PgnExtras::default()
        };
        let pgn = to_pgn_with(&game, &[], &extras);
        assert_eq!(
            pgn,
            "[Event \"Club \\\"Open\\\" \\\\ 2026\"]\n[Site \"?\"]\n[Date \"2026.12.01\"]\n\
             [Round \"?\"]\n[White \"?\"]\n[Black \"Doe, Jane\"]\n[Result \"*\"]\n\
             [SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n\
             [TimeControl \"60+1\"]\n[Annotator \"a\\\\b\"]\n\n*\n"
        );
        assert_eq!(escape_tag_value("plain"), "plain");
        assert_eq!(escape_tag_value("\"\\\""), "\\\"\\\\\\\"");
    }
}
