//! The tests' seeded generator is the library's: one splitmix64 for the tests, the
//! benchmarks and `chess-load`.

#[allow(unused_imports)] // each including crate uses part of `common`
pub use chess_service::seeded_rng::Rng;
