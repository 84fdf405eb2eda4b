//! Issue 24's history checker: 2 replicas (real server processes on one PostgreSQL), 8
//! callers, 4 games, about 17 s of mixed Play/Undo/GetGame with random
//! `expected_version`s, through a real network cut of replica A (iptables DROP both ways,
//! `common/iptables.rs`, 4 s) and a SIGSTOP of replica B (2.5 s). Every call is recorded:
//! its start and end, its request, and its outcome, one of
//! - **ok**: the game's version and moves as the reply gave them (and, for an Undo, the
//!   move it took back);
//! - **refused**: a definite refusal (ABORTED VERSION_MISMATCH, FAILED_PRECONDITION
//!   ILLEGAL_MOVE or NOTHING_TO_UNDO, …): nothing was changed;
//! - **ambiguous**: UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, or no answer within the
//!   caller's own deadline: the change may or may not have happened.
//!
//! Callers choose moves legal in the position they last saw (`chess_service::rules`), so
//! most Plays can succeed; `expected_version` is mostly the version the caller last saw,
//! sometimes one more or one less, sometimes absent.
//!
//! Afterwards, with both replicas healthy, each game's final state is read from both
//! replicas, and so is its whole event log (WatchGame from version 1: every move and every
//! undo, the undone moves included; `version` = the log's length). Undos rewrite the move
//! list, so the checks are on the log, where every change has exactly one version:
//! 1. **Same history on both replicas**: the same final version and moves, and the same
//!    log; the final moves are the log replayed (a MoveUndone takes back exactly the last
//!    move).
//! 2. **Nothing nobody asked for**: the log holds only moves, undos and the endings a move
//!    decides on the board (GameEnded right after a MovePlayed). Each move or undo event is
//!    accounted for by a distinct call that asked for exactly it (same kind, same move,
//!    and `expected_version` absent or one less than the event's version): an
//!    acknowledged call claims the event of its reply (below); every other event is
//!    matched (a bipartite matching) to a distinct *ambiguous* call. A refused call
//!    accounts for nothing.
//! 3. **Every acknowledged change is in the log, once, where it says**: an acknowledged
//!    Play (Undo) replied with version `r`: its own event is the last event at or below
//!    `r` that is not an ending, it is a MovePlayed of that very move (a MoveUndone of the
//!    move the reply says it took back), it is at `expected_version + 1` when the call
//!    gave one, only endings follow it up to `r`, and the reply's moves are the log
//!    replayed to `r`. Two acknowledged changes may own the same event only as an exact
//!    retry (the API's rule: a change whose `expected_version` shows it applied already
//!    answers success and applies nothing): both asked for the same thing (guaranteed by
//!    the event's identity) and at most one of them without `expected_version`. So no
//!    version is acknowledged to two different changes: no lost update. (Undo names no
//!    move, so two callers undoing at the same `expected_version` both succeed with one
//!    undo made: the API cannot tell the second from a retry of the first. The runs here
//!    see hundreds of such shared acknowledgements.)
//! 4. **No stale read, no going back**: for any two ok calls of one game, A ending before
//!    B began, B's version is at least A's; when B is a change made without
//!    `expected_version` (which cannot be a retry), its own event comes after A's version.
//!    Every GetGame answer's moves are the log replayed to its version, and its version is
//!    at most the final one. The final reads count as reads begun after every call.
//!
//! The checker must not be vacuous: it prints its counts and asserts minimums, overall and
//! per fault window (acknowledged changes on the healthy replica during each fault, failed
//! calls on the faulty one, and acknowledged changes on both after both faults).
//!
//! What it cannot see: no game is deleted and nothing fails over, so each version names
//! one state, and the write token never decides anything here. Removing the token from the
//! compare-and-set, or the cache's invalidation on reconnect, left it passing (the stamp
//! check before every answer covers both; `partition.rs` and `delete.rs` are the tests of
//! the token). A replica answering from its cache without that check failed it with
//! thousands of stale reads, replicas that differed, and an acknowledgement beyond the
//! final version.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use chess_service::lifecycle::judge::is_dead;
use chess_service::pb;
use chess_service::rules::{Game, Position};
use pb::game_event::Kind;
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_types::StatusExt;

use super::common::iptables::{self, CUT_ADDR, Cut};
use super::rng::Rng;
use super::server::Server;
use super::{Client, Pg, new_game, replica, replica_args, wait_health};

const GAMES: usize = 4;
const CALLERS: usize = 8;
/// The deadline each call carries; the caller gives up on its own a little later (a
/// paused server answers nothing at all).
const CALL_DEADLINE: Duration = Duration::from_millis(1500);
const GIVE_UP: Duration = Duration::from_millis(2000);

/// What a caller asked.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Req {
    Play { uci: String, expected: Option<u64> },
    Undo { expected: Option<u64> },
    Get,
}

/// What it got.
#[derive(Clone, Debug)]
enum Outcome {
    Ok {
        version: u64,
        moves: Vec<String>,
        /// The move an Undo took back.
        undone: Option<String>,
    },
    Refused {
        code: Code,
        reason: String,
    },
    Ambiguous {
        code: Code,
    },
}

#[derive(Clone, Debug)]
struct Call {
    caller: usize,
    replica: usize,
    game: usize,
    start: Duration,
    end: Duration,
    req: Req,
    outcome: Outcome,
}

impl Call {
    fn ok(&self) -> Option<(u64, &[String])> {
        match &self.outcome {
            Outcome::Ok { version, moves, .. } => Some((*version, moves)),
            _ => None,
        }
    }
    fn is_change(&self) -> bool {
        !matches!(self.req, Req::Get)
    }
    fn expected(&self) -> Option<u64> {
        match self.req {
            Req::Play { expected, .. } | Req::Undo { expected } => expected,
            Req::Get => None,
        }
    }
}

fn game_id(g: usize) -> String {
    format!("h{g}")
}

/// One event of a game's log.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ev {
    Played(String),
    Undone(String),
    Ended,
    Other(String),
}

/// The calls caller `n` makes until `until`: callers 0-5 each call one replica (`n % 2`:
/// 0 is A), so that the healthy replica keeps working while the other is cut off or
/// paused; callers 6 and 7 roam, each call to either replica.
async fn caller(
    n: usize,
    clients: [Client; 2],
    t0: Instant,
    until: Instant,
    seed: u64,
) -> Vec<Call> {
    let mut rng = Rng(seed | 1);
    let home = n % 2;
    let mut clients = clients;
    // The version and moves this caller last saw of each game; a game to read first
    // (after a refusal or an ambiguous outcome).
    let mut seen: Vec<(u64, Vec<String>)> = vec![(0, Vec::new()); GAMES];
    let mut must_read = [false; GAMES];
    let mut calls = Vec::new();
    while Instant::now() < until {
        let g = rng.below(GAMES);
        let replica = if n >= 6 { rng.below(2) } else { home };
        let (version, moves) = seen[g].clone();
        let expected = match rng.below(20) {
            0..=14 => Some(version),
            15 | 16 => Some(version + 1),
            17 => Some(version.saturating_sub(1)),
            _ => None,
        };
        let req = if must_read[g] || rng.below(10) < 3 {
            Req::Get
        } else {
            let mut game = Game::new(Position::new());
            for m in &moves {
                game.play_text(m).expect("a move the service accepted");
            }
            // Moves after which the game goes on (the service judges a dead position
            // at once, as an ending of its own; mates are fine: they can be undone).
            let candidates: Vec<String> = game
                .legal_moves()
                .iter()
                .filter(|&&m| {
                    let mut after = game.clone();
                    after.play(m).is_ok() && !is_dead(after.position())
                })
                .map(|&m| game.position().uci(m))
                .collect();
            // Short games (a move list of at most about 24 plies): more undos as it grows.
            let undo_percent = if moves.len() >= 24 { 55 } else { 15 };
            if candidates.is_empty() || (!moves.is_empty() && rng.below(100) < undo_percent) {
                Req::Undo { expected }
            } else {
                let uci = candidates[rng.below(candidates.len())].clone();
                Req::Play { uci, expected }
            }
        };
        let start = t0.elapsed();
        let outcome = perform(&mut clients[replica], &game_id(g), &req).await;
        let end = t0.elapsed();
        match &outcome {
            Outcome::Ok { version, moves, .. } => {
                seen[g] = (*version, moves.clone());
                must_read[g] = false;
            }
            Outcome::Refused { .. } => must_read[g] = true,
            Outcome::Ambiguous { .. } => {
                must_read[g] = true;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        calls.push(Call {
            caller: n,
            replica,
            game: g,
            start,
            end,
            req,
            outcome,
        });
    }
    calls
}

/// One call, with a deadline (and the caller's own limit on top).
async fn perform(c: &mut Client, id: &str, req: &Req) -> Outcome {
    fn timed<T>(msg: T) -> tonic::Request<T> {
        let mut r = tonic::Request::new(msg);
        r.set_timeout(CALL_DEADLINE);
        r
    }
    let call = async {
        match req {
            Req::Play { uci, expected } => c
                .play(timed(pb::PlayRequest {
                    game_id: id.into(),
                    r#move: uci.clone(),
                    expected_version: *expected,
                    ..Default::default()
                }))
                .await
                .map(|r| (r.into_inner().game, None)),
            Req::Undo { expected } => c
                .undo(timed(pb::UndoRequest {
                    game_id: id.into(),
                    expected_version: *expected,
                    ..Default::default()
                }))
                .await
                .map(|r| {
                    let r = r.into_inner();
                    (r.game, r.undone.map(|m| m.uci))
                }),
            Req::Get => c
                .get_game(timed(pb::GetGameRequest {
                    game_id: id.into(),
                    ..Default::default()
                }))
                .await
                .map(|r| (r.into_inner().game, None)),
        }
    };
    match tokio::time::timeout(GIVE_UP, call).await {
        Err(_) => Outcome::Ambiguous {
            code: Code::DeadlineExceeded,
        },
        Ok(Ok((Some(game), undone))) => Outcome::Ok {
            version: game.version,
            moves: game.moves,
            undone,
        },
        Ok(Ok((None, _))) => Outcome::Refused {
            code: Code::Internal,
            reason: "a reply without a game".into(),
        },
        Ok(Err(status)) => match status.code() {
            Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled => Outcome::Ambiguous {
                code: status.code(),
            },
            code => Outcome::Refused {
                code,
                reason: status
                    .get_error_details()
                    .error_info()
                    .map_or_else(|| format!("no ErrorInfo: {status:?}"), |i| i.reason.clone()),
            },
        },
    }
}

/// A game's whole event log, versions 1..=`version`, from WatchGame.
async fn event_log(c: &mut Client, id: &str, version: u64) -> Vec<Ev> {
    let mut log = Vec::new();
    if version == 0 {
        return log;
    }
    let mut stream = super::watch(c, id, 1).await;
    while (log.len() as u64) < version {
        let e = super::next_event(&mut stream).await;
        assert_eq!(e.version, log.len() as u64 + 1, "{id}: events in order");
        log.push(match e.kind {
            Some(Kind::MovePlayed(p)) => Ev::Played(p.r#move.map(|m| m.uci).unwrap_or_default()),
            Some(Kind::MoveUndone(u)) => Ev::Undone(u.undone.map(|m| m.uci).unwrap_or_default()),
            Some(Kind::GameEnded(_)) => Ev::Ended,
            other => Ev::Other(format!("{other:?}")),
        });
    }
    log
}

/// The moves after the first `upto` events of `log`; `Err` when an undo does not take
/// back the last move.
fn replay(log: &[Ev], upto: usize) -> Result<Vec<String>, String> {
    let mut moves: Vec<String> = Vec::new();
    for (i, e) in log.iter().take(upto).enumerate() {
        match e {
            Ev::Played(m) => moves.push(m.clone()),
            Ev::Undone(m) => {
                if moves.pop().as_ref() != Some(m) {
                    return Err(format!("event {} undoes {m}, not the last move", i + 1));
                }
            }
            Ev::Ended | Ev::Other(_) => {}
        }
    }
    Ok(moves)
}

/// The version of the event a change acknowledged at `r` made itself: the last one at or
/// below `r` that is not an ending the move decided.
fn own_event(log: &[Ev], r: u64) -> Option<u64> {
    (1..=r.min(log.len() as u64))
        .rev()
        .find(|&v| log[v as usize - 1] != Ev::Ended)
}

/// Whether call `c` asked for event `v` (`ev`) exactly.
fn asks_for(c: &Call, v: u64, ev: &Ev) -> bool {
    let kind = match (&c.req, ev) {
        (Req::Play { uci, .. }, Ev::Played(m)) => uci == m,
        (Req::Undo { .. }, Ev::Undone(_)) => true,
        _ => false,
    };
    kind && c.expected().is_none_or(|e| e + 1 == v)
}

/// Kuhn's augmenting path for bipartite matching: events to calls.
fn augment(
    event: usize,
    edges: &[Vec<usize>],
    taken_by: &mut [Option<usize>],
    visited: &mut [bool],
) -> bool {
    for &call in &edges[event] {
        if visited[call] {
            continue;
        }
        visited[call] = true;
        if taken_by[call].is_none_or(|other| augment(other, edges, taken_by, visited)) {
            taken_by[call] = Some(event);
            return true;
        }
    }
    false
}

/// Every violation of the checks (see the module docs) in one game's calls, given its
/// final version and log; and how many of its events only an ambiguous call can have
/// made.
fn check_game(g: usize, calls: &[&Call], final_version: u64, log: &[Ev]) -> (Vec<String>, usize) {
    let mut bad = Vec::new();
    let id = game_id(g);
    if log.len() as u64 != final_version {
        bad.push(format!(
            "{id}: log of {} events, version {final_version}",
            log.len()
        ));
        return (bad, 0);
    }
    for (i, e) in log.iter().enumerate() {
        let v = i + 1;
        match e {
            Ev::Other(what) => bad.push(format!("{id}: event {v} nobody asked for: {what}")),
            Ev::Ended if i == 0 || !matches!(log[i - 1], Ev::Played(_) | Ev::Ended) => {
                bad.push(format!("{id}: an ending at {v} that no move decided"))
            }
            _ => {}
        }
    }
    if let Err(e) = replay(log, log.len()) {
        bad.push(format!("{id}: {e}"));
    }

    // 3. Acknowledged changes, each at its own event.
    let mut claimed: HashMap<u64, Vec<&Call>> = HashMap::new();
    for &c in calls.iter().filter(|c| c.is_change()) {
        let Outcome::Ok {
            version: r,
            moves,
            undone,
        } = &c.outcome
        else {
            continue;
        };
        if *r > final_version {
            bad.push(format!(
                "{id}: acknowledged at {r}, beyond the final {final_version}: {c:?}"
            ));
            continue;
        }
        let Some(v) = own_event(log, *r) else {
            bad.push(format!(
                "{id}: acknowledged at {r} with no event of its own: {c:?}"
            ));
            continue;
        };
        let ev = &log[v as usize - 1];
        let matches = match (&c.req, ev) {
            (Req::Play { uci, .. }, Ev::Played(m)) => uci == m,
            (Req::Undo { .. }, Ev::Undone(m)) => undone.as_ref() == Some(m),
            _ => false,
        };
        if !matches {
            bad.push(format!(
                "{id}: acknowledged at {r}, but event {v} is {ev:?}: {c:?}"
            ));
        }
        if let Some(e) = c.expected()
            && e + 1 != v
        {
            bad.push(format!(
                "{id}: acknowledged with expected {e}, but its event is {v}: {c:?}"
            ));
        }
        match replay(log, *r as usize) {
            Ok(want) if want == *moves => {}
            other => bad.push(format!(
                "{id}: the reply's moves are not the log's at {r} ({other:?}): {c:?}"
            )),
        }
        claimed.entry(v).or_default().push(c);
    }
    for (v, owners) in &claimed {
        let unconditional = owners.iter().filter(|c| c.expected().is_none()).count();
        if unconditional > 1 {
            bad.push(format!(
                "{id}: event {v} acknowledged to {unconditional} changes made without \
                 expected_version (a lost update): {owners:?}"
            ));
        }
    }

    // 2. Every other move or undo event to a distinct ambiguous call that asked for it.
    let ambiguous: Vec<&Call> = calls
        .iter()
        .copied()
        .filter(|c| c.is_change() && matches!(c.outcome, Outcome::Ambiguous { .. }))
        .collect();
    let unclaimed: Vec<(u64, &Ev)> = log
        .iter()
        .enumerate()
        .map(|(i, e)| (i as u64 + 1, e))
        .filter(|(v, e)| matches!(e, Ev::Played(_) | Ev::Undone(_)) && !claimed.contains_key(v))
        .collect();
    let edges: Vec<Vec<usize>> = unclaimed
        .iter()
        .map(|(v, e)| {
            (0..ambiguous.len())
                .filter(|&k| asks_for(ambiguous[k], *v, e))
                .collect()
        })
        .collect();
    let mut taken_by = vec![None; ambiguous.len()];
    let by_ambiguous = unclaimed.len();
    for (i, (v, e)) in unclaimed.iter().enumerate() {
        let mut visited = vec![false; ambiguous.len()];
        if !augment(i, &edges, &mut taken_by, &mut visited) {
            bad.push(format!(
                "{id}: event {v} ({e:?}) is no acknowledged change, and no ambiguous call \
                 left could have made it"
            ));
        }
    }

    // 4. Real-time order, and reads that are the log at their version.
    let mut oks: Vec<(&Call, u64)> = calls
        .iter()
        .filter_map(|&c| c.ok().map(|(v, _)| (c, v)))
        .collect();
    oks.sort_by_key(|(c, _)| c.end);
    for &(b, vb) in &oks {
        // The highest version any ok call that ended before `b` began answered.
        let before = oks
            .iter()
            .take_while(|(a, _)| a.end < b.start)
            .max_by_key(|(_, va)| *va);
        if let Some(&(a, va)) = before {
            if vb < va {
                bad.push(format!(
                    "{id}: version {vb} answered after {va} was (stale, or gone back): \
                     {a:?} then {b:?}"
                ));
            }
            if matches!(
                b.req,
                Req::Play { expected: None, .. } | Req::Undo { expected: None }
            ) && own_event(log, vb).is_some_and(|v| v <= va)
            {
                bad.push(format!(
                    "{id}: a change without expected_version made at or below version {va}, \
                     already answered before it began: {a:?} then {b:?}"
                ));
            }
        }
        if !b.is_change() {
            let Some((_, moves)) = b.ok() else { continue };
            match replay(log, vb as usize) {
                Ok(want) if vb <= final_version && want == moves => {}
                other => bad.push(format!(
                    "{id}: read at {vb} is not the log's state there ({other:?}): {b:?}"
                )),
            }
        }
    }
    (bad, by_ambiguous)
}

#[derive(Default, Debug)]
struct Counts {
    calls: usize,
    acks: usize,
    refused: usize,
    ambiguous: usize,
    reads: usize,
    read_failures: usize,
}

fn count<'a>(calls: impl Iterator<Item = &'a Call>) -> Counts {
    let mut k = Counts::default();
    for c in calls {
        k.calls += 1;
        match (&c.outcome, c.is_change()) {
            (Outcome::Ok { .. }, true) => k.acks += 1,
            (Outcome::Ok { .. }, false) => k.reads += 1,
            (Outcome::Refused { .. }, true) => k.refused += 1,
            (Outcome::Ambiguous { .. }, true) => k.ambiguous += 1,
            (_, false) => k.read_failures += 1,
        }
    }
    k
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_calls_through_a_cut_and_a_pause_keep_one_linearizable_history_per_game() {
    const TEST: &str = "history_checker";
    let Some(pg) = Pg::start(TEST).await else {
        return;
    };
    if !iptables::available(TEST) {
        return;
    }
    let (Some(cut_url), Some(port)) = (pg.url_via(CUT_ADDR), pg.port()) else {
        eprintln!("{TEST}: an external database cannot be cut here; skipped");
        return;
    };
    let mut cut = Cut::new(CUT_ADDR, port);
    let a = Server::start(&replica_args(&cut_url));
    let b = replica(&pg);
    let (mut ca, mut cb) = (a.client().await, b.client().await);
    for g in 0..GAMES {
        new_game(&mut ca, &game_id(g), None).await;
    }

    let t0 = Instant::now();
    let until = t0 + Duration::from_secs(17);
    let seed = super::wall_now_ms();
    eprintln!("{TEST}: seed {seed}");
    let mut tasks = Vec::new();
    for n in 0..CALLERS {
        let clients = [ca.clone(), cb.clone()];
        tasks.push(tokio::spawn(caller(n, clients, t0, until, seed + n as u64)));
    }

    // The faults: A cut off from the database for 4 s, then B paused for 2.5 s.
    tokio::time::sleep_until((t0 + Duration::from_secs(3)).into()).await;
    cut.cut();
    let cut_window = (t0.elapsed(), t0.elapsed() + Duration::from_secs(4));
    tokio::time::sleep(Duration::from_secs(4)).await;
    cut.heal();
    tokio::time::sleep_until((t0 + Duration::from_secs(10)).into()).await;
    b.signal("STOP");
    let pause_window = (t0.elapsed(), t0.elapsed() + Duration::from_millis(2500));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    b.signal("CONT");
    let healed = t0.elapsed();

    let mut calls = Vec::new();
    for t in tasks {
        calls.extend(t.await.expect("a caller"));
    }
    // Both healthy, then a moment for anything B was given before its pause to settle.
    wait_health(&a, ServingStatus::Serving, Duration::from_secs(10)).await;
    wait_health(&b, ServingStatus::Serving, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;

    // The final reads: the games and their logs, from both replicas.
    let mut violations = Vec::new();
    let mut logs = Vec::new();
    for g in 0..GAMES {
        let id = game_id(g);
        let start = t0.elapsed();
        let on_a = super::get(&mut ca, &id).await.expect("final GetGame on A");
        let on_b = super::get(&mut cb, &id).await.expect("final GetGame on B");
        let end = t0.elapsed();
        let log_a = event_log(&mut ca, &id, on_a.version).await;
        let log_b = event_log(&mut cb, &id, on_b.version).await;
        if (on_a.version, &on_a.moves) != (on_b.version, &on_b.moves) || log_a != log_b {
            violations.push(format!(
                "{id}: the replicas differ: A at {} {:?}, B at {} {:?}",
                on_a.version, on_a.moves, on_b.version, on_b.moves
            ));
        }
        for (replica, game) in [(0, &on_a), (1, &on_b)] {
            calls.push(Call {
                caller: CALLERS,
                replica,
                game: g,
                start,
                end,
                req: Req::Get,
                outcome: Outcome::Ok {
                    version: game.version,
                    moves: game.moves.clone(),
                    undone: None,
                },
            });
        }
        logs.push((on_a.version, log_a));
    }
    let mut by_ambiguous = 0;
    for (g, (version, log)) in logs.iter().enumerate() {
        let of_game: Vec<&Call> = calls.iter().filter(|c| c.game == g).collect();
        let (bad, made) = check_game(g, &of_game, *version, log);
        violations.extend(bad);
        by_ambiguous += made;
    }

    // Refusals are definite only for what a caller may be refused here.
    let mut reasons: HashMap<String, usize> = HashMap::new();
    for c in &calls {
        if let Outcome::Ambiguous { code } = &c.outcome {
            *reasons.entry(format!("ambiguous {code:?}")).or_default() += 1;
        }
        if let Outcome::Refused { code, reason } = &c.outcome {
            *reasons.entry(format!("{code:?} {reason}")).or_default() += 1;
            let expected = matches!(
                (code, reason.as_str()),
                (Code::Aborted, "VERSION_MISMATCH")
                    | (
                        Code::FailedPrecondition,
                        "ILLEGAL_MOVE" | "NOTHING_TO_UNDO" | "GAME_OVER"
                    )
            );
            if !expected {
                violations.push(format!("an unexpected refusal: {c:?}"));
            }
        }
    }
    eprintln!("{TEST}: refusals and ambiguous outcomes {reasons:?}");

    // What was checked.
    let all = count(calls.iter());
    // Calls made wholly within a window, and calls that overlap one.
    let within = |w: (Duration, Duration), replica: usize| {
        count(calls.iter().filter(|c| {
            c.replica == replica && c.caller < CALLERS && c.start >= w.0 && c.end <= w.1
        }))
    };
    let overlapping =
        |w: (Duration, Duration), replica: usize| {
            count(calls.iter().filter(|c| {
                c.replica == replica && c.caller < CALLERS && c.start < w.1 && c.end > w.0
            }))
        };
    let (cut_b, cut_a) = (within(cut_window, 1), overlapping(cut_window, 0));
    let (pause_a, pause_b) = (within(pause_window, 0), overlapping(pause_window, 1));
    let after = (healed, Duration::MAX);
    let (after_a, after_b) = (within(after, 0), within(after, 1));
    let lengths: Vec<u64> = logs.iter().map(|(v, _)| *v).collect();
    let undos = logs
        .iter()
        .flat_map(|(_, l)| l)
        .filter(|e| matches!(e, Ev::Undone(_)))
        .count();
    eprintln!(
        "{TEST}: {all:?}; events per game {lengths:?} ({undos} undos, \
         {by_ambiguous} made by calls that got no answer); \
         during the cut of A: B {cut_b:?}, A {cut_a:?}; during the pause of B: A {pause_a:?}, \
         B {pause_b:?}; after both: A {after_a:?}, B {after_b:?}"
    );
    if !violations.is_empty() {
        for v in violations.iter().take(30) {
            eprintln!("VIOLATION {v}");
        }
        panic!(
            "{} violations of linearizability (first ones above)",
            violations.len()
        );
    }
    assert!(all.acks >= 300, "too few acknowledged changes: {all:?}");
    assert!(all.reads >= 100, "too few reads: {all:?}");
    assert!(all.refused >= 20, "too few refusals: {all:?}");
    assert!(undos >= 20, "too few undos: {undos}");
    assert!(
        cut_b.acks >= 10,
        "B acknowledged too little during A's cut: {cut_b:?}"
    );
    assert!(
        cut_a.ambiguous + cut_a.read_failures >= 3,
        "A did not notice its cut: {cut_a:?}"
    );
    assert!(
        pause_a.acks >= 10,
        "A acknowledged too little during B's pause: {pause_a:?}"
    );
    assert!(
        pause_b.ambiguous + pause_b.read_failures >= 3,
        "B's pause went unnoticed: {pause_b:?}"
    );
    assert!(
        after_a.acks >= 10 && after_b.acks >= 10,
        "too few acknowledged changes after both faults: A {after_a:?}, B {after_b:?}"
    );
    drop((a, b, cut));
}
