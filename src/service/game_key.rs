//! Where a tenant's game is kept: the registry and the stores know a game by one string,
//! its key. A game of the default tenant is kept under its plain id, exactly as before
//! tenants existed (so every game stored by an older build is the default tenant's, with
//! no migration); a game of tenant `T` under `#T/<game id>`. `#` sorts before every
//! character of a game id and `/` is in neither a game id nor a tenant name, so no key of
//! one tenant can equal, or fall among, another tenant's keys: each tenant's keys are one
//! contiguous range ([`ListScope::range`]).
//!
//! Keys stay inside the server: every answer shows the plain game id
//! ([`GameKey::plain_id`]), so a call about another tenant's game answers exactly as one
//! about a game that does not exist.

use crate::service::edge::auth::Tenant;
use crate::store::KeyRange;

use super::validate::validate_game_id;

/// The first character of a tenant's key.
const TENANT_MARK: char = '#';
/// What ends the tenant's name in a key.
const TENANT_END: char = '/';

/// A game of a tenant (`None`: the default tenant).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameKey {
    /// Whose game it is.
    pub tenant: Option<Tenant>,
    /// The game id callers know it by.
    pub id: String,
}

impl GameKey {
    /// Game `id` of `tenant`.
    pub fn new(tenant: Option<&Tenant>, id: &str) -> GameKey {
        GameKey {
            tenant: tenant.cloned(),
            id: id.to_string(),
        }
    }

    /// The key of game `id` of `tenant`: [`GameKey::new`], encoded.
    pub fn key_of(tenant: Option<&Tenant>, id: &str) -> String {
        GameKey::new(tenant, id).encode()
    }

    /// The key of a game as an answer shows it (`tenant` empty: the default tenant's).
    pub fn key_of_shown(tenant: &str, id: &str) -> String {
        if tenant.is_empty() {
            id.to_string()
        } else {
            format!("{TENANT_MARK}{tenant}{TENANT_END}{id}")
        }
    }

    /// The key the registry and the store know the game by.
    pub fn encode(&self) -> String {
        match &self.tenant {
            None => self.id.clone(),
            Some(t) => format!("{TENANT_MARK}{t}{TENANT_END}{}", self.id),
        }
    }

    /// The game a key names, if it is a key this service makes (a valid game id, of a
    /// valid tenant or of none).
    pub fn parse(key: &str) -> Option<GameKey> {
        let (tenant, id) = match key.strip_prefix(TENANT_MARK) {
            None => (None, key),
            Some(rest) => {
                let (tenant, id) = rest.split_once(TENANT_END)?;
                (Some(Tenant::parse(tenant).ok()?), id)
            }
        };
        validate_game_id(id).ok()?;
        Some(GameKey {
            tenant,
            id: id.to_string(),
        })
    }

    /// The game id part of a key, as answers show it: everything after the tenant.
    pub fn plain_id(key: &str) -> &str {
        match key.strip_prefix(TENANT_MARK) {
            Some(rest) => rest.split_once(TENANT_END).map_or(rest, |(_, id)| id),
            None => key,
        }
    }

    /// The tenant part of a key, as answers show it (`""`: the default tenant).
    pub fn tenant_of(key: &str) -> &str {
        key.strip_prefix(TENANT_MARK)
            .and_then(|rest| rest.split_once(TENANT_END))
            .map_or("", |(tenant, _)| tenant)
    }
}

/// Which games a listing covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListScope {
    /// One tenant's games (`None`: the default tenant's).
    Tenant(Option<Tenant>),
    /// Every tenant's (an admin of no tenant, listing with no `tenant` filter).
    Every,
}

impl ListScope {
    /// The keys of the scope's games.
    pub fn range(&self) -> KeyRange {
        match self {
            ListScope::Every => KeyRange::all(),
            // Every default-tenant key starts with a game id character, all of which sort
            // after '$'; every tenant's key starts with '#', just before it.
            ListScope::Tenant(None) => KeyRange {
                from: Some("$".into()),
                to: None,
            },
            // '0' is the character after '/'.
            ListScope::Tenant(Some(t)) => KeyRange {
                from: Some(format!("{TENANT_MARK}{t}{TENANT_END}")),
                to: Some(format!("{TENANT_MARK}{t}0")),
            },
        }
    }

    /// Whether `cursor`, a page token's key, is a key of this scope: a page token is good
    /// only with the scope it was made for, so one tenant's token never pages through
    /// another tenant's games.
    pub fn holds(&self, cursor: &str) -> bool {
        GameKey::parse(cursor).is_some() && self.range().contains(cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(name: &str) -> Tenant {
        Tenant::parse(name).expect("a tenant name")
    }

    #[test]
    fn keys_round_trip_and_default_ids_stay_plain() {
        let a = tenant("a");
        for (key, tenant, id) in [
            (GameKey::new(None, "g-1"), None, "g-1"),
            (GameKey::new(Some(&a), "g-1"), Some("a"), "g-1"),
        ] {
            let encoded = key.encode();
            assert_eq!(GameKey::parse(&encoded), Some(key.clone()));
            assert_eq!(GameKey::plain_id(&encoded), id);
            assert_eq!(GameKey::tenant_of(&encoded), tenant.unwrap_or(""));
        }
        assert_eq!(GameKey::new(None, "g-1").encode(), "g-1");
        assert_eq!(GameKey::new(Some(&a), "g-1").encode(), "#a/g-1");
        for bad in ["", "#a", "#/g", "#a/", "#a/b/c", "a/b", "#a b/g", "##/g"] {
            assert_eq!(GameKey::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn each_scope_holds_exactly_its_tenants_keys() {
        let (a, ab) = (tenant("a"), tenant("a-b"));
        let keys = [
            GameKey::new(None, "-").encode(),
            GameKey::new(None, "~~").encode(),
            GameKey::new(None, "0").encode(),
            GameKey::new(Some(&a), "-").encode(),
            GameKey::new(Some(&a), "~").encode(),
            GameKey::new(Some(&ab), "g").encode(),
            GameKey::new(Some(&tenant("a.")), "g").encode(),
            GameKey::new(Some(&tenant("a0")), "g").encode(),
        ];
        let held = |scope: ListScope| -> Vec<&str> {
            let range = scope.range();
            keys.iter()
                .map(String::as_str)
                .filter(|k| range.contains(k))
                .collect()
        };
        assert_eq!(held(ListScope::Tenant(None)), ["-", "~~", "0"]);
        assert_eq!(held(ListScope::Tenant(Some(a))), ["#a/-", "#a/~"]);
        assert_eq!(held(ListScope::Tenant(Some(ab))), ["#a-b/g"]);
        assert_eq!(held(ListScope::Every).len(), keys.len());
    }

    #[test]
    fn cursors_stay_in_their_scope() {
        let a = ListScope::Tenant(Some(tenant("a")));
        assert!(a.holds("#a/g"));
        assert!(!a.holds("#b/g") && !a.holds("g") && !a.holds("#a/"));
        let default = ListScope::Tenant(None);
        assert!(default.holds("g") && !default.holds("#a/g"));
        let every = ListScope::Every;
        assert!(every.holds("#a/g") && every.holds("g") && !every.holds("#a/"));
    }
}
