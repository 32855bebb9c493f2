//! The trivial `tcp-rpc` server: what the TCP client's own ceiling is
//! measured against (`doctor --calibrate`, `examples/ceiling.rs`). One
//! plain thread on mio (epoll), no runtime under test, the least work a
//! server can do: read what is there, answer every whole 32-byte request
//! with its 16-byte success response (the request's id, status ok), and
//! write the answers to one read with one write. It records nothing and
//! runs no handler, so a client that cannot outpace it is bound by
//! itself (and by the kernel's loopback).
//!
//! ```no_run
//! let server = wsbench_workloads::trivial::TrivialServer::start().unwrap();
//! // `wsbench load --workload tcp-rpc` (or `remote::load`) against this:
//! let addr = server.addr();
//! # drop(addr);
//! ```

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use crate::tcp::{encode_response, loopback_any, REQUEST_LEN};
#[cfg(test)]
use crate::tcp::{RESPONSE_LEN, STATUS_OK};

const LISTENER: Token = Token(usize::MAX);
const WAKER: Token = Token(usize::MAX - 1);
/// One read takes at most this many bytes (2048 requests).
const READ_CHUNK: usize = 64 * 1024;
const EVENTS: usize = 1024;

/// A running trivial server on 127.0.0.1; stopped (its thread joined and
/// every connection closed) when dropped.
pub struct TrivialServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    thread: Option<thread::JoinHandle<()>>,
}

impl TrivialServer {
    /// Binds 127.0.0.1 on a free port and starts serving on its own thread.
    pub fn start() -> io::Result<TrivialServer> {
        let poll = Poll::new()?;
        let mut listener = TcpListener::bind(loopback_any())?;
        let addr = listener.local_addr()?;
        poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread =
            thread::Builder::new().name("wsbench-trivial-server".into()).spawn(move || serve(poll, listener, &flag))?;
        Ok(TrivialServer { addr, stop, waker, thread: Some(thread) })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for TrivialServer {
    fn drop(&mut self) {
        // Release pairs with the Acquire load in `serve`, after its wake-up.
        self.stop.store(true, Ordering::Release);
        // A failed wake leaves the thread running until the process ends:
        // nothing to undo.
        if self.waker.wake().is_ok() {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// One accepted connection: the partial request at the end of the last
/// read, and the answers the socket has not taken yet.
struct Peer {
    sock: TcpStream,
    partial: Vec<u8>,
    out: Vec<u8>,
    out_pos: usize,
}

fn serve(mut poll: Poll, listener: TcpListener, stop: &AtomicBool) {
    let mut events = Events::with_capacity(EVENTS);
    let mut peers: HashMap<usize, Peer> = HashMap::new();
    let mut next_token = 0;
    let mut chunk = vec![0u8; READ_CHUNK];
    while !stop.load(Ordering::Acquire) {
        if let Err(e) = poll.poll(&mut events, None) {
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        for ev in events.iter() {
            match ev.token() {
                WAKER => {}
                LISTENER => accept_all(&poll, &listener, &mut peers, &mut next_token),
                Token(t) => {
                    let done = peers.get_mut(&t).is_none_or(|p| !p.serve(&mut chunk));
                    if done {
                        if let Some(mut p) = peers.remove(&t) {
                            let _ = poll.registry().deregister(&mut p.sock);
                        }
                    }
                }
            }
        }
    }
}

fn accept_all(poll: &Poll, listener: &TcpListener, peers: &mut HashMap<usize, Peer>, next: &mut usize) {
    loop {
        match listener.accept() {
            Ok((mut sock, _)) => {
                let token = *next;
                *next += 1;
                let _ = sock.set_nodelay(true);
                if poll.registry().register(&mut sock, Token(token), Interest::READABLE | Interest::WRITABLE).is_ok() {
                    peers.insert(token, Peer { sock, partial: Vec::new(), out: Vec::new(), out_pos: 0 });
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // WouldBlock: all taken; anything else: try at the next event.
            Err(_) => return,
        }
    }
}

impl Peer {
    /// Answers what can be answered now; `false` once the connection is
    /// over (closed by the client, or an I/O error).
    fn serve(&mut self, chunk: &mut [u8]) -> bool {
        loop {
            match self.write_out() {
                Ok(true) => {}
                // The socket is full: the rest on writability, and reading
                // waits until the client has taken its answers.
                Ok(false) => return true,
                Err(_) => return false,
            }
            let n = match self.sock.read(chunk) {
                Ok(0) => return false,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            };
            self.answer(&chunk[..n]);
            // A short read emptied the socket (bytes arriving later raise a
            // new edge): write the answers and wait for that edge.
            if n < chunk.len() {
                return self.write_out().is_ok();
            }
        }
    }

    /// Appends the answer to every whole request in `partial` + `bytes`.
    fn answer(&mut self, bytes: &[u8]) {
        let answer_one = |req: &[u8], out: &mut Vec<u8>| {
            let id = u64::from_le_bytes(req[0..8].try_into().expect("a whole request"));
            out.extend_from_slice(&encode_response(id, true));
        };
        let mut rest = bytes;
        if !self.partial.is_empty() {
            let need = (REQUEST_LEN - self.partial.len()).min(rest.len());
            self.partial.extend_from_slice(&rest[..need]);
            rest = &rest[need..];
            if self.partial.len() < REQUEST_LEN {
                return;
            }
            answer_one(&self.partial, &mut self.out);
            self.partial.clear();
        }
        let whole = rest.len() / REQUEST_LEN * REQUEST_LEN;
        for req in rest[..whole].chunks_exact(REQUEST_LEN) {
            answer_one(req, &mut self.out);
        }
        self.partial.extend_from_slice(&rest[whole..]);
    }

    /// Writes pending answers: `Ok(true)` once all are out, `Ok(false)`
    /// when the socket is full.
    fn write_out(&mut self) -> io::Result<bool> {
        while self.out_pos < self.out.len() {
            match self.sock.write(&self.out[self.out_pos..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.out_pos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        self.out_pos = 0;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests split across reads at every offset are answered once each,
    /// in order, with their own ids.
    #[test]
    fn every_whole_request_is_answered_in_order_across_split_reads() {
        let server = TrivialServer::start().unwrap();
        let mut s = std::net::TcpStream::connect(server.addr()).unwrap();
        let mut bytes = Vec::new();
        for id in 0..100u64 {
            let mut req = [0u8; REQUEST_LEN];
            req[0..8].copy_from_slice(&id.to_le_bytes());
            bytes.extend_from_slice(&req);
        }
        for piece in bytes.chunks(7) {
            s.write_all(piece).unwrap();
        }
        let mut resp = vec![0u8; 100 * RESPONSE_LEN];
        s.read_exact(&mut resp).unwrap();
        for (id, r) in resp.chunks_exact(RESPONSE_LEN).enumerate() {
            assert_eq!(u64::from_le_bytes(r[0..8].try_into().unwrap()), id as u64);
            assert_eq!(r[8], STATUS_OK);
        }
        drop(s);
        drop(server);
    }
}
