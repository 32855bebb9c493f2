//! Helpers shared by the unit tests and the loom models.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Wake, Waker};

/// How often a [`counting_waker`] was woken. std atomics, also in loom
/// models: only the count matters, and a test reads it after the threads
/// that wake joined, which orders it.
pub(crate) struct WakeCount(AtomicUsize);

impl WakeCount {
    /// The wakes so far.
    pub(crate) fn get(&self) -> usize {
        // Relaxed: read after the wakers' threads joined (see the type).
        self.0.load(Ordering::Relaxed)
    }
}

impl Wake for WakeCount {
    fn wake(self: Arc<Self>) {
        // Relaxed: a count, ordered for its reader by `join`.
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A waker and the count of its wakes.
pub(crate) fn counting_waker() -> (Arc<WakeCount>, Waker) {
    let count = Arc::new(WakeCount(AtomicUsize::new(0)));
    (count.clone(), Waker::from(count))
}

/// The spill sink and the per-task ledger the local queues' unit and
/// stress tests share (steal-half's ring and BWoS's blocks).
#[cfg(not(loom))]
pub(crate) mod queue;
