//! ImportGame: the PGN text of one game becomes a stored game (see
//! [`crate::lifecycle::import`] for how the file's ending is recorded). With
//! `validate_only` nothing is stored and the answer is the game as it would be.
//!
//! A `game_id` makes the call safe to retry: the same id with the same text answers the
//! existing game; with other text (another start, other moves or another ending) it
//! answers ALREADY_EXISTS, as NewGame does. Without a `game_id` the server makes one.

use crate::lifecycle::GameMeta;
use crate::lifecycle::import::{ImportError, Imported, import_pgn};
use crate::pb;
use crate::registry::GameEntry;
use crate::service::edge::auth::Tenant;
use crate::service::game_key::GameKey;

use super::games::{already_exists, new_game_id};
use super::validate::{validate_game_id, view_from_pb};
use super::{ChessService, ServiceError, views};

/// The longest `pgn` ImportGame reads, in bytes: 256 KiB, far more than any one real
/// game (a 300-move game with clock and evaluation comments is under 40 KiB).
pub const MAX_PGN_BYTES: usize = 256 * 1024;

/// The line and column (1-based, columns in characters, as the PGN reader counts them)
/// of the character at byte `at` of `text` (or the first one after it).
fn place_of(text: &str, at: usize) -> (u32, u32) {
    // The reader does not count a byte order mark.
    let (text, at) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest, at.saturating_sub('\u{feff}'.len_utf8())),
        None => (text, at),
    };
    let (mut line, mut column) = (1u32, 1u32);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if i >= at {
            break;
        }
        match c {
            '\n' => (line, column) = (line.saturating_add(1), 1),
            '\r' if chars.peek().is_none_or(|&(_, next)| next != '\n') => {
                (line, column) = (line.saturating_add(1), 1)
            }
            '\r' => {}
            _ => column = column.saturating_add(1),
        }
    }
    (line, column)
}

/// Whether `existing` is the game `imported` describes: same variant, start and log.
fn is_same_game(existing: &GameEntry, imported: &Imported) -> bool {
    existing.meta().variant == imported.variant
        && existing.meta().start == imported.start
        && existing.meta().tags == imported.tags
        && !existing.lifecycle().is_timed()
        && existing.lifecycle().log() == imported.game.log()
}

impl ChessService {
    pub(super) async fn import_game(
        &self,
        req: pb::ImportGameRequest,
        tenant: Option<Tenant>,
    ) -> Result<pb::ImportGameResponse, ServiceError> {
        if req.pgn.is_empty() {
            return Err(ServiceError::MissingField {
                field: "pgn",
                why: "ImportGame needs the PGN text of one game",
            });
        }
        if req.pgn.len() > MAX_PGN_BYTES {
            let (line, column) = place_of(&req.pgn, MAX_PGN_BYTES);
            return Err(ServiceError::PgnTooLarge {
                len: req.pgn.len(),
                max: MAX_PGN_BYTES,
                line,
                column,
            });
        }
        if !req.game_id.is_empty() {
            validate_game_id(&req.game_id)?;
        }
        let view = view_from_pb(req.view)?;
        let answer = move |e: &mut GameEntry, now| views::game(e, now, view);
        // Reading replays every move through the rules: CPU work of up to milliseconds
        // for the largest texts, kept off the async workers.
        let pgn = req.pgn;
        let imported = tokio::task::spawn_blocking(move || import_pgn(&pgn))
            .await
            .map_err(|e| ServiceError::Internal(format!("the PGN import task failed: {e}")))?
            .map_err(|e| match e {
                ImportError::Pgn(e) => ServiceError::Pgn(e),
                ImportError::Tag(e) => ServiceError::InvalidTag(e),
                ImportError::Inconsistent(e) => {
                    ServiceError::Internal(format!("an imported game did not replay: {e}"))
                }
            })?;
        let created_unix_ms = self.registry.now_ms();
        // The key of the caller's game `id` (see `game_key`).
        let meta = |id: &str| GameMeta {
            id: GameKey::key_of(tenant.as_ref(), id),
            variant: imported.variant,
            start: imported.start.clone(),
            tags: imported.tags.clone(),
            created_unix_ms,
        };
        if req.validate_only {
            let mut entry = GameEntry::new(meta(&req.game_id), imported.game);
            let game = answer(&mut entry, created_unix_ms);
            return Ok(pb::ImportGameResponse { game: Some(game) });
        }
        if !req.game_id.is_empty() {
            let wanted = imported.clone();
            let existing = move |e: &GameEntry| {
                if is_same_game(e, &wanted) {
                    Ok(())
                } else {
                    Err(already_exists(e))
                }
            };
            let (game, _) = self
                .registry
                .create(meta(&req.game_id), imported.game, existing, answer)
                .await?;
            return Ok(pb::ImportGameResponse { game: Some(game) });
        }
        // A server-made id: 128 random bits; a collision is retried, not reported.
        for _ in 0..3 {
            let taken = |e: &GameEntry| Err(already_exists(e));
            match self
                .registry
                .create(meta(&new_game_id()?), imported.game.clone(), taken, answer)
                .await
            {
                Ok((game, _)) => return Ok(pb::ImportGameResponse { game: Some(game) }),
                Err(ServiceError::GameAlreadyExists { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(ServiceError::Internal(
            "could not find a free game id".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_count_as_the_reader_does() {
        assert_eq!(place_of("abc", 0), (1, 1));
        assert_eq!(place_of("abc", 2), (1, 3));
        assert_eq!(place_of("a\r\nbc", 4), (2, 2));
        assert_eq!(place_of("a\rb", 2), (2, 1));
        // After the mark (3 bytes) and "ü\n" (3 bytes), byte 7 is the "é" after "x".
        assert_eq!(place_of("\u{feff}ü\nxé", 7), (2, 2));
    }
}
