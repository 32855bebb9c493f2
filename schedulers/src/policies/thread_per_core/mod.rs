//! `thread-per-core`: N independent single-worker runtimes, the design of
//! Pingora, glommio and monoio. Each core is a complete `current-thread`
//! runtime of its own — its own worker thread, run queue, epoll driver,
//! timer wheel and blocking pool — and nothing is shared between cores: no
//! stealing, no shared run queue, no shared driver.
//!
//! - A spawn from a task (the free `spawn`, which uses the thread's
//!   context) stays on the core it runs on.
//! - [`crate::Handle::spawn`] on the thread-per-core handle from one of its own
//!   cores stays on that core; from any other thread it goes round-robin
//!   over the cores (one relaxed counter).
//! - [`crate::Handle::spawn_on`] puts a task on a chosen core, which is how a
//!   server binds one listener per core (`net::TcpListener::bind_reuse_port`)
//!   and runs an accept loop on each, so the kernel (`SO_REUSEPORT`)
//!   spreads connections instead of a shared queue.
//! - `block_on` runs on the calling thread with core 0's driver as its
//!   context; its spawns go round-robin.
//! - Metrics: each core's worker counters in core order; driver counters
//!   summed over the cores (maxima: the largest); schedule delays
//!   (`sched-delay=on`) merged over the cores.
//!
//! Inside a task, `Handle::current()` is the handle of the core's own
//! runtime (kind `current-thread`), not the thread-per-core handle.
//!
//! This is not a [`crate::policy::Policy`] but a composition of runtimes,
//! built above the runtime core: [`ThreadPerCore`] only routes, over the
//! cores' handles `H` (the crate's `Handle`, which `crate::dispatch` gives
//! it), and knows nothing of how a core runs.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::metrics::RuntimeMetrics;

/// What `thread-per-core` is (its entry in `wsbench list`).
pub(crate) const INFO: crate::PolicyInfo = crate::PolicyInfo {
    name: "thread-per-core",
    about: "N independent current-thread runtimes, own epoll driver and timer wheel each; no stealing; outside spawns round-robin; SO_REUSEPORT listener per core",
    workers: crate::WorkerRule::Any,
    knobs: &["budget", "event-interval", "task-align", "sched-delay"],
};

/// Gives each thread-per-core runtime an id, so a core's thread knows
/// whose core it is without a lookup.
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// (runtime id, core index) on a core's worker thread; (0, 0) elsewhere.
    static CORE: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// Marks the thread that calls [`CoreMark::set`] as the worker of one core
/// of one thread-per-core runtime.
#[derive(Clone, Copy)]
pub(crate) struct CoreMark {
    id: usize,
    core: usize,
}

impl CoreMark {
    /// Called first on the core's worker thread.
    pub(crate) fn set(self) {
        CORE.with(|c| c.set((self.id, self.core)));
    }
}

/// The cores of one thread-per-core runtime: each core's handle `H`.
pub(crate) struct ThreadPerCore<H> {
    id: usize,
    cores: Box<[H]>,
    /// Round-robin cursor of spawns from outside.
    next: CachePadded<AtomicUsize>,
}

impl<H> ThreadPerCore<H> {
    /// Starts `workers` cores with `start_core(core, mark)`, whose worker
    /// thread must call `mark.set()` before it runs tasks; returns the
    /// routing state over their handles (`handle_of`) and the cores.
    pub(crate) fn start<R, E>(
        workers: usize,
        handle_of: impl Fn(&R) -> H,
        mut start_core: impl FnMut(usize, CoreMark) -> Result<R, E>,
    ) -> Result<(Arc<ThreadPerCore<H>>, Vec<R>), E> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed); // Relaxed: a unique number, nothing published with it.
        let mut parts = Vec::with_capacity(workers);
        for core in 0..workers {
            parts.push(start_core(core, CoreMark { id, core })?);
        }
        let cores = parts.iter().map(handle_of).collect();
        Ok((Arc::new(ThreadPerCore { id, cores, next: CachePadded::new(AtomicUsize::new(0)) }), parts))
    }

    /// The core this thread is the worker of, if it is one of ours.
    fn own_core(&self) -> Option<usize> {
        let (id, core) = CORE.with(Cell::get);
        (id == self.id).then_some(core)
    }

    /// The next core in round-robin order.
    fn next_core(&self) -> usize {
        // Relaxed: only spreads load; no data is published through it.
        self.next.fetch_add(1, Ordering::Relaxed) % self.cores.len()
    }

    /// The core a spawn from this thread goes to: its own core on a core's
    /// thread, else the next in round-robin order.
    pub(crate) fn pick(&self) -> &H {
        let i = self.own_core().unwrap_or_else(|| self.next_core());
        &self.cores[i]
    }

    /// Core `index` (wrapping).
    pub(crate) fn core(&self, index: usize) -> &H {
        &self.cores[index % self.cores.len()]
    }

    /// Every core, in core order.
    pub(crate) fn cores(&self) -> &[H] {
        &self.cores
    }

    pub(crate) fn workers(&self) -> usize {
        self.cores.len()
    }

    /// Worker counters in core order; driver counters, inject-lock,
    /// task-registry and blocking-pool contention summed (maxima: max), from each core's
    /// `metrics_of`.
    pub(crate) fn metrics(&self, metrics_of: impl Fn(&H) -> RuntimeMetrics) -> RuntimeMetrics {
        let mut all = RuntimeMetrics::default();
        for core in self.cores.iter() {
            let m = metrics_of(core);
            all.workers.extend(m.workers);
            all.global_queue_intervals.extend(m.global_queue_intervals);
            all.driver.merge(&m.driver);
            all.task_registry_contended += m.task_registry_contended;
            all.blocking_lock_contended += m.blocking_lock_contended;
            all.inject_lock_contended = match (all.inject_lock_contended, m.inject_lock_contended) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
            if let Some(d) = &m.sched_delay {
                all.sched_delay.get_or_insert_with(Default::default).merge(d);
            }
        }
        all
    }
}
