//! The gRPC service end to end, against the real `chess-server` binary: every call and
//! error, the game lifecycle (endings, offers, clocks), WatchGame, and security (tokens,
//! roles, TLS, quotas, clean logs), and the limits that keep a game from being jammed.

mod common;

#[path = "service/calls.rs"]
mod calls;
#[path = "service/lifecycle.rs"]
mod lifecycle;
#[path = "service/limits.rs"]
mod limits;
#[path = "service/security.rs"]
mod security;
#[path = "service/watch.rs"]
mod watch;
