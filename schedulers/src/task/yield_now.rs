//! `yield_now`: give the worker to other tasks once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Yields once: the task is woken while it runs, so the scheduler puts it
/// at the back of the run queue (never in the LIFO slot), and resumes it
/// after the tasks already queued.
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
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
