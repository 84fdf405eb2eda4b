//! Durability through the real server: a clean restart restores every game exactly, and
//! `kill -9` under load from many concurrent clients loses no acknowledged change (moves,
//! undos, draw offers, deletes).
//!
//! `SERVER_CRASH_TRIALS` sets the number of kill -9 trials (default 10, as CI runs; the
//! documented longer run is 50).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chess_service::lifecycle::judge::is_dead;
use chess_service::pb;
use chess_service::registry::wall_now_ms;
use chess_service::rules::{Game, Position, Variant, chess960};
use tonic::Code;
use tonic::transport::Channel;

use super::STORE;
use crate::common::client::{Client, history, named, new_game, play, time_control, try_get};
use crate::common::journal::{GameState, Journal, Verdict};
use crate::common::rng::Rng;
use crate::common::server::{self, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_after_sigterm_restores_every_game_exactly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut first = Server::on(STORE).start_in(dir.path(), &[]);
    let mut c = first.client().await;

    new_game(&mut c, named("mate")).await;
    for m in ["f2f3", "e7e5", "g2g4", "d8h4"] {
        play(&mut c, "mate", m).await;
    }
    new_game(
        &mut c,
        pb::NewGameRequest {
            variant: pb::Variant::Standard as i32,
            ..named("undone")
        },
    )
    .await;
    for m in ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"] {
        play(&mut c, "undone", m).await;
    }
    c.undo(pb::UndoRequest {
        game_id: "undone".into(),
        expected_ply: Some(6),
        color: 0,
        ..Default::default()
    })
    .await
    .expect("undo");
    new_game(
        &mut c,
        pb::NewGameRequest {
            variant: pb::Variant::Standard as i32,
            ..named("threefold")
        },
    )
    .await;
    for m in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"] {
        play(&mut c, "threefold", m).await;
    }
    new_game(
        &mut c,
        pb::NewGameRequest {
            fen: "8/8/4k3/8/8/3K4/8/R7 w - - 97 80".into(),
            variant: pb::Variant::Standard as i32,
            ..named("fifty")
        },
    )
    .await;
    for m in ["Ra2", "Kd6"] {
        play(&mut c, "fifty", m).await;
    }
    new_game(
        &mut c,
        pb::NewGameRequest {
            variant: pb::Variant::Chess960 as i32,
            chess960_position: Some(0),
            ..named("c960")
        },
    )
    .await;
    for m in [
        "c2c3", "c7c6", "d1e3", "d8e6", "e1d3", "e8d6", "c1c2", "c8c7", "g1f1",
    ] {
        play(&mut c, "c960", m).await;
    }
    new_game(&mut c, named("fresh")).await;
    let lifecycle_ids = lifecycle_games(&mut c).await;

    let mut ids = vec!["mate", "undone", "threefold", "fifty", "c960", "fresh"];
    ids.extend(lifecycle_ids.iter().copied());
    let mut before = BTreeMap::new();
    let mut histories = BTreeMap::new();
    for &id in &ids {
        before.insert(id, try_get(&mut c, id).await.expect("game exists"));
        histories.insert(id, history(&mut c, id).await);
    }
    assert_eq!(before["mate"].status, pb::GameStatus::Checkmate as i32);
    assert!(before["threefold"].can_claim_threefold);
    assert!(before["fifty"].can_claim_fifty_moves);
    assert_eq!(before["undone"].ply, 5);
    assert_eq!(before["flagged"].status, pb::GameStatus::OutOfTime as i32);
    assert_eq!(
        before["timed-offer"].draw_offered_by,
        pb::Color::White as i32
    );
    assert_eq!(
        before["flag-while-down"].clock.as_ref().map(|c| c.running),
        Some(pb::Color::Black as i32)
    );
    drop(c);

    let (status, took) = first
        .terminate(Duration::from_secs(20))
        .expect("exits after SIGTERM");
    assert!(status.success(), "clean exit: {status:?}");
    eprintln!("SIGTERM to exit: {took:?}");

    let second = Server::on(STORE).start_in(dir.path(), &[]);
    let mut c = second.client().await;
    // The game whose flag was due to fall while the server was down: the first access
    // records it at the exact flag time the clocks said before the restart.
    let down = before["flag-while-down"].clock.expect("timed");
    let flag_time = down.as_of_unix_ms + down.black_remaining_ms;
    let wait = flag_time.saturating_sub(wall_now_ms()) + 50;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let flagged = try_get(&mut c, "flag-while-down")
        .await
        .expect("game survives");
    assert_eq!(flagged.status, pb::GameStatus::OutOfTime as i32);
    assert_eq!(
        flagged.clock.as_ref().map(|c| c.as_of_unix_ms),
        Some(flag_time),
        "the flag fell at the time the clocks before the restart said"
    );
    for &id in &ids {
        if id == "flag-while-down" {
            continue;
        }
        let after = try_get(&mut c, id)
            .await
            .expect("game survives the restart");
        assert_same_game(id, &before[id], &after);
        assert_eq!(
            history(&mut c, id).await,
            histories[id],
            "game {id}: its event history (every version) differs after the restart"
        );
    }
    // And the restored games keep going.
    let g = play(&mut c, "threefold", "Ng8").await;
    assert_eq!(g.ply, 8);
    let g = c
        .respond_to_draw(pb::RespondToDrawRequest {
            game_id: "timed-offer".into(),
            color: pb::Color::Black as i32,
            accept: true,
            ..Default::default()
        })
        .await
        .expect("the pending offer survived the restart")
        .into_inner()
        .game
        .expect("a game");
    assert_eq!(g.status, pb::GameStatus::DrawAgreement as i32);
}

/// Games that exercise the lifecycle before a restart: clocks (running, restored by an
/// undo, flagged, about to flag), a pending and a lapsed offer, and each decided ending.
async fn lifecycle_games(c: &mut Client) -> Vec<&'static str> {
    let tc = time_control;
    let timed = |id: &str, t| pb::NewGameRequest {
        time_control: t,
        ..named(id)
    };
    let color = |c: pb::Color| c as i32;
    // Timed, running, with a pending offer by white.
    c.new_game(timed("timed-offer", tc(600_000, 2000)))
        .await
        .expect("new");
    for m in ["e4", "e5", "Nf3"] {
        play(c, "timed-offer", m).await;
    }
    c.offer_draw(pb::OfferDrawRequest {
        game_id: "timed-offer".into(),
        color: color(pb::Color::White),
        ..Default::default()
    })
    .await
    .expect("offer");
    // Timed, with an undo (clocks restored) and a lapsed offer.
    c.new_game(timed("timed-undo", tc(600_000, 0)))
        .await
        .expect("new");
    for m in ["d4", "d5"] {
        play(c, "timed-undo", m).await;
    }
    c.offer_draw(pb::OfferDrawRequest {
        game_id: "timed-undo".into(),
        color: color(pb::Color::Black),
        ..Default::default()
    })
    .await
    .expect("offer");
    play(c, "timed-undo", "c4").await; // lapses black's offer
    c.undo(pb::UndoRequest {
        game_id: "timed-undo".into(),
        ..Default::default()
    })
    .await
    .expect("undo");
    // Flagged before the restart (by the timer), and one to flag while the server is down.
    c.new_game(timed("flagged", tc(200, 0))).await.expect("new");
    play(c, "flagged", "e4").await;
    c.new_game(timed("flag-while-down", tc(1500, 0)))
        .await
        .expect("new");
    play(c, "flag-while-down", "e4").await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    // Decided endings.
    new_game(
        c,
        pb::NewGameRequest {
            variant: pb::Variant::Standard as i32,
            ..named("resigned")
        },
    )
    .await;
    play(c, "resigned", "e4").await;
    c.resign(pb::ResignRequest {
        game_id: "resigned".into(),
        color: color(pb::Color::White),
        ..Default::default()
    })
    .await
    .expect("resign");
    new_game(
        c,
        pb::NewGameRequest {
            variant: pb::Variant::Standard as i32,
            ..named("agreed")
        },
    )
    .await;
    play(c, "agreed", "e4").await;
    c.offer_draw(pb::OfferDrawRequest {
        game_id: "agreed".into(),
        color: color(pb::Color::Black),
        ..Default::default()
    })
    .await
    .expect("offer");
    c.respond_to_draw(pb::RespondToDrawRequest {
        game_id: "agreed".into(),
        color: color(pb::Color::White),
        accept: true,
        ..Default::default()
    })
    .await
    .expect("accept");
    new_game(
        c,
        pb::NewGameRequest {
            variant: pb::Variant::Standard as i32,
            ..named("claimed")
        },
    )
    .await;
    for m in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"] {
        play(c, "claimed", m).await;
    }
    c.claim_draw(pb::ClaimDrawRequest {
        game_id: "claimed".into(),
        color: color(pb::Color::Black),
        r#move: "Ng8".into(),
        expected_ply: Some(7),
        ..Default::default()
    })
    .await
    .expect("claim");
    vec![
        "timed-offer",
        "timed-undo",
        "flagged",
        "flag-while-down",
        "resigned",
        "agreed",
        "claimed",
    ]
}

/// A game read after a restart equals the one read before, except that a running clock
/// has gone down by exactly the time that passed between the two readings.
fn assert_same_game(id: &str, before: &pb::Game, after: &pb::Game) {
    let (mut b, mut a) = (before.clone(), after.clone());
    if let (Some(cb), Some(ca)) = (b.clock.take(), a.clock.take()) {
        assert_eq!(cb.time_control, ca.time_control, "game {id}");
        assert_eq!(cb.running, ca.running, "game {id}: whose clock runs");
        let passed = ca.as_of_unix_ms.saturating_sub(cb.as_of_unix_ms);
        let (run_b, run_a, still_b, still_a) = if cb.running == pb::Color::White as i32 {
            (
                cb.white_remaining_ms,
                ca.white_remaining_ms,
                cb.black_remaining_ms,
                ca.black_remaining_ms,
            )
        } else {
            (
                cb.black_remaining_ms,
                ca.black_remaining_ms,
                cb.white_remaining_ms,
                ca.white_remaining_ms,
            )
        };
        assert_eq!(still_b, still_a, "game {id}: the clock that does not run");
        if cb.running == pb::Color::Unspecified as i32 {
            assert_eq!(cb, ca, "game {id}: stopped clocks");
            eprintln!("game {id}: stopped clocks exactly as before the restart");
        } else {
            assert_eq!(
                run_a + passed,
                run_b,
                "game {id}: the running clock lost exactly the {passed} ms that passed"
            );
            eprintln!(
                "game {id}: clocks after the restart as before, less the {passed} ms that passed on the running one"
            );
        }
    }
    assert_eq!(a, b, "game {id} differs after the restart");
}

/// A client's games: the mirror of what was acknowledged, to choose legal moves locally.
struct ClientGames {
    games: Vec<(String, Game)>,
}

/// Whether a failed call definitely did not apply its change (the server answered), as
/// opposed to an unknown outcome (the connection died with the server).
fn definitive(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        Code::InvalidArgument
            | Code::FailedPrecondition
            | Code::Aborted
            | Code::AlreadyExists
            | Code::NotFound
    )
}

/// One client: creates its own games and plays, undoes, deletes and creates more until the
/// server dies, journaling BEGIN before each change and ACK/FAIL after its answer.
async fn client_loop(
    url: String,
    client_id: usize,
    trial: usize,
    seed: u64,
    journal: Arc<Mutex<Journal>>,
    acks: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
) {
    let Ok(channel) = Channel::from_shared(url).expect("url").connect().await else {
        return;
    };
    let mut client = Client::new(channel);
    let mut rng = Rng(seed | 1);
    let mut mine = ClientGames { games: Vec::new() };
    let log = |line: String| {
        journal
            .lock()
            .expect("journal lock")
            .apply_line(&line)
            .expect("well-formed journal")
    };
    let mut created = 0;
    while !stop.load(Ordering::Relaxed) {
        let roll = rng.below(100);
        if mine.games.is_empty() || (roll < 4 && mine.games.len() < 4) {
            let id = format!("t{trial}-c{client_id}-g{created}");
            created += 1;
            let (fen, variant, n, start) = match rng.below(3) {
                0 => (String::new(), pb::Variant::Standard, None, Position::new()),
                1 => {
                    let n = rng.below(960) as u32;
                    let start = chess960::start_position(n, Variant::Chess960).expect("0..960");
                    (String::new(), pb::Variant::Chess960, Some(n), start)
                }
                _ => {
                    let fen =
                        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
                    (
                        fen.to_string(),
                        pb::Variant::Standard,
                        None,
                        Position::from_fen(fen, Variant::Standard).expect("fen"),
                    )
                }
            };
            log(format!("BEGIN {id} NEW {}", start.to_fen()));
            // Every third game is timed (an hour a side: no flag falls), so the records
            // under test include the clock section.
            let time_control = (created % 3 == 0).then_some(pb::TimeControl {
                initial_ms: 3_600_000,
                increment_ms: 1000,
                ..Default::default()
            });
            let req = pb::NewGameRequest {
                game_id: id.clone(),
                fen,
                variant: variant as i32,
                chess960_position: n,
                time_control,
                ..Default::default()
            };
            match client.new_game(req).await {
                Ok(_) => {
                    log(format!("ACK {id}"));
                    acks.fetch_add(1, Ordering::Relaxed);
                    mine.games.push((id, Game::new(start)));
                }
                Err(s) if definitive(&s) => log(format!("FAIL {id}")),
                Err(_) => return,
            }
            continue;
        }
        let k = rng.below(mine.games.len());
        let (id, game) = &mut mine.games[k];
        let ply = game.ply() as u32;
        // Over on the board, or dead (as the server judges it after each move).
        let over = game.status().is_over() || is_dead(game.position());
        let undo = ply > 0 && (roll < 12 || over);
        if !undo && roll >= 96 && !over {
            // A draw offer and its refusal: two changes that are events without a move
            // (answered before the next move, so no offer lapses).
            let color = if game.position().turn() == chess_service::rules::Color::White {
                pb::Color::White
            } else {
                pb::Color::Black
            };
            log(format!("BEGIN {id} EVENT offer"));
            match client
                .offer_draw(pb::OfferDrawRequest {
                    game_id: id.clone(),
                    color: color as i32,
                    ..Default::default()
                })
                .await
            {
                Ok(_) => {
                    log(format!("ACK {id}"));
                    acks.fetch_add(1, Ordering::Relaxed);
                }
                // A side offers at most once per move of its own: this side offered
                // already, and has not moved since.
                Err(s)
                    if definitive(&s) && server::error_info(&s).reason == "DRAW_OFFER_TOO_SOON" =>
                {
                    log(format!("FAIL {id}"));
                    continue;
                }
                Err(s) if definitive(&s) => panic!("offer on {id} refused: {s:?}"),
                Err(_) => return,
            }
            let other = if color == pb::Color::White {
                pb::Color::Black
            } else {
                pb::Color::White
            };
            log(format!("BEGIN {id} EVENT decline"));
            match client
                .respond_to_draw(pb::RespondToDrawRequest {
                    game_id: id.clone(),
                    color: other as i32,
                    accept: false,
                    ..Default::default()
                })
                .await
            {
                Ok(_) => {
                    log(format!("ACK {id}"));
                    acks.fetch_add(1, Ordering::Relaxed);
                }
                Err(s) if definitive(&s) => panic!("decline on {id} refused: {s:?}"),
                Err(_) => return,
            }
            continue;
        }
        if !undo && (94..96).contains(&roll) {
            // A delete: acknowledged, the game must be gone after any restart.
            log(format!("BEGIN {id} DELETE"));
            match client
                .delete_game(pb::DeleteGameRequest {
                    game_id: id.clone(),
                    expected_version: None,
                    allow_missing: false,
                })
                .await
            {
                Ok(_) => {
                    log(format!("ACK {id}"));
                    acks.fetch_add(1, Ordering::Relaxed);
                    mine.games.swap_remove(k);
                }
                Err(s) if definitive(&s) => panic!("delete of {id} refused: {s:?}"),
                Err(_) => return,
            }
            continue;
        }
        if undo {
            log(format!("BEGIN {id} UNDO"));
            match client
                .undo(pb::UndoRequest {
                    game_id: id.clone(),
                    expected_ply: Some(ply),
                    color: 0,
                    ..Default::default()
                })
                .await
            {
                Ok(_) => {
                    log(format!("ACK {id}"));
                    acks.fetch_add(1, Ordering::Relaxed);
                    game.undo();
                }
                Err(s) if definitive(&s) => panic!("undo of {id} refused: {s:?}"),
                Err(_) => return,
            }
        } else {
            let legal = game.legal_moves();
            // Over on the board, or dead (as the server judges it after each move).
            if legal.is_empty() || is_dead(game.position()) {
                continue;
            }
            let m = legal[rng.below(legal.len())];
            let uci = game.position().uci(m);
            log(format!("BEGIN {id} PLAY {uci}"));
            let req = pb::PlayRequest {
                game_id: id.clone(),
                r#move: uci.clone(),
                expected_ply: Some(ply),
                color: 0,
                ..Default::default()
            };
            match client.play(req).await {
                Ok(_) => {
                    log(format!("ACK {id}"));
                    acks.fetch_add(1, Ordering::Relaxed);
                    game.play(m).expect("legal locally");
                }
                Err(s) if definitive(&s) => panic!("play {uci} on {id} refused: {s:?}"),
                Err(_) => return,
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_under_load_loses_no_acknowledged_change() {
    let trials: usize = std::env::var("SERVER_CRASH_TRIALS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(10);
    const CLIENTS: usize = 24;
    let dir = tempfile::tempdir().expect("temp dir");
    let seed0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_nanos() as u64;
    eprintln!("seed {seed0}");
    let mut rng = Rng(seed0 | 1);
    // Games verified in earlier trials, which every later restart must keep as they were.
    let mut verified: BTreeMap<String, Option<GameState>> = BTreeMap::new();
    let (mut total_acks, mut in_flight_applied, mut in_flight_lost) = (0u64, 0usize, 0usize);
    for trial in 0..trials {
        let mut server = Server::on(STORE).start_in(dir.path(), &[]);
        let journal = Arc::new(Mutex::new(Journal::new()));
        let acks = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        for c in 0..CLIENTS {
            tasks.push(tokio::spawn(client_loop(
                server.url(),
                c,
                trial,
                rng.next_u64(),
                journal.clone(),
                acks.clone(),
                stop.clone(),
            )));
        }
        // Kill at a random moment once the load is under way.
        let min_acks = 50 + rng.below(400) as u64;
        let deadline = Instant::now() + Duration::from_secs(30);
        while acks.load(Ordering::Relaxed) < min_acks && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.below(300) as u64)).await;
        server.kill9();
        stop.store(true, Ordering::Relaxed);
        for t in tasks {
            t.await.expect("client task");
        }
        let journal = Arc::try_unwrap(journal)
            .expect("clients done")
            .into_inner()
            .expect("journal");
        assert!(
            journal.acks() >= min_acks.min(1),
            "trial {trial}: the load ran before the kill"
        );

        let server = Server::on(STORE).start_in(dir.path(), &[]);
        let mut c = server.client().await;
        let stored_of = |state: Result<pb::Game, tonic::Status>, id: &str| -> Option<GameState> {
            match state {
                Ok(g) => Some(GameState {
                    start_fen: g.initial_fen,
                    moves: g.moves,
                    version: g.version,
                }),
                Err(s) if s.code() == Code::NotFound => None,
                Err(s) => panic!("trial {trial}: game {id} unreadable after the crash: {s:?}"),
            }
        };
        for id in journal.games().map(str::to_string).collect::<Vec<_>>() {
            let stored = stored_of(try_get(&mut c, &id).await, &id);
            match journal.check(&id, stored.as_ref()) {
                Ok(Verdict::Acknowledged) => {}
                Ok(Verdict::InFlightApplied) => in_flight_applied += 1,
                Err(v) => panic!("trial {trial}: {v}"),
            }
            verified.insert(id, stored);
        }
        in_flight_lost += journal.in_flight();
        for (id, state) in &verified {
            let stored = stored_of(try_get(&mut c, id).await, id);
            assert_eq!(
                &stored, state,
                "trial {trial}: game {id} changed after a later restart"
            );
        }
        total_acks += journal.acks();
        eprintln!(
            "trial {trial}: {} acknowledged changes, {} games, all as journaled",
            journal.acks(),
            verified.len()
        );
        drop(server);
    }
    let absent = verified.values().filter(|state| state.is_none()).count();
    eprintln!(
        "{trials} kill -9 trials: {total_acks} acknowledged changes over {} games ({absent} \
         deleted), none lost; of the changes in flight at a kill {in_flight_applied} were \
         applied, the others not",
        verified.len()
    );
    // About 2% of the changes are deletes: a long run without one tested nothing of them.
    assert!(
        total_acks < 1000 || absent > 0,
        "no game was deleted in {total_acks} changes"
    );
    let _ = in_flight_lost;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_record_is_data_loss_for_that_game_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    {
        let mut server = Server::on(STORE).start_in(dir.path(), &[]);
        let mut c = server.client().await;
        for id in ["healthy", "damaged"] {
            new_game(
                &mut c,
                pb::NewGameRequest {
                    variant: pb::Variant::Standard as i32,
                    ..named(id)
                },
            )
            .await;
            for m in ["e4", "e5", "Nf3"] {
                play(&mut c, id, m).await;
            }
        }
        drop(c);
        let (status, _) = server.terminate(Duration::from_secs(20)).expect("exits");
        assert!(status.success());
    }
    // Flip one byte in the middle of the stored record, as a bad disk would.
    let database = (STORE == server::TestStore::Postgres)
        .then(|| crate::common::postgres::database_for(dir.path()))
        .flatten();
    match database {
        None => {
            let db = sled::open(dir.path()).expect("the data directory opens with sled");
            let games = db.open_tree("games").expect("games tree");
            let mut bytes = games
                .get("damaged")
                .expect("readable")
                .expect("record present")
                .to_vec();
            let i = bytes.len() / 2;
            bytes[i] ^= 0x5A;
            games.insert("damaged", bytes).expect("write");
            db.flush().expect("flush");
        }
        Some(url) => {
            let (db, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .expect("connects to the test database");
            tokio::spawn(connection);
            let changed = db
                .execute(
                    "UPDATE chess_games SET record = set_byte(record, length(record) / 2, \
                     get_byte(record, length(record) / 2) # 90) WHERE id = 'damaged'",
                    &[],
                )
                .await
                .expect("the record is rewritten");
            assert_eq!(changed, 1, "the damaged game's row exists");
        }
    }
    let server = Server::on(STORE).start_in(dir.path(), &[]);
    let mut c = server.client().await;
    let err = try_get(&mut c, "damaged")
        .await
        .expect_err("damaged record");
    assert_eq!(err.code(), Code::DataLoss, "{err:?}");
    assert_eq!(server::error_info(&err).reason, "DATA_LOSS");
    assert!(
        err.message().contains("damaged"),
        "the message names the game: {}",
        err.message()
    );
    let err = c
        .play(pb::PlayRequest {
            game_id: "damaged".into(),
            r#move: "Nc6".into(),
            expected_ply: None,
            color: 0,
            ..Default::default()
        })
        .await
        .expect_err("no play on a damaged game");
    assert_eq!(err.code(), Code::DataLoss);
    // The other game serves and plays on.
    assert_eq!(
        try_get(&mut c, "healthy").await.expect("healthy game").ply,
        3
    );
    assert_eq!(play(&mut c, "healthy", "Nc6").await.ply, 4);
    assert!(
        server.log().iter().any(|l| l.contains("damaged")),
        "the damage is logged with the game id"
    );
}
