//! The gRPC service end to end, against the real `chess-server` binary: every call and
//! error, the game lifecycle (endings, offers, clocks), WatchGame, and security (tokens,
//! roles, TLS, quotas, clean logs).

mod common;

#[path = "service/calls.rs"]
mod calls;
#[path = "service/lifecycle.rs"]
mod lifecycle;
#[path = "service/security.rs"]
mod security;
#[path = "service/watch.rs"]
mod watch;
