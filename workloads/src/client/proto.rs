//! What the client says and what it accepts: one [`Protocol`] per wire
//! format. Every response is checked; a well-framed bad answer (status,
//! length, body) is a failed request on a connection that stays usable,
//! a badly framed one ([`Parsed::Invalid`]) ends the connection.
//!
//! The HTTP wire vocabulary lives here too ([`META_HEADER`], its flags,
//! [`Meta`], [`body`]): the `http` workload's server reads it from this
//! module, so the load generator imports nothing of the server.

use std::time::Instant;

use crate::loadgen::Request;
use crate::recorders::nanos;

/// The request header with the client's metadata.
pub(crate) const META_HEADER: &str = "x-wsbench";
/// Flag bits of [`META_HEADER`].
pub(crate) const FLAG_MEASURED: u32 = 1;
pub(crate) const FLAG_PANIC: u32 = 2;
/// The client's unrecorded start-up request.
pub(crate) const FLAG_HELLO: u32 = 4;

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
        let mut out = Vec::with_capacity(64);
        self.encode_into(&mut out);
        String::from_utf8(out).expect("decimal digits and spaces")
    }

    /// Appends the header value to `out`, with no allocation of its own
    /// (the HTTP/1.1 client writes it once per request).
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        let fields = [self.id, self.seed, u64::from(self.flags), self.intended_ns];
        for (k, v) in fields.into_iter().enumerate() {
            if k > 0 {
                out.push(b' ');
            }
            push_decimal(v, out);
        }
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

/// Appends `v` in decimal.
fn push_decimal(mut v: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// What the bytes received so far hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// Not a whole response yet.
    Partial,
    /// One whole response of `len` bytes; `ok` when it is the expected
    /// answer; `close` when the server will close the connection after it.
    Response { len: usize, ok: bool, close: bool },
    /// Not this protocol: the connection cannot continue.
    Invalid(String),
}

/// A request/response wire format with one request in flight per
/// connection.
pub(crate) trait Protocol: Sync {
    /// Name for messages (`HTTP/1.1`, `tcp-rpc`).
    fn name(&self) -> &'static str;
    /// Appends request `r` to `out`; `hello` marks the unrecorded start-up
    /// request. `base` is the instant `intended` is sent relative to.
    fn encode(&self, r: &Request, base: Instant, hello: bool, out: &mut Vec<u8>);
    /// Parses the response to request `id` at the start of `buf`.
    fn parse(&self, buf: &[u8], id: u64) -> Parsed;
}

fn flags(r: &Request, hello: bool) -> u32 {
    let mut f = 0;
    if r.measured {
        f |= FLAG_MEASURED;
    }
    if r.must_panic {
        f |= FLAG_PANIC;
    }
    if hello {
        f |= FLAG_HELLO;
    }
    f
}

/// HTTP/1.1 `GET /` with keep-alive; the expected answer is `200` with a
/// `Content-Length` framed body equal to [`body`]`(body_bytes)`.
pub(crate) struct Http1 {
    expected: Vec<u8>,
    host: String,
}

/// Headers a response may have (hyper sends content-length and date).
const MAX_RESPONSE_HEADERS: usize = 32;

impl Http1 {
    pub(crate) fn new(body_bytes: usize, host: String) -> Http1 {
        Http1 { expected: body(body_bytes), host }
    }
}

impl Protocol for Http1 {
    fn name(&self) -> &'static str {
        "HTTP/1.1"
    }

    fn encode(&self, r: &Request, base: Instant, hello: bool, out: &mut Vec<u8>) {
        let meta = Meta {
            id: r.id,
            seed: r.seed,
            flags: flags(r, hello),
            intended_ns: nanos(r.intended.saturating_duration_since(base)),
        };
        out.extend_from_slice(b"GET / HTTP/1.1\r\nhost: ");
        out.extend_from_slice(self.host.as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(META_HEADER.as_bytes());
        out.extend_from_slice(b": ");
        meta.encode_into(out);
        out.extend_from_slice(b"\r\n\r\n");
    }

    fn parse(&self, buf: &[u8], _id: u64) -> Parsed {
        let mut headers = [httparse::EMPTY_HEADER; MAX_RESPONSE_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        let head_len = match resp.parse(buf) {
            Ok(httparse::Status::Partial) => return Parsed::Partial,
            Ok(httparse::Status::Complete(n)) => n,
            Err(e) => return Parsed::Invalid(format!("not an HTTP/1.1 response ({e})")),
        };
        let mut length = None;
        let mut close = false;
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                match std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse::<usize>().ok()) {
                    Some(n) => length = Some(n),
                    None => return Parsed::Invalid("unreadable content-length".into()),
                }
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                return Parsed::Invalid("chunked response (expected content-length framing)".into());
            } else if h.name.eq_ignore_ascii_case("connection") && h.value.eq_ignore_ascii_case(b"close") {
                close = true;
            }
        }
        let Some(length) = length else {
            return Parsed::Invalid("response without content-length".into());
        };
        let Some(body) = buf.get(head_len..head_len + length) else {
            return Parsed::Partial;
        };
        let ok = resp.code == Some(200) && body == self.expected.as_slice();
        Parsed::Response { len: head_len + length, ok, close }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: u64) -> Request {
        let now = Instant::now();
        Request { id, intended: now, sent: now, seed: 9, measured: true, must_panic: false }
    }

    #[test]
    fn meta_round_trips_and_rejects_garbage() {
        let m = Meta { id: 7, seed: u64::MAX, flags: FLAG_MEASURED | FLAG_PANIC, intended_ns: 123_456 };
        assert_eq!(m.encode(), format!("7 {} 3 123456", u64::MAX));
        assert_eq!(Meta::parse(m.encode().as_bytes()), Some(m));
        let zero = Meta::default();
        assert_eq!(zero.encode(), "0 0 0 0");
        assert_eq!(Meta::parse(zero.encode().as_bytes()), Some(zero));
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

    #[test]
    fn http_requests_carry_the_metadata_header() {
        let p = Http1::new(4, "127.0.0.1:80".into());
        let r = req(5);
        let mut out = Vec::new();
        p.encode(&r, r.intended, false, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "GET / HTTP/1.1\r\nhost: 127.0.0.1:80\r\nx-wsbench: 5 9 1 0\r\n\r\n");
    }

    #[test]
    fn http_responses_are_framed_and_checked() {
        let p = Http1::new(4, "h".into());
        let good = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\ndate: x\r\n\r\nabcdHTTP/1.1";
        // Head 17 + 19 + 9 + 2 = 47 bytes, body 4: the next response's
        // first bytes are left for later.
        assert_eq!(p.parse(good, 0), Parsed::Response { len: 51, ok: true, close: false });
        assert_eq!(p.parse(&good[..49], 0), Parsed::Partial);
        assert_eq!(p.parse(&good[..40], 0), Parsed::Partial);
        assert_eq!(p.parse(&good[..10], 0), Parsed::Partial);
        let wrong_body = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nabce";
        assert_eq!(p.parse(wrong_body, 0), Parsed::Response { len: wrong_body.len(), ok: false, close: false });
        let error = b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
        assert_eq!(p.parse(error, 0), Parsed::Response { len: error.len(), ok: false, close: true });
        assert!(matches!(p.parse(b"SSH-2.0-OpenSSH\r\n", 0), Parsed::Invalid(_)));
        assert!(matches!(p.parse(b"HTTP/1.1 200 OK\r\n\r\n", 0), Parsed::Invalid(_)));
    }
}
