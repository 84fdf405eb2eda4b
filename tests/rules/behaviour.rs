//! Behaviour a caller sees from the rules: error messages that say why, notation
//! leniency, Chess960 castling forms, and every game ending.

use chess_service::rules::{
    CastleSide, Game, IllegalMove, MoveTextError, Position, SanError, Status, UciError, Variant,
    chess960,
};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen, Variant::Standard).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn uci_err(p: &Position, text: &str) -> String {
    p.parse_uci(text).expect_err("illegal").to_string()
}

#[test]
fn illegal_moves_say_why() {
    let start = Position::new();
    assert_eq!(
        uci_err(&start, "e3e4"),
        "illegal move e3e4: there is no piece on e3"
    );
    assert_eq!(
        uci_err(&start, "e7e5"),
        "illegal move e7e5: the black pawn on e7 belongs to black, and it is white's turn"
    );
    assert_eq!(
        uci_err(&start, "g1g3"),
        "illegal move g1g3: the white knight on g1 cannot move to g3"
    );
    assert_eq!(
        uci_err(&start, "d1d2"),
        "illegal move d1d2: d2 is occupied by your own pawn"
    );
    assert_eq!(
        uci_err(&start, "e1g1"),
        "illegal move e1g1: castling king side: f1 is occupied by the white bishop on f1"
    );

    let pinned = pos("4k3/8/8/8/1b6/8/3N4/4K3 w - - 0 1");
    assert_eq!(
        uci_err(&pinned, "d2f3"),
        "illegal move d2f3: it would leave your king on e1 in check from the black bishop on b4"
    );
    let through = pos("4k3/8/8/8/2b5/8/8/4K2R w K - 0 1");
    assert_eq!(
        uci_err(&through, "e1g1"),
        "illegal move e1g1: castling through f1, which the black bishop on c4 attacks"
    );
    assert_eq!(
        uci_err(&through, "e1h1"),
        "illegal move e1h1: castling through f1, which the black bishop on c4 attacks"
    );
    let into = pos("4k3/8/8/8/8/7n/8/4K2R w K - 0 1");
    assert_eq!(
        uci_err(&into, "e1g1"),
        "illegal move e1g1: castling into check on g1, which the black knight on h3 attacks"
    );
    let out_of = pos("4k3/8/8/8/8/3n4/8/R3K3 w Q - 0 1");
    assert_eq!(
        uci_err(&out_of, "e1c1"),
        "illegal move e1c1: cannot castle out of check: the black knight on d3 attacks the king"
    );
    let no_right = pos("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
    assert_eq!(
        uci_err(&no_right, "e1c1"),
        "illegal move e1c1: white has no queen side castling right"
    );
    let promote = pos("8/4P3/8/8/8/8/k7/4K3 w - - 0 1");
    assert!(uci_err(&promote, "e7e8").contains("must promote"));
    assert!(uci_err(&start, "e2e4q").contains("only a pawn reaching the last rank can promote"));
    // Queen-side castling may pass an attacked b1 (only the king's path must be safe).
    let b_file = pos("1r2k3/8/8/8/8/8/8/R3K3 w Q - 0 1");
    assert!(
        b_file.parse_uci("e1c1").is_ok(),
        "b1 attacked does not stop O-O-O"
    );
}

#[test]
fn syntax_errors_are_not_illegal_moves() {
    let start = Position::new();
    for text in ["", "e2e9", "zz", "e2e4k", "0000", "Nf9", "Xe4"] {
        let err = start.parse_move(text).expect_err(text);
        assert!(err.is_syntax(), "{text}: {err}");
    }
    assert!(matches!(
        start.parse_uci("e2e4x"),
        Err(UciError::Syntax { .. })
    ));
    let illegal = start.parse_move("e2e5").unwrap_err();
    assert!(!illegal.is_syntax());
    assert!(matches!(
        illegal.illegal_reason(),
        Some(IllegalMove::CannotMoveThere { .. })
    ));
}

#[test]
fn san_is_read_leniently_and_ambiguity_lists_candidates() {
    let castle = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    for text in ["O-O", "0-0", "O-O+", "O-O!?"] {
        assert_eq!(
            castle.uci(castle.parse_san(text).unwrap()),
            "e1g1",
            "{text}"
        );
    }
    assert_eq!(castle.uci(castle.parse_san("0-0-0").unwrap()), "e1c1");
    let promo = pos("8/4P3/8/8/8/8/k7/4K3 w - - 0 1");
    for text in ["e8=Q", "e8Q", "e8=Q+", "e8q"] {
        assert_eq!(promo.uci(promo.parse_san(text).unwrap()), "e7e8q", "{text}");
    }
    assert_eq!(promo.uci(promo.parse_san("e8=N").unwrap()), "e7e8n");
    let two_knights = pos("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1");
    match two_knights.parse_san("Nd2") {
        Err(SanError::Ambiguous { candidates, .. }) => assert_eq!(candidates, vec!["Nbd2", "Nfd2"]),
        other => panic!("expected ambiguity, got {other:?}"),
    }
    assert_eq!(
        two_knights.parse_move("Nd2").unwrap_err().to_string(),
        "ambiguous move Nd2: it could be Nbd2 or Nfd2"
    );
    assert!(two_knights.parse_san("Nbd2").is_ok());
    let start = Position::new();
    assert_eq!(
        start.parse_san("Nd4").unwrap_err().to_string(),
        "illegal move Nd4: no knight can move to d4"
    );
    assert!(matches!(
        start.parse_move("O-O"),
        Err(MoveTextError::San(SanError::Illegal {
            reason: IllegalMove::CastlingBlocked {
                side: CastleSide::King,
                ..
            },
            ..
        }))
    ));
}

#[test]
fn en_passant_that_exposes_the_king_along_a_rank_is_illegal() {
    // c7-c5 was just played; bxc6 would empty rank 5 between the king on a5 and the rook.
    let p = pos("8/8/8/KPp4r/8/8/8/7k w - c6 0 2");
    assert_eq!(
        p.ep_square(),
        None,
        "no legal capture, so no en passant square"
    );
    assert!(p.to_fen().contains(" w - - "));
    assert!(p.parse_uci("b5c6").is_err());
    // Without the rook the capture is legal and the square is kept.
    let q = pos("8/8/8/KPp5/8/8/8/7k w - c6 0 2");
    assert!(q.ep_square().is_some());
    let m = q.parse_uci("b5c6").unwrap();
    assert!(m.is_en_passant());
    assert_eq!(q.san(m), "bxc6");
}

#[test]
fn chess960_castling_in_both_uci_forms() {
    // Start 0 is BBQNNRKR: king g1, rooks f1 and h1.
    let start = chess960::start_position(0, Variant::Chess960).unwrap();
    let fen = "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1";
    assert_eq!(start.to_fen(), fen);
    let mut game = Game::new(start);
    for m in [
        "c2c3", "c7c6", "d1e3", "d8e6", "e1d3", "e8d6", "c1c2", "c8c7",
    ] {
        game.play_text(m).unwrap();
    }
    let p = *game.position().board();
    let long = p.parse_uci("g1f1").unwrap();
    assert!(long.is_castle(), "king takes its own rook");
    assert_eq!(p.uci(long), "g1f1");
    assert_eq!(p.san(long), "O-O-O");
    assert_eq!(long.king_to().to_string(), "c1");
    let after = p.after(long);
    assert!(
        after
            .to_fen()
            .split(' ')
            .next()
            .unwrap()
            .ends_with("/BBKR3R"),
        "{}",
        after.to_fen()
    );
    // The king-two-squares form is accepted where it is unambiguous.
    assert_eq!(p.parse_uci("g1c1").unwrap(), long);
    assert_eq!(p.parse_san("O-O-O").unwrap(), long);
    // O-O would put the h1 rook on f1, where the other rook stands.
    assert_eq!(
        p.parse_uci("g1h1").unwrap_err().to_string(),
        "illegal move g1h1: castling king side: f1 is occupied by the white rook on f1"
    );
    // After castling the FEN keeps black's rights only, written as letters where KQkq
    // would be ambiguous.
    assert!(after.to_fen().contains(" b kq "), "{}", after.to_fen());
}

#[test]
fn game_endings() {
    // Fool's mate.
    let mut g = Game::new(Position::new());
    for m in ["f2f3", "e7e5", "g2g4", "d8h4"] {
        g.play_text(m).unwrap();
    }
    assert_eq!(
        g.status(),
        Status::Checkmate {
            winner: chess_service::rules::Color::Black
        }
    );
    assert!(g.legal_moves().is_empty());
    assert!(matches!(
        g.play_text("a2a3"),
        Err(chess_service::rules::PlayError::GameOver(_))
    ));
    assert!(g.undo().is_some());
    assert_eq!(g.status(), Status::InProgress, "undo reopens the game");

    let stalemate = Game::new(pos("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"));
    assert_eq!(stalemate.status(), Status::Stalemate);
    for (fen, insufficient) in [
        ("8/8/4k3/8/8/3K4/8/8 w - - 0 1", true),
        ("8/8/4k3/8/8/3KN3/8/8 w - - 0 1", true),
        ("8/8/4k3/8/8/3KB3/8/8 w - - 0 1", true),
        ("8/8/4k3/2b5/8/3KB3/8/8 w - - 0 1", true),
        ("8/3b4/4k3/8/8/3KB3/8/8 w - - 0 1", false),
        ("8/8/4k3/8/8/3KNN2/8/8 w - - 0 1", false),
        ("8/8/4kn2/8/8/3KN3/8/8 w - - 0 1", false),
        ("8/8/4k3/8/8/3KP3/8/8 w - - 0 1", false),
    ] {
        assert_eq!(
            Game::new(pos(fen)).status() == Status::InsufficientMaterial,
            insufficient,
            "{fen}"
        );
    }
    // The 75-move rule ends the game; a mate on that move would still be mate.
    let g75 = Game::new(pos("8/8/4k3/8/8/3K4/8/R7 w - - 150 100"));
    assert_eq!(g75.status(), Status::SeventyFiveMoves);
}

#[test]
fn repetition_claims_and_automatic_fivefold() {
    let mut g = Game::new(Position::new());
    let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
    // After one cycle the start position has occurred twice; Nf3 would not repeat anything
    // three times yet, but after the second cycle's first three moves, f6g8 would.
    for m in &shuffle {
        g.play_text(m).unwrap();
    }
    assert_eq!(g.repetitions(), 2);
    assert!(!g.can_claim_threefold());
    for m in &shuffle[..3] {
        g.play_text(m).unwrap();
    }
    assert!(
        g.can_claim_threefold(),
        "f6g8 would make the start position occur a third time"
    );
    g.play_text(shuffle[3]).unwrap();
    assert_eq!(g.repetitions(), 3);
    assert!(g.can_claim_threefold());
    assert_eq!(
        g.status(),
        Status::InProgress,
        "threefold is a claim, not an ending"
    );
    for _ in 0..2 {
        for m in &shuffle {
            g.play_text(m).unwrap();
        }
    }
    assert_eq!(g.repetitions(), 5);
    assert_eq!(g.status(), Status::FivefoldRepetition);
}

#[test]
fn fifty_move_claims() {
    let at_99 = Game::new(pos("8/8/4k3/8/8/3K4/8/R7 w - - 99 80"));
    assert!(
        at_99.can_claim_fifty_moves(),
        "a rook move would complete fifty moves"
    );
    let at_98 = Game::new(pos("8/8/4k3/8/8/3K4/8/R7 w - - 98 80"));
    assert!(!at_98.can_claim_fifty_moves());
    let at_100 = Game::new(pos("8/8/4k3/8/8/3K4/8/R7 b - - 100 80"));
    assert!(at_100.can_claim_fifty_moves());
    assert_eq!(at_100.status(), Status::InProgress);
    // A claim needs the game to go on: at 100 with no legal move (stalemate) there is none.
    let stalemated = Game::new(pos("7k/5Q2/6K1/8/8/8/8/8 b - - 100 80"));
    assert!(!stalemated.can_claim_fifty_moves());
}

#[test]
fn pgn_export() {
    let mut g = Game::new(Position::new());
    for m in ["e4", "e5", "Nf3", "Nc6", "Bb5"] {
        g.play_text(m).unwrap();
    }
    let pgn = chess_service::rules::pgn::to_pgn(&g);
    assert!(pgn.contains("[Result \"*\"]"));
    assert!(pgn.ends_with("1. e4 e5 2. Nf3 Nc6 3. Bb5 *\n"), "{pgn}");
    assert!(!pgn.contains("[FEN"));
    let g960 = Game::new(chess960::start_position(0, Variant::Chess960).unwrap());
    let pgn = chess_service::rules::pgn::to_pgn(&g960);
    assert!(
        pgn.contains("[Variant \"Chess960\"]")
            && pgn.contains("[SetUp \"1\"]")
            && pgn.contains("[FEN \"")
    );
    let mut black_first = Game::new(pos("4k3/8/8/8/8/8/4P3/4K3 b - - 0 7"));
    black_first.play_text("Kd7").unwrap();
    assert!(chess_service::rules::pgn::to_pgn(&black_first).contains("7... Kd7 *"));
}

#[test]
fn unreachable_positions_with_many_moves_are_handled() {
    // Fifteen queens (found by a hill-climbing search): beyond any reachable position's 218
    // moves. The move list is sized for the 15 x 27 + 8 = 413 that 16 pieces could reach.
    let p = pos("krQ3Q1/nb2Q3/Q6Q/1Q5Q/3Q1Q2/Q6Q/Q1Q3Q1/4Q1K1 w - - 0 1");
    let n = p.legal_moves().len();
    assert_eq!(n, 236);
    assert_eq!(n as u64, p.count_legal_moves());
    assert_eq!(
        chess_service::rules::perft(&p, 2),
        p.legal_moves()
            .iter()
            .map(|m| p.after(*m).count_legal_moves())
            .sum::<u64>()
    );
}

/// The move counters saturate instead of wrapping: a FEN may give any number up to
/// u32::MAX, and the move after it neither wraps to 0 nor loses its exact take-back.
#[test]
fn move_counters_saturate_at_their_largest_value() {
    let last = pos("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 4294967295 4294967295");
    for &m in last.legal_moves().iter() {
        let mut p = last;
        let undo = p.play(m);
        assert_eq!(p.fullmoves(), u32::MAX, "{}", last.uci(m));
        assert!(p.halfmoves() == u32::MAX || p.halfmoves() == 0);
        p.undo(m, undo);
        assert_eq!(p, last, "{}", last.uci(m));
    }
    let mut game = Game::new(pos(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 4294967295",
    ));
    game.play(game.position().parse_move("e5").unwrap())
        .unwrap();
    game.play(game.position().parse_move("Nf3").unwrap())
        .unwrap();
    assert!(
        game.position().to_fen().ends_with(" 4294967295"),
        "{}",
        game.position().to_fen()
    );
    // One below the largest: the next black move reaches it, and its take-back leaves it.
    let below = pos("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 4294967294");
    for &m in below.legal_moves().iter() {
        let mut p = below;
        let undo = p.play(m);
        assert_eq!(p.fullmoves(), u32::MAX);
        p.undo(m, undo);
        assert_eq!(p, below);
    }
}
