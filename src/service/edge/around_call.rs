//! The one tower layer that runs something around each call: [`AroundCallLayer`] over an
//! [`AroundCall`]. Load shedding ([`super::shed`]), auth ([`super::auth`]) and the gRPC
//! metrics ([`super::metrics`]) are each an [`AroundCall`]; the tower plumbing (the
//! `Layer`, the `Service`, readiness, the boxed future) is written once, here.
//!
//! A call goes: [`AroundCall::before`] sees the request (and may change its extensions);
//! it either refuses the call with a status, answered at once without calling the inner
//! service ([`AroundCall::refused`] shapes that answer), or returns what the call holds
//! until it is answered (a slot, a started timer). The inner service is then called; once
//! its answer comes, [`AroundCall::after`] makes the response the caller gets from it and
//! what was held (a body that keeps a slot until the trailers pass, say). An inner error
//! drops what was held. One boxed future a call, as each layer had before.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Something done around each call: before it (admit or refuse), and after its answer.
pub trait AroundCall: Clone {
    /// What an admitted call holds from [`before`](Self::before) to
    /// [`after`](Self::after).
    type Held: Send + 'static;

    /// The body of the answer the caller gets, around the inner service's body `B`.
    type Body<B>;

    /// Before the inner service: what the call holds, or the status that refuses it.
    fn before<R>(&self, request: &mut http::Request<R>) -> Result<Self::Held, tonic::Status>;

    /// The inner service's answer made the caller's, with what the call held.
    fn after<B>(held: Self::Held, response: http::Response<B>) -> http::Response<Self::Body<B>>;

    /// A refusal's answer (the status of [`before`](Self::before), as HTTP) made the
    /// caller's.
    fn refused<B>(response: http::Response<B>) -> http::Response<Self::Body<B>>;

    /// The future of an admitted call: the inner service's `answer`, then
    /// [`after`](Self::after). An `after` that changes nothing may box `answer` as it is
    /// instead, without a state machine around it (auth: one move of the inner future
    /// fewer per call).
    fn answer<F, B, E>(
        held: Self::Held,
        answer: F,
    ) -> BoxFuture<Result<http::Response<Self::Body<B>>, E>>
    where
        F: Future<Output = Result<http::Response<B>, E>> + Send + 'static,
        Self::Body<B>: Send + 'static,
        E: Send + 'static,
    {
        Box::pin(async move {
            let response = answer.await?;
            Ok(Self::after(held, response))
        })
    }
}

/// The tower layer of an [`AroundCall`], for `tonic::transport::Server::builder().layer(..)`.
#[derive(Clone, Copy, Default)]
pub struct AroundCallLayer<A> {
    around: A,
}

impl<A> AroundCallLayer<A> {
    /// A layer that runs `around` around each call.
    pub fn new(around: A) -> AroundCallLayer<A> {
        AroundCallLayer { around }
    }
}

impl<S, A: Clone> tower::Layer<S> for AroundCallLayer<A> {
    type Service = AroundCallService<S, A>;

    fn layer(&self, inner: S) -> AroundCallService<S, A> {
        AroundCallService {
            inner,
            around: self.around.clone(),
        }
    }
}

/// The service an [`AroundCallLayer`] wraps around the server's routes.
#[derive(Clone)]
pub struct AroundCallService<S, A> {
    inner: S,
    around: A,
}

/// The future of a call through the layer: one box a call.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

impl<S, A, ReqBody, ResBody> tower::Service<http::Request<ReqBody>> for AroundCallService<S, A>
where
    A: AroundCall,
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResBody: Default + Send + 'static,
    A::Body<ResBody>: Send + 'static,
{
    type Response = http::Response<A::Body<ResBody>>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<ReqBody>) -> Self::Future {
        let held = match self.around.before(&mut request) {
            Ok(held) => held,
            Err(status) => {
                return Box::pin(std::future::ready(Ok(A::refused(status.into_http()))));
            }
        };
        // The clone is not ready; the one polled ready serves this call.
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        A::answer(held, ready.call(request))
    }
}
