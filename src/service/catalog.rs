//! The catalog calls: ListGames (AIP-158 paging over the registry's listing) and
//! DeleteGame (AIP-135), and the PGN tags NewGame takes.
//!
//! Page tokens are opaque to callers: base64url (no padding) of a format byte, the status
//! filter they were made for and the key of the last game the page covered (the plain
//! id for the default tenant, as before tenants existed). A token is only good with the
//! filter and the tenant it was made for (AIP-158: the other request fields must match),
//! so a token from another filter or another tenant's listing, or anything that is not
//! one of ours, is INVALID_ARGUMENT. Tokens do not expire: the next page starts after
//! that key, whatever was created or deleted meanwhile.
//!
//! A listing covers one tenant's keys (see [`super::game_key`]), the caller's, except for
//! an admin of no tenant, who lists every tenant's or the one its request names.

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::lifecycle::Tags;
use crate::pb;
use crate::registry::RegistryError;
use crate::service::edge::auth::{Caller, Tenant};
use crate::store::StatusFilter;

use super::game_key::{GameKey, ListScope};
use super::validate::validate_game_id;
use super::views::{self, View};
use super::{ChessService, ServiceError};

/// NewGame's `tags`, checked (INVALID_ARGUMENT, INVALID_TAG, metadata `tag`).
pub fn tags_from_pb(tags: &HashMap<String, String>) -> Result<Tags, ServiceError> {
    Tags::new(tags.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(ServiceError::InvalidTag)
}

fn filter_from_pb(value: i32) -> Result<StatusFilter, ServiceError> {
    match pb::StatusFilter::try_from(value) {
        Ok(pb::StatusFilter::Unspecified | pb::StatusFilter::All) => Ok(StatusFilter::All),
        Ok(pb::StatusFilter::InProgress) => Ok(StatusFilter::InProgress),
        Ok(pb::StatusFilter::Ended) => Ok(StatusFilter::Ended),
        Err(_) => Err(ServiceError::InvalidStatusFilter { value }),
    }
}

impl ChessService {
    /// ListGames: one page of games in the BASIC view (AIP-158), of the scope the caller
    /// may list ([`list_scope`]).
    pub(super) async fn list_games(
        &self,
        req: pb::ListGamesRequest,
        caller: Caller,
    ) -> Result<pb::ListGamesResponse, ServiceError> {
        let filter = filter_from_pb(req.status_filter)?;
        let limit =
            page_size(req.page_size).map_err(|why| ServiceError::InvalidPageSize { why })?;
        let scope = list_scope(&caller, &req.tenant)?;
        let after = resume_after(&req.page_token, filter, &scope)
            .map_err(|why| ServiceError::InvalidPageToken { why })?;
        // The registry is asked in chunks, so that a page that ends early at its byte
        // bound has not read (and held) more games than it answers. No more chunks than
        // one page's worth: a store that covers fewer games than asked (it bounds its
        // work per call) makes a short page, with a token, as before.
        let range = scope.range();
        let mut page = PageFiller::new(limit, MAX_PAGE_BYTES);
        let mut cursor = after;
        let mut chunks_left = limit.div_ceil(LIST_CHUNK);
        let resume_after = loop {
            chunks_left -= 1;
            let chunk = (limit - page.games.len()).min(LIST_CHUNK);
            let listed = self
                .registry
                .list_games(&range, filter, cursor.as_deref(), chunk, |e, now| {
                    views::game(e, now, View::Basic)
                })
                .await?;
            if let Some(full_after) = page.offer_all(listed.games) {
                break Some(full_after);
            }
            match listed.resume_after {
                Some(next) if page.games.len() < limit && chunks_left > 0 => cursor = Some(next),
                other => break other,
            }
        };
        Ok(pb::ListGamesResponse {
            games: page.games,
            next_page_token: resume_after
                .map(|last| page_token(filter, &last))
                .unwrap_or_default(),
        })
    }

    /// DeleteGame (AIP-135): the game and its history are gone once this answers.
    pub(super) async fn delete_game(
        &self,
        req: pb::DeleteGameRequest,
        tenant: Option<Tenant>,
    ) -> Result<pb::DeleteGameResponse, ServiceError> {
        validate_game_id(&req.game_id)?;
        let key = GameKey::key_of(tenant.as_ref(), &req.game_id);
        match self.registry.delete_game(&key, req.expected_version).await {
            Ok(_) => Ok(pb::DeleteGameResponse {}),
            Err(RegistryError::NotFound { .. }) if req.allow_missing => {
                Ok(pb::DeleteGameResponse {})
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The games `caller` lists when its ListGames names `tenant`: its own tenant's (`tenant`
/// empty or its own), or, for an admin of no tenant, every tenant's (`tenant` empty) or
/// the named one's. A `tenant` that is no tenant name is INVALID_ARGUMENT; any other
/// tenant is refused.
fn list_scope(caller: &Caller, tenant: &str) -> Result<ListScope, ServiceError> {
    let named = match tenant {
        "" => None,
        name => Some(Tenant::parse(name).map_err(ServiceError::InvalidTenant)?),
    };
    if caller.is_unscoped_admin() {
        return Ok(named.map_or(ListScope::Every, |t| ListScope::Tenant(Some(t))));
    }
    if named.is_none() || named == caller.tenant {
        return Ok(ListScope::Tenant(caller.tenant.clone()));
    }
    Err(ServiceError::TenantForbidden {
        caller: caller.name.to_string(),
        role: caller.role,
        tenant: tenant.to_string(),
    })
}

/// The page size when the request names none (`page_size` 0).
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// The largest page; a larger `page_size` is served as this (AIP-158).
pub const MAX_PAGE_SIZE: usize = 1000;

/// The most bytes of games one ListGames answer holds. An answer waits in memory until
/// the caller reads it, so a caller that asks for many pages of games with large tags and
/// never reads them would otherwise hold megabytes per call (issue 30); a page that would
/// be larger ends early, with a `next_page_token`.
pub const MAX_PAGE_BYTES: usize = 1024 * 1024;

/// How many games the registry is asked for at a time while a page is filled.
const LIST_CHUNK: usize = 64;

/// A page of games being filled, up to a number of games and of bytes encoded.
pub struct PageFiller {
    /// The games kept so far, in order.
    pub games: Vec<pb::Game>,
    limit: usize,
    max_bytes: usize,
    bytes: usize,
}

impl PageFiller {
    /// An empty page of at most `limit` games and `max_bytes` bytes.
    pub fn new(limit: usize, max_bytes: usize) -> PageFiller {
        PageFiller {
            games: Vec::new(),
            limit,
            max_bytes,
            bytes: 0,
        }
    }

    /// Adds `games` in order until the page is full. `Some(key of the last game kept)`
    /// when a game did not fit in the bytes (the next page starts after it); `None`
    /// when every game was kept. The first game always stays, however large, so paging
    /// always makes progress.
    pub fn offer_all(&mut self, games: Vec<pb::Game>) -> Option<String> {
        for game in games {
            // A repeated message field's entry: its tag, its length, then the message.
            let bytes = prost::encoding::message::encoded_len(1, &game);
            let last = self.games.last();
            if last.is_some() && self.bytes + bytes > self.max_bytes {
                return last.map(|g| GameKey::key_of_shown(&g.tenant, &g.game_id));
            }
            debug_assert!(
                self.games.len() < self.limit,
                "asked for more than the page"
            );
            self.bytes += bytes;
            self.games.push(game);
        }
        None
    }
}

/// The format byte of page tokens this build makes.
const TOKEN_FORMAT: u8 = 1;

fn filter_code(filter: StatusFilter) -> u8 {
    match filter {
        StatusFilter::All => 0,
        StatusFilter::InProgress => 1,
        StatusFilter::Ended => 2,
    }
}

/// The page size a request asks for: 0 is the default, above the maximum is the
/// maximum; a negative size is refused (the caller gets why).
pub fn page_size(requested: i32) -> Result<usize, String> {
    match requested {
        0 => Ok(DEFAULT_PAGE_SIZE),
        n if n < 0 => Err(format!(
            "{n} is negative; ask for 1 to {MAX_PAGE_SIZE} games, or 0 for {DEFAULT_PAGE_SIZE}"
        )),
        n => Ok((n as usize).min(MAX_PAGE_SIZE)),
    }
}

/// The token of the page that starts after the game of key `last_id`, listing
/// `filter`.
pub fn page_token(filter: StatusFilter, last_id: &str) -> String {
    let mut bytes = Vec::with_capacity(2 + last_id.len());
    bytes.push(TOKEN_FORMAT);
    bytes.push(filter_code(filter));
    bytes.extend_from_slice(last_id.as_bytes());
    super::convert::base64url(&bytes)
}

/// The key a page token resumes after, if it is a token of ours for `filter` and
/// `scope`; else why not. An empty token is the first page (`None`).
pub fn resume_after(
    token: &str,
    filter: StatusFilter,
    scope: &ListScope,
) -> Result<Option<String>, String> {
    if token.is_empty() {
        return Ok(None);
    }
    let not_ours = || {
        "it is not a page token this server made; pass the next_page_token of the previous answer, unchanged".to_string()
    };
    let bytes = base64url_decode(token).ok_or_else(not_ours)?;
    let [format, code, id @ ..] = bytes.as_slice() else {
        return Err(not_ours());
    };
    if *format != TOKEN_FORMAT {
        return Err(not_ours());
    }
    if *code != filter_code(filter) {
        return Err(
            "it was made for another status_filter; a page token is good only with the request it came from"
                .into(),
        );
    }
    let id = std::str::from_utf8(id).map_err(|_| not_ours())?;
    GameKey::parse(id).ok_or_else(not_ours)?;
    if !scope.holds(id) {
        return Err(
            "it was made for another tenant's listing; a page token is good only with the request it came from"
                .into(),
        );
    }
    Ok(Some(id.to_string()))
}

/// Decodes unpadded base64url (the alphabet of [`super::convert::base64url`]); `None` for
/// anything else: padding, the standard alphabet's `+` and `/`, a length no encoding has,
/// or non-zero unused bits (one spelling per token).
fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Page tokens handed out keep their spelling, and the decoder takes one spelling
    /// of each byte string only.
    #[test]
    fn page_tokens_keep_their_spelling() {
        assert_eq!(page_token(StatusFilter::All, "game-1"), "AQBnYW1lLTE");
        assert_eq!(page_token(StatusFilter::Ended, "abc"), "AQJhYmM");
        assert_eq!(base64url_decode("AQJhYmM"), Some(b"\x01\x02abc".to_vec()));
        assert_eq!(base64url_decode(""), Some(Vec::new()));
        for bad in [
            "AQJhYmM=",  // padding
            "AQJhYmN",   // non-zero unused bits
            "AQJhYmMAA", // a length no encoding has
            "+/8",       // the standard alphabet
            "====",      // padding alone
            "AQ Jh",     // white space
        ] {
            assert_eq!(base64url_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn tokens_round_trip_for_their_filter_only() {
        let default = ListScope::Tenant(None);
        for filter in [
            StatusFilter::All,
            StatusFilter::InProgress,
            StatusFilter::Ended,
        ] {
            for id in ["g", "ab", "abc", "game-0001_x.~", &"z".repeat(64)] {
                let token = page_token(filter, id);
                assert!(!token.contains(id), "opaque: {token}");
                assert_eq!(
                    resume_after(&token, filter, &default),
                    Ok(Some(id.to_string()))
                );
                let other = if filter == StatusFilter::All {
                    StatusFilter::Ended
                } else {
                    StatusFilter::All
                };
                let e = resume_after(&token, other, &default).expect_err("another filter");
                assert!(e.contains("another status_filter"), "{e}");
            }
        }
        assert_eq!(resume_after("", StatusFilter::All, &default), Ok(None));
    }

    #[test]
    fn garbage_is_not_a_token() {
        let default = ListScope::Tenant(None);
        let all = StatusFilter::All;
        let good = page_token(all, "game-1");
        let mut bad: Vec<String> = vec![
            "x".into(),
            "not a token".into(),
            "====".into(),
            super::super::convert::base64url(b"\x01"),
            super::super::convert::base64url(b"\x02\x00game"),
            super::super::convert::base64url(b"\x01\x00bad id!"),
            super::super::convert::base64url(b"\x01\x00\xff\xfe"),
            format!("{good}A"),
        ];
        // Another spelling of the same bytes (non-zero unused bits).
        let mut respelled = good.clone().into_bytes();
        if !good.len().is_multiple_of(4) {
            let last = respelled.last_mut().unwrap();
            *last = if *last == b'_' { b'-' } else { b'_' };
            bad.push(String::from_utf8(respelled).unwrap());
        }
        for token in bad {
            let e = resume_after(&token, all, &default).expect_err(&token);
            assert!(e.contains("not a page token"), "{token}: {e}");
        }
    }

    #[test]
    fn tokens_are_good_only_in_their_tenants_listing() {
        let tenant = |name: &str| Some(Tenant::parse(name).expect("a tenant name"));
        let (a, b) = (
            ListScope::Tenant(tenant("a")),
            ListScope::Tenant(tenant("b")),
        );
        let all = StatusFilter::All;
        let token = page_token(all, "#a/g");
        assert_eq!(resume_after(&token, all, &a), Ok(Some("#a/g".into())));
        assert_eq!(
            resume_after(&token, all, &ListScope::Every),
            Ok(Some("#a/g".into()))
        );
        for other in [b, ListScope::Tenant(None)] {
            let e = resume_after(&token, all, &other).expect_err("another tenant");
            assert!(e.contains("another tenant"), "{e}");
        }
        let default_token = page_token(all, "g");
        let e = resume_after(&default_token, all, &a).expect_err("another tenant");
        assert!(e.contains("another tenant"), "{e}");
    }

    fn game_of(id: &str, tag_bytes: usize) -> pb::Game {
        pb::Game {
            game_id: id.to_string(),
            tags: [("Event".to_string(), "x".repeat(tag_bytes))].into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_page_ends_early_when_its_games_pass_the_byte_bound() {
        use prost::Message as _;
        let games: Vec<_> = (0..10).map(|i| game_of(&format!("g{i}"), 1000)).collect();
        let whole = pb::ListGamesResponse {
            games: games.clone(),
            next_page_token: String::new(),
        }
        .encoded_len();
        // Everything fits: nothing dropped, the registry's resume point stands.
        let mut page = PageFiller::new(10, whole);
        assert_eq!(page.offer_all(games.clone()), None);
        assert_eq!(page.games.len(), 10);
        // One byte less: the last game stays out, and the next page starts after g8,
        // also when the games come in chunks.
        let mut page = PageFiller::new(10, whole - 1);
        assert_eq!(page.offer_all(games[..4].to_vec()), None);
        assert_eq!(page.offer_all(games[4..].to_vec()), Some("g8".to_string()));
        assert_eq!(page.games.len(), 9);
        let kept = pb::ListGamesResponse {
            games: page.games.clone(),
            next_page_token: String::new(),
        }
        .encoded_len();
        assert!(kept < whole, "{kept}");
        // A bound below one game keeps that game: paging always moves on.
        let mut page = PageFiller::new(10, 10);
        assert_eq!(page.offer_all(games.clone()), Some("g0".to_string()));
        assert_eq!(page.games.len(), 1);
        let mut one = PageFiller::new(10, 10);
        assert_eq!(
            one.offer_all(vec![game_of("only", 5000)]),
            None,
            "the last game"
        );
        assert_eq!(PageFiller::new(10, 10).offer_all(Vec::new()), None);
    }

    #[test]
    fn page_sizes_follow_aip_158() {
        assert_eq!(page_size(0), Ok(DEFAULT_PAGE_SIZE));
        assert_eq!(page_size(1), Ok(1));
        assert_eq!(page_size(1000), Ok(1000));
        assert_eq!(page_size(1001), Ok(MAX_PAGE_SIZE));
        assert_eq!(page_size(i32::MAX), Ok(MAX_PAGE_SIZE));
        assert!(page_size(-1).expect_err("negative").contains("negative"));
    }
}
