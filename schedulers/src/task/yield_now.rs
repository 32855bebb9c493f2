//! `yield_now`: give the worker to other tasks once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Yields once. On a worker the wake-up is deferred (as tokio does) until
/// the worker has run out of other local work or polls the driver, and then
/// the task goes to the back of the run queue (never the LIFO slot); this
/// lets a worker whose tasks all yield reach the inject queue. Elsewhere
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

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        if !crate::runtime::context::defer(cx.waker()) {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}
