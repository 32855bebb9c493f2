//! `global`: one shared MPMC FIFO run queue (crossbeam's lock-free
//! `Injector`); every spawn, wake and pop goes through it. This is the
//! "single queue, cache lines bouncing between cores" design that work
//! stealing is usually argued against; it is here to be measured.

use crossbeam_deque::{Injector, Steal};

use crate::knobs::Knobs;
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::metrics::Counters;
use crate::policy::{Origin, Policy, Wake, WorkerRef};
use crate::task::raw::Notified;

pub(crate) struct Global {
    queue: Injector<Notified>,
    /// Set at shutdown before the final drain. After it, pushes are
    /// refused; a push racing the flag can only come from a wake of a task
    /// that shutdown already completed (see `runtime/shared.rs`), and such
    /// wakes never push.
    closed: AtomicBool,
}

/// The global policy keeps nothing per worker.
pub(crate) struct Core;

/// Pops one task from a crossbeam injector, retrying lost races.
pub(crate) fn pop_injector(queue: &Injector<Notified>) -> Option<Notified> {
    loop {
        match queue.steal() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

impl Policy for Global {
    type Core = Core;
    const STEALS: bool = false;

    fn new(workers: usize, _knobs: &Knobs) -> (Self, Vec<Core>) {
        let global = Global { queue: Injector::new(), closed: AtomicBool::new(false) };
        (global, (0..workers).map(|_| Core).collect())
    }

    fn push_local(&self, _core: &mut Core, _w: &WorkerRef<'_>, task: Notified, _origin: Origin) -> bool {
        self.queue.push(task);
        true
    }

    fn push_remote(&self, task: Notified) -> Result<Wake, Notified> {
        // Acquire: pairs with the Release in `close_shared`.
        if self.closed.load(Ordering::Acquire) {
            return Err(task);
        }
        self.queue.push(task);
        Ok(Wake::Any)
    }

    fn next_task(&self, _core: &mut Core, w: &WorkerRef<'_>) -> Option<Notified> {
        let task = pop_injector(&self.queue)?;
        Counters::bump(&w.counters.inject_pops, 1);
        Some(task)
    }

    fn steal(&self, _core: &mut Core, _w: &WorkerRef<'_>) -> Option<Notified> {
        None
    }

    fn has_work(&self, _core: &Core, _index: usize, _peers: bool) -> bool {
        !self.queue.is_empty()
    }

    fn drain_core(&self, _core: &mut Core, _out: &mut Vec<Notified>) {}

    fn close_shared(&self, out: &mut Vec<Notified>) {
        // Release: pairs with the Acquire in `push_remote`.
        self.closed.store(true, Ordering::Release);
        while let Some(t) = pop_injector(&self.queue) {
            out.push(t);
        }
    }
}
