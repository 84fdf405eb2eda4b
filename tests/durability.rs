//! Durability of the real server: a clean restart restores every game exactly, `kill -9`
//! under load loses no acknowledged change, and a damaged record is that game's loss alone.

mod common;

/// The store the servers this crate starts keep their games in (see `common::server`).
const STORE_UNDER_TEST: common::server::TestStore = common::server::TestStore::Sled;

#[path = "durability/server_durability.rs"]
mod server_durability;
