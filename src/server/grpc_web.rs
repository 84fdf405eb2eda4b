//! gRPC-Web for browsers, on a listener of its own (`--grpc-web-listen`): the same chess
//! service behind the same layers (metrics, malformed requests, load shedding, tokens),
//! through the same accept loop (connection bound, handshake timeout, descriptor
//! back-off) and the same TLS, with HTTP/1.1 allowed besides HTTP/2 and CORS in front.
//!
//! Why a listener of its own rather than the main port: the main port speaks only HTTP/2
//! and closes anything else as soon as it reads it, which keeps stray and hostile
//! traffic cheap; browsers send gRPC-Web over HTTP/1.1 as often as over HTTP/2, so the
//! port that accepts it is one an operator opens on purpose. CORS denies every other
//! origin unless `--cors-allow-origin` names it.
//!
//! The listener also serves the game page (`/`, [`super::page`]) in front of it all.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue, Method};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tonic::transport::server::Router;
use tonic_web::GrpcWebLayer;
use tower::layer::util::{Identity, Stack};
use tower_http::cors::{AllowOrigin, CorsLayer};

use super::body_first::BodyFirstLayer;
use super::page::PageLayer;
use super::{Config, ServerError};
use crate::service::ChessService;
use crate::service::edge::auth::{AuthLayer, Gate};
use crate::service::edge::metrics::MetricsLayer;
use crate::service::edge::shed::{InFlight, ShedLayer};
use crate::service::grpc::chess_service_server::ChessServiceServer;
use crate::service::malformed::MalformedLayer;

/// The gRPC-Web listener's flags.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct WebConfig {
    /// An address serving gRPC-Web (HTTP/1.1 and HTTP/2) for browsers: the chess service
    /// with the main port's tokens, TLS, limits and accept loop. Unset: no gRPC-Web.
    #[arg(long, env = "CHESS_GRPC_WEB_LISTEN", value_name = "ADDR")]
    pub grpc_web_listen: Option<String>,
    /// Origins (`https://games.example.com`) whose pages may call the gRPC-Web listener
    /// (CORS), comma-separated; `*` allows any. Unset: none (a page served from another
    /// origin is refused by the browser).
    #[arg(
        long,
        env = "CHESS_CORS_ALLOW_ORIGIN",
        value_name = "ORIGINS",
        value_delimiter = ','
    )]
    pub cors_allow_origin: Vec<String>,
}

/// The tower layers of the gRPC-Web listener, outermost last: the main port's, then
/// gRPC-Web's translation, then CORS (which answers preflights itself), then reading an
/// HTTP/1.1 body before anything answers ([`BodyFirstLayer`]), then the game page
/// ([`PageLayer`], which answers GET requests and passes everything else on).
pub type WebLayers = Stack<
    AuthLayer,
    Stack<
        ShedLayer,
        Stack<
            MalformedLayer,
            Stack<
                MetricsLayer,
                Stack<
                    GrpcWebLayer,
                    Stack<CorsLayer, Stack<BodyFirstLayer, Stack<PageLayer, Identity>>>,
                >,
            >,
        >,
    >,
>;

/// Headers a gRPC-Web call sends (besides the CORS-safelisted ones).
const REQUEST_HEADERS: [&str; 6] = [
    "authorization",
    "content-type",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
    "traceparent",
];

/// Headers a gRPC-Web answer carries that a page's code must be able to read.
const RESPONSE_HEADERS: [&str; 3] = ["grpc-status", "grpc-message", "grpc-status-details-bin"];

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(600);

/// The CORS policy of `--cors-allow-origin`: no origin (the default), any (`*`), or the
/// listed ones; refused at start-up if an origin is not a valid header value.
pub fn cors(origins: &[String]) -> Result<CorsLayer, ServerError> {
    let origins: Vec<&str> = origins
        .iter()
        .map(|o| o.trim())
        .filter(|o| !o.is_empty())
        .collect();
    if origins.is_empty() {
        return Ok(CorsLayer::new());
    }
    let allow = if origins.contains(&"*") {
        AllowOrigin::any()
    } else {
        let parsed = origins
            .iter()
            .map(|o| {
                HeaderValue::from_str(o.trim_end_matches('/')).map_err(|_| {
                    ServerError::Config(format!(
                        "--cors-allow-origin: {o:?} is not an origin (such as https://games.example.com)"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        AllowOrigin::list(parsed)
    };
    Ok(CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([Method::POST, Method::OPTIONS])
        .allow_headers(REQUEST_HEADERS.map(HeaderName::from_static))
        .expose_headers(RESPONSE_HEADERS.map(HeaderName::from_static))
        .max_age(PREFLIGHT_MAX_AGE))
}

/// The main port's TLS for the gRPC-Web listener: the same certificate (reloaded with
/// it) and client verification, with HTTP/1.1 offered beside HTTP/2 (ALPN), so that
/// clients that speak only HTTP/1.1 over TLS connect too.
pub fn tls(main: &TlsAcceptor) -> TlsAcceptor {
    let mut config = (**main.config()).clone();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    TlsAcceptor::from(Arc::new(config))
}

/// Binds `--grpc-web-listen`, if set.
pub async fn bind(config: &Config) -> Result<Option<TcpListener>, ServerError> {
    let Some(addr) = &config.web.grpc_web_listen else {
        return Ok(None);
    };
    TcpListener::bind(addr)
        .await
        .map(Some)
        .map_err(|source| ServerError::Bind {
            addr: addr.clone(),
            source,
        })
}

/// The gRPC-Web listener's router: the game page, then the chess service alone, behind
/// the body read first (HTTP/1.1), CORS, gRPC-Web's translation and the main port's
/// layers.
pub fn router(
    config: &Config,
    gate: Arc<Gate>,
    calls: Arc<InFlight>,
    chess: ChessServiceServer<ChessService>,
) -> Result<Router<WebLayers>, ServerError> {
    Ok(tonic::transport::Server::builder()
        .accept_http1(true)
        .max_concurrent_streams(config.ops.max_concurrent_streams)
        .http2_keepalive_interval(config.ops.keepalive_interval())
        .http2_keepalive_timeout(Some(config.ops.keepalive_timeout()))
        .layer(PageLayer)
        .layer(BodyFirstLayer::new(config.max_request_bytes))
        .layer(cors(&config.web.cors_allow_origin)?)
        .layer(GrpcWebLayer::new())
        .layer(MetricsLayer::default())
        .layer(MalformedLayer)
        .layer(ShedLayer::new(calls))
        .layer(AuthLayer::new(gate))
        .add_service(chess))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_checked_at_start_up() {
        assert!(cors(&[]).is_ok());
        assert!(cors(&["*".into()]).is_ok());
        assert!(cors(&["https://a.example".into(), " https://b.example/ ".into()]).is_ok());
        let refused = cors(&["https://bad\nexample".into()]).expect_err("a newline");
        assert!(
            refused.to_string().contains("--cors-allow-origin"),
            "{refused}"
        );
    }
}
