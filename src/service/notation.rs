//! Notation for whole lists at once, for the hot paths of the service.
//!
//! `Position::san` regenerates the legal moves for every move it writes (to disambiguate
//! `Nbd2` from `Nfd2`), and `pgn::to_pgn` recomputes every SAN of the game. Listing 40
//! legal moves, or answering each Play of a long game, would pay that many times over.
//! These helpers share one legal move list per position, and write PGN from SAN already
//! known. They produce exactly the rules engine's text: the tests compare them with
//! `Position::san` and `pgn::to_pgn` on the perft suites and on random games.

use std::fmt::Write as _;

use crate::rules::{Color, Game, Move, Position, Role, Variant};

/// The SAN of each move of `legal`, which must be the complete legal move list of `pos`.
pub fn san_all(pos: &Position, legal: &[Move]) -> Vec<String> {
    legal.iter().map(|&m| san_in(pos, m, legal)).collect()
}

/// The SAN of `m` in `pos`, disambiguated against `legal` (all legal moves of `pos`).
fn san_in(pos: &Position, m: Move, legal: &[Move]) -> String {
    let mut san = String::with_capacity(8);
    if m.is_castle() {
        san.push_str(if m.is_king_side_castle() {
            "O-O"
        } else {
            "O-O-O"
        });
    } else {
        let capture = pos.is_capture(m);
        if m.role == Role::Pawn {
            if capture {
                san.push(m.from.file().char());
            }
        } else {
            san.push(m.role.upper_char());
            let mut others = legal
                .iter()
                .filter(|o| o.role == m.role && o.to == m.to && o.from != m.from && !o.is_castle())
                .peekable();
            if others.peek().is_some() {
                let (mut same_rank, mut same_file) = (false, false);
                for o in others {
                    same_rank |= o.from.rank() == m.from.rank();
                    same_file |= o.from.file() == m.from.file();
                }
                if same_rank || !same_file {
                    san.push(m.from.file().char());
                }
                if same_file {
                    san.push(m.from.rank().char());
                }
            }
        }
        if capture {
            san.push('x');
        }
        // Squares display as their names ("e4").
        let _ = write!(san, "{}", m.to);
        if let Some(p) = m.promotion() {
            san.push('=');
            san.push(p.upper_char());
        }
    }
    let after = pos.after(m);
    if after.is_check() {
        san.push(if after.has_legal_move() { '+' } else { '#' });
    }
    san
}

/// The game as PGN, written from its SAN moves (`san[i]` is move `i`): the same text as
/// `rules::pgn::to_pgn(game)` without recomputing any SAN.
pub fn pgn_with_san(game: &Game, san: &[String]) -> String {
    let result = game.status().result();
    let mut out = String::with_capacity(200 + san.len() * 7);
    for (tag, value) in [
        ("Event", "?"),
        ("Site", "?"),
        ("Date", "????.??.??"),
        ("Round", "?"),
        ("White", "?"),
        ("Black", "?"),
        ("Result", result),
    ] {
        let _ = writeln!(out, "[{tag} \"{value}\"]");
    }
    let start = game.start();
    let standard_start = start.variant() == Variant::Standard && *start == Position::new();
    if game.variant() == Variant::Chess960 {
        out.push_str("[Variant \"Chess960\"]\n");
    }
    if !standard_start {
        out.push_str("[SetUp \"1\"]\n");
        let _ = writeln!(out, "[FEN \"{}\"]", start.to_fen());
    }
    out.push('\n');
    let mut text = String::with_capacity(san.len() * 7 + 8);
    for (i, san) in san.iter().enumerate() {
        if let Some(pos) = game.position_at(i) {
            if pos.turn() == Color::White {
                let _ = write!(text, "{}. ", pos.fullmoves());
            } else if i == 0 {
                let _ = write!(text, "{}... ", pos.fullmoves());
            }
        }
        text.push_str(san);
        text.push(' ');
    }
    text.push_str(result);
    wrap_into(&mut out, &text, 79);
    out.push('\n');
    out
}

/// Wraps movetext at word boundaries into lines under 80 columns, as PGN export asks.
fn wrap_into(out: &mut String, text: &str, width: usize) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::pgn;

    /// Positions of the perft suites (every EPD line's FEN) with their variants.
    fn suite_positions() -> Vec<Position> {
        let mut out = Vec::new();
        for (file, variant) in [
            (
                include_str!("../../tests/data/standard.epd"),
                Variant::Standard,
            ),
            (include_str!("../../tests/data/cpw.epd"), Variant::Standard),
            (
                include_str!("../../tests/data/chess960.epd"),
                Variant::Chess960,
            ),
        ] {
            for line in file.lines() {
                let fen = line.split(';').next().unwrap_or_default().trim();
                if let Ok(pos) = Position::from_fen(fen, variant) {
                    out.push(pos);
                }
            }
        }
        out
    }

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    #[test]
    fn batch_san_and_pgn_match_the_rules_engine() {
        let positions = suite_positions();
        assert!(
            positions.len() > 500,
            "the suites are there: {}",
            positions.len()
        );
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut checked = 0;
        for (i, start) in positions.iter().enumerate() {
            // Walk a random game from each suite position, checking every position's
            // full SAN list, then the PGN of the game.
            let mut game = Game::new(*start);
            let mut sans = Vec::new();
            for _ in 0..if i % 8 == 0 { 120 } else { 24 } {
                let pos = *game.position();
                let legal = pos.legal_moves();
                let ours = san_all(&pos, &legal);
                let theirs: Vec<String> = legal.iter().map(|&m| pos.san(m)).collect();
                assert_eq!(ours, theirs, "SAN differs in {}", pos.to_fen());
                checked += legal.len();
                if legal.is_empty() || game.status().is_over() {
                    break;
                }
                let k = rng.below(legal.len());
                sans.push(ours[k].clone());
                game.play(legal[k]).expect("a legal move plays");
            }
            assert_eq!(
                pgn_with_san(&game, &sans),
                pgn::to_pgn(&game),
                "PGN differs from {}",
                start.to_fen()
            );
        }
        assert!(checked > 100_000, "checked {checked} moves");
    }
}
