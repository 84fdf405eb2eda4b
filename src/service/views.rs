//! The answers that depend only on a game's state, computed once per state and kept in
//! the registry's entry ([`GameEntry::with_views`]), which drops them when the game
//! changes: the game as the API shows it and the encoded LegalMoves answer. A read of an
//! unchanged game clones them (the encoded answer shares its bytes).

use crate::pb;
use crate::registry::GameEntry;

use super::convert;
use super::wire::{self, EncodedLegalMoves};

/// How much of a game an answer carries (the request's `GameView`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// The state without the history (moves, SAN, PGN): its size does not grow with the
    /// game, and neither does the work of making it.
    Basic,
    /// Everything.
    Full,
}

/// What the service keeps per game state.
#[derive(Default)]
struct Views {
    full: Option<pb::Game>,
    basic: Option<pb::Game>,
    legal: Option<EncodedLegalMoves>,
}

/// The game as the API shows it, clocks read at `now`.
pub fn game(entry: &mut GameEntry, now: u64, view: View) -> pb::Game {
    let mut view = entry.with_views(|views: &mut Views, e| {
        let kept = match view {
            View::Full => &mut views.full,
            View::Basic => &mut views.basic,
        };
        kept.get_or_insert_with(|| convert::game_to_pb(e.meta(), e.lifecycle(), e.san(), view))
            .clone()
    });
    if let Some(clock) = view.clock.as_mut() {
        convert::advance_clock(clock, now);
    }
    view
}

/// The moves playable now, encoded.
pub fn legal_moves(entry: &mut GameEntry) -> EncodedLegalMoves {
    entry.with_views(|views: &mut Views, e| {
        views
            .legal
            .get_or_insert_with(|| wire::game_legal_moves(e.lifecycle()))
            .clone()
    })
}
