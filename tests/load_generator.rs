//! The load generator (`chess-load`) against the real server.

mod common;

#[path = "load_generator/chess_load.rs"]
mod chess_load;
