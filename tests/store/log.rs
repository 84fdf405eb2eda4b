//! The record's event log form (LOG and CLOCK sections): games with undos, offers,
//! endings and clocks round-trip exactly, incremental encoding equals encoding from
//! scratch, damage is refused, and records of the first format still read.

use chess_service::lifecycle::{
    ClaimRule, ClockStart, Event, LogEntry, Match, Status, TimeControl,
};
use chess_service::rules::{Color, Position, Variant};
use chess_service::store::codec::testing::{RecordEncoder, encode_record, frame};
use chess_service::store::codec::{self, CodecError};
use chess_service::store::{GameMeta, Start};

use crate::common::damage;
use crate::common::rng::Rng;

fn meta(id: &str, created: u64) -> GameMeta {
    GameMeta {
        id: id.into(),
        variant: Variant::Standard.into(),
        start: Start::Standard,
        created_unix_ms: created,
        tags: chess_service::lifecycle::Tags::none(),
    }
}

fn same(a: &Match, b: &Match) {
    assert_eq!(a.log(), b.log());
    assert_eq!(a.version(), b.version());
    assert_eq!(a.status(), b.status());
    assert_eq!(a.game().moves(), b.game().moves());
    assert_eq!(a.game().position(), b.game().position());
    assert_eq!(a.offer(), b.offer());
    assert_eq!(a.time_control(), b.time_control());
    assert_eq!(a.clock_at(u64::MAX / 4), b.clock_at(u64::MAX / 4));
    assert_eq!(a.move_clocks(), b.move_clocks());
}

fn round_trip(meta: &GameMeta, m: &Match) -> Vec<u8> {
    let record = codec::encode(meta, m).unwrap_or_else(|e| panic!("{}: {e}", meta.id));
    let back = codec::decode(&meta.id, &record).unwrap_or_else(|e| panic!("{}: {e}", meta.id));
    assert_eq!(back.loaded.meta, *meta);
    same(&back.loaded.game, m);
    assert_eq!(
        codec::encode(meta, &back.loaded.game).unwrap(),
        record,
        "{}: one spelling per game",
        meta.id
    );
    record
}

/// The record of the example in docs/STORAGE.md, written by the first build (moves only):
/// `e2e4 e7e5 g1f3`, id `g1`.
#[test]
fn a_record_of_the_first_format_reads_as_a_log_of_its_moves() {
    let record = [
        0x01, 0x01, 0x08, 0x00, 0x80, 0xd0, 0x95, 0xff, 0xbc, 0x31, 0x00, 0x02, 0x03, 0x03, 0xcc,
        0x40, 0x97, 0x07, 0x7f, 0xc7,
    ];
    let d = codec::decode("g1", &record).expect("the first format still reads");
    let m = &d.loaded.game;
    assert_eq!(m.game().uci_moves(), ["e2e4", "e7e5", "g1f3"]);
    assert_eq!(m.version(), 3, "one version per move");
    assert!(m.log().iter().all(|e| matches!(e.event, Event::Move(_))));
    assert!(!m.is_timed());
    assert_eq!(d.loaded.meta.created_unix_ms, 1_700_000_000_000);
    // A moves-only untimed game is still written in that form, byte for byte.
    assert_eq!(codec::encode(&d.loaded.meta, m).unwrap(), record);
}

fn tc(initial: u64, inc: u64) -> TimeControl {
    TimeControl::new(initial, inc).unwrap()
}

fn play(m: &mut Match, now: u64, moves: &[&str]) {
    for mv in moves {
        m.play(now, None, mv)
            .unwrap_or_else(|e| panic!("{mv}: {e}"));
    }
}

/// Games that exercise every event kind, timed and untimed.
fn eventful_games() -> Vec<(GameMeta, Match)> {
    let mut out = Vec::new();
    let t0 = 1_700_000_000_000;

    let mut m = Match::untimed(Position::new());
    play(&mut m, 0, &["e4", "e5"]);
    m.undo(0, None).unwrap();
    m.offer_draw(0, Color::White).unwrap();
    play(&mut m, 0, &["c5"]); // lapses white's offer
    m.offer_draw(0, Color::Black).unwrap();
    m.respond_to_draw(0, Color::White, false).unwrap();
    m.resign(0, Color::Black).unwrap();
    out.push((meta("untimed-events", t0), m));

    let mut m = Match::timed(Position::new(), tc(300_000, 2000), t0);
    for (i, mv) in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"]
        .iter()
        .enumerate()
    {
        m.play(t0 + 1000 * (i as u64 + 1) + 37, None, mv).unwrap();
    }
    m.claim_draw(t0 + 9_999, Color::Black, Some("Ng8")).unwrap();
    assert_eq!(m.status(), Status::DrawClaimedThreefold);
    out.push((meta("timed-announced-threefold", t0), m));

    let mut m = Match::timed(Position::new(), tc(500, 100), t0 + 5);
    play(&mut m, t0 + 100, &["d4"]);
    m.offer_draw(t0 + 150, Color::Black).unwrap();
    m.respond_to_draw(t0 + 200, Color::White, true).unwrap();
    m.undo(t0 + 300, None).unwrap(); // takes back d4 and the agreement
    assert!(m.settle(t0 + 10_000).unwrap());
    out.push((meta("timed-flag", t0 + 5), m));

    let start = Position::from_fen("8/8/4k3/8/8/3K4/8/R7 w - - 99 80", Variant::Standard)
        .expect("legal FEN");
    let mut m = Match::untimed(start);
    m.claim_draw(0, Color::White, Some("Ra2")).unwrap();
    assert_eq!(m.status(), Status::DrawClaimedFiftyMoves);
    let mut fifty_meta = meta("untimed-fifty", t0);
    fifty_meta.start = Start::Fen(start.to_fen());
    out.push((fifty_meta, m));

    // Clocks that start after both first moves (CLOCK mode 1), time added to each side
    // (the most at once, an hour, too), an undo back before the clocks started.
    let control = tc(60_000, 1000).with_clock_start(ClockStart::AfterFirstMoves);
    let mut m = Match::timed(Position::new(), control, t0);
    play(&mut m, t0 + 30_000, &["e4"]);
    m.add_time(t0 + 31_000, Color::Black, 15_000).unwrap();
    play(&mut m, t0 + 40_000, &["e5"]);
    play(&mut m, t0 + 42_500, &["Nf3"]);
    m.add_time(t0 + 43_000, Color::White, 3_600_000).unwrap();
    m.undo(t0 + 44_000, None).unwrap();
    m.undo(t0 + 45_000, None).unwrap();
    m.add_time(t0 + 46_000, Color::White, 1).unwrap();
    out.push((meta("timed-after-first-moves-time-added", t0), m));

    // The solver's verdicts (record kinds 9 and 10): a move into a locked wall, taken back
    // and played again; a flag fall behind a wall the other side cannot cross.
    let fen = "8/8/1k6/1p1p1p1p/1P1P1P2/7P/8/K7 w - - 0 1";
    let start = Position::from_fen(fen, Variant::Standard).expect("legal FEN");
    let mut m = Match::timed(start, tc(60_000, 0), t0);
    play(&mut m, t0 + 1_000, &["h4"]);
    m.undo(t0 + 2_000, None).unwrap();
    play(&mut m, t0 + 3_000, &["h4"]);
    assert_eq!(m.status(), Status::DrawDeadPosition);
    let mut dead_meta = meta("timed-dead-position", t0);
    dead_meta.start = Start::Fen(start.to_fen());
    out.push((dead_meta, m));
    let fen = "5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8 w - - 0 1";
    let start = Position::from_fen(fen, Variant::Standard).expect("legal FEN");
    let mut m = Match::timed(start, tc(500, 0), t0);
    assert!(m.settle(t0 + 10_000).unwrap());
    assert_eq!(m.status(), Status::DrawTimeoutUnwinnable);
    let mut flag_meta = meta("timed-flag-unwinnable", t0);
    flag_meta.start = Start::Fen(start.to_fen());
    out.push((flag_meta, m));
    out
}

#[test]
fn games_with_events_round_trip_exactly() {
    for (meta, m) in eventful_games() {
        let record = round_trip(&meta, &m);
        println!(
            "{}: {} events, {} bytes",
            meta.id,
            m.version(),
            record.len()
        );
    }
}

#[test]
fn every_kind_of_event_is_covered() {
    let games = eventful_games();
    let has = |f: &dyn Fn(&Event) -> bool| {
        games
            .iter()
            .any(|(_, m)| m.log().iter().any(|e| f(&e.event)))
    };
    assert!(has(&|e| matches!(e, Event::Undo)));
    assert!(has(&|e| matches!(e, Event::DrawOffered(Color::White))));
    assert!(has(&|e| matches!(e, Event::DrawOffered(Color::Black))));
    assert!(has(&|e| matches!(e, Event::DrawDeclined)));
    assert!(has(&|e| matches!(e, Event::DrawLapsed)));
    assert!(has(&|e| matches!(e, Event::DrawAccepted)));
    assert!(has(&|e| matches!(e, Event::Resigned(_))));
    assert!(has(&|e| matches!(
        e,
        Event::DrawClaimed {
            rule: ClaimRule::Threefold,
            announced: true
        }
    )));
    assert!(has(&|e| matches!(
        e,
        Event::DrawClaimed {
            rule: ClaimRule::FiftyMoves,
            announced: true
        }
    )));
    assert!(has(&|e| matches!(e, Event::FlagFell)));
    assert!(has(&|e| matches!(e, Event::FlagFellUnwinnable)));
    assert!(has(&|e| matches!(e, Event::DeadPosition)));
    assert!(has(&|e| matches!(
        e,
        Event::TimeAdded {
            color: Color::White,
            ..
        }
    )));
    assert!(has(&|e| matches!(
        e,
        Event::TimeAdded {
            color: Color::Black,
            ..
        }
    )));
    assert!(games.iter().any(|(_, m)| {
        m.time_control()
            .is_some_and(|tc| tc.clock_start() == ClockStart::AfterFirstMoves)
    }));
}

/// One random operation, as a service would apply it; refusals are fine (nothing changes).
fn random_step(m: &mut Match, now: u64, rng: &mut Rng) {
    let color = if rng.below(2) == 0 {
        Color::White
    } else {
        Color::Black
    };
    let _ = match rng.below(20) {
        0..=11 => {
            let legal = m.game().legal_moves();
            if legal.is_empty() {
                m.undo(now, None).map(drop)
            } else {
                let uci = m.game().position().uci(legal[rng.below(legal.len())]);
                m.play(now, None, &uci).map(drop)
            }
        }
        12..=14 => m.undo(now, None).map(drop),
        15 => m.offer_draw(now, color),
        16 => m.respond_to_draw(now, color, rng.below(3) == 0),
        17 => m.resign(now, color),
        18 => m.claim_draw(now, color, None).map(drop),
        19 if rng.below(2) == 0 => m.add_time(now, color, 1 + rng.below(5000) as u64),
        _ => m.settle(now).map(drop),
    };
}

/// Saving after every operation through one kept encoder gives the bytes of encoding
/// from scratch, and encodes only the new events.
#[test]
fn incremental_log_encoding_equals_encoding_from_scratch() {
    let mut rng = Rng(7);
    for g in 0..40 {
        let t0 = 1_000_000 + g * 10;
        let timed = g % 2 == 0;
        let mut m = if timed {
            let start = if g % 4 == 0 {
                ClockStart::OnCreate
            } else {
                ClockStart::AfterFirstMoves
            };
            Match::timed(Position::new(), tc(20_000, 50).with_clock_start(start), t0)
        } else {
            Match::untimed(Position::new())
        };
        let meta = meta(&format!("random-{g}"), t0);
        let mut enc = RecordEncoder::new(&m);
        let mut now = t0;
        let mut work = 0;
        for _ in 0..120 {
            now += rng.below(400) as u64;
            let before = m.version();
            random_step(&mut m, now, &mut rng);
            work += enc.sync(&m).unwrap();
            // Each event once, plus once more when the game leaves the moves-only form.
            assert!(
                work as u64 <= 2 * m.version() + 1,
                "{}: encoded {work} events for {}",
                meta.id,
                m.version()
            );
            let incremental = encode_record(&meta, &enc).unwrap();
            assert_eq!(
                incremental,
                codec::encode(&meta, &m).unwrap(),
                "{} after version {before}",
                meta.id
            );
        }
        round_trip(&meta, &m);
    }
}

#[test]
fn every_single_byte_change_of_an_eventful_record_is_refused() {
    for (meta, m) in eventful_games() {
        let record = codec::encode(&meta, &m).unwrap();
        damage::assert_every_damage_refused(&meta.id, &record);
    }
}

/// A record of the current format from (tag, payload) sections, with a valid checksum.
fn seal(id: &str, sections: &[(u8, Vec<u8>)]) -> Vec<u8> {
    frame(id, codec::FORMAT_VERSION, sections)
}

/// GAME section of a standard game created at 0: variant, created 0, standard start.
const GAME_SECTION: [u8; 3] = [0, 0, 0];

#[test]
fn unknown_event_kinds_and_clock_modes_ask_for_a_newer_build() {
    // One event: tag bit 1, kind 11 (reserved; 10 is an unwinnable flag fall) =
    // 1 1011 000.
    let rec = seal("k", &[(0x01, GAME_SECTION.to_vec()), (0x03, vec![1, 0xD8])]);
    let e = codec::decode("k", &rec).err().unwrap();
    assert_eq!(
        e,
        CodecError::UnknownEventKind {
            version: 1,
            kind: 11
        }
    );
    assert!(e.to_string().contains("run a newer build"), "{e}");
    // Clock mode 2 (not defined yet; 1 is clocks starting after the first moves).
    let rec = seal(
        "k",
        &[
            (0x01, GAME_SECTION.to_vec()),
            (0x03, vec![0]),
            (0x04, vec![2, 100, 0]),
        ],
    );
    let e = codec::decode("k", &rec).err().unwrap();
    assert_eq!(e, CodecError::UnknownClockMode { mode: 2 });
    assert!(e.to_string().contains("run a newer build"), "{e}");
    // An empty untimed log and an empty timed one are fine; times must match the events.
    let empty = seal("k", &[(0x01, GAME_SECTION.to_vec()), (0x03, vec![0])]);
    assert_eq!(codec::decode("k", &empty).unwrap().loaded.game.version(), 0);
    let timed = seal(
        "k",
        &[
            (0x01, GAME_SECTION.to_vec()),
            (0x03, vec![0]),
            (0x04, vec![0, 100, 0]),
        ],
    );
    let d = codec::decode("k", &timed).unwrap();
    assert_eq!(d.loaded.game.time_control(), Some(tc(100, 0)));
    let extra_time = seal(
        "k",
        &[
            (0x01, GAME_SECTION.to_vec()),
            (0x03, vec![0]),
            (0x04, vec![0, 100, 0, 5]),
        ],
    );
    assert!(matches!(
        codec::decode("k", &extra_time),
        Err(CodecError::BadClockSection { .. })
    ));
    // An event the lifecycle refuses (a decline with no offer: tag 1, kind 2 = 1 0010 000).
    let refused = seal("k", &[(0x01, GAME_SECTION.to_vec()), (0x03, vec![1, 0x90])]);
    assert!(matches!(
        codec::decode("k", &refused),
        Err(CodecError::LogReplay(_))
    ));
}

/// Event kind 8 and clock mode 1, by hand: white gets 15 000 ms, in a game whose clocks
/// start after both first moves. Time added to an untimed game, or zero ms, is refused by
/// the replay.
#[test]
fn time_added_and_clocks_after_the_first_moves_read_by_hand() {
    // tag 1, kind 8 = 1000, colour 0, then 15000 in 22 bits (00000000 11101010011000):
    // 110000 00000000 11101010011000 (+ 4 zero bits) = c0 03 a9 80.
    let added = vec![1, 0xc0, 0x03, 0xa9, 0x80];
    let rec = seal(
        "k",
        &[
            (0x01, GAME_SECTION.to_vec()),
            (0x03, added.clone()),
            (0x04, vec![1, 100, 0, 7]),
        ],
    );
    let d = codec::decode("k", &rec).expect("kind 8 and mode 1 read");
    let m = &d.loaded.game;
    assert_eq!(
        m.log()[0].event,
        Event::TimeAdded {
            color: Color::White,
            ms: 15_000
        }
    );
    assert_eq!(
        m.time_control().map(|tc| tc.clock_start()),
        Some(ClockStart::AfterFirstMoves)
    );
    let c = m.clock_at(1_000_000).unwrap();
    assert_eq!(
        (
            c.remaining(Color::White),
            c.remaining(Color::Black),
            c.running
        ),
        (15_100, 100, None),
        "no clock runs before the first moves"
    );
    // The same event in an untimed game does not replay.
    let untimed = seal("k", &[(0x01, GAME_SECTION.to_vec()), (0x03, added)]);
    assert!(matches!(
        codec::decode("k", &untimed),
        Err(CodecError::LogReplay(_))
    ));
    // Zero ms does not replay either: 1 1000 0 (22 zero bits) = c0 00 00 00.
    let zero = seal(
        "k",
        &[
            (0x01, GAME_SECTION.to_vec()),
            (0x03, vec![1, 0xc0, 0, 0, 0]),
            (0x04, vec![0, 100, 0, 7]),
        ],
    );
    assert!(matches!(
        codec::decode("k", &zero),
        Err(CodecError::LogReplay(_))
    ));
}

/// The LOG and CLOCK example of docs/STORAGE.md, byte for byte.
#[test]
fn the_documented_log_example() {
    let t0 = 1_700_000_000_000;
    let mut m = Match::timed(Position::new(), tc(300_000, 2000), t0);
    m.play(t0 + 1500, None, "e4").unwrap();
    m.offer_draw(t0 + 1600, Color::White).unwrap();
    m.play(t0 + 4000, None, "e5").unwrap();
    m.resign(t0 + 5000, Color::White).unwrap();
    let record = codec::encode(&meta("g2", t0), &m).unwrap();
    let hex: Vec<String> = record.iter().map(|b| format!("{b:02x}")).collect();
    println!("{}", hex.join(" "));
    assert_eq!(hex.join(" "), DOC_EXAMPLE);
}

const DOC_EXAMPLE: &str = "01 01 08 00 80 d0 95 ff bc 31 00 03 05 05 66 29 a2 a0 04 0e 00 e0 a7 12 \
                           d0 0f dc 0b 64 e0 12 00 e8 07 80 a6 a3 fa";

/// The cost of the log form, measured on the corpus games: each game written untimed
/// with one non-move event (so in the LOG form: one tag bit per event), and timed with a
/// move every 1 to 10 seconds (the CLOCK section adds each event's time).
#[test]
fn log_form_size_over_the_corpus() {
    use crate::common::corpus_games;
    let (mut plies, mut moves_form, mut log_form, mut timed_form) =
        (0usize, 0usize, 0usize, 0usize);
    let mut rng = Rng(11);
    for g in corpus_games::corpus_games() {
        let meta = GameMeta {
            id: format!("corpus-{}", g.game_id),
            variant: g.variant.into(),
            start: g.start.clone(),
            created_unix_ms: 1_700_000_000_000,
            tags: chess_service::lifecycle::Tags::none(),
        };
        let start = *g.game.start();
        let moves = Match::from_moves(g.game.clone());
        moves_form += codec::encode(&meta, &moves).unwrap().len();
        // The same moves with a draw offer (and its refusal) before the first (none in the
        // few corpus games that start in an already finished position).
        let mut evented = Match::untimed(start);
        if evented.offer_draw(0, Color::White).is_ok() {
            evented.respond_to_draw(0, Color::Black, false).unwrap();
        }
        let mut timed = Match::timed(start, tc(24 * 3_600_000, 0), meta.created_unix_ms);
        let mut now = meta.created_unix_ms;
        // Applied as the log's events (as a replay does): some corpus games play on past
        // a dead position, which a live Play would end there.
        for &m in g.game.moves() {
            let event = Event::Move(m);
            evented.apply(LogEntry { event, at_ms: None }).unwrap();
            now += 1000 + rng.below(9000) as u64;
            timed
                .apply(LogEntry {
                    event,
                    at_ms: Some(now),
                })
                .unwrap();
        }
        log_form += round_trip(&meta, &evented).len();
        timed_form += round_trip(&meta, &timed).len();
        plies += g.game.ply();
    }
    let per = |b: usize| b as f64 / plies as f64;
    println!(
        "{plies} plies: moves form {:.3} B/ply; log form (one offer and refusal per game) {:.3} B/ply; \
         timed (a move every 1-10 s) {:.3} B/ply",
        per(moves_form),
        per(log_form),
        per(timed_form)
    );
    assert!(per(moves_form) <= 1.0);
    assert!(
        per(log_form) <= 1.0,
        "the log form also stays under a byte per ply"
    );
}
