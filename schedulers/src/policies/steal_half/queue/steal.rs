//! The thief's side of the ring ([`Steal`]): steps 1-7 of the steal protocol
//! in the parent module's documentation. Split from `queue.rs` to keep files
//! with unsafe code under 600 lines; it uses the parent's private `Inner`.

use std::fmt;
use std::ptr;

use super::{pack, unpack, Local, Steal, StealLimit};
use crate::loom::sync::atomic::Ordering::{Acquire, Relaxed, Release};

impl<T> Steal<T> {
    /// Whether the victim has no queued task (a hint).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tasks queued in the victim, excluding any a thief has claimed (a hint).
    pub fn len(&self) -> usize {
        // The owner may push and pop past the head we read before we read
        // the tail; the true count never exceeds the capacity.
        self.tail_minus_head().min(self.0.capacity()) as usize
    }

    /// `tail - real head`, loaded in that order: never "negative", but may
    /// exceed the capacity when the owner moves on between the two loads.
    pub(super) fn tail_minus_head(&self) -> u32 {
        // Acquire: pairs with the Release of every CAS on the head (pop,
        // overflow, claim, end of claim), so the tail read next is at least
        // the real head we read.
        let (_, real) = unpack(self.0.head.load(Acquire));
        // Relaxed: only counted, no slot is read; the Acquire above already
        // bounds it from below.
        let tail = self.0.tail.load(Relaxed);
        tail.wrapping_sub(real)
    }

    /// Steals from this victim into `dst` (steps 1–7 in the module doc).
    /// Returns the task to run now and how many tasks moved in total,
    /// counting it; `None` when there was nothing to take, `dst` is more than
    /// half full, or another thief is at work on this victim.
    pub fn steal_into(&self, dst: &mut Local<T>, limit: StealLimit) -> Option<(T, usize)> {
        assert!(!ptr::eq(&*self.0, &*dst.inner), "a worker cannot steal from its own queue");
        // Step 1. Acquire: pairs with the Release CAS ending a claim on
        // `dst` (step 6 of a thief of ours), so its reads of `dst` slots
        // happen before we write them.
        let (dst_steal, _) = unpack(dst.inner.head.load(Acquire));
        let dst_tail = dst.tail();
        let dst_capacity = dst.inner.capacity();
        let dst_len = dst_tail.wrapping_sub(dst_steal);
        if dst_len > dst_capacity / 2 {
            return None;
        }
        // Steps 2–4. `dst` takes all but the last task.
        let (first, count) = self.claim(limit, dst_capacity - dst_len + 1)?;
        // Step 5.
        for offset in 0..count - 1 {
            // SAFETY: `first + offset` is in our claim: initialised (below
            // the tail we loaded with Acquire) and ours alone until step 6.
            let task = unsafe { self.0.take(first.wrapping_add(offset)) };
            // SAFETY: we own `dst` (`&mut`), and fewer than `capacity -
            // dst_len` tasks are written from its tail, so the slots are free.
            unsafe { dst.inner.write(dst_tail.wrapping_add(offset), task) };
        }
        // SAFETY: the last index of our claim, as above.
        let last = unsafe { self.0.take(first.wrapping_add(count - 1)) };
        // Step 6.
        self.end_claim(first);
        // Step 7.
        if count > 1 {
            // Release: publishes the moved tasks; pairs with the Acquire load
            // of `dst`'s tail in `claim` by thieves of `dst`.
            dst.inner.tail.store(dst_tail.wrapping_add(count - 1), Release);
        }
        Some((last, count as usize))
    }

    /// Steps 2–4, the claim CAS loop: returns `(first index, count)` of the
    /// claimed range, taking at most `max` tasks.
    pub(super) fn claim(&self, limit: StealLimit, max: u32) -> Option<(u32, u32)> {
        // Acquire: pairs with the Release of every CAS on the head, so the
        // tail loaded below is at least the real head and a retry for
        // `available > capacity` below always means the owner moved on, not
        // that our tail was stale. (Slot visibility comes from the tail.)
        let mut head = self.0.head.load(Acquire);
        loop {
            let (steal, real) = unpack(head);
            if steal != real {
                return None;
            }
            // Acquire: pairs with the Release tail stores in `Local`'s pushes
            // and in `steal_into` step 7: the tasks below it are visible.
            let tail = self.0.tail.load(Acquire);
            let available = tail.wrapping_sub(real);
            if available > self.0.capacity() {
                // The owner pushed and popped past our head between the two
                // loads; the CAS would fail. Acquire: as for the first load.
                head = self.0.head.load(Acquire);
                continue;
            }
            let count = limit.amount(available).min(max);
            if count == 0 {
                return None;
            }
            match self.0.head.compare_exchange_weak(
                head,
                pack(real, real.wrapping_add(count)),
                // Release: pairs with the Acquire head loads of other thieves
                // and `len`; they then read a tail at least our new real head.
                Release,
                // Acquire: the fresh head is used like the first load.
                Acquire,
            ) {
                Ok(_) => return Some((real, count)),
                Err(actual) => head = actual,
            }
        }
    }

    /// Step 6, the CAS loop ending a claim that starts at `first`: moves the
    /// steal head up to the real head.
    pub(super) fn end_claim(&self, first: u32) {
        // Relaxed: only the value is needed; the CAS checks it and carries
        // the Release.
        let mut head = self.0.head.load(Relaxed);
        loop {
            let (steal, real) = unpack(head);
            assert_eq!(steal, first, "steal head moved while a claim was held (real head {real})");
            match self.0.head.compare_exchange_weak(
                head,
                pack(real, real),
                // Release: pairs with the Acquire head loads in
                // `push_back_or_overflow`, `push_when_full` and `push_back`:
                // our reads of the claimed slots happen before the owner
                // writes them again.
                Release,
                // Relaxed: only the owner's pops race with us; retry.
                Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => head = actual,
            }
        }
    }
}

impl<T> Clone for Steal<T> {
    fn clone(&self) -> Self {
        Steal(self.0.clone())
    }
}

impl<T> fmt::Debug for Steal<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Steal").field("len", &self.len()).finish()
    }
}
