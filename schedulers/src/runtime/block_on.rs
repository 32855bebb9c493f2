//! `block_on` on a thread that is not a worker: poll the future, park the
//! thread until its waker fires.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

struct ThreadWaker {
    thread: Thread,
    notified: AtomicBool,
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release: pairs with the Acquire swap in `block_on`, so what the
        // waker's caller wrote is visible to the next poll.
        if !self.notified.swap(true, Ordering::Release) {
            self.thread.unpark();
        }
    }
}

/// Polls `future` to completion on this thread.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    assert!(
        !super::context::is_worker(),
        "Runtime::block_on called from inside a worker thread of a wsbench runtime: a worker must never block; spawn the future and .await its JoinHandle instead"
    );
    let waker_arc = Arc::new(ThreadWaker { thread: thread::current(), notified: AtomicBool::new(false) });
    let waker = Waker::from(waker_arc.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(v) = crate::coop::with_budget(None, || future.as_mut().poll(&mut cx)) {
            return v;
        }
        // Acquire: pairs with the Release in `wake_by_ref`.
        while !waker_arc.notified.swap(false, Ordering::Acquire) {
            thread::park();
        }
    }
}
