//! Games created and ended by this process's own durable writes: what the business
//! metrics count (`chess_games_created_total`, `chess_games_ended_total{status}`).
//!
//! Why counted at the write, not at a load: a game is counted where the write that
//! creates or ends it has been acknowledged as durable (the registry's create and save,
//! and a shared store's flag sweep). A load replays a game without counting it, so a
//! restart or another replica reading the game never counts it again; of replicas racing
//! to end one game, only the one whose compare-and-set won counts the ending. A write that
//! fails, even one whose outcome is unknown (a lost answer from the database), is not
//! counted: the count may then miss an ending, never double one.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::lifecycle::Status;

/// Counts of games created and ended here, read at each scrape.
#[derive(Debug, Default)]
pub struct GameTally {
    created: AtomicU64,
    /// Endings by status (with the winner: the metrics layer folds it away). Endings are
    /// rare next to moves, so a lock is cheap here.
    ended: Mutex<HashMap<Status, u64>>,
}

impl GameTally {
    /// An empty tally.
    pub fn new() -> GameTally {
        GameTally::default()
    }

    /// A game was created durably; `status` is its status then (an imported finished
    /// game, or a start position that is already mate or stalemate, is created ended:
    /// counted as ended too, so that created minus ended is the games still going).
    pub fn created(&self, status: Status) {
        self.created.fetch_add(1, Ordering::Relaxed);
        if status.is_over() {
            self.ended(status);
        }
    }

    /// A durable write took a game from going to `status`, which ends it.
    pub fn ended(&self, status: Status) {
        debug_assert!(status.is_over(), "{status:?} does not end a game");
        *self
            .ended
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(status)
            .or_insert(0) += 1;
    }

    /// Records the change of one durable write from `before` to `after`: an ending if it
    /// took a going game to an ended one. (An undo that reopens an ended game and a later
    /// ending count as two endings: each is an ending that happened.)
    pub fn changed(&self, before: Status, after: Status) {
        if !before.is_over() && after.is_over() {
            self.ended(after);
        }
    }

    /// Games created so far.
    pub fn created_count(&self) -> u64 {
        self.created.load(Ordering::Relaxed)
    }

    /// Endings so far, by status (only statuses with at least one ending).
    pub fn ended_counts(&self) -> Vec<(Status, u64)> {
        let ended = self.ended.lock().unwrap_or_else(|p| p.into_inner());
        ended.iter().map(|(s, n)| (*s, *n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Color;

    #[test]
    fn counts_creations_and_transitions_into_an_ending_only() {
        let t = GameTally::new();
        t.created(Status::InProgress);
        t.created(Status::Stalemate);
        // Moves within a going game, and a change of an ended game, are no endings.
        t.changed(Status::InProgress, Status::InProgress);
        t.changed(Status::Stalemate, Status::Stalemate);
        t.changed(
            Status::InProgress,
            Status::OutOfTime {
                winner: Color::White,
            },
        );
        t.changed(
            Status::InProgress,
            Status::OutOfTime {
                winner: Color::Black,
            },
        );
        // An undo that reopens a game is no ending either.
        t.changed(Status::DrawAgreement, Status::InProgress);
        assert_eq!(t.created_count(), 2);
        let mut ended = t.ended_counts();
        ended.sort_by_key(|(s, _)| format!("{s:?}"));
        assert_eq!(
            ended,
            vec![
                (
                    Status::OutOfTime {
                        winner: Color::Black
                    },
                    1
                ),
                (
                    Status::OutOfTime {
                        winner: Color::White
                    },
                    1
                ),
                (Status::Stalemate, 1),
            ]
        );
    }
}
