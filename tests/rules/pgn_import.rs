//! PGN import: real files from several producers (`tests/data/pgn/`), every lenient
//! feature, every strict error with where it is, and round trips of our own PGN export.
//!
//! The expected final positions of the real files were checked against python-chess 1.11.2
//! (an independent implementation) and, for the famous games, the published positions.

use chess_service::lifecycle::import::{import, import_pgn};
use chess_service::lifecycle::{Start, Status};
use chess_service::rules::pgn::to_pgn;
use chess_service::rules::pgn_read::{PgnError, PgnResult, read_pgn, variant_from_tag};
use chess_service::rules::{Color, Game, GamePosition, Position, Variant};
use proptest::prelude::*;

fn data(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pgn")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What a real file must read as and import to.
struct Expected {
    file: &'static str,
    variant: Variant,
    plies: usize,
    fen: &'static str,
    result: PgnResult,
    status: Status,
    /// A tag the import keeps.
    kept: (&'static str, &'static str),
}

const REAL_FILES: [Expected; 7] = [
    Expected {
        file: "chessbase_morphy_opera_1858.pgn",
        variant: Variant::Standard,
        plies: 33,
        fen: "1n1Rkb1r/p4ppp/4q3/4p1B1/4P3/8/PPP2PPP/2K5 b k - 1 17",
        result: PgnResult::WhiteWins,
        status: Status::Checkmate {
            winner: Color::White,
        },
        kept: ("PlyCount", "33"),
    },
    Expected {
        file: "chessbase_deep_blue_kasparov_1997_no_marker.pgn",
        variant: Variant::Standard,
        plies: 37,
        fen: "r1k4r/p2nb1p1/2b4p/1p1n1p2/2PP4/3Q1NB1/1P3PPP/R5K1 b - - 0 19",
        // No termination marker: the Result tag's.
        result: PgnResult::WhiteWins,
        status: Status::Resignation {
            winner: Color::White,
        },
        kept: ("BlackElo", "2785"),
    },
    Expected {
        file: "cutechess_kasparov_topalov_1999.pgn",
        variant: Variant::Standard,
        plies: 87,
        fen: "8/Q6p/6p1/5p2/5P2/2p3P1/3r3P/2K1k3 b - - 3 44",
        result: PgnResult::WhiteWins,
        // Termination "adjudication": an ending off the board, recorded as black resigning.
        status: Status::Resignation {
            winner: Color::White,
        },
        kept: ("GameDuration", "00:01:43"),
    },
    Expected {
        file: "lichess_byrne_fischer_time_forfeit.pgn",
        variant: Variant::Standard,
        plies: 50,
        fen: "4r1k1/1p3pbp/1Qp3p1/8/r1b5/5N2/P4PPP/3n2KR w - - 0 26",
        result: PgnResult::BlackWins,
        // White to move, "Time forfeit": white's flag fell.
        status: Status::OutOfTime {
            winner: Color::Black,
        },
        kept: ("Site", "https://lichess.org/x7Kq2mPz"),
    },
    Expected {
        file: "lichess_chess960.pgn",
        variant: Variant::Chess960,
        plies: 25,
        fen: "Q1kr1b1n/2prpqpp/p2p4/1p3p1b/nP1P3P/1N6/P1P1PPP1/RK1RBB1N b KQ - 13 13",
        result: PgnResult::WhiteWins,
        status: Status::Checkmate {
            winner: Color::White,
        },
        kept: ("UTCTime", "18:02:44"),
    },
    Expected {
        file: "handwritten_evergreen_1852_bom_crlf.pgn",
        variant: Variant::Standard,
        plies: 47,
        fen: "1r3kr1/pbpBBp1p/1b3P2/8/8/2P2q2/P4PPP/3R2K1 b - - 0 24",
        result: PgnResult::WhiteWins,
        status: Status::Checkmate {
            winner: Color::White,
        },
        kept: ("Annotator", "by hand"),
    },
    Expected {
        file: "engine_pv_uci_kiwipete.pgn",
        variant: Variant::Standard,
        plies: 136,
        fen: "8/8/8/8/6K1/8/3k3b/8 w - - 0 69",
        result: PgnResult::Draw,
        // The board's ending (king and bishop against king) wins over the agreed draw.
        status: Status::InsufficientMaterial,
        kept: ("Round", "1"),
    },
];

#[test]
fn real_files_read_and_import_as_published() {
    for e in &REAL_FILES {
        let text = data(e.file);
        let pgn = read_pgn(&text).unwrap_or_else(|err| panic!("{}: {err}", e.file));
        assert_eq!(pgn.variant, e.variant.into(), "{}", e.file);
        assert_eq!(pgn.moves.len(), e.plies, "{}", e.file);
        assert_eq!(pgn.board().position().to_fen(), e.fen, "{}", e.file);
        assert_eq!(pgn.result, e.result, "{}", e.file);
        let imported = import(&pgn).unwrap_or_else(|err| panic!("{}: {err}", e.file));
        assert_eq!(imported.game.status(), e.status, "{}", e.file);
        assert_eq!(imported.game.game().ply(), e.plies, "{}", e.file);
        assert!(!imported.game.is_timed(), "{}: imports are untimed", e.file);
        assert!(
            imported.tags.iter().any(|(n, v)| (n, v) == e.kept),
            "{}: {:?} kept in {:?}",
            e.file,
            e.kept,
            imported.tags
        );
        for (name, _) in imported.tags.iter() {
            assert!(
                ![
                    "Result",
                    "Termination",
                    "TimeControl",
                    "SetUp",
                    "FEN",
                    "Variant"
                ]
                .contains(&name),
                "{}: the server's own tag {name} is not kept",
                e.file
            );
        }
        // Every tag the server does not own is kept, with its value (sorted by name,
        // as every game's tags are).
        let mut kept_in_file: Vec<(&str, &str)> = pgn
            .tags
            .iter()
            .filter(|(n, _)| {
                ![
                    "Result",
                    "Termination",
                    "TimeControl",
                    "SetUp",
                    "FEN",
                    "Variant",
                ]
                .contains(&n.as_str())
            })
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        kept_in_file.sort();
        assert_eq!(
            kept_in_file,
            imported.tags.iter().collect::<Vec<_>>(),
            "{}",
            e.file
        );
    }
}

#[test]
fn real_file_starts() {
    let chess960 = import_pgn(&data("lichess_chess960.pgn")).unwrap();
    let Start::Chess960(n) = chess960.start else {
        panic!(
            "a Chess960 start array is stored by number: {:?}",
            chess960.start
        );
    };
    let start = chess_service::rules::chess960::start_position(n, Variant::Chess960).unwrap();
    assert_eq!(
        GamePosition::from(start),
        *chess960.game.game().start(),
        "Chess960 number {n}"
    );
    let kiwipete = import_pgn(&data("engine_pv_uci_kiwipete.pgn")).unwrap();
    assert_eq!(
        kiwipete.start,
        Start::Fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1".into())
    );
    let opera = import_pgn(&data("chessbase_morphy_opera_1858.pgn")).unwrap();
    assert_eq!(opera.start, Start::Standard);
}

fn sans(text: &str) -> Vec<String> {
    read_pgn(text)
        .unwrap_or_else(|e| panic!("{text:?}: {e}"))
        .board()
        .san_moves()
}

const ITALIAN: [&str; 6] = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5"];

#[test]
fn lenient_move_numbers_and_ellipses() {
    for text in [
        "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5",
        "1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5",
        "1 e4 e5 2 Nf3 Nc6 3 Bc4 Bc5",
        "1. e4 1... e5 2. Nf3 2... Nc6 3. Bc4 3... Bc5",
        "1. e4 1. ... e5 2. Nf3 2. ... Nc6 3.Bc4 3...Bc5",
        "e4 e5 Nf3 Nc6 Bc4 Bc5",
        "1.e4 1...e5 2.Nf3 2...Nc6 3.Bc4 3...Bc5 *",
    ] {
        assert_eq!(sans(text), ITALIAN, "{text}");
    }
}

#[test]
fn lenient_comments_escapes_and_nags() {
    for text in [
        "1. e4 {best by test} e5 {a comment\nover two lines} 2. Nf3 Nc6 3. Bc4 Bc5",
        "1. e4 ; a comment to the end of the line\ne5 2. Nf3 Nc6 3. Bc4 Bc5",
        "% an escape line\n1. e4 e5\n% another\n2. Nf3 Nc6 3. Bc4 Bc5",
        "1. e4 $1 e5 $2 2. Nf3 $14 Nc6 $146 3. Bc4 Bc5",
        "1. e4! e5? 2. Nf3!? Nc6?! 3. Bc4!! Bc5??",
        "1. e4 ! e5 ? 2. Nf3 !? Nc6 ?! 3. Bc4 += Bc5 +/-",
        "1. e4 {[%clk 0:03:00]} 1... e5 {[%eval 0.17] [%clk 0:03:00]} 2. Nf3 Nc6 3. Bc4 Bc5",
    ] {
        assert_eq!(sans(text), ITALIAN, "{text}");
    }
}

#[test]
fn lenient_variations_are_skipped() {
    for text in [
        "1. e4 e5 (1... c5 2. Nf3) 2. Nf3 Nc6 3. Bc4 Bc5",
        "1. e4 e5 2. Nf3 (2. f4 exf4 (2... d5 3. exd5 (3. Nf3)) 3. Nf3) Nc6 3. Bc4 Bc5",
        // A variation may hold moves illegal in the mainline; they are not read.
        "1. e4 e5 2. Nf3 Nc6 (2... Ke7 {king walk} (2... Qh4 ; a comment ends the line ) )\n) ) 3. Bc4 Bc5",
    ] {
        assert_eq!(sans(text), ITALIAN, "{text}");
    }
}

#[test]
fn lenient_long_algebraic_and_uci() {
    for text in [
        "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5",
        "1. e2-e4 e7-e5 2. Ng1-f3 Nb8-c6 3. Bf1-c4 Bf8-c5",
        "1. e2e4 e7e5 2. Ng1f3 Nb8c6 3. Bf1c4 Bf8c5",
    ] {
        assert_eq!(sans(text), ITALIAN, "{text}");
    }
    // Promotion in UCI and in SAN with and without '='.
    let fen = "[FEN \"8/4P1k1/8/8/8/8/6K1/8 w - - 0 1\"]\n";
    for m in ["e7e8q", "e8=Q", "e8Q", "e7-e8=Q", "e7e8=Q+"] {
        assert_eq!(sans(&format!("{fen}1. {m}")), ["e8=Q"], "{m}");
    }
    assert_eq!(sans(&format!("{fen}1. e7e8n")), ["e8=N+"]);
}

#[test]
fn lenient_castling_check_marks_and_en_passant() {
    let castles = "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4.";
    for text in ["O-O", "0-0", "O-O+", "0-0!", "e1g1"] {
        let got = sans(&format!("{castles} {text}"));
        assert_eq!(got.last().map(String::as_str), Some("O-O"), "{text}");
    }
    // Missing, extra and doubled check and mate marks.
    for text in [
        "1. f3 e5 2. g4 Qh4",
        "1. f3 e5 2. g4 Qh4#",
        "1. f3 e5 2. g4 Qh4++",
        "1. f3+ e5 2. g4# Qh4+",
    ] {
        assert_eq!(sans(text), ["f3", "e5", "g4", "Qh4#"], "{text}");
    }
    // En passant with an e.p. suffix, glued or apart.
    for text in [
        "1. e4 Nf6 2. e5 d5 3. exd6e.p.",
        "1. e4 Nf6 2. e5 d5 3. exd6 e.p.",
        "1. e4 Nf6 2. e5 d5 3. e5d6",
    ] {
        let got = sans(text);
        assert_eq!(got.last().map(String::as_str), Some("exd6"), "{text}");
    }
}

#[test]
fn lenient_bom_crlf_and_no_tags() {
    let text =
        "\u{feff}[Event \"x\"]\r\n[Result \"*\"]\r\n\r\n1. e4 e5\r\n2. Nf3 Nc6 3. Bc4 Bc5 *\r\n";
    let game = read_pgn(text).unwrap();
    assert_eq!(game.board().san_moves(), ITALIAN);
    assert_eq!(game.tag("Event"), Some("x"));
    // Tag values keep their escapes resolved.
    let game = read_pgn("[White \"A \\\"Tal\\\" \\\\ B\"]\n*").unwrap();
    assert_eq!(game.tag("white"), Some("A \"Tal\" \\ B"));
    assert!(game.moves.is_empty());
}

#[test]
fn variants_and_starts() {
    for spelling in [
        "Chess960",
        "chess 960",
        "Chess 960",
        "Fischerandom",
        "fischerrandom",
        "Fischer Random",
        "Freestyle",
    ] {
        assert_eq!(
            variant_from_tag(spelling),
            Some(Variant::Chess960.into()),
            "{spelling}"
        );
    }
    for spelling in ["Standard", "Normal", "From Position", "chess"] {
        assert_eq!(
            variant_from_tag(spelling),
            Some(Variant::Standard.into()),
            "{spelling}"
        );
    }
    assert_eq!(
        variant_from_tag("Crazyhouse"),
        Some(chess_service::rules::GameRules::Lichess(
            chess_service::rules::variant::VariantKind::Crazyhouse
        ))
    );
    assert_eq!(variant_from_tag("Shogi"), None);
    // Chess960 castling in PGN is O-O / O-O-O, and king-takes-rook in UCI.
    let fen = "[Variant \"Fischerandom\"]\n[SetUp \"1\"]\n[FEN \"rk4r1/pppppppp/8/8/8/8/PPPPPPPP/RK4R1 w KQkq - 0 1\"]\n";
    for castle in ["O-O", "0-0", "b1g1"] {
        let game = read_pgn(&format!("{fen}1. {castle} *")).unwrap();
        assert_eq!(game.variant, Variant::Chess960.into());
        assert_eq!(game.board().san_moves(), ["O-O"], "{castle}");
        assert_eq!(
            game.board().position().to_fen(),
            "rk4r1/pppppppp/8/8/8/8/PPPPPPPP/R4RK1 b kq - 1 1",
            "{castle}"
        );
    }
    // A FEN start without SetUp, and SetUp without a FEN.
    let game = read_pgn("[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n1. e4 *").unwrap();
    assert_eq!(
        game.board().position().to_fen(),
        "4k3/8/8/8/4P3/8/8/4K3 b - - 0 1"
    );
    assert!(matches!(
        read_pgn("[Event \"x\"]\n[SetUp \"1\"]\n*"),
        Err(PgnError::Syntax {
            line: 2,
            column: 1,
            ..
        })
    ));
    // A Chess960 game without a FEN starts from the standard array (number 518).
    let game = read_pgn("[Variant \"Chess960\"]\n1. e4 *").unwrap();
    assert_eq!(game.variant, Variant::Chess960.into());
    assert_eq!(
        game.start,
        chess_service::rules::chess960::start_position(518, Variant::Chess960)
            .unwrap()
            .into()
    );
}

fn syntax(text: &str) -> (u32, u32, String) {
    match read_pgn(text) {
        Err(PgnError::Syntax { line, column, why }) => (line, column, why),
        other => panic!("{text:?}: expected a syntax error, got {other:?}"),
    }
}

#[test]
fn syntax_errors_give_line_and_column() {
    let cases: [(&str, (u32, u32), &str); 14] = [
        ("1. e4 {never closed\n e5", (1, 7), "never closed"),
        ("[Event \"x\"]\n1. e4 e5 )", (2, 10), "closes no variation"),
        ("[Event \"x\"]\n\n1. e4 (1. d4 d5", (3, 7), "never closed"),
        ("[Event \"x\n\"]", (1, 8), "never closed"),
        ("[Event x]", (1, 8), "quoted value"),
        ("[Event \"x\" junk]", (1, 12), "ends here"),
        ("[\"x\"]", (1, 2), "tag name"),
        ("[Event \"x\"]\n1. e4 \"quoted\"", (2, 7), "tag pair"),
        ("1. e4 ]", (1, 7), "closes no tag"),
        ("1. e4 }", (1, 7), "closes no comment"),
        ("1. e4 $ e5", (1, 7), "NAG"),
        // A word that is no move: its column is the move's, after a glued number.
        ("1. e4 e5\n  2.Nz9", (2, 5), "not a move"),
        ("[Variant \"Shogi\"]\n*", (1, 1), "not played here"),
        ("[Event \"x\"]\n[FEN \"8/8/8 w - - 0 1\"]\n*", (2, 1), "FEN"),
    ];
    for (text, (line, column), why) in cases {
        let got = syntax(text);
        assert_eq!((got.0, got.1), (line, column), "{text:?}: {}", got.2);
        assert!(got.2.contains(why), "{text:?}: {}", got.2);
    }
    // Nothing at all, or nothing but comments and whitespace.
    for text in ["", "  \n\n", "{just a comment}\n"] {
        assert!(syntax(text).2.contains("no game"), "{text:?}");
    }
    // Columns count characters and skip the byte order mark; CRLF is one line end.
    assert_eq!(syntax("\u{feff}1. é4").1, 4);
    assert_eq!(
        (
            syntax("\u{feff}[A \"ü\"]\r\n1. e4 )").0,
            syntax("\u{feff}[A \"ü\"]\r\n1. e4 )").1
        ),
        (2, 7)
    );
    // The message says where.
    let err = read_pgn("1. e4 )").unwrap_err();
    assert!(err.to_string().contains("line 1, column 7"), "{err}");
}

#[test]
fn illegal_moves_give_ply_move_number_and_token() {
    /// Text; ply, move number and token; line and column.
    type Case = (&'static str, (u32, u32, &'static str), (u32, u32));
    let cases: [Case; 8] = [
        ("1. e4 e5 2. Ke3", (2, 2, "Ke3"), (1, 13)),
        (
            "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bb5",
            (6, 4, "Bb5"),
            (1, 34),
        ),
        // Black's move: ply 1, move 1.
        ("1. e4 e4", (1, 1, "e4"), (1, 7)),
        ("1. e4\n1... e5 2.Qxf7+", (2, 2, "Qxf7+"), (2, 11)),
        // Null moves are not moves.
        ("1. e4 -- 2. d4", (1, 1, "--"), (1, 7)),
        ("1. e4 Z0", (1, 1, "Z0"), (1, 7)),
        // Castling without the right, and a UCI move that is not legal.
        ("1. O-O", (0, 1, "O-O"), (1, 4)),
        ("1. e2e5", (0, 1, "e2e5"), (1, 4)),
    ];
    for (text, (ply, move_number, token), (line, column)) in cases {
        match read_pgn(text) {
            Err(PgnError::IllegalMove {
                ply: p,
                move_number: n,
                token: t,
                line: l,
                column: c,
                reason,
            }) => {
                assert_eq!((p, n, t.as_str()), (ply, move_number, token), "{text}");
                assert_eq!((l, c), (line, column), "{text}");
                assert!(!reason.is_empty());
            }
            other => panic!("{text}: expected an illegal move, got {other:?}"),
        }
    }
    // The move number follows the FEN's.
    match read_pgn(
        "[FEN \"4k3/8/8/8/8/8/8/4K2R b K - 0 40\"]\n40... Kd8 41. Rh2 Kc8 42. Rh1 Kd8 43. O-O",
    ) {
        Err(PgnError::IllegalMove {
            ply,
            move_number,
            token,
            reason,
            ..
        }) => {
            assert_eq!((ply, move_number, token.as_str()), (5, 43, "O-O"));
            assert!(reason.contains("castl"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // A move after mate: the game is over.
    match read_pgn("1. f3 e5 2. g4 Qh4# 3. a3") {
        Err(PgnError::IllegalMove { ply, reason, .. }) => {
            assert_eq!(ply, 4);
            assert!(reason.contains("over"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let err = read_pgn("1. e4 e5 2. Ke3").unwrap_err();
    let message = err.to_string();
    for part in ["'Ke3'", "ply 2", "move 2", "line 1, column 13"] {
        assert!(message.contains(part), "{message} names {part}");
    }
}

#[test]
fn ambiguous_moves_list_the_candidates() {
    let text = "[FEN \"4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 12\"]\n12. Nd2";
    match read_pgn(text) {
        Err(PgnError::AmbiguousMove {
            ply,
            move_number,
            token,
            candidates,
            line,
            column,
        }) => {
            assert_eq!((ply, move_number, token.as_str()), (0, 12, "Nd2"));
            assert_eq!(candidates, ["Nbd2", "Nfd2"]);
            assert_eq!((line, column), (2, 5));
        }
        other => panic!("{other:?}"),
    }
    let message = read_pgn(text).unwrap_err().to_string();
    assert!(message.contains("Nbd2 or Nfd2"), "{message}");
    // Rooks on one file need the rank; disambiguated, the same moves read.
    let rooks = "[FEN \"4k3/8/8/R7/8/8/8/R3K3 w - - 0 1\"]\n";
    match read_pgn(&format!("{rooks}1. Ra3")) {
        Err(PgnError::AmbiguousMove { candidates, .. }) => {
            assert_eq!(candidates, ["R1a3", "R5a3"])
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(sans(&format!("{rooks}1. R1a3")), ["R1a3"]);
}

#[test]
fn a_second_game_is_refused_with_its_line() {
    let cases = [
        (
            "[Event \"a\"]\n\n1. e4 e5 1-0\n\n[Event \"b\"]\n\n1. d4 *\n",
            5,
        ),
        // No result before the second game's tags.
        ("[Event \"a\"]\n1. e4 e5\n[Event \"b\"]\n1. d4 *", 3),
        // Two tag sections without moves.
        ("[Event \"a\"]\n[Site \"?\"]\n\n[Event \"b\"]\n", 4),
        // Movetext after a result.
        ("1. e4 e5 *\n1. d4 d5 *", 2),
    ];
    for (text, line) in cases {
        assert_eq!(
            read_pgn(text),
            Err(PgnError::MultipleGames { line }),
            "{text:?}"
        );
    }
    let message = read_pgn(cases[0].0).unwrap_err().to_string();
    assert!(message.contains("line 5"), "{message}");
}

#[test]
fn the_result_comes_from_the_movetext_then_the_tag() {
    let game = read_pgn("[Result \"0-1\"]\n1. e4 e5 1-0").unwrap();
    assert_eq!(game.result, PgnResult::WhiteWins);
    let game = read_pgn("[Result \"0-1\"]\n1. e4 e5").unwrap();
    assert_eq!(game.result, PgnResult::BlackWins);
    let game = read_pgn("[Result \"?\"]\n1. e4 e5").unwrap();
    assert_eq!(game.result, PgnResult::Unfinished);
    let game = read_pgn("1. e4 e5 1/2-1/2").unwrap();
    assert_eq!(game.result, PgnResult::Draw);
}

/// Exports `game` with our own PGN writer and reads it back.
fn round_trip(game: &Game) -> Result<(), TestCaseError> {
    let pgn = to_pgn(game);
    let read = read_pgn(&pgn).map_err(|e| TestCaseError::fail(format!("{e}\n{pgn}")))?;
    prop_assert_eq!(read.start, *game.start(), "{}", pgn);
    prop_assert_eq!(read.variant, game.rules());
    prop_assert_eq!(&read.moves[..], game.moves(), "{}", pgn);
    prop_assert_eq!(read.result.as_str(), game.status().result());
    Ok(())
}

#[test]
fn every_corpus_game_exported_by_our_writer_reads_back() {
    let games = crate::common::corpus_games::corpus_games();
    assert!(games.len() >= 300, "the whole corpus: {}", games.len());
    for g in games {
        round_trip(&g.game).unwrap_or_else(|e| panic!("corpus game {}: {e}", g.game_id));
        // And through the lifecycle: the same moves and the board's ending.
        let imported = import_pgn(&to_pgn(&g.game)).unwrap();
        assert_eq!(imported.game.game().moves(), g.game.moves());
        assert_eq!(imported.variant, g.variant.into());
        assert_eq!(imported.start, g.start, "corpus game {}", g.game_id);
        if g.game.status().is_over() {
            assert_eq!(imported.game.status(), Status::from(g.game.status()));
        }
    }
}

#[test]
fn every_corpus_game_in_uci_reads_back() {
    for g in crate::common::corpus_games::corpus_games() {
        let uci = g.game.uci_moves().join(" ");
        let mut text = String::new();
        if g.start != Start::Standard {
            text.push_str(&format!(
                "[Variant \"{}\"]\n[FEN \"{}\"]\n",
                if g.variant == Variant::Chess960 {
                    "Chess960"
                } else {
                    "Standard"
                },
                g.game.start().to_fen()
            ));
        }
        text.push_str(&uci);
        let read = read_pgn(&text).unwrap_or_else(|e| panic!("corpus game {}: {e}", g.game_id));
        assert_eq!(read.moves, g.game.moves(), "corpus game {}", g.game_id);
    }
}

fn random_game(seed: u64, plies: usize, chess960: Option<u32>) -> Game {
    let start = match chess960 {
        Some(n) => chess_service::rules::chess960::start_position(n, Variant::Chess960).unwrap(),
        None => Position::new(),
    };
    let mut game = Game::new(start);
    let mut rng = seed | 1;
    for _ in 0..plies {
        let legal = game.legal_moves();
        if legal.is_empty() {
            break;
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        game.play(legal[(rng % legal.len() as u64) as usize])
            .unwrap();
    }
    game
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Random games, standard and Chess960, exported by our writer read back to the same
    /// start and moves.
    #[test]
    fn random_games_round_trip(seed in any::<u64>(), plies in 0usize..200, n in prop::option::of(0u32..960)) {
        round_trip(&random_game(seed, plies, n))?;
    }

    /// No text makes the reader panic...
    #[test]
    fn reader_never_panics(text in "\\PC{0,200}") {
        let _ = read_pgn(&text);
    }

    /// ...nor PGN-like text, which reaches the tag, move and variation paths.
    #[test]
    fn reader_never_panics_on_pgn_like_text(text in "(\\[[A-Za-z]{1,6} \"[a-z0-9 /.-]{0,12}\"\\]\n){0,3}([0-9]{1,2}\\.{0,3} ?|[NBRQKO0a-h1-8x=+#!?-]{1,6} |[{}();$*\n] ?|1-0 |1/2-1/2 ){0,30}") {
        if let Ok(game) = read_pgn(&text) {
            // What reads is a legal line from its start.
            let mut pos = game.start;
            for m in &game.moves {
                prop_assert!(pos.is_legal(*m));
                pos = pos.after(*m);
            }
        }
    }
}
