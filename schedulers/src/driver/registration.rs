//! A mio source registered with the driver, as `net` uses it.

use std::io;
use std::task::{ready, Context, Poll};

use super::io::{Direction, ReadyEvent, ScheduledIo};
use super::Handle;
use crate::coop;
use crate::loom::sync::Arc;

/// A source's slot in the driver: its token and readiness. Dropping it frees
/// the slot (the source must already be deregistered, see [`PollEvented`]).
#[derive(Debug)]
pub(crate) struct Registration {
    handle: Handle,
    token: mio::Token,
    io: Arc<ScheduledIo>,
}

impl Registration {
    /// Registers `source` for both directions, edge-triggered.
    fn new<S: mio::event::Source>(source: &mut S, handle: Handle) -> io::Result<Registration> {
        let (token, io) = handle.io_slots().insert()?;
        let registration = Registration { handle, token, io };
        let interest = mio::Interest::READABLE | mio::Interest::WRITABLE;
        // On error `registration` drops here and frees the slot.
        registration.handle.registry().register(source, registration.token, interest)?;
        Ok(registration)
    }

    pub(crate) fn poll_ready(&self, cx: &mut Context<'_>, dir: Direction) -> Poll<io::Result<ReadyEvent>> {
        self.io.poll_ready(cx, dir)
    }

    pub(crate) fn clear_readiness(&self, seen: ReadyEvent) {
        self.io.clear_readiness(seen)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // The ScheduledIo Arc returned holds no waker code worth running
        // under the lock; it drops after the guard (end of statement).
        let removed = self.handle.io_slots().remove(self.token);
        drop(removed);
    }
}

/// A mio source plus its registration: deregisters before it closes.
#[derive(Debug)]
pub(crate) struct PollEvented<S: mio::event::Source> {
    source: Option<S>,
    registration: Registration,
}

impl<S: mio::event::Source> PollEvented<S> {
    /// Registers `source` with the current runtime's driver.
    pub(crate) fn new(mut source: S) -> io::Result<Self> {
        let handle = crate::runtime::context::try_driver().ok_or_else(no_runtime)?;
        let registration = Registration::new(&mut source, handle)?;
        Ok(PollEvented { source: Some(source), registration })
    }

    /// The source.
    pub(crate) fn get(&self) -> &S {
        self.source.as_ref().expect("PollEvented source is only taken in drop")
    }

    pub(crate) fn registration(&self) -> &Registration {
        &self.registration
    }

    /// Runs the non-blocking `op` once `dir` is ready, spending one unit of
    /// cooperative budget; on `WouldBlock` clears the readiness it saw and
    /// waits for the next edge.
    pub(crate) fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        dir: Direction,
        op: impl FnMut(&S) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.poll_io_inner(cx, dir, op, |_| false)
    }

    /// [`poll_io`](Self::poll_io) for a stream read or write of `len` bytes:
    /// a short transfer (`0 < n < len`) means the socket buffer was drained
    /// (read) or filled (write), so the readiness seen is cleared at once,
    /// saving the syscall that would only return `WouldBlock`. An edge that
    /// arrived meanwhile has bumped the tick and survives the clear.
    pub(crate) fn poll_transfer(
        &self,
        cx: &mut Context<'_>,
        dir: Direction,
        len: usize,
        op: impl FnMut(&S) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        self.poll_io_inner(cx, dir, op, |&n| n > 0 && n < len)
    }

    fn poll_io_inner<R>(
        &self,
        cx: &mut Context<'_>,
        dir: Direction,
        mut op: impl FnMut(&S) -> io::Result<R>,
        exhausted: impl Fn(&R) -> bool,
    ) -> Poll<io::Result<R>> {
        ready!(coop::poll_proceed(cx));
        loop {
            let seen = ready!(self.registration.poll_ready(cx, dir))?;
            match op(self.get()) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.registration.clear_readiness(seen),
                Ok(r) => {
                    if exhausted(&r) {
                        self.registration.clear_readiness(seen);
                    }
                    return Poll::Ready(Ok(r));
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl<S: mio::event::Source> Drop for PollEvented<S> {
    fn drop(&mut self) {
        if let Some(mut source) = self.source.take() {
            // Best effort: closing the descriptor below removes it from the
            // epoll set anyway, and a stale event is filtered by generation.
            let _ = self.registration.handle.registry().deregister(&mut source);
        }
    }
}

fn no_runtime() -> io::Error {
    io::Error::other(
        "wsbench net: sockets must be created from inside a wsbench runtime (a task or block_on), but no runtime is running on this thread",
    )
}
