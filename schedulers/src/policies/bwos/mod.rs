//! `bwos`: the `steal-half` policy with its ring replaced by a block-based
//! work-stealing queue (Wang et al., OSDI'23; `queue.rs`). LIFO slot,
//! inject queue, fairness interval, searching throttle and steal loop are
//! `steal-half`'s own code (`StealHalf<Q>` over the [`RunQueue`] seam), so
//! the queue is the only difference, with these consequences of it:
//! - a steal takes every stealable task of one block (block-granular), not
//!   half of the victim's queue;
//! - thieves first draw one victim with probability proportional to its
//!   stealable tasks (the paper's probabilistic stealing, which the block
//!   positions make cheap to estimate), then fall back to the usual loop;
//! - a push wakes a peer only when the queue holds a stealable task: the
//!   consumer's block (the oldest tasks, up to one block) never is.

pub(crate) mod queue;

use crate::inject::Inject;
use crate::knobs::Knobs;
use crate::policies::steal_half::queue::StealLimit;
use crate::policies::steal_half::{RunQueue, StealHalf};
use crate::task::raw::Notified;

/// What `bwos` is (its entry in `wsbench list`): `steal-half`'s knobs
/// except `steal` (a steal always takes one block).
pub(crate) const INFO: crate::PolicyInfo = crate::PolicyInfo {
    name: "bwos",
    about: "steal-half with its ring replaced by BWoS blocks (OSDI'23): owner never contends, block-granular steals",
    workers: crate::WorkerRule::Any,
    knobs: &[
        "lifo",
        "max-lifo-polls",
        "global-interval",
        "queue-capacity",
        "searching-limit",
        "idle",
        "inject",
        "inject-batch",
        "budget",
        "victim",
        "event-interval",
        "task-align",
        "lifo-steal",
        "steal-passes",
        "timer",
        "sched-delay",
    ],
};

/// The `bwos` row.
pub(crate) type Bwos = StealHalf<queue::Local<Notified>>;

impl RunQueue for queue::Local<Notified> {
    type Stealer = queue::Steal<Notified>;
    const WEIGHTED_VICTIMS: bool = true;

    /// `queue-capacity` entries in blocks of [`queue::DEFAULT_BLOCK_SIZE`]
    /// (fewer for capacities below two such blocks, so there are always at
    /// least two blocks).
    fn with_knobs(knobs: &Knobs) -> (Self, Self::Stealer) {
        let block_size = queue::DEFAULT_BLOCK_SIZE.min(knobs.queue_capacity / 2);
        queue::with_shape(knobs.queue_capacity / block_size, block_size, 0)
    }

    #[inline]
    fn push_back_or_overflow(&mut self, task: Notified, inject: &Inject) -> bool {
        queue::Local::push_back_or_overflow(self, task, inject)
    }

    fn push_batch(&mut self, tasks: std::vec::Drain<'_, Notified>) {
        self.push_back(tasks);
    }

    #[inline]
    fn pop(&mut self) -> Option<Notified> {
        queue::Local::pop(self)
    }

    fn len(&self) -> usize {
        queue::Local::len(self)
    }

    fn capacity(&self) -> usize {
        queue::Local::capacity(self)
    }

    fn remaining_slots(&self) -> usize {
        queue::Local::remaining_slots(self)
    }

    fn worth_notifying(&self, _lifo_occupied: bool) -> bool {
        self.stealable() > 0
    }

    /// `steal=half` (the only value: the knob does not apply to `bwos`)
    /// means one block's worth.
    fn steal_into(victim: &Self::Stealer, dst: &mut Self, limit: StealLimit) -> Option<(Notified, usize)> {
        let max = match limit {
            StealLimit::Half => u32::MAX,
            StealLimit::AtMost(n) => n,
        };
        victim.steal_into(dst, max)
    }

    fn stealable(victim: &Self::Stealer) -> usize {
        victim.len()
    }
}
