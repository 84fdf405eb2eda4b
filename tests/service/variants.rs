//! lichess's variants through gRPC against the real server binary: Perft against
//! scalachess's published suites (tests/data/variants/*.perft), LegalMoves by FEN against
//! python-chess's corpus (the moves, SAN, check, the status and winner), drops and king
//! promotions on the wire, and Winnability from the material rule. Games in the variants
//! are tested in `variant_games.rs`.

use std::collections::HashSet;

use chess_service::pb;
use tonic::Code;

use crate::common::server::{Server, expect_error, violated_fields};
use crate::common::variant_corpus::{End, records};

/// Perft counts up to this many nodes are asked of the server (the library's own test
/// goes to 10 million).
const MAX_NODES: u64 = 2_000_000;

/// The suite file of each variant that has one.
const SUITES: [(&str, pb::Variant); 6] = [
    ("3check.perft", pb::Variant::ThreeCheck),
    ("antichess.perft", pb::Variant::Antichess),
    ("atomic.perft", pb::Variant::Atomic),
    ("crazyhouse.perft", pb::Variant::Crazyhouse),
    ("horde.perft", pb::Variant::Horde),
    ("racingkings.perft", pb::Variant::RacingKings),
];

/// One suite entry: its id, its EPD and its (depth, nodes) counts.
type SuiteEntry = (String, String, Vec<(u32, u64)>);

/// Every entry of a suite file.
fn suite(file: &str) -> Vec<SuiteEntry> {
    let path = format!("{}/tests/data/variants/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut entries: Vec<SuiteEntry> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "id" => entries.push((rest.to_string(), String::new(), Vec::new())),
            "epd" => entries.last_mut().expect("id first").1 = rest.to_string(),
            "perft" => {
                let (depth, nodes) = rest.split_once(' ').expect("perft DEPTH NODES");
                let count = (depth.parse().unwrap(), nodes.parse().unwrap());
                entries.last_mut().expect("id first").2.push(count);
            }
            other => panic!("{path}: unknown line kind {other:?}"),
        }
    }
    entries
}

fn perft_request(fen: &str, variant: pb::Variant, depth: u32) -> pb::PerftRequest {
    pb::PerftRequest {
        fen: fen.into(),
        variant: variant as i32,
        depth,
        divide: true,
        threads: 2,
    }
}

#[tokio::test]
async fn perft_through_the_rpc_matches_every_published_count_of_every_variant() {
    // Some suite entries count shallow trees at depths past the default maximum (10).
    let server = Server::start(&["--perft-max-depth", "16"]);
    let mut c = server.client().await;
    let mut checked = 0;
    for (file, variant) in SUITES {
        for (id, epd, counts) in suite(file) {
            for (depth, expected) in counts.into_iter().filter(|(_, n)| *n <= MAX_NODES) {
                let answer = c
                    .perft(perft_request(&epd, variant, depth))
                    .await
                    .unwrap_or_else(|e| panic!("{file} {id} depth {depth}: {e:?}"))
                    .into_inner();
                assert_eq!(answer.nodes, expected, "{file} {id} ({epd}) depth {depth}");
                let divided: u64 = answer.divide.iter().map(|d| d.nodes).sum();
                assert_eq!(divided, expected, "{file} {id} divide");
                checked += 1;
            }
        }
    }
    assert!(checked >= 95, "only {checked} counts were within reach");

    // No FEN: the variant's own start (King of the Hill's moves are standard chess's).
    for (variant, counts) in [
        (pb::Variant::KingOfTheHill, [20, 400, 8_902, 197_281]),
        (pb::Variant::RacingKings, [21, 421, 11_264, 296_242]),
        (pb::Variant::Horde, [8, 128, 1_274, 23_310]),
    ] {
        for (depth, expected) in (1..).zip(counts) {
            let answer = c
                .perft(perft_request("", variant, depth))
                .await
                .expect("perft from the start")
                .into_inner();
            assert_eq!(answer.nodes, expected, "{variant:?} start depth {depth}");
        }
    }
}

#[tokio::test]
async fn a_variant_perft_past_its_deadline_stops_and_frees_its_slot() {
    let server = Server::start(&["--perft-max-concurrent", "1"]);
    let mut c = server.client().await;
    let mut deep = tonic::Request::new(perft_request("", pb::Variant::Crazyhouse, 9));
    deep.set_timeout(std::time::Duration::from_millis(300));
    let started = std::time::Instant::now();
    expect_error(
        c.perft(deep).await,
        Code::DeadlineExceeded,
        "DEADLINE_EXCEEDED",
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "stopped after {:?}",
        started.elapsed()
    );
    // The one slot is free again at once.
    let answer = c
        .perft(perft_request("", pb::Variant::Atomic, 2))
        .await
        .expect("the slot was given back")
        .into_inner();
    assert_eq!(answer.nodes, 400);
}

fn variant_of(key: &str) -> pb::Variant {
    match key {
        "crazyhouse" => pb::Variant::Crazyhouse,
        "atomic" => pb::Variant::Atomic,
        "antichess" => pb::Variant::Antichess,
        "horde" => pb::Variant::Horde,
        "racingKings" => pb::Variant::RacingKings,
        "kingOfTheHill" => pb::Variant::KingOfTheHill,
        "threeCheck" => pb::Variant::ThreeCheck,
        other => panic!("unknown variant {other}"),
    }
}

/// python-chess's ending as a status and winner on the wire, for the endings a position
/// shows by itself (repetitions need a history and are not asked for).
fn expected_status(end: Option<&End>) -> Option<(pb::GameStatus, pb::Color)> {
    let Some(end) = end else {
        return Some((pb::GameStatus::InProgress, pb::Color::Unspecified));
    };
    let winner = match end.result.as_str() {
        "1-0" => pb::Color::White,
        "0-1" => pb::Color::Black,
        _ => pb::Color::Unspecified,
    };
    let status = match end.why.as_str() {
        "variant_win" | "variant_loss" => pb::GameStatus::VariantWin,
        "variant_draw" => pb::GameStatus::VariantDraw,
        "checkmate" => pb::GameStatus::Checkmate,
        "stalemate" => pb::GameStatus::Stalemate,
        "insufficient_material" => pb::GameStatus::DrawInsufficientMaterial,
        "seventyfive_moves" => pb::GameStatus::DrawSeventyFiveMoves,
        _ => return None,
    };
    Some((status, winner))
}

#[tokio::test]
async fn legal_moves_by_fen_agree_with_python_chess_in_every_variant() {
    let records = records();
    let server = Server::start(&[]);
    let mut c = server.client().await;
    let (mut asked, mut endings, mut sans, mut drops) = (0, 0, 0, 0);
    // Every ending, and every fourth other position (the library's test reads them all).
    for (i, r) in records.iter().enumerate() {
        if r.end.is_none() && i % 4 != 0 {
            continue;
        }
        let variant = variant_of(&r.variant);
        let answer = c
            .legal_moves(pb::LegalMovesRequest {
                position: Some(pb::legal_moves_request::Position::Fen(r.fen.clone())),
                variant: variant as i32,
            })
            .await
            .unwrap_or_else(|e| panic!("{} {}: {e:?}", r.variant, r.fen))
            .into_inner();
        let context = format!("{} {}", r.variant, r.fen);
        let ours: HashSet<&str> = answer.moves.iter().map(|m| m.uci.as_str()).collect();
        let theirs: HashSet<&str> = r.legal.iter().map(String::as_str).collect();
        assert_eq!(ours, theirs, "{context}: legal moves");
        assert!(
            answer.moves.windows(2).all(|w| w[0].uci < w[1].uci),
            "{context}: sorted by UCI"
        );
        for m in &answer.moves {
            if let Some(san) = r.san.get(&m.uci) {
                assert_eq!(&m.san, san, "{context}: SAN of {}", m.uci);
                sans += 1;
            }
            if m.uci.contains('@') {
                assert_eq!(m.from_square, "", "{context}: a drop has no from square");
                assert_eq!(m.drop, m.uci[..1].to_lowercase(), "{context}: {}", m.uci);
                assert_eq!(m.to_square, &m.uci[2..], "{context}: {}", m.uci);
                drops += 1;
            } else {
                assert_eq!(m.drop, "", "{context}: {}", m.uci);
                assert_eq!(m.from_square, &m.uci[..2], "{context}: {}", m.uci);
            }
        }
        assert_eq!(answer.in_check, r.check, "{context}: check");
        if let Some((status, winner)) = expected_status(r.end.as_ref()) {
            assert_eq!(
                (answer.status(), answer.winner()),
                (status, winner),
                "{context}: status"
            );
        }
        endings += usize::from(r.end.is_some());
        asked += 1;
    }
    assert!(asked > 15_000, "{asked} positions asked");
    assert!(endings > 300, "{endings} endings");
    assert!(sans > 10_000, "{sans} SAN strings compared");
    assert!(drops > 10_000, "{drops} drops seen");
}

#[tokio::test]
async fn drops_king_promotions_and_variant_fens_read_as_callers_write_them() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    let mut moves_of = async |variant: pb::Variant, fen: &str| {
        c.legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::Fen(fen.into())),
            variant: variant as i32,
        })
        .await
        .unwrap_or_else(|e| panic!("{variant:?} {fen}: {e:?}"))
        .into_inner()
    };

    // Crazyhouse: a knight in white's pocket; a pocket written as a ninth rank reads the
    // same and is written back in brackets.
    let zh = moves_of(pb::Variant::Crazyhouse, "4k3/8/8/8/8/8/8/4K3/N w - - 0 1").await;
    assert_eq!(zh.fen, "4k3/8/8/8/8/8/8/4K3[N] w - - 0 1");
    let drop = zh
        .moves
        .iter()
        .find(|m| m.uci == "N@f6")
        .expect("a knight drop");
    assert_eq!(
        (
            drop.san.as_str(),
            drop.drop.as_str(),
            drop.from_square.as_str()
        ),
        ("N@f6+", "n", "")
    );
    assert!(drop.check);
    // No pawn drops on the first or last rank.
    let zh = moves_of(pb::Variant::Crazyhouse, "4k3/8/8/8/8/8/8/4K3[P] w - - 0 1").await;
    assert!(zh.moves.iter().any(|m| m.uci == "P@e4"));
    let back_rank_pawn_drop =
        |m: &pb::Move| m.uci.starts_with("P@") && (m.uci.ends_with('1') || m.uci.ends_with('8'));
    assert!(!zh.moves.iter().any(back_rank_pawn_drop));

    // Antichess: a pawn promotes to a king, and captures are compulsory.
    let anti = moves_of(pb::Variant::Antichess, "8/4P3/8/8/8/8/8/k7 w - - 0 1").await;
    let king = anti
        .moves
        .iter()
        .find(|m| m.uci == "e7e8k")
        .expect("promotion to a king");
    assert_eq!(king.promotion, "k");
    let forced = moves_of(pb::Variant::Antichess, "8/8/8/3p4/4P3/8/8/8 w - - 0 1").await;
    let ucis: Vec<&str> = forced.moves.iter().map(|m| m.uci.as_str()).collect();
    assert_eq!(ucis, ["e4d5"]);

    // King of the Hill: a king on the hill has won.
    let hill = moves_of(pb::Variant::KingOfTheHill, "8/8/8/4K3/8/8/8/k7 b - - 1 1").await;
    assert_eq!(
        (hill.status(), hill.winner(), hill.moves.len()),
        (pb::GameStatus::VariantWin, pb::Color::White, 0)
    );

    // Three-check: python-chess's remaining-checks form is read, lichess's written.
    let three = moves_of(
        pb::Variant::ThreeCheck,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+1 0 1",
    )
    .await;
    assert_eq!(
        three.fen,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 +0+2"
    );

    // Atomic960: X-FEN castling rights of rooks off the a- and h-files castle
    // king-takes-rook.
    let atomic960 = moves_of(pb::Variant::Atomic, "4k3/8/8/8/8/8/8/1R2K1R1 w GB - 0 1").await;
    assert!(atomic960.moves.iter().any(|m| m.uci == "e1g1" && m.castle));
    assert!(atomic960.moves.iter().any(|m| m.uci == "e1b1" && m.castle));

    // Standard chess by FEN now names the winner of a mate too.
    let mate = moves_of(
        pb::Variant::Standard,
        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
    )
    .await;
    assert_eq!(
        (mate.status(), mate.winner()),
        (pb::GameStatus::Checkmate, pb::Color::Black)
    );
}

#[tokio::test]
async fn bad_variant_fens_and_games_in_a_variant_are_refused_with_reasons() {
    let server = Server::start(&[]);
    let mut c = server.client().await;

    // A pocket in a variant without one is a FEN error, named as such.
    let refused = c
        .legal_moves(pb::LegalMovesRequest {
            position: Some(pb::legal_moves_request::Position::Fen(
                "4k3/8/8/8/8/8/8/4K3[N] w - - 0 1".into(),
            )),
            variant: pb::Variant::Atomic as i32,
        })
        .await;
    let status = expect_error(refused, Code::InvalidArgument, "INVALID_FEN");
    assert_eq!(violated_fields(&status), ["fen"]);

    // Horde: black may not have 36 pawns.
    let refused = c
        .perft(perft_request(
            "pppppppp/pppppppp/pppppppp/pppppppp/pppp4/8/8/K7 w - - 0 1",
            pb::Variant::Horde,
            1,
        ))
        .await;
    expect_error(refused, Code::InvalidArgument, "INVALID_FEN");

    // Unknown numbers stay unknown.
    let refused = c.perft(pb::PerftRequest {
        variant: 99,
        depth: 1,
        ..Default::default()
    });
    expect_error(refused.await, Code::InvalidArgument, "INVALID_VARIANT");
}

#[tokio::test]
async fn winnability_in_a_variant_answers_from_its_material_rule() {
    let server = Server::start(&[]);
    let mut c = server.client().await;
    let mut judge = async |variant: pb::Variant, fen: &str| {
        let answer = c
            .winnability(pb::WinnabilityRequest {
                position: Some(pb::winnability_request::Position::Fen(fen.into())),
                variant: variant as i32,
            })
            .await
            .unwrap_or_else(|e| panic!("{variant:?} {fen}: {e:?}"))
            .into_inner();
        let verdict = |s: Option<pb::SideWinnability>| s.expect("a verdict").verdict();
        (verdict(answer.white), verdict(answer.black), answer.dead)
    };
    use pb::WinnabilityVerdict::{Undetermined, Unwinnable};
    // Atomic: a bare king cannot win; a king and queen may.
    assert_eq!(
        judge(pb::Variant::Atomic, "8/8/8/8/8/8/k7/4K2Q w - - 0 1").await,
        (Undetermined, Unwinnable, false)
    );
    assert_eq!(
        judge(pb::Variant::Atomic, "8/8/8/8/8/8/k7/4K3 w - - 0 1").await,
        (Unwinnable, Unwinnable, true)
    );
    // Racing Kings is never decided by material.
    assert_eq!(
        judge(pb::Variant::RacingKings, "8/8/8/8/8/8/k6K/8 w - - 0 1").await,
        (Undetermined, Undetermined, false)
    );
}
