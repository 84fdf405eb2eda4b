//! Store benchmarks: durable save throughput and latency, bytes per ply, cold load and
//! replay of a 200-ply game, and open time with 100k stored games.
//!
//! ```text
//! cargo bench --bench store                       # everything
//! cargo bench --bench store -- throughput bytes   # some sections
//! cargo bench --bench store -- throughput --secs 5 --writers 64 --level flush
//! cargo bench --bench store -- throughput --writers 64 --linger-us 0 --no-hot
//! cargo bench --bench store -- startup --games 100000 --move-by-move
//! ```
//! Sections: `bytes`, `replay`, `throughput`, `startup`. Data directories are made under
//! `STORE_BENCH_DIR` (default: the system temp directory).

#[path = "../tests/common/corpus_games.rs"]
mod corpus_games;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chess_service::lifecycle::Match;
use chess_service::rules::{Game, Position};
use chess_service::seeded_rng::Rng;
use chess_service::store::codec;
use chess_service::store::{Durability, GameMeta, SledConfig, SledStore, Start, StoreError};
use corpus_games::corpus_games;

struct Opts {
    sections: Vec<String>,
    secs: f64,
    writers: Vec<usize>,
    levels: Vec<Durability>,
    games: usize,
    move_by_move: bool,
    linger: Option<Duration>,
    hot: bool,
}

fn parse_args() -> Opts {
    let mut o = Opts {
        sections: Vec::new(),
        secs: 3.0,
        writers: vec![1, 16, 64, 256],
        levels: vec![Durability::Fsync],
        games: 100_000,
        move_by_move: false,
        linger: None,
        hot: true,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| panic!("{name} needs a value"))
        };
        match a.as_str() {
            "--bench" => {}
            "--secs" => o.secs = value("--secs").parse().expect("--secs takes seconds"),
            "--writers" => {
                o.writers = value("--writers")
                    .split(',')
                    .map(|w| w.parse().expect("--writers takes a list like 1,16,64"))
                    .collect()
            }
            "--level" => {
                o.levels = value("--level")
                    .split(',')
                    .map(|l| l.parse().unwrap_or_else(|e| panic!("{e}")))
                    .collect()
            }
            "--games" => o.games = value("--games").parse().expect("--games takes a count"),
            "--move-by-move" => o.move_by_move = true,
            "--linger-us" => {
                o.linger = Some(Duration::from_micros(
                    value("--linger-us")
                        .parse()
                        .expect("--linger-us takes microseconds"),
                ))
            }
            "--no-hot" => o.hot = false,
            s if s.starts_with("--") => panic!("unknown option {s}"),
            s => o.sections.push(s.to_string()),
        }
    }
    if o.sections.is_empty() {
        o.sections = ["bytes", "replay", "throughput", "startup"]
            .map(String::from)
            .to_vec();
    }
    o
}

fn bench_dir(name: &str) -> tempfile::TempDir {
    let base = std::env::var_os("STORE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    tempfile::Builder::new()
        .prefix(name)
        .tempdir_in(base)
        .expect("a temp dir for the bench")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn us(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

fn meta(id: String, start: Start, variant: chess_service::rules::Variant) -> GameMeta {
    GameMeta {
        id,
        variant: variant.into(),
        start,
        created_unix_ms: 1_700_000_000_000,
        tags: chess_service::lifecycle::Tags::none(),
    }
}

// ---- bytes per ply ----------------------------------------------------------------------

fn bytes_per_ply() {
    let games = corpus_games();
    let (mut plies, mut bytes, mut bits, mut floor) = (0usize, 0usize, 0u64, 0f64);
    for g in games {
        let m = meta(format!("corpus-{}", g.game_id), g.start.clone(), g.variant);
        bytes += codec::encode(&m, &Match::from_moves(g.game.clone()))
            .expect("encodes")
            .len();
        let (b, f) = codec::testing::move_bits(&g.game).expect("encodes");
        bits += b;
        floor += f;
        plies += g.game.ply();
    }
    println!(
        "## bytes per ply ({} corpus games, {plies} plies)",
        games.len()
    );
    println!(
        "whole records: {bytes} bytes = {:.3} B/ply (avg {:.0} bytes/game)",
        bytes as f64 / plies as f64,
        bytes as f64 / games.len() as f64
    );
    println!(
        "moves alone: {:.3} B/ply = {:.2} bits/ply; floor for a uniform choice among the legal moves: {:.2} bits/ply",
        bits as f64 / 8.0 / plies as f64,
        bits as f64 / plies as f64,
        floor / plies as f64
    );
}

// ---- cold load and replay ---------------------------------------------------------------

/// Corpus games cut to exactly 200 plies.
fn games_200() -> Vec<(GameMeta, Game)> {
    corpus_games()
        .iter()
        .filter(|g| g.game.ply() >= 200)
        .map(|g| {
            let mut game = Game::new(*g.game.start());
            for &m in &g.game.moves()[..200] {
                game.play(m).expect("corpus moves are legal");
            }
            (
                meta(format!("g200-{}", g.game_id), g.start.clone(), g.variant),
                game,
            )
        })
        .collect()
}

fn replay() {
    let games = games_200();
    assert!(!games.is_empty(), "the corpus has 200-ply games");
    let matches: Vec<Match> = games
        .iter()
        .map(|(_, g)| Match::from_moves(g.clone()))
        .collect();
    let records: Vec<(String, Vec<u8>)> = games
        .iter()
        .zip(&matches)
        .map(|((m, _), g)| (m.id.clone(), codec::encode(m, g).expect("encodes")))
        .collect();
    // Decode + replay from bytes in memory.
    let mut times = Vec::new();
    for _ in 0..20 {
        for (id, rec) in &records {
            let t = Instant::now();
            let d = codec::decode(id, rec).expect("decodes");
            times.push(t.elapsed());
            assert_eq!(d.loaded.game.game().ply(), 200);
        }
    }
    times.sort();
    println!(
        "## cold load + replay of a 200-ply game ({} games)",
        games.len()
    );
    println!(
        "decode + replay from bytes: p50 {} p99 {} ({} runs)",
        us(percentile(&times, 0.5)),
        us(percentile(&times, 0.99)),
        times.len()
    );
    // The same games in the log form (a draw offer and its refusal before the moves),
    // timed (a move every second): every event goes through the lifecycle's replay.
    let logged: Vec<(String, Vec<u8>)> = games
        .iter()
        .map(|(m, g)| {
            let control =
                chess_service::lifecycle::TimeControl::new(86_400_000, 0).expect("a valid control");
            let mut timed = Match::timed(*g.start(), control, m.created_unix_ms);
            let t0 = m.created_unix_ms;
            timed
                .offer_draw(t0, chess_service::rules::Color::White)
                .expect("offer");
            timed
                .respond_to_draw(t0, chess_service::rules::Color::Black, false)
                .expect("decline");
            for (i, &mv) in g.moves().iter().enumerate() {
                let uci = timed.game().position().uci(mv);
                timed
                    .play(t0 + 1000 * (i as u64 + 1), None, &uci)
                    .expect("legal");
            }
            (m.id.clone(), codec::encode(m, &timed).expect("encodes"))
        })
        .collect();
    let mut log_times = Vec::new();
    for _ in 0..20 {
        for (id, rec) in &logged {
            let t = Instant::now();
            let d = codec::decode(id, rec).expect("decodes");
            log_times.push(t.elapsed());
            assert_eq!(d.loaded.game.game().ply(), 200);
        }
    }
    log_times.sort();
    println!(
        "decode + replay of the log form (timed, an offer and its refusal, 202 events): p50 {} p99 {} ({} bytes per game on average)",
        us(percentile(&log_times, 0.5)),
        us(percentile(&log_times, 0.99)),
        logged.iter().map(|(_, r)| r.len()).sum::<usize>() / logged.len().max(1)
    );
    // The rules work alone: replaying the same moves with Game::play, no decoding.
    let mut plain = Vec::new();
    for _ in 0..20 {
        for (_, g) in &games {
            let t = Instant::now();
            let mut r = Game::new(*g.start());
            for &m in g.moves() {
                r.play(m).expect("legal");
            }
            plain.push(t.elapsed());
        }
    }
    plain.sort();
    println!(
        "for comparison, Game::play of the same 200 moves (which checks legality again): p50 {}",
        us(percentile(&plain, 0.5))
    );
    // The two move generations per ply inside decoding, each over the 200 positions.
    let (mut counts, mut lists) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        for (_, g) in &games {
            let t = Instant::now();
            let n: u64 = (0..200)
                .filter_map(|i| g.position_at(i))
                .map(|p| p.board().count_legal_moves())
                .sum();
            counts.push(t.elapsed());
            let t = Instant::now();
            let m: usize = (0..200)
                .filter_map(|i| g.position_at(i))
                .map(|p| p.legal_moves().len())
                .sum();
            lists.push(t.elapsed());
            assert_eq!(n, m as u64);
        }
    }
    counts.sort();
    lists.sort();
    println!(
        "of which, over the 200 positions: counting legal moves (inside Game::status) p50 {}, listing them p50 {}",
        us(percentile(&counts, 0.5)),
        us(percentile(&lists, 0.5))
    );
    // Encoding a whole game from scratch (a save with a cold encoder cache).
    let mut enc = Vec::new();
    for ((m, _), g) in games.iter().zip(&matches) {
        let t = Instant::now();
        let r = codec::encode(m, g).expect("encodes");
        enc.push(t.elapsed());
        assert!(!r.is_empty());
    }
    enc.sort();
    println!(
        "encode from scratch (cold encoder cache): p50 {}",
        us(percentile(&enc, 0.5))
    );

    // Through the store: the first load of each game after the store was reopened.
    let dir = bench_dir("store-bench-replay");
    {
        let store = SledStore::open(SledConfig::new(dir.path()).durability(Durability::None))
            .expect("open");
        for ((m, _), g) in games.iter().zip(&matches) {
            drop(store.create_now(m, g).expect("create"));
        }
        store.close().expect("close");
    }
    let store = SledStore::open(SledConfig::new(dir.path())).expect("reopen");
    let mut loads = Vec::new();
    for (m, _) in &games {
        let t = Instant::now();
        let l = store.load_blocking(&m.id).expect("load").expect("present");
        loads.push(t.elapsed());
        assert_eq!(l.game.game().ply(), 200);
    }
    let very_first = loads[0];
    loads.sort();
    println!(
        "SledStore::load, first access to each game after reopen: p50 {} p99 {} max {} \
         (the very first load of the process: {})",
        us(percentile(&loads, 0.5)),
        us(percentile(&loads, 0.99)),
        us(*loads.last().expect("some loads")),
        us(very_first)
    );
}

// ---- throughput -------------------------------------------------------------------------

struct Run {
    ops: u64,
    elapsed: Duration,
    lat: Vec<Duration>,
}

impl Run {
    fn print(&self, what: &str, store: &SledStore, before: chess_service::store::GroupCommitStats) {
        let mut lat = self.lat.clone();
        lat.sort();
        let after = store.commit_stats();
        let batches = after.batches - before.batches;
        let waiters = after.waiters - before.waiters;
        let sync_ms = (after.sync_time - before.sync_time).as_secs_f64() * 1e3;
        println!(
            "| {what} | {:.0} | {} | {} | {} | {} |",
            self.ops as f64 / self.elapsed.as_secs_f64(),
            us(percentile(&lat, 0.5)),
            us(percentile(&lat, 0.99)),
            us(*lat.last().unwrap_or(&Duration::ZERO)),
            if batches > 0 {
                format!(
                    "{batches} syncs, {:.1} waiters/sync, {:.2} ms/sync",
                    waiters as f64 / batches as f64,
                    sync_ms / batches as f64
                )
            } else {
                "no syncs".to_string()
            },
        );
    }
}

/// Plays a random move, or starts a new game when this one is over or long.
fn next_move(game: &mut Match, rng: &mut Rng) -> bool {
    let board = game.game();
    if board.ply() >= 200 || game.status().is_over() {
        return false;
    }
    let legal = board.legal_moves();
    let uci = board.position().uci(legal[rng.below(legal.len())]);
    game.play(0, None, &uci).expect("legal move");
    true
}

async fn distinct_writer(
    store: Arc<SledStore>,
    w: usize,
    stop: Arc<AtomicBool>,
    measure: Arc<AtomicBool>,
) -> Result<(u64, Vec<Duration>), StoreError> {
    let mut rng = Rng(w as u64 + 1);
    let (mut ops, mut lat) = (0u64, Vec::new());
    let mut k = 0;
    while !stop.load(Ordering::Relaxed) {
        let m = meta(
            format!("w{w}-g{k}-{}", rng.below(1 << 30)),
            Start::Standard,
            chess_service::rules::Variant::Standard,
        );
        k += 1;
        let mut game = Match::untimed(Position::new());
        store.create_now(&m, &game)?.wait().await?;
        while !stop.load(Ordering::Relaxed) && next_move(&mut game, &mut rng) {
            let t = Instant::now();
            store.overwrite_now(&m, &game)?.wait().await?;
            // At level `none` the ticket is ready at once: yield so the timer that ends
            // the run gets a thread (a service task would wait on its socket here).
            tokio::task::yield_now().await;
            if measure.load(Ordering::Relaxed) {
                lat.push(t.elapsed());
                ops += 1;
            }
        }
    }
    Ok((ops, lat))
}

async fn hot_writer(
    store: Arc<SledStore>,
    hot: Arc<tokio::sync::Mutex<(GameMeta, Match, Rng)>>,
    hold: bool,
    stop: Arc<AtomicBool>,
    measure: Arc<AtomicBool>,
) -> Result<(u64, Vec<Duration>), StoreError> {
    let (mut ops, mut lat) = (0u64, Vec::new());
    while !stop.load(Ordering::Relaxed) {
        let t = Instant::now();
        let mut guard = hot.lock().await;
        let (m, game, rng) = &mut *guard;
        if !next_move(game, rng) {
            // Start the hot game over (a new history under the same id is also a save).
            *game = Match::untimed(Position::new());
        }
        let ticket = store.overwrite_now(m, game)?;
        if hold {
            ticket.wait().await?;
            drop(guard);
        } else {
            // The per-game order is fixed by the insert; tickets resolve in order.
            drop(guard);
            ticket.wait().await?;
        }
        tokio::task::yield_now().await;
        if measure.load(Ordering::Relaxed) {
            lat.push(t.elapsed());
            ops += 1;
        }
    }
    Ok((ops, lat))
}

fn run_writers<F, Fut>(secs: f64, writers: usize, spawn: F) -> Run
where
    F: Fn(usize, Arc<AtomicBool>, Arc<AtomicBool>) -> Fut,
    Fut: std::future::Future<Output = Result<(u64, Vec<Duration>), StoreError>> + Send + 'static,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let stop = Arc::new(AtomicBool::new(false));
    let measure = Arc::new(AtomicBool::new(false));
    rt.block_on(async {
        let tasks: Vec<_> = (0..writers)
            .map(|w| tokio::spawn(spawn(w, Arc::clone(&stop), Arc::clone(&measure))))
            .collect();
        tokio::time::sleep(Duration::from_millis(500)).await; // warm-up
        measure.store(true, Ordering::SeqCst);
        let t = Instant::now();
        tokio::time::sleep(Duration::from_secs_f64(secs)).await;
        measure.store(false, Ordering::SeqCst);
        let elapsed = t.elapsed();
        stop.store(true, Ordering::SeqCst);
        let mut run = Run {
            ops: 0,
            elapsed,
            lat: Vec::new(),
        };
        for task in tasks {
            let (ops, lat) = task.await.expect("writer task").expect("writer");
            run.ops += ops;
            run.lat.extend(lat);
        }
        run
    })
}

fn throughput(o: &Opts) {
    println!(
        "## durable saves: {}s per row after 0.5s warm-up, 2 runtime threads, linger {}",
        o.secs,
        o.linger
            .map(|d| format!("{} µs", d.as_micros()))
            .unwrap_or_else(|| "default".into())
    );
    println!("| level, writers, games | saves/s | p50 | p99 | max | group commit |");
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    for &level in &o.levels {
        for &writers in &o.writers {
            let dir = bench_dir("store-bench-tp");
            let mut config = SledConfig::new(dir.path()).durability(level);
            if let Some(linger) = o.linger {
                config.commit_linger_max = linger;
            }
            let store = Arc::new(SledStore::open(config).expect("open"));
            let before = store.commit_stats();
            let s = Arc::clone(&store);
            let run = run_writers(o.secs, writers, move |w, stop, measure| {
                distinct_writer(Arc::clone(&s), w, stop, measure)
            });
            run.print(&format!("{level}, {writers}, distinct"), &store, before);

            for hold in [true, false].into_iter().filter(|_| o.hot) {
                let hot = Arc::new(tokio::sync::Mutex::new((
                    meta(
                        format!("hot-{hold}"),
                        Start::Standard,
                        chess_service::rules::Variant::Standard,
                    ),
                    Match::untimed(Position::new()),
                    Rng(99),
                )));
                {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .expect("runtime");
                    let g = hot.blocking_lock();
                    rt.block_on(store.create_now(&g.0, &g.1).expect("create").wait())
                        .expect("durable");
                }
                let before = store.commit_stats();
                let s = Arc::clone(&store);
                let run = run_writers(o.secs, writers, move |_, stop, measure| {
                    hot_writer(Arc::clone(&s), Arc::clone(&hot), hold, stop, measure)
                });
                let how = if hold {
                    "lock held until durable"
                } else {
                    "lock released after insert"
                };
                run.print(
                    &format!("{level}, {writers}, one hot game ({how})"),
                    &store,
                    before,
                );
            }
            drop(store);
        }
    }
}

// ---- start-up -----------------------------------------------------------------------------

fn startup(o: &Opts) {
    let dir = bench_dir("store-bench-startup");
    let mut rng = Rng(5);
    let t = Instant::now();
    let mut plies = 0usize;
    let mut sample = Vec::new();
    {
        let store = SledStore::open(SledConfig::new(dir.path()).durability(Durability::None))
            .expect("open");
        for i in 0..o.games {
            let m = meta(
                format!("game-{i:08}"),
                Start::Standard,
                chess_service::rules::Variant::Standard,
            );
            let mut game = Match::untimed(Position::new());
            let target = rng.below(201);
            if o.move_by_move {
                // As the service writes: the record again after every move.
                drop(store.create_now(&m, &game).expect("create"));
                while game.game().ply() < target && next_move(&mut game, &mut rng) {
                    drop(store.overwrite_now(&m, &game).expect("save"));
                }
            } else {
                while game.game().ply() < target && next_move(&mut game, &mut rng) {}
                drop(store.create_now(&m, &game).expect("create"));
            }
            plies += game.game().ply();
            if i % (o.games / 100).max(1) == 0 {
                sample.push((m.id.clone(), game.game().ply()));
            }
        }
        store.close().expect("close");
    }
    let du = dir_size(dir.path());
    println!(
        "## open with {} stored games ({plies} plies, {:.1} MB on disk; written {} in {:.1}s)",
        o.games,
        du as f64 / 1e6,
        if o.move_by_move {
            "move by move, one save per ply,"
        } else {
            "one record per game"
        },
        t.elapsed().as_secs_f64()
    );
    for round in 0..3 {
        let t = Instant::now();
        let store = SledStore::open(SledConfig::new(dir.path())).expect("reopen");
        let opened = t.elapsed();
        let t = Instant::now();
        let (id, ply) = &sample[round * 7 % sample.len()];
        let l = store.load_blocking(id).expect("load").expect("present");
        assert_eq!(l.game.game().ply(), *ply);
        let first = t.elapsed();
        println!(
            "open #{round}: {} ms; first load after open ({ply} plies): {}",
            opened.as_millis(),
            us(first)
        );
        if round == 0 {
            let t = Instant::now();
            let n = store.count_games();
            println!(
                "(for comparison, counting the games walks the tree: {n} in {} ms; open does not do this)",
                t.elapsed().as_millis()
            );
        }
        store.close().expect("close");
    }
}

fn dir_size(p: &std::path::Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

fn main() {
    let o = parse_args();
    for s in &o.sections {
        match s.as_str() {
            "bytes" => bytes_per_ply(),
            "replay" => replay(),
            "throughput" => throughput(&o),
            "startup" => startup(&o),
            other => panic!("unknown section {other}: bytes, replay, throughput, startup"),
        }
        println!();
    }
}
