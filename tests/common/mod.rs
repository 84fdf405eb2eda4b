//! The one test harness every integration-test crate shares (`mod common;` in each crate
//! root). Each crate uses part of it.
//!
//! - [`server`]: the real `chess-server` binary on an ephemeral port, and error-detail checks;
//! - [`catalog`]: the listing and deleting contract every `GameStore` keeps;
//! - [`client`]: the gRPC client helpers (new game, play, undo, get, watch);
//! - [`rng`]: a seeded generator for reproducible random games;
//! - [`epd`]: the EPD perft suites of `tests/data/`;
//! - [`grpc_web`]: gRPC-Web calls made by hand, over HTTP/1.1 and HTTP/2;
//! - [`damage`]: the damage a stored record must not survive;
//! - [`corpus_games`]: the reference corpus as whole games;
//! - [`journal`]: the crash-test journal and its check of a reopened store;
//! - [`postgres`]: a throwaway PostgreSQL cluster for the replica tests;
//! - [`iptables`]: a real network cut (DROP rules) of one replica, for the replica tests;
//! - [`metrics`]: a server's `/metrics`, scraped and parsed;
//! - [`variant_corpus`]: python-chess's corpus of the lichess variants.
#![allow(dead_code)]

pub mod blackhole;
pub mod catalog;
pub mod client;
pub mod corpus_games;
pub mod damage;
pub mod epd;
pub mod grpc_web;
pub mod iptables;
pub mod journal;
pub mod metrics;
pub mod postgres;
pub mod raw_grpc;
pub mod rng;
pub mod server;
pub mod variant_corpus;
