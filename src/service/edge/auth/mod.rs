//! Who is calling and what they may do: bearer tokens mapped to a caller's name, role
//! and tenant (`--auth-tokens`), the role each RPC needs, per-caller quotas, and the tower
//! layer that enforces all three before a call reaches the service.
//!
//! Why at the edge, as a layer: a refused call must cost nothing (no decoding, no game
//! lock), and health and reflection must stay open for kubelet probes and grpcurl, which
//! is a decision about paths, not about the chess service.

mod layer;
pub mod methods;
mod quota;
mod tenant;
mod tokens;

use std::fmt;
use std::sync::Arc;

pub use layer::{AuthLayer, AuthService, Gate, reload_on_sighup};
pub use quota::{Quotas, RateLimited};
pub use tenant::{MAX_TENANT_LEN, Tenant, TenantError};
pub use tokens::{TokenFileError, TokenTable};

/// What a caller may do. Ordered: each role includes the ones below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Reads games and positions: GetGame, LegalMoves, WatchGame, Perft, ListGames.
    Read,
    /// Read, plus every change: NewGame, Play, Undo, offers, resignation, claims,
    /// ImportGame.
    Play,
    /// Play, plus DeleteGame and reopening a game whose ending a player or the clock
    /// decided (Undo after a resignation, an agreed or claimed draw, a flag fall).
    Admin,
}

impl Role {
    /// The role's name as the token file and error metadata write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Play => "play",
            Role::Admin => "admin",
        }
    }

    /// Parses a role name of the token file.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "read" => Some(Role::Read),
            "play" => Some(Role::Play),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The authenticated caller of one call, put into the request's extensions by the
/// [`AuthLayer`] for the service (its span's `caller` field, the Undo rule).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The NAME of the caller's token line (`anonymous` on a server without tokens).
    pub name: Arc<str>,
    /// What the caller may do.
    pub role: Role,
    /// Whether a token names the caller (else every caller of an open server shares the
    /// name `anonymous`, and per-caller bounds apply per connection instead).
    pub from_token: bool,
    /// The tenant whose games the caller sees (the token line's fourth column); `None`:
    /// the default tenant, and for an admin every tenant's listing (see
    /// [`Caller::is_unscoped_admin`]).
    pub tenant: Option<Tenant>,
}

impl Caller {
    /// The caller of a server without `--auth-tokens`: open as before tokens existed,
    /// everyone may do everything.
    pub fn anonymous() -> Caller {
        Caller {
            name: Arc::from("anonymous"),
            role: Role::Admin,
            from_token: false,
            tenant: None,
        }
    }

    /// The caller assumed when a request carries no [`Caller`] (it did not pass the
    /// layer): the least role, so that a missing layer fails closed.
    pub fn unidentified() -> Caller {
        Caller {
            name: Arc::from("unidentified"),
            role: Role::Read,
            from_token: false,
            tenant: None,
        }
    }

    /// An admin of no tenant: lists every tenant's games (and may filter by one); its
    /// other calls address the default tenant's games.
    pub fn is_unscoped_admin(&self) -> bool {
        self.role == Role::Admin && self.tenant.is_none()
    }
}
