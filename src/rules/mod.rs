//! The rules of chess as a pure library: no I/O, no async, no gRPC. The service, the
//! store's replay, the tests and the benchmarks all sit on top of it.
//!
//! Text becomes checked types at the edge ([`Position::from_fen`], [`Position::parse_uci`],
//! [`Position::parse_san`]); a [`Move`] in hand is legal in the position it came from.

pub mod attacks;
pub mod bitboard;
mod by_color;
pub mod chess960;
pub mod fen;
pub mod game;
pub mod illegal;
pub mod movegen;
pub mod moves;
pub mod perft;
pub mod pgn;
pub mod piece;
pub mod position;
pub mod san;
pub mod square;
pub mod uci;
mod zobrist;

pub use bitboard::Bitboard;
pub use by_color::ByColor;
pub use chess960::{CHESS960_POSITIONS, Chess960Error};
pub use fen::FenError;
pub use game::{Game, PlayError, Status};
pub use illegal::{CastleSide, IllegalMove};
pub use moves::{Move, MoveKind, MoveList};
pub use perft::{PerftResult, PerftStopped, perft, perft_divide, perft_parallel};
pub use piece::{Piece, Role};
pub use position::{Position, Undo, Variant};
pub use san::{MoveTextError, SanError};
pub use square::{Color, File, Rank, Square};
pub use uci::UciError;
