//! A loaded game and what is kept beside it: the SAN of its moves (kept move by move, so
//! no call recomputes the whole list), the views an upper layer derived from its current
//! state, its spectators' channel and its flag timer.

use std::any::Any;
use std::sync::Arc;

use tokio::sync::broadcast;

use super::flag_timer::FlagTimer;
use super::spectators::Published;
use crate::lifecycle::{GameMeta, Match, Refusal};
use crate::rules::{Color, Game, GamePosition, Move};
use crate::store::Stamp;

/// A move played or taken back, with what describing it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayedMove {
    /// The position the move was played in.
    pub before: GamePosition,
    /// The move.
    pub mv: Move,
    /// Its SAN in `before` (with `+` or `#` when it checks or mates).
    pub san: String,
}

/// A loaded game. See the module docs.
pub struct GameEntry {
    pub(super) meta: GameMeta,
    pub(super) game: Match,
    san: Vec<String>,
    /// What an upper layer derived from the current state (one value of its own type;
    /// see [`GameEntry::with_views`]); dropped when the game changes.
    views: Option<Box<dyn Any + Send>>,
    /// Live events, created by the first subscription.
    pub(super) events: Option<broadcast::Sender<Arc<Published>>>,
    pub(super) timer: Option<FlagTimer>,
    /// The token of the store write this state came from (`None` on a store with one
    /// writer): with the version, the stamp the store's compare-and-set and freshness
    /// checks compare ([`Stamp`]).
    pub(super) token: Option<u64>,
    /// The cache's epoch this entry was last known to be the stored state in: an entry
    /// of an older epoch (the change feed reconnected since) is dropped and read again
    /// before it answers anything ([`super::cache::Cache::invalidate_all`]).
    pub(super) epoch: u64,
}

impl GameEntry {
    /// The entry of a game just created or read from the store.
    pub fn new(meta: GameMeta, game: Match) -> GameEntry {
        let san = game.game().san_moves();
        GameEntry {
            meta,
            game,
            san,
            views: None,
            events: None,
            timer: None,
            token: None,
            epoch: 0,
        }
    }

    /// The stored state this entry is: its version and the token of the write that
    /// stored it.
    pub(super) fn stamp(&self) -> Stamp {
        Stamp {
            version: self.game.version(),
            token: self.token,
        }
    }

    /// The game's id, variant, start and creation time.
    pub fn meta(&self) -> &GameMeta {
        &self.meta
    }

    /// The board.
    pub fn game(&self) -> &Game {
        self.game.game()
    }

    /// The whole game: board, log, clocks, offer, ending.
    pub fn lifecycle(&self) -> &Match {
        &self.game
    }

    /// The SAN of every move on the board.
    pub fn san(&self) -> &[String] {
        &self.san
    }

    /// Runs `f` on the views derived from the game's current state, of the caller's
    /// type `T` (created empty after every change). Why: answers that depend only on the
    /// state (an encoded game, the encoded legal moves) are computed once per state by
    /// the layer that encodes them, and the registry forgets them when the state changes,
    /// without knowing what they are. One type is kept at a time: asking with another
    /// type starts it empty.
    pub fn with_views<T, R>(&mut self, f: impl FnOnce(&mut T, &GameEntry) -> R) -> R
    where
        T: Any + Send + Default,
    {
        let mut views: Box<T> = self
            .views
            .take()
            .and_then(|v| v.downcast::<T>().ok())
            .unwrap_or_default();
        let result = f(&mut views, self);
        self.views = Some(views);
        result
    }

    /// Runs one lifecycle operation, recording events for spectators if there are any,
    /// and forgets the derived views if the game changed.
    fn apply<T>(
        &mut self,
        op: impl FnOnce(&mut Match) -> Result<T, Refusal>,
    ) -> Result<T, Refusal> {
        let before = self.game.version();
        let watched = self
            .events
            .as_ref()
            .is_some_and(|tx| tx.receiver_count() > 0);
        self.game.set_recording(watched);
        let result = op(&mut self.game);
        if self.game.version() != before {
            self.views = None;
            self.sync_san();
        }
        result
    }

    /// The move just played (the game's last), with the SAN already worked out by
    /// [`GameEntry::sync_san`].
    fn last_move(&self, before: GamePosition, mv: Move) -> PlayedMove {
        let san = self.san.last().cloned().unwrap_or_else(|| before.san(mv));
        PlayedMove { before, mv, san }
    }

    /// Brings the SAN list to the game's moves (the one place it changes, whatever the
    /// operation played or took back).
    fn sync_san(&mut self) {
        let game = self.game.game();
        self.san.truncate(game.ply());
        for ply in self.san.len()..game.ply() {
            let san = game
                .position_at(ply)
                .map_or_else(String::new, |pos| pos.san(game.moves()[ply]));
            self.san.push(san);
        }
    }

    /// Takes `game`, as another replica stored it, in place of this entry's older state,
    /// and sends the spectators the events in between (as [`GameEntry::publish`] sends
    /// its own), so their streams go on without a gap. A game's log only grows, so the
    /// stored game extends this one.
    pub(super) fn catch_up(&mut self, meta: GameMeta, game: Match, token: Option<u64>) {
        let from = self.game.version() + 1;
        if let Some(tx) = &self.events
            && tx.receiver_count() > 0
        {
            match game.records_since(from) {
                Ok(records) => {
                    for record in records {
                        // No receiver left is not an error: nobody is watching any more.
                        let _ = tx.send(Arc::new(Published::new(record)));
                    }
                }
                // Cannot replay: close the channel; spectators catch up from the store.
                Err(_) => self.events = None,
            }
        }
        // Computed afresh, not synced: the other replica may have taken moves back and
        // played others, so the plies both games have need not hold the same moves.
        self.san = game.game().san_moves();
        self.meta = meta;
        self.game = game;
        self.token = token;
        self.views = None;
    }

    /// Records a flag that fell by `now`. True if one did.
    pub fn settle(&mut self, now: u64) -> Result<bool, Refusal> {
        self.apply(|g| g.settle(now))
    }

    /// Whether a flag has fallen by `now` that is not recorded yet.
    pub(super) fn flag_due(&self, now: u64) -> bool {
        self.game.flag_time().is_some_and(|t| now >= t)
    }

    /// Plays a move given as UCI or SAN at `now`.
    pub fn play(
        &mut self,
        now: u64,
        color: Option<Color>,
        text: &str,
    ) -> Result<PlayedMove, Refusal> {
        let before = *self.game.game().position();
        let mv = self.apply(|g| g.play(now, color, text))?;
        Ok(self.last_move(before, mv))
    }

    /// Takes back the last move at `now`; returns it (in the position before it).
    pub fn undo(&mut self, now: u64, color: Option<Color>) -> Result<PlayedMove, Refusal> {
        let (before, mv) = self.apply(|g| g.undo(now, color))?;
        let san = before.san(mv);
        Ok(PlayedMove { before, mv, san })
    }

    /// `color` offers a draw at `now`.
    pub fn offer_draw(&mut self, now: u64, color: Color) -> Result<(), Refusal> {
        self.apply(|g| g.offer_draw(now, color))
    }

    /// `color` accepts or declines the pending draw offer at `now`.
    pub fn respond_to_draw(&mut self, now: u64, color: Color, accept: bool) -> Result<(), Refusal> {
        self.apply(|g| g.respond_to_draw(now, color, accept))
    }

    /// Adds `ms` milliseconds to `color`'s clock at `now`.
    pub fn add_time(&mut self, now: u64, color: Color, ms: u64) -> Result<(), Refusal> {
        self.apply(|g| g.add_time(now, color, ms))
    }

    /// `color` resigns at `now`.
    pub fn resign(&mut self, now: u64, color: Color) -> Result<(), Refusal> {
        self.apply(|g| g.resign(now, color))
    }

    /// Claims a draw, with the announced move if any; returns that move, played.
    pub fn claim_draw(
        &mut self,
        now: u64,
        color: Color,
        text: Option<&str>,
    ) -> Result<Option<PlayedMove>, Refusal> {
        let played = self.apply(|g| g.claim_draw(now, color, text))?;
        Ok(played.map(|(before, mv)| self.last_move(before, mv)))
    }
}
