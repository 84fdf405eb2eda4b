//! The record codec on every corpus game: exact round trip, size per ply, incremental
//! encoding, and refusal of every kind of damaged or foreign record.

use chess_service::lifecycle::Match;
use chess_service::rules::{Game, Position, Variant};
use chess_service::store::codec::testing::{
    self as codec_testing, MoveEncoder, encode_with, frame, order_key,
};
use chess_service::store::codec::{self, CodecError, FORMAT_VERSION};
use chess_service::store::{GameMeta, Start};

use crate::common::corpus_games::{CorpusGame, corpus_games};
use crate::common::damage;

fn meta_of(g: &CorpusGame) -> GameMeta {
    GameMeta {
        id: format!("corpus-{}", g.game_id),
        variant: g.variant.into(),
        start: g.start.clone(),
        created_unix_ms: 1_700_000_000_000 + g.game_id,
        tags: chess_service::lifecycle::Tags::none(),
    }
}

#[test]
fn every_corpus_game_round_trips_in_at_most_one_byte_per_ply() {
    let games = corpus_games();
    assert_eq!(games.len(), 300, "the corpus has 300 games");
    let (mut plies, mut record_bytes, mut move_bits, mut floor_bits) = (0usize, 0usize, 0u64, 0f64);
    let mut starts = [0usize; 3];
    for g in games {
        let meta = meta_of(g);
        let record = codec::encode(&meta, &Match::from_moves(g.game.clone()))
            .unwrap_or_else(|e| panic!("{}: {e}", meta.id));
        let decoded =
            codec::decode(&meta.id, &record).unwrap_or_else(|e| panic!("{}: {e}", meta.id));
        let back = &decoded.loaded;
        let back_game = back.game.game();
        assert_eq!(back.meta, meta);
        assert_eq!(
            back_game.moves(),
            g.game.moves(),
            "{}: moves differ",
            meta.id
        );
        assert_eq!(
            back_game.position(),
            g.game.position(),
            "{}: final position differs",
            meta.id
        );
        assert_eq!(back_game.position().to_fen(), g.game.position().to_fen());
        assert_eq!(back.game.status(), g.game.status().into(), "{}", meta.id);
        assert_eq!(back_game.uci_moves(), g.game.uci_moves());
        // One spelling per game: re-encoding the decoded game gives the same bytes.
        assert_eq!(
            codec::encode(&back.meta, &back.game).unwrap(),
            record,
            "{}",
            meta.id
        );
        let (bits, floor) = codec_testing::move_bits(&g.game).unwrap();
        assert_eq!(decoded.encoder().bits().bit_len(), bits);
        plies += g.game.ply();
        record_bytes += record.len();
        move_bits += bits;
        floor_bits += floor;
        starts[match g.start {
            Start::Standard => 0,
            Start::Chess960(_) => 1,
            Start::Fen(_) => 2,
        }] += 1;
    }
    let per_ply = record_bytes as f64 / plies as f64;
    println!(
        "{} games ({} standard starts, {} Chess960 numbers, {} FEN starts), {plies} plies: \
         whole records {record_bytes} bytes = {per_ply:.3} B/ply; moves alone {:.3} B/ply \
         ({:.2} bits/ply; uniform-model floor {:.2} bits/ply)",
        games.len(),
        starts[0],
        starts[1],
        starts[2],
        move_bits as f64 / 8.0 / plies as f64,
        move_bits as f64 / plies as f64,
        floor_bits / plies as f64,
    );
    assert!(
        starts.iter().all(|&n| n > 0),
        "all three start kinds are exercised: {starts:?}"
    );
    assert!(
        per_ply <= 1.0,
        "whole records take {per_ply:.3} bytes per ply, above the 1.0 target"
    );
    // The truncated binary code stays within 0.1 bit of the uniform floor per move.
    assert!((move_bits as f64 - floor_bits) / (plies as f64) < 0.1);
}

/// Saving after each move, with undos mixed in, through one cached encoder gives the
/// same bytes as encoding from scratch every time.
#[test]
fn incremental_encoding_equals_encoding_from_scratch() {
    let games = corpus_games();
    for g in games.iter().step_by(15) {
        let meta = meta_of(g);
        let start = *g.game.start();
        let mut enc = MoveEncoder::new(start);
        let mut game = Game::new(start);
        let mut work = 0;
        for (i, &m) in g.game.moves().iter().enumerate() {
            game.play(m).unwrap();
            if i % 7 == 6 {
                // take back two, then replay them
                let a = game.undo().unwrap();
                let b = game.undo().unwrap();
                work += enc.sync(&game).unwrap();
                assert_eq!(
                    encode_with(&meta, &enc).unwrap(),
                    codec::encode(&meta, &Match::from_moves(game.clone())).unwrap()
                );
                game.play(b).unwrap();
                game.play(a).unwrap();
            }
            let encoded = enc.sync(&game).unwrap();
            assert!(
                encoded <= 2,
                "{}: ply {i}: re-encoded {encoded} moves",
                meta.id
            );
            work += encoded;
            assert_eq!(
                encode_with(&meta, &enc).unwrap(),
                codec::encode(&meta, &Match::from_moves(game.clone())).unwrap(),
                "{} ply {i}",
                meta.id
            );
        }
        assert!(
            work <= 2 * g.game.ply(),
            "{}: incremental encoding did {work} move encodings",
            meta.id
        );
    }
}

fn sample() -> (GameMeta, Vec<u8>) {
    let games = corpus_games();
    let g = games
        .iter()
        .find(|g| g.game.ply() > 100)
        .expect("a long game");
    let meta = meta_of(g);
    let record = codec::encode(&meta, &Match::from_moves(g.game.clone())).unwrap();
    (meta, record)
}

#[test]
fn every_single_byte_change_and_every_truncation_is_refused() {
    let (meta, record) = sample();
    damage::assert_every_damage_refused(&meta.id, &record);
}

#[test]
fn a_record_under_another_id_fails_its_checksum() {
    let (meta, record) = sample();
    assert!(matches!(
        codec::decode(&format!("{}x", meta.id), &record),
        Err(CodecError::Checksum { .. })
    ));
}

/// Splits a v1 record into its sections.
fn sections(record: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let body = &record[1..record.len() - 4];
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < body.len() {
        let tag = body[pos];
        let len = body[pos + 1] as usize;
        assert!(len < 0x80, "test helper reads one-byte lengths only");
        out.push((tag, body[pos + 2..pos + 2 + len].to_vec()));
        pos += 2 + len;
    }
    out
}

fn short_game() -> (GameMeta, Game) {
    let mut game = Game::new(Position::new());
    for m in ["f2f3", "e7e5", "g2g4", "d8h4"] {
        let mv = game.position().board().parse_uci(m).unwrap();
        game.play(mv).unwrap();
    }
    let meta = GameMeta {
        id: "fools-mate".into(),
        variant: Variant::Standard.into(),
        start: Start::Standard,
        created_unix_ms: 42,
        tags: chess_service::lifecycle::Tags::none(),
    };
    (meta, game)
}

#[test]
fn version_and_section_rules() {
    let (meta, game) = short_game();
    let record = codec::encode(&meta, &Match::from_moves(game.clone())).unwrap();
    assert_eq!(record[0], 1, "a game without tags is written as version 1");
    let secs = sections(&record);
    assert_eq!(
        secs.iter().map(|s| s.0).collect::<Vec<_>>(),
        vec![0x01, 0x02]
    );
    assert_eq!(
        frame(&meta.id, 1, &secs),
        record,
        "the helper rebuilds the record exactly"
    );

    let newer = frame(&meta.id, FORMAT_VERSION + 1, &secs);
    let e = codec::decode(&meta.id, &newer).err().unwrap();
    assert_eq!(
        e,
        CodecError::NewerVersion {
            found: FORMAT_VERSION + 1
        }
    );
    assert!(e.to_string().contains("newer build"), "{e}");
    assert_eq!(
        codec::decode(&meta.id, &frame(&meta.id, 0, &secs)).err(),
        Some(CodecError::ZeroVersion)
    );

    // An unknown optional section (0x80 and up) is skipped and reported.
    let mut with_optional = secs.clone();
    with_optional.push((0x85, vec![1, 2, 3]));
    let d = codec::decode(&meta.id, &frame(&meta.id, 1, &with_optional)).unwrap();
    assert_eq!(d.loaded.game.game().moves(), game.moves());
    assert_eq!(d.skipped_sections, vec![0x85]);

    // An unknown required section (below 0x80) refuses the record, saying to upgrade.
    let mut with_required = secs.clone();
    with_required.push((0x06, vec![0]));
    let e = codec::decode(&meta.id, &frame(&meta.id, FORMAT_VERSION, &with_required))
        .err()
        .unwrap();
    assert_eq!(e, CodecError::UnknownRequiredSection { tag: 0x06 });
    assert!(e.to_string().contains("run a newer build"), "{e}");

    // A history in both forms at once, or a clock without a log.
    let mut both = secs.clone();
    both.push((0x03, vec![0]));
    assert!(matches!(
        codec::decode(&meta.id, &frame(&meta.id, 1, &both)),
        Err(CodecError::BadLogSection { .. })
    ));
    let mut clock_alone = secs.clone();
    clock_alone.push((0x04, vec![0, 0x64, 0]));
    assert!(matches!(
        codec::decode(&meta.id, &frame(&meta.id, 1, &clock_alone)),
        Err(CodecError::BadClockSection { .. })
    ));

    // Order and presence.
    let swapped = vec![secs[1].clone(), secs[0].clone()];
    assert!(matches!(
        codec::decode(&meta.id, &frame(&meta.id, 1, &swapped)),
        Err(CodecError::SectionOrder { .. })
    ));
    let only_game = vec![secs[0].clone()];
    assert!(matches!(
        codec::decode(&meta.id, &frame(&meta.id, 1, &only_game)),
        Err(CodecError::MissingSection { .. })
    ));
}

#[test]
fn replay_refuses_moves_after_the_end_and_bad_move_sections() {
    let (meta, game) = short_game();
    let secs = sections(&codec::encode(&meta, &Match::from_moves(game.clone())).unwrap());
    let moves = &secs[1].1;
    assert_eq!(moves[0], 4, "ply count");

    // One more move after the mate (checksum valid): refused by the replay.
    let mut after_mate = moves.clone();
    after_mate[0] = 5;
    after_mate.push(0);
    let e = codec::decode(
        &meta.id,
        &frame(&meta.id, 1, &[secs[0].clone(), (0x02, after_mate)]),
    )
    .err()
    .unwrap();
    assert!(matches!(&e, CodecError::Replay { ply: 4, .. }), "{e}");

    // A ply count the bits cannot hold.
    let mut too_many = moves.clone();
    too_many[0] = 60;
    let e = codec::decode(
        &meta.id,
        &frame(&meta.id, 1, &[secs[0].clone(), (0x02, too_many)]),
    )
    .err()
    .unwrap();
    assert!(matches!(e, CodecError::Replay { .. }), "{e}");

    // Bytes left over after the last move.
    let mut trailing = moves.clone();
    trailing.push(0);
    let e = codec::decode(
        &meta.id,
        &frame(&meta.id, 1, &[secs[0].clone(), (0x02, trailing)]),
    )
    .err()
    .unwrap();
    assert!(matches!(e, CodecError::BadMovesSection { .. }), "{e}");

    // Non-zero padding bits.
    let mut padded = moves.clone();
    let last = padded.len() - 1;
    padded[last] |= 1;
    let e = codec::decode(
        &meta.id,
        &frame(&meta.id, 1, &[secs[0].clone(), (0x02, padded)]),
    )
    .err()
    .unwrap();
    assert!(matches!(e, CodecError::BadMovesSection { .. }), "{e}");

    // Chess960 number out of range, unknown variant.
    let mut game_sec = secs[0].1.clone();
    game_sec[0] = 9;
    let e = codec::decode(
        &meta.id,
        &frame(&meta.id, 1, &[(0x01, game_sec), secs[1].clone()]),
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("unknown variant code 9"), "{e}");
}

#[test]
fn chess960_and_fen_starts_round_trip() {
    use chess_service::rules::chess960;
    for n in [0u32, 518, 959] {
        let start = chess960::start_position(n, Variant::Chess960).unwrap();
        let mut game = Game::new(start);
        for _ in 0..30 {
            let legal = game.legal_moves();
            if legal.is_empty() {
                break;
            }
            game.play(legal[legal.len() / 2]).unwrap();
        }
        let meta = GameMeta {
            id: format!("c{n}"),
            variant: Variant::Chess960.into(),
            start: Start::Chess960(n),
            created_unix_ms: 7,
            tags: chess_service::lifecycle::Tags::none(),
        };
        let d = codec::decode(
            &meta.id,
            &codec::encode(&meta, &Match::from_moves(game.clone())).unwrap(),
        )
        .unwrap();
        assert_eq!(d.loaded.meta, meta);
        assert_eq!(d.loaded.game.game().moves(), game.moves());
    }
    let fen = "8/8/8/4k3/8/8/4P3/4K3 w - - 90 60";
    let pos = Position::from_fen(fen, Variant::Standard).unwrap();
    let meta = GameMeta {
        id: "f".into(),
        variant: Variant::Standard.into(),
        start: Start::Fen(fen.into()),
        created_unix_ms: u64::MAX,
        tags: chess_service::lifecycle::Tags::none(),
    };
    let d = codec::decode("f", &codec::encode(&meta, &Match::untimed(pos)).unwrap()).unwrap();
    assert_eq!(d.loaded.meta, meta);
    assert_eq!(*d.loaded.game.game().position(), pos.into());
}

#[test]
fn encoding_refuses_a_start_that_does_not_match_the_metadata() {
    let (mut meta, game) = short_game();
    meta.start = Start::Chess960(0);
    assert!(matches!(
        codec::encode(&meta, &Match::from_moves(game.clone())),
        Err(CodecError::StartMismatch { .. })
    ));
    meta.start = Start::Chess960(960);
    assert!(matches!(
        codec::encode(&meta, &Match::from_moves(game.clone())),
        Err(CodecError::BadStart { .. })
    ));
}

/// The codec ranks and selects moves by `order_key` instead of sorting; that must be
/// exactly the order of `legal_moves_sorted()`, checked on every corpus position.
#[test]
fn order_key_is_the_order_of_legal_moves_sorted() {
    let mut positions = 0;
    for g in corpus_games() {
        for ply in 0..=g.game.ply() {
            let pos = g.game.position_at(ply).unwrap();
            let sorted = pos.legal_moves_sorted();
            let keys: Vec<u32> = sorted.iter().map(order_key).collect();
            assert!(
                keys.windows(2).all(|w| w[0] < w[1]),
                "{}: keys not strictly increasing in sorted order",
                pos.to_fen()
            );
            positions += 1;
        }
    }
    assert!(positions > 60_000);
}

/// Past the history limit, only a change that ends the game, or only offers or answers a
/// draw, is written; below it, everything.
#[test]
fn past_the_history_limit_only_endings_and_offers_are_written() {
    use chess_service::rules::Color;
    use codec::{HISTORY_LIMIT, check_history_room};
    let over = HISTORY_LIMIT + 1;
    let mut m = Match::untimed(Position::new());
    m.play(0, None, "e4").unwrap();
    let moved = m.version();
    assert_eq!(check_history_room(HISTORY_LIMIT, &m, 0), Ok(()));
    assert_eq!(
        check_history_room(over, &m, moved - 1),
        Err(CodecError::HistoryFull { len: over }),
        "a move"
    );
    m.undo(0, None).unwrap();
    assert_eq!(
        check_history_room(over, &m, moved),
        Err(CodecError::HistoryFull { len: over }),
        "a take-back"
    );
    let before_offers = m.version();
    m.offer_draw(0, Color::White).unwrap();
    m.respond_to_draw(0, Color::Black, false).unwrap();
    assert_eq!(
        check_history_room(over, &m, before_offers),
        Ok(()),
        "offers"
    );
    assert_eq!(
        check_history_room(over, &m, 0),
        Err(CodecError::HistoryFull { len: over }),
        "offers together with moves"
    );
    let before_end = m.version();
    m.resign(0, Color::White).unwrap();
    assert_eq!(
        check_history_room(over, &m, before_end),
        Ok(()),
        "an ending"
    );
    assert_eq!(
        check_history_room(over, &m, 0),
        Ok(()),
        "any change that ends it"
    );
}

/// Tags are kept under format version 2 in section 0x05; a damaged tags section is
/// DATA_LOSS like any other damage, and version 1 has no tags section.
#[test]
fn tags_are_stored_under_version_two() {
    let (mut meta, game) = short_game();
    meta.tags = chess_service::lifecycle::Tags::new([
        ("White", "Müller, \"Tom\" \\ Jr."),
        ("Event", "Spring"),
        ("custom_1", ""),
    ])
    .expect("valid tags");
    let m = Match::from_moves(game.clone());
    let record = codec::encode(&meta, &m).unwrap();
    assert_eq!(record[0], 2);
    assert_eq!(codec::TAGS_VERSION, 2);
    // Version 3 adds lichess's variants (tests/store/variant_records.rs).
    assert_eq!(FORMAT_VERSION, 3);
    let secs = sections(&record);
    assert_eq!(
        secs.iter().map(|s| s.0).collect::<Vec<_>>(),
        vec![0x01, 0x02, 0x05]
    );
    let back = codec::decode(&meta.id, &record).unwrap().loaded;
    assert_eq!(back.meta, meta);
    assert_eq!(back.game.game().moves(), game.moves());

    let with_tags = |payload: Vec<u8>, version: u8| {
        let mut s = secs[..2].to_vec();
        s.push((0x05, payload));
        codec::decode(&meta.id, &frame(&meta.id, version, &s))
    };
    let tag = |name: &str, value: &str| {
        let mut out = vec![name.len() as u8];
        out.extend_from_slice(name.as_bytes());
        out.push(value.len() as u8);
        out.extend_from_slice(value.as_bytes());
        out
    };
    // The same section in a version 1 record is damage.
    assert!(matches!(
        with_tags(secs[2].1.clone(), 1),
        Err(CodecError::Framing { .. })
    ));
    let bad = |payload: Vec<u8>| match with_tags(payload, 2) {
        Err(CodecError::BadTagsSection { what }) => what,
        other => panic!("expected a bad tags section, got {:?}", other.map(|_| ())),
    };
    // Out of order, a server tag, a count past the end, trailing bytes, not UTF-8.
    let mut unsorted = vec![2];
    unsorted.extend(tag("White", "a"));
    unsorted.extend(tag("Event", "b"));
    assert!(bad(unsorted).contains("out of order"));
    let mut owned = vec![1];
    owned.extend(tag("Result", "1-0"));
    assert!(bad(owned).contains("set by the server"));
    let mut short = vec![3];
    short.extend(tag("Event", "b"));
    assert!(bad(short).contains("bad tag name length"));
    let mut trailing = vec![1];
    trailing.extend(tag("Event", "b"));
    trailing.push(0);
    assert!(bad(trailing).contains("after the last tag"));
    let mut not_utf8 = vec![1];
    not_utf8.extend(tag("Event", "b"));
    *not_utf8.last_mut().unwrap() = 0xFF;
    assert!(bad(not_utf8).contains("UTF-8"));
    // An empty list is no damage: a version 2 record may have no tags.
    let d = with_tags(vec![0], 2).expect("no tags");
    assert!(d.loaded.meta.tags.is_empty());
}
