//! The glue every call goes through: the deadline from `grpc-timeout`, one tracing span
//! per call (method, game, status code, latency), the count of calls in flight that
//! shutdown waits for, and the mapping of a [`ServiceError`] to a `tonic::Status`.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::Instant;
use tonic::{Request, Response};
use tracing::Instrument as _;

use super::answer_budget::{DoesNotFit, HeldAnswer, Reservation};
use super::log_text::Clean;
use super::{ChessService, ServiceError};
use crate::pb;
use crate::pb::legal_moves_request::Position as RequestedPosition;
use crate::service::edge::auth::Caller;
use crate::service::edge::refusal_log;

/// The call's deadline from its `grpc-timeout` header, set a little early (a tenth of
/// the timeout, at most 20 ms): tonic's own timers for the same header, on the server
/// and in tonic clients, report CANCELLED ("Timeout expired"), so our DEADLINE_EXCEEDED
/// must be sent, and arrive, before they fire, even on a busy machine.
pub(super) fn deadline_of<T>(request: &Request<T>) -> Option<Instant> {
    let value = request.metadata().get("grpc-timeout")?.to_str().ok()?;
    let timeout = parse_grpc_timeout(value)?;
    let margin = (timeout / 10).min(Duration::from_millis(20));
    Some(Instant::now() + timeout - margin)
}

/// Parses a gRPC timeout value: up to 8 digits and a unit (H, M, S, m, u, n).
fn parse_grpc_timeout(value: &str) -> Option<Duration> {
    if value.len() < 2 || value.len() > 9 {
        return None;
    }
    let (digits, unit) = value.split_at(value.len() - 1);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.checked_mul(3600)?),
        "M" => Duration::from_secs(n.checked_mul(60)?),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// Tracks one call: counts it in flight, and logs it as cancelled if it is dropped
/// before it finished (the caller hung up).
struct CallGuard {
    in_flight: Arc<AtomicUsize>,
    span: tracing::Span,
    start: Instant,
    finished: bool,
}

impl CallGuard {
    fn new(in_flight: &Arc<AtomicUsize>, span: tracing::Span) -> CallGuard {
        in_flight.fetch_add(1, Ordering::SeqCst);
        CallGuard {
            in_flight: in_flight.clone(),
            span,
            start: Instant::now(),
            finished: false,
        }
    }

    fn finish(&mut self, result: &Result<(), &ServiceError>) {
        self.finished = true;
        let _entered = self.span.enter();
        let (code, level) = match result {
            Ok(()) => (tonic::Code::Ok, tracing::Level::DEBUG),
            Err(e) => match e.code() {
                code @ (tonic::Code::Internal | tonic::Code::DataLoss | tonic::Code::Unknown) => {
                    (code, tracing::Level::ERROR)
                }
                code => (code, tracing::Level::INFO),
            },
        };
        // Recording makes the log layer format the field into the span's text, so it is
        // done only when the event below is logged (a success logs at DEBUG, off by
        // default): the log lines are the same, a success costs less.
        let logged = match level {
            tracing::Level::DEBUG => tracing::enabled!(tracing::Level::DEBUG),
            tracing::Level::ERROR => tracing::enabled!(tracing::Level::ERROR),
            _ => tracing::enabled!(tracing::Level::INFO),
        };
        // Refusals: at most a few lines a second per reason (see `refusal_log`).
        let left_out = match result {
            Err(e) if logged => refusal_log::admit(e.error_reason()),
            _ => Some(0),
        };
        let Some(left_out) = left_out.filter(|_| logged) else {
            return;
        };
        let latency_us = self.start.elapsed().as_micros() as u64;
        self.span
            .record("code", tracing::field::display(code_name(code)));
        self.span.record("latency_us", latency_us);
        match result {
            Ok(()) => tracing::debug!("ok"),
            // Messages quote what the caller sent (ids, move text): escaped, bounded.
            Err(e) if level == tracing::Level::ERROR => tracing::error!(
                reason = e.reason(),
                left_out_since_last_line = left_out,
                "{}",
                Clean::new(&e.to_string(), 512)
            ),
            Err(e) => tracing::info!(
                reason = e.reason(),
                left_out_since_last_line = left_out,
                "{}",
                Clean::new(&e.to_string(), 512)
            ),
        }
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        if !self.finished {
            let latency_us = self.start.elapsed().as_micros() as u64;
            self.span.record("code", "CANCELLED");
            self.span.record("latency_us", latency_us);
            let _entered = self.span.enter();
            tracing::info!("the caller went away before the call finished");
        }
    }
}

/// The canonical upper-case name of a gRPC code, for logs.
fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

impl ChessService {
    /// Runs `handler` on the request and its caller as one call ([`Self::call`]) under
    /// the deadline the caller sent, its span naming the request's game by its key (a
    /// tenant's game shows its tenant in the log, never in the answer).
    pub(super) async fn serve<Req, T, Fut>(
        &self,
        method: &'static str,
        request: Request<Req>,
        handler: impl FnOnce(Req, Caller) -> Fut,
    ) -> Result<Response<T>, tonic::Status>
    where
        Req: AboutGame,
        T: Weigh,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        self.serve_large(method, request, 0, handler).await
    }

    /// [`Self::serve`] for a call whose answer can be large (ListGames): `ahead` bytes are
    /// taken from the budget of unsent answers before the work starts, so that callers
    /// who never read cannot make the server build more answers than it keeps (the call
    /// is shed at once instead), and then fitted to the answer built.
    pub(super) async fn serve_large<Req, T, Fut>(
        &self,
        method: &'static str,
        request: Request<Req>,
        ahead: usize,
        handler: impl FnOnce(Req, Caller) -> Fut,
    ) -> Result<Response<T>, tonic::Status>
    where
        Req: AboutGame,
        T: Weigh,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let deadline = deadline_of(&request);
        let caller = caller_of(&request);
        let parent = crate::service::edge::trace_context::parent_of(&request);
        let req = request.into_inner();
        let id = logged_key(&caller, req.game_id());
        let Some(reserved) = self.answers.reserve(ahead) else {
            let full = self.answers_full();
            let work = async { Err::<T, _>(full) };
            return self
                .call(method, &caller, &id, deadline, parent, None, work)
                .await;
        };
        let work = handler(req, caller.clone());
        self.call(method, &caller, &id, deadline, parent, Some(reserved), work)
            .await
    }

    fn answers_full(&self) -> ServiceError {
        ServiceError::UnsentAnswersFull {
            limit_mib: self.answers.limit_mib(),
        }
    }

    /// Runs one call inside its span (a child of the caller's, when the call carries
    /// one and traces are exported), under its deadline, and maps its error. A large
    /// answer holds its bytes in the budget of unsent answers (from `ahead`, if bytes were
    /// reserved before the work), or is shed when they do not fit; the hold rides in the
    /// answer's extensions to the load-shedding layer.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn call<T: Weigh>(
        &self,
        method: &'static str,
        caller: &Caller,
        game_id: &str,
        deadline: Option<Instant>,
        parent: Option<opentelemetry::Context>,
        ahead: Option<Reservation>,
        work: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<Response<T>, tonic::Status> {
        let span = tracing::info_span!(
            "rpc",
            method,
            caller = %caller.name,
            game_id = %Clean::id(game_id),
            code = tracing::field::Empty,
            latency_us = tracing::field::Empty
        );
        crate::service::edge::trace_context::continue_trace(&span, parent);
        let mut guard = CallGuard::new(&self.in_flight, span.clone());
        let work = async {
            match deadline {
                Some(deadline) => tokio::time::timeout_at(deadline, work)
                    .await
                    .unwrap_or(Err(ServiceError::DeadlineExceeded { method })),
                None => work.await,
            }
        };
        let result = work.instrument(span).await.and_then(|answer| {
            match self.answers.hold(answer.encoded_bytes(), ahead) {
                Ok(held) => Ok((answer, held)),
                Err(DoesNotFit) => Err(self.answers_full()),
            }
        });
        guard.finish(&result.as_ref().map(|_| ()));
        let (answer, held) = result.map_err(|e| {
            // Counted here, where the caller is answered, not in the conversion.
            crate::service::edge::metrics::refused(e.reason());
            tonic::Status::from(e)
        })?;
        let mut response = Response::new(answer);
        if let Some(held) = held {
            response.extensions_mut().insert(HeldAnswer::new(held));
        }
        Ok(response)
    }
}

/// How many bytes an answer takes encoded, for the budget of unsent answers.
pub(super) trait Weigh {
    /// The encoded length (0 for a stream: its messages are sent as they come, each
    /// small, and a spectator's backlog is bounded where it is kept).
    fn encoded_bytes(&self) -> usize;
}

macro_rules! weigh_messages {
    ($($answer:ty),* $(,)?) => {
        $(impl Weigh for $answer {
            fn encoded_bytes(&self) -> usize {
                prost::Message::encoded_len(self)
            }
        })*
    };
}

weigh_messages!(
    pb::AddTimeResponse,
    pb::ClaimDrawResponse,
    pb::DeleteGameResponse,
    pb::GetGameResponse,
    pb::ImportGameResponse,
    pb::ListGamesResponse,
    pb::NewGameResponse,
    pb::OfferDrawResponse,
    pb::PerftResponse,
    pb::PlayResponse,
    pb::ResignResponse,
    pb::RespondToDrawResponse,
    pb::UndoResponse,
    pb::WinnabilityResponse,
    super::wire::EncodedLegalMoves,
);

impl Weigh for super::watch::WatchStream {
    fn encoded_bytes(&self) -> usize {
        0
    }
}

/// The caller the authentication layer admitted ([`Caller::unidentified`], the least
/// role, if the request did not pass it).
pub(super) fn caller_of<T>(request: &Request<T>) -> Caller {
    request
        .extensions()
        .get::<Caller>()
        .cloned()
        .unwrap_or_else(Caller::unidentified)
}

/// What a call's span names its game by: the key of the caller's game ("" for none).
pub(super) fn logged_key(caller: &Caller, id: &str) -> String {
    if id.is_empty() {
        return String::new();
    }
    super::game_key::GameKey::new(caller.tenant.as_ref(), id).encode()
}

/// The game a request is about, for its call's span ("" when it names none).
pub(super) trait AboutGame {
    fn game_id(&self) -> &str;
}

macro_rules! about_game_by_field {
    ($($request:ty),* $(,)?) => {
        $(impl AboutGame for $request {
            fn game_id(&self) -> &str {
                &self.game_id
            }
        })*
    };
}

about_game_by_field!(
    pb::NewGameRequest,
    pb::GetGameRequest,
    pb::PlayRequest,
    pb::UndoRequest,
    pb::ResignRequest,
    pb::OfferDrawRequest,
    pb::RespondToDrawRequest,
    pb::ClaimDrawRequest,
    pb::AddTimeRequest,
    pb::WatchGameRequest,
    pb::ImportGameRequest,
    pb::DeleteGameRequest,
);

impl AboutGame for pb::ListGamesRequest {
    fn game_id(&self) -> &str {
        ""
    }
}

impl AboutGame for pb::LegalMovesRequest {
    fn game_id(&self) -> &str {
        match &self.position {
            Some(RequestedPosition::GameId(id)) => id,
            _ => "",
        }
    }
}

impl AboutGame for pb::WinnabilityRequest {
    fn game_id(&self) -> &str {
        match &self.position {
            Some(pb::winnability_request::Position::GameId(id)) => id,
            _ => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_parse() {
        assert_eq!(parse_grpc_timeout("300m"), Some(Duration::from_millis(300)));
        assert_eq!(parse_grpc_timeout("2S"), Some(Duration::from_secs(2)));
        assert_eq!(parse_grpc_timeout("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(
            parse_grpc_timeout("99999999u"),
            Some(Duration::from_micros(99_999_999))
        );
        assert_eq!(parse_grpc_timeout("m"), None);
        assert_eq!(parse_grpc_timeout("123456789S"), None, "at most 8 digits");
        assert_eq!(parse_grpc_timeout("10x"), None);
    }
}
