//! The lifecycle rules, event by event, without any I/O: time is just a number here.

use super::*;
use crate::rules::{Color, Position, Variant};

fn fen(f: &str) -> Position {
    Position::from_fen(f, Variant::Standard).expect("legal FEN")
}

fn play_all(m: &mut Match, now: u64, moves: &[&str]) {
    for mv in moves {
        m.play(now, None, mv)
            .unwrap_or_else(|e| panic!("{mv}: {e}"));
    }
}

fn events(m: &Match) -> Vec<Event> {
    m.log().iter().map(|e| e.event).collect()
}

/// Replaying the log gives the same state, and the records a spectator got live are the
/// records a replay produces.
fn assert_replays(m: &Match) {
    let back = Match::replay(
        *m.game().start(),
        m.time_control().zip(m.created_ms()),
        m.log(),
    )
    .expect("the log replays");
    assert_eq!(back.status(), m.status());
    assert_eq!(back.game().moves(), m.game().moves());
    assert_eq!(back.offer(), m.offer());
    assert_eq!(back.clock_at(u64::MAX / 2), m.clock_at(u64::MAX / 2));
    assert_eq!(back.move_clocks(), m.move_clocks());
    assert_eq!(back.version(), m.version());
}

#[test]
fn moves_alternate_and_a_move_for_the_wrong_side_is_refused_before_legality() {
    let mut m = Match::untimed(Position::new());
    assert_eq!(m.version(), 0);
    m.play(0, Some(Color::White), "e4").unwrap();
    // Black's move sent as white's: refused for the turn, not for the legality.
    assert_eq!(
        m.play(0, Some(Color::White), "zz9"),
        Err(Refusal::NotYourTurn {
            color: Color::White,
            to_move: Color::Black
        })
    );
    m.play(0, Some(Color::Black), "e5").unwrap();
    assert_eq!(m.version(), 2);
    assert!(m.only_moves());
    assert!(
        m.log().iter().all(|e| e.at_ms.is_none()),
        "untimed: no times"
    );
    assert!(matches!(m.play(0, None, "e5"), Err(Refusal::Move(_))));
    assert_eq!(m.version(), 2, "a refused request changes nothing");
}

#[test]
fn a_draw_offer_lapses_when_the_opponent_moves_not_when_the_offerer_does() {
    let mut m = Match::untimed(Position::new());
    // White offers before moving (FIDE says after, but an early offer stays valid).
    m.offer_draw(0, Color::White).unwrap();
    play_all(&mut m, 0, &["e4"]);
    assert_eq!(
        m.offer(),
        Some(Color::White),
        "the offerer's own move keeps it"
    );
    assert_eq!(
        m.offer_draw(0, Color::White),
        Err(Refusal::DrawOfferPending {
            by: Color::White,
            color: Color::White
        })
    );
    play_all(&mut m, 0, &["e5"]);
    assert_eq!(m.offer(), None, "black moved instead of answering");
    assert_eq!(
        events(&m)[2..],
        [Event::DrawLapsed, Event::Move(m.game().moves()[1])]
    );
    assert_eq!(
        m.respond_to_draw(0, Color::Black, true),
        Err(Refusal::NoDrawOffer)
    );
    assert_replays(&m);
}

/// A side offers at most once per move of its own (a request rule: a stored history with
/// repeated offers replays as it is).
#[test]
fn a_side_offers_again_only_after_its_next_move() {
    let mut m = Match::untimed(Position::new());
    m.offer_draw(0, Color::White).unwrap();
    m.respond_to_draw(0, Color::Black, false).unwrap();
    assert_eq!(
        m.offer_draw(0, Color::White),
        Err(Refusal::OfferAgainAfterMove {
            color: Color::White
        })
    );
    // The other side's move does not count; its own does.
    m.offer_draw(0, Color::Black).unwrap();
    m.respond_to_draw(0, Color::White, false).unwrap();
    play_all(&mut m, 0, &["e4"]);
    assert_eq!(
        m.offer_draw(0, Color::Black),
        Err(Refusal::OfferAgainAfterMove {
            color: Color::Black
        })
    );
    m.offer_draw(0, Color::White).unwrap();
    play_all(&mut m, 0, &["e5"]); // lapses white's offer
    m.offer_draw(0, Color::Black).unwrap();
    assert_replays(&m);
    // An older history with an offer repeated without a move still replays.
    let mut log = m.log()[..2].to_vec();
    log.extend_from_slice(&m.log()[..2]);
    let old = Match::replay(Position::new(), None, &log).expect("stored histories replay");
    assert_eq!(old.version(), 4);
}

#[test]
fn offers_are_answered_by_the_other_side_only() {
    let mut m = Match::untimed(Position::new());
    play_all(&mut m, 0, &["e4"]);
    m.offer_draw(0, Color::White).unwrap();
    assert_eq!(
        m.respond_to_draw(0, Color::White, true),
        Err(Refusal::OwnDrawOffer {
            color: Color::White
        })
    );
    m.respond_to_draw(0, Color::Black, false).unwrap();
    assert_eq!(m.offer(), None);
    m.offer_draw(0, Color::Black).unwrap();
    m.respond_to_draw(0, Color::White, true).unwrap();
    assert_eq!(m.status(), Status::DrawAgreement);
    assert_eq!(m.status().result(), "1/2-1/2");
    assert!(matches!(
        m.play(0, None, "e5"),
        Err(Refusal::GameOver(Status::DrawAgreement))
    ));
    assert_replays(&m);
}

#[test]
fn resignation_ends_the_game_and_undo_takes_it_back_with_the_last_move() {
    let mut m = Match::untimed(Position::new());
    assert!(m.resign(0, Color::White).is_ok());
    assert_eq!(
        m.status(),
        Status::Resignation {
            winner: Color::Black
        }
    );
    assert_eq!(m.undo(0, None), Err(Refusal::NothingToUndo));
    let mut m = Match::untimed(Position::new());
    play_all(&mut m, 0, &["e4", "e5"]);
    m.resign(0, Color::White).unwrap();
    assert_eq!(m.status().winner(), Some(Color::Black));
    // Undo names the side whose move it takes back: black made the last move.
    assert_eq!(
        m.undo(0, Some(Color::White)),
        Err(Refusal::NotYourMove {
            color: Color::White,
            last_mover: Color::Black
        })
    );
    let (before, undone) = m.undo(0, Some(Color::Black)).unwrap();
    assert_eq!(before.san(undone), "e5");
    assert_eq!(m.status(), Status::InProgress);
    assert_eq!(m.version(), 4);
    assert_replays(&m);
}

const KNIGHTS: [&str; 8] = ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"];

#[test]
fn threefold_claims_on_the_board_and_with_the_announced_move() {
    // On the board: the start position for the third time, white to move.
    let mut m = Match::untimed(Position::new());
    play_all(&mut m, 0, &KNIGHTS);
    assert_eq!(m.claim_draw(0, Color::White, None), Ok(None));
    assert_eq!(m.status(), Status::DrawClaimedThreefold);
    assert_replays(&m);

    // Announced: black's Ng8 would make it the third time.
    let mut m = Match::untimed(Position::new());
    play_all(&mut m, 0, &KNIGHTS[..7]);
    assert_eq!(
        m.claim_draw(0, Color::White, None),
        Err(Refusal::NotYourTurn {
            color: Color::White,
            to_move: Color::Black
        })
    );
    let refused = m.claim_draw(0, Color::Black, None).unwrap_err();
    let Refusal::ClaimRefused { why } = &refused else {
        panic!("{refused:?}")
    };
    assert!(
        why.contains("occurred twice; a third occurrence is needed"),
        "{why}"
    );
    assert!(why.contains("can be announced with the claim"), "{why}");
    let refused = m.claim_draw(0, Color::Black, Some("Nc6")).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("with Nc6: after it the position would have occurred once"),
        "{refused}"
    );
    assert_eq!(m.version(), 7, "a refused claim plays nothing");
    let (_, announced) = m.claim_draw(0, Color::Black, Some("Ng8")).unwrap().unwrap();
    assert_eq!(m.game().moves().last(), Some(&announced));
    assert_eq!(m.status(), Status::DrawClaimedThreefold);
    assert_eq!(
        events(&m)[7..],
        [
            Event::Move(announced),
            Event::DrawClaimed {
                rule: ClaimRule::Threefold,
                announced: true
            }
        ]
    );
    assert_replays(&m);
}

#[test]
fn fifty_move_claims() {
    let start = fen("8/8/4k3/8/8/3K4/8/R7 w - - 98 80");
    let mut m = Match::untimed(start);
    let refused = m.claim_draw(0, Color::White, None).unwrap_err();
    assert!(refused.to_string().contains("98 half-moves"), "{refused}");
    play_all(&mut m, 0, &["Ra2"]);
    // Black's Kd6 would be the 100th half-move.
    let (_, mv) = m.claim_draw(0, Color::Black, Some("Kd6")).unwrap().unwrap();
    assert_eq!(m.game().position().halfmoves(), 100);
    assert_eq!(m.status(), Status::DrawClaimedFiftyMoves);
    assert_eq!(m.game().moves().last(), Some(&mv));
    assert_replays(&m);

    let mut m = Match::untimed(fen("8/8/4k3/8/8/3K4/8/R7 w - - 100 80"));
    m.claim_draw(0, Color::White, None).unwrap();
    assert_eq!(m.status(), Status::DrawClaimedFiftyMoves);
}

fn tc(initial: u64, inc: u64) -> TimeControl {
    TimeControl::new(initial, inc).unwrap()
}

#[test]
fn clocks_charge_the_mover_add_the_increment_and_the_flag_falls_at_its_exact_time() {
    let mut m = Match::timed(Position::new(), tc(1000, 100), 10_000);
    assert_eq!(
        m.flag_time(),
        Some(11_000),
        "white's clock runs from creation"
    );
    m.play(10_300, None, "e4").unwrap(); // white: 1000 - 300 + 100
    m.play(10_500, None, "e5").unwrap(); // black: 1000 - 200 + 100
    let c = m.clock_at(10_600).unwrap();
    assert_eq!(
        (c.remaining(Color::White), c.remaining(Color::Black)),
        (700, 900)
    );
    assert_eq!((c.running, c.as_of_ms), (Some(Color::White), 10_600));
    assert_eq!(m.flag_time(), Some(10_500 + 800));
    assert_eq!(m.settle(11_299), Ok(false));
    // Noticed late, at 12 000: decided at the flag time, 11 300.
    assert!(matches!(
        m.play(12_000, None, "Nf3"),
        Err(Refusal::GameOver(Status::OutOfTime {
            winner: Color::Black
        }))
    ));
    let last = m.log().last().copied().unwrap();
    assert_eq!((last.event, last.at_ms), (Event::FlagFell, Some(11_300)));
    let c = m.clock_at(20_000).unwrap();
    assert_eq!((c.remaining(Color::White), c.running), (0, None));
    assert_eq!(m.move_clocks(), Some(vec![800, 900]));
    assert_replays(&m);
}

#[test]
fn a_flag_against_insufficient_material_is_a_draw() {
    // Black's flag falls; white has king and knight against king and queen: white
    // could not mate (the material rule), so it is a draw.
    let mut m = Match::timed(fen("4k3/8/8/8/8/8/q7/4KN2 b - - 0 1"), tc(500, 0), 0);
    assert_eq!(m.settle(10_000), Ok(true));
    assert_eq!(m.status(), Status::DrawTimeoutInsufficientMaterial);
    assert_eq!(m.status().winner(), None);
    assert_eq!(m.status().termination(), "time forfeit");
    assert_eq!(m.log()[0].at_ms, Some(500));
    // With a rook instead, white could mate: black loses.
    let mut m = Match::timed(fen("4k3/8/8/8/8/8/8/4KR2 b - - 0 1"), tc(500, 0), 0);
    m.settle(500).unwrap();
    assert_eq!(
        m.status(),
        Status::OutOfTime {
            winner: Color::White
        }
    );
}

#[test]
fn undo_restores_both_clocks_and_the_side_to_move_runs_from_the_undo() {
    let mut m = Match::timed(Position::new(), tc(1000, 100), 0);
    m.play(300, None, "e4").unwrap(); // white 800
    m.play(500, None, "e5").unwrap(); // black 900
    m.undo(650, None).unwrap(); // back to black's turn: white 800, black 1000
    let c = m.clock_at(650).unwrap();
    assert_eq!(
        (
            c.remaining(Color::White),
            c.remaining(Color::Black),
            c.running
        ),
        (800, 1000, Some(Color::Black))
    );
    assert_eq!(m.flag_time(), Some(650 + 1000));
    // Even after the flag fell, undo reopens the game with the clocks as they were.
    assert!(m.settle(5000).unwrap());
    m.undo(6000, None).unwrap();
    let c = m.clock_at(6000).unwrap();
    assert_eq!(
        (
            c.remaining(Color::White),
            c.remaining(Color::Black),
            c.running
        ),
        (1000, 1000, Some(Color::White))
    );
    assert_eq!(m.status(), Status::InProgress);
    assert_replays(&m);
}

#[test]
fn time_never_runs_backwards_and_decisions_stop_the_clock() {
    let mut m = Match::timed(Position::new(), tc(1000, 0), 1000);
    m.play(1400, None, "d4").unwrap();
    // A reading from before the last event counts as that event's time.
    m.play(1200, None, "d5").unwrap();
    assert_eq!(m.log()[1].at_ms, Some(1400));
    m.resign(1500, Color::White).unwrap();
    let c = m.clock_at(9999).unwrap();
    assert_eq!(
        (
            c.remaining(Color::White),
            c.remaining(Color::Black),
            c.running
        ),
        (500, 1000, None)
    );
    assert_replays(&m);
}

#[test]
fn replay_refuses_logs_the_rules_do_not_allow() {
    let start = Position::new();
    let e4 = start.parse_move("e4").unwrap();
    let entry = |event, at_ms| LogEntry { event, at_ms };
    // A move after the flag time.
    let late = [entry(Event::Move(e4), Some(1000))];
    let err = Match::replay(start, Some((tc(1000, 0), 0)), &late).unwrap_err();
    assert!(err.why.contains("flag"), "{err}");
    // A flag fall at the wrong time, a time in an untimed game, a declined non-offer,
    // a dangling lapse, a claim that does not hold.
    for (log, clock) in [
        (
            vec![entry(Event::FlagFell, Some(999))],
            Some((tc(1000, 0), 0)),
        ),
        (vec![entry(Event::Move(e4), Some(5))], None),
        (vec![entry(Event::DrawDeclined, None)], None),
        (
            vec![
                entry(Event::DrawOffered(Color::Black), None),
                entry(Event::DrawLapsed, None),
            ],
            None,
        ),
        (
            vec![entry(
                Event::DrawClaimed {
                    rule: ClaimRule::Threefold,
                    announced: false,
                },
                None,
            )],
            None,
        ),
        (
            vec![
                entry(Event::DrawOffered(Color::Black), None),
                entry(Event::Move(e4), None),
            ],
            None,
        ),
    ] {
        assert!(
            Match::replay(start, clock, &log).is_err(),
            "{log:?} replayed"
        );
    }
}

#[test]
fn records_live_and_replayed_are_the_same() {
    let mut m = Match::timed(Position::new(), tc(60_000, 1000), 0);
    m.set_recording(true);
    let mut live = vec![m.initial_record()];
    m.play(100, None, "e4").unwrap();
    m.offer_draw(150, Color::White).unwrap();
    m.play(300, None, "c5").unwrap();
    m.undo(400, None).unwrap();
    m.play(500, None, "e5").unwrap();
    m.offer_draw(600, Color::Black).unwrap();
    m.respond_to_draw(700, Color::White, true).unwrap();
    live.extend(m.take_records());
    assert_eq!(live.len() as u64, m.version() + 1);
    assert!(live.iter().enumerate().all(|(i, r)| r.version == i as u64));
    assert_eq!(m.records_since(0).unwrap(), live);
    assert_eq!(m.records_since(5).unwrap(), live[5..]);
    let lapse = &live[3];
    assert_eq!(
        (lapse.event, lapse.by, lapse.offer, lapse.ply),
        (Some(Event::DrawLapsed), Some(Color::Black), None, 1)
    );
    let end = live.last().unwrap();
    assert_eq!(
        (end.status, end.by),
        (Status::DrawAgreement, Some(Color::White))
    );
    let clock = end.clock.unwrap();
    assert_eq!((clock.running, clock.as_of_ms), (None, 700));
}

fn after_first_moves(initial: u64, inc: u64) -> TimeControl {
    tc(initial, inc).with_clock_start(ClockStart::AfterFirstMoves)
}

#[test]
fn with_clock_start_after_first_moves_no_clock_runs_before_both_sides_moved() {
    let mut m = Match::timed(Position::new(), after_first_moves(1000, 100), 0);
    let c = m.clock_at(50_000).unwrap();
    assert_eq!(
        (
            c.remaining(Color::White),
            c.remaining(Color::Black),
            c.running
        ),
        (1000, 1000, None),
        "nothing runs before the first move, however long it takes"
    );
    assert_eq!(m.flag_time(), None);
    assert_eq!(m.settle(50_000), Ok(false));
    m.play(60_000, None, "e4").unwrap(); // not charged, no increment
    assert_eq!(m.flag_time(), None);
    m.play(90_000, None, "e5").unwrap(); // not charged either; white's clock runs now
    let c = m.clock_at(90_400).unwrap();
    assert_eq!(
        (
            c.remaining(Color::White),
            c.remaining(Color::Black),
            c.running
        ),
        (600, 1000, Some(Color::White))
    );
    assert_eq!(m.flag_time(), Some(91_000));
    m.play(90_300, None, "Nf3").unwrap(); // white: 1000 - 300 + 100
    assert_eq!(m.move_clocks(), Some(vec![1000, 1000, 800]));
    assert_replays(&m);
    // Undo back before the start stops the clocks again.
    m.undo(90_500, None).unwrap();
    assert_eq!(m.flag_time(), Some(90_500 + 1000), "white runs again");
    m.undo(90_600, None).unwrap();
    let c = m.clock_at(99_999).unwrap();
    assert_eq!(
        (
            c.remaining(Color::White),
            c.remaining(Color::Black),
            c.running
        ),
        (1000, 1000, None)
    );
    assert_eq!(m.flag_time(), None);
    assert_replays(&m);
    // A resignation before the start charges nobody.
    m.resign(120_000, Color::Black).unwrap();
    let c = m.clock_at(130_000).unwrap();
    assert_eq!((c.remaining(Color::Black), c.running), (1000, None));
    assert_replays(&m);
}

#[test]
fn time_added_goes_to_one_side_and_survives_undo() {
    let mut m = Match::timed(Position::new(), tc(1000, 0), 0);
    m.play(200, None, "e4").unwrap(); // white 800
    m.add_time(300, Color::Black, 15_000).unwrap(); // black: 1000 + 15000, running since 200
    let c = m.clock_at(300).unwrap();
    assert_eq!(
        (c.remaining(Color::White), c.remaining(Color::Black)),
        (800, 15_900)
    );
    assert_eq!(m.flag_time(), Some(200 + 16_000));
    assert_eq!(
        m.log().last().map(|e| (e.event, e.at_ms)),
        Some((
            Event::TimeAdded {
                color: Color::Black,
                ms: 15_000
            },
            Some(300)
        ))
    );
    assert_replays(&m);
    // Given for good: taking white's move back keeps black's extra time.
    m.undo(400, None).unwrap();
    let c = m.clock_at(400).unwrap();
    assert_eq!(
        (c.remaining(Color::White), c.remaining(Color::Black)),
        (1000, 16_000)
    );
    assert_replays(&m);
    // Refusals: zero, more than an hour, an untimed game, an ended game.
    assert_eq!(
        m.add_time(500, Color::White, 0),
        Err(Refusal::AddTimeOutOfRange { ms: 0 })
    );
    assert_eq!(
        m.add_time(500, Color::White, MAX_ADD_TIME_MS + 1),
        Err(Refusal::AddTimeOutOfRange {
            ms: MAX_ADD_TIME_MS + 1
        })
    );
    m.add_time(500, Color::White, MAX_ADD_TIME_MS).unwrap();
    let mut untimed = Match::untimed(Position::new());
    assert_eq!(
        untimed.add_time(0, Color::White, 1000),
        Err(Refusal::Untimed)
    );
    m.resign(600, Color::White).unwrap();
    assert!(matches!(
        m.add_time(700, Color::White, 1000),
        Err(Refusal::GameOver(_))
    ));
    // A stored log with time added out of bounds, or to an untimed game, does not replay.
    let bad = |ms| LogEntry {
        event: Event::TimeAdded {
            color: Color::White,
            ms,
        },
        at_ms: Some(10),
    };
    assert!(Match::replay(Position::new(), Some((tc(1000, 0), 0)), &[bad(0)]).is_err());
    assert!(
        Match::replay(
            Position::new(),
            Some((tc(1000, 0), 0)),
            &[bad(MAX_ADD_TIME_MS + 1)]
        )
        .is_err()
    );
    let untimed_entry = LogEntry {
        at_ms: None,
        ..bad(1000)
    };
    assert!(Match::replay(Position::new(), None, &[untimed_entry]).is_err());
}

#[test]
fn the_opening_follows_moves_and_undos_and_reaches_the_pgn() {
    let mut m = Match::untimed(Position::new());
    assert_eq!(m.opening(), None);
    play_all(
        &mut m,
        0,
        &[
            "e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6",
        ],
    );
    let najdorf = m.opening().expect("named");
    assert_eq!(
        (najdorf.eco, najdorf.name, najdorf.ply),
        ("B90", "Sicilian Defense: Najdorf Variation", 10)
    );
    let pgn = pgn::to_pgn(&m, &m.game().san_moves(), &Tags::none());
    assert!(
        pgn.contains("[ECO \"B90\"]\n[Opening \"Sicilian Defense: Najdorf Variation\"]\n"),
        "{pgn}"
    );
    m.undo(0, None).unwrap();
    assert_ne!(m.opening(), Some(najdorf));
    assert_eq!(m.opening(), opening::classify(m.game()));
    let back = Match::replay(*m.game().start(), None, m.log()).expect("replays");
    assert_eq!(back.opening(), m.opening());
    assert_eq!(Match::from_moves(m.game().clone()).opening(), m.opening());
}

/// The export order: the roster with the caller's values, the server's tags (start, time
/// control, termination, opening), then the caller's other tags by name, escaped.
#[test]
fn pgn_tags_come_in_the_documented_order() {
    let tags = Tags::new([
        ("zeta", "last"),
        ("White", "Anand, V."),
        ("Annotator", "say \"hi\" \\ there"),
        ("ECO", "Z99"),
        ("Opening", "Mine"),
        ("Event", "Test"),
        ("Date", "2026.12.01"),
        ("Board", "3"),
    ])
    .expect("valid tags");
    let control = TimeControl::new(60_000, 1_000).expect("valid");
    let mut m = Match::timed(Position::new(), control, 0);
    play_all(&mut m, 10, &["e4", "e5"]);
    m.resign(20, Color::White).expect("resigns");
    let pgn = pgn::to_pgn(&m, &m.game().san_moves(), &tags);
    let header: Vec<&str> = pgn.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        header,
        [
            "[Event \"Test\"]",
            "[Site \"?\"]",
            "[Date \"2026.12.01\"]",
            "[Round \"?\"]",
            "[White \"Anand, V.\"]",
            "[Black \"?\"]",
            "[Result \"0-1\"]",
            "[TimeControl \"60+1\"]",
            "[Termination \"normal\"]",
            "[ECO \"C20\"]",
            "[Opening \"King's Pawn Game\"]",
            "[Annotator \"say \\\"hi\\\" \\\\ there\"]",
            "[Board \"3\"]",
            "[zeta \"last\"]",
        ],
        "{pgn}"
    );

    // No named opening (a Chess960 start): the start tags first, and the caller's ECO
    // and Opening in the opening's place.
    let start = crate::rules::chess960::start_position(0, crate::rules::Variant::Chess960)
        .expect("a Chess960 number");
    let m = Match::untimed(start);
    let pgn = pgn::to_pgn(&m, &[], &tags);
    let header: Vec<&str> = pgn.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        &header[6..9],
        ["[Result \"*\"]", "[Variant \"Chess960\"]", "[SetUp \"1\"]"]
    );
    assert!(header[9].starts_with("[FEN \""), "{pgn}");
    assert_eq!(
        &header[10..],
        [
            "[ECO \"Z99\"]",
            "[Opening \"Mine\"]",
            "[Annotator \"say \\\"hi\\\" \\\\ there\"]",
            "[Board \"3\"]",
            "[zeta \"last\"]",
        ]
    );
    // The same tags given in another order export the same text.
    let again = Tags::new(tags.iter().collect::<Vec<_>>().into_iter().rev()).expect("valid");
    assert_eq!(pgn::to_pgn(&m, &[], &again), pgn);
}

// ---- dead positions and flag falls judged by the winnability solver --------------------

/// chasolver's README wall: black cannot mate, white still can.
const WALL: &str = "5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8";

#[test]
fn a_move_that_locks_the_last_file_ends_the_game_dead_and_its_undo_reopens_it() {
    // White's h-pawn can still let its king through h4; after h4 no king can cross.
    let mut m = Match::untimed(fen("8/8/1k6/1p1p1p1p/1P1P1P2/7P/8/K7 w - - 0 1"));
    assert_eq!(m.end_if_dead(0), Ok(false), "the king can still go round");
    play_all(&mut m, 0, &["h4"]);
    assert_eq!(m.status(), Status::DrawDeadPosition);
    assert_eq!(m.status().result(), "1/2-1/2");
    assert_eq!(m.status().termination(), "normal");
    assert_eq!(events(&m).last(), Some(&Event::DeadPosition));
    assert_eq!(m.version(), 2, "the move, then the dead position");
    assert!(matches!(
        m.play(0, None, "Ka6"),
        Err(Refusal::GameOver(Status::DrawDeadPosition))
    ));
    assert_replays(&m);
    m.undo(0, None).unwrap();
    assert_eq!(m.status(), Status::InProgress);
    assert_eq!(m.game().ply(), 0);
    assert_replays(&m);
}

#[test]
fn a_dead_position_in_a_timed_game_stops_the_clocks_at_the_move() {
    let mut m = Match::timed(
        fen("8/8/1k6/1p1p1p1p/1P1P1P2/7P/8/K7 w - - 0 1"),
        tc(60_000, 0),
        0,
    );
    play_all(&mut m, 1_000, &["h4"]);
    assert_eq!(m.status(), Status::DrawDeadPosition);
    assert_eq!(m.log().last().map(|e| e.at_ms), Some(Some(1_000)));
    assert_eq!(m.flag_time(), None, "no clock runs once the game is over");
    assert_replays(&m);
}

#[test]
fn a_game_created_dead_ends_at_once_and_the_material_rule_needs_no_event() {
    let mut m = Match::untimed(fen("8/8/1k6/1p1p1p1p/1P1P1P1P/8/8/K7 w - - 0 1"));
    assert_eq!(m.end_if_dead(0), Ok(true));
    assert_eq!(events(&m), [Event::DeadPosition]);
    assert_replays(&m);
    // Bare kings end on the board: no event.
    let mut m = Match::untimed(fen("8/8/8/2k5/8/8/8/K7 w - - 0 1"));
    assert_eq!(m.end_if_dead(0), Ok(false));
    assert_eq!(m.status(), Status::InsufficientMaterial);
    assert!(m.log().is_empty());
}

#[test]
fn a_flag_fall_is_drawn_only_when_the_other_side_cannot_mate() {
    // White's flag falls: black cannot mate behind the wall, a draw (FIDE 6.9).
    let mut m = Match::timed(fen(&format!("{WALL} w - - 0 1")), tc(500, 0), 0);
    assert_eq!(m.settle(10_000), Ok(true));
    assert_eq!(m.status(), Status::DrawTimeoutUnwinnable);
    assert_eq!(m.status().termination(), "time forfeit");
    assert_eq!(m.status().result(), "1/2-1/2");
    assert_eq!(events(&m), [Event::FlagFellUnwinnable]);
    assert_replays(&m);
    // Black's flag falls: white can still mate, so black loses on time.
    let mut m = Match::timed(fen(&format!("{WALL} b - - 0 1")), tc(500, 0), 0);
    assert_eq!(m.settle(10_000), Ok(true));
    assert_eq!(
        m.status(),
        Status::OutOfTime {
            winner: Color::White
        }
    );
    assert_eq!(events(&m), [Event::FlagFell]);
    assert_replays(&m);
}

#[test]
fn a_replay_takes_the_records_word_and_never_runs_the_solver() {
    // A log written by a build whose solver judged 1. e4 dead (a nonsense verdict, to show
    // that the replay does not judge again): it replays to the recorded ending.
    let e4 = Position::new().parse_move("e4").unwrap();
    let log = [
        LogEntry {
            event: Event::Move(e4),
            at_ms: None,
        },
        LogEntry {
            event: Event::DeadPosition,
            at_ms: None,
        },
    ];
    let m = Match::replay(Position::new(), None, &log).expect("replays");
    assert_eq!(m.status(), Status::DrawDeadPosition);
    // But the event's place is checked: only right after its move (or first).
    let offer = LogEntry {
        event: Event::DrawOffered(Color::White),
        at_ms: None,
    };
    let err = Match::replay(Position::new(), None, &[log[0], offer, log[1]]).unwrap_err();
    assert_eq!((err.version, err.what), (3, "dead position"));
    // A flag fall against a side without mating material is a plain flag fall.
    let flag = LogEntry {
        event: Event::FlagFellUnwinnable,
        at_ms: None,
    };
    let err = Match::replay(fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 1"), None, &[flag]).unwrap_err();
    assert!(err.why.contains("no mating material"), "{err}");
}
