//! The edge: what every request meets before the chess service, and what the process
//! reports about its calls. A part of [`crate::service`] (nothing below the service may
//! name it): the server stacks these layers around the service's routes, and the service
//! names the edge only for a call's [`auth::Caller`], its tenant, and the metrics it
//! records. Each concern has its file:
//! - [`around_call`]: the one tower layer that runs something before and after each
//!   call, which load shedding, auth and the gRPC metrics are made of;
//! - [`held_body`]: an answer's body that holds something of its call (a slot, a timer)
//!   until the answer ends;
//! - [`shed`]: the server-wide limit of calls in flight (load shedding);
//! - [`auth`]: who is calling (bearer tokens, roles, tenants, quotas), as a layer;
//! - [`metrics`]: Prometheus metrics (go-grpc-prometheus names, the store, the process),
//!   with the layer that counts and times every call;
//! - [`refusal_log`]: refusals logged at most a few lines a second per reason, and
//!   counted;
//! - [`trace_context`]: a call's span continues the caller's W3C trace;
//! - `process_stats`: the process's own figures (`/proc/self`) for the metrics.

pub mod around_call;
pub mod auth;
pub mod held_body;
pub mod metrics;
mod process_stats;
pub mod refusal_log;
pub mod shed;
pub mod trace_context;
