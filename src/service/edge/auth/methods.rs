//! The role each RPC needs, in one table; a method missing from the table needs `admin`
//! (a new RPC fails closed until it is given its role here).

use super::Role;

/// The gRPC service whose methods the table covers.
pub const CHESS_SERVICE: &str = "chess.v1.ChessService";

/// Every `chess.v1.ChessService` method and the least role that may call it.
pub const METHOD_ROLES: &[(&str, Role)] = &[
    // read
    ("GetGame", Role::Read),
    ("LegalMoves", Role::Read),
    ("WatchGame", Role::Read),
    ("Perft", Role::Read),
    ("ListGames", Role::Read),
    ("Winnability", Role::Read),
    // play: every change
    ("NewGame", Role::Play),
    ("ImportGame", Role::Play),
    ("Play", Role::Play),
    ("Undo", Role::Play),
    ("Resign", Role::Play),
    ("OfferDraw", Role::Play),
    ("RespondToDraw", Role::Play),
    ("ClaimDraw", Role::Play),
    ("AddTime", Role::Play),
    // admin
    ("DeleteGame", Role::Admin),
];

/// The methods that create games, counted by `--games-per-token-per-minute`.
pub const GAME_CREATING: &[&str] = &["NewGame", "ImportGame"];

/// Services that answer without a token: kubelet probes and grpcurl's reflection.
const OPEN_SERVICES: &[&str] = &[
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];

/// What a request path needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Health and reflection: no token, no quota.
    Open,
    /// A token with at least this role; `creates_game` counts against the games quota.
    Needs {
        /// The method's name, for messages and quotas.
        method: &'static str,
        /// The least role that may call it.
        role: Role,
        /// Whether the call creates a game (NewGame, ImportGame).
        creates_game: bool,
    },
}

/// The access a gRPC path (`/package.Service/Method`) needs.
pub fn access(path: &str) -> Access {
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let service = parts.next().unwrap_or_default();
    let method = parts.next().unwrap_or_default();
    if OPEN_SERVICES.contains(&service) {
        return Access::Open;
    }
    if service == CHESS_SERVICE
        && let Some(&(name, role)) = METHOD_ROLES.iter().find(|(m, _)| *m == method)
    {
        return Access::Needs {
            method: name,
            role,
            creates_game: GAME_CREATING.contains(&name),
        };
    }
    Access::Needs {
        method: "an unlisted method",
        role: Role::Admin,
        creates_game: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every RPC of the proto is in the table (a missing one would need admin: closed,
    /// but surely not what was meant).
    #[test]
    fn every_rpc_of_the_proto_has_a_role() {
        let proto = include_str!("../../../../proto/chess/v1/chess.proto");
        let rpcs: Vec<&str> = proto
            .lines()
            .filter_map(|l| l.trim().strip_prefix("rpc "))
            .filter_map(|l| l.split('(').next())
            .map(str::trim)
            .collect();
        assert!(rpcs.contains(&"AddTime"), "{rpcs:?}");
        for rpc in rpcs {
            assert!(
                METHOD_ROLES.iter().any(|(m, _)| *m == rpc),
                "{rpc} has no role in METHOD_ROLES"
            );
        }
        assert!(matches!(
            access("/chess.v1.ChessService/AddTime"),
            Access::Needs {
                role: Role::Play,
                creates_game: false,
                ..
            }
        ));
    }

    #[test]
    fn paths_map_to_roles() {
        assert_eq!(access("/grpc.health.v1.Health/Check"), Access::Open);
        assert_eq!(
            access("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"),
            Access::Open
        );
        assert!(matches!(
            access("/chess.v1.ChessService/GetGame"),
            Access::Needs {
                role: Role::Read,
                creates_game: false,
                ..
            }
        ));
        assert!(matches!(
            access("/chess.v1.ChessService/NewGame"),
            Access::Needs {
                role: Role::Play,
                creates_game: true,
                ..
            }
        ));
        assert!(matches!(
            access("/chess.v1.ChessService/DeleteGame"),
            Access::Needs {
                role: Role::Admin,
                ..
            }
        ));
        // Unknown methods and services fail closed.
        assert!(matches!(
            access("/chess.v1.ChessService/Frobnicate"),
            Access::Needs {
                role: Role::Admin,
                ..
            }
        ));
        assert!(matches!(
            access("/grpc.health.v1.Healthy/Check"),
            Access::Needs {
                role: Role::Admin,
                ..
            }
        ));
    }
}
