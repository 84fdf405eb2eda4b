//! The store below the service: the record codec (moves and log forms, and records written
//! by earlier builds), `SledStore`, and `kill -9` of a process writing into it.
//!
//! The crash test's child is this same test binary run again, asked for the ignored test
//! `crash_child::run_child` alone (see `crash_child`): no binary of the product is a
//! test's helper.

mod common;

#[path = "store/codec.rs"]
mod codec;
#[path = "store/compat.rs"]
mod compat;
#[path = "store/crash.rs"]
mod crash;
#[path = "store/crash_child.rs"]
mod crash_child;
#[path = "store/damaged_file.rs"]
mod damaged_file;
#[path = "store/journal.rs"]
mod journal;
#[path = "store/layers.rs"]
mod layers;
#[path = "store/log.rs"]
mod log;
#[path = "store/sled.rs"]
mod sled;
#[path = "store/variant_records.rs"]
mod variant_records;
