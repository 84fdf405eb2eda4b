//! The rules of chess as a pure library: no I/O, no async, no gRPC. The service, the
//! store's replay, the tests and the benchmarks all sit on top of it.
//!
//! Text becomes checked types at the edge ([`Position::from_fen`], [`Position::parse_uci`],
//! [`Position::parse_san`]); a [`Move`] in hand is legal in the position it came from.
//!
//! ```
//! use chess_service::rules::{Game, Position, Status, Variant, perft};
//!
//! // A position from FEN, its legal moves, a move read as SAN and written as UCI.
//! let pos = Position::from_fen(
//!     "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
//!     Variant::Standard,
//! )?;
//! assert_eq!(pos.legal_moves().len(), 29);
//! let m = pos.parse_san("Nf3")?;
//! assert_eq!(pos.uci(m), "g1f3");
//! assert_eq!(pos.after(m).to_fen(), "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2");
//!
//! // A game keeps the history: the fool's mate, then an undo.
//! let mut game = Game::new(Position::new());
//! for text in ["f3", "e5", "g4", "Qh4#"] {
//!     game.play_text(text)?;
//! }
//! assert!(game.status().is_over());
//! assert_eq!(game.status().result(), "0-1");
//! game.undo();
//! assert_eq!(game.status(), Status::InProgress);
//!
//! // Perft: the number of move sequences to a depth (the start position: 20, 400, 8,902).
//! assert_eq!(perft(&Position::new(), 3), 8_902);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod attacks;
pub mod bitboard;
mod by_color;
pub mod chess960;
pub mod clip;
pub mod fen;
pub mod game;
pub mod game_position;
pub mod illegal;
mod leaf;
pub mod movegen;
pub mod moves;
pub mod perft;
pub mod pgn;
pub mod pgn_read;
pub mod piece;
pub mod position;
pub mod san;
pub mod square;
pub mod uci;
pub mod variant;
pub mod winnability;
mod zobrist;

pub use bitboard::Bitboard;
pub use by_color::ByColor;
pub use chess960::{CHESS960_POSITIONS, Chess960Error};
pub use fen::FenError;
pub use game::{Game, PlayError, Status};
pub use game_position::{GamePosition, GameRules};
pub use illegal::{CastleSide, IllegalMove};
pub use moves::{Move, MoveKind, MoveList};
pub use perft::{PerftResult, PerftRoot, PerftStopped, perft, perft_divide, perft_parallel};
pub use pgn_read::{PgnError, PgnGame, PgnResult, read_pgn};
pub use piece::{Piece, Role};
pub use position::{Position, Undo, Variant};
pub use san::{MoveTextError, SanError};
pub use square::{Color, File, Rank, Square};
pub use uci::UciError;
