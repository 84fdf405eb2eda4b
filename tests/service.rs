//! The gRPC service end to end, against the real `chess-server` binary: every call and
//! error, the game lifecycle (endings, offers, clocks), WatchGame, security (tokens,
//! roles, TLS, quotas, clean logs), and what a platform needs (opening names, clock start,
//! AddTime).

mod common;

#[path = "service/calls.rs"]
mod calls;
#[path = "service/lifecycle.rs"]
mod lifecycle;
#[path = "service/platform.rs"]
mod platform;
#[path = "service/security.rs"]
mod security;
#[path = "service/watch.rs"]
mod watch;
