//! What identifies a game besides its history: its id, variant, start, creation time and
//! the caller's PGN tags.
//! A domain concept (the store keeps it, the registry and the service answer with it), so
//! it lives here, below every layer that uses it.

use super::Tags;
use crate::rules::GameRules;

/// How a game started: what is needed to rebuild its start position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// The rules' own initial position (standard chess's, or a lichess variant's).
    Standard,
    /// A Chess960 start position by Scharnagl number (0..=959).
    Chess960(u32),
    /// Any other start, as canonical FEN (in the game's variant).
    Fen(String),
}

/// What identifies a game besides its moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameMeta {
    /// The game's id (the caller's, or 22 random URL-safe characters).
    pub id: String,
    /// The rules: standard chess, Chess960 or a lichess variant.
    pub variant: GameRules,
    /// The start position.
    pub start: Start,
    /// When the game was created, milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
    /// The PGN tags the caller set (checked); written into the game's PGN and kept in its
    /// record (format version 2; records without tags read as none).
    pub tags: Tags,
}
