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
//! `500` with an empty body; otherwise `200` with [`body`] of
//! `response-bytes` bytes.
//!
//! `proto=h2` serves HTTP/2 through hyper's `http2` builder with the same
//! glue (streams are tasks spawned through the runtime's executor); its
//! client is [`crate::client::h2`], many streams per connection.
//!
//! The client passes what the server needs in one header, [`META_HEADER`]:
//! `id seed flags intended_ns` (decimal; `intended_ns` after a base instant
//! both sides share in-process, ignored by `wsbench serve`). A request
//! without it (curl) is served as an unmeasured request with seed 0.

mod run;
mod service;

pub(crate) use run::{accept_loop as serve_accept_loop, host, run_http};
pub(crate) use service::{serve_connection, HttpService, ServerSide};

use crate::dist::Dist;

/// The request header with the client's metadata.
pub(crate) const META_HEADER: &str = "x-wsbench";
/// Flag bits of [`META_HEADER`].
pub(crate) const FLAG_MEASURED: u32 = 1;
pub(crate) const FLAG_PANIC: u32 = 2;
/// The client's unrecorded start-up request.
pub(crate) const FLAG_HELLO: u32 = 4;

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

/// The response body of `len` bytes: `abc…z` repeated (byte i is
/// `b'a' + i % 26`), so a client can check every byte cheaply.
pub(crate) fn body(len: usize) -> Vec<u8> {
    (0..len).map(|i| b'a' + (i % 26) as u8).collect()
}

/// What [`META_HEADER`] carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Meta {
    pub id: u64,
    pub seed: u64,
    pub flags: u32,
    pub intended_ns: u64,
}

impl Meta {
    /// Formats the header value.
    pub(crate) fn encode(&self) -> String {
        format!("{} {} {} {}", self.id, self.seed, self.flags, self.intended_ns)
    }

    /// Parses a header value; `None` when it is not four decimal fields.
    pub(crate) fn parse(value: &[u8]) -> Option<Meta> {
        let text = std::str::from_utf8(value).ok()?;
        let mut fields = text.split(' ');
        let mut next = || fields.next()?.parse::<u64>().ok();
        let meta = Meta { id: next()?, seed: next()?, flags: u32::try_from(next()?).ok()?, intended_ns: next()? };
        fields.next().is_none().then_some(meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_round_trips_and_rejects_garbage() {
        let m = Meta { id: 7, seed: u64::MAX, flags: FLAG_MEASURED | FLAG_PANIC, intended_ns: 123_456 };
        assert_eq!(m.encode(), format!("7 {} 3 123456", u64::MAX));
        assert_eq!(Meta::parse(m.encode().as_bytes()), Some(m));
        assert_eq!(Meta::parse(b"1 2 3"), None);
        assert_eq!(Meta::parse(b"1 2 3 4 5"), None);
        assert_eq!(Meta::parse(b"1 2 x 4"), None);
    }

    #[test]
    fn body_is_the_alphabet_repeated() {
        assert_eq!(body(3), b"abc");
        let b = body(28);
        assert_eq!(&b[24..], b"yzab");
    }
}
