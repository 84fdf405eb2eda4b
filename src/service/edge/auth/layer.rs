//! The gate every gRPC request passes before routing: health and reflection go through
//! untouched; any other call needs a known bearer token whose role covers the method
//! and a quota with room, and then carries its [`Caller`] in the request's extensions.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use super::methods::{Access, access};
use super::{Caller, Quotas, TokenFileError, TokenTable};
use crate::service::ServiceError;
use crate::service::edge::around_call::{
    AroundCall, AroundCallLayer, AroundCallService, BoxFuture,
};
use crate::service::edge::refusal_log;

/// Where tokens come from: none (an open server) or a file, reloaded on SIGHUP.
enum Tokens {
    Open,
    File {
        path: PathBuf,
        table: RwLock<Arc<TokenTable>>,
    },
}

/// The decisions of the layer: tokens, roles, quotas.
pub struct Gate {
    tokens: Tokens,
    quotas: Quotas,
}

impl Gate {
    /// A server without `--auth-tokens`: every caller is [`Caller::anonymous`] (may do
    /// everything); the quotas still apply, to that one name.
    pub fn open(quotas: Quotas) -> Gate {
        Gate {
            tokens: Tokens::Open,
            quotas,
        }
    }

    /// A server that admits the tokens of the file at `path`.
    pub fn with_token_file(path: &Path, quotas: Quotas) -> Result<Gate, TokenFileError> {
        let table = TokenTable::load(path)?;
        if table.is_empty() {
            tracing::warn!(path = %path.display(), "the token file lists no tokens: every call but health and reflection is refused");
        }
        tracing::info!(path = %path.display(), tokens = table.len(), "callers need a bearer token");
        Ok(Gate {
            tokens: Tokens::File {
                path: path.to_path_buf(),
                table: RwLock::new(Arc::new(table)),
            },
            quotas,
        })
    }

    /// Reads the token file again. A file that cannot be read or parsed leaves the
    /// tokens as they were, and says why. No-op for an open server.
    pub fn reload(&self) -> Result<usize, TokenFileError> {
        let Tokens::File { path, table } = &self.tokens else {
            return Ok(0);
        };
        let fresh = TokenTable::load(path)?;
        let count = fresh.len();
        *table.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(fresh);
        Ok(count)
    }

    /// Decides a request to `path` with `headers`: `Ok(None)` for the open services,
    /// `Ok(Some(caller))` for an admitted call, or why it is refused.
    pub fn check(
        &self,
        path: &str,
        headers: &http::HeaderMap,
    ) -> Result<Option<Caller>, ServiceError> {
        let (method, needed, creates_game) = match access(path) {
            Access::Open => return Ok(None),
            Access::Needs {
                method,
                role,
                creates_game,
            } => (method, role, creates_game),
        };
        let caller = match &self.tokens {
            Tokens::Open => Caller::anonymous(),
            Tokens::File { table, .. } => {
                let token = bearer_token(headers)?;
                let table = table.read().unwrap_or_else(|p| p.into_inner()).clone();
                table.lookup(token).ok_or(ServiceError::TokenUnknown)?
            }
        };
        if caller.role < needed {
            return Err(ServiceError::RoleForbids {
                caller: caller.name.to_string(),
                role: caller.role,
                needed,
                method,
            });
        }
        self.quotas
            .admit(&caller.name, creates_game)
            .map_err(ServiceError::RateLimited)?;
        Ok(Some(caller))
    }
}

/// The token of an `authorization: Bearer TOKEN` header.
fn bearer_token(headers: &http::HeaderMap) -> Result<&str, ServiceError> {
    let value = headers
        .get(http::header::AUTHORIZATION)
        .ok_or(ServiceError::TokenMissing)?;
    let value = value.to_str().map_err(|_| ServiceError::TokenUnknown)?;
    let (scheme, token) = value.split_once(' ').ok_or(ServiceError::TokenMissing)?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(ServiceError::TokenMissing);
    }
    Ok(token.trim())
}

/// Reloads the gate's token file on every SIGHUP, for as long as the process runs.
pub fn reload_on_sighup(gate: Arc<Gate>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hangups = match signal(SignalKind::hangup()) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGHUP; the token file will not be reloaded");
                return;
            }
        };
        tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                match gate.reload() {
                    Ok(tokens) => tracing::info!(tokens, "SIGHUP: token file reloaded"),
                    Err(e) => tracing::error!(
                        error = %e,
                        "SIGHUP: the token file is refused; the tokens loaded before stay in force"
                    ),
                }
            }
        });
    }
    #[cfg(not(unix))]
    let _ = gate;
}

/// The tower layer of the [`Gate`], for `tonic::transport::Server::builder().layer(..)`.
pub type AuthLayer = AroundCallLayer<Arc<Gate>>;

/// The service the [`AuthLayer`] wraps around the server's routes.
pub type AuthService<S> = AroundCallService<S, Arc<Gate>>;

/// The gate around each call: an admitted call carries its [`Caller`] in the request's
/// extensions; a refused one is logged (a few lines a second), counted and answered.
impl AroundCall for Arc<Gate> {
    type Held = ();
    type Body<B> = B;

    fn before<R>(&self, request: &mut http::Request<R>) -> Result<(), tonic::Status> {
        match self.check(request.uri().path(), request.headers()) {
            Ok(caller) => {
                if let Some(caller) = caller {
                    request.extensions_mut().insert(caller);
                }
                Ok(())
            }
            Err(refused) => {
                // At most a few lines a second per reason: a caller without a token
                // must not flood the log (the metrics count every refusal).
                refusal_log::log_and_count(request.uri().path(), &refused);
                Err(tonic::Status::from(refused))
            }
        }
    }

    fn after<B>((): (), response: http::Response<B>) -> http::Response<B> {
        response
    }

    fn refused<B>(response: http::Response<B>) -> http::Response<B> {
        response
    }

    /// The answer passes untouched: its future is boxed as it is.
    fn answer<F, B, E>((): (), answer: F) -> BoxFuture<Result<http::Response<B>, E>>
    where
        F: Future<Output = Result<http::Response<B>, E>> + Send + 'static,
        B: Send + 'static,
        E: Send + 'static,
    {
        Box::pin(answer)
    }
}
