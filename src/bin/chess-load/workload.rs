//! The games the callers play: random legal games computed locally, so choosing moves
//! costs no server calls.

use chess_service::lifecycle::judge::is_dead;
use chess_service::rules::{Game, Position};
use chess_service::seeded_rng::Rng;

pub(crate) fn random_game(seed: u64, max_plies: usize) -> Vec<String> {
    let mut rng = Rng(seed);
    let mut game = Game::new(Position::new());
    let mut moves = Vec::new();
    while moves.len() < max_plies {
        let legal = game.legal_moves();
        // Over on the board, or dead (as the server judges it after each move).
        if legal.is_empty() || is_dead(game.position()) {
            break;
        }
        let m = legal[rng.below(legal.len())];
        moves.push(game.position().uci(m));
        if game.play(m).is_err() {
            break;
        }
    }
    moves
}

/// A game of exactly `plies` random legal moves that never ends on the board (each move
/// drawn from those that leave it going), for --rpc play-undo.
pub(crate) fn long_game(seed: u64, plies: usize) -> Vec<String> {
    let mut rng = Rng(seed);
    loop {
        let mut game = Game::new(Position::new());
        let mut moves = Vec::new();
        while moves.len() < plies {
            let legal: Vec<_> = game.legal_moves().iter().copied().collect();
            let from = rng.below(legal.len().max(1));
            let next = (0..legal.len())
                .map(|i| legal[(from + i) % legal.len()])
                .find(|&m| {
                    let mut after = game.clone();
                    after.play(m).is_ok() && !after.status().is_over() && !is_dead(after.position())
                });
            let Some(m) = next else { break };
            moves.push(game.position().uci(m));
            if game.play(m).is_err() {
                break;
            }
        }
        if moves.len() == plies {
            return moves;
        }
    }
}
