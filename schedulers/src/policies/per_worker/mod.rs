//! `per-worker`: thread-per-core style. Each worker has a private FIFO
//! (`VecDeque`, owner only) and an inbox for tasks scheduled from outside;
//! remote spawns go round-robin over the inboxes; nothing is ever stolen,
//! so an unlucky worker's queue waits while others idle.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;

use crate::inject::Inject;
use crate::knobs::{InjectMode, Knobs};
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::metrics::Counters;
use crate::policies::current_thread::refill;
use crate::policy::{Origin, Policy, Wake, WorkerRef};
use crate::task::raw::Notified;

/// What `per-worker` is (its entry in `wsbench list`).
pub(crate) const INFO: crate::PolicyInfo = crate::PolicyInfo {
    name: "per-worker",
    about: "private FIFO per worker, no stealing; remote spawns round-robin",
    workers: crate::WorkerRule::Any,
    knobs: &["idle", "budget", "event-interval", "task-align", "timer", "sched-delay"],
};

/// Ticks between inbox-first checks (same fairness as tokio's 61).
const INBOX_INTERVAL: u32 = crate::knobs::DEFAULT_GLOBAL_INTERVAL;

pub(crate) struct PerWorker {
    inboxes: Box<[CachePadded<Inject>]>,
    next_remote: CachePadded<AtomicUsize>,
}

pub(crate) struct Core {
    queue: VecDeque<Notified>,
}

impl Policy for PerWorker {
    type Core = Core;
    const STEALS: bool = false;

    fn new(workers: usize, _knobs: &Knobs) -> (Self, Vec<Core>) {
        let inboxes = (0..workers).map(|_| CachePadded::new(Inject::new(InjectMode::Mutex, 1))).collect();
        let cores = (0..workers).map(|_| Core { queue: VecDeque::new() }).collect();
        (PerWorker { inboxes, next_remote: CachePadded::new(AtomicUsize::new(0)) }, cores)
    }

    fn push_local(&self, core: &mut Core, _w: &WorkerRef<'_>, task: Notified, _origin: Origin) -> bool {
        core.queue.push_back(task);
        false
    }

    fn push_remote(&self, task: Notified) -> Result<Wake, Notified> {
        // Relaxed: round-robin cursor, publishes nothing.
        let i = self.next_remote.fetch_add(1, Ordering::Relaxed) % self.inboxes.len();
        self.inboxes[i].push(task).map(|()| Wake::Worker(i))
    }

    fn next_task(&self, core: &mut Core, w: &WorkerRef<'_>) -> Option<Notified> {
        let inbox = &self.inboxes[w.index];
        if w.tick.is_multiple_of(INBOX_INTERVAL) {
            if let Some(task) = inbox.pop(0) {
                Counters::bump(&w.counters.inject_pops, 1);
                return Some(task);
            }
        }
        if let Some(task) = core.queue.pop_front() {
            return Some(task);
        }
        refill(inbox, 0, &mut core.queue, w.counters)
    }

    fn steal(&self, _core: &mut Core, _w: &WorkerRef<'_>) -> Option<Notified> {
        None
    }

    fn has_work(&self, core: &Core, index: usize, _peers: bool) -> bool {
        !core.queue.is_empty() || !self.inboxes[index].is_empty()
    }

    fn drain_core(&self, core: &mut Core, out: &mut Vec<Notified>) {
        out.extend(core.queue.drain(..));
    }

    fn close_shared(&self, out: &mut Vec<Notified>) {
        for inbox in self.inboxes.iter() {
            inbox.close(out);
        }
    }

    /// Summed over the workers' inboxes (each a locked inject queue).
    fn inject_lock_contended(&self) -> Option<u64> {
        Some(self.inboxes.iter().map(|inbox| inbox.lock_contended()).sum())
    }
}
