//! The unit tests of the error catalogue and its `tonic::Status` mapping: codes, reasons,
//! `ErrorInfo` metadata and `BadRequest` violations, as a caller reads them.

use std::collections::{BTreeSet, HashMap};

use tonic::Code;
use tonic_types::StatusExt;

use super::*;
use crate::rules::{Position, Variant};

fn status_of(e: ServiceError) -> tonic::Status {
    tonic::Status::from(e)
}

#[test]
fn ply_mismatch_carries_current_ply() {
    let s = status_of(ServiceError::PlyMismatch {
        id: "g".into(),
        expected: 3,
        current: 5,
    });
    assert_eq!(s.code(), Code::Aborted);
    let info = s
        .get_error_details()
        .error_info()
        .cloned()
        .expect("ErrorInfo present");
    assert_eq!(info.domain, DOMAIN);
    assert_eq!(info.reason, "PLY_MISMATCH");
    assert_eq!(
        info.metadata.get("current_ply").map(String::as_str),
        Some("5")
    );
}

#[test]
fn move_text_errors_are_sorted_by_cause() {
    let pos = Position::new();
    let syntax = pos.parse_move("zz").expect_err("not a move");
    assert_eq!(
        ServiceError::from_move_text("g", syntax).code(),
        Code::InvalidArgument
    );
    let illegal = pos.parse_move("e2e5").expect_err("illegal");
    let e = ServiceError::from_move_text("g", illegal);
    assert_eq!(
        (e.code(), e.reason()),
        (Code::FailedPrecondition, "ILLEGAL_MOVE")
    );
    let ambiguous = Position::from_fen("4k3/8/8/8/8/8/8/4KN1N w - - 0 1", Variant::Standard)
        .expect("legal FEN");
    let e = ServiceError::from_move_text(
        "g",
        ambiguous
            .parse_move("Ng3")
            .expect_err("two knights reach g3"),
    );
    assert_eq!(
        (e.code(), e.reason()),
        (Code::FailedPrecondition, "AMBIGUOUS_MOVE")
    );
}

#[test]
fn malformed_fields_become_bad_request_violations() {
    let fen_error =
        Position::from_fen("8/8/8/8/8/8/8/8 w - - 0 1", Variant::Standard).expect_err("no kings");
    let s = status_of(ServiceError::InvalidFen {
        field: "fen",
        source: fen_error,
    });
    assert_eq!(s.code(), Code::InvalidArgument);
    let details = s.get_error_details();
    let violations = &details
        .bad_request()
        .expect("BadRequest present")
        .field_violations;
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].field, "fen");
    assert!(
        violations[0].description.contains("kings"),
        "{}",
        violations[0].description
    );
    assert_eq!(
        details
            .error_info()
            .map(|i| i.metadata["fen_field"].as_str()),
        Some("placement")
    );
}

#[test]
fn pgn_errors_carry_where_and_what() {
    use crate::rules::pgn_read::read_pgn;
    let info = |e: ServiceError| {
        assert_eq!(e.code(), Code::InvalidArgument, "{e}");
        let s = status_of(e);
        let details = s.get_error_details();
        let fields: Vec<String> = details
            .bad_request()
            .map(|b| b.field_violations.iter().map(|v| v.field.clone()).collect())
            .unwrap_or_default();
        assert_eq!(fields, ["pgn"]);
        details.error_info().cloned().expect("ErrorInfo present")
    };
    let pgn = |text: &str| ServiceError::Pgn(read_pgn(text).expect_err("refused"));
    let i = info(pgn("1. e4 {"));
    assert_eq!(i.reason, "PGN_SYNTAX");
    assert_eq!(
        (i.metadata["line"].as_str(), i.metadata["column"].as_str()),
        ("1", "7")
    );
    let i = info(pgn("1. e4 e5 2. Ke3"));
    assert_eq!(i.reason, "PGN_ILLEGAL_MOVE");
    assert_eq!(
        (
            i.metadata["ply"].as_str(),
            i.metadata["move_number"].as_str(),
            i.metadata["token"].as_str()
        ),
        ("2", "2", "Ke3")
    );
    let i = info(pgn("[FEN \"4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1\"]\n1. Nd2"));
    assert_eq!(i.reason, "PGN_AMBIGUOUS_MOVE");
    assert_eq!(i.metadata["candidates"], "Nbd2,Nfd2");
    assert_eq!(i.metadata["token"], "Nd2");
    let i = info(pgn("1. e4 *\n[Event \"2\"]"));
    assert_eq!(i.reason, "PGN_MULTIPLE_GAMES");
    assert_eq!(i.metadata["line"], "2");
    let i = info(ServiceError::PgnTooLarge {
        len: 300_000,
        max: 262_144,
        line: 9,
        column: 3,
    });
    assert_eq!(i.reason, "PGN_SYNTAX");
    assert_eq!(i.metadata["max_bytes"], "262144");
    assert_eq!(
        (i.metadata["line"].as_str(), i.metadata["column"].as_str()),
        ("9", "3")
    );
}

/// The metadata keys the proto's table (error_reason.proto) gives each reason: every
/// backquoted lower-case name after the first "metadata" in the value's comment.
fn documented_metadata_keys() -> HashMap<String, BTreeSet<String>> {
    let proto = include_str!("../../../proto/chess/v1/error_reason.proto");
    let mut table = HashMap::new();
    let mut comment = String::new();
    for line in proto.lines().map(str::trim) {
        if let Some(text) = line.strip_prefix("//") {
            comment.push_str(text);
            comment.push(' ');
            continue;
        }
        if let Some((name, _)) = line.split_once(" = ")
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            let lower = comment.to_ascii_lowercase();
            let keys = match lower.find("metadata") {
                Some(at) => comment[at..]
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .filter(|k| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
                    .map(str::to_string)
                    .collect(),
                None => BTreeSet::new(),
            };
            table.insert(name.to_string(), keys);
        }
        comment.clear();
    }
    table
}

/// One error of every kind, each as the service makes it.
fn one_of_every_error() -> Vec<ServiceError> {
    use crate::lifecycle::TagError;
    use std::time::Duration;
    let id = || "g-1".to_string();
    let position = Position::new();
    let store = |e: StoreError| ServiceError::from_store(e);
    let fen_error =
        Position::from_fen("8/8/8/8/8/8/8/8 w - - 0 1", Variant::Standard).expect_err("no kings");
    let ambiguous = Position::from_fen("4k3/8/8/8/8/8/8/4KN1N w - - 0 1", Variant::Standard)
        .expect("legal FEN")
        .parse_move("Ng3")
        .expect_err("two knights reach g3");
    let pgn = |text: &str| {
        ServiceError::Pgn(crate::rules::pgn_read::read_pgn(text).expect_err("refused"))
    };
    vec![
        ServiceError::InvalidFen {
            field: "fen",
            source: fen_error,
        },
        ServiceError::from_move_text("g-1", position.parse_move("zz").expect_err("not a move")),
        ServiceError::from_move_text("g-1", position.parse_move("e2e5").expect_err("illegal")),
        ServiceError::from_move_text("g-1", ambiguous),
        ServiceError::GameOver {
            id: id(),
            status: Status::Checkmate {
                winner: Color::White,
            },
        },
        ServiceError::NothingToUndo { id: id() },
        ServiceError::NotYourTurn {
            id: id(),
            color: Color::Black,
            to_move: Color::White,
            action: "moves are played",
        },
        ServiceError::NotYourMove {
            id: id(),
            color: Color::Black,
            last_mover: Color::White,
        },
        ServiceError::DrawOfferPending {
            id: id(),
            by: Color::White,
            color: Color::Black,
        },
        ServiceError::DrawOfferTooSoon {
            id: id(),
            color: Color::White,
        },
        ServiceError::NoDrawOffer { id: id() },
        ServiceError::OwnDrawOffer {
            id: id(),
            color: Color::White,
        },
        ServiceError::ClaimRefused {
            id: id(),
            why: "no threefold repetition".into(),
        },
        ServiceError::VersionAhead {
            id: id(),
            from: 9,
            current: 3,
        },
        ServiceError::InvalidTimeControl {
            source: TimeControlError::NoTime,
        },
        ServiceError::InvalidClockStart { value: 7 },
        ServiceError::InvalidAddTime { ms: 0 },
        ServiceError::GameUntimed { id: id() },
        ServiceError::VersionMismatch {
            id: id(),
            expected: 2,
            current: 3,
        },
        ServiceError::InvalidTag(TagError::ServerOwned {
            name: "Result".into(),
        }),
        ServiceError::InvalidPageSize {
            why: "below 0".into(),
        },
        ServiceError::InvalidPageToken {
            why: "not made here".into(),
        },
        ServiceError::InvalidStatusFilter { value: 9 },
        ServiceError::GameAlreadyExistsWithOtherTags { id: id() },
        ServiceError::InvalidView { value: 9 },
        ServiceError::InvalidColor {
            field: "color",
            value: 9,
        },
        ServiceError::GameNotFound { id: id() },
        store(StoreError::Conflict {
            id: id(),
            current: 4,
        }),
        ServiceError::PlyMismatch {
            id: id(),
            expected: 2,
            current: 3,
        },
        store(StoreError::AlreadyExists { id: id() }),
        ServiceError::InvalidGameId {
            why: "empty".into(),
        },
        ServiceError::InvalidTenant(TenantError::Empty),
        pgn("1. e4 {"),
        pgn("1. e4 e5 2. Ke3"),
        pgn("[FEN \"4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1\"]\n1. Nd2"),
        pgn("1. e4 *\n[Event \"2\"]"),
        ServiceError::PgnTooLarge {
            len: 300_000,
            max: 262_144,
            line: 9,
            column: 3,
        },
        ServiceError::MissingField {
            field: "game_id",
            why: "name the game",
        },
        ServiceError::ConflictingFields {
            fields: &["fen", "chess960_position"],
            why: "give one",
        },
        ServiceError::InvalidVariant {
            field: "variant",
            value: 99,
        },
        ServiceError::InvalidChess960Position { n: 960 },
        ServiceError::DepthTooLarge { depth: 99, max: 12 },
        ServiceError::FenRequired {
            why: "Chess960 has no one start",
        },
        ServiceError::TooManyPerfts { max: 2 },
        ServiceError::DeadlineExceeded { method: "Perft" },
        ServiceError::Cancelled,
        store(StoreError::DataLoss {
            id: id(),
            reason: "checksum".into(),
        }),
        store(StoreError::Io("EIO".into())),
        store(StoreError::Closed),
        store(StoreError::Unavailable("connection refused".into())),
        store(StoreError::DiskFull("ENOSPC".into())),
        store(StoreError::Stopped("fsync failed".into())),
        store(StoreError::HistoryFull {
            id: id(),
            len: 70_000,
            limit: 65_536,
        }),
        ServiceError::Internal("a bug".into()),
        ServiceError::TokenMissing,
        ServiceError::TokenUnknown,
        ServiceError::RoleForbids {
            caller: "alice".into(),
            role: Role::Read,
            needed: Role::Play,
            method: "Play",
        },
        ServiceError::TenantForbidden {
            caller: "alice".into(),
            role: Role::Play,
            tenant: "other".into(),
        },
        ServiceError::EndingIsFinal {
            id: id(),
            status: Status::Resignation {
                winner: Color::White,
            },
            role: Role::Play,
        },
        ServiceError::Overloaded { limit: 100 },
        ServiceError::UnsentAnswersFull { limit_mib: 64 },
        ServiceError::PerftTimeLimit { seconds: 60 },
        ServiceError::RateLimited(RateLimited {
            quota: "calls per second",
            limit: 5,
            retry_after: Duration::from_millis(200),
        }),
        ServiceError::MalformedRequest {
            problem: "invalid wire type".into(),
        },
        ServiceError::CompressionNotAccepted {
            encoding: "gzip".into(),
        },
        ServiceError::CompressedWithoutEncoding,
        ServiceError::TooManyPerftsForCaller { max: 1 },
        ServiceError::GrpcWebOnGrpcPort {
            content_type: "application/grpc-web+proto".into(),
        },
    ]
}

/// Which kind an error is: a match without a wildcard, so that a new kind of error does
/// not compile until it is numbered here and given an example above.
fn kind_number(e: &ServiceError) -> usize {
    use ServiceError::*;
    match e {
        InvalidFen { .. } => 0,
        InvalidMoveText { .. } => 1,
        IllegalMove { .. } => 2,
        AmbiguousMove { .. } => 3,
        GameOver { .. } => 4,
        NothingToUndo { .. } => 5,
        NotYourTurn { .. } => 6,
        NotYourMove { .. } => 7,
        DrawOfferPending { .. } => 8,
        DrawOfferTooSoon { .. } => 9,
        NoDrawOffer { .. } => 10,
        OwnDrawOffer { .. } => 11,
        ClaimRefused { .. } => 12,
        VersionAhead { .. } => 13,
        InvalidTimeControl { .. } => 14,
        InvalidClockStart { .. } => 15,
        InvalidAddTime { .. } => 16,
        GameUntimed { .. } => 17,
        VersionMismatch { .. } => 18,
        InvalidTag(_) => 19,
        InvalidPageSize { .. } => 20,
        InvalidPageToken { .. } => 21,
        InvalidStatusFilter { .. } => 22,
        GameAlreadyExistsWithOtherTags { .. } => 23,
        InvalidView { .. } => 24,
        InvalidColor { .. } => 25,
        GameNotFound { .. } => 26,
        ConcurrentChange { .. } => 27,
        PlyMismatch { .. } => 28,
        GameAlreadyExists { .. } => 29,
        InvalidGameId { .. } => 30,
        InvalidTenant(_) => 31,
        Pgn(PgnError::Syntax { .. }) => 32,
        Pgn(PgnError::IllegalMove { .. }) => 33,
        Pgn(PgnError::AmbiguousMove { .. }) => 34,
        Pgn(PgnError::MultipleGames { .. }) => 35,
        PgnTooLarge { .. } => 36,
        MissingField { .. } => 37,
        ConflictingFields { .. } => 38,
        InvalidVariant { .. } => 39,
        InvalidChess960Position { .. } => 40,
        DepthTooLarge { .. } => 41,
        FenRequired { .. } => 42,
        TooManyPerfts { .. } => 43,
        DeadlineExceeded { .. } => 44,
        Cancelled => 45,
        DataLoss(_) => 46,
        Store(_) => 47,
        ShuttingDown => 48,
        StoreUnavailable(_) => 49,
        DiskFull(_) => 50,
        StoreStopped(_) => 51,
        HistoryFull { .. } => 52,
        Internal(_) => 53,
        TokenMissing => 54,
        TokenUnknown => 55,
        RoleForbids { .. } => 56,
        TenantForbidden { .. } => 57,
        EndingIsFinal { .. } => 58,
        Overloaded { .. } => 59,
        UnsentAnswersFull { .. } => 60,
        PerftTimeLimit { .. } => 61,
        RateLimited(_) => 62,
        MalformedRequest { .. } => 63,
        CompressionNotAccepted { .. } => 64,
        CompressedWithoutEncoding => 65,
        TooManyPerftsForCaller { .. } => 66,
        GrpcWebOnGrpcPort { .. } => 67,
    }
}

/// The proto's table of metadata keys is what the server sends: every key an error
/// carries is in its reason's row, every key of a row is sent by some error of that
/// reason, and every error about a stored game names it in `game_id`.
#[test]
fn every_reason_carries_the_metadata_keys_its_table_row_gives() {
    let errors = one_of_every_error();
    let kinds: BTreeSet<usize> = errors.iter().map(kind_number).collect();
    assert_eq!(kinds, (0..=67).collect(), "one example of every kind");
    let table = documented_metadata_keys();
    assert!(
        table.len() > 50,
        "{} reasons read from the proto",
        table.len()
    );
    let mut sent: HashMap<String, BTreeSet<String>> = HashMap::new();
    for e in &errors {
        let status = status_of(e.clone());
        let info = status
            .get_error_details()
            .error_info()
            .cloned()
            .expect("ErrorInfo present");
        assert_eq!(info.reason, e.reason());
        let documented = table
            .get(&info.reason)
            .unwrap_or_else(|| panic!("{} is not in error_reason.proto", info.reason));
        for key in info.metadata.keys() {
            assert!(
                documented.contains(key),
                "{} sends metadata `{key}`, which its row in error_reason.proto does not list ({documented:?}): {e:?}",
                info.reason
            );
        }
        if format!("{e:?}").contains("id: \"g-1\"") {
            assert_eq!(
                info.metadata.get("game_id").map(String::as_str),
                Some("g-1"),
                "an error about a stored game names it: {e:?}"
            );
        }
        sent.entry(info.reason.clone())
            .or_default()
            .extend(info.metadata.keys().cloned());
    }
    for (reason, documented) in &table {
        if reason == "ERROR_REASON_UNSPECIFIED" {
            continue;
        }
        let seen = sent.get(reason).cloned().unwrap_or_default();
        assert!(
            sent.contains_key(reason) || documented.is_empty(),
            "no example of {reason}"
        );
        assert_eq!(
            &seen, documented,
            "{reason}: the keys sent differ from its row in error_reason.proto"
        );
    }
    // The move that was refused is named too.
    let illegal = status_of(errors[2].clone());
    let info = illegal
        .get_error_details()
        .error_info()
        .cloned()
        .expect("ErrorInfo");
    assert_eq!(info.metadata["move"], "e2e5");
}
