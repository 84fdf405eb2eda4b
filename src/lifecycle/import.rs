//! A game read from PGN ([`crate::rules::pgn_read`]) made into a [`Match`]: an untimed
//! game whose log is the moves and then the ending the file records, plus what its
//! [`super::GameMeta`] needs (variant, start, the caller's tags).
//!
//! The ending:
//! - The board's ending wins when the board has one (mate, stalemate, the automatic
//!   draws), whatever the `Result` says: "1-0" after black mates is imported as black's
//!   mate. The moves are the record; a result tag is a claim about them.
//! - Otherwise, a final position proven dead (FIDE 5.2.2, [`Match::end_if_dead`], within
//!   the per-change budget) ends the game drawn, whatever the `Result` says. Only the
//!   final position is judged: a file whose moves went on past a dead position (as many
//!   servers allow) still imports, its moves being legal.
//! - Otherwise a decisive result with `[Termination "time forfeit"]` (any case) is a flag
//!   fall (untimed: the time is not known; `%clk` comments are ignored) when the loser is
//!   the side to move, judged as a live flag fall is ([`super::judge::flag_fall`]): a loss
//!   on time, or a draw when the winner could not have mated (FIDE 6.9), whatever the
//!   file's result says (the file's server may have scored it by the material rule only,
//!   or not at all). A flag falls only on the clock of the side to move: when the loser is
//!   not to move, the file's result is kept as a resignation by the loser.
//! - `1/2-1/2` with a time-forfeit termination, when the side not to move cannot mate, is
//!   that FIDE 6.9 flag fall; any other `1/2-1/2` is a draw by agreement (the side not to
//!   move offers, the side to move accepts).
//! - Any other decisive result is a resignation by the loser.
//! - `*` leaves the game in progress.
//!
//! The server re-derives `Result`, `Termination`, `TimeControl`, `SetUp`, `FEN` and
//! `Variant` on export, so those tags are not kept; every other tag is, in file order.

use crate::rules::pgn_read::{PgnError, PgnGame, PgnResult, read_pgn};
use crate::rules::variant::AnyPosition;
use crate::rules::{Color, GamePosition, GameRules, Position, Variant, chess960};

use super::event::{Event, LogEntry};
use super::judge::flag_fall;
use super::match_::{Match, Refusal, ReplayError};
use super::meta::Start;
use super::tags::{TagError, Tags, is_server_tag};

/// An imported game, ready to be stored.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The game: the moves, then the recorded ending.
    pub game: Match,
    /// The rules: standard chess, Chess960 or a lichess variant.
    pub variant: GameRules,
    /// The start, as the store keeps it.
    pub start: Start,
    /// The file's tags, checked as NewGame's are (the server's own left out).
    pub tags: Tags,
}

/// Why a PGN text could not be imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// The text is not one legal game of PGN.
    #[error(transparent)]
    Pgn(#[from] PgnError),
    /// The game the text describes does not replay as a log (a bug: the reader checked
    /// every move).
    #[error("the imported game does not replay: {0}")]
    Inconsistent(#[from] ReplayError),
    /// A tag of the file breaks the rules every game's tags keep (too many, a name that
    /// is not a PGN tag name, a value too long or with control characters).
    #[error("a tag of the PGN cannot be kept: {0}")]
    Tag(#[from] TagError),
}

/// How the store names a start position: its rules' own start (the standard start, or a
/// lichess variant's), a Chess960 start array by number, or FEN.
pub fn start_of(pos: &GamePosition) -> Start {
    let pos = match pos {
        GamePosition::Chess(p) => p,
        GamePosition::Lichess(p) => {
            return if *p == AnyPosition::start(p.kind()) {
                Start::Standard
            } else {
                Start::Fen(p.to_fen())
            };
        }
    };
    if pos.variant() == Variant::Standard && *pos == Position::new() {
        return Start::Standard;
    }
    if pos.variant() == Variant::Chess960
        && let Some(n) = chess960::number_of(pos)
        && chess960::start_position(n, Variant::Chess960).ok().as_ref() == Some(pos)
    {
        return Start::Chess960(n);
    }
    Start::Fen(pos.to_fen())
}

/// Reads one game of PGN text and imports it. See the module docs for the ending.
pub fn import_pgn(text: &str) -> Result<Imported, ImportError> {
    import(&read_pgn(text)?)
}

/// Imports a game already read.
pub fn import(pgn: &PgnGame) -> Result<Imported, ImportError> {
    let mut game = Match::untimed(pgn.start);
    for &m in &pgn.moves {
        game.apply(untimed(Event::Move(m)))?;
    }
    if !game.status().is_over() && !game.end_if_dead(0).map_err(refusal_to_replay)? {
        for event in ending_events(pgn, &game) {
            game.apply(untimed(event))?;
        }
    }
    game.check_complete()?;
    let tags = Tags::new(
        pgn.tags
            .iter()
            .filter(|(name, _)| !is_server_tag(name))
            .map(|(name, value)| (name.as_str(), value.as_str())),
    )?;
    Ok(Imported {
        variant: pgn.variant,
        start: start_of(&pgn.start),
        tags,
        game,
    })
}

/// An untimed game's operation fails only when its own log does not replay.
fn refusal_to_replay(refusal: Refusal) -> ImportError {
    match refusal {
        Refusal::Inconsistent(e) => ImportError::Inconsistent(e),
        other => ImportError::Inconsistent(ReplayError {
            version: 0,
            what: "dead position",
            why: other.to_string(),
        }),
    }
}

fn untimed(event: Event) -> LogEntry {
    LogEntry { event, at_ms: None }
}

/// The events that record the file's result in a game the board has not ended.
fn ending_events(pgn: &PgnGame, game: &Match) -> Vec<Event> {
    let pos = game.game().position();
    let to_move = pos.turn();
    let time_forfeit = pgn
        .tag("Termination")
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("time forfeit"));
    let winner = match pgn.result {
        PgnResult::Unfinished => return Vec::new(),
        PgnResult::Draw => {
            if time_forfeit {
                let flag = flag_fall(pos);
                if flag == Event::FlagFellUnwinnable || pos.has_insufficient_material(!to_move) {
                    return vec![flag];
                }
            }
            return vec![Event::DrawOffered(!to_move), Event::DrawAccepted];
        }
        PgnResult::WhiteWins => Color::White,
        PgnResult::BlackWins => Color::Black,
    };
    if time_forfeit && to_move == !winner {
        vec![flag_fall(pos)]
    } else {
        vec![Event::Resigned(!winner)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::Status;

    fn imported(text: &str) -> Imported {
        import_pgn(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn endings_from_the_result() {
        // White to move after 1. e4 e5.
        let cases = [
            (
                "1-0",
                "",
                Status::Resignation {
                    winner: Color::White,
                },
            ),
            (
                "0-1",
                "",
                Status::Resignation {
                    winner: Color::Black,
                },
            ),
            ("1/2-1/2", "", Status::DrawAgreement),
            ("*", "", Status::InProgress),
            // White is to move: black winning on time is white's flag.
            (
                "0-1",
                "[Termination \"Time forfeit\"]",
                Status::OutOfTime {
                    winner: Color::Black,
                },
            ),
            // A flag falls only for the side to move: kept as a resignation.
            (
                "1-0",
                "[Termination \"time forfeit\"]",
                Status::Resignation {
                    winner: Color::White,
                },
            ),
        ];
        for (result, tag, status) in cases {
            let text = format!("{tag}\n[Result \"{result}\"]\n\n1. e4 e5 {result}");
            let g = imported(&text);
            assert_eq!(g.game.status(), status, "{text}");
            assert_eq!(g.game.game().ply(), 2);
            assert!(g.tags.is_empty(), "server tags are not kept: {:?}", g.tags);
        }
    }

    #[test]
    fn the_board_ending_wins_over_the_result() {
        // Fool's mate, recorded with the wrong result.
        let g = imported("[Result \"1-0\"]\n1. f3 e5 2. g4 Qh4# 1-0");
        assert_eq!(
            g.game.status(),
            Status::Checkmate {
                winner: Color::Black
            }
        );
        assert_eq!(g.game.version(), 4, "only the moves are events");
    }

    #[test]
    fn flag_fall_against_a_side_that_cannot_mate_is_a_draw_whatever_the_file_says() {
        // White: king and rook; black: lone king, white to move.
        let fen = "[SetUp \"1\"]\n[FEN \"7k/8/8/8/8/8/8/R6K w - - 0 1\"]\n[Termination \"time forfeit\"]\n";
        // Black cannot mate, so white's flag falling is a draw (FIDE 6.9), whether the
        // file says so or scored it as black's win.
        for result in ["1/2-1/2", "0-1"] {
            let g = imported(&format!("{fen}[Result \"{result}\"]\n{result}"));
            assert_eq!(
                g.game.status(),
                Status::DrawTimeoutInsufficientMaterial,
                "{result}"
            );
            assert!(matches!(g.start, Start::Fen(_)));
        }
        // Beyond material: a locked wall black's king cannot cross (chasolver's README).
        let wall = "[SetUp \"1\"]\n[FEN \"5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8 w - - 0 1\"]\n[Termination \"time forfeit\"]\n";
        let g = imported(&format!("{wall}[Result \"0-1\"]\n0-1"));
        assert_eq!(g.game.status(), Status::DrawTimeoutUnwinnable);
        assert_eq!(
            g.game.log().last().map(|e| e.event),
            Some(Event::FlagFellUnwinnable)
        );
    }

    #[test]
    fn a_dead_final_position_is_drawn_whatever_the_file_says() {
        // White's only move takes the queen: bare kings. Black's flag "fell" after it.
        let text = "[SetUp \"1\"]\n[FEN \"8/8/8/2k5/8/8/1q6/K7 w - - 0 1\"]\n[Termination \"time forfeit\"]\n[Result \"1-0\"]\n1. Kxb2 1-0";
        let g = imported(text);
        assert_eq!(
            g.game.status(),
            Status::InsufficientMaterial,
            "the board's own rule"
        );
        // A locked wall with no move forced: dead beyond material.
        let text = "[SetUp \"1\"]\n[FEN \"8/8/1k6/1p1p1p1p/1P1P1P1P/8/8/K7 w - - 0 1\"]\n[Result \"1-0\"]\n1. Ka2 1-0";
        let g = imported(text);
        assert_eq!(g.game.status(), Status::DrawDeadPosition);
        assert_eq!(
            g.game.log().last().map(|e| e.event),
            Some(Event::DeadPosition)
        );
    }

    #[test]
    fn starts_and_tags() {
        let g = imported(
            "[Event \"x\"]\n[Variant \"chess 960\"]\n[FEN \"bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1\"]\n[WhiteElo \"2800\"]\n*",
        );
        assert_eq!(
            (g.variant, g.start.clone()),
            (Variant::Chess960.into(), Start::Chess960(0))
        );
        assert_eq!(
            g.tags.iter().collect::<Vec<_>>(),
            [("Event", "x"), ("WhiteElo", "2800")]
        );
        assert_eq!(imported("1. e4 *").start, Start::Standard);
    }

    #[test]
    fn an_untimed_flag_fall_replays() {
        // Black to move loses on time.
        let g = imported("[Termination \"Time forfeit\"]\n1. e4 1-0");
        assert_eq!(
            g.game.status(),
            Status::OutOfTime {
                winner: Color::White
            }
        );
        let again = Match::replay(*g.game.game().start(), None, g.game.log()).unwrap();
        assert_eq!(again.status(), g.game.status());
    }
}
