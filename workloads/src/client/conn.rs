//! One client connection: a non-blocking mio socket with its write and
//! read buffers and the request it carries.

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
    /// Ready for a request.
    Idle,
    /// One request in flight.
    Busy,
    /// Closed or failed; never used again.
    Dead,
}

/// What reading produced.
pub(crate) enum ReadOutcome {
    /// Nothing complete yet.
    Nothing,
    /// The in-flight request's response: whether it was the expected one.
    Answered { ok: bool },
    /// The connection is finished (peer closed, I/O error, protocol
    /// error); carries why.
    Closed(String),
}

/// One connection of a client thread.
pub(crate) struct Conn {
    sock: TcpStream,
    pub state: State,
    wbuf: Vec<u8>,
    wpos: usize,
    rbuf: Vec<u8>,
    /// The request in flight (Hello or Busy).
    pub inflight: Option<Request>,
    /// The server announced it closes after the current response.
    closing: bool,
    /// Why the connection died right after an answer (see [`Conn::read`]).
    pub dead_reason: Option<String>,
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
            inflight: None,
            closing: false,
            dead_reason: None,
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

    /// Encodes `req` and writes as much as the socket takes now (the rest
    /// on writability).
    pub(crate) fn send(&mut self, proto: &impl Protocol, req: Request, base: Instant, hello: bool) -> io::Result<()> {
        self.wbuf.clear();
        self.wpos = 0;
        proto.encode(&req, base, hello, &mut self.wbuf);
        self.inflight = Some(req);
        self.state = if hello { State::Hello } else { State::Busy };
        self.flush()
    }

    /// Writes pending request bytes until done or the socket is full.
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

    /// Reads what is there and parses one response. `scratch` is the
    /// thread's read buffer. Edge-triggered epoll needs the socket read
    /// dry, and a read that returns less than `scratch` did just that: a
    /// TCP socket hands over all it holds, and bytes arriving later raise
    /// a new edge. So the usual closing `WouldBlock` read, one syscall per
    /// answer, is skipped — unless `dry`: the event said the peer closed
    /// (`EPOLLRDHUP`, whose FIN raises no later edge), or there was no
    /// event, and then it reads on to the end of what is there.
    pub(crate) fn read(&mut self, proto: &impl Protocol, scratch: &mut [u8], dry: bool) -> ReadOutcome {
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
        let outcome = self.parse(proto);
        match outcome {
            ReadOutcome::Nothing if eof => ReadOutcome::Closed(error.unwrap_or_else(|| self.eof_reason())),
            ReadOutcome::Answered { ok } if eof || self.closing || !self.rbuf.is_empty() => {
                // The answer counts; the connection dies after it (the
                // caller sees `State::Dead` and closes it).
                self.dead_reason = Some(if !self.rbuf.is_empty() {
                    format!("{} unexpected bytes after a response", self.rbuf.len())
                } else {
                    "the server closed the connection".into()
                });
                self.state = State::Dead;
                ReadOutcome::Answered { ok }
            }
            other => other,
        }
    }

    fn eof_reason(&self) -> String {
        match self.state {
            State::Busy | State::Hello => "the server closed the connection with a request in flight".into(),
            _ => "the server closed the connection".into(),
        }
    }

    fn parse(&mut self, proto: &impl Protocol) -> ReadOutcome {
        if self.rbuf.is_empty() {
            return ReadOutcome::Nothing;
        }
        let Some(req) = self.inflight else {
            return ReadOutcome::Closed(format!("{} bytes arrived with no request in flight", self.rbuf.len()));
        };
        match proto.parse(&self.rbuf, req.id) {
            Parsed::Partial => ReadOutcome::Nothing,
            Parsed::Invalid(why) => ReadOutcome::Closed(format!("the peer does not speak {}: {why}", proto.name())),
            Parsed::Response { len, ok, close } => {
                self.rbuf.drain(..len);
                self.closing |= close;
                self.inflight = None;
                self.state = State::Idle;
                ReadOutcome::Answered { ok }
            }
        }
    }

    /// Marks the connection dead and closes the socket.
    pub(crate) fn kill(&mut self, registry: &Registry) {
        self.state = State::Dead;
        self.inflight = None;
        // Deregistering a socket that is about to close cannot matter.
        let _ = registry.deregister(&mut self.sock);
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }
}
