//! `current-thread`: one worker, a plain `VecDeque` for tasks scheduled on
//! it (no atomics on the local queue), and a mutex inject queue for tasks
//! scheduled from other threads. Like tokio's current_thread scheduler it
//! checks the inject queue first every 31 ticks.

use std::collections::VecDeque;

use crate::inject::Inject;
use crate::knobs::{InjectMode, Knobs};
use crate::metrics::Counters;
use crate::policy::{Origin, Policy, Wake, WorkerRef};
use crate::task::raw::Notified;

/// What `current-thread` is (its entry in `wsbench list`).
pub(crate) const INFO: crate::PolicyInfo = crate::PolicyInfo {
    name: "current-thread",
    about: "one thread, plain VecDeque, no atomics on the local queue (--workers 1)",
    workers: crate::WorkerRule::ExactlyOne,
    knobs: &["budget", "event-interval", "task-align", "sched-delay"],
};

/// tokio's current_thread `global_queue_interval` default.
const GLOBAL_QUEUE_INTERVAL: u32 = 31;
/// Most tasks moved from the inject queue per refill.
const INJECT_BATCH: usize = 128;

pub(crate) struct CurrentThread {
    inject: Inject,
}

pub(crate) struct Core {
    queue: VecDeque<Notified>,
}

impl Policy for CurrentThread {
    type Core = Core;
    const STEALS: bool = false;

    fn new(workers: usize, _knobs: &Knobs) -> (Self, Vec<Core>) {
        assert_eq!(workers, 1, "current-thread has exactly one worker (checked by the builder)");
        (CurrentThread { inject: Inject::new(InjectMode::Mutex, 1) }, vec![Core { queue: VecDeque::new() }])
    }

    fn push_local(&self, core: &mut Core, _w: &WorkerRef<'_>, task: Notified, _origin: Origin) -> bool {
        core.queue.push_back(task);
        false
    }

    fn push_remote(&self, task: Notified) -> Result<Wake, Notified> {
        self.inject.push(task).map(|()| Wake::Worker(0))
    }

    fn next_task(&self, core: &mut Core, w: &WorkerRef<'_>) -> Option<Notified> {
        if w.tick.is_multiple_of(GLOBAL_QUEUE_INTERVAL) {
            if let Some(task) = self.inject.pop(0) {
                Counters::bump(&w.counters.inject_pops, 1);
                return Some(task);
            }
        }
        if let Some(task) = core.queue.pop_front() {
            return Some(task);
        }
        refill(&self.inject, 0, &mut core.queue, w.counters)
    }

    fn steal(&self, _core: &mut Core, _w: &WorkerRef<'_>) -> Option<Notified> {
        None
    }

    fn has_work(&self, core: &Core, _index: usize, _peers: bool) -> bool {
        !core.queue.is_empty() || !self.inject.is_empty()
    }

    fn drain_core(&self, core: &mut Core, out: &mut Vec<Notified>) {
        out.extend(core.queue.drain(..));
    }

    fn close_shared(&self, out: &mut Vec<Notified>) {
        self.inject.close(out);
    }

    fn inject_lock_contended(&self) -> Option<u64> {
        Some(self.inject.lock_contended())
    }
}

/// Moves up to `INJECT_BATCH` tasks from `inject` into `queue` in one lock
/// and returns the first; counts them as inject pops.
pub(crate) fn refill(
    inject: &Inject,
    start: usize,
    queue: &mut VecDeque<Notified>,
    counters: &Counters,
) -> Option<Notified> {
    let mut taken = 0;
    let first = inject.pop_batch(start, INJECT_BATCH, |t| {
        taken += 1;
        queue.push_back(t);
    })?;
    Counters::bump(&counters.inject_pops, taken + 1);
    Some(first)
}
