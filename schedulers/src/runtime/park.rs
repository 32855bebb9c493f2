//! Per-worker parking, integrated with the I/O + timer driver.
//!
//! A worker with nothing to run parks. If no other worker holds the driver
//! it takes it (`try_lock`) and blocks inside `Driver::park` (epoll with a
//! timeout equal to the next timer deadline); otherwise it blocks on its own
//! condvar. `Unparker::unpark` wakes it either way: a condvar notify, or the
//! driver's mio waker. Under `timer=per-worker` the caller passes its own
//! wheel's next deadline as a timeout, which bounds either wait: a worker
//! wakes by itself for its own timers.
//!
//! State machine of `state` (one per worker):
//! - `EMPTY` → `PARKED_CONDVAR` / `PARKED_DRIVER` by the parker;
//! - any → `NOTIFIED` by `unpark` (swap), which then wakes the parker if
//!   it had parked;
//! - `NOTIFIED` → `EMPTY` by the parker, consuming the token. A token left
//!   by an early `unpark` makes the next `park` return at once, so a wake
//!   between the idle re-check and the block is never lost.

use std::time::Duration;

use crate::driver::{self, Driver};
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::sync::{Arc, Condvar, Mutex};

const EMPTY: usize = 0;
const PARKED_CONDVAR: usize = 1;
const PARKED_DRIVER: usize = 2;
const NOTIFIED: usize = 3;

/// What a worker that holds the driver blocks in: the epoll [`Driver`],
/// or, in the loom models (which cannot block in epoll), a stand-in.
pub(crate) trait ParkDriver {
    /// `None`: blocks until an I/O event, a timer or an unpark through
    /// the matching [`UnparkDriver`]; `Some(Duration::ZERO)`: polls.
    fn park(&mut self, timeout: Option<Duration>);
}

impl ParkDriver for Driver {
    fn park(&mut self, timeout: Option<Duration>) {
        Driver::park(self, timeout);
    }
}

/// Interrupts a blocked [`ParkDriver::park`]. An unpark that arrives
/// before the park blocks must make it return at once (mio's waker is an
/// eventfd that stays readable): the parker publishes `PARKED_DRIVER`
/// before it blocks, so `Unparker::unpark` may come in between.
pub(crate) trait UnparkDriver: Send + Sync {
    fn unpark(&self);
}

impl UnparkDriver for driver::Handle {
    fn unpark(&self) {
        driver::Handle::unpark(self);
    }
}

struct Inner {
    state: AtomicUsize,
    mutex: Mutex<()>,
    condvar: Condvar,
    /// `None` only in loom models that never park on a driver.
    driver: Option<Box<dyn UnparkDriver>>,
}

/// The parking end, owned by one worker.
pub(crate) struct Parker {
    inner: Arc<Inner>,
}

/// The waking end; cheap to clone, any thread.
#[derive(Clone)]
pub(crate) struct Unparker {
    inner: Arc<Inner>,
}

/// How a park ended up blocking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parked {
    /// A token was waiting; did not block.
    Token,
    /// Blocked on the condvar.
    Condvar,
    /// Blocked in (or polled) the driver.
    Driver,
}

pub(crate) fn pair(driver: Option<driver::Handle>) -> (Parker, Unparker) {
    pair_inner(driver.map(|h| Box::new(h) as Box<dyn UnparkDriver>))
}

/// A pair whose driver is a loom model's stand-in.
#[cfg(loom)]
pub(crate) fn pair_with_driver(unpark: Box<dyn UnparkDriver>) -> (Parker, Unparker) {
    pair_inner(Some(unpark))
}

fn pair_inner(driver: Option<Box<dyn UnparkDriver>>) -> (Parker, Unparker) {
    let inner =
        Arc::new(Inner { state: AtomicUsize::new(EMPTY), mutex: Mutex::new(()), condvar: Condvar::new(), driver });
    (Parker { inner: inner.clone() }, Unparker { inner })
}

impl Parker {
    /// Blocks until `unpark` (or a driver event / timer when parked on the
    /// driver), or at most `timeout` (`None`: no limit).
    pub(crate) fn park<D: ParkDriver>(&self, driver: &Mutex<D>, timeout: Option<Duration>) -> Parked {
        if self.take_token() {
            return Parked::Token;
        }
        match driver.try_lock() {
            Ok(mut d) => self.park_driver(&mut *d, timeout),
            Err(_) => self.park_condvar(timeout),
        }
    }

    fn take_token(&self) -> bool {
        // Acquire: pairs with the Release half of `unpark`'s swap, so work
        // published before the unpark is visible after we return.
        self.inner.state.compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed).is_ok()
    }

    fn park_driver<D: ParkDriver>(&self, driver: &mut D, timeout: Option<Duration>) -> Parked {
        // AcqRel on success: publishes PARKED_DRIVER to `unpark`; on
        // failure Acquire pairs with `unpark` (it can only be NOTIFIED).
        match self.inner.state.compare_exchange(EMPTY, PARKED_DRIVER, AcqRel, Acquire) {
            Ok(_) => {}
            Err(NOTIFIED) => {
                self.take_token();
                return Parked::Token;
            }
            Err(s) => panic!("parking on the driver from state {s}"),
        }
        driver.park(timeout);
        // AcqRel: consumes a NOTIFIED token (Acquire pairs with `unpark`).
        self.inner.state.swap(EMPTY, AcqRel);
        Parked::Driver
    }

    fn park_condvar(&self, timeout: Option<Duration>) -> Parked {
        let mut guard = self.inner.mutex.lock().unwrap();
        // AcqRel / Acquire: as in `park_driver`.
        match self.inner.state.compare_exchange(EMPTY, PARKED_CONDVAR, AcqRel, Acquire) {
            Ok(_) => {}
            Err(NOTIFIED) => {
                self.take_token();
                return Parked::Token;
            }
            Err(s) => panic!("parking on the condvar from state {s}"),
        }
        let deadline = timeout.and_then(|t| std::time::Instant::now().checked_add(t));
        loop {
            guard = match deadline {
                None => self.inner.condvar.wait(guard).unwrap(),
                Some(at) => {
                    let left = at.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        return self.condvar_timed_out();
                    }
                    self.inner.condvar.wait_timeout(guard, left).unwrap().0
                }
            };
            // Acquire: pairs with `unpark`; anything else is spurious.
            if self.inner.state.compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed).is_ok() {
                return Parked::Condvar;
            }
        }
    }

    /// The condvar wait's timeout passed (the caller holds the mutex):
    /// leave `PARKED_CONDVAR`, or consume the token of an `unpark` that
    /// came meanwhile (its notify is then lost harmlessly: we are awake).
    fn condvar_timed_out(&self) -> Parked {
        // Acquire on both outcomes: pairs with `unpark`'s swap when it won.
        match self.inner.state.compare_exchange(PARKED_CONDVAR, EMPTY, Acquire, Acquire) {
            Ok(_) => {}
            Err(NOTIFIED) => {
                self.take_token();
            }
            Err(s) => panic!("condvar park timed out in state {s}"),
        }
        Parked::Condvar
    }

    /// Parks on the condvar only (loom models have no driver).
    #[cfg(loom)]
    pub(crate) fn park_without_driver(&self) {
        if !self.take_token() {
            self.park_condvar(None);
        }
    }

    /// Non-blocking driver poll during maintenance; `false` when another
    /// worker holds the driver.
    pub(crate) fn poll_driver<D: ParkDriver>(&self, driver: &Mutex<D>) -> bool {
        match driver.try_lock() {
            Ok(mut d) => {
                d.park(Some(Duration::ZERO));
                true
            }
            Err(_) => false,
        }
    }
}

impl Unparker {
    pub(crate) fn unpark(&self) {
        // AcqRel: Release publishes the work pushed before this call to the
        // parker's Acquire; Acquire sees which way it parked.
        match self.inner.state.swap(NOTIFIED, AcqRel) {
            EMPTY | NOTIFIED => {}
            PARKED_CONDVAR => {
                // Taking the lock orders us after the parker's wait began,
                // so the notify cannot fall between its check and its wait.
                drop(self.inner.mutex.lock().unwrap());
                self.inner.condvar.notify_one();
            }
            PARKED_DRIVER => {
                if let Some(d) = &self.inner.driver {
                    d.unpark();
                }
            }
            s => panic!("unpark found impossible parker state {s}"),
        }
    }
}
