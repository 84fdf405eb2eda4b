//! Reads: a game loaded and replayed (on the blocking pool), a page of a listing by status
//! (the `ended` tree, a scan bounded a call), and a stored record decoded, a damaged one
//! being `DataLoss` for that game alone.

use super::SledState;
use super::errors::io_err;
use crate::store::codec;
use crate::store::encoder_cache::CachedEncoder;
use crate::store::{KeyRange, ListPage, ListedGame, LoadedGame, StatusFilter, StoreError};

/// A listing looks at most this many games per call before it returns a short page
/// with where to resume (listing games in progress skips the ended ones one by one).
const LIST_SCAN_BUDGET: usize = 10_000;

impl SledState {
    /// Decodes game `id`'s stored record: its version and encoding, `None` if there is no
    /// record.
    pub(super) fn read(&self, id: &str) -> Result<Option<(u64, CachedEncoder)>, StoreError> {
        let Some(bytes) = self
            .games
            .get(id.as_bytes())
            .map_err(|e| self.sled_err(id, e))?
        else {
            return Ok(None);
        };
        let decoded = decode(id, &bytes)?;
        let version = decoded.loaded.game.version();
        Ok(Some((version, CachedEncoder::split(decoded).1)))
    }

    /// One page of a listing (see [`GameStore::list`]): the `ended` tree for ended games,
    /// the `games` tree for all games (and, skipping the ended ones, for games going).
    ///
    /// [`GameStore::list`]: crate::store::GameStore::list
    pub(super) fn list(
        &self,
        range: &KeyRange,
        filter: StatusFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<ListPage, StoreError> {
        self.check_open()?;
        if range.exhausted(after) {
            return Ok(ListPage::default());
        }
        let limit = limit.max(1);
        let bytes = |b: std::ops::Bound<&str>| b.map(|s| s.as_bytes().to_vec());
        let range = (bytes(range.start(after)), bytes(range.end()));
        let err = |e: sled::Error| io_err(&self.path, "cannot list games", e);
        let keys: Box<dyn Iterator<Item = Result<sled::IVec, sled::Error>>> = match filter {
            StatusFilter::Ended => Box::new(self.ended.range(range).keys()),
            StatusFilter::All | StatusFilter::InProgress => {
                Box::new(self.games.range(range).keys())
            }
        };
        let mut page = ListPage::default();
        let mut scanned = 0;
        for key in keys {
            let key = key.map_err(err)?;
            scanned += 1;
            let id = String::from_utf8_lossy(&key).into_owned();
            if filter == StatusFilter::InProgress && self.ended.contains_key(&key).map_err(err)? {
                if scanned >= LIST_SCAN_BUDGET {
                    page.resume_after = Some(id);
                    break;
                }
                continue;
            }
            // A game deleted since its key was read is not listed.
            let Some(record) = self.games.get(&key).map_err(err)? else {
                continue;
            };
            if page.games.len() == limit {
                // One more game exists: the page is not the last.
                page.resume_after = page.games.last().map(|g| g.id.clone());
                break;
            }
            // A damaged record lists as version 0; loading it answers DATA_LOSS.
            let version = self
                .encoders
                .version(&id)
                .or_else(|| codec::peek_version(&record))
                .unwrap_or(0);
            page.games.push(ListedGame {
                id,
                version,
                token: None,
            });
            if scanned >= LIST_SCAN_BUDGET {
                page.resume_after = page.games.last().map(|g| g.id.clone());
                break;
            }
        }
        Ok(page)
    }

    pub(super) fn load(&self, id: &str) -> Result<Option<LoadedGame>, StoreError> {
        self.check_open()?;
        self.lost.check(id)?;
        let Some(bytes) = self
            .games
            .get(id.as_bytes())
            .map_err(|e| self.sled_err(id, e))?
        else {
            return Ok(None);
        };
        let (loaded, cached) = CachedEncoder::split(decode(id, &bytes)?);
        // The encoding goes to the cache only if no write replaced the record meanwhile:
        // the cache's version must be the stored one.
        let _writing = self.writing(id);
        if self
            .games
            .get(id.as_bytes())
            .is_ok_and(|now| now.as_ref() == Some(&bytes))
        {
            self.encoders.put(id, cached);
        }
        Ok(Some(loaded))
    }
}

/// Decodes a stored record; a damaged one is `DataLoss` (and logged).
fn decode(id: &str, bytes: &[u8]) -> Result<codec::Decoded, StoreError> {
    match codec::decode(id, bytes) {
        Ok(decoded) => {
            if !decoded.skipped_sections.is_empty() {
                tracing::warn!(
                    game_id = id,
                    sections = ?decoded.skipped_sections,
                    "record has optional sections this build does not know; they are dropped at the next save"
                );
            }
            Ok(decoded)
        }
        Err(e) => {
            tracing::error!(game_id = id, reason = %e, "stored game is damaged; answering DATA_LOSS for it");
            Err(StoreError::DataLoss {
                id: id.to_string(),
                reason: e.to_string(),
            })
        }
    }
}
