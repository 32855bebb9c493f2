//! A worker's core: the state a worker thread (or a `block_on` caller)
//! owns while it runs the scheduler loop: the policy's per-worker state,
//! the tick, the searching flag and the poll-time window; and where a core
//! waits while no thread runs it ([`Dormant`]). Shared by `worker.rs` (which
//! runs it) and `shared.rs` (which keeps a dormant one), so that those two
//! need not import each other.

use std::time::Instant;

use super::park::Parker;
use crate::policy::Policy;

pub(crate) struct Core<P: Policy> {
    pub(crate) policy: P::Core,
    pub(crate) tick: u32,
    pub(crate) is_searching: bool,
    /// Ticks until the next maintenance (a countdown: `event_interval` is a
    /// runtime value, and `tick % event_interval` would divide every tick).
    pub(crate) maintenance_in: u32,
    /// Woken by a notification and has not run a task since.
    pub(crate) woken: bool,
    /// Start of the current busy period.
    pub(crate) busy_since: Instant,
    /// Start of the current poll-time window. As in tokio, a window runs
    /// while the worker processes scheduled tasks: it starts when the
    /// worker starts, unparks, finds a task by stealing, or finishes a
    /// driver poll, and ends at maintenance or when local work runs out.
    pub(crate) window_start: Instant,
    /// `run_task` calls (a task plus the LIFO tasks it led to) in the
    /// window: the unit of the mean poll time, as in tokio.
    pub(crate) window_batches: u64,
}

/// A worker's core and parker while no thread runs them: `current-thread`
/// without a driver thread keeps them here between `block_on` calls.
pub(crate) struct Dormant<P: Policy> {
    pub(crate) core: Box<Core<P>>,
    pub(crate) parker: Parker,
}

/// A fresh core for worker `index`'s policy state.
pub(crate) fn new_core<P: Policy>(event_interval: u32, policy_core: P::Core) -> Box<Core<P>> {
    Box::new(Core {
        policy: policy_core,
        tick: 0,
        is_searching: false,
        maintenance_in: event_interval,
        woken: false,
        busy_since: Instant::now(),
        window_start: Instant::now(),
        window_batches: 0,
    })
}
