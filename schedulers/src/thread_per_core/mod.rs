//! `thread-per-core`: N independent single-worker runtimes, the design of
//! Pingora, glommio and monoio. Each core is a complete `current-thread`
//! runtime of its own — its own worker thread, run queue, epoll driver,
//! timer wheel and blocking pool — and nothing is shared between cores: no
//! stealing, no shared run queue, no shared driver.
//!
//! - A spawn from a task (the free `spawn`, which uses the thread's
//!   context) stays on the core it runs on.
//! - [`Handle::spawn`] on the thread-per-core handle from one of its own
//!   cores stays on that core; from any other thread it goes round-robin
//!   over the cores (one relaxed counter).
//! - [`Handle::spawn_on`] puts a task on a chosen core, which is how a
//!   server binds one listener per core (`net::TcpListener::bind_reuse_port`)
//!   and runs an accept loop on each, so the kernel (`SO_REUSEPORT`)
//!   spreads connections instead of a shared queue.
//! - `block_on` runs on the calling thread with core 0's driver as its
//!   context; its spawns go round-robin.
//! - Metrics: each core's worker counters in core order; driver counters
//!   summed over the cores (maxima: the largest).
//!
//! Inside a task, `Handle::current()` is the handle of the core's own
//! runtime (kind `current-thread`), not the thread-per-core handle.

use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::metrics::RuntimeMetrics;
use crate::runtime::{BuildError, Builder, Handle, Runtime};
use crate::task::JoinHandle;

/// What `thread-per-core` is (its entry in `wsbench list`).
pub(crate) const INFO: crate::SchedulerInfo = crate::SchedulerInfo {
    name: "thread-per-core",
    about: "N independent current-thread runtimes, own epoll driver and timer wheel each; no stealing; outside spawns round-robin; SO_REUSEPORT listener per core",
    workers: crate::WorkerRule::Any,
    knobs: &["budget", "event-interval", "task-align"],
};

/// Gives each thread-per-core runtime an id, so a core's thread knows
/// whose core it is without a lookup.
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// (runtime id, core index) on a core's worker thread; (0, 0) elsewhere.
    static CORE: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// The cores of one thread-per-core runtime.
pub(crate) struct ThreadPerCore {
    id: usize,
    cores: Box<[Handle]>,
    /// Round-robin cursor of spawns from outside.
    next: CachePadded<AtomicUsize>,
}

impl ThreadPerCore {
    /// Builds `workers` single-worker runtimes from `base` (its knobs,
    /// hooks and names); returns them and the shared handle state.
    pub(crate) fn start(base: &Builder, workers: usize) -> Result<(Arc<ThreadPerCore>, Vec<Runtime>), BuildError> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed); // Relaxed: a unique number, nothing published with it.
        let mut parts = Vec::with_capacity(workers);
        for core in 0..workers {
            let hook = base.thread_start_hook();
            let child = base
                .current_thread_core(core)
                .on_thread_start(move |_worker: usize| {
                    CORE.with(|c| c.set((id, core)));
                    if let Some(hook) = &hook {
                        hook(core);
                    }
                })
                .build()?;
            parts.push(child);
        }
        let cores = parts.iter().map(Runtime::handle).collect();
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

    /// The core a spawn from this thread goes to.
    pub(crate) fn pick(&self) -> &Handle {
        let i = self.own_core().unwrap_or_else(|| self.next_core());
        &self.cores[i]
    }

    pub(crate) fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.pick().spawn(future)
    }

    /// Core `index` (wrapping).
    pub(crate) fn core(&self, index: usize) -> &Handle {
        &self.cores[index % self.cores.len()]
    }

    pub(crate) fn workers(&self) -> usize {
        self.cores.len()
    }

    pub(crate) fn alive_tasks(&self) -> usize {
        self.cores.iter().map(Handle::alive_tasks).sum()
    }

    /// Restarts the peak counters of every core's driver.
    pub(crate) fn reset_peak_metrics(&self) {
        self.cores.iter().for_each(Handle::reset_peak_metrics);
    }

    /// Worker counters in core order; driver counters and inject-lock
    /// contention summed (maxima: max).
    pub(crate) fn metrics(&self) -> RuntimeMetrics {
        let mut all = RuntimeMetrics::default();
        for core in self.cores.iter() {
            let m = core.metrics();
            all.workers.extend(m.workers);
            all.global_queue_intervals.extend(m.global_queue_intervals);
            all.driver.merge(&m.driver);
            all.inject_lock_contended = match (all.inject_lock_contended, m.inject_lock_contended) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
        }
        all
    }
}
