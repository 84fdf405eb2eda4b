//! The winnability solver and Chess960 castling (issue 31): positions with castling rights
//! where the helpmate needs castling, for both colours, every helpmate replayed to mate
//! with our rules, and every "needs" proven: with the castling field struck, the solver
//! proves the position unwinnable.
//! - **Every one of the 960 arrangements**
//!   (`every_chess960_arrangement_has_a_position_that_needs_castling`): the loser has no
//!   legal move, castling mates at once, and every other move stalemates, which our move
//!   generator and python-chess 1.11.2 both confirm move by move.
//! - **Castling as the only legal move** (`chess960_helpmates_that_need_castling`, the 360
//!   arrangements whose king stands beside a rook in one of four ways): the rook then runs
//!   up the file to mate.

use chess_service::rules::winnability::{Solver, Verdict};
use chess_service::rules::{CHESS960_POSITIONS, Color, Move, Position, Role, Variant};

use crate::winnability::{judged, replay_mates};

/// Chess960 start positions (every castling right present) are judged winnable for both
/// sides, and every helpmate replays under our Chess960 rules. (Helpmates that need
/// castling: `chess960_helpmates_that_need_castling`.)
#[test]
fn chess960_helpmates_replay() {
    let mut solver = Solver::new();
    let mut failures = Vec::new();
    for n in [0u32, 1, 100, 359, 518, 700, 959] {
        let pos = chess_service::rules::chess960::start_position(n, Variant::Chess960).unwrap();
        for winner in [Color::White, Color::Black] {
            let fen = pos.to_fen();
            assert_eq!(
                judged(&mut solver, &pos, winner, &mut failures, &fen),
                Some(true),
                "{fen}"
            );
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The castling-only positions: White to move, White's king and castling rook on their
/// start squares and every other White move impossible, so castling is White's only legal
/// move; after it the rook runs up the open file to mate a king boxed in by its own pawns.
/// Keyed by (king file, castling rook file), 0 = a-file. Each comment names what keeps a
/// White piece still: own pieces, or a Black pawn, bishop or pawn attack on the square.
const CASTLING_ONLY: &[((usize, usize), &str)] = &[
    // Kg1 Rh1, O-O leaves the king on g1: f1 (Bd3), f2 (e3), g2 (h3) are covered, h2 is
    // blocked by h3. Then Rf1-f8 mates on h8.
    ((6, 7), "7k/6pp/8/8/8/3bp2p/7P/6KR w H - 0 1"),
    // Kf1 Rg1 swap: e1 (Ba5), e2 (d3), f2 (g3) covered, the rook shut in by Bh1 and g2,
    // which g3 blocks. Then Rf1-f8 mates on h8.
    ((5, 6), "7k/6pp/8/b7/8/3p2p1/6P1/5KRB w G - 0 1"),
    // Kc1 Rb1, O-O-O leaves the king on c1: d1 (Bh5), d2 (e3), c2 (b3) covered, the rook
    // shut in by Ba1 and b2, which b3 blocks. Then Rd1-d8 mates on a8.
    ((2, 1), "k7/pp6/8/7b/8/1p2p3/1P6/BRK5 w B - 0 1"),
    // Kd1 Rc1 swap: e1 (f2), e2 (f3), d2 (c3) covered, the rook shut in by Bb1 and c2
    // (blocked by c3; a2 keeps the bishop still). Then Rd1-d8 mates on a8.
    ((3, 2), "k7/pp6/8/8/8/p1p2p2/P1P2p2/1BRK4 w C - 0 1"),
];

/// The castling-only position for Chess960 start arrangement `n`, if its king stands next
/// to a rook in one of the four ways [`CASTLING_ONLY`] covers.
fn castling_only_fen(n: u32) -> Option<&'static str> {
    let rank = chess_service::rules::chess960::back_rank(n).unwrap();
    let king = rank.iter().position(|&r| r == Role::King).unwrap();
    let rooks: Vec<usize> = (0..8).filter(|&f| rank[f] == Role::Rook).collect();
    CASTLING_ONLY
        .iter()
        .find(|((k, r), _)| *k == king && rooks.contains(r))
        .map(|(_, fen)| *fen)
}

/// The same position seen from the other side: ranks flipped, colours swapped (a helpmate
/// of White there is a helpmate of Black here).
fn mirrored_fen(fen: &str) -> String {
    let fields: Vec<&str> = fen.split(' ').collect();
    let swap = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect()
    };
    let placement: Vec<String> = fields[0].split('/').rev().map(swap).collect();
    let turn = if fields[1] == "w" { "b" } else { "w" };
    format!(
        "{} {turn} {} {} {} {}",
        placement.join("/"),
        swap(fields[2]),
        fields[3],
        fields[4],
        fields[5]
    )
}

/// The FEN with every castling right of `color` struck from the castling field.
fn without_castling(fen: &str, color: Color) -> String {
    let mut fields: Vec<String> = fen.split(' ').map(str::to_string).collect();
    let kept: String = fields[2]
        .chars()
        .filter(|c| {
            *c != '-'
                && match color {
                    Color::White => !c.is_ascii_uppercase(),
                    Color::Black => !c.is_ascii_lowercase(),
                }
        })
        .collect();
    fields[2] = if kept.is_empty() {
        "-".to_string()
    } else {
        kept
    };
    fields.join(" ")
}

/// Whether the winner castles somewhere in `helpmate` (a line that replays).
fn castles(pos: &Position, winner: Color, helpmate: &[Move]) -> bool {
    let mut p = *pos;
    helpmate.iter().any(|&m| {
        let by_winner = m.is_castle() && p.turn() == winner;
        p.play(m);
        by_winner
    })
}

/// The Chess960 position of `fen` (for arrangement `n`), which must keep a castling right.
fn chess960_position(n: u32, fen: &str) -> Position {
    let pos =
        Position::from_fen(fen, Variant::Chess960).unwrap_or_else(|e| panic!("{n}: {fen}: {e}"));
    assert!(
        pos.castling_fen() != "-",
        "{n}: {fen} keeps a castling right"
    );
    pos
}

/// The solver's half of a "needs castling" proof: Winnable with a helpmate that replays to
/// mate and in which `winner` castles; with `winner`'s castling rights struck, Unwinnable.
fn solver_needs_castling(
    solver: &mut Solver,
    pos: &Position,
    winner: Color,
    failures: &mut Vec<String>,
) {
    let fen = pos.to_fen();
    match solver.solve(pos, winner) {
        Ok(Verdict::Winnable { helpmate, .. }) => {
            if let Err(e) = replay_mates(pos, winner, &helpmate) {
                failures.push(format!("{fen} ({winner:?}): bad helpmate: {e}"));
            } else if !castles(pos, winner, &helpmate) {
                failures.push(format!("{fen} ({winner:?}): helpmate never castles"));
            }
        }
        other => failures.push(format!("{fen} ({winner:?}): {other:?}")),
    }
    let stripped = without_castling(&fen, winner);
    let pos = Position::from_fen(&stripped, Variant::Chess960)
        .unwrap_or_else(|e| panic!("{stripped}: {e}"));
    match solver.solve(&pos, winner) {
        Ok(Verdict::Unwinnable { .. }) => {}
        other => failures.push(format!(
            "{stripped} ({winner:?}) without castling: {other:?}"
        )),
    }
}

/// Chess960 positions whose only helpmates castle, both colours: one for every start
/// arrangement whose king stands next to a rook as f1-g1, g1-h1, b1-c1 or c1-d1 (king
/// first), 360 of the 960. The position depends only on those two squares (the rest of the
/// army is gone), so the 360 share the four positions of [`CASTLING_ONLY`]. The proof is in
/// both halves: with the right, our solver finds a helpmate in which the winner castles and
/// which replays to mate; without it (the castling field edited), our solver proves that no
/// mate exists.
///
/// Castling can be the winner's only legal move exactly in those four placements: anywhere
/// else the king's or the rook's first square towards its castling square is one castling
/// itself needs empty (and, for the king, unattacked), so the piece could step there. The
/// other 600 arrangements are covered by
/// `every_chess960_arrangement_has_a_position_that_needs_castling`, where the winner has
/// other moves but the loser has none, so that any move but castling stalemates.
#[test]
fn chess960_helpmates_that_need_castling() {
    let mut solver = Solver::new();
    let mut failures = Vec::new();
    let mut covered = 0;
    for n in 0..CHESS960_POSITIONS {
        let Some(white_fen) = castling_only_fen(n) else {
            continue;
        };
        covered += 1;
        for (winner, fen) in [
            (Color::White, white_fen.to_string()),
            (Color::Black, mirrored_fen(white_fen)),
        ] {
            let pos = chess960_position(n, &fen);
            solver_needs_castling(&mut solver, &pos, winner, &mut failures);
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures: {failures:#?}",
        failures.len()
    );
    assert_eq!(covered, 360, "arrangements covered");
}

/// A board being set up square by square, written out as a FEN placement.
#[derive(Clone)]
struct Board([[Option<char>; 8]; 8]);

impl Board {
    fn new() -> Board {
        Board([[None; 8]; 8])
    }

    /// Puts `piece` (a FEN letter) on `square` ("e1").
    fn put(&mut self, square: &str, piece: char) {
        let b = square.as_bytes();
        let (file, rank) = (usize::from(b[0] - b'a'), usize::from(b[1] - b'1'));
        assert!(self.0[rank][file].is_none(), "{square} set twice");
        self.0[rank][file] = Some(piece);
    }

    /// The piece on `square`, if any.
    fn get(&self, square: &str) -> Option<char> {
        let b = square.as_bytes();
        self.0[usize::from(b[1] - b'1')][usize::from(b[0] - b'a')]
    }

    fn placement(&self) -> String {
        let mut ranks = Vec::new();
        for rank in (0..8).rev() {
            let (mut text, mut empty) = (String::new(), 0);
            for file in 0..8 {
                match self.0[rank][file] {
                    Some(c) => {
                        if empty > 0 {
                            text.push_str(&empty.to_string());
                            empty = 0;
                        }
                        text.push(c);
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                text.push_str(&empty.to_string());
            }
            ranks.push(text);
        }
        ranks.join("/")
    }
}

/// The square on the first rank of `file` (0 = a).
fn first_rank(file: usize) -> String {
    format!("{}1", char::from(b'a' + file as u8))
}

/// Which idea makes castling necessary, chosen by where the king and its castling rook
/// stand. In each, Black has no legal move at all (every Black piece is walled in by its
/// own men or by covered squares), so White must mate at once: castling does, and every
/// other White move leaves Black stalemated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Idea {
    /// King on b1-d1: O-O-O carries the rook past its king to d1, mating down the open
    /// d-file a king walled in on d8. The rook alone cannot pass its king.
    LongPastTheKing,
    /// King on f1-g1: O-O carries the rook past its king to f1, mating down the f-file.
    ShortPastTheKing,
    /// King on e1: O-O-O takes the king off the first rank's line, so the rook, now on
    /// d1, mates along the rank a king walled in on g1. Without castling the king blocks
    /// that line: it can only step to d1 (still in the way), and every square a step off
    /// the rank would need is held by its own men.
    KingLeavesTheRank,
}

/// The position for an arrangement, White to win: White's king and the castling rook on
/// their start squares with that rook's castling right, the men of the chosen idea, and
/// each other piece of the arrangement on its start square where castling stays the only
/// mate with it there.
fn needs_castling_fen(rank: &[Role; 8]) -> (String, Idea) {
    let king = rank.iter().position(|&r| r == Role::King).unwrap();
    let left = (0..king).find(|&f| rank[f] == Role::Rook).unwrap();
    let right = (king + 1..8).find(|&f| rank[f] == Role::Rook).unwrap();
    let (idea, rook) = match king {
        1..=3 => (Idea::LongPastTheKing, left),
        5 | 6 => (Idea::ShortPastTheKing, right),
        _ => (Idea::KingLeavesTheRank, left),
    };
    let mut board = Board::new();
    board.put(&first_rank(king), 'K');
    board.put(&first_rank(rook), 'R');
    let men: &[(&str, char)] = match idea {
        // Kd8 in a wall of its rooks, bishops and rammed pawns; d7 covered by c6 and e6.
        Idea::LongPastTheKing => &[
            ("d8", 'k'),
            ("c8", 'r'),
            ("e8", 'r'),
            ("b8", 'b'),
            ("f8", 'b'),
            ("a7", 'p'),
            ("c7", 'p'),
            ("e7", 'p'),
            ("g7", 'p'),
            ("a6", 'P'),
            ("c6", 'P'),
            ("e6", 'P'),
            ("g6", 'P'),
        ],
        // Kf8 likewise; f7 covered by e6 and g6.
        Idea::ShortPastTheKing => &[
            ("f8", 'k'),
            ("e8", 'r'),
            ("g8", 'r'),
            ("d8", 'b'),
            ("h8", 'b'),
            ("c7", 'p'),
            ("e7", 'p'),
            ("g7", 'p'),
            ("c6", 'P'),
            ("e6", 'P'),
            ("g6", 'P'),
        ],
        // Kg1 beside its rook h1 and pawn h2; each of f1, f2 and g2 is covered twice, so
        // that no single White move uncovers one: f1 by the king and both bishops, f2 by
        // the king and Ne4, g2 by Bh3 and Nf4. d2 and e2 keep the king on the rank.
        Idea::KingLeavesTheRank => &[
            ("g1", 'k'),
            ("h1", 'r'),
            ("h2", 'p'),
            ("d2", 'P'),
            ("e2", 'B'),
            ("h3", 'B'),
            ("e4", 'N'),
            ("f4", 'N'),
        ],
    };
    for &(square, piece) in men {
        board.put(square, piece);
    }
    // A rook's way up the b- or h-file would end where a Black pawn could take it (b6,
    // h6) or on a Black bishop (b8, h8): a rammed pair of pawns closes the file lower.
    match (idea, rook) {
        (Idea::LongPastTheKing, 1) => {
            board.put("b5", 'P');
            board.put("b6", 'p');
        }
        (Idea::ShortPastTheKing, 7) => {
            board.put("h5", 'P');
            board.put("h6", 'p');
        }
        _ => {}
    }
    // The rest of the arrangement, file by file, each piece kept on its start square when
    // the position still needs castling with it there (one that could check, or free a
    // Black man, in one move is left out; so is one standing where castling or the idea
    // needs the square). The other rook keeps its castling right.
    let mut rooks = vec![rook];
    let fen = |board: &Board, rooks: &[usize]| {
        let mut rooks = rooks.to_vec();
        rooks.sort_unstable();
        let rights: String = rooks.iter().map(|&f| char::from(b'A' + f as u8)).collect();
        format!("{} w {rights} - 0 1", board.placement())
    };
    let keeps = |board: &Board, rooks: &[usize]| {
        Position::from_fen(&fen(board, rooks), Variant::Chess960)
            .is_ok_and(|pos| only_castling_mates(&pos).is_ok())
    };
    for (file, &role) in rank.iter().enumerate() {
        let square = first_rank(file);
        if file == king || file == rook || board.get(&square).is_some() {
            continue;
        }
        let mut tried = board.clone();
        tried.put(&square, role.upper_char());
        let mut tried_rooks = rooks.clone();
        if role == Role::Rook {
            tried_rooks.push(file);
        }
        // Alone, or behind pawns of its own on the second rank that close its file and
        // diagonals (at most 8 pawns in all).
        let shields: [&[i32]; 4] = [&[], &[0], &[-1, 1], &[-1, 0, 1]];
        let kept = shields.iter().find_map(|offsets| {
            let mut shielded = tried.clone();
            for &d in offsets.iter() {
                let f = file as i32 + d;
                let front = format!("{}2", char::from(b'a' + u8::try_from(f).ok()?));
                if !(0..8).contains(&f) || shielded.get(&front).is_some() {
                    return None;
                }
                shielded.put(&front, 'P');
            }
            let pawns = shielded
                .0
                .iter()
                .flatten()
                .filter(|&&c| c == Some('P'))
                .count();
            (pawns <= 8 && keeps(&shielded, &tried_rooks)).then_some(shielded)
        });
        if let Some(kept) = kept {
            board = kept;
            rooks = tried_rooks;
        }
    }
    (fen(&board, &rooks), idea)
}

/// Why `pos` (the winner to move) can be won only by castling, checked move by move with
/// our own generator: exactly one legal move mates, and it castles; after every other move
/// the loser is stalemated (no legal move, not in check), so the game is over. An error
/// names the first move that breaks this.
fn only_castling_mates(pos: &Position) -> Result<(), String> {
    let mut mates = Vec::new();
    for &m in pos.legal_moves().iter() {
        let mut next = *pos;
        next.play(m);
        if next.is_checkmate() {
            mates.push(m);
        } else if next.is_check() {
            return Err(format!("{m} gives check ({})", next.to_fen()));
        } else if !next.legal_moves().is_empty() {
            return Err(format!("after {m} the loser can move ({})", next.to_fen()));
        }
    }
    match mates[..] {
        [m] if m.is_castle() => Ok(()),
        _ => Err(format!("the mating moves are {mates:?}, not one castling")),
    }
}

/// For every one of the 960 arrangements and both colours, a position with that
/// arrangement's king and a castling rook on their start squares (that rook's castling
/// right set), and as much of the rest of its first rank as leaves the point intact, in
/// which the winner can mate only by castling. The proof is in three parts:
/// - our own move generator shows that castling is the winner's only mating move and that
///   every other move leaves the loser stalemated ([`only_castling_mates`]);
/// - our solver finds a helpmate that castles and replays to mate;
/// - with the castling field struck, our solver proves the position unwinnable.
///
/// [`Idea`] says which placement of king and rook uses which mechanism. Arrangements whose
/// pieces had to be left out share positions: 605 are distinct.
#[test]
fn every_chess960_arrangement_has_a_position_that_needs_castling() {
    let mut solver = Solver::new();
    let mut failures = Vec::new();
    let mut distinct = std::collections::BTreeSet::new();
    let mut ideas = std::collections::BTreeMap::new();
    for n in 0..CHESS960_POSITIONS {
        let rank = chess_service::rules::chess960::back_rank(n).unwrap();
        let (white_fen, idea) = needs_castling_fen(&rank);
        *ideas.entry(format!("{idea:?}")).or_insert(0) += 1;
        distinct.insert(white_fen.clone());
        for (winner, fen) in [
            (Color::White, white_fen.clone()),
            (Color::Black, mirrored_fen(&white_fen)),
        ] {
            let pos = chess960_position(n, &fen);
            if let Err(e) = only_castling_mates(&pos) {
                failures.push(format!("{n} {fen} ({winner:?}): {idea:?}: {e}"));
                continue;
            }
            solver_needs_castling(&mut solver, &pos, winner, &mut failures);
        }
    }
    eprintln!(
        "960 arrangements, {} distinct positions; ideas: {ideas:?}",
        distinct.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures: {:#?}",
        failures.len(),
        &failures[..failures.len().min(40)]
    );
    // The file the Python client's test judges over gRPC is exactly this set
    // (`CHESS_REWRITE_TEST_DATA=1` writes it anew).
    let path = crate::common::epd::data_path("chess960_castling.txt");
    if std::env::var_os("CHESS_REWRITE_TEST_DATA").is_some() {
        let mut text = String::from(CASTLING_DATA_HEADER);
        for fen in &distinct {
            text.push_str(fen);
            text.push('\n');
        }
        std::fs::write(&path, text).expect("tests/data writable");
    }
    let text = std::fs::read_to_string(&path).expect("tests/data/chess960_castling.txt present");
    let listed: std::collections::BTreeSet<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    assert_eq!(
        listed, distinct,
        "tests/data/chess960_castling.txt is out of date (CHESS_REWRITE_TEST_DATA=1 rewrites it)"
    );
}

/// The comment heading `tests/data/chess960_castling.txt`.
const CASTLING_DATA_HEADER: &str = "\
# Chess960 positions where White can mate only by castling, one for each start arrangement
# (several arrangements share one): tests/rules/winnability_chess960.rs builds them and
# checks this file, clients/python/tests/test_client.py judges them (and their mirrors)
# over gRPC and checks them with python-chess.
";
