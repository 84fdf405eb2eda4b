//! The security flags of the server (TLS, tokens, quotas, reflection, the plaintext
//! health port) and the objects built from them.

use std::path::PathBuf;
use std::sync::Arc;

use super::ServerError;
use super::tls::TlsFiles;
use crate::service::edge::auth::{Gate, Quotas};

/// Flags of issue 13, flattened into [`super::Config`].
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SecurityConfig {
    /// Token file: one `NAME ROLE SHA256HEX` line per token (roles read, play, admin;
    /// SHA256HEX is the SHA-256 of the token, never the token); `#` starts a comment.
    /// Callers send `authorization: Bearer TOKEN`. SIGHUP reloads it. Without it every
    /// caller may do everything.
    #[arg(long, env = "CHESS_AUTH_TOKENS", value_name = "FILE")]
    pub auth_tokens: Option<PathBuf>,
    /// Turn server reflection off (it answers without a token otherwise).
    #[arg(long, env = "CHESS_NO_REFLECTION")]
    pub no_reflection: bool,
    /// TLS certificate chain (PEM); with --tls-key, the port speaks only TLS. Reloaded
    /// when the file changes.
    #[arg(long, env = "CHESS_TLS_CERT", value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM) of --tls-cert.
    #[arg(long, env = "CHESS_TLS_KEY", value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// CA certificates (PEM) that client certificates must chain to: mutual TLS.
    #[arg(
        long,
        env = "CHESS_TLS_CLIENT_CA",
        value_name = "PEM",
        requires = "tls_cert"
    )]
    pub tls_client_ca: Option<PathBuf>,
    /// A second address serving grpc.health.v1 alone, in plaintext and without a token
    /// (for Kubernetes gRPC probes, which cannot speak TLS).
    #[arg(long, env = "CHESS_HEALTH_LISTEN", value_name = "ADDR")]
    pub health_listen: Option<String>,
    /// Connections the health port keeps open at once; beyond it, the oldest that has
    /// not started HTTP/2 is closed to make room, else the new one is closed at once.
    /// The health port also has the main port's handshake timeout and descriptor
    /// back-off.
    #[arg(long, env = "CHESS_HEALTH_MAX_CONNECTIONS", default_value_t = 64)]
    pub health_max_connections: usize,
    /// Calls per second each caller (token NAME) may make; more are refused with
    /// RESOURCE_EXHAUSTED, reason RATE_LIMITED. Unlimited when not set.
    #[arg(long, env = "CHESS_RATE_LIMIT_PER_TOKEN", value_name = "N")]
    pub rate_limit_per_token: Option<u32>,
    /// Games each caller may create per minute (NewGame, ImportGame). Unlimited when not
    /// set.
    #[arg(long, env = "CHESS_GAMES_PER_TOKEN_PER_MINUTE", value_name = "N")]
    pub games_per_token_per_minute: Option<u32>,
}

impl SecurityConfig {
    /// The gate of the configured tokens and quotas (warns when the server is open).
    pub fn gate(&self) -> Result<Arc<Gate>, ServerError> {
        let quotas = Quotas::new(self.rate_limit_per_token, self.games_per_token_per_minute);
        let gate = match &self.auth_tokens {
            Some(path) => Gate::with_token_file(path, quotas).map_err(ServerError::Tokens)?,
            None => {
                tracing::warn!(
                    "no --auth-tokens: every caller may do everything, without a token; give a token file to require one"
                );
                Gate::open(quotas)
            }
        };
        Ok(Arc::new(gate))
    }

    /// The TLS files, when TLS is on.
    pub fn tls_files(&self) -> Option<TlsFiles> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
                client_ca: self.tls_client_ca.clone(),
            }),
            _ => None,
        }
    }
}
