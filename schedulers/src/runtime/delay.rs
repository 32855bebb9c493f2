//! Schedule delay (`--knob sched-delay=on`): the time from a task being
//! scheduled to its next poll, one mechanism for every policy.
//!
//! 1. Stamp: every path that hands a `Notified` to the policy goes through
//!    the core's `Shared::schedule_task` (spawn, wake, yield, cancel; local
//!    or remote) or the worker's `requeue_deferred` (yields held until the
//!    worker runs out of local work, stamped when they are queued, as tokio
//!    stamps a deferred waker when it is woken). Both stamp the task just
//!    before the push: the time goes into the task header
//!    (`Header::set_scheduled_at`); the requeue reads the clock once for
//!    its whole batch ([`SchedDelay::stamp_at`]). Moves inside the policy
//!    (LIFO slot to ring, overflow, steals) keep the stamp.
//! 2. Record: the worker loop counts every poll in one place
//!    (`WorkerCx::count_poll`), which bumps `polls` and calls
//!    [`SchedDelay::record`]: now minus the stamp, into the worker's own
//!    buckets (`metrics::delay`). So the histogram's count equals the
//!    `polls` counter, exactly, on every policy.
//!
//! The clock is `Instant::now()` (a vDSO `clock_gettime` where the kernel
//! offers one), read twice per scheduled poll, relative to an epoch taken
//! when the runtime is built, in ticks of `metrics::TICK_NS` so that a
//! stamp fits the header's 32 bits. With the knob off `Shared` holds no
//! `SchedDelay`: nothing is stamped, read or recorded.

use std::time::Instant;

use crate::metrics::{delay_blocks, delay_snapshot, DelayBlocks, DelayHistogram, TICK_SHIFT};
use crate::task::raw::Notified;

/// The clock epoch and the workers' buckets of one runtime.
pub(crate) struct SchedDelay {
    epoch: Instant,
    blocks: DelayBlocks,
}

impl SchedDelay {
    pub(crate) fn new(workers: usize) -> SchedDelay {
        SchedDelay { epoch: Instant::now(), blocks: delay_blocks(workers) }
    }

    /// Now, in ticks since the epoch, modulo 2^32.
    #[inline(always)]
    pub(crate) fn now_ticks(&self) -> u32 {
        // Truncation intended: stamps and delays are taken mod 2^32 ticks
        // (`metrics::TICK_SHIFT` says how long that is).
        (self.epoch.elapsed().as_nanos() >> TICK_SHIFT) as u32
    }

    /// Step 1: `task` is about to be pushed to a queue.
    #[inline(always)]
    pub(crate) fn stamp(&self, task: &Notified) {
        task.header().set_scheduled_at(self.now_ticks());
    }

    /// Step 1 for a batch queued at one moment (`now_ticks` read once):
    /// the yields a worker requeues together.
    #[inline(always)]
    pub(crate) fn stamp_at(&self, task: &Notified, ticks: u32) {
        task.header().set_scheduled_at(ticks);
    }

    /// Step 2: worker `worker` is about to poll `task`, which it took from
    /// a queue.
    #[inline(always)]
    pub(crate) fn record(&self, worker: usize, task: &Notified) {
        let waited = self.now_ticks().wrapping_sub(task.header().scheduled_at());
        self.blocks[worker].record(waited);
    }

    /// Every worker's delays so far.
    pub(crate) fn snapshot(&self) -> DelayHistogram {
        delay_snapshot(&self.blocks)
    }
}
