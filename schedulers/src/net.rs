//! TCP on the runtime's epoll driver: [`TcpListener`] and [`TcpStream`].
//!
//! Every socket is non-blocking and registered edge-triggered with the
//! driver of the runtime it was created in; operations wait for readiness
//! and never block a worker thread. Methods take `&self`, so one task may
//! read while another writes the same stream (share it by reference or
//! `Arc`).
//!
//! Errors are `io::Error`s from the system (a port in use, a refused
//! connection, a reset peer, out of descriptors on accept); reading a stream
//! whose peer has closed returns `Ok(0)`. Once the runtime shuts down, every
//! pending and later operation fails with an error.
//!
//! Addresses are `std::net::ToSocketAddrs`: socket addresses and IP:port
//! strings resolve without a syscall; a host name is resolved with the
//! system's blocking resolver, so pass addresses on hot paths.

use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, ToSocketAddrs};
use std::task::{ready, Context, Poll};

use crate::coop;
use crate::driver::{Direction, PollEvented};

/// Pending-connection queue of a listener bound by
/// [`TcpListener::bind_reuse_port`] (the value std and mio use).
const LISTEN_BACKLOG: i32 = 1024;

/// Tries `op` on each address `addr` resolves to; the last error if all fail.
async fn each_addr<A, T, F, Fut>(addr: A, mut op: F) -> io::Result<T>
where
    A: ToSocketAddrs,
    F: FnMut(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = io::Result<T>>,
{
    let mut last_err = None;
    for a in addr.to_socket_addrs()? {
        match op(a).await {
            Ok(v) => return Ok(v),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err
        .unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "address resolved to no socket address")))
}

/// A TCP socket listening for connections.
#[derive(Debug)]
pub struct TcpListener {
    io: PollEvented<mio::net::TcpListener>,
}

impl TcpListener {
    /// Binds to `addr` (port 0 picks a free port; see [`local_addr`]).
    /// A port in use is an `AddrInUse` error.
    ///
    /// [`local_addr`]: TcpListener::local_addr
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        each_addr(addr, |a| async move {
            let listener = mio::net::TcpListener::bind(a)?;
            Ok(TcpListener { io: PollEvented::new(listener)? })
        })
        .await
    }

    /// Binds to `addr` with `SO_REUSEPORT` (and `SO_REUSEADDR`), so that
    /// several listeners — one per `thread-per-core` core, each registered
    /// with its own core's driver — share one port and the kernel spreads
    /// incoming connections over them. Every listener of the group must be
    /// bound this way (by the same user); port 0 picks a free port for the
    /// first, whose [`local_addr`] the others then bind.
    ///
    /// [`local_addr`]: TcpListener::local_addr
    pub async fn bind_reuse_port<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        each_addr(addr, |a| async move {
            let socket = socket2::Socket::new(socket2::Domain::for_address(a), socket2::Type::STREAM, None)?;
            socket.set_reuse_address(true)?;
            socket.set_reuse_port(true)?;
            socket.bind(&a.into())?;
            socket.listen(LISTEN_BACKLOG)?;
            TcpListener::from_std(socket.into())
        })
        .await
    }

    /// Adopts a bound, listening std listener (made non-blocking here).
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        Ok(TcpListener { io: PollEvented::new(mio::net::TcpListener::from_std(listener))? })
    }

    /// Waits for the next connection. Errors from the system (for example
    /// running out of file descriptors) are returned, not retried; the
    /// pending connection stays queued for a later call.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// Polls for the next connection (see [`TcpListener::accept`]).
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        let (stream, peer) = ready!(self.io.poll_io(cx, Direction::Read, |l| l.accept()))?;
        Poll::Ready(TcpStream::new(stream).map(|s| (s, peer)))
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get().local_addr()
    }
}

/// A TCP connection.
#[derive(Debug)]
pub struct TcpStream {
    io: PollEvented<mio::net::TcpStream>,
}

impl TcpStream {
    fn new(stream: mio::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream { io: PollEvented::new(stream)? })
    }

    /// Connects to `addr` (non-blocking connect, completed on writability).
    /// A closed port is a `ConnectionRefused` error.
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        each_addr(addr, |a| async move {
            let stream = TcpStream::new(mio::net::TcpStream::connect(a)?)?;
            poll_fn(|cx| stream.poll_connected(cx)).await?;
            Ok(stream)
        })
        .await
    }

    /// Adopts a connected std stream (made non-blocking here).
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        TcpStream::new(mio::net::TcpStream::from_std(stream))
    }

    /// Waits until a non-blocking connect has finished: writable, then no
    /// pending socket error and a peer address (mio's recipe).
    fn poll_connected(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(coop::poll_proceed(cx));
        let registration = self.io.registration();
        loop {
            let seen = ready!(registration.poll_ready(cx, Direction::Write))?;
            let sock = self.io.get();
            if let Some(e) = sock.take_error()? {
                return Poll::Ready(Err(e));
            }
            match sock.peer_addr() {
                Ok(_) => return Poll::Ready(Ok(())),
                Err(e) if e.kind() == io::ErrorKind::NotConnected => registration.clear_readiness(seen),
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    /// Reads some bytes into `buf`; `Ok(0)` at end of stream (or for an
    /// empty `buf`). A reset peer is a `ConnectionReset` error.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_read(cx, buf)).await
    }

    /// Polls a read (see [`TcpStream::read`]).
    pub fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        self.io.poll_transfer(cx, Direction::Read, buf.len(), |mut s| s.read(buf))
    }

    /// Fills `buf` exactly; `UnexpectedEof` if the stream ends first.
    pub async fn read_exact(&self, mut buf: &mut [u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read(buf).await? {
                0 => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "stream ended before the buffer was filled",
                    ))
                }
                n => buf = &mut buf[n..],
            }
        }
        Ok(())
    }

    /// Writes some bytes of `buf`, returning how many.
    pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_write(cx, buf)).await
    }

    /// Polls a write (see [`TcpStream::write`]).
    pub fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        self.io.poll_transfer(cx, Direction::Write, buf.len(), |mut s| s.write(buf))
    }

    /// Writes all of `buf`.
    pub async fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.write(buf).await? {
                0 => return Err(io::Error::new(io::ErrorKind::WriteZero, "the stream accepted no bytes")),
                n => buf = &buf[n..],
            }
        }
        Ok(())
    }

    /// Shuts down the read half, the write half or both (does not wait).
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.get().shutdown(how)
    }

    /// Sets `TCP_NODELAY` (disables Nagle's algorithm when `true`).
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.io.get().set_nodelay(nodelay)
    }

    /// Whether `TCP_NODELAY` is set.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.io.get().nodelay()
    }

    /// The remote address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get().peer_addr()
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get().local_addr()
    }
}
