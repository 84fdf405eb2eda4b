//! The unit tests of the error catalogue and its `tonic::Status` mapping: codes, reasons,
//! `ErrorInfo` metadata and `BadRequest` violations, as a caller reads them.

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
        ServiceError::from_move_text(syntax).code(),
        Code::InvalidArgument
    );
    let illegal = pos.parse_move("e2e5").expect_err("illegal");
    let e = ServiceError::from_move_text(illegal);
    assert_eq!(
        (e.code(), e.reason()),
        (Code::FailedPrecondition, "ILLEGAL_MOVE")
    );
    let ambiguous = Position::from_fen("4k3/8/8/8/8/8/8/4KN1N w - - 0 1", Variant::Standard)
        .expect("legal FEN");
    let e = ServiceError::from_move_text(
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
