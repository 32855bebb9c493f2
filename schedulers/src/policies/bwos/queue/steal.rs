//! The thief's side of the BWoS queue: Steal steps 1–6 of the module doc.

use std::ptr;

use super::{pack, unpack, Local, Steal};
use crate::loom::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// What steal steps 2–5 found on one look at the victim.
pub(super) enum Look {
    /// Reserved `count` entries from `first` in block `seq`.
    Reserved { seq: u64, first: u32, count: u32 },
    /// Nothing to steal now.
    Empty,
    /// A stale position or a lost race: look again.
    Retry,
}

impl<T> Steal<T> {
    /// Whether the victim has no stealable task (a hint).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tasks thieves could take now: those from `spos`'s first unreserved
    /// entry to the producer's last committed one (a hint; the consumer's
    /// block is never counted).
    pub fn len(&self) -> usize {
        let inner = &*self.0;
        // Relaxed: a hint; a stale position only makes the count stale.
        let spos = inner.spos.load(Relaxed);
        // Relaxed: a hint (`advance_producer` stores it Relaxed).
        let pseq = inner.pseq.load(Relaxed);
        if pseq < spos {
            return 0;
        }
        let size = u64::from(inner.block_size);
        let round = inner.round(spos);
        // Acquire: as in steal step 2.
        let (reserved_round, reserved) = unpack(inner.block(spos).thieves.reserved.load(Acquire));
        // Acquire: as in steal step 4.
        let (committed_round, committed) = unpack(inner.block(spos).committed.load(Acquire));
        if reserved_round != round || committed_round != round {
            return 0;
        }
        let first = u64::from(committed.saturating_sub(reserved));
        let later = if pseq == spos {
            0
        } else {
            // Acquire: as in steal step 4.
            let (_, last) = unpack(inner.block(pseq).committed.load(Acquire));
            (pseq - spos - 1) * size + u64::from(last)
        };
        (first + later).min(inner.entries.len() as u64) as usize
    }

    /// Steals from this victim into `dst` (steps 1–6 of the module doc): at
    /// most `max` tasks (0 is taken as 1), all from one block. Returns the
    /// task to run now and how many tasks moved, counting it; `None` when
    /// there was nothing to take or `dst` is more than half full.
    pub fn steal_into(&self, dst: &mut Local<T>, max: u32) -> Option<(T, usize)> {
        assert!(!ptr::eq(&*self.0, &*dst.inner), "a worker cannot steal from its own queue");
        // Step 1.
        if dst.len() > dst.capacity() / 2 {
            return None;
        }
        // A steal never takes more than a block, so `dst`'s room is only
        // counted that far.
        let room = dst.room_for(self.0.block_size as usize) as u32;
        let max = max.max(1).min(room.saturating_add(1));
        let (seq, first, count) = loop {
            match self.look(max) {
                Look::Reserved { seq, first, count } => break (seq, first, count),
                Look::Empty => return None,
                Look::Retry => continue,
            }
        };
        Some(self.finish(dst, seq, first, count))
    }

    /// Step 6: moves a reservation of `count` entries from `first` in block
    /// `seq` into `dst`, all but the last, which it returns with `count`.
    pub(super) fn finish(&self, dst: &mut Local<T>, seq: u64, first: u32, count: u32) -> (T, usize) {
        let inner = &*self.0;
        let base = inner.first_entry(seq);
        let moved = (first..first + count - 1).map(|index| {
            // SAFETY: in bounds (a reservation ends at most at the block
            // size); `index` is in our reservation (step 5): committed
            // before the Acquire load of step 4 and ours alone.
            unsafe { inner.take(base + index as usize) }
        });
        if count > 1 {
            dst.push_back(moved);
        }
        // SAFETY: the last index of our reservation, as above.
        let last = unsafe { inner.take(base + (first + count - 1) as usize) };
        // Release: our reads of the entries happen before the producer
        // writes them again; pairs with the Acquire load of `stolen` in
        // `Local::block_is_free` (push step 2).
        inner.block(seq).thieves.stolen.fetch_add(u64::from(count), Release);
        (last, count as usize)
    }

    /// Steps 2–5, one look: reserves up to `max` entries of the block at
    /// `spos`.
    pub(super) fn look(&self, max: u32) -> Look {
        let inner = &*self.0;
        // Acquire: pairs with the Release `fetch_max` in `advance_consumer`
        // (pop step 3) and the Release CAS of step 3 below: whoever moved
        // `spos` to `seq` had seen block `seq`'s previous round set up, so
        // step 2 reads that round or a later one, never an older one (which
        // would make us retry on a stale view for ever).
        let seq = inner.spos.load(Acquire);
        let round = inner.round(seq);
        let block = inner.block(seq);
        // Step 2. Acquire: pairs with the Release store of `reserved` that
        // starts a round (push step 2): this round's `committed` and
        // `stolen` resets are visible.
        let word = block.thieves.reserved.load(Acquire);
        let (reserved_round, reserved) = unpack(word);
        if reserved_round != round {
            return if reserved_round == round.wrapping_sub(1) { Look::Empty } else { Look::Retry };
        }
        // Step 3.
        if reserved == inner.block_size {
            // Release: passes on what step 2 saw (this block's round, set up
            // after the next block's previous round); pairs with the Acquire
            // load of `spos` above. Relaxed on failure: someone else moved
            // it, and we look again either way.
            let _ = inner.spos.compare_exchange(seq, seq + 1, Release, Relaxed);
            return Look::Retry;
        }
        // Step 4. Acquire: pairs with the Release store of `committed` in
        // push step 1: the entries below it are visible.
        let (committed_round, committed) = unpack(block.committed.load(Acquire));
        // A later round means the owner lapped the ring since step 2. We
        // may have seen only the Relaxed reset of `committed` (push step 2),
        // which orders nothing, so looking again could find the same stale
        // `spos` for ever: give up this attempt instead.
        if committed_round != round || committed <= reserved {
            return Look::Empty;
        }
        // Step 5.
        let count = (committed - reserved).min(max);
        // Relaxed: the entries' visibility comes from step 4; the CAS only
        // has to be ordered against the consumer's take-over swap and other
        // thieves' CASes, which any RMW on the one word is.
        match block.thieves.reserved.compare_exchange(word, pack(round, reserved + count), Relaxed, Relaxed) {
            Ok(_) => Look::Reserved { seq, first: reserved, count },
            Err(_) => Look::Retry,
        }
    }
}
