//! Thread-local runtime context.
//!
//! A thread is "in" a runtime when it is one of its workers, a blocking-pool
//! thread, or inside `block_on`. The core's part of the context is a clone
//! of the runtime's driver handle (for `time` and `net`) and, on workers, a
//! type-erased pointer to the worker's `WorkerCx<P>` together with the
//! address of the runtime's `Shared<P>`, so that a wake on a worker of the
//! same runtime can reach that worker's core (LIFO slot, local queue) with
//! no lookup. The runtime's `Handle` (for `spawn`) is the other part: it
//! names every policy, so it is defined above the core (`crate::dispatch`),
//! and the core carries it to its threads as an [`Enter`].

use std::cell::{Cell, RefCell};
use std::task::Waker;

use crate::driver;

/// What a runtime's threads run inside, so that `spawn` and
/// `Handle::current()` work on them: the runtime's handle, defined above
/// the core (`crate::dispatch`). The core only carries it to its worker and
/// blocking-pool threads; `()` enters nothing.
pub(crate) trait Enter: Clone + Send + 'static {
    /// Runs `body` on this thread inside the runtime's context, which it
    /// leaves when `body` returns.
    fn run_in<R>(self, body: impl FnOnce() -> R) -> R;
}

impl Enter for () {
    fn run_in<R>(self, body: impl FnOnce() -> R) -> R {
        body()
    }
}

thread_local! {
    static DRIVER: RefCell<Option<driver::Handle>> = const { RefCell::new(None) };
    /// (address of `Shared<P>`, `*const WorkerCx<P>`); (0, null) when not a worker.
    static WORKER: Cell<(usize, *const ())> = const { Cell::new((0, std::ptr::null())) };
    /// Wakers of tasks that yielded on this worker, woken when the worker
    /// runs out of other work or at its next driver poll (as tokio does).
    static DEFERRED: RefCell<Vec<Waker>> = const { RefCell::new(Vec::new()) };
    /// True while `wake_deferred` runs: those wakes are yields.
    static WAKING_DEFERRED: Cell<bool> = const { Cell::new(false) };
}

pub(crate) const NO_RUNTIME: &str =
    "this function must be called from inside a wsbench runtime (a task, block_on, or spawn_blocking), but no runtime is running on this thread";

/// Restores the previous driver context on drop.
pub(crate) struct DriverGuard {
    prev: Option<driver::Handle>,
}

/// Makes `handle` the current driver for this thread until the guard drops.
pub(crate) fn enter_driver(handle: driver::Handle) -> DriverGuard {
    let prev = DRIVER.with(|d| d.borrow_mut().replace(handle));
    DriverGuard { prev }
}

impl Drop for DriverGuard {
    fn drop(&mut self) {
        let prev = self.prev.take();
        DRIVER.with(|d| *d.borrow_mut() = prev);
    }
}

/// Runs `f` with the current runtime's driver handle.
///
/// # Panics
/// When the thread is not in a runtime; the message says so.
pub(crate) fn with_driver<R>(f: impl FnOnce(&driver::Handle) -> R) -> R {
    DRIVER.with(|d| {
        let d = d.borrow();
        let handle = d.as_ref().expect(NO_RUNTIME);
        f(handle)
    })
}

/// The current runtime's driver handle, if the thread is in a runtime.
pub(crate) fn try_driver() -> Option<driver::Handle> {
    DRIVER.with(|d| d.borrow().clone())
}

/// Marks this thread as a worker until the guard drops.
pub(crate) struct WorkerGuard(());

pub(crate) fn enter_worker(shared_addr: usize, worker_cx: *const ()) -> WorkerGuard {
    WORKER.with(|w| {
        assert!(w.get().1.is_null(), "a thread can be the worker of one runtime only");
        w.set((shared_addr, worker_cx));
    });
    WorkerGuard(())
}

impl Drop for WorkerGuard {
    fn drop(&mut self) {
        WORKER.with(|w| w.set((0, std::ptr::null())));
    }
}

/// The worker context pointer if this thread is a worker of the runtime
/// whose `Shared` lives at `shared_addr`.
#[inline]
pub(crate) fn worker_of(shared_addr: usize) -> Option<*const ()> {
    let (addr, ptr) = WORKER.with(|w| w.get());
    (addr == shared_addr && !ptr.is_null()).then_some(ptr)
}

/// Whether this thread is a worker of any wsbench runtime.
#[inline]
pub(crate) fn is_worker() -> bool {
    !WORKER.with(|w| w.get()).1.is_null()
}

/// Defers a yielding task's wake-up on a worker thread. `false` when not
/// on a worker (the caller wakes at once).
#[inline]
pub(crate) fn defer(waker: &Waker) -> bool {
    if !is_worker() {
        return false;
    }
    DEFERRED.with(|d| d.borrow_mut().push(waker.clone()));
    true
}

/// Whether yielded tasks wait to be woken on this thread.
pub(crate) fn has_deferred() -> bool {
    DEFERRED.with(|d| !d.borrow().is_empty())
}

/// Wakes every deferred task; their schedules are treated as yields (back
/// of the queue). Reuses the list's allocation.
pub(crate) fn wake_deferred() {
    // The list's allocation goes back after every pass, including the last
    // (empty) one: dropping it there freed and regrew the list on every
    // round of yields (a realloc per doubling, and glibc arena-lock
    // contention between workers that share an arena).
    let put_back = |batch: Vec<Waker>| {
        DEFERRED.with(|d| {
            let mut d = d.borrow_mut();
            if d.is_empty() {
                *d = batch;
            }
        })
    };
    loop {
        let mut batch = DEFERRED.with(|d| std::mem::take(&mut *d.borrow_mut()));
        if batch.is_empty() {
            put_back(batch);
            return;
        }
        WAKING_DEFERRED.with(|f| f.set(true));
        for w in batch.drain(..) {
            w.wake();
        }
        WAKING_DEFERRED.with(|f| f.set(false));
        put_back(batch);
    }
}

/// Drops deferred wakers (worker exit at shutdown).
pub(crate) fn clear_deferred() {
    let left = DEFERRED.with(|d| std::mem::take(&mut *d.borrow_mut()));
    drop(left);
}

/// Whether the current schedule call comes from `wake_deferred`.
#[inline]
pub(crate) fn waking_deferred() -> bool {
    WAKING_DEFERRED.with(|f| f.get())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn waking_deferred_tasks_keeps_the_list_allocation() {
        // Any non-null worker pointer marks this test thread as a worker;
        // nothing dereferences it here (the no-op wakers schedule nothing).
        let marker = 0u8;
        let _worker = enter_worker(1, &marker as *const u8 as *const ());
        for round in 0..3 {
            for _ in 0..100 {
                assert!(defer(Waker::noop()));
            }
            let capacity = DEFERRED.with(|d| d.borrow().capacity());
            assert!(capacity >= 100);
            wake_deferred();
            assert!(!has_deferred());
            assert_eq!(DEFERRED.with(|d| d.borrow().capacity()), capacity, "round {round}: the allocation was dropped");
        }
        clear_deferred();
    }
}
