//! A store for tests: games in memory (nothing survives the process), with what a real
//! store does to its callers scripted by each test: calls that fail (every call of a kind,
//! or those for one game), another writer that wins the race for the next saves, loads
//! that find nothing (a replica's load that ran just before another replica created the
//! game), a change feed that announces every write or loses the announcements, and writes
//! made behind every caller's back. It records how many calls of each kind it answered and
//! how many saves lost a race.
//!
//! Compiled only for tests (`cfg(test)` or the `testing` feature): nothing in the product
//! uses it. Unscripted, it keeps the contract of every store (see the module docs of
//! [`crate::store`]), with one writer's versions (no tokens).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::broadcast;

use super::{
    GameMeta, GameStore, KeyRange, ListPage, ListedGame, LoadedGame, Stamp, StatusFilter,
    StoreChange, StoreError,
};
use crate::lifecycle::Match;

/// The kinds of store call a script can fail and the store counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    /// [`GameStore::create`].
    Create,
    /// [`GameStore::save`].
    Save,
    /// [`GameStore::load`] (and `stored_stamp`, which loads).
    Load,
    /// [`GameStore::list`].
    List,
    /// [`GameStore::delete`].
    Delete,
    /// [`GameStore::flush`].
    Flush,
}

impl Call {
    const COUNT: usize = 6;

    fn index(self) -> usize {
        self as usize
    }
}

/// A failure a test scripted: calls of `call` (for game `id` only, when set) fail with
/// `error`.
struct Failure {
    call: Call,
    id: Option<String>,
    error: StoreError,
}

/// What the test scripted, and what it turns on or off as it goes.
#[derive(Default)]
struct Script {
    failures: Vec<Failure>,
    /// How many of the next loads find nothing.
    hidden_loads: u64,
    /// The other writer's moves, the next one last.
    their_moves: Vec<&'static str>,
}

/// Games in memory, with a scripted behaviour (see the module docs).
pub struct ScriptedStore {
    games: Mutex<BTreeMap<String, LoadedGame>>,
    script: Mutex<Script>,
    /// The change feed of a store other writers share (`None`: one writer).
    feed: Option<broadcast::Sender<StoreChange>>,
    /// Whether committed changes are announced on the feed (off: lost announcements).
    announce: bool,
    calls: [AtomicU64; Call::COUNT],
    conflicts: AtomicU64,
}

impl Default for ScriptedStore {
    fn default() -> ScriptedStore {
        ScriptedStore::new()
    }
}

impl ScriptedStore {
    /// An empty store only this process writes, with nothing scripted: a store in memory.
    pub fn new() -> ScriptedStore {
        ScriptedStore {
            games: Mutex::default(),
            script: Mutex::default(),
            feed: None,
            announce: false,
            calls: Default::default(),
            conflicts: AtomicU64::new(0),
        }
    }

    /// An empty store shared by several writers (replicas on one database): `shared()` is
    /// true and it has a change feed, on which every committed change is announced, or,
    /// with `announce` off, none (every announcement lost).
    pub fn shared(announce: bool) -> ScriptedStore {
        ScriptedStore {
            feed: Some(broadcast::channel(64).0),
            announce,
            ..ScriptedStore::new()
        }
    }

    /// From now on every call of kind `call` fails with `error`.
    pub fn fail(&self, call: Call, error: StoreError) {
        self.script().failures.push(Failure {
            call,
            id: None,
            error,
        });
    }

    /// From now on every call of kind `call` for game `id` fails with `error`.
    pub fn fail_game(&self, call: Call, id: &str, error: StoreError) {
        self.script().failures.push(Failure {
            call,
            id: Some(id.to_string()),
            error,
        });
    }

    /// The next `n` loads find nothing, as a load that ran just before another writer
    /// created the game.
    pub fn hide_next_loads(&self, n: u64) {
        self.script().hidden_loads = n;
    }

    /// Another writer wins the race for the next `moves.len()` saves: just before each of
    /// those saves lands, it plays its next move (in order) on the stored game, so the save
    /// finds a newer version and fails with `Conflict`, as a compare-and-set on a shared
    /// database would.
    pub fn race(&self, moves: &[&'static str]) {
        self.script().their_moves = moves.iter().rev().copied().collect();
    }

    /// How many calls of kind `call` the store was made.
    pub fn calls(&self, call: Call) -> u64 {
        self.calls[call.index()].load(Ordering::SeqCst)
    }

    /// How many saves failed with `Conflict`.
    pub fn conflicts(&self) -> u64 {
        self.conflicts.load(Ordering::SeqCst)
    }

    /// Game `id` as stored, read behind every caller's back (not counted, never failed).
    pub fn stored(&self, id: &str) -> Option<LoadedGame> {
        self.games().get(id).cloned()
    }

    /// Stores `game` as game `id` behind every caller's back: not counted, never failed,
    /// never announced, whatever was stored before (as another writer that deleted the
    /// game and created it again while this one was cut off from the feed).
    pub fn put_quietly(&self, meta: &GameMeta, game: &Match) {
        self.games().insert(meta.id.clone(), loaded(meta, game));
    }

    /// Sends `change` on the change feed (a shared store's).
    pub fn send(&self, change: StoreChange) {
        if let Some(feed) = &self.feed {
            let _ = feed.send(change);
        }
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn games(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, LoadedGame>> {
        self.games.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a call, and answers the failure scripted for it, if any.
    fn called(&self, call: Call, id: Option<&str>) -> Result<(), StoreError> {
        self.calls[call.index()].fetch_add(1, Ordering::SeqCst);
        let script = self.script();
        let failure = script
            .failures
            .iter()
            .find(|f| f.call == call && (f.id.is_none() || f.id.as_deref() == id));
        match failure {
            Some(f) => Err(f.error.clone()),
            None => Ok(()),
        }
    }

    fn announced(&self, change: StoreChange) {
        if self.announce {
            self.send(change);
        }
    }

    /// The other writer's next move, if it wins this save: played on the stored game.
    fn their_move(&self, games: &mut BTreeMap<String, LoadedGame>, id: &str) {
        let Some(uci) = self.script().their_moves.pop() else {
            return;
        };
        let stored = games.get_mut(id).expect("the raced game is stored");
        let now_ms = u64::try_from(super::clock::local_unix_us() / 1000).unwrap_or(0);
        stored
            .game
            .play(now_ms, None, uci)
            .expect("their move is legal");
        let version = stored.game.version();
        self.announced(StoreChange::Game {
            id: id.to_string(),
            version,
        });
    }
}

fn loaded(meta: &GameMeta, game: &Match) -> LoadedGame {
    LoadedGame {
        meta: meta.clone(),
        game: game.clone(),
        token: None,
    }
}

#[async_trait::async_trait]
impl GameStore for ScriptedStore {
    fn kind(&self) -> &'static str {
        "scripted"
    }

    async fn create(&self, meta: &GameMeta, game: &Match) -> Result<Option<u64>, StoreError> {
        self.called(Call::Create, Some(&meta.id))?;
        let mut games = self.games();
        if games.contains_key(&meta.id) {
            return Err(StoreError::AlreadyExists {
                id: meta.id.clone(),
            });
        }
        games.insert(meta.id.clone(), loaded(meta, game));
        self.announced(StoreChange::Game {
            id: meta.id.clone(),
            version: game.version(),
        });
        Ok(None)
    }

    async fn save(
        &self,
        meta: &GameMeta,
        game: &Match,
        expected: Stamp,
    ) -> Result<Option<u64>, StoreError> {
        self.called(Call::Save, Some(&meta.id))?;
        let mut games = self.games();
        self.their_move(&mut games, &meta.id);
        let current = games.get(&meta.id).map(|g| g.game.version());
        if current != Some(expected.version) {
            self.conflicts.fetch_add(1, Ordering::SeqCst);
            return Err(StoreError::Conflict {
                id: meta.id.clone(),
                current: current.unwrap_or(0),
            });
        }
        games.insert(meta.id.clone(), loaded(meta, game));
        self.announced(StoreChange::Game {
            id: meta.id.clone(),
            version: game.version(),
        });
        Ok(None)
    }

    async fn load(&self, id: &str) -> Result<Option<LoadedGame>, StoreError> {
        self.called(Call::Load, Some(id))?;
        {
            let mut script = self.script();
            if script.hidden_loads > 0 {
                script.hidden_loads -= 1;
                return Ok(None);
            }
        }
        Ok(self.games().get(id).cloned())
    }

    async fn list(
        &self,
        range: &KeyRange,
        filter: StatusFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<ListPage, StoreError> {
        self.called(Call::List, None)?;
        if range.exhausted(after) {
            return Ok(ListPage::default());
        }
        let games = self.games();
        let mut matching = games
            .range::<str, _>((range.start(after), range.end()))
            .filter(|(_, g)| filter.admits(g.game.status().is_over()));
        let page: Vec<ListedGame> = matching
            .by_ref()
            .take(limit.max(1))
            .map(|(id, g)| ListedGame {
                id: id.clone(),
                version: g.game.version(),
                token: None,
            })
            .collect();
        let more = matching.next().is_some();
        Ok(ListPage {
            resume_after: if more {
                page.last().map(|g| g.id.clone())
            } else {
                None
            },
            games: page,
        })
    }

    async fn delete(
        &self,
        id: &str,
        expected_version: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        self.called(Call::Delete, Some(id))?;
        let mut games = self.games();
        let Some(current) = games.get(id).map(|g| g.game.version()) else {
            return Ok(None);
        };
        if expected_version.is_some_and(|v| v != current) {
            return Err(StoreError::Conflict {
                id: id.to_string(),
                current,
            });
        }
        games.remove(id);
        self.announced(StoreChange::Deleted { id: id.to_string() });
        Ok(Some(current))
    }

    async fn flush(&self) -> Result<(), StoreError> {
        self.called(Call::Flush, None)
    }

    fn shared(&self) -> bool {
        self.feed.is_some()
    }

    fn changes(&self) -> Option<broadcast::Receiver<StoreChange>> {
        self.feed.as_ref().map(broadcast::Sender::subscribe)
    }
}
