//! Records written by an earlier build still load: `tests/data/records_v1.txt` holds
//! records that the build before the codec was split into modules (commit 0c6daef,
//! format version 1) wrote for the games below, one `<id> <hex>` a line. Each must decode
//! to the same game, and this build must write the same bytes for it (the format did not
//! change). Both record forms are covered: moves only (standard, Chess960 and FEN
//! starts), and the log form, untimed (LOG) and timed (LOG and CLOCK), with every kind
//! of event.
//!
//! `tests/data/records_v2.txt` holds records of format version 2 (games with PGN tags),
//! written by the first build that wrote that version, for the games of [`games_v2`]: they
//! must load with their tags, and be written byte for byte the same.
//!
//! This file uses nothing but the library, so that another build can write the records
//! from the same games: `compat::games()` encoded with `codec::encode`.

use chess_service::lifecycle::{ClaimRule, Match, Tags, TimeControl};
use chess_service::rules::{Color, Position, Variant, chess960};
use chess_service::store::codec;
use chess_service::store::{GameMeta, Start};

const T0: u64 = 1_700_000_000_000;

fn meta(id: &str, variant: Variant, start: Start, created: u64) -> GameMeta {
    GameMeta {
        id: id.into(),
        variant: variant.into(),
        start,
        created_unix_ms: created,
        tags: chess_service::lifecycle::Tags::none(),
    }
}

fn play(m: &mut Match, now: u64, moves: &[&str]) {
    for mv in moves {
        m.play(now, None, mv)
            .unwrap_or_else(|e| panic!("{mv}: {e}"));
    }
}

/// The games of the committed records, built move by move.
pub fn games() -> Vec<(GameMeta, Match)> {
    let mut out = Vec::new();

    // Moves only, standard start: castling both sides, a capture, a check.
    let mut m = Match::untimed(Position::new());
    play(
        &mut m,
        0,
        &[
            "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Bxc6", "dxc6", "O-O", "Bg4", "h3", "h5",
            "hxg4", "hxg4", "Nxe5", "Qh4", "f3", "Bd6", "Nxg4", "O-O-O", "d3", "Qh1+",
        ],
    );
    out.push((
        meta("moves-standard", Variant::Standard, Start::Standard, T0),
        m,
    ));

    // Moves only, Chess960 start 771 with a castling move of each kind.
    let start = chess960::start_position(771, Variant::Chess960).expect("a Chess960 number");
    let mut m = Match::untimed(start);
    play(&mut m, 0, &["e1d3", "e8d6", "g1h3", "g8h6", "O-O", "O-O"]);
    out.push((
        meta("moves-960", Variant::Chess960, Start::Chess960(771), T0 + 1),
        m,
    ));

    // Moves only, a FEN start: en passant, then promotions with and without capture.
    let fen = "r3k3/1P6/8/8/5p2/8/4P3/4K3 w - - 0 40";
    let start = Position::from_fen(fen, Variant::Standard).expect("a legal FEN");
    let mut m = Match::untimed(start);
    play(
        &mut m,
        0,
        &["e4", "fxe3", "bxa8=N", "e2", "Kd2", "e1=Q+", "Kxe1"],
    );
    out.push((
        meta(
            "moves-fen",
            Variant::Standard,
            Start::Fen(start.to_fen()),
            T0 + 2,
        ),
        m,
    ));

    // The log form, untimed: undo, offers (lapsed, declined), resignation.
    let mut m = Match::untimed(Position::new());
    play(&mut m, 0, &["d4", "d5"]);
    m.undo(0, None).expect("undo");
    m.offer_draw(0, Color::White).expect("offer");
    play(&mut m, 0, &["Nf6"]); // lapses white's offer
    m.offer_draw(0, Color::Black).expect("offer");
    m.respond_to_draw(0, Color::White, false).expect("decline");
    play(&mut m, 0, &["Bf4", "e6"]);
    m.resign(0, Color::White).expect("resign");
    out.push((
        meta("log-untimed", Variant::Standard, Start::Standard, T0 + 3),
        m,
    ));

    // The log form with CLOCK: moves at real times, an offer accepted then taken back by
    // an undo, then a threefold claimed with the announced move.
    let control = TimeControl::new(300_000, 2000).expect("a valid control");
    let t = T0 + 4;
    let mut m = Match::timed(Position::new(), control, t);
    for (i, mv) in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"]
        .iter()
        .enumerate()
    {
        m.play(t + 1000 * (i as u64 + 1) + 37, None, mv)
            .unwrap_or_else(|e| panic!("{mv}: {e}"));
    }
    m.offer_draw(t + 8_100, Color::Black).expect("offer");
    m.respond_to_draw(t + 8_200, Color::White, true)
        .expect("accept");
    m.undo(t + 8_300, None)
        .expect("undo takes back the agreement");
    m.play(t + 8_400, None, "Ng1").expect("Ng1 again");
    m.claim_draw(t + 9_999, Color::Black, Some("Ng8"))
        .expect("threefold with the announced move");
    out.push((meta("log-timed", Variant::Standard, Start::Standard, t), m));

    // The log form with CLOCK, ended by the flag; then a fifty-move claim in another game.
    let control = TimeControl::new(500, 100).expect("a valid control");
    let t = T0 + 5;
    let mut m = Match::timed(Position::new(), control, t);
    play(&mut m, t + 100, &["e4"]);
    play(&mut m, t + 300, &["c5"]);
    assert!(m.settle(t + 10_000).expect("settles"), "the flag falls");
    out.push((meta("log-flag", Variant::Standard, Start::Standard, t), m));

    let fen = "8/8/4k3/8/8/3K4/8/R7 w - - 99 80";
    let start = Position::from_fen(fen, Variant::Standard).expect("a legal FEN");
    let mut m = Match::untimed(start);
    m.claim_draw(0, Color::White, Some("Ra2"))
        .expect("fifty moves with the announced move");
    out.push((
        meta(
            "log-fifty",
            Variant::Standard,
            Start::Fen(start.to_fen()),
            T0 + 6,
        ),
        m,
    ));
    out
}

/// The games of the committed version 2 records: tagged games in every record form.
pub fn games_v2() -> Vec<(GameMeta, Match)> {
    let tags = |pairs: &[(&str, &str)]| Tags::new(pairs.iter().copied()).expect("valid tags");
    let mut out = Vec::new();
    for (meta, m) in games() {
        let tags = match meta.id.as_str() {
            "moves-standard" => tags(&[
                ("Event", "Compat \"v2\" \\ test"),
                ("White", "Müller, Jörg"),
                ("Black", "?"),
                ("Date", "2026.12.01"),
                ("Round", "3.1"),
            ]),
            "moves-960" => tags(&[("Site", "Zürich"), ("ECO", "A00")]),
            "log-untimed" => tags(&[("Annotator", "x"), ("zz_last", ""), ("9th", "nine")]),
            "log-timed" => tags(&[("Event", "Blitz"), ("PlyCount", "16")]),
            _ => continue,
        };
        let id = format!("{}-tags", meta.id);
        out.push((GameMeta { id, tags, ..meta }, m));
    }
    out
}

/// The committed records of `file` (under `tests/data/`), by id.
fn committed(file: &str) -> Vec<(String, Vec<u8>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} is present: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, hex) = l.split_once(' ').expect("<id> <hex>");
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (id.to_string(), bytes)
        })
        .collect()
}

#[test]
fn records_written_by_the_previous_build_load_as_the_same_games() {
    let records = committed("records_v1.txt");
    let games = games();
    assert_eq!(
        records
            .iter()
            .map(|(id, _)| id.as_str())
            .collect::<Vec<_>>(),
        games.iter().map(|(m, _)| m.id.as_str()).collect::<Vec<_>>(),
        "one committed record per game"
    );
    let (mut moves_form, mut log_form, mut clock) = (0, 0, 0);
    for ((id, record), (meta, m)) in records.iter().zip(&games) {
        let d = codec::decode(id, record).unwrap_or_else(|e| panic!("{id}: {e}"));
        let back = &d.loaded;
        assert_eq!(back.meta, *meta, "{id}");
        assert_eq!(back.game.log(), m.log(), "{id}");
        assert_eq!(back.game.version(), m.version(), "{id}");
        assert_eq!(back.game.status(), m.status(), "{id}");
        assert_eq!(back.game.game().moves(), m.game().moves(), "{id}");
        assert_eq!(back.game.game().position(), m.game().position(), "{id}");
        assert_eq!(back.game.offer(), m.offer(), "{id}");
        assert_eq!(back.game.time_control(), m.time_control(), "{id}");
        assert_eq!(
            back.game.clock_at(u64::MAX / 4),
            m.clock_at(u64::MAX / 4),
            "{id}"
        );
        // The format did not change: this build writes the very same bytes.
        assert_eq!(
            codec::encode(meta, m).unwrap_or_else(|e| panic!("{id}: {e}")),
            *record,
            "{id}: this build writes another record for the same game"
        );
        // Which form the record took: section tags after the version byte.
        let tags = section_tags(record);
        match tags.as_slice() {
            [0x01, 0x02] => moves_form += 1,
            [0x01, 0x03] => log_form += 1,
            [0x01, 0x03, 0x04] => clock += 1,
            other => panic!("{id}: unexpected sections {other:?}"),
        }
    }
    assert_eq!(
        (moves_form, log_form, clock),
        (3, 2, 2),
        "every form is covered"
    );
    assert!(
        games.iter().any(|(_, m)| m.log().iter().any(|e| matches!(
            e.event,
            chess_service::lifecycle::Event::DrawClaimed {
                rule: ClaimRule::FiftyMoves,
                ..
            }
        ))),
        "a fifty-move claim is covered"
    );
}

#[test]
fn records_of_version_two_load_with_their_tags() {
    let records = committed("records_v2.txt");
    let games = games_v2();
    assert_eq!(
        records
            .iter()
            .map(|(id, _)| id.as_str())
            .collect::<Vec<_>>(),
        games.iter().map(|(m, _)| m.id.as_str()).collect::<Vec<_>>(),
        "one committed record per game"
    );
    let mut forms = Vec::new();
    for ((id, record), (meta, m)) in records.iter().zip(&games) {
        assert_eq!(record[0], 2, "{id}: format version 2");
        let d = codec::decode(id, record).unwrap_or_else(|e| panic!("{id}: {e}"));
        let back = &d.loaded;
        assert!(!back.meta.tags.is_empty(), "{id}");
        assert_eq!(back.meta, *meta, "{id}: the same metadata, tags included");
        assert_eq!(back.game.log(), m.log(), "{id}");
        assert_eq!(back.game.version(), m.version(), "{id}");
        assert_eq!(back.game.status(), m.status(), "{id}");
        assert_eq!(
            codec::encode(meta, m).unwrap_or_else(|e| panic!("{id}: {e}")),
            *record,
            "{id}: this build writes another record for the same game"
        );
        // The same game without its tags is version 1 again, and smaller by the tags.
        let untagged = GameMeta {
            tags: Tags::none(),
            ..meta.clone()
        };
        let plain = codec::encode(&untagged, m).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(plain[0], 1, "{id}");
        assert!(plain.len() < record.len(), "{id}");
        forms.push(section_tags(record));
    }
    assert_eq!(
        forms,
        [
            vec![0x01, 0x02, 0x05],
            vec![0x01, 0x02, 0x05],
            vec![0x01, 0x03, 0x05],
            vec![0x01, 0x03, 0x04, 0x05],
        ],
        "every history form is covered with tags"
    );
}

/// The section tags of a record, in order.
fn section_tags(record: &[u8]) -> Vec<u8> {
    let body = &record[1..record.len() - 4];
    let mut tags = Vec::new();
    let mut pos = 0;
    while pos < body.len() {
        tags.push(body[pos]);
        pos += 1;
        let (mut len, mut shift) = (0usize, 0);
        loop {
            let b = body[pos];
            pos += 1;
            len |= usize::from(b & 0x7F) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        pos += len;
    }
    tags
}
