//! The client-bias check (issue 26): a minimal HTTP/1.1 client — one
//! thread, one keep-alive connection, one request at a time, plain epoll
//! (mio) — whose latencies are the floor that `wsbench load` is held to on
//! the same server and machine. It has no backlog, no schedule bookkeeping
//! and no pacing machinery: it sleeps until shortly before each arrival,
//! spins until it is due, sends, and blocks in epoll until the answer is
//! whole. `doctor --calibrate` and `workloads/examples/refclient.rs` call
//! [`latency_floor`]; `scripts/client-bias.sh` compares it with `load`.
//!
//! Its latency runs from the instant just before its own send, not from
//! the intended time: its sleep may overshoot the arrival (the kernel's
//! 50 µs default timer slack plus the wake-up, which measured 36–45 µs of
//! p50 on the 2-vCPU VM), and a floor must not carry its own pacing error.
//! `wsbench load` is measured from the intended time, so the difference of
//! the two p50s is everything the generator adds: pacing, bookkeeping and
//! its event loop. How late the reference itself sent is reported apart
//! ([`Floor::send_lag_p50_ns`]).

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::loadgen::wait_until;
use crate::recorders::{nanos, new_histogram};
use crate::Error;

/// The first tenth of the arrivals warm the connection and are not recorded.
const WARMUP_SHARE: usize = 10;
/// No answer within this is an error (the server is gone or not HTTP).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
const READ_CHUNK: usize = 16 * 1024;
const MAX_HEADERS: usize = 32;
const CONN: Token = Token(0);

/// What the reference client measured: latency from each request's
/// intended send time to its whole answer.
#[derive(Debug, Clone)]
pub struct Floor {
    /// Requests recorded (after the warm-up).
    pub samples: u64,
    /// Median latency, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
    /// Median of how late the reference sent after the intended time, ns
    /// (its own pacing error, left out of the latencies above).
    pub send_lag_p50_ns: u64,
    /// Every recorded latency, ns.
    pub histogram: Histogram<u64>,
}

/// Runs the reference client against the HTTP/1.1 server at `target`
/// (`wsbench serve --workload http`, or any server answering `GET /` with
/// a `content-length` framed body) at a uniform `rate_per_s` for
/// `duration`. Fails when the connection cannot be made or an answer does
/// not come, naming why.
pub fn latency_floor(target: SocketAddr, rate_per_s: f64, duration: Duration) -> Result<Floor, Error> {
    let bad_rate = || Error::Io {
        context: format!("reference client rate {rate_per_s}"),
        source: io::Error::new(io::ErrorKind::InvalidInput, "allowed: a finite rate above 0 requests/s"),
    };
    if !(rate_per_s.is_finite() && rate_per_s > 0.0) {
        return Err(bad_rate());
    }
    let gap = Duration::from_secs_f64(1.0 / rate_per_s);
    let count = (duration.as_secs_f64() * rate_per_s) as usize;
    let ctx = |what: &str| format!("reference client, {what} {target}");
    let mut poll = Poll::new().map_err(|e| Error::io(ctx("epoll for"), e))?;
    let mut sock = connect(target).map_err(|e| Error::io(ctx("connecting to"), e))?;
    poll.registry().register(&mut sock, CONN, Interest::READABLE).map_err(|e| Error::io(ctx("epoll for"), e))?;
    let request = format!("GET / HTTP/1.1\r\nhost: {target}\r\n\r\n").into_bytes();
    let mut events = Events::with_capacity(4);
    let mut buf = Vec::with_capacity(READ_CHUNK);
    let mut histogram = new_histogram();
    let mut send_lag = new_histogram();
    let start = Instant::now() + gap;
    for i in 0..count {
        let intended = start + gap * i as u32;
        let sent = wait_until(intended);
        sock.write_all(&request).map_err(|e| Error::io(ctx("sending to"), e))?;
        answer(&mut poll, &mut events, &mut sock, &mut buf).map_err(|e| Error::io(ctx("reading from"), e))?;
        if i >= count / WARMUP_SHARE {
            histogram.saturating_record(nanos(sent.elapsed()));
            send_lag.saturating_record(nanos(sent.saturating_duration_since(intended)));
        }
    }
    Ok(Floor {
        samples: histogram.len(),
        p50_ns: histogram.value_at_quantile(0.5),
        p99_ns: histogram.value_at_quantile(0.99),
        max_ns: histogram.max(),
        send_lag_p50_ns: send_lag.value_at_quantile(0.5),
        histogram,
    })
}

/// A blocking connect, then non-blocking with `TCP_NODELAY`.
fn connect(target: SocketAddr) -> io::Result<TcpStream> {
    let s = std::net::TcpStream::connect_timeout(&target, ANSWER_TIMEOUT)?;
    s.set_nodelay(true)?;
    s.set_nonblocking(true)?;
    Ok(TcpStream::from_std(s))
}

/// Waits in epoll until one whole response is in `buf`, and consumes it.
fn answer(poll: &mut Poll, events: &mut Events, sock: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<()> {
    let mut chunk = [0u8; READ_CHUNK];
    loop {
        if let Some(len) = framed(buf)? {
            buf.drain(..len);
            return Ok(());
        }
        match sock.read(&mut chunk) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the server closed the connection")),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                poll.poll(events, Some(ANSWER_TIMEOUT))?;
                if events.is_empty() {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer within 10 s"));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The length of the whole response at the start of `buf`, if there is one.
fn framed(buf: &[u8]) -> io::Result<Option<usize>> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let head = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, format!("not an HTTP/1.1 response ({e})"))),
    };
    let length = resp
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse::<usize>().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "response without a readable content-length"))?;
    Ok((buf.len() >= head + length).then_some(head + length))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_framed_by_content_length() {
        let one = b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc";
        assert_eq!(framed(one).unwrap(), Some(one.len()));
        assert_eq!(framed(&one[..one.len() - 1]).unwrap(), None);
        assert_eq!(framed(b"HTTP/1.1 200 OK\r\n").unwrap(), None);
        assert!(framed(b"HTTP/1.1 200 OK\r\n\r\n").is_err());
        assert!(framed(b"SSH-2.0\r\n").is_err());
    }

    #[test]
    fn a_bad_rate_is_named() {
        let addr = "127.0.0.1:9".parse().unwrap();
        let err = latency_floor(addr, 0.0, Duration::from_millis(1)).unwrap_err().to_string();
        assert!(err.contains("rate 0") && err.contains("above 0"), "{err}");
    }
}
