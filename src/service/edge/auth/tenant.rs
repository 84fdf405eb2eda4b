//! A tenant: the name that keeps one backend's games apart from another's on a shared
//! server (the optional fourth column of the token file). Checked once, when the token
//! file is read, so a key built from it ([`crate::service::game_key::GameKey`]) can never
//! collide with another tenant's or with a game id.

use std::fmt;
use std::sync::Arc;

/// The longest tenant name, as for a game id: it becomes part of every key of its games.
pub const MAX_TENANT_LEN: usize = 64;

/// A tenant name: 1-64 characters of A-Z a-z 0-9 - _ . ~ (RFC 3986 unreserved, the game
/// id's charset), so that it never holds the `/` that ends it in a key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tenant(Arc<str>);

/// Why a text is not a tenant name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TenantError {
    /// The text is empty.
    #[error("a tenant name is empty")]
    Empty,
    /// The text is longer than [`MAX_TENANT_LEN`].
    #[error("a tenant name is {len} bytes long; at most {MAX_TENANT_LEN} are allowed")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The text holds a character outside the charset.
    #[error("character {0:?} is not allowed in a tenant name; use only A-Z a-z 0-9 - _ . ~")]
    Character(char),
}

impl Tenant {
    /// Checks `name` as a tenant name.
    pub fn parse(name: &str) -> Result<Tenant, TenantError> {
        if name.is_empty() {
            return Err(TenantError::Empty);
        }
        if name.len() > MAX_TENANT_LEN {
            return Err(TenantError::TooLong { len: name.len() });
        }
        if let Some(c) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~')))
        {
            return Err(TenantError::Character(c));
        }
        Ok(Tenant(Arc::from(name)))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Tenant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert_eq!(
            Tenant::parse("acme-1.b_c~").map(|t| t.to_string()),
            Ok("acme-1.b_c~".into())
        );
        assert_eq!(
            Tenant::parse(&"t".repeat(64)).map(|t| t.as_str().len()),
            Ok(64)
        );
        assert_eq!(Tenant::parse(""), Err(TenantError::Empty));
        assert_eq!(
            Tenant::parse(&"t".repeat(65)),
            Err(TenantError::TooLong { len: 65 })
        );
        assert_eq!(Tenant::parse("a/b"), Err(TenantError::Character('/')));
        assert_eq!(Tenant::parse("#a"), Err(TenantError::Character('#')));
    }
}
