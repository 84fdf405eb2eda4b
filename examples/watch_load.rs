//! Load on the spectator path: one game, `--spectators` WatchGame streams on it, and
//! `--events` changes (a move, then its undo, again and again) played one after another;
//! each change is answered only once durable and then published to every spectator. Ends
//! when every spectator has received every event. Prints `ok=<events>` and the rate, the
//! form `benches/server_instructions_ab.sh` reads.
//!
//! ```sh
//! cargo run --release --example watch_load -- http://127.0.0.1:50051 16 2000
//! ```

use std::time::Instant;

use chess_service::pb;
use chess_service::pb::chess_service_client::ChessServiceClient;

type Client = ChessServiceClient<tonic::transport::Channel>;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let target = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:50051".into());
    let spectators: usize = args.next().map_or(Ok(16), |a| a.parse())?;
    let events: u64 = args.next().map_or(Ok(2000), |a| a.parse())?;
    let mut client: Client = ChessServiceClient::connect(target).await?;
    let game = client
        .new_game(pb::NewGameRequest::default())
        .await?
        .into_inner()
        .game
        .ok_or("NewGame answered no game")?;
    let start = Instant::now();
    let mut watchers = Vec::new();
    for _ in 0..spectators {
        let mut watcher = client.clone();
        let id = game.game_id.clone();
        let mut stream = watcher
            .watch_game(pb::WatchGameRequest {
                game_id: id,
                from_version: 1,
            })
            .await?
            .into_inner();
        watchers.push(tokio::spawn(async move {
            let mut seen = 0u64;
            while seen < events {
                match stream.message().await {
                    Ok(Some(_)) => seen += 1,
                    _ => break,
                }
            }
            seen
        }));
    }
    for i in 0..events {
        if i % 2 == 0 {
            client
                .play(pb::PlayRequest {
                    game_id: game.game_id.clone(),
                    r#move: "e2e4".into(),
                    expected_ply: Some(0),
                    color: 0,
                    ..Default::default()
                })
                .await?;
        } else {
            client
                .undo(pb::UndoRequest {
                    game_id: game.game_id.clone(),
                    expected_ply: Some(1),
                    color: 0,
                    ..Default::default()
                })
                .await?;
        }
    }
    let mut received = 0;
    for w in watchers {
        received += w.await?;
    }
    let seconds = start.elapsed().as_secs_f64();
    if received != events * spectators as u64 {
        return Err(format!(
            "spectators received {received} events, not {}",
            events * spectators as u64
        )
        .into());
    }
    println!(
        "rpc=watch spectators={spectators} ok={events} received={received} seconds={seconds:.2} throughput={:.0}/s",
        events as f64 / seconds
    );
    Ok(())
}
