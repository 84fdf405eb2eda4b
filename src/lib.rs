//! An authoritative chess rules service: the rules engine ([`rules`]), the game store
//! ([`store`]) and, on top of them, the gRPC service.

pub mod rules;
pub mod store;
