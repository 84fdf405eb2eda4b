//! Games in lichess's variants through the game and the record codec, on python-chess's
//! corpus games (tests/data/variants/corpus_variants.jsonl.gz): each game is replayed by
//! [`Game`], whose status after every move must be python-chess's outcome (its own
//! ending, mate, stalemate, the material rule, the 75-move rule, fivefold repetition);
//! each whole game is written as a record of format version 3 (drops indexed like any
//! move) and read back exactly; and the bytes per ply of each variant are reported. A
//! standard game is still written as version 1.

use chess_service::lifecycle::{Match, Status, Tags};
use chess_service::rules::variant::{AnyPosition, VariantKind};
use chess_service::rules::{Color, Game, GamePosition, GameRules, Position, Variant};
use chess_service::store::codec::{self, VARIANTS_VERSION};
use chess_service::store::{GameMeta, Start};

use crate::common::variant_corpus::{End, records};

/// One corpus game: its variant, its moves in UCI and python-chess's verdict after each.
struct CorpusGame {
    kind: VariantKind,
    moves: Vec<String>,
    /// `ends[i]`: the outcome after `i` moves (a game cut at 300 plies has none after its
    /// last).
    ends: Vec<Option<End>>,
}

fn corpus_games() -> Vec<CorpusGame> {
    let mut games: Vec<CorpusGame> = Vec::new();
    let mut last_fen_after: Option<String> = None;
    for r in records() {
        let kind = VariantKind::from_name(&r.variant).expect("a lichess key");
        if last_fen_after.as_deref() != Some(r.fen.as_str()) {
            games.push(CorpusGame {
                kind,
                moves: Vec::new(),
                ends: Vec::new(),
            });
        }
        let game = games.last_mut().expect("a game");
        game.ends.push(r.end);
        if let Some(played) = r.played {
            game.moves.push(played);
        }
        last_fen_after = r.fen_after;
    }
    games
}

/// python-chess's outcome as our status (its results name the winner).
fn expected(end: &Option<End>) -> Status {
    let Some(end) = end else {
        return Status::InProgress;
    };
    let winner = match end.result.as_str() {
        "1-0" => Some(Color::White),
        "0-1" => Some(Color::Black),
        _ => None,
    };
    match (end.why.as_str(), winner) {
        ("checkmate", Some(winner)) => Status::Checkmate { winner },
        ("variant_win" | "variant_loss", Some(winner)) => Status::VariantWin { winner },
        ("variant_draw", None) => Status::VariantDraw,
        ("stalemate", None) => Status::Stalemate,
        ("insufficient_material", None) => Status::InsufficientMaterial,
        ("seventyfive_moves", None) => Status::SeventyFiveMoves,
        ("fivefold_repetition", None) => Status::FivefoldRepetition,
        other => panic!("an outcome the test does not know: {other:?}"),
    }
}

#[test]
fn every_corpus_variant_game_ends_as_python_chess_says_and_its_record_reads_back() {
    let games = corpus_games();
    assert_eq!(games.len(), 420, "60 games in each of 7 variants");
    let mut per_variant: Vec<(VariantKind, usize, usize)> =
        VariantKind::ALL.iter().map(|&k| (k, 0, 0)).collect();
    for (n, g) in games.iter().enumerate() {
        let mut game = Game::new(AnyPosition::start(g.kind));
        assert_eq!(
            Status::from(game.status()),
            expected(&g.ends[0]),
            "{} game {n} at the start",
            g.kind
        );
        for (ply, uci) in g.moves.iter().enumerate() {
            game.play_text(uci)
                .unwrap_or_else(|e| panic!("{} game {n} ply {ply} {uci}: {e}", g.kind));
            // A game cut at 300 plies has no record after its last move.
            if let Some(end) = g.ends.get(ply + 1) {
                assert_eq!(
                    Status::from(game.status()),
                    expected(end),
                    "{} game {n} after ply {ply} {uci}: {}",
                    g.kind,
                    game.position().to_fen()
                );
            }
        }
        // Every SAN the game writes reads back to its move.
        for (ply, san) in game.san_moves().iter().enumerate() {
            let pos = game.position_at(ply).expect("a position before each move");
            assert_eq!(
                pos.parse_move(san).ok(),
                Some(game.moves()[ply]),
                "{} game {n} ply {ply} {san}",
                g.kind
            );
        }
        let meta = GameMeta {
            id: format!("{}-{n}", g.kind.key()),
            variant: GameRules::Lichess(g.kind),
            start: Start::Standard,
            created_unix_ms: 1_765_000_000_000 + n as u64,
            tags: Tags::none(),
        };
        let m = Match::from_moves(game.clone());
        let record = codec::encode(&meta, &m).unwrap_or_else(|e| panic!("{}: {e}", meta.id));
        assert_eq!(record[0], VARIANTS_VERSION, "{}", meta.id);
        let back = codec::decode(&meta.id, &record)
            .unwrap_or_else(|e| panic!("{}: {e}", meta.id))
            .loaded;
        assert_eq!(back.meta, meta);
        assert_eq!(back.game.game().moves(), game.moves(), "{}", meta.id);
        assert_eq!(back.game.status(), m.status(), "{}", meta.id);
        assert_eq!(back.game.game().position(), game.position(), "{}", meta.id);
        let entry = per_variant
            .iter_mut()
            .find(|(k, _, _)| *k == g.kind)
            .expect("every variant");
        entry.1 += game.ply();
        entry.2 += record.len();
    }
    println!("bytes per ply of the corpus games' records, by variant:");
    for (kind, plies, bytes) in per_variant {
        let per_ply = bytes as f64 / plies as f64;
        println!("  {kind}: {bytes} bytes / {plies} plies = {per_ply:.3}");
        // Drops widen crazyhouse's choice of move; every variant stays near standard's
        // 0.7 bytes per ply, far under the two bytes a move of a plain list would take.
        assert!(per_ply < 1.2, "{kind}: {per_ply:.3} bytes per ply");
    }
}

#[test]
fn a_variant_game_from_a_fen_and_a_standard_game_keep_their_formats() {
    // A three-check game from a FEN with checks already given keeps them.
    let fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 +2+0";
    let start = GamePosition::from_fen(GameRules::Lichess(VariantKind::ThreeCheck), fen)
        .expect("a three-check FEN");
    let mut game = Game::new(start);
    game.play_text("Bc4").expect("legal");
    game.play_text("Nc6").expect("legal");
    game.play_text("Bxf7+").expect("legal");
    assert_eq!(
        Status::from(game.status()),
        Status::VariantWin {
            winner: Color::White
        },
        "the third check wins"
    );
    let meta = GameMeta {
        id: "3c-fen".into(),
        variant: GameRules::Lichess(VariantKind::ThreeCheck),
        start: Start::Fen(start.to_fen()),
        created_unix_ms: 1,
        tags: Tags::none(),
    };
    let record = codec::encode(&meta, &Match::from_moves(game.clone())).expect("encodes");
    let back = codec::decode("3c-fen", &record).expect("decodes").loaded;
    assert_eq!(back.game.game().position(), game.position());
    assert_eq!(back.game.status(), Match::from_moves(game).status());

    // A record whose variant code names a lichess variant under format version 1 or 2 is
    // refused: only version 3 has those codes.
    let mut downgraded = record[..record.len() - 4].to_vec();
    downgraded[0] = 2;
    let sum = codec::testing::checksum("3c-fen", &downgraded);
    downgraded.extend_from_slice(&sum.to_le_bytes());
    let refused = codec::decode("3c-fen", &downgraded)
        .map(|_| ())
        .unwrap_err();
    assert!(
        refused.to_string().contains("unknown variant code"),
        "{refused}"
    );

    // A standard game's record is still format version 1, byte for byte as before.
    let meta = GameMeta {
        id: "standard".into(),
        variant: GameRules::Chess(Variant::Standard),
        start: Start::Standard,
        created_unix_ms: 1,
        tags: Tags::none(),
    };
    let mut game = Game::new(Position::new());
    game.play_text("e4").expect("legal");
    let record = codec::encode(&meta, &Match::from_moves(game)).expect("encodes");
    assert_eq!(record[0], 1);
}
