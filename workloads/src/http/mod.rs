//! `http`: a hyper 1.x HTTP/1.1 keep-alive (or HTTP/2) server on the
//! runtime under test, driven open-loop over loopback by the mio client of
//! [`crate::client`] (HTTP/1.1) or its h2 client (HTTP/2).
//!
//! Every runtime serves through hyper's own connection state machines;
//! what differs is only the glue each runtime gives hyper
//! ([`crate::rt::Spawner::serve_http`]):
//! - ours and smol: adapters in [`crate::rt::hyper_io`] — hyper's
//!   `rt::Read`/`rt::Write` over the runtime's socket, an `Executor` over
//!   its spawn (HTTP/2 streams), its timer as hyper's `Timer`;
//! - tokio: hyper-util's `TokioIo`, `TokioExecutor`, `TokioTimer`.
//!
//! The handler is `rpc-fanout`'s model: `fanout = 0` spins one draw of the
//! service time inline, `fanout = k` spawns k subtasks that each spin a
//! draw and fans in. A handler that panics or whose subtask panics answers
//! `500` with an empty body; otherwise `200` with
//! [`crate::client::proto::body`] of
//! `response-bytes` bytes.
//!
//! `proto=h2` serves HTTP/2 through hyper's `http2` builder with the same
//! glue (streams are tasks spawned through the runtime's executor); its
//! client is [`crate::client::h2`], many streams per connection.
//!
//! The client passes what the server needs in one header,
//! [`crate::client::proto::META_HEADER`] (the wire format is the client's):
//! `id seed flags intended_ns` (decimal; `intended_ns` after a base instant
//! both sides share in-process, ignored by `wsbench serve`). A request
//! without it (curl) is served as an unmeasured request with seed 0.

mod run;
mod service;

pub(crate) use run::{accept_loop as serve_accept_loop, host, run_http};
pub(crate) use service::{HttpService, ServerSide};

use crate::dist::Dist;

/// Which HTTP version the server speaks (`--param proto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proto {
    /// HTTP/1.1 with keep-alive, one request in flight per connection.
    H1,
    /// HTTP/2: many concurrent streams per connection.
    H2,
}

/// The `http` workload's server settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Http {
    pub fanout: u64,
    pub service: Dist,
    pub proto: Proto,
    pub body_bytes: usize,
}
