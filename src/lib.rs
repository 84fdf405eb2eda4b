//! An authoritative chess rules service: the rules engine ([`rules`]), the game
//! lifecycle on top of it ([`lifecycle`]: turns, offers, endings, clocks, the event log),
//! the game store ([`store`]), the registry of live games ([`registry`]) and, on top of
//! them, the gRPC service ([`service`], [`server`]) with its edge beside it ([`edge`]: load
//! shedding, auth, metrics, the layers every call passes). Each layer uses only the ones
//! below.
#![warn(missing_docs)]

pub mod lifecycle;
pub mod rules;
pub mod store;

/// The generated `chess.v1` protobuf messages and the typed client (the server, which
/// answers LegalMoves with pre-encoded bytes, is `service::grpc`).
pub mod pb {
    #![allow(missing_docs)]
    // Generated oneofs hold whole messages by value (a `GameEvent` beside a small `Resync`).
    #![allow(clippy::large_enum_variant)]
    tonic::include_proto!("chess.v1");

    /// The encoded descriptor set of `chess.v1`, served by server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("chess_descriptor");
}

pub mod registry;
pub mod seeded_rng;
pub mod server;
pub mod service;
