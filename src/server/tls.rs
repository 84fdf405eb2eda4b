//! TLS on the server's own listener: rustls with a certificate resolver that reloads the
//! certificate and key when their files change (a renewed certificate, a rotated
//! Kubernetes Secret) with no restart, and optional mutual TLS.
//!
//! Why our own acceptor rather than tonic's `tls_config`: tonic's takes a certificate
//! once; a resolver on a rustls `ServerConfig` we build ourselves can swap it. The files
//! are polled (size and modification time) rather than watched with inotify, because a
//! Kubernetes Secret volume is updated by swapping a symlink, which file watches miss.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::crypto::CryptoProvider;
use tokio_rustls::rustls::crypto::ring as ring_provider;
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{RootCertStore, ServerConfig};

/// How often the certificate files are checked for a change.
const RELOAD_POLL: Duration = Duration::from_secs(1);

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate file cannot be read or holds no PEM certificate.
    #[error("cannot read PEM certificates from {path}: {why}")]
    Certs {
        /// The certificate file.
        path: String,
        /// What went wrong.
        why: String,
    },
    /// The key file cannot be read or holds no PEM private key.
    #[error("cannot read a PEM private key from {path}: {why}")]
    Key {
        /// The key file.
        path: String,
        /// What went wrong.
        why: String,
    },
    /// The private key does not belong to the certificate.
    #[error("the key in {key} does not fit the certificate in {cert}: {why}")]
    Mismatch {
        /// The certificate file.
        cert: String,
        /// The key file.
        key: String,
        /// What went wrong.
        why: String,
    },
    /// The client CA file cannot be read or used to verify client certificates.
    #[error("cannot use the client CA {path}: {why}")]
    ClientCa {
        /// The client CA file.
        path: String,
        /// What went wrong.
        why: String,
    },
    /// rustls refused the configuration.
    #[error("cannot build the TLS configuration: {0}")]
    Config(String),
}

/// The files of the server's TLS identity.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// PEM certificate chain, the leaf first.
    pub cert: PathBuf,
    /// PEM private key of the leaf certificate.
    pub key: PathBuf,
    /// CA whose certificates clients must present (mutual TLS), if any.
    pub client_ca: Option<PathBuf>,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(ring_provider::default_provider())
}

/// Every certificate of a PEM file, in order (the leaf first).
fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |why: String| TlsError::Certs {
        path: path.display().to_string(),
        why,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no CERTIFICATE section".into()));
    }
    Ok(certs)
}

/// The certificate chain and key of `files`, checked to belong together.
fn load_certified_key(files: &TlsFiles) -> Result<CertifiedKey, TlsError> {
    let certs = read_certs(&files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| TlsError::Key {
        path: files.key.display().to_string(),
        why: e.to_string(),
    })?;
    CertifiedKey::from_der(certs, key, &provider()).map_err(|e| TlsError::Mismatch {
        cert: files.cert.display().to_string(),
        key: files.key.display().to_string(),
        why: e.to_string(),
    })
}

/// Answers every handshake with the certificate loaded last.
#[derive(Debug)]
pub struct ReloadingCert {
    current: RwLock<Arc<CertifiedKey>>,
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        )
    }
}

/// What identifies a file's version: its size and modification time.
fn stamp(path: &Path) -> Option<(u64, SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

impl ReloadingCert {
    /// Polls the files of `files` and swaps in a changed certificate once it loads (a
    /// pair caught half-written is tried again at the next change; until then the old
    /// certificate serves). Ends when the resolver is dropped.
    fn watch(self: &Arc<Self>, files: TlsFiles) {
        let resolver = Arc::downgrade(self);
        let mut seen = (stamp(&files.cert), stamp(&files.key));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(RELOAD_POLL).await;
                let Some(resolver) = resolver.upgrade() else {
                    return;
                };
                let now = (stamp(&files.cert), stamp(&files.key));
                if now == seen {
                    continue;
                }
                match load_certified_key(&files) {
                    Ok(key) => {
                        *resolver.current.write().unwrap_or_else(|p| p.into_inner()) =
                            Arc::new(key);
                        seen = now;
                        tracing::info!(cert = %files.cert.display(), "TLS certificate reloaded");
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "the changed TLS certificate is refused; the previous one still serves");
                        seen = now;
                    }
                }
            }
        });
    }
}

/// The rustls acceptor for `files` (the accept loop, `super::accept`, runs its handshakes
/// under `--handshake-timeout-secs`): HTTP/2 only, the reloading certificate, client
/// certificates required when a client CA is given. Must be called inside the runtime
/// (it starts the reload task).
pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, TlsError> {
    let resolver = Arc::new(ReloadingCert {
        current: RwLock::new(Arc::new(load_certified_key(files)?)),
    });
    resolver.watch(files.clone());
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let bad = |why: String| TlsError::ClientCa {
                path: ca.display().to_string(),
                why,
            };
            let mut roots = RootCertStore::empty();
            for cert in read_certs(ca)? {
                roots.add(cert).map_err(|e| bad(e.to_string()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| bad(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
