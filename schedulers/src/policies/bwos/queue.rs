//! The local run queue of the `bwos` policy: a block-based work-stealing
//! queue after Wang et al., "BWoS: Formally Verified Block-based Work
//! Stealing for Parallel Processing" (OSDI'23), FIFO variant.
//!
//! # Shape
//!
//! `blocks` blocks (a power of two, [`DEFAULT_BLOCKS`]) of `block_size`
//! entries ([`DEFAULT_BLOCK_SIZE`]) used as a ring of blocks. Blocks are
//! entered in a sequence `seq = 0, 1, 2, ...` (a `u64` that never wraps in
//! practice); `seq` lives in block `seq % blocks`, in *round* `seq / blocks`
//! truncated to `u32` (the *version* that wraps). Each block has three
//! packed `(round, index)` words (see [`pack`]):
//!
//! - `committed`: entries `[0, index)` were written in this round. Stored
//!   only by the owner.
//! - `reserved`: entries `[0, index)` are spoken for by thieves, or the
//!   consumer *took the block over* (index = `block_size`). CAS'd by
//!   thieves, swapped by the owner.
//! - `stolen`: how many entries no thief will read again in this round; it
//!   reaches `block_size` once every thief that reserved here has finished
//!   and the consumer has added its own share.
//!
//! The owner ([`Local`]) keeps its positions in plain fields: the producer
//! block `p` with its fill `pidx`, and the consumer block `c <= p` with its
//! read position `consumed`. Thieves share one position, `spos`, the block
//! they steal from; it is kept ahead of the consumer (`spos > c`).
//!
//! # Protocols
//!
//! Push (owner, [`Local::push_back_or_overflow`]):
//! 1. If `pidx < block_size`, write the entry and store `committed =
//!    (round, pidx + 1)` (Release). This is the whole fast path: no load of
//!    anything a thief writes.
//! 2. Block full: advance to `p + 1` if that block is free — the consumer
//!    left its previous occupant (`p + 1 - c < blocks`, counting a consumer
//!    that has read its whole block as already in the next one, which it
//!    then enters by Pop step 3) and `stolen` shows the previous round
//!    finished (Acquire). Reset `committed` and `stolen`
//!    to the new round, then publish the round with a Release store of
//!    `reserved = (round, 0)`; go to 1.
//! 3. Not free because the consumer's block is next (all blocks in use):
//!    hand the consumer block's unread entries plus the new task to the
//!    overflow sink in one batch and advance the consumer (Pop step 3).
//!    Not free because a thief is still reading the next block: send only
//!    the new task to the sink.
//!
//! Pop (owner, [`Local::pop`]):
//! 1. Read limit: `pidx` when `c == p`, else `block_size` (a block the
//!    producer left is full). If `consumed` is below it, read that entry.
//!    No atomic access: thieves never touch the consumer's block.
//! 2. Otherwise, if `c == p` the queue is empty.
//! 3. Otherwise take over block `c + 1`: swap its `reserved` to `(round,
//!    block_size)`. The old index `t` says thieves own `[0, t)`; the
//!    consumer continues from `t` and adds its share `block_size - t` to
//!    `stolen`. Then raise `spos` to at least `c + 2` so thieves stay ahead.
//!
//! Steal (thief, [`Steal::steal_into`]; the thief owns `dst`):
//! 1. Give up if `dst` holds more than half its capacity.
//! 2. Load `spos` and that block's `reserved` (Acquire). A round one behind
//!    `spos`'s means the producer has not reached that block: nothing to
//!    steal. Any other mismatch means our `spos` was stale: start again.
//! 3. `reserved` full (taken over or all reserved): CAS `spos` one block
//!    on and start again.
//! 4. Load `committed` (Acquire); nothing beyond `reserved` means the
//!    producer's own unfilled block is drained: give up. So does a round
//!    past `spos`'s: the owner lapped the ring since step 2.
//! 5. Reserve every committed, unreserved entry of the block (at most what
//!    `dst` can take, plus one): CAS `reserved` forward. On failure go to 2.
//!    Steals never cross a block.
//! 6. Move all but the last entry into `dst` (the thief's own pushes), read
//!    the last, and add the count to `stolen` (Release).
//!
//! # Relation to the ring of `steal-half`
//!
//! The steal-half ring makes owner and thieves agree through one CAS word
//! on every pop. Here the owner's pop touches no shared word at all and its
//! push only stores, because thieves may not enter the consumer's block
//! (take-over, Pop step 3) and the producer may not enter a block a thief
//! is still reading (Push step 2). The costs: one block of tasks — the
//! oldest ones, those in the consumer's block — is never stealable, so a
//! short queue (fewer than `block_size` tasks) cannot be stolen from at all;
//! up to one block of capacity is lost to a slow thief; and a steal moves at
//! most one block. BWoS's owner-side versions (the `round` halves) replace
//! the ring's single packed head; a thief holding a stale `spos` for 2^32
//! rounds of one block could mistake an old round for a new one (ABA),
//! which we accept as tokio accepts its 2^32 index wrap. The paper's
//! probabilistic victim choice lives in the policy (`bwos/mod.rs`), fed by
//! [`Steal::len`].

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;

use crossbeam_utils::CachePadded;

pub use crate::policies::steal_half::queue::Overflow;

use crate::loom::cell::UnsafeCell;
use crate::loom::sync::atomic::AtomicU64;
use crate::loom::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use crate::loom::sync::Arc;

/// Blocks per queue: 8 blocks of 32 entries hold tokio's 256 tasks.
#[cfg(not(loom))]
pub const DEFAULT_BLOCKS: usize = 8;
/// Entries per block (the BWoS tokio port's 32).
#[cfg(not(loom))]
pub const DEFAULT_BLOCK_SIZE: usize = 32;

/// Under loom: the smallest queue with a block to steal from.
#[cfg(loom)]
pub const DEFAULT_BLOCKS: usize = 2;
/// Under loom: two entries, so a block can be partly reserved.
#[cfg(loom)]
pub const DEFAULT_BLOCK_SIZE: usize = 2;

/// Packs a round (high half) and an index (low half) into one word.
fn pack(round: u32, index: u32) -> u64 {
    (u64::from(round) << u32::BITS) | u64::from(index)
}

/// Splits a packed word into `(round, index)`.
fn unpack(word: u64) -> (u32, u32) {
    // Truncation is the point: each half is one u32.
    ((word >> u32::BITS) as u32, word as u32)
}

/// One block's shared positions; see the module doc.
struct Block {
    /// Stored by the owner on every push: its own cache line.
    committed: CachePadded<AtomicU64>,
    /// Thieves' words, written together; a line apart from `committed`.
    thieves: CachePadded<ThiefWords>,
}

struct ThiefWords {
    reserved: AtomicU64,
    stolen: AtomicU64,
}

struct Inner<T> {
    /// The block thieves steal from (a block sequence number).
    spos: CachePadded<AtomicU64>,
    /// The owner's producer block, for [`Steal::len`] only.
    pseq: CachePadded<AtomicU64>,
    blocks: Box<[Block]>,
    /// `blocks.len() * block_size` entries, block by block.
    entries: Box<[UnsafeCell<MaybeUninit<T>>]>,
    block_size: u32,
    /// `log2(blocks.len())`.
    block_shift: u32,
}

// SAFETY: tasks move between threads (a thief reads what the owner wrote),
// so `T: Send` is required; no `&T` is shared, so `T: Sync` is not. Every
// entry is written by the owner only while no one else may read it, and
// read by exactly one party (the consumer, or the thief that reserved it);
// see the protocols in the module doc.
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for Inner<T> {}

impl<T> Inner<T> {
    fn block(&self, seq: u64) -> &Block {
        &self.blocks[self.block_index(seq)]
    }

    fn block_index(&self, seq: u64) -> usize {
        (seq & (self.blocks.len() as u64 - 1)) as usize
    }

    fn round(&self, seq: u64) -> u32 {
        // Truncation is the version wrap the rounds are designed for.
        (seq >> self.block_shift) as u32
    }

    /// Where block `seq`'s entries start in `entries`.
    fn first_entry(&self, seq: u64) -> usize {
        (seq & (self.blocks.len() as u64 - 1)) as usize * self.block_size as usize
    }

    /// Entry `at` without a bounds check (one per push and pop otherwise).
    ///
    /// # Safety
    ///
    /// `at < entries.len()`: a block's first entry plus an index below the
    /// block size.
    unsafe fn entry(&self, at: usize) -> &UnsafeCell<MaybeUninit<T>> {
        debug_assert!(at < self.entries.len(), "entry {at} of {}", self.entries.len());
        // SAFETY: in bounds, as the caller guarantees.
        unsafe { self.entries.get_unchecked(at) }
    }

    /// # Safety
    ///
    /// As for [`entry`](Self::entry); and the caller is the owner, entry
    /// `at` is in the producer block at or past `pidx`, and the block was
    /// made free by Push step 2.
    unsafe fn write(&self, at: usize, task: T) {
        // SAFETY: in bounds, passed on from the caller.
        unsafe { self.entry(at) }.with_mut(|slot| {
            // SAFETY: exclusive access to a free entry, as the caller
            // guarantees; overwriting a free entry drops nothing.
            unsafe { ptr::write(slot, MaybeUninit::new(task)) }
        });
    }

    /// # Safety
    ///
    /// As for [`entry`](Self::entry); and the entry holds a task written in
    /// the current round, its write
    /// happens-before this call, and the caller alone owns it (consumer
    /// past the take-over point, or a thief's reservation).
    unsafe fn take(&self, at: usize) -> T {
        // SAFETY: in bounds, passed on from the caller.
        unsafe { self.entry(at) }.with(|slot| {
            // SAFETY: initialised and owned by the caller; read exactly once.
            unsafe { ptr::read(slot).assume_init() }
        })
    }
}

/// The owner's end: push, pop, and be the target of a steal. `Send`, not
/// `Sync`.
pub struct Local<T> {
    inner: Arc<Inner<T>>,
    /// Producer block and its fill.
    p: u64,
    pidx: u32,
    /// Consumer block and its read position.
    c: u64,
    consumed: u32,
    /// Cached from `inner` and the positions, so that the fast paths do
    /// no arithmetic on sequence numbers: the block size, where the
    /// producer's and the consumer's blocks start in `entries`, and the
    /// producer block's index and `committed` word with index 0.
    size: u32,
    p_block: usize,
    p_entry: usize,
    c_entry: usize,
    p_word: u64,
    _not_sync: PhantomData<Cell<()>>,
}

/// A thief's handle on someone else's queue.
pub struct Steal<T>(Arc<Inner<T>>);

/// Creates a queue of [`DEFAULT_BLOCKS`] blocks of [`DEFAULT_BLOCK_SIZE`].
pub fn local<T: Send + 'static>() -> (Local<T>, Steal<T>) {
    with_shape(DEFAULT_BLOCKS, DEFAULT_BLOCK_SIZE, 0)
}

/// A queue of `blocks` (a power of two, at least 2) blocks of `block_size`
/// entries, whose first block is round `start_round` (tests start near
/// `u32::MAX` to cross the version wrap).
pub fn with_shape<T>(blocks: usize, block_size: usize, start_round: u32) -> (Local<T>, Steal<T>) {
    assert!(blocks.is_power_of_two() && blocks >= 2, "blocks must be a power of two >= 2, got {blocks}");
    assert!((1..=1 << 16).contains(&block_size), "block size must be in 1..=65536, got {block_size}");
    let size = block_size as u32;
    let start = u64::from(start_round) << blocks.trailing_zeros();
    let before = start_round.wrapping_sub(1);
    let block = |k: usize| {
        // Block 0 starts as the consumer's, taken over; the others as
        // finished blocks of the round before.
        let (committed, reserved, stolen) = if k == 0 {
            (pack(start_round, 0), pack(start_round, size), pack(start_round, size))
        } else {
            (pack(before, size), pack(before, size), pack(before, size))
        };
        Block {
            committed: CachePadded::new(AtomicU64::new(committed)),
            thieves: CachePadded::new(ThiefWords {
                reserved: AtomicU64::new(reserved),
                stolen: AtomicU64::new(stolen),
            }),
        }
    };
    let inner = Arc::new(Inner {
        spos: CachePadded::new(AtomicU64::new(start + 1)),
        pseq: CachePadded::new(AtomicU64::new(start)),
        blocks: (0..blocks).map(block).collect(),
        entries: (0..blocks * block_size).map(|_| UnsafeCell::new(MaybeUninit::uninit())).collect(),
        block_size: size,
        block_shift: blocks.trailing_zeros(),
    });
    let local = Local {
        inner: inner.clone(),
        p: start,
        pidx: 0,
        c: start,
        consumed: 0,
        size,
        p_block: 0,
        p_entry: 0,
        c_entry: 0,
        p_word: pack(start_round, 0),
        _not_sync: PhantomData,
    };
    (local, Steal(inner))
}

impl<T> Local<T> {
    /// Entries in all blocks.
    pub fn capacity(&self) -> usize {
        self.inner.entries.len()
    }

    /// Tasks queued, as the owner counts them: may over-count tasks thieves
    /// took from blocks past the consumer's.
    pub fn len(&self) -> usize {
        let size = u64::from(self.inner.block_size);
        let queued = if self.c == self.p {
            u64::from(self.pidx - self.consumed)
        } else {
            size - u64::from(self.consumed) + (self.p - self.c - 1) * size + u64::from(self.pidx)
        };
        queued as usize
    }

    /// Whether no task is queued (may say no for a queue thieves emptied).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tasks outside the consumer's block, the only ones thieves may take
    /// (an upper bound, as for [`len`](Self::len)).
    pub fn stealable(&self) -> usize {
        if self.c == self.p {
            return 0;
        }
        ((self.p - self.c - 1) * u64::from(self.inner.block_size) + u64::from(self.pidx)) as usize
    }

    /// Entries [`push_back`](Self::push_back) can take now: the rest of the
    /// producer block and every free block after it. Never over-counts.
    pub fn remaining_slots(&self) -> usize {
        self.room_for(usize::MAX)
    }

    /// [`remaining_slots`](Self::remaining_slots), counting free blocks only
    /// until `want` entries are found (each counted block costs a load).
    pub(crate) fn room_for(&self, want: usize) -> usize {
        let size = self.size as usize;
        let mut free = size - self.pidx as usize;
        let mut seq = self.p + 1;
        while free < want && self.block_is_free(seq) {
            free += size;
            seq += 1;
        }
        free
    }

    /// Push step 2's test: block `seq` (the next one the producer would
    /// enter) is no longer used by the consumer or any thief.
    fn block_is_free(&self, seq: u64) -> bool {
        if seq - self.consumer_after_advance() >= self.inner.blocks.len() as u64 {
            return false;
        }
        let done = pack(self.inner.round(seq).wrapping_sub(1), self.inner.block_size);
        // Acquire: pairs with the Release `stolen` increments (steal step 6)
        // — through the release sequence the consumer's own increment (pop
        // step 3) continues — so every thief's read of the old entries
        // happens before we write them again.
        self.inner.block(seq).thieves.stolen.load(Acquire) == done
    }

    /// The consumer block once the consumer leaves an exhausted block it
    /// still sits on (pop advances lazily, on the next pop).
    fn consumer_after_advance(&self) -> u64 {
        if self.consumed == self.inner.block_size && self.c < self.p {
            self.c + 1
        } else {
            self.c
        }
    }

    /// Push step 2: enters block `p + 1` if it is free, first moving the
    /// consumer off an exhausted block if that is what holds it.
    fn advance_producer(&mut self) -> bool {
        let seq = self.p + 1;
        if !self.block_is_free(seq) {
            return false;
        }
        if self.consumer_after_advance() != self.c {
            self.advance_consumer();
        }
        let round = self.inner.round(seq);
        let block = self.inner.block(seq);
        // Relaxed (both): published by the Release store of `reserved` below.
        block.committed.store(pack(round, 0), Relaxed);
        block.thieves.stolen.store(pack(round, 0), Relaxed);
        // Release: publishes the two resets; pairs with the Acquire load of
        // `reserved` in steal step 2, so a thief that sees this round sees
        // this round's `committed` and `stolen` (or later values).
        block.thieves.reserved.store(pack(round, 0), Release);
        // Relaxed: a hint for `Steal::len`; nothing is read through it.
        self.inner.pseq.store(seq, Relaxed);
        self.p = seq;
        self.pidx = 0;
        self.p_block = self.inner.block_index(seq);
        self.p_entry = self.inner.first_entry(seq);
        self.p_word = pack(round, 0);
        true
    }

    /// Push step 1 once `pidx < block_size` holds.
    #[inline]
    fn push_in_block(&mut self, task: T) {
        let index = self.pidx;
        // SAFETY: in bounds (`pidx < size` here); we are the owner (`&mut
        // self`); the entry is the one at `pidx` in the producer block,
        // which Push step 2 made free, and no thief reads past `committed`.
        unsafe { self.inner.write(self.p_entry + index as usize, task) };
        self.pidx = index + 1;
        // Release: publishes the entry; pairs with the Acquire load of
        // `committed` in steal step 4.
        self.inner.blocks[self.p_block].committed.store(self.p_word | u64::from(self.pidx), Release);
    }

    /// Pushes `task`. When the queue is full, sends it to `overflow` —
    /// with the consumer block's unread tasks in one batch when that frees
    /// a block — and returns true; returns false when it was queued.
    #[inline]
    pub fn push_back_or_overflow<O: Overflow<T>>(&mut self, task: T, overflow: &O) -> bool {
        if self.pidx < self.size || self.advance_producer() {
            self.push_in_block(task);
            return false;
        }
        self.overflow(task, overflow);
        true
    }

    /// Push step 3, out of line so the push above stays small.
    #[cold]
    #[inline(never)]
    fn overflow<O: Overflow<T>>(&mut self, task: T, overflow: &O) {
        if self.p + 1 - self.c < self.inner.blocks.len() as u64 {
            // A thief is still reading the next block.
            overflow.push(task);
            return;
        }
        let mut batch = Spill { local: self, new_task: Some(task) };
        overflow.push_batch(batch.by_ref());
        let left = batch.len();
        drop(batch);
        assert!(left == 0, "overflow sink left {left} tasks unconsumed");
        self.advance_consumer();
    }

    /// Pushes every task of `tasks`.
    ///
    /// # Panics
    ///
    /// When `tasks.len() > remaining_slots()`: the caller must check first.
    pub fn push_back<I: ExactSizeIterator<Item = T>>(&mut self, tasks: I) {
        let count = tasks.len();
        let free = self.room_for(count);
        assert!(count <= free, "push_back of {count} tasks into a local queue with {free} free slots");
        for task in tasks.take(count) {
            if self.pidx == self.size {
                assert!(self.advance_producer(), "a block counted free in remaining_slots became busy");
            }
            self.push_in_block(task);
        }
    }

    /// Takes the oldest queued task.
    pub fn pop(&mut self) -> Option<T> {
        loop {
            let limit = if self.c == self.p { self.pidx } else { self.size };
            if self.consumed < limit {
                let index = self.consumed;
                self.consumed += 1;
                // SAFETY: in bounds (`consumed < limit <= size`); Pop step
                // 1: the consumer owns its block from the take-over point
                // on, and we wrote the entry ourselves.
                return Some(unsafe { self.inner.take(self.c_entry + index as usize) });
            }
            if self.c == self.p {
                return None;
            }
            self.advance_consumer();
        }
    }

    /// Pop step 3: takes over block `c + 1`.
    fn advance_consumer(&mut self) {
        let seq = self.c + 1;
        let (size, round) = (self.inner.block_size, self.inner.round(seq));
        let thieves = &self.inner.block(seq).thieves;
        // Relaxed: only the value is needed — an RMW reads the latest
        // reservation whatever its ordering, so every thief's reservation
        // CAS is before or after this swap — and the consumer reads only
        // entries it wrote itself.
        let (old_round, taken) = unpack(thieves.reserved.swap(pack(round, size), Relaxed));
        assert_eq!(old_round, round, "take-over of block {seq}: its round is {old_round}, not {round}");
        if taken < size {
            // Relaxed: the owner's own share publishes nothing; it continues
            // the release sequence of the thieves' increments (see
            // `block_is_free`).
            thieves.stolen.fetch_add(u64::from(size - taken), Relaxed);
        }
        self.c = seq;
        self.consumed = taken;
        self.c_entry = self.inner.first_entry(seq);
        // Release: block `seq + 1` was last set up (for the round before
        // its next one) before this point; pairs with the Acquire load of
        // `spos` in steal step 2, so a thief sent there never sees an older
        // round.
        self.inner.spos.fetch_max(seq + 1, Release);
    }
}

impl<T> Drop for Local<T> {
    fn drop(&mut self) {
        // Takes over every block, so thieves can reserve nothing more; what
        // they reserved already is theirs to drop.
        while let Some(task) = self.pop() {
            drop(task);
        }
    }
}

/// The consumer block's unread tasks, then the new one (Push step 3).
/// Drops what the sink did not take.
struct Spill<'a, T> {
    local: &'a mut Local<T>,
    new_task: Option<T>,
}

impl<T> Iterator for Spill<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let local = &mut *self.local;
        if local.consumed == local.inner.block_size {
            return self.new_task.take();
        }
        let index = local.consumed;
        local.consumed += 1;
        // SAFETY: in bounds (`consumed < block_size`); as in `pop`: the
        // consumer block is full (the producer is
        // `blocks - 1` blocks ahead) and ours from the take-over point on.
        Some(unsafe { local.inner.take(local.c_entry + index as usize) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = (self.local.inner.block_size - self.local.consumed) as usize + usize::from(self.new_task.is_some());
        (len, Some(len))
    }
}

impl<T> ExactSizeIterator for Spill<'_, T> {}

impl<T> Drop for Spill<'_, T> {
    fn drop(&mut self) {
        self.by_ref().for_each(drop);
    }
}

#[path = "queue/steal.rs"]
mod steal;

impl<T> Clone for Steal<T> {
    fn clone(&self) -> Self {
        Steal(self.0.clone())
    }
}

impl<T> fmt::Debug for Local<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Local").field("len", &self.len()).field("producer", &self.p).field("consumer", &self.c).finish()
    }
}

impl<T> fmt::Debug for Steal<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Steal").field("len", &self.len()).finish()
    }
}

#[cfg(all(test, not(loom)))]
#[path = "queue/tests.rs"]
mod tests;

#[cfg(all(test, not(loom)))]
#[path = "queue/stress.rs"]
mod stress;

#[cfg(all(test, loom))]
#[path = "../../loom_tests/bwos_queue.rs"]
mod loom_tests;
