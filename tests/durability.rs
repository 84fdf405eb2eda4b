//! Durability of the real server: a clean restart restores every game exactly, `kill -9`
//! under load loses no acknowledged change, a damaged record is that game's loss alone, and
//! a failed sync or a full disk stops the server (fail-stop) without losing or serving
//! anything it should not.

mod common;

/// The suite the `replicas` crate runs again on PostgreSQL, here on sled: every server its
/// tests start is `Server::on(STORE)`.
#[path = "."]
mod on_sled {
    /// The store the servers of this suite keep their games in.
    const STORE: crate::common::server::TestStore = crate::common::server::TestStore::Sled;

    #[path = "durability/server_durability.rs"]
    mod server_durability;
}

#[path = "durability/faults.rs"]
mod faults;

#[path = "durability/rollback.rs"]
mod rollback;

#[path = "durability/loop_device.rs"]
mod loop_device;
