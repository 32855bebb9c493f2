//! `yield_now`: give the worker to other tasks once.
//!
//! A yield on a worker is deferred (as tokio does): the task waits until the
//! worker has run out of other local work or polls the driver, then goes to
//! the back of the run queue (never the LIFO slot); this lets a worker whose
//! tasks all yield reach the driver and the inject queue.
//!
//! The common case — a task yielding through its own waker, on the thread
//! that polls it — skips the waker: the poll records which task it is
//! polling in a thread-local, `YieldNow` marks that record, and after the
//! poll the task goes idle-and-notified in one state change and is handed to
//! its scheduler's deferred list. Cloning the waker, storing it, and waking
//! it later costs three atomic read-modify-writes on the task state instead
//! of one, and two more thread-local lookups in the wake. Any other waker
//! (a combinator's, such as `FuturesUnordered`, which must see its own wake
//! to poll the yielding branch again) takes the general path: deferred
//! clone on a worker, immediate wake elsewhere.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::polling;
use super::raw::WAKER_VTABLE;

/// Marks the polled task as yielded if `waker` is that task's own waker.
#[inline]
fn mark_yield(waker: &Waker) -> bool {
    std::ptr::eq(waker.vtable(), &WAKER_VTABLE) && polling::mark_yield(waker.data())
}

/// Yields once; see the module documentation. Outside a worker
/// (`block_on`) the task is woken at once.
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// Future returned by [`yield_now`].
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        if !mark_yield(cx.waker()) && !crate::runtime::context::defer(cx.waker()) {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}
