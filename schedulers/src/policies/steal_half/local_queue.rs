//! The seam between the `steal-half` policy and its per-worker queue: the
//! operations the policy needs, implemented by tokio's ring (`queue.rs`,
//! the `steal-half` row) and by the BWoS queue (`bwos/queue.rs`, the `bwos`
//! row). Everything else — LIFO slot, inject queue, fairness, searching
//! throttle — is the same code for both.

use crate::inject::Inject;
use crate::knobs::Knobs;
use crate::task::raw::Notified;

use super::queue::{self, StealLimit};

/// A worker's local run queue (the owner's end) and how thieves reach it.
pub(crate) trait RunQueue: Sized + Send + 'static {
    /// The thieves' handle.
    type Stealer: Send + Sync + 'static;

    /// Whether a thief first picks one victim at random weighted by its
    /// stealable tasks (BWoS's probabilistic policy), before the plain
    /// victim loop.
    const WEIGHTED_VICTIMS: bool;

    /// A queue and its thieves' handle, sized by the knobs.
    fn with_knobs(knobs: &Knobs) -> (Self, Self::Stealer);

    /// Pushes one task; true when it (and maybe others) went to `inject`.
    fn push_back_or_overflow(&mut self, task: Notified, inject: &Inject) -> bool;

    /// Pushes a batch that fits in [`remaining_slots`](Self::remaining_slots).
    fn push_batch(&mut self, tasks: std::vec::Drain<'_, Notified>);

    /// The next task of this queue.
    fn pop(&mut self) -> Option<Notified>;

    /// Tasks queued (the owner's count).
    fn len(&self) -> usize;

    /// Total slots.
    fn capacity(&self) -> usize;

    /// Slots free for [`push_batch`](Self::push_batch) now.
    fn remaining_slots(&self) -> usize;

    /// After a push by the owner: whether a peer could now steal something
    /// (`lifo_occupied`: the owner's LIFO slot holds a task).
    fn worth_notifying(&self, lifo_occupied: bool) -> bool;

    /// Steals from `victim` into `dst`: the task to run now and how many
    /// moved, counting it.
    fn steal_into(victim: &Self::Stealer, dst: &mut Self, limit: StealLimit) -> Option<(Notified, usize)>;

    /// Tasks a thief could take from `victim` now (a hint).
    fn stealable(victim: &Self::Stealer) -> usize;
}

impl RunQueue for queue::Local<Notified> {
    type Stealer = queue::Steal<Notified>;
    const WEIGHTED_VICTIMS: bool = false;

    fn with_knobs(knobs: &Knobs) -> (Self, Self::Stealer) {
        queue::local(knobs.queue_capacity)
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

    /// tokio's rule: more than one task waits here, so a peer has
    /// something to steal while this worker runs one.
    fn worth_notifying(&self, lifo_occupied: bool) -> bool {
        usize::from(lifo_occupied) + queue::Local::len(self) > 1
    }

    fn steal_into(victim: &Self::Stealer, dst: &mut Self, limit: StealLimit) -> Option<(Notified, usize)> {
        victim.steal_into(dst, limit)
    }

    fn stealable(victim: &Self::Stealer) -> usize {
        victim.len()
    }
}
