//! The crash journal's own rules (`tests/common/journal.rs`): what a reopened store may
//! hold for a journaled game.

use crate::common::journal::*;

fn state(moves: &[&str]) -> GameState {
    state_at(moves, moves.len() as u64)
}

fn state_at(moves: &[&str], version: u64) -> GameState {
    GameState {
        start_fen: "startpos x".into(),
        moves: moves.iter().map(|m| m.to_string()).collect(),
        version,
    }
}

fn journal(lines: &[&str]) -> Journal {
    let mut j = Journal::new();
    for l in lines {
        j.apply_line(l).unwrap();
    }
    j
}

#[test]
fn acknowledged_and_in_flight_states_are_accepted_and_nothing_else() {
    let j = journal(&[
        "BEGIN g NEW startpos x",
        "ACK g",
        "BEGIN g PLAY e2e4",
        "ACK g",
        "BEGIN g PLAY e7e5",
        "ACK g",
        "BEGIN g UNDO",
        "ACK g",
        "BEGIN g PLAY c7c5",
    ]);
    assert_eq!(j.acks(), 4);
    assert_eq!(
        j.check("g", Some(&state_at(&["e2e4"], 3))),
        Ok(Verdict::Acknowledged)
    );
    assert_eq!(
        j.check("g", Some(&state_at(&["e2e4", "c7c5"], 4))),
        Ok(Verdict::InFlightApplied)
    );
    // The same moves at another version: an event lost or invented.
    assert!(j.check("g", Some(&state_at(&["e2e4"], 1))).is_err());
    // Lost an acknowledged move, kept an undone one, or the game vanished.
    assert!(j.check("g", Some(&state(&[]))).is_err());
    assert!(j.check("g", Some(&state(&["e2e4", "e7e5"]))).is_err());
    assert!(j.check("g", None).is_err());
    // A game nobody created must not exist; one being created may.
    let j = journal(&["BEGIN h NEW startpos x"]);
    assert_eq!(j.check("h", None), Ok(Verdict::Acknowledged));
    assert_eq!(
        j.check("h", Some(&state(&[]))),
        Ok(Verdict::InFlightApplied)
    );
    assert!(j.check("nobody", Some(&state(&[]))).is_err());
    assert_eq!(j.check("nobody", None), Ok(Verdict::Acknowledged));
}

#[test]
fn events_without_moves_count_in_the_version() {
    let j = journal(&[
        "BEGIN g NEW startpos x",
        "ACK g",
        "BEGIN g EVENT offer",
        "ACK g",
        "BEGIN g EVENT decline",
    ]);
    assert_eq!(
        j.check("g", Some(&state_at(&[], 1))),
        Ok(Verdict::Acknowledged)
    );
    assert_eq!(
        j.check("g", Some(&state_at(&[], 2))),
        Ok(Verdict::InFlightApplied)
    );
    assert!(j.check("g", Some(&state_at(&[], 0))).is_err());
}

#[test]
fn fail_clears_the_change_in_flight() {
    let j = journal(&[
        "BEGIN g NEW startpos x",
        "ACK g",
        "BEGIN g PLAY e2e5",
        "FAIL g",
    ]);
    assert_eq!(j.in_flight(), 0);
    assert!(j.check("g", Some(&state(&["e2e5"]))).is_err());
}

#[test]
fn broken_journals_are_reported() {
    let mut j = journal(&["BEGIN g NEW startpos x"]);
    assert!(matches!(
        j.apply_line("BEGIN g UNDO"),
        Err(JournalError::TwoInFlight { .. })
    ));
    let mut j = Journal::new();
    assert!(matches!(
        j.apply_line("ACK g"),
        Err(JournalError::NothingInFlight { .. })
    ));
    assert!(matches!(
        j.apply_line("BEGIN g PLAY e2e4"),
        Err(JournalError::NoSuchGame { .. })
    ));
    assert!(matches!(
        j.apply_line("HELLO g"),
        Err(JournalError::Parse { .. })
    ));
    assert!(matches!(
        j.apply_line("BEGIN g PLAY e2e4 extra"),
        Err(JournalError::Parse { .. })
    ));
    let mut j = journal(&["BEGIN g NEW startpos x", "ACK g", "BEGIN g UNDO"]);
    assert!(matches!(
        j.apply_line("ACK g"),
        Err(JournalError::UndoAtStart { .. })
    ));
}

#[test]
fn a_deleted_game_must_be_gone_and_one_being_deleted_may_be() {
    let begun = [
        "BEGIN g NEW startpos x",
        "ACK g",
        "BEGIN g PLAY e2e4",
        "ACK g",
        "BEGIN g DELETE",
    ];
    let j = journal(&begun);
    assert_eq!(
        j.check("g", Some(&state(&["e2e4"]))),
        Ok(Verdict::Acknowledged)
    );
    assert_eq!(j.check("g", None), Ok(Verdict::InFlightApplied));
    assert!(j.check("g", Some(&state(&[]))).is_err());

    let j = journal(&[&begun[..], &["ACK g"]].concat());
    assert_eq!(j.check("g", None), Ok(Verdict::Acknowledged));
    assert!(j.check("g", Some(&state(&["e2e4"]))).is_err());
    // Deleted, a game may not be changed, and its id may be created again.
    let mut j = journal(&[&begun[..], &["ACK g"]].concat());
    assert!(matches!(
        j.apply_line("BEGIN g DELETE"),
        Err(JournalError::NoSuchGame { .. })
    ));
    j.apply_line("BEGIN g NEW startpos x").unwrap();
    j.apply_line("ACK g").unwrap();
    assert_eq!(j.check("g", Some(&state(&[]))), Ok(Verdict::Acknowledged));
}
