//! PGN import: the text of one game read into checked values (its tag pairs, variant and
//! start position, mainline moves and result). Lenient about everything real files vary
//! in, strict about what matters.
//!
//! Lenient:
//! - a UTF-8 byte order mark, CRLF or CR line ends;
//! - `{...}` comments (across lines), `;` comments to the end of the line, `%` escape lines;
//! - NAGs (`$1`) and move glyphs standing alone or glued to a move (`!`, `?`, `!?`, `?!`,
//!   `!!`, `??`, `e4!?`), and the evaluation glyphs `+-`, `-+`, `=`, `+=`, `=+`, `+/-`,
//!   `-/+`, `+/=`, `=/+`, `∞`;
//! - variations `( ... )`, nested: skipped;
//! - move numbers with or without dots and ellipses (`1.`, `1...`, `1. ...`, `12.e4`, `12`);
//! - `O-O`, `0-0`, check and mate marks missing, extra or doubled (`+`, `#`, `++`);
//! - moves in long algebraic or UCI, as engines write them (`e2e4`, `e7e8q`, `e2-e4`,
//!   `Ng1-f3`, `Ng1f3`; in Chess960 castling as king-takes-rook, `e1h1`), an `e.p.` suffix;
//! - `[Variant]` spellings: `Chess960`, `Chess 960`, `Fischerandom`, `FischerRandom`,
//!   `Fischer Random`, `Freestyle` are Chess960; `Standard`, `Normal`, `Chess`, `From
//!   Position` are standard chess;
//! - a start from `[FEN]` (with or without `[SetUp "1"]`);
//! - a game without tags, or without a result in its movetext (the `[Result]` tag or `*`).
//!
//! Strict:
//! - a move that is illegal (null moves `--`, `Z0`, `0000` included) or made after the game
//!   ended on the board: [`PgnError::IllegalMove`], with the ply, move number and token;
//! - a move that fits more than one legal move: [`PgnError::AmbiguousMove`], with the
//!   candidates;
//! - text that is not PGN: [`PgnError::Syntax`], with the line and column (1-based,
//!   counted in characters, the byte order mark not counted);
//! - a second game: [`PgnError::MultipleGames`], with the line it starts on.
//!
//! The result is the movetext's termination marker when there is one, else the `[Result]`
//! tag's value, else `*`. Of a tag given twice, the first counts.

use super::clip::clip;
use super::fen::FenError;
use super::game::{Game, PlayError};
use super::game_position::{GamePosition, GameRules};
use super::moves::Move;
use super::position::{Position, Variant};
use super::san::{MoveTextError, SanError};
use super::uci::UciError;
use super::variant::VariantMoveError;

/// Longest token (a word of movetext, a tag name) accepted: far more than any real one.
const MAX_TOKEN_CHARS: usize = 256;

/// A game's result as PGN writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PgnResult {
    /// `1-0`.
    WhiteWins,
    /// `0-1`.
    BlackWins,
    /// `1/2-1/2`.
    Draw,
    /// `*`: unfinished or unknown.
    Unfinished,
}

impl PgnResult {
    /// The PGN token.
    pub fn as_str(self) -> &'static str {
        match self {
            PgnResult::WhiteWins => "1-0",
            PgnResult::BlackWins => "0-1",
            PgnResult::Draw => "1/2-1/2",
            PgnResult::Unfinished => "*",
        }
    }

    /// Reads a result token (`½-½` too); `None` for anything else.
    pub fn parse(text: &str) -> Option<PgnResult> {
        match text {
            "1-0" => Some(PgnResult::WhiteWins),
            "0-1" => Some(PgnResult::BlackWins),
            "1/2-1/2" | "½-½" => Some(PgnResult::Draw),
            "*" => Some(PgnResult::Unfinished),
            _ => None,
        }
    }
}

/// One game read from PGN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnGame {
    /// Every tag pair, in file order, as written (escapes resolved).
    pub tags: Vec<(String, String)>,
    /// From the `[Variant]` tag; standard chess without one.
    pub variant: GameRules,
    /// From the `[FEN]` tag; the variant's start without one.
    pub start: GamePosition,
    /// The mainline's moves, each legal where it is played.
    pub moves: Vec<Move>,
    /// The movetext's result, else the `[Result]` tag's, else `*`.
    pub result: PgnResult,
}

impl PgnGame {
    /// The value of the first tag named `name` (compared without regard to case).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The game on the board: the start and every move.
    pub fn board(&self) -> Game {
        let mut game = Game::new(self.start);
        for &m in &self.moves {
            game.push_unchecked(m);
        }
        game
    }
}

/// Why a PGN text was refused. Lines and columns are 1-based; columns count characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PgnError {
    /// The text is not PGN here.
    #[error("PGN syntax error at line {line}, column {column}: {why}")]
    Syntax {
        /// Line of the fault.
        line: u32,
        /// Column of the fault.
        column: u32,
        /// What is wrong and what was expected.
        why: String,
    },
    /// A mainline move that is not legal in its position.
    #[error(
        "illegal move '{}' at ply {ply} (move {move_number}, line {line}, column {column}): {reason}",
        clip(.token)
    )]
    IllegalMove {
        /// Plies played before it (0: the game's first move).
        ply: u32,
        /// The fullmove number of the position it was played in.
        move_number: u32,
        /// The move as written.
        token: String,
        /// Why it is not legal.
        reason: String,
        /// Line of the token.
        line: u32,
        /// Column of the token.
        column: u32,
    },
    /// A mainline move that fits more than one legal move.
    #[error(
        "ambiguous move '{}' at ply {ply} (move {move_number}, line {line}, column {column}): it could be {}",
        clip(.token),
        candidates.join(" or ")
    )]
    AmbiguousMove {
        /// Plies played before it.
        ply: u32,
        /// The fullmove number of the position it was played in.
        move_number: u32,
        /// The move as written.
        token: String,
        /// Every legal move that fits, in SAN.
        candidates: Vec<String>,
        /// Line of the token.
        line: u32,
        /// Column of the token.
        column: u32,
    },
    /// The text holds more than one game.
    #[error(
        "the text holds more than one game: a second game starts at line {line}; import one game at a time"
    )]
    MultipleGames {
        /// The line the second game starts on.
        line: u32,
    },
}

impl PgnError {
    fn syntax(at: Pos, why: impl Into<String>) -> PgnError {
        PgnError::Syntax {
            line: at.line,
            column: at.column,
            why: why.into(),
        }
    }
}

/// A place in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    line: u32,
    column: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Open,
    Close,
    ParenOpen,
    ParenClose,
    Str(String),
    Nag,
    Word(String),
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    at: Pos,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Lexer<'a> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        Lexer {
            chars: text.chars().peekable(),
            at: Pos { line: 1, column: 1 },
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        match c {
            '\n' => {
                self.at.line = self.at.line.saturating_add(1);
                self.at.column = 1;
            }
            // A lone CR (old Mac files) ends a line too; CRLF counts once.
            '\r' if self.chars.peek() != Some(&'\n') => {
                self.at.line = self.at.line.saturating_add(1);
                self.at.column = 1;
            }
            '\r' => {}
            _ => self.at.column = self.at.column.saturating_add(1),
        }
        Some(c)
    }

    fn skip_line(&mut self) {
        while let Some(&c) = self.chars.peek() {
            if c == '\n' || c == '\r' {
                return;
            }
            self.bump();
        }
    }

    /// The next token and where it starts; comments and escapes are skipped.
    fn next(&mut self) -> Result<Option<(Pos, Tok)>, PgnError> {
        loop {
            let Some(&c) = self.chars.peek() else {
                return Ok(None);
            };
            let at = self.at;
            match c {
                c if c.is_whitespace() => {
                    self.bump();
                }
                '%' if at.column == 1 => self.skip_line(),
                ';' => self.skip_line(),
                '{' => {
                    self.bump();
                    loop {
                        match self.bump() {
                            Some('}') => break,
                            Some(_) => {}
                            None => {
                                return Err(PgnError::syntax(
                                    at,
                                    "this '{' comment is never closed with '}'",
                                ));
                            }
                        }
                    }
                }
                '[' => {
                    self.bump();
                    return Ok(Some((at, Tok::Open)));
                }
                ']' => {
                    self.bump();
                    return Ok(Some((at, Tok::Close)));
                }
                '(' => {
                    self.bump();
                    return Ok(Some((at, Tok::ParenOpen)));
                }
                ')' => {
                    self.bump();
                    return Ok(Some((at, Tok::ParenClose)));
                }
                '"' => return self.string(at).map(Some),
                '$' => {
                    self.bump();
                    let mut digits = 0;
                    while self.chars.peek().is_some_and(char::is_ascii_digit) {
                        self.bump();
                        digits += 1;
                    }
                    if digits == 0 || digits > 3 {
                        return Err(PgnError::syntax(
                            at,
                            "a NAG is '$' and a number of one to three digits ($1, $14)",
                        ));
                    }
                    return Ok(Some((at, Tok::Nag)));
                }
                '}' => {
                    return Err(PgnError::syntax(at, "this '}' closes no comment"));
                }
                '<' | '>' => {
                    return Err(PgnError::syntax(
                        at,
                        format!("'{c}' is reserved in PGN and means nothing here"),
                    ));
                }
                c if c.is_control() => {
                    return Err(PgnError::syntax(
                        at,
                        format!("control character U+{:04X} in the text", c as u32),
                    ));
                }
                _ => return self.word(at).map(Some),
            }
        }
    }

    fn string(&mut self, at: Pos) -> Result<(Pos, Tok), PgnError> {
        self.bump();
        let mut value = String::new();
        loop {
            match self.bump() {
                Some('"') => return Ok((at, Tok::Str(value))),
                Some('\\') => match self.chars.peek() {
                    Some(&c @ ('"' | '\\')) => {
                        self.bump();
                        value.push(c);
                    }
                    _ => value.push('\\'),
                },
                Some('\n' | '\r') | None => {
                    return Err(PgnError::syntax(
                        at,
                        "this quoted value is never closed with '\"' on its line",
                    ));
                }
                Some(c) => value.push(c),
            }
        }
    }

    fn word(&mut self, at: Pos) -> Result<(Pos, Tok), PgnError> {
        let mut word = String::new();
        while let Some(&c) = self.chars.peek() {
            if c.is_whitespace()
                || c.is_control()
                || matches!(
                    c,
                    '[' | ']' | '(' | ')' | '{' | '}' | ';' | '"' | '$' | '<' | '>'
                )
            {
                break;
            }
            if word.chars().count() >= MAX_TOKEN_CHARS {
                return Err(PgnError::syntax(
                    at,
                    format!("a word of more than {MAX_TOKEN_CHARS} characters is not PGN"),
                ));
            }
            word.push(c);
            self.bump();
        }
        Ok((at, Tok::Word(word)))
    }
}

/// The standalone annotation glyphs that are skipped.
fn is_glyph(word: &str) -> bool {
    word.chars().all(|c| matches!(c, '!' | '?'))
        || matches!(
            word,
            "+-" | "-+" | "=" | "+=" | "=+" | "+/-" | "-/+" | "+/=" | "=/+" | "∞" | "=/∞"
        )
}

/// The rules a `[Variant]` tag names: standard chess, Chess960 or one of lichess's
/// variants (as lichess writes them, `Racing Kings`, or by key, `racingKings`); `None`:
/// not one this service plays.
pub fn variant_from_tag(value: &str) -> Option<GameRules> {
    match variant_name_key(value).as_str() {
        "" | "standard" | "normal" | "chess" | "fromposition" => {
            Some(GameRules::Chess(Variant::Standard))
        }
        "chess960" | "fischerandom" | "fischerrandom" | "freestyle" | "freestylechess" | "960" => {
            Some(GameRules::Chess(Variant::Chess960))
        }
        _ => super::variant::VariantKind::from_name(value).map(GameRules::Lichess),
    }
}

/// A variant's name as a comparable key: lower case, without spaces, hyphens and
/// underscores (`Racing Kings`, `racingKings` and `racing-kings` all give `racingkings`).
pub(crate) fn variant_name_key(name: &str) -> String {
    name.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Splits a leading move number (`12.`, `12...`, `12`) off a word: the rest, if the word
/// starts with one. `0-0` and results are not move numbers (the caller checks them first).
fn strip_move_number(word: &str) -> Option<&str> {
    let digits = word.len() - word.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let rest = &word[digits..];
    let after_dots = rest.trim_start_matches('.');
    if after_dots.len() == rest.len() && !rest.is_empty() {
        // Digits followed by something other than a dot: not a move number.
        return None;
    }
    Some(after_dots)
}

/// The move as the rules engine reads it: glyphs, check marks, `e.p.` and the dashes of
/// long algebraic removed (castling keeps its dashes).
fn move_core(token: &str) -> String {
    let mut core = token;
    loop {
        let before = core.len();
        core = core.trim_end_matches(['+', '#', '!', '?']);
        core = core.strip_suffix("e.p.").unwrap_or(core);
        if core.len() == before {
            break;
        }
    }
    if matches!(core, "O-O" | "0-0" | "o-o" | "O-O-O" | "0-0-0" | "o-o-o") || is_null_move(core) {
        return core.to_string();
    }
    core.replace('-', "")
}

fn is_null_move(core: &str) -> bool {
    matches!(core, "--" | "Z0" | "z0" | "0000" | "@@@@" | "null" | "pass")
}

/// Reads the text of one game. See the module docs for what is accepted.
///
/// ```
/// use chess_service::rules::pgn_read::{read_pgn, PgnError, PgnResult};
///
/// let game = read_pgn("[White \"Morphy\"]\n\n1.e4 e5 2.Nf3 d6 {Philidor} 3.d4 1-0\n").unwrap();
/// assert_eq!(game.moves.len(), 5);
/// assert_eq!(game.result, PgnResult::WhiteWins);
/// assert_eq!(game.tag("White"), Some("Morphy"));
///
/// match read_pgn("1. e4 e5 2. Ke3") {
///     Err(PgnError::IllegalMove { ply, move_number, token, .. }) => {
///         assert_eq!((ply, move_number, token.as_str()), (2, 2, "Ke3"));
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
pub fn read_pgn(text: &str) -> Result<PgnGame, PgnError> {
    let mut lex = Lexer::new(text);
    let mut tags: Vec<(String, String)> = Vec::new();
    // The tag section.
    let mut next = lex.next()?;
    let mut tag_pos: Vec<Pos> = Vec::new();
    while let Some((at, Tok::Open)) = &next {
        let at = *at;
        let name = match lex.next()? {
            Some((_, Tok::Word(w))) if w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                w
            }
            Some((p, _)) => {
                return Err(PgnError::syntax(
                    p,
                    "a tag pair is [Name \"value\"]: a tag name (letters, digits, '_') comes here",
                ));
            }
            None => return Err(PgnError::syntax(at, "this '[' opens a tag that never ends")),
        };
        if name.eq_ignore_ascii_case("Event")
            && tags.iter().any(|(n, _)| n.eq_ignore_ascii_case("Event"))
        {
            return Err(PgnError::MultipleGames { line: at.line });
        }
        let value = match lex.next()? {
            Some((_, Tok::Str(v))) => v,
            Some((p, _)) => {
                return Err(PgnError::syntax(
                    p,
                    format!(
                        "the tag {} needs a quoted value: [{} \"value\"]",
                        clip(&name),
                        clip(&name)
                    ),
                ));
            }
            None => return Err(PgnError::syntax(at, "this '[' opens a tag that never ends")),
        };
        match lex.next()? {
            Some((_, Tok::Close)) => {}
            Some((p, _)) => {
                return Err(PgnError::syntax(
                    p,
                    format!("the tag {} ends here with ']'", clip(&name)),
                ));
            }
            None => return Err(PgnError::syntax(at, "this '[' opens a tag that never ends")),
        }
        tag_pos.push(at);
        tags.push((name, value));
        next = lex.next()?;
    }
    // The first tag of a name, and where it is.
    let first = |name: &str| {
        tags.iter()
            .zip(&tag_pos)
            .find(|((n, _), _)| n.eq_ignore_ascii_case(name))
            .map(|((_, v), at)| (v.as_str(), *at))
    };
    let variant = match first("Variant") {
        None => GameRules::Chess(Variant::Standard),
        Some((v, at)) => variant_from_tag(v).ok_or_else(|| {
            PgnError::syntax(
                at,
                format!(
                    "[Variant \"{}\"] is not played here: only standard chess, Chess960 (\"Chess960\", \"Fischerandom\", \"chess 960\") and lichess's variants (\"Crazyhouse\", \"Atomic\", \"Antichess\", \"Horde\", \"Racing Kings\", \"King of the Hill\", \"Three-check\")",
                    clip(v)
                ),
            )
        })?,
    };
    let start = match (first("FEN"), first("SetUp")) {
        (Some((fen, at)), _) => {
            GamePosition::from_fen(variant, fen.trim()).map_err(|e: FenError| {
                PgnError::syntax(at, format!("the [FEN] tag is not a valid start: {e}"))
            })?
        }
        (None, Some(("1", at))) => {
            return Err(PgnError::syntax(
                at,
                "[SetUp \"1\"] says the game starts from a [FEN] tag, but there is none",
            ));
        }
        (None, _) => match variant {
            GameRules::Chess(Variant::Standard) => Position::new().into(),
            GameRules::Chess(Variant::Chess960) => {
                super::chess960::start_position(518, Variant::Chess960)
                    .map_err(|e| PgnError::syntax(Pos { line: 1, column: 1 }, e.to_string()))?
                    .into()
            }
            GameRules::Lichess(kind) => super::variant::AnyPosition::start(kind).into(),
        },
    };
    let tag_result = first("Result").and_then(|(v, _)| PgnResult::parse(v));

    // The movetext.
    let mut game = Game::new(start);
    let mut moves = Vec::new();
    let mut result = None;
    let mut started = false;
    while let Some((at, tok)) = next.take() {
        if result.is_some() {
            // Anything after the result is a second game (or not PGN).
            return Err(match tok {
                Tok::Open | Tok::Word(_) | Tok::Nag | Tok::ParenOpen => {
                    PgnError::MultipleGames { line: at.line }
                }
                _ => PgnError::syntax(at, "text after the game's result"),
            });
        }
        match tok {
            Tok::Open if started => return Err(PgnError::MultipleGames { line: at.line }),
            Tok::Open => {
                return Err(PgnError::syntax(
                    at,
                    "a tag pair after the movetext began (tags come first)",
                ));
            }
            Tok::Close => return Err(PgnError::syntax(at, "this ']' closes no tag")),
            Tok::Str(_) => {
                return Err(PgnError::syntax(
                    at,
                    "a quoted value belongs in a tag pair, before the moves",
                ));
            }
            Tok::Nag => {}
            Tok::ParenClose => {
                return Err(PgnError::syntax(at, "this ')' closes no variation"));
            }
            Tok::ParenOpen => skip_variation(&mut lex, at)?,
            Tok::Word(word) => {
                started = true;
                if let Some(r) = PgnResult::parse(&word) {
                    result = Some(r);
                } else {
                    play_word(&mut game, &mut moves, &word, at)?;
                }
            }
        }
        next = lex.next()?;
    }
    if tags.is_empty() && !started {
        return Err(PgnError::syntax(
            lex.at,
            "no game here: PGN is tag pairs ([Event \"...\"]) and then the moves",
        ));
    }
    Ok(PgnGame {
        tags,
        variant,
        start,
        moves,
        result: result.or(tag_result).unwrap_or(PgnResult::Unfinished),
    })
}

fn skip_variation(lex: &mut Lexer<'_>, open: Pos) -> Result<(), PgnError> {
    let mut depth = 1u32;
    loop {
        match lex.next()? {
            None => {
                return Err(PgnError::syntax(
                    open,
                    "this '(' variation is never closed with ')'",
                ));
            }
            Some((_, Tok::ParenOpen)) => depth += 1,
            Some((_, Tok::ParenClose)) => {
                depth -= 1;
                if depth == 0 {
                    return Ok(());
                }
            }
            Some((at, Tok::Open | Tok::Close)) => {
                return Err(PgnError::syntax(
                    at,
                    "a tag bracket inside a variation (is a ')' missing?)",
                ));
            }
            Some(_) => {}
        }
    }
}

/// One word of the mainline: a move number, glyph or move (possibly glued together).
fn play_word(game: &mut Game, moves: &mut Vec<Move>, word: &str, at: Pos) -> Result<(), PgnError> {
    let castles = matches!(word.trim_end_matches(['+', '#', '!', '?']), "0-0" | "0-0-0");
    let rest = if castles {
        word
    } else {
        match strip_move_number(word) {
            Some(rest) => rest,
            None => word,
        }
    };
    if rest.is_empty() || rest.chars().all(|c| c == '.') || is_glyph(rest) {
        return Ok(());
    }
    if matches!(rest, "e.p." | "ep") {
        return Ok(());
    }
    // The column of the move itself (after a glued move number).
    let column = at
        .column
        .saturating_add((word.chars().count() - rest.chars().count()) as u32);
    let ply = u32::try_from(game.ply()).unwrap_or(u32::MAX);
    let move_number = game.position().fullmoves();
    let illegal = |reason: String| PgnError::IllegalMove {
        ply,
        move_number,
        token: rest.to_string(),
        reason,
        line: at.line,
        column,
    };
    let core = move_core(rest);
    if is_null_move(&core) {
        return Err(illegal(
            "a null move passes the turn; it is not a legal move in a game".into(),
        ));
    }
    match game.play_text(&core) {
        Ok(m) => {
            moves.push(m);
            Ok(())
        }
        Err(PlayError::GameOver(status)) => {
            Err(illegal(format!("the game is already over ({status})")))
        }
        Err(PlayError::Illegal(reason)) => Err(illegal(reason.to_string())),
        Err(PlayError::Text(e)) => Err(match e {
            MoveTextError::San(SanError::Ambiguous { candidates, .. })
            | MoveTextError::Variant(VariantMoveError::Ambiguous { candidates, .. }) => {
                PgnError::AmbiguousMove {
                    ply,
                    move_number,
                    token: rest.to_string(),
                    candidates,
                    line: at.line,
                    column,
                }
            }
            MoveTextError::San(SanError::Illegal { reason, .. })
            | MoveTextError::Uci(UciError::Illegal { reason, .. }) => illegal(reason.to_string()),
            MoveTextError::Variant(e @ VariantMoveError::Illegal { .. }) => illegal(e.to_string()),
            e => PgnError::Syntax {
                line: at.line,
                column,
                why: format!(
                    "'{}' is not a move, a move number or a result: {e}",
                    clip(rest)
                ),
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syntax_at(text: &str) -> (u32, u32, String) {
        match read_pgn(text) {
            Err(PgnError::Syntax { line, column, why }) => (line, column, why),
            other => panic!("expected a syntax error for {text:?}, got {other:?}"),
        }
    }

    #[test]
    fn move_numbers_glyphs_and_comments_are_skipped() {
        let text = "1.e4!? e5 2 Nf3 {a\ncomment} 2... Nc6 $1 3. Bb5 ; rest\n3...a6?! (3...Nf6 (3...d6)) 4.Ba4 *";
        let game = read_pgn(text).unwrap();
        let sans = game.board().san_moves();
        assert_eq!(sans, ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4"]);
        assert_eq!(game.result, PgnResult::Unfinished);
    }

    #[test]
    fn long_algebraic_and_castling_forms() {
        for text in [
            "e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1",
            "e2-e4 e7-e5 Ng1-f3 Nb8-c6 Bf1-c4 Ng8-f6 0-0",
            "1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. O-O+",
        ] {
            let game = read_pgn(text).unwrap();
            assert_eq!(
                game.board().san_moves(),
                ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6", "O-O"],
                "{text}"
            );
        }
    }

    #[test]
    fn strip_move_number_cases() {
        assert_eq!(strip_move_number("12."), Some(""));
        assert_eq!(strip_move_number("12...Nf6"), Some("Nf6"));
        assert_eq!(strip_move_number("12"), Some(""));
        assert_eq!(strip_move_number("e4"), None);
        assert_eq!(strip_move_number("1x"), None);
    }

    #[test]
    fn move_core_cases() {
        assert_eq!(move_core("exd6e.p.+"), "exd6");
        assert_eq!(move_core("Ng1-f3!?"), "Ng1f3");
        assert_eq!(move_core("O-O-O#"), "O-O-O");
        assert_eq!(move_core("Qh4++"), "Qh4");
    }

    #[test]
    fn errors_say_where() {
        assert_eq!(syntax_at("1. e4 {open").0, 1);
        let (line, column, _) = syntax_at("[Event \"x\"]\n\n1. e4 )");
        assert_eq!((line, column), (3, 7));
        assert!(matches!(
            read_pgn("1. e4 e5 1-0\n\n[Event \"b\"]\n1. d4 *"),
            Err(PgnError::MultipleGames { line: 3 })
        ));
    }
}
