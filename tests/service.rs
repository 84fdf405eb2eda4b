//! The gRPC service end to end, against the real `chess-server` binary: every call and
//! error, the game lifecycle (endings, offers, clocks), WatchGame, and security (tokens,
//! roles, TLS, quotas, clean logs), and operations (connections, load shedding, perft's
//! time limit, metrics).

mod common;

#[path = "service/calls.rs"]
mod calls;
#[path = "service/lifecycle.rs"]
mod lifecycle;
#[path = "service/operations.rs"]
mod operations;
#[path = "service/security.rs"]
mod security;
#[path = "service/watch.rs"]
mod watch;
