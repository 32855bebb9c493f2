//! The scheduling-policy trait: the only seam between the variants.
//!
//! The runtime core (`runtime/`) owns tasks, wakers, workers, parking, the
//! driver and shutdown, and is generic over a [`Policy`] (monomorphised per
//! variant; nothing on the hot path goes through `dyn`). A policy answers:
//! where a spawned / woken / yielded task goes, from a worker or from
//! outside ([`Policy::push_local`], [`Policy::push_remote`]); where a worker
//! looks for its next task ([`Policy::next_task`]); how and from whom it
//! steals ([`Policy::steal`]); and, through return values, whom the core
//! must notify ([`Wake`]). When to park is the core's decision once
//! `next_task` and `steal` both come back empty; [`Policy::has_work`] is the
//! re-check that closes the lost-wake-up window (see `runtime/idle.rs`).

use crate::knobs::Knobs;
use crate::metrics::Counters;
use crate::task::raw::Notified;

/// Why a task is being scheduled from a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A new task spawned by a task on this worker.
    Spawn,
    /// Woken by a task (or the driver) on this worker.
    Wake,
    /// Woken while it was running (including `yield_now`): back of the queue.
    Yield,
}

/// Whom the core must notify after a push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Any parked worker, if nobody is searching.
    Any,
    /// This worker in particular (its private queue got the task).
    Worker(usize),
}

/// Per-worker context passed to policy calls.
pub(crate) struct WorkerRef<'a> {
    /// Worker index.
    pub(crate) index: usize,
    /// Its counters (owner-only writes).
    pub(crate) counters: &'a Counters,
    /// Scheduler tick (incremented once per loop iteration).
    pub(crate) tick: u32,
    /// Whether the worker is in the searching state.
    pub(crate) is_searching: bool,
}

pub(crate) trait Policy: Send + Sync + Sized + 'static {
    /// Per-worker state, owned by its worker thread.
    type Core: Send + 'static;

    /// Whether idle workers look at other workers' queues.
    const STEALS: bool;

    /// Builds shared state and one core per worker. Knob applicability has
    /// been checked by the builder.
    fn new(workers: usize, knobs: &Knobs) -> (Self, Vec<Self::Core>);

    /// A task scheduled by a task running on this worker. Returns whether
    /// other workers should be notified (new stealable or shared work).
    fn push_local(&self, core: &mut Self::Core, w: &WorkerRef<'_>, task: Notified, origin: Origin) -> bool;

    /// A task scheduled from outside the workers (or by a worker whose core
    /// is parked). `Err(task)` when the shared queues are closed (shutdown):
    /// the caller drops it.
    fn push_remote(&self, task: Notified) -> Result<Wake, Notified>;

    /// The next task from this worker's own sources (and shared queues at
    /// the policy's fairness interval).
    fn next_task(&self, core: &mut Self::Core, w: &WorkerRef<'_>) -> Option<Notified>;

    /// After a task ran: a task it woke into a LIFO slot, to run in the
    /// same tick (`has_budget`: the cooperative budget is not spent; when
    /// it is, the policy moves the task to its queue instead).
    fn next_lifo(&self, _core: &mut Self::Core, _w: &WorkerRef<'_>, _has_budget: bool) -> Option<Notified> {
        None
    }

    /// Look for work elsewhere (other workers, shared queues). Only called
    /// when `next_task` returned `None` and the worker may search.
    fn steal(&self, core: &mut Self::Core, w: &WorkerRef<'_>) -> Option<Notified>;

    /// Cheap emptiness check before sleeping: work this worker could take
    /// from its own and shared queues, and from peers when `peers`.
    fn has_work(&self, core: &Self::Core, index: usize, peers: bool) -> bool;

    /// Called at the end of each poll-time window (at maintenance, every
    /// event interval, and when the worker runs out of local work) with
    /// the number of polls (`run_task` batches) in it and their mean time
    /// (nanoseconds), for adaptive tuning.
    fn maintenance(&self, _core: &mut Self::Core, _mean_poll_ns: f64, _polls: u64) {}

    /// Shutdown: move every task this core holds into `out`.
    fn drain_core(&self, core: &mut Self::Core, out: &mut Vec<Notified>);

    /// Shutdown: close shared queues (later pushes fail) and drain them.
    fn close_shared(&self, out: &mut Vec<Notified>);
}
