//! The game page at `/` of the gRPC-Web listener: an HTML page, its script and its style
//! sheet, built from `clients/typescript/page/` (the TypeScript client's browser entry,
//! bundled by esbuild) into `assets/page/` and shipped in the binary, so that a person can
//! open a game (`/?game=GAME_ID`) in a browser and watch it.
//!
//! Why a layer in front of everything else on that listener: the page is not a gRPC call,
//! so it must not need a token (the page asks the person for one and sends it with its
//! calls), must not count as a call in the metrics, and must not wait for the body read
//! of [`super::body_first`]. Only GET and HEAD requests and the page's own paths are
//! answered here; every other request (gRPC-Web's POSTs, CORS preflights) goes on to the
//! gRPC-Web service untouched, as before the page existed.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{
    ALLOW, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS,
};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{Either, Full};
use pin_project_lite::pin_project;
use tower::{Layer, Service};

/// Scripts, styles and calls from this origin only; nothing inline, no frames, no forms.
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// One file of the page.
struct Resource {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

/// The page's files, by path. The HTML names the other two.
const RESOURCES: [Resource; 3] = [
    Resource {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_bytes!("../../assets/page/index.html"),
    },
    Resource {
        path: "/page.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../assets/page/page.js"),
    },
    Resource {
        path: "/page.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../../assets/page/page.css"),
    },
];

/// Answers the page's requests in front of the gRPC-Web service.
#[derive(Clone, Copy, Debug, Default)]
pub struct PageLayer;

impl<S> Layer<S> for PageLayer {
    type Service = Page<S>;

    fn layer(&self, inner: S) -> Page<S> {
        Page { inner }
    }
}

/// The service of [`PageLayer`].
#[derive(Clone, Debug)]
pub struct Page<S> {
    inner: S,
}

impl<S, B, Req> Service<Request<Req>> for Page<S>
where
    S: Service<Request<Req>, Response = Response<B>>,
{
    type Response = Response<Either<B, Full<Bytes>>>;
    type Error = S::Error;
    type Future = PageFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Req>) -> Self::Future {
        match answer(request.method(), request.uri().path()) {
            Some(response) => PageFuture::Answered {
                response: Some(response),
            },
            None => PageFuture::Inner {
                future: self.inner.call(request),
            },
        }
    }
}

pin_project! {
    /// The gRPC-Web service's answer, or the page's own.
    #[project = PageFutureProj]
    pub enum PageFuture<F> {
        /// A call for the gRPC-Web service.
        Inner { #[pin] future: F },
        /// A page request, answered at once.
        Answered { response: Option<Response<Full<Bytes>>> },
    }
}

impl<F, B, E> Future for PageFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<Either<B, Full<Bytes>>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            PageFutureProj::Inner { future } => future
                .poll(cx)
                .map(|answer| answer.map(|r| r.map(Either::Left))),
            PageFutureProj::Answered { response } => {
                let response = response
                    .take()
                    .unwrap_or_else(|| plain(StatusCode::INTERNAL_SERVER_ERROR, "polled twice\n"));
                Poll::Ready(Ok(response.map(Either::Right)))
            }
        }
    }
}

/// The page's answer to a request, or `None` for one the gRPC-Web service answers: a
/// page file for GET and HEAD, 405 for any other method on a page path, 404 for GET and
/// HEAD of any other path (gRPC-Web calls are POSTs).
fn answer(method: &Method, path: &str) -> Option<Response<Full<Bytes>>> {
    let readable = method == Method::GET || method == Method::HEAD;
    match RESOURCES.iter().find(|r| r.path == path) {
        Some(resource) if readable => Some(file(resource)),
        Some(_) => {
            let mut response = plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed: the game page is read with GET\n",
            );
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            Some(response)
        }
        None if readable => Some(plain(
            StatusCode::NOT_FOUND,
            "not found: the game page is at /, a game at /?game=GAME_ID\n",
        )),
        None => None,
    }
}

fn file(resource: &Resource) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(resource.body)));
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static(resource.content_type),
    );
    // The page changes with the binary: revalidate rather than keep a stale copy.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    secure(response)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    secure(response)
}

/// The headers every answer of the page carries.
fn secure(mut response: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    let headers = response.headers_mut();
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
    );
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(method: Method, path: &str) -> Option<StatusCode> {
        answer(&method, path).map(|r| r.status())
    }

    #[test]
    fn page_paths_and_methods() {
        assert_eq!(status(Method::GET, "/"), Some(StatusCode::OK));
        assert_eq!(status(Method::HEAD, "/page.js"), Some(StatusCode::OK));
        assert_eq!(status(Method::GET, "/page.css"), Some(StatusCode::OK));
        assert_eq!(
            status(Method::POST, "/"),
            Some(StatusCode::METHOD_NOT_ALLOWED)
        );
        assert_eq!(
            status(Method::OPTIONS, "/page.js"),
            Some(StatusCode::METHOD_NOT_ALLOWED)
        );
        assert_eq!(status(Method::GET, "/nothing"), Some(StatusCode::NOT_FOUND));
        assert_eq!(
            status(Method::GET, "/chess.v1.ChessService/GetGame"),
            Some(StatusCode::NOT_FOUND)
        );
        // gRPC-Web calls and preflights go on to the service.
        assert_eq!(status(Method::POST, "/chess.v1.ChessService/GetGame"), None);
        assert_eq!(status(Method::OPTIONS, "/chess.v1.ChessService/Play"), None);
    }

    #[test]
    fn every_answer_is_typed_and_locked_down() {
        for path in ["/", "/page.js", "/page.css", "/missing"] {
            let response = answer(&Method::GET, path).expect("answered");
            let headers = response.headers();
            assert!(headers.contains_key(CONTENT_TYPE), "{path}");
            assert_eq!(headers[X_CONTENT_TYPE_OPTIONS], "nosniff", "{path}");
            assert_eq!(
                headers[CONTENT_SECURITY_POLICY], CONTENT_SECURITY_POLICY_VALUE,
                "{path}"
            );
        }
    }

    #[test]
    fn the_html_loads_the_script_and_style_it_is_served_with() {
        let html = std::str::from_utf8(RESOURCES[0].body).expect("UTF-8");
        assert!(html.contains(r#"src="/page.js""#), "{html}");
        assert!(html.contains(r#"href="/page.css""#), "{html}");
        assert!(!html.contains("<script>"), "no inline script: {html}");
        assert!(!html.contains("<style"), "no inline style: {html}");
    }
}
