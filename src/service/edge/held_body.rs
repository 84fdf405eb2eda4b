//! An answer's body that holds something of its call until the answer ends
//! ([`HeldBody`]): load shedding holds the call's slot there, the metrics the call they
//! time. The end is the status trailers passing (a unary answer's data before them has
//! been taken by the connection), or the body ending or failing without them; a body
//! dropped before its end drops what it holds.

use std::pin::Pin;
use std::task::{Context, Poll};

/// What an answer's body holds until the answer ends.
pub trait UntilAnswered {
    /// The answer ended: its status trailers passed (`Some`), or the body ended or failed
    /// without them (`None`).
    fn answered(self, trailers: Option<&http::HeaderMap>);
}

pin_project_lite::pin_project! {
    /// A response body that holds `H` until the answer ends (see [`UntilAnswered`]).
    pub struct HeldBody<B, H> {
        #[pin]
        inner: B,
        held: Option<H>,
    }
}

impl<B, H> HeldBody<B, H> {
    /// `inner`, holding `held` (if any) until it ends.
    pub fn new(inner: B, held: Option<H>) -> HeldBody<B, H> {
        HeldBody { inner, held }
    }
}

impl<B: Default, H> Default for HeldBody<B, H> {
    fn default() -> Self {
        HeldBody::new(B::default(), None)
    }
}

impl<B: http_body::Body, H: UntilAnswered> http_body::Body for HeldBody<B, H> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let polled = this.inner.poll_frame(cx);
        if this.held.is_none() {
            return polled;
        }
        let ended = match &polled {
            Poll::Ready(Some(Ok(frame))) => frame.trailers_ref().map(Some),
            Poll::Ready(None | Some(Err(_))) => Some(None),
            Poll::Pending => None,
        };
        if let Some(trailers) = ended
            && let Some(held) = this.held.take()
        {
            held.answered(trailers);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
