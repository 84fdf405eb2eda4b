//! Opening names: lichess's opening-name dataset (CC0, `assets/openings/`, compiled in
//! unchanged) and the classification of a game by it.
//!
//! The dataset names positions by the line that reaches them (`B90 Sicilian Defense:
//! Najdorf Variation`, `1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6`). A game's
//! opening is the named position met last when walking back from its current position, as
//! the dataset's README suggests; positions are matched (by their Zobrist key: placement,
//! side to move, castling rights, a legal en passant square), not move orders, so a
//! transposition into a named position counts. Only games of standard chess from the
//! standard start are classified: a Chess960 game or a game from a custom FEN has no
//! opening name.
//!
//! Cost: the dataset is parsed once, at first use (a few milliseconds; the server does it
//! at start), into a hash table keyed by the Zobrist key, which is already a random 64-bit
//! number and is used as its own hash. A game keeps an [`OpeningTrack`] beside its board:
//! each move probes the table once for the new position, and undo drops the last entry,
//! so answering "which opening" never walks the game again. The rules engine is
//! untouched: this runs in the lifecycle, beside each move a game records.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use crate::rules::{Game, GamePosition, Position, Variant};

/// The dataset's files, compiled in as they are (one `eco<TAB>name<TAB>pgn` line each,
/// after a header line).
const FILES: [(&str, &str); 5] = [
    ("a.tsv", include_str!("../../assets/openings/a.tsv")),
    ("b.tsv", include_str!("../../assets/openings/b.tsv")),
    ("c.tsv", include_str!("../../assets/openings/c.tsv")),
    ("d.tsv", include_str!("../../assets/openings/d.tsv")),
    ("e.tsv", include_str!("../../assets/openings/e.tsv")),
];

/// A game's opening: the named position met last, walking back from the current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opening {
    /// The ECO code, `B90`.
    pub eco: &'static str,
    /// The name, `Sicilian Defense: Najdorf Variation`.
    pub name: &'static str,
    /// The ply at which the game reached that position.
    pub ply: usize,
}

/// One line of the dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedLine {
    /// The ECO code.
    pub eco: &'static str,
    /// The opening's name.
    pub name: &'static str,
    /// The line as PGN movetext from the standard start (`1. e4 c5 2. Nf3`).
    pub pgn: &'static str,
    /// The Zobrist key of the position at the end of the line.
    pub key: u64,
    /// The line's length in plies.
    pub plies: usize,
}

/// The parsed dataset: every line, and the table from a position's key to the line that
/// names it (the first line in the dataset's order when several reach one position).
#[derive(Debug)]
pub struct Book {
    lines: Vec<NamedLine>,
    by_key: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    problems: Vec<String>,
}

/// A Zobrist key is already uniformly random: it is its own hash.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are hashed; fold anything else in so the hasher stays total.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

impl Book {
    /// Parses the dataset. A line that does not parse or replay is left out and noted in
    /// [`Book::problems`] (the tests require there are none): the service must not fail
    /// to start over a name.
    fn parse() -> Book {
        let mut book = Book {
            lines: Vec::with_capacity(4096),
            by_key: HashMap::with_capacity_and_hasher(4096, Default::default()),
            problems: Vec::new(),
        };
        for (file, text) in FILES {
            for (n, line) in text.lines().enumerate().skip(1) {
                if line.trim().is_empty() {
                    continue;
                }
                match parse_line(line) {
                    Ok(named) => {
                        let index = book.lines.len() as u32;
                        book.by_key.entry(named.key).or_insert(index);
                        book.lines.push(named);
                    }
                    Err(why) => book.problems.push(format!("{file}:{}: {why}", n + 1)),
                }
            }
        }
        book
    }

    /// Every line of the dataset that parsed, in the dataset's order.
    pub fn lines(&self) -> &[NamedLine] {
        &self.lines
    }

    /// Lines of the dataset that did not parse or replay (none in the shipped dataset).
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The line that names the position of key `key`, if one does: one hash probe.
    pub fn named(&self, key: u64) -> Option<&NamedLine> {
        self.by_key
            .get(&key)
            .and_then(|&i| self.lines.get(i as usize))
    }

    fn index_of(&self, key: u64) -> Option<u32> {
        self.by_key.get(&key).copied()
    }
}

/// One dataset line: the ECO code, the name and the line, replayed from the start.
fn parse_line(line: &'static str) -> Result<NamedLine, String> {
    let mut fields = line.split('\t');
    let (Some(eco), Some(name), Some(pgn), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err("not three tab-separated fields".into());
    };
    let mut pos = Position::new();
    let mut plies = 0;
    for token in pgn.split_whitespace() {
        // Move numbers: `1.`, `12...`.
        if token.ends_with('.') {
            continue;
        }
        let m = pos
            .parse_move(token)
            .map_err(|e| format!("{token} in '{pgn}': {e}"))?;
        pos = pos.after(m);
        plies += 1;
    }
    if plies == 0 {
        return Err(format!("'{pgn}' has no move"));
    }
    Ok(NamedLine {
        eco,
        name,
        pgn,
        key: pos.zobrist(),
        plies,
    })
}

/// The dataset, parsed at first use.
pub fn book() -> &'static Book {
    static BOOK: OnceLock<Book> = OnceLock::new();
    BOOK.get_or_init(Book::parse)
}

/// Whether a game is one the dataset can name: standard chess from the standard start.
fn classifiable(start: &GamePosition) -> bool {
    start
        .as_chess()
        .is_some_and(|p| p.variant() == Variant::Standard && *p == Position::new())
}

/// Classifies `game` by walking back from its current position (the reference the
/// incremental [`OpeningTrack`] is tested against; a probe per position walked).
pub fn classify(game: &Game) -> Option<Opening> {
    if !classifiable(game.start()) {
        return None;
    }
    let book = book();
    (0..=game.ply()).rev().find_map(|ply| {
        let pos = game.position_at(ply)?;
        book.named(pos.board().zobrist()).map(|line| Opening {
            eco: line.eco,
            name: line.name,
            ply,
        })
    })
}

/// A game's opening kept move by move: for each ply, the named position met last at or
/// before it (its line's index in the book, and its ply). One probe per move; undo pops.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpeningTrack {
    /// Whether the game can be named at all (standard chess from the standard start).
    on: bool,
    /// `last[p]`: at ply `p`, the latest named position so far (line index, its ply).
    last: Vec<Option<(u32, u32)>>,
}

impl OpeningTrack {
    /// The track of `game` as it stands (a probe per position of it).
    pub fn new(game: &Game) -> OpeningTrack {
        let mut track = OpeningTrack {
            on: classifiable(game.start()),
            last: Vec::new(),
        };
        if track.on {
            for ply in 0..=game.ply() {
                if let Some(pos) = game.position_at(ply) {
                    track.push(pos);
                }
            }
        }
        track
    }

    /// Notes the position a move has just reached.
    pub fn push(&mut self, pos: &GamePosition) {
        if !self.on {
            return;
        }
        let ply = self.last.len() as u32;
        let here = book().index_of(pos.board().zobrist()).map(|i| (i, ply));
        let latest = here.or_else(|| self.last.last().copied().flatten());
        self.last.push(latest);
    }

    /// Forgets the position of a move taken back.
    pub fn pop(&mut self) {
        if self.on && self.last.len() > 1 {
            self.last.pop();
        }
    }

    /// The opening of the game as it stands.
    pub fn current(&self) -> Option<Opening> {
        let (index, ply) = (*self.last.last()?)?;
        let line = book().lines().get(index as usize)?;
        Some(Opening {
            eco: line.eco,
            name: line.name,
            ply: ply as usize,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game_of(line: &str) -> Game {
        let mut game = Game::new(Position::new());
        for token in line.split_whitespace().filter(|t| !t.ends_with('.')) {
            game.play_text(token)
                .unwrap_or_else(|e| panic!("{token}: {e}"));
        }
        game
    }

    #[test]
    fn the_whole_dataset_parses() {
        let book = book();
        assert_eq!(book.problems(), &[] as &[String], "every line replays");
        let data_lines: usize = FILES
            .iter()
            .map(|(_, text)| {
                text.lines()
                    .skip(1)
                    .filter(|l| !l.trim().is_empty())
                    .count()
            })
            .sum();
        assert_eq!(book.lines().len(), data_lines, "no line left out");
        assert!(book.lines().len() > 3800, "{}", book.lines().len());
        // Lines that reach a position an earlier line named already (the table keeps the
        // earlier name): reported, for the record.
        let shared = book
            .lines()
            .iter()
            .filter(|l| book.named(l.key).is_some_and(|first| first.pgn != l.pgn))
            .count();
        println!(
            "{} lines, {} of them reach a position an earlier line names",
            book.lines().len(),
            shared
        );
        // PGN tag values are written unescaped (lifecycle::pgn).
        assert!(
            book.lines()
                .iter()
                .all(|l| !(l.name.contains(['"', '\\']) || l.eco.contains(['"', '\\']))),
            "no name needs PGN escaping"
        );
    }

    /// Every entry's line, played from the start, ends classified as that entry or as an
    /// entry with the same position; by the incremental track and by walking back alike.
    #[test]
    fn every_line_of_the_dataset_is_classified_as_itself() {
        let book = book();
        for line in book.lines() {
            let game = game_of(line.pgn);
            assert_eq!(game.ply(), line.plies, "{}", line.pgn);
            let walked = classify(&game).unwrap_or_else(|| panic!("{} unnamed", line.pgn));
            let tracked = OpeningTrack::new(&game).current();
            assert_eq!(tracked, Some(walked), "{}", line.pgn);
            assert_eq!(walked.ply, line.plies, "{}: named at its end", line.pgn);
            let same = book
                .lines()
                .iter()
                .filter(|l| l.key == line.key)
                .any(|l| l.eco == walked.eco && l.name == walked.name);
            assert!(
                same,
                "{} ({} {}) classified as {} {}",
                line.pgn, line.eco, line.name, walked.eco, walked.name
            );
        }
    }

    #[test]
    fn the_najdorf_and_the_last_named_position() {
        let mut game = game_of("1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6");
        let najdorf = classify(&game).expect("named");
        assert_eq!(
            (najdorf.eco, najdorf.name, najdorf.ply),
            ("B90", "Sicilian Defense: Najdorf Variation", 10)
        );
        // A move no line names keeps the last named position, at its ply.
        game.play_text("a3").expect("legal");
        game.play_text("h6").expect("legal");
        assert_eq!(classify(&game), Some(najdorf));
        let mut track = OpeningTrack::new(&game);
        assert_eq!(track.current(), Some(najdorf));
        // Undo back past it: the earlier name.
        for _ in 0..3 {
            track.pop();
        }
        let earlier = track.current().expect("named");
        assert!(earlier.ply < 10, "{earlier:?}");
        assert_ne!(earlier.name, najdorf.name);
        for _ in 0..3 {
            game.undo();
        }
        assert_eq!(
            classify(&game),
            Some(earlier),
            "the track agrees with walking back"
        );
    }

    #[test]
    fn transpositions_count() {
        // The Queen's Gambit Declined reached from the English.
        let direct = classify(&game_of("1. d4 d5 2. c4 e6 3. Nc3 Nf6")).expect("named");
        let transposed = classify(&game_of("1. c4 e6 2. Nc3 d5 3. d4 Nf6")).expect("named");
        assert_eq!((transposed.eco, transposed.name), (direct.eco, direct.name));
        assert_eq!(transposed.ply, 6);
    }

    #[test]
    fn only_the_standard_start_is_named() {
        let mut chess960 =
            Game::new(crate::rules::chess960::start_position(518, Variant::Chess960).expect("518"));
        chess960.play_text("e4").expect("legal");
        assert_eq!(classify(&chess960), None);
        assert_eq!(OpeningTrack::new(&chess960).current(), None);
        let fen = Position::from_fen(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            Variant::Standard,
        )
        .expect("legal");
        let mut from_fen = Game::new(fen);
        from_fen.play_text("c5").expect("legal");
        assert_eq!(classify(&from_fen), None);
        assert_eq!(
            classify(&Game::new(Position::new())),
            None,
            "the start is unnamed"
        );
    }
}
