//! `JoinHandle<T>`: awaits a task's output (its `JoinError` is in `error.rs`).

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

pub use super::error::JoinError;
use super::raw::RawTask;

/// An owned permission to await a task's output. Dropping it detaches the
/// task (it keeps running).
pub struct JoinHandle<T> {
    raw: RawTask,
    _output: PhantomData<T>,
}

// SAFETY: the handle only moves the output (T: Send) out of the task cell,
// synchronised by the task state machine.
unsafe impl<T: Send> Send for JoinHandle<T> {}
// SAFETY: `&JoinHandle` only allows `abort` and `is_finished`, which are
// atomic operations on the task state.
unsafe impl<T: Send> Sync for JoinHandle<T> {}

impl<T> Unpin for JoinHandle<T> {}

impl<T> JoinHandle<T> {
    /// # Safety
    /// `raw` must carry the JoinHandle reference of a task whose output
    /// type is `T`.
    pub(crate) unsafe fn new(raw: RawTask) -> JoinHandle<T> {
        JoinHandle { raw, _output: PhantomData }
    }

    /// Requests cancellation. A task that has not completed resolves to a
    /// cancelled `JoinError` (a task in the middle of a poll is cancelled
    /// when that poll returns).
    pub fn abort(&self) {
        self.raw.remote_abort();
    }

    /// Whether the task has completed (returned, panicked or was cancelled).
    pub fn is_finished(&self) -> bool {
        self.raw.header().state.load().is_complete()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if crate::coop::poll_proceed(cx).is_pending() {
            return Poll::Pending;
        }
        let mut out: Poll<Result<T, JoinError>> = Poll::Pending;
        // SAFETY: `out` has the task's output type (established in `new`),
        // and we are the JoinHandle.
        unsafe { self.raw.try_read_output(&mut out as *mut _ as *mut (), cx.waker()) };
        out
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        // SAFETY: called once, by the JoinHandle, consuming its reference.
        unsafe { self.raw.drop_join_handle() }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").field("id", &self.raw.header().id).finish()
    }
}
