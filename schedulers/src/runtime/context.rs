//! Thread-local runtime context.
//!
//! A thread is "in" a runtime when it is one of its workers, a blocking-pool
//! thread, or inside `block_on`. The context holds a clone of the runtime's
//! driver handle (for `time` and `net`) and, on workers, a pointer to the
//! worker's scheduler state (for `spawn` and for waking into the LIFO slot).

use std::cell::RefCell;

use crate::driver;

thread_local! {
    static DRIVER: RefCell<Option<driver::Handle>> = const { RefCell::new(None) };
}

const NO_RUNTIME: &str =
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
