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
//!
//! # Extension API
//!
//! This module is how a policy written in another crate runs on the same
//! runtime core as ours: implement [`Policy`], describe it with a
//! [`crate::PolicyInfo`], and [`crate::register`] it; it is then a
//! `--sched` name like any built-in (see the book,
//! `docs/src/extending.md`, and `harness/examples/custom_policy.rs`). The extension API is
//! [`Policy`], [`Notified`], [`WorkerRef`], [`Origin`], [`Wake`], [`Event`],
//! [`crate::PolicyInfo`], [`crate::WorkerRule`], [`crate::register`] and
//! [`crate::knobs::CORE_KNOBS`]. It is young: it may change between versions
//! (new methods get default bodies where they can), and a change is listed
//! in `CHANGELOG.md`.
//!
//! A registered policy is dispatched through one virtual call per spawn and
//! per wake (its tasks hold a `dyn` handle to the runtime); the worker loop
//! and every call into the policy are monomorphised as for the built-ins.

use crate::knobs::Knobs;
use crate::metrics::Counters;

pub use crate::task::raw::Notified;

/// Why a task is being scheduled from a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A new task spawned by a task on this worker.
    Spawn,
    /// Woken by a task (or the driver) on this worker.
    Wake,
    /// Woken while it was running (including `yield_now`): back of the queue.
    Yield,
}

/// Whom the core must notify after a push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Any parked worker, if nobody is searching.
    Any,
    /// This worker in particular (its private queue got the task).
    Worker(usize),
}

/// Per-worker context passed to policy calls.
pub struct WorkerRef<'a> {
    /// Worker index.
    pub(crate) index: usize,
    /// Its counters (owner-only writes).
    pub(crate) counters: &'a Counters,
    /// Scheduler tick (incremented once per loop iteration).
    pub(crate) tick: u32,
    /// Whether the worker is in the searching state.
    pub(crate) is_searching: bool,
}

/// A scheduler event a policy counts on its worker's counters (the
/// `steals`, `lifo_hits`, ... columns); the core counts polls, spawns,
/// parks, driver polls and busy time itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A look at one victim's queue (`steal_attempts`).
    StealAttempt,
    /// A steal that got at least one task (`steals`).
    Steal,
    /// Tasks moved by a steal (`tasks_stolen`; count = tasks).
    TaskStolen,
    /// A task run from a LIFO slot (`lifo_hits`).
    LifoHit,
    /// A task taken from another worker's LIFO slot (`lifo_steals`).
    LifoSteal,
    /// A task taken from a shared (inject) queue (`inject_pops`).
    InjectPop,
    /// The local queue overflowed into a shared one (`overflows`).
    Overflow,
}

impl WorkerRef<'_> {
    /// This worker's index, `0..workers`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The scheduler tick: incremented once per worker-loop iteration
    /// (wraps), for fairness intervals.
    pub fn tick(&self) -> u32 {
        self.tick
    }

    /// Whether the worker is searching for work (stealing policies only).
    pub fn is_searching(&self) -> bool {
        self.is_searching
    }

    /// Adds `n` to the counter of `event` on this worker (an owner-only
    /// relaxed store: call it only from the worker the `WorkerRef` is for).
    #[inline]
    pub fn count(&self, event: Event, n: u64) {
        let c = self.counters;
        let counter = match event {
            Event::StealAttempt => &c.steal_attempts,
            Event::Steal => &c.steals,
            Event::TaskStolen => &c.tasks_stolen,
            Event::LifoHit => &c.lifo_hits,
            Event::LifoSteal => &c.lifo_steals,
            Event::InjectPop => &c.inject_pops,
            Event::Overflow => &c.overflows,
        };
        Counters::bump(counter, n);
    }
}

/// A scheduling policy: where tasks go and where workers look for them.
/// Everything else (tasks, wakers, parking, the reactor, timers, the
/// blocking pool, shutdown, counters) is the runtime core's.
///
/// Contract (checked by the core's tests for the built-ins; hold it in
/// yours): every [`Notified`] handed to the policy is either returned from
/// exactly one of [`Policy::next_task`] / [`Policy::next_lifo`] /
/// [`Policy::steal`], or handed back by [`Policy::drain_core`] /
/// [`Policy::close_shared`] at shutdown, or refused by
/// [`Policy::push_remote`]; never duplicated, never lost. After a push, the
/// core parks a worker only when [`Policy::has_work`] is false, so
/// `has_work` must see every task a push made available (use orderings that
/// make a push visible to a later `has_work` on another thread, e.g. a
/// mutex, or Release/Acquire on the queue's length).
pub trait Policy: Send + Sync + Sized + 'static {
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

    /// Acquisitions of the inject queue's lock(s) that found it held, since
    /// the runtime was built (`RuntimeMetrics::inject_lock_contended`);
    /// `None` for a policy without a locked inject queue.
    fn inject_lock_contended(&self) -> Option<u64> {
        None
    }

    /// Whether this policy counts its steals within and across L3 groups
    /// (`steals_local_group`, `steals_remote_group`; the built-in stealing
    /// policies do when `Knobs::topology` is known).
    fn counts_steal_groups(&self) -> bool {
        false
    }
}
