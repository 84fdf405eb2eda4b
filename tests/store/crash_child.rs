//! The process a store crash test kills (`crash.rs`): many writers playing random games
//! into a `SledStore`, each writing the crash journal (`tests/common/journal.rs`) on
//! stdout: `BEGIN ...` before a change is handed to the store, `ACK <game>` once its
//! durability ticket resolved. Prints `READY` once the store is open.
//!
//! It is not a binary of its own: the crash test runs this test binary again with
//! [`CHILD_ENV`] set, asking for the ignored test [`run_child`] alone (as sled's crash
//! tests re-run their own binary). Everything the test harness prints before `READY` is
//! not journal; the child starts its output with a line break, so `READY` always begins
//! a line.
//!
//! Runs until killed, or until `ops` changes are acknowledged (then `DONE`).
//!
//! Games are whole lifecycles (`Match`): an undo is an event, so a game leaves the
//! moves-only record form at its first undo, and every third game is timed (an hour a
//! side, so no flag falls), which adds the clock section: the crash test covers every
//! record form.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chess_service::lifecycle::{Match, TimeControl};
use chess_service::registry::wall_now_ms;
use chess_service::rules::{Position, Variant, chess960};
use chess_service::store::{Durability, GameMeta, SledConfig, SledStore, Start, StoreError};

use crate::common::rng::Rng;

/// Set (to the data directory) in the environment of the child process.
pub const CHILD_ENV: &str = "CHESS_CRASH_CHILD_DATA_DIR";
/// The test that is the child process, as libtest names it.
const CHILD_TEST: &str = "crash_child::run_child";

/// What the child is asked to do.
#[derive(Debug, Clone)]
pub struct Args {
    /// The store's data directory.
    pub data_dir: PathBuf,
    /// Concurrent writers, each with its own games.
    pub writers: usize,
    /// Prefix of the game ids (distinct per run, so runs on one directory never collide).
    pub prefix: String,
    pub seed: u64,
    pub durability: Durability,
    /// A writer starts a new game after this many plies.
    pub max_ply: usize,
    /// Stop after this many acknowledged changes (0: run until killed).
    pub ops: u64,
}

impl Args {
    /// The command that runs this test binary as the child with these arguments (stdout,
    /// stderr and the process are the caller's to set up).
    pub fn command(&self) -> Command {
        let exe = std::env::current_exe().expect("the test binary knows its own path");
        let mut cmd = Command::new(exe);
        cmd.args([
            CHILD_TEST,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &self.data_dir)
        .env("CHESS_CRASH_CHILD_WRITERS", self.writers.to_string())
        .env("CHESS_CRASH_CHILD_PREFIX", &self.prefix)
        .env("CHESS_CRASH_CHILD_SEED", self.seed.to_string())
        .env("CHESS_CRASH_CHILD_DURABILITY", self.durability.as_str())
        .env("CHESS_CRASH_CHILD_MAX_PLY", self.max_ply.to_string())
        .env("CHESS_CRASH_CHILD_OPS", self.ops.to_string());
        cmd
    }

    /// The arguments [`Args::command`] passed, read back in the child.
    fn from_env() -> Option<Args> {
        fn var<T: std::str::FromStr>(name: &str) -> T
        where
            T::Err: std::fmt::Display,
        {
            let text = std::env::var(name).unwrap_or_else(|_| panic!("{name} is set"));
            text.parse()
                .unwrap_or_else(|e| panic!("{name}={text}: {e}"))
        }
        let data_dir = std::env::var_os(CHILD_ENV)?;
        Some(Args {
            data_dir: data_dir.into(),
            writers: var("CHESS_CRASH_CHILD_WRITERS"),
            prefix: var("CHESS_CRASH_CHILD_PREFIX"),
            seed: var("CHESS_CRASH_CHILD_SEED"),
            durability: var("CHESS_CRASH_CHILD_DURABILITY"),
            max_ply: var("CHESS_CRASH_CHILD_MAX_PLY"),
            ops: var("CHESS_CRASH_CHILD_OPS"),
        })
    }
}

/// One journal line, written with a single `write` so lines never interleave and a line
/// is in the pipe before the change it announces is handed to the store.
fn journal(line: std::fmt::Arguments<'_>) {
    let text = format!("{line}\n");
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        // The reader is gone: nothing can be verified any more.
        std::process::exit(3);
    }
}

fn fail(game: &str, e: &StoreError) -> ! {
    journal(format_args!("FAIL {game}"));
    eprintln!("crash child: game {game}: {e}");
    std::process::exit(2);
}

async fn writer(store: Arc<SledStore>, args: Arc<Args>, w: usize, acked: Arc<AtomicU64>) {
    let mut rng = Rng(args.seed.wrapping_mul(1_000_003).wrapping_add(w as u64));
    for k in 0.. {
        let id = format!("{}-w{w}-g{k}", args.prefix);
        let (variant, start, pos) = if rng.below(4) == 0 {
            let n = rng.below(960) as u32;
            let pos = chess960::start_position(n, Variant::Chess960)
                .expect("0..960 is a Chess960 number");
            (Variant::Chess960, Start::Chess960(n), pos)
        } else {
            (Variant::Standard, Start::Standard, Position::new())
        };
        let created = wall_now_ms();
        let meta = GameMeta {
            id: id.clone(),
            variant: variant.into(),
            start,
            created_unix_ms: created,
            tags: chess_service::lifecycle::Tags::none(),
        };
        let mut game = if k % 3 == 2 {
            let hour = TimeControl::new(3_600_000, 1000).expect("an hour is a valid control");
            Match::timed(pos, hour, created)
        } else {
            Match::untimed(pos)
        };
        journal(format_args!("BEGIN {id} NEW {}", pos.to_fen()));
        match store.create_now(&meta, &game) {
            Ok(ticket) => ticket.wait().await.unwrap_or_else(|e| fail(&id, &e)),
            Err(e) => fail(&id, &e),
        }
        journal(format_args!("ACK {id}"));
        while game.game().ply() < args.max_ply && !game.status().is_over() {
            if game.game().ply() > 0 && rng.below(8) == 0 {
                journal(format_args!("BEGIN {id} UNDO"));
                game.undo(wall_now_ms(), None)
                    .expect("a game with a move can undo it");
            } else {
                let legal = game.game().legal_moves();
                let m = legal[rng.below(legal.len())];
                let uci = game.game().position().uci(m);
                journal(format_args!("BEGIN {id} PLAY {uci}"));
                game.play(wall_now_ms(), None, &uci)
                    .expect("a move from the legal list is legal");
            }
            match store.overwrite_now(&meta, &game) {
                Ok(ticket) => ticket.wait().await.unwrap_or_else(|e| fail(&id, &e)),
                Err(e) => fail(&id, &e),
            }
            journal(format_args!("ACK {id}"));
            let n = acked.fetch_add(1, Ordering::SeqCst) + 1;
            if args.ops > 0 && n >= args.ops {
                return;
            }
        }
    }
}

/// The child process itself: run only by [`Args::command`], which sets [`CHILD_ENV`].
#[test]
#[ignore = "the child process of the store crash test, which runs it"]
fn run_child() {
    let args = Arc::new(
        Args::from_env()
            .unwrap_or_else(|| panic!("run by the crash test only, which sets {CHILD_ENV}")),
    );
    // End whatever line the test harness has begun, so READY starts a line of its own.
    journal(format_args!(""));
    let store = match SledStore::open(SledConfig::new(&args.data_dir).durability(args.durability)) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("crash child: {e}");
            std::process::exit(1);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build();
    let rt = rt.unwrap_or_else(|e| {
        eprintln!("crash child: cannot start the runtime: {e}");
        std::process::exit(1)
    });
    journal(format_args!("READY"));
    let acked = Arc::new(AtomicU64::new(0));
    rt.block_on(async {
        let tasks: Vec<_> = (0..args.writers)
            .map(|w| {
                tokio::spawn(writer(
                    Arc::clone(&store),
                    Arc::clone(&args),
                    w,
                    Arc::clone(&acked),
                ))
            })
            .collect();
        for t in tasks {
            if let Err(e) = t.await {
                eprintln!("crash child: a writer failed: {e}");
                std::process::exit(2);
            }
        }
    });
    if let Err(e) = store.close() {
        eprintln!("crash child: closing: {e}");
        std::process::exit(2);
    }
    journal(format_args!("DONE"));
}
