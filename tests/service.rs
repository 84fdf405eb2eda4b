//! The gRPC service end to end, against the real `chess-server` binary: every call and
//! error, the game lifecycle (endings, offers, clocks), WatchGame, security (tokens, roles,
//! TLS, quotas, clean logs), tenants (another tenant's game answers as a missing one), what
//! a platform needs (opening names, clock start, AddTime), the limits that keep a game from
//! being jammed, and operations (connections, load shedding, perft's time limit, metrics,
//! traces), the documentation's error and configuration tables against the code, and what
//! monitoring relies on (counters from 0, game counts, the dashboard and alerts of
//! deploy/monitoring/).

mod common;

/// The suites the `replicas` crate runs again on PostgreSQL, here on sled: every server
/// their tests start is `Server::on(STORE)`.
#[path = "."]
mod on_sled {
    /// The store the servers of these suites keep their games in.
    const STORE: crate::common::server::TestStore = crate::common::server::TestStore::Sled;

    #[path = "service/calls.rs"]
    mod calls;
    #[path = "service/catalog.rs"]
    mod catalog;
    #[path = "service/import.rs"]
    mod import;
    #[path = "service/lifecycle.rs"]
    mod lifecycle;
    #[path = "service/tenants.rs"]
    mod tenants;
    #[path = "service/variant_games.rs"]
    mod variant_games;
    #[path = "service/watch.rs"]
    mod watch;
}

#[path = "service/config_docs.rs"]
mod config_docs;
#[path = "service/contract.rs"]
mod contract;
#[path = "service/dead_positions.rs"]
mod dead_positions;
#[path = "service/enum_fields.rs"]
mod enum_fields;
#[path = "service/grpc_web.rs"]
mod grpc_web;
#[path = "service/hostile.rs"]
mod hostile;
#[path = "service/limits.rs"]
mod limits;
#[path = "service/monitoring.rs"]
mod monitoring;
#[path = "service/operations.rs"]
mod operations;
#[path = "service/platform.rs"]
mod platform;
#[path = "service/security.rs"]
mod security;
#[path = "service/unread_answers.rs"]
mod unread_answers;
#[path = "service/variants.rs"]
mod variants;
