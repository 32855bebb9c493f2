//! hyper's runtime traits for ours and smol: `rt::Read` / `rt::Write` over
//! the runtime's socket, `rt::Executor` over its spawn, `rt::Timer` over
//! its timer. (tokio gets hyper-util's, in `tokio_rt`.)
//!
//! Reads go through a per-connection scratch buffer and
//! `ReadBufCursor::put_slice`: hyper's zero-copy path needs `unsafe`
//! (`ReadBufCursor::advance`), which this crate forbids. That is one copy
//! of each received chunk (a request of ~100 bytes); hyper-util's
//! `TokioIo` reads in place.

use std::future::Future;
use std::io;
use std::net::{Shutdown, TcpStream as StdTcpStream};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use async_executor::Executor as SmolExecutor;
use async_io::{Async, Timer as SmolTimer};
use futures_lite::{AsyncRead, AsyncWrite};
use hyper::rt::{Executor, ReadBufCursor, Sleep, Timer};
use wsbench_schedulers::net::TcpStream;

/// Bytes read from the socket per `poll_read` at most.
const SCRATCH_BYTES: usize = 8 * 1024;

/// Copies what `read` produced into hyper's buffer.
fn read_via_scratch(
    scratch: &mut [u8],
    mut cursor: ReadBufCursor<'_>,
    read: impl FnOnce(&mut [u8]) -> Poll<io::Result<usize>>,
) -> Poll<io::Result<()>> {
    let want = cursor.remaining().min(scratch.len());
    let n = ready!(read(&mut scratch[..want]))?;
    cursor.put_slice(&scratch[..n]);
    Poll::Ready(Ok(()))
}

/// Our `TcpStream` as hyper I/O.
pub(crate) struct OursIo {
    stream: TcpStream,
    scratch: Box<[u8]>,
}

impl OursIo {
    pub(crate) fn new(stream: TcpStream) -> OursIo {
        OursIo { stream, scratch: vec![0; SCRATCH_BYTES].into_boxed_slice() }
    }
}

impl hyper::rt::Read for OursIo {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let stream = &this.stream;
        read_via_scratch(&mut this.scratch, buf, |b| stream.poll_read(cx, b))
    }
}

impl hyper::rt::Write for OursIo {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.stream.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Writes go straight to the socket; nothing is buffered here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(match self.stream.shutdown(Shutdown::Write) {
            // The peer already went away: nothing left to shut.
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
            r => r,
        })
    }
}

/// hyper's executor (HTTP/2 streams) on our runtime: a local spawn from
/// the connection's task, detached.
#[derive(Clone, Copy)]
pub(crate) struct OursExec;

impl<F> Executor<F> for OursExec
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        drop(wsbench_schedulers::spawn(fut));
    }
}

/// hyper's timer on our timer wheel.
#[derive(Clone, Copy)]
pub(crate) struct OursTimer;

/// Our `Sleep` as hyper's.
struct OursSleep(wsbench_schedulers::time::Sleep);

impl Future for OursSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl Sleep for OursSleep {}

impl Timer for OursTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        Box::pin(OursSleep(wsbench_schedulers::time::sleep(duration)))
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(OursSleep(wsbench_schedulers::time::sleep_until(deadline)))
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        // Re-arm in place (as hyper-util's TokioTimer does) instead of a new
        // allocation per request.
        match sleep.as_mut().downcast_mut_pin::<OursSleep>() {
            Some(mut ours) => ours.0.reset(new_deadline),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

/// smol's `Async<TcpStream>` as hyper I/O.
pub(crate) struct SmolIo {
    stream: Async<StdTcpStream>,
    scratch: Box<[u8]>,
}

impl SmolIo {
    pub(crate) fn new(stream: Async<StdTcpStream>) -> SmolIo {
        SmolIo { stream, scratch: vec![0; SCRATCH_BYTES].into_boxed_slice() }
    }
}

impl hyper::rt::Read for SmolIo {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let stream = &mut this.stream;
        read_via_scratch(&mut this.scratch, buf, |b| Pin::new(stream).poll_read(cx, b))
    }
}

impl hyper::rt::Write for SmolIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_close(cx)
    }
}

/// hyper's executor on smol's executor: spawn and detach.
#[derive(Clone)]
pub(crate) struct SmolExec(pub Arc<SmolExecutor<'static>>);

impl<F> Executor<F> for SmolExec
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        self.0.spawn(fut).detach();
    }
}

/// hyper's timer on async-io's timers.
#[derive(Clone, Copy)]
pub(crate) struct SmolTimerGlue;

struct SmolSleep(SmolTimer);

impl Future for SmolSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}

impl Sleep for SmolSleep {}

impl Timer for SmolTimerGlue {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        Box::pin(SmolSleep(SmolTimer::after(duration)))
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(SmolSleep(SmolTimer::at(deadline)))
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<SmolSleep>() {
            Some(mut s) => s.0.set_at(new_deadline),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}
