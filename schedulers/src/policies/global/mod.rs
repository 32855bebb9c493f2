//! `global`: one shared MPMC FIFO run queue (crossbeam's lock-free
//! `Injector`); every spawn, wake and pop goes through it. This is the
//! "single queue, cache lines bouncing between cores" design that work
//! stealing is usually argued against; it is here to be measured.

use crossbeam_deque::{Injector, Steal};

use crate::knobs::Knobs;
use crate::loom::sync::atomic::{fence, AtomicBool, Ordering};
use crate::metrics::Counters;
use crate::policy::{Origin, Policy, Wake, WorkerRef};
use crate::task::raw::Notified;

/// What `global` is (its entry in `wsbench list`).
pub(crate) const INFO: crate::PolicyInfo = crate::PolicyInfo {
    name: "global",
    about: "one shared MPMC run queue; every push/pop goes through it",
    workers: crate::WorkerRule::Any,
    knobs: &["idle", "budget", "event-interval", "task-align", "timer", "sched-delay"],
};

pub(crate) struct Global {
    queue: Injector<Notified>,
    /// Set at shutdown before the final drain; later pushes are refused.
    /// A push that passed the check before the flag was set re-checks after
    /// pushing and drains the queue itself (see `push_closable`).
    closed: AtomicBool,
}

/// The global policy keeps nothing per worker.
pub(crate) struct Core;

/// Pushes onto an injector that shutdown closes with `close_injector`.
///
/// Protocol (store-buffer, SeqCst fences on both sides):
/// 1. Pusher: check `closed`; push; `fence(SeqCst)`; load `closed` again.
/// 2. Closer: store `closed`; `fence(SeqCst)`; drain.
///
/// Either the closer's drain sees the push, or the pusher's second load sees
/// the flag and drains the queue itself; so no task is stranded in a closed
/// queue (a stranded task would keep the runtime alive through the cycle
/// task -> `Arc<Shared>` -> queue; the `shutdown_race` loom model).
pub(crate) fn push_closable(queue: &Injector<Notified>, closed: &AtomicBool, task: Notified) -> Result<(), Notified> {
    // SeqCst: step 1 of the protocol above.
    if closed.load(Ordering::SeqCst) {
        return Err(task);
    }
    queue.push(task);
    fence(Ordering::SeqCst);
    if closed.load(Ordering::SeqCst) {
        while let Some(t) = pop_injector(queue) {
            drop(t);
        }
    }
    Ok(())
}

/// Step 2 of `push_closable`'s protocol: close, then drain into `out`.
pub(crate) fn close_injector(queue: &Injector<Notified>, closed: &AtomicBool, out: &mut Vec<Notified>) {
    // SeqCst: pairs with the pusher's fence and loads (see `push_closable`).
    closed.store(true, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    while let Some(t) = pop_injector(queue) {
        out.push(t);
    }
}

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
        push_closable(&self.queue, &self.closed, task).map(|()| Wake::Any)
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
        close_injector(&self.queue, &self.closed, out);
    }
}
