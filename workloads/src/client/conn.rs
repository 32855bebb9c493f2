//! One client connection: a non-blocking mio socket with its write and
//! read buffers and the requests it carries, oldest first (up to the
//! client's `pipeline` depth; one for HTTP/1.1 without pipelining).

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::Instant;

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};

use super::proto::{Parsed, Protocol};
use crate::loadgen::Request;

/// Where a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Non-blocking connect under way.
    Connecting,
    /// Connected; the unrecorded hello request is in flight.
    Hello,
    /// Carrying requests: none, or up to the pipeline depth in flight.
    Open,
    /// Closed or failed; never used again.
    Dead,
}

/// What reading left the connection as. The responses parsed on the way
/// are handed back either way (a server may answer, then close).
pub(crate) enum ReadOutcome {
    /// Still usable.
    Open,
    /// The connection is finished (peer closed, I/O error, protocol
    /// error); carries why. What is still in flight was not answered.
    Closed(String),
}

/// One connection of a client thread.
pub(crate) struct Conn {
    sock: TcpStream,
    pub state: State,
    /// Encoded requests; `wbuf[wpos..]` is not written yet.
    wbuf: Vec<u8>,
    wpos: usize,
    rbuf: Vec<u8>,
    /// The requests sent or queued and not answered yet, oldest first:
    /// responses come back in this order.
    pub inflight: VecDeque<Request>,
}

impl Conn {
    /// Starts a non-blocking connect and registers the socket.
    pub(crate) fn connect(addr: SocketAddr, registry: &Registry, token: Token) -> io::Result<Conn> {
        let mut sock = TcpStream::connect(addr)?;
        registry.register(&mut sock, token, Interest::READABLE | Interest::WRITABLE)?;
        Ok(Conn {
            sock,
            state: State::Connecting,
            wbuf: Vec::new(),
            wpos: 0,
            rbuf: Vec::new(),
            inflight: VecDeque::new(),
        })
    }

    /// Called on writability while connecting: `Ok(true)` once connected
    /// (mio's recipe: no pending error and a peer address).
    pub(crate) fn finish_connect(&mut self) -> io::Result<bool> {
        if let Some(e) = self.sock.take_error()? {
            return Err(e);
        }
        match self.sock.peer_addr() {
            Ok(_) => {
                self.sock.set_nodelay(true)?;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Encodes `req` behind whatever is queued and not yet written; the
    /// caller writes them all at once with [`Conn::flush`] (one write for
    /// every request queued in one pass of the loop).
    pub(crate) fn queue(&mut self, proto: &impl Protocol, req: Request, base: Instant, hello: bool) {
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        }
        proto.encode(&req, base, hello, &mut self.wbuf);
        self.inflight.push_back(req);
        self.state = if hello { State::Hello } else { State::Open };
    }

    /// Whether queued bytes wait for the socket.
    pub(crate) fn unwritten(&self) -> bool {
        self.wpos < self.wbuf.len()
    }

    /// Writes queued request bytes until done or the socket is full (the
    /// rest on writability).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        while self.wpos < self.wbuf.len() {
            match self.sock.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads what is there and parses every whole response in it, in
    /// order, into `answered` (each with whether it was the expected
    /// answer). `scratch` is the thread's read buffer. Edge-triggered
    /// epoll needs the socket read dry, and a read that returns less than
    /// `scratch` did just that: a TCP socket hands over all it holds, and
    /// bytes arriving later raise a new edge. So the usual closing
    /// `WouldBlock` read, one syscall per batch of answers, is skipped —
    /// unless `dry`: the event said the peer closed (`EPOLLRDHUP`, whose
    /// FIN raises no later edge), or there was no event, and then it reads
    /// on to the end of what is there.
    pub(crate) fn read(
        &mut self,
        proto: &impl Protocol,
        scratch: &mut [u8],
        dry: bool,
        answered: &mut Vec<(Request, bool)>,
    ) -> ReadOutcome {
        let mut eof = false;
        let mut error = None;
        loop {
            match self.sock.read(scratch) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => {
                    self.rbuf.extend_from_slice(&scratch[..n]);
                    if n < scratch.len() && !dry {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // What arrived before the error is parsed first: it may
                    // say why (a peer speaking another protocol).
                    eof = true;
                    error = Some(format!("reading: {e}"));
                    break;
                }
            }
        }
        if let Err(why) = self.parse(proto, answered) {
            return ReadOutcome::Closed(why);
        }
        if eof {
            return ReadOutcome::Closed(error.unwrap_or_else(|| self.eof_reason()));
        }
        ReadOutcome::Open
    }

    fn eof_reason(&self) -> String {
        match self.inflight.len() {
            0 => "the server closed the connection".into(),
            1 => "the server closed the connection with a request in flight".into(),
            n => format!("the server closed the connection with {n} requests in flight"),
        }
    }

    /// Takes every whole response off the front of the read buffer, each
    /// answering the oldest request in flight; `Err` when the connection
    /// cannot go on (the server said it closes, bytes nobody asked for, a
    /// response that is not the protocol or not for that request).
    fn parse(&mut self, proto: &impl Protocol, answered: &mut Vec<(Request, bool)>) -> Result<(), String> {
        let (mut at, mut got) = (0, 0);
        let mut result = Ok(());
        while at < self.rbuf.len() {
            let Some(&req) = self.inflight.front() else {
                let extra = self.rbuf.len() - at;
                result = Err(if got > 0 {
                    format!("{extra} unexpected bytes after a response")
                } else {
                    format!("{extra} bytes arrived with no request in flight")
                });
                break;
            };
            match proto.parse(&self.rbuf[at..], req.id) {
                Parsed::Partial => break,
                Parsed::Invalid(why) => {
                    result = Err(format!("the peer does not speak {}: {why}", proto.name()));
                    break;
                }
                Parsed::Response { len, ok, close } => {
                    at += len;
                    got += 1;
                    self.inflight.pop_front();
                    answered.push((req, ok));
                    if close {
                        // The answer counts; what follows it will not come.
                        result = Err(self.eof_reason());
                        break;
                    }
                }
            }
        }
        self.rbuf.drain(..at);
        result
    }

    /// Marks the connection dead and closes the socket; the caller has
    /// taken what was in flight.
    pub(crate) fn kill(&mut self, registry: &Registry) {
        self.state = State::Dead;
        self.inflight.clear();
        // Deregistering a socket that is about to close cannot matter.
        let _ = registry.deregister(&mut self.sock);
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }
}
