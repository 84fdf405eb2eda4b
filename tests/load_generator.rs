//! The load generator (`chess-load`) against the real server.

mod common;

/// The store the servers this crate starts keep their games in (see `common::server`).
const STORE_UNDER_TEST: common::server::TestStore = common::server::TestStore::Sled;

#[path = "load_generator/chess_load.rs"]
mod chess_load;
