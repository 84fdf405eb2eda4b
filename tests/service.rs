//! The gRPC service end to end, against the real `chess-server` binary: every call and
//! error, the game lifecycle (endings, offers, clocks) and WatchGame.

mod common;

#[path = "service/calls.rs"]
mod calls;
#[path = "service/lifecycle.rs"]
mod lifecycle;
#[path = "service/watch.rs"]
mod watch;
