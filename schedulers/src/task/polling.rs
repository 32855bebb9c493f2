//! The thread's poll record: which task this thread is polling, and
//! whether it yielded through its own waker during the poll (see
//! `yield_now.rs` for why). `raw.rs` sets and reads it around every poll;
//! `yield_now.rs` marks it. Both import this module, not each other.

use std::cell::Cell;
use std::ptr::NonNull;

use super::cell::Header;

/// Set in the thread's poll record once the polled task yielded (headers
/// are at least 8-byte aligned, so the bit is free).
const YIELDED: usize = 1;

#[cfg(not(loom))]
std::thread_local! {
    /// The header address of the task this thread polls, or 0; `| YIELDED`
    /// once it yielded through its own waker.
    static POLLING: Cell<usize> = const { Cell::new(0) };
}

#[cfg(loom)]
loom::thread_local! {
    static POLLING: Cell<usize> = Cell::new(0);
}

/// Records `task` as the task this thread polls; returns the previous
/// record for `leave_poll`.
#[inline]
pub(crate) fn enter_poll(task: NonNull<Header>) -> usize {
    POLLING.with(|p| p.replace(task.as_ptr() as usize))
}

/// Restores the record `enter_poll` returned; `true` when `task` yielded
/// through its own waker during the poll.
#[inline]
pub(crate) fn leave_poll(prev: usize, task: NonNull<Header>) -> bool {
    POLLING.with(|p| p.replace(prev)) == task.as_ptr() as usize | YIELDED
}

/// Marks the polled task as yielded if `task` (a waker's data pointer of
/// a task waker) is the task this thread is polling.
#[inline]
pub(crate) fn mark_yield(task: *const ()) -> bool {
    let task = task as usize;
    POLLING.with(|p| {
        let matches = p.get() & !YIELDED == task && task != 0;
        if matches {
            p.set(task | YIELDED);
        }
        matches
    })
}
