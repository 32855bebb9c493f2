//! The local run queue of the `steal-half` policy: a fixed ring owned by one
//! worker, from which other workers steal about half at a time.
//!
//! # Shape
//!
//! A ring of `capacity` slots (a power of two, [`DEFAULT_CAPACITY`] unless
//! the `queue-capacity` knob says otherwise) indexed by `u32` counters that
//! run freely and wrap; a slot is `index & (capacity - 1)`. Three counters:
//!
//! - `tail` (an `AtomicU32`): one past the newest task. Only the owner
//!   ([`Local`]) stores it.
//! - the *real head*: the oldest task not yet taken by anyone.
//! - the *steal head*: the oldest slot a thief may still be reading. It equals
//!   the real head except while one thief holds a claim on
//!   `[steal head, real head)`.
//!
//! Both heads live in one `AtomicU64` (steal head in the high half, real head
//! in the low half, see [`pack`]), so one CAS both checks that no thief holds
//! a claim and moves the real head. The owner pushes at the tail and pops at
//! the real head (FIFO). Tasks in `[real head, tail)` are queued; slots in
//! `[steal head, real head)` are being read by the thief; the rest are free.
//!
//! # Protocols
//!
//! Push (owner, [`Local::push_back_or_overflow`]):
//! 1. Load the head (Acquire). If `tail - steal head < capacity`, write the
//!    slot at `tail` and store `tail + 1` (Release); done.
//! 2. Full, and a thief holds a claim (`steal != real`): the thief will free
//!    slots soon, so send only this task to the overflow sink.
//! 3. Full, no claim: CAS the head from `(h, h)` to `(h + capacity/2,
//!    h + capacity/2)`, which takes the older half from the ring, then hand
//!    those tasks plus the new one to the sink in one `push_batch`. If the CAS
//!    fails a thief got in first; start again at 1.
//!
//! Pop (owner, [`Local::pop`]): CAS the real head forward by one (and the
//! steal head with it unless a thief holds a claim); the slot is then ours.
//!
//! Steal (thief, [`Steal::steal_into`]; the thief owns `dst`):
//! 1. Check `dst`: give up if it holds more than half its capacity.
//! 2. Load the victim's head (Acquire). Give up if `steal != real` — another
//!    thief is at work on this victim, and trying again would only contend.
//! 3. Load the victim's tail (Acquire) and choose `n`: `available -
//!    available / 2` for [`StealLimit::Half`] (the ceiling of half), at most
//!    `k` for [`StealLimit::AtMost`]; never more than `dst` can take.
//! 4. Claim: CAS the head from `(r, r)` to `(r, r + n)`. The owner and other
//!    thieves now see the tasks as gone, and the owner will not overwrite
//!    them while the steal head stays at `r`. On failure go back to 2.
//! 5. Move the first `n - 1` tasks into `dst`'s free slots; read the last one
//!    into a local.
//! 6. Release the claim: CAS the head from `(r, r')` to `(r', r')`, where
//!    `r'` is the current real head (the owner may have popped meanwhile).
//!    Retry on failure; only the owner's pops can move the head now.
//! 7. Publish the moved tasks with a Release store of `dst`'s tail, and
//!    return the last task to run at once.
//!
//! # Relation to the literature
//!
//! This is tokio's design, not a Chase–Lev deque (Chase & Lev, "Dynamic
//! Circular Work-Stealing Deque", SPAA'05; C11 orderings in Lê, Pop, Cohen &
//! Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory
//! Models", PPoPP'13). It differs in four ways:
//!
//! - The owner takes from the *head*, the same end thieves use (FIFO). LIFO
//!   behaviour comes from the worker's separate LIFO slot, not from the ring.
//!   Owner and thieves therefore agree through one CAS word, and there is no
//!   store–load (SeqCst) fence as in Chase–Lev's `take`, where the owner and a
//!   thief race at opposite ends for the last task.
//! - The ring never grows. A full ring spills half of itself into an overflow
//!   sink (the inject queue) instead of reallocating, so there is no buffer
//!   to reclaim and no epoch scheme (crossbeam-deque needs one).
//! - A thief claims a whole range with one CAS and releases it with a second;
//!   meanwhile the owner keeps popping and pushing into the slots outside it.
//!   Chase–Lev steals one task per CAS.
//! - A second thief gives up instead of waiting while a claim is held, and
//!   the owner spills only the new task when full during a claim.
//!
//! Indices wrap at `u32::MAX`; a stale packed head would have to survive
//! 2^32 wraps to be mistaken for a current one (ABA), which we accept, as
//! tokio does.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;

use crossbeam_utils::CachePadded;

use crate::loom::cell::UnsafeCell;
use crate::loom::sync::atomic::AtomicU32;
use crate::loom::sync::atomic::AtomicU64;
use crate::loom::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use crate::loom::sync::Arc;

/// Smallest ring: half of it must still be a batch worth moving.
pub const MIN_CAPACITY: usize = 4;

/// Largest ring. Indices are `u32`; any power of two up to 2^31 would work,
/// this bound only keeps a mistyped knob from allocating gigabytes.
pub const MAX_CAPACITY: usize = 1 << 16;

/// Ring size when the `queue-capacity` knob is not set: tokio's 256.
#[cfg(not(loom))]
pub const DEFAULT_CAPACITY: usize = 256;

/// Under loom every ring is the smallest one, so models stay small enough to
/// explore.
#[cfg(loom)]
pub const DEFAULT_CAPACITY: usize = MIN_CAPACITY;

/// Where the owner sends tasks that do not fit: the inject queue.
pub trait Overflow<T> {
    /// Takes one task.
    fn push(&self, task: T);

    /// Takes a batch of tasks, oldest first. The sink must consume the whole
    /// iterator; the queue asserts that it did.
    fn push_batch<I: Iterator<Item = T>>(&self, tasks: I);
}

/// How much one steal takes from its victim (the `steal=half|one|N` knob).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StealLimit {
    /// The ceiling of half of the victim's queued tasks (tokio).
    Half,
    /// At most this many; `AtMost(0)` steals nothing.
    AtMost(u32),
}

impl StealLimit {
    /// How many of `available` queued tasks one steal takes.
    fn amount(self, available: u32) -> u32 {
        match self {
            StealLimit::Half => available - available / 2,
            StealLimit::AtMost(limit) => available.min(limit),
        }
    }
}

/// Packs the steal head (high half) and the real head (low half) into the
/// one word that a single CAS can check and move.
fn pack(steal: u32, real: u32) -> u64 {
    (u64::from(steal) << u32::BITS) | u64::from(real)
}

/// Splits a packed head into `(steal head, real head)`.
fn unpack(head: u64) -> (u32, u32) {
    // Truncation is the point: each half is one u32.
    ((head >> u32::BITS) as u32, head as u32)
}

/// The ring shared by one [`Local`] and any number of [`Steal`] handles.
struct Inner<T> {
    /// Packed `(steal head, real head)`. CAS'd by the owner on every pop and
    /// by thieves. Padded so that a thief's CAS does not take the cache line
    /// holding `tail`, which the owner stores on every push.
    head: CachePadded<AtomicU64>,
    /// One past the newest task; stored only by the owner, loaded by
    /// thieves. Padded for the same reason, and to keep it off the lines of
    /// the `Arc` counts and the slots.
    tail: CachePadded<AtomicU32>,
    /// `capacity - 1`; capacity is a power of two.
    mask: u32,
    /// The ring. A slot holds an initialised task exactly when its index is
    /// in `[steal head, tail)` and nobody has read it out yet.
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

// SAFETY: tasks move between threads (a thief reads what the owner wrote), so
// `T: Send` is required; no `&T` is ever shared, so `T: Sync` is not. Every
// slot access follows the protocol in the module doc: a slot is written only
// by the owner while it is free, and read by exactly one party that claimed
// it with a CAS on `head`.
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: as for `Send`; shared access goes through atomics and claimed slots.
unsafe impl<T: Send> Sync for Inner<T> {}

impl<T> Inner<T> {
    fn capacity(&self) -> u32 {
        self.mask + 1
    }

    /// Free slots between `tail` and `steal + capacity`.
    fn free_slots(&self, steal: u32, tail: u32) -> u32 {
        self.capacity() - tail.wrapping_sub(steal)
    }

    fn slot(&self, index: u32) -> &UnsafeCell<MaybeUninit<T>> {
        let at = (index & self.mask) as usize;
        debug_assert!(at < self.slots.len(), "slot {at} of {}", self.slots.len());
        // SAFETY: `with_start_index` makes `mask` the slot count minus one,
        // with the count a power of two, so `at` is in bounds. (Skipping the
        // bounds check saves a load and a branch on every push and pop.)
        unsafe { self.slots.get_unchecked(at) }
    }

    /// Moves `task` into the slot for `index`.
    ///
    /// # Safety
    ///
    /// The caller is the owner of this ring and `index` is free: in
    /// `[tail, steal head + capacity)`, so no one else reads or writes it.
    unsafe fn write(&self, index: u32, task: T) {
        self.slot(index).with_mut(|slot| {
            // SAFETY: the caller guarantees exclusive access to a free slot;
            // overwriting a free slot drops nothing.
            unsafe { ptr::write(slot, MaybeUninit::new(task)) }
        });
    }

    /// Writes `task` at `tail` and publishes it.
    ///
    /// # Safety
    ///
    /// As for [`write`](Self::write), with `tail` the current tail.
    unsafe fn push_at(&self, tail: u32, task: T) {
        // SAFETY: passed on from the caller.
        unsafe { self.write(tail, task) };
        // Release: publishes the slot; pairs with the Acquire load of the
        // tail in `Steal::claim` (steal step 3).
        self.tail.store(tail.wrapping_add(1), Release);
    }

    /// Moves the task out of the slot for `index`; the slot is free after.
    ///
    /// # Safety
    ///
    /// The slot holds an initialised task that the caller alone has claimed
    /// (by a CAS on `head`), and the owner's write of it happens-before this
    /// read.
    unsafe fn take(&self, index: u32) -> T {
        self.slot(index).with(|slot| {
            // SAFETY: initialised and claimed by the caller, as required;
            // nobody reads it again, so the value is moved out exactly once.
            unsafe { ptr::read(slot).assume_init() }
        })
    }
}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // Relaxed: we hold the last handle; the `Arc`'s final decrement
        // already ordered every other handle's accesses before this drop.
        let (steal, real) = unpack(self.head.load(Relaxed));
        // A thief holds a `Steal` (an `Arc`) for as long as it holds a claim.
        debug_assert_eq!(steal, real, "ring dropped while a claim is held");
        // Relaxed: as above.
        let tail = self.tail.load(Relaxed);
        let mut index = real;
        while index != tail {
            self.slot(index).with_mut(|slot| {
                // SAFETY: `[real, tail)` holds initialised tasks that nobody
                // took, and no other handle exists any more.
                unsafe { (*slot).assume_init_drop() }
            });
            index = index.wrapping_add(1);
        }
    }
}

/// The owner's end of a local queue: push, pop, and be the target of a steal.
/// `Send` (a worker may be moved to its thread) but not `Sync`.
pub struct Local<T> {
    inner: Arc<Inner<T>>,
    /// `Cell` is `Send + !Sync`; so is `Local`.
    _not_sync: PhantomData<Cell<()>>,
}

/// A thief's handle on someone else's local queue.
pub struct Steal<T>(Arc<Inner<T>>);

/// Creates a local queue of `capacity` slots: a power of two in
/// [`MIN_CAPACITY`]`..=`[`MAX_CAPACITY`].
pub fn local<T: Send + 'static>(capacity: usize) -> (Local<T>, Steal<T>) {
    with_start_index(capacity, 0)
}

/// Like [`local`], with all counters starting at `start` (tests use it to
/// cross `u32::MAX`).
fn with_start_index<T>(capacity: usize, start: u32) -> (Local<T>, Steal<T>) {
    assert!(
        capacity.is_power_of_two() && (MIN_CAPACITY..=MAX_CAPACITY).contains(&capacity),
        "local queue capacity must be a power of two in {MIN_CAPACITY}..={MAX_CAPACITY}, \
         got {capacity}"
    );
    let slots = (0..capacity)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let inner = Arc::new(Inner {
        head: CachePadded::new(AtomicU64::new(pack(start, start))),
        tail: CachePadded::new(AtomicU32::new(start)),
        mask: u32::try_from(capacity - 1).expect("capacity is at most MAX_CAPACITY"),
        slots,
    });
    let local = Local {
        inner: inner.clone(),
        _not_sync: PhantomData,
    };
    (local, Steal(inner))
}

impl<T> Local<T> {
    /// Number of slots in the ring.
    pub fn capacity(&self) -> usize {
        self.inner.capacity() as usize
    }

    /// Tasks queued (claimed ones excluded). May over-count by tasks a thief
    /// has just claimed.
    pub fn len(&self) -> usize {
        // Relaxed: a hint; a stale head only over-counts tasks a thief has
        // already claimed, and never exceeds the tail this thread wrote.
        let (_, real) = unpack(self.inner.head.load(Relaxed));
        self.tail().wrapping_sub(real) as usize
    }

    /// Whether no task is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots free for [`push_back`](Self::push_back). May under-count while
    /// a thief finishes; never over-counts.
    pub fn remaining_slots(&self) -> usize {
        // Relaxed: the steal head only moves forward, so a stale value only
        // under-counts; `push_back` loads it again with Acquire before
        // writing.
        let (steal, _) = unpack(self.inner.head.load(Relaxed));
        self.inner.free_slots(steal, self.tail()) as usize
    }

    /// Pushes `task` at the back. When the ring is full, sends the task to
    /// `overflow` — with half of the ring in one batch unless a thief holds a
    /// claim — and returns true; returns false when the task went into the
    /// ring.
    #[inline]
    pub fn push_back_or_overflow<O: Overflow<T>>(&mut self, task: T, overflow: &O) -> bool {
        // One load of the `Arc`'s pointer: re-reading it after the Acquire
        // below would cost a load per push.
        let inner = &*self.inner;
        // Relaxed: only the owner stores the tail.
        let tail = inner.tail.load(Relaxed);
        // Acquire: pairs with the Release CAS that ends a claim (steal step
        // 6): the thief's reads of the slots it frees happen before we write
        // them again.
        let (steal, _) = unpack(inner.head.load(Acquire));
        if inner.free_slots(steal, tail) == 0 {
            return self.push_when_full(task, tail, overflow);
        }
        // SAFETY: we are the owner (`&mut self`) and saw `tail - steal head <
        // capacity`; the steal head only moves forward.
        unsafe { inner.push_at(tail, task) };
        false
    }

    /// Push steps 1–3 once the ring looked full: pushes the task if a thief
    /// has freed a slot meanwhile, or sends it to `overflow` (returns true).
    /// Out of line, so the common push stays small enough to inline.
    #[cold]
    #[inline(never)]
    fn push_when_full<O: Overflow<T>>(&mut self, mut task: T, tail: u32, overflow: &O) -> bool {
        loop {
            // Acquire: as in `push_back_or_overflow`.
            let (steal, real) = unpack(self.inner.head.load(Acquire));
            if self.inner.free_slots(steal, tail) > 0 {
                // SAFETY: as in `push_back_or_overflow`.
                unsafe { self.inner.push_at(tail, task) };
                return false;
            }
            if steal != real {
                overflow.push(task);
                return true;
            }
            match self.overflow_half(task, real, tail, overflow) {
                Ok(()) => return true,
                Err(back) => task = back,
            }
        }
    }

    /// Push step 3: moves the older half of a full ring plus `task` to
    /// `overflow` in one batch. Gives the task back if a thief moved the head
    /// first.
    fn overflow_half<O: Overflow<T>>(
        &mut self,
        task: T,
        head: u32,
        tail: u32,
        overflow: &O,
    ) -> Result<(), T> {
        let capacity = self.inner.capacity();
        assert_eq!(
            tail.wrapping_sub(head),
            capacity,
            "overflow from a ring that is not full (head {head}, tail {tail})"
        );
        let moved = capacity / 2;
        let new_head = head.wrapping_add(moved);
        let result = self.inner.head.compare_exchange(
            pack(head, head),
            pack(new_head, new_head),
            // Release: pairs with the Acquire head loads in `Steal::claim`
            // and `Steal::len`, so a reader of the new head then reads a tail
            // at least as new as ours (never behind the real head).
            Release,
            // Relaxed: on failure we return and `push_when_full` reloads with
            // Acquire.
            Relaxed,
        );
        if result.is_err() {
            return Err(task);
        }
        let mut batch = Batch {
            inner: &self.inner,
            next: head,
            left_in_ring: moved,
            new_task: Some(task),
        };
        overflow.push_batch(batch.by_ref());
        assert!(
            batch.len() == 0,
            "overflow sink left {} of {} tasks unconsumed",
            batch.len(),
            moved + 1
        );
        Ok(())
    }

    /// Pushes every task of `tasks` at the back.
    ///
    /// # Panics
    ///
    /// When `tasks.len() > remaining_slots()`: the caller must check first.
    pub fn push_back<I: ExactSizeIterator<Item = T>>(&mut self, tasks: I) {
        let count = tasks.len();
        // Acquire: pairs with the Release CAS that ends a claim (steal step
        // 6), as in `push_back_or_overflow`.
        let (steal, _) = unpack(self.inner.head.load(Acquire));
        let tail = self.tail();
        let free = self.inner.free_slots(steal, tail);
        assert!(
            count <= free as usize,
            "push_back of {count} tasks into a local queue with {free} free slots \
             (steal head {steal}, tail {tail}, capacity {})",
            self.inner.capacity()
        );
        let mut publish = PublishOnDrop {
            tail: &self.inner.tail,
            start: tail,
            written: 0,
        };
        for task in tasks.take(count) {
            // SAFETY: fewer than `free` tasks are written, so the index is in
            // `[tail, steal head + capacity)`: free, and only we write slots.
            unsafe { self.inner.write(tail.wrapping_add(publish.written), task) };
            publish.written += 1;
        }
    }

    /// Takes the oldest queued task.
    pub fn pop(&mut self) -> Option<T> {
        let index = self.claim_oldest()?;
        // SAFETY: `claim_oldest` moved the real head past `index`, so no thief
        // can claim it; we wrote it ourselves, and it is in `[real, tail)`.
        Some(unsafe { self.inner.take(index) })
    }

    /// The CAS loop of pop: moves the real head forward by one and returns
    /// the index it passed, or `None` when nothing is queued.
    fn claim_oldest(&mut self) -> Option<u32> {
        let tail = self.tail();
        // Relaxed: pop reads only slots this thread wrote, and the CAS below
        // checks the value.
        let mut head = self.inner.head.load(Relaxed);
        loop {
            let (steal, real) = unpack(head);
            if real == tail {
                return None;
            }
            let next_real = real.wrapping_add(1);
            // A thief's claim keeps its steal head; otherwise both move.
            let next_steal = if steal == real { next_real } else { steal };
            match self.inner.head.compare_exchange_weak(
                head,
                pack(next_steal, next_real),
                // Release: pairs with the Acquire head loads in `Steal::claim`
                // and `Steal::len`: whoever reads this head then reads a tail
                // at least `next_real`.
                Release,
                // Relaxed: the fresh value is checked by the next CAS.
                Relaxed,
            ) {
                Ok(_) => return Some(real),
                Err(actual) => head = actual,
            }
        }
    }

    /// The owner's tail.
    fn tail(&self) -> u32 {
        // Relaxed: only the owner stores the tail, so it reads its own value.
        self.inner.tail.load(Relaxed)
    }
}

/// Publishes the tasks `push_back` wrote, also if the caller's iterator
/// panics part-way (otherwise those tasks would leak).
struct PublishOnDrop<'a> {
    tail: &'a AtomicU32,
    start: u32,
    written: u32,
}

impl Drop for PublishOnDrop<'_> {
    fn drop(&mut self) {
        // Release: publishes the slots; pairs with the Acquire load of the
        // tail in `Steal::claim`.
        self.tail
            .store(self.start.wrapping_add(self.written), Release);
    }
}

/// The tasks of one overflow: `left_in_ring` tasks from index `next`, then
/// the new task. Drops what the sink did not take, so nothing leaks.
struct Batch<'a, T> {
    inner: &'a Inner<T>,
    next: u32,
    left_in_ring: u32,
    new_task: Option<T>,
}

impl<T> Iterator for Batch<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.left_in_ring == 0 {
            return self.new_task.take();
        }
        // SAFETY: `overflow_half`'s CAS moved both heads past these indices,
        // so no thief can claim them; the owner wrote them and holds `&mut
        // Local` for the batch's lifetime, so nothing overwrites them.
        let task = unsafe { self.inner.take(self.next) };
        self.next = self.next.wrapping_add(1);
        self.left_in_ring -= 1;
        Some(task)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.left_in_ring as usize + usize::from(self.new_task.is_some());
        (len, Some(len))
    }
}

impl<T> ExactSizeIterator for Batch<'_, T> {}

impl<T> Drop for Batch<'_, T> {
    fn drop(&mut self) {
        self.by_ref().for_each(drop);
    }
}

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
    fn tail_minus_head(&self) -> u32 {
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
        assert!(
            !ptr::eq(&*self.0, &*dst.inner),
            "a worker cannot steal from its own queue"
        );
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
            dst.inner
                .tail
                .store(dst_tail.wrapping_add(count - 1), Release);
        }
        Some((last, count as usize))
    }

    /// Steps 2–4, the claim CAS loop: returns `(first index, count)` of the
    /// claimed range, taking at most `max` tasks.
    fn claim(&self, limit: StealLimit, max: u32) -> Option<(u32, u32)> {
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
    fn end_claim(&self, first: u32) {
        // Relaxed: only the value is needed; the CAS checks it and carries
        // the Release.
        let mut head = self.0.head.load(Relaxed);
        loop {
            let (steal, real) = unpack(head);
            assert_eq!(
                steal, first,
                "steal head moved while a claim was held (real head {real})"
            );
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

impl<T> fmt::Debug for Local<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Local")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl<T> fmt::Debug for Steal<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Steal").field("len", &self.len()).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::cell::RefCell;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicU32 as StdAtomicU32, Ordering::SeqCst};
    use std::sync::Arc as StdArc;

    use super::*;

    /// Small enough to enumerate every fill level, big enough that half of
    /// it is not 1.
    const CAPACITY: usize = 16;

    /// Records what the owner spills, batch by batch.
    struct Sink<T> {
        singles: RefCell<Vec<T>>,
        batches: RefCell<Vec<Vec<T>>>,
    }

    impl<T> Default for Sink<T> {
        fn default() -> Self {
            Sink {
                singles: RefCell::default(),
                batches: RefCell::default(),
            }
        }
    }

    impl<T> Overflow<T> for Sink<T> {
        fn push(&self, task: T) {
            self.singles.borrow_mut().push(task);
        }

        fn push_batch<I: Iterator<Item = T>>(&self, tasks: I) {
            self.batches.borrow_mut().push(tasks.collect());
        }
    }

    fn filled(capacity: usize, start: u32, count: u32) -> (Local<u32>, Steal<u32>) {
        let (mut local, steal) = with_start_index(capacity, start);
        local.push_back(0..count);
        (local, steal)
    }

    fn drain<T>(local: &mut Local<T>) -> Vec<T> {
        std::iter::from_fn(|| local.pop()).collect()
    }

    #[test]
    fn pack_round_trips_and_puts_steal_head_high() {
        for (steal, real) in [
            (0, 0),
            (1, 2),
            (u32::MAX, 0),
            (0, u32::MAX),
            (7, u32::MAX - 1),
        ] {
            assert_eq!(unpack(pack(steal, real)), (steal, real));
        }
        assert_eq!(pack(1, 0), 1 << 32);
        assert_eq!(pack(0, 1), 1);
    }

    #[test]
    #[should_panic(expected = "power of two")]
    fn rejects_capacity_not_power_of_two() {
        let _ = local::<u32>(3 * MIN_CAPACITY);
    }

    #[test]
    #[should_panic(expected = "power of two")]
    fn rejects_capacity_below_minimum() {
        let _ = local::<u32>(MIN_CAPACITY / 2);
    }

    #[test]
    fn pops_in_fifo_order_with_interleaved_pushes() {
        let sink = Sink::default();
        let (mut local, _steal) = local(CAPACITY);
        assert!(local.is_empty());
        assert_eq!(local.pop(), None);
        for task in 0..5 {
            assert!(!local.push_back_or_overflow(task, &sink));
        }
        assert_eq!(local.pop(), Some(0));
        assert_eq!(local.pop(), Some(1));
        local.push_back(5..8);
        assert_eq!(local.len(), 6);
        assert_eq!(drain(&mut local), vec![2, 3, 4, 5, 6, 7]);
        assert!(sink.singles.borrow().is_empty() && sink.batches.borrow().is_empty());
    }

    #[test]
    fn len_and_remaining_slots_track_pushes_and_pops() {
        let (mut local, steal) = filled(CAPACITY, 0, 5);
        assert_eq!(
            (local.capacity(), local.len(), local.remaining_slots()),
            (16, 5, 11)
        );
        assert_eq!((steal.len(), steal.is_empty()), (5, false));
        local.pop();
        assert_eq!(
            (local.len(), local.remaining_slots(), steal.len()),
            (4, 12, 4)
        );
    }

    #[test]
    fn overflow_moves_half_plus_new_task_in_one_batch() {
        let sink = Sink::default();
        let (mut local, _steal) = filled(CAPACITY, 0, CAPACITY as u32);
        assert_eq!(local.remaining_slots(), 0);
        assert!(local.push_back_or_overflow(100, &sink));
        let expected: Vec<u32> = (0..8).chain([100]).collect();
        assert_eq!(*sink.batches.borrow(), vec![expected]);
        assert!(sink.singles.borrow().is_empty());
        assert_eq!(drain(&mut local), (8..16).collect::<Vec<_>>());
    }

    #[test]
    fn overflow_during_a_claim_moves_only_the_new_task() {
        let sink = Sink::default();
        let (mut local, steal) = filled(CAPACITY, 0, CAPACITY as u32);
        let (first, count) = steal.claim(StealLimit::AtMost(2), u32::MAX).unwrap();
        assert_eq!((first, count), (0, 2));
        assert!(local.push_back_or_overflow(100, &sink));
        assert_eq!(*sink.singles.borrow(), vec![100]);
        assert!(sink.batches.borrow().is_empty());
        // The owner may pop past the claim, and the claim ends cleanly.
        assert_eq!(local.pop(), Some(2));
        // SAFETY: indices 0 and 1 are claimed above and read only here.
        let claimed = unsafe { [steal.0.take(0), steal.0.take(1)] };
        assert_eq!(claimed, [0, 1]);
        steal.end_claim(first);
        assert_eq!(unpack(steal.0.head.load(SeqCst)), (3, 3));
        assert!(!local.push_back_or_overflow(101, &sink));
        assert_eq!(local.remaining_slots(), 2);
    }

    #[test]
    #[should_panic(expected = "unconsumed")]
    fn overflow_asserts_that_the_sink_took_the_whole_batch() {
        struct TakesOne;
        impl Overflow<u32> for TakesOne {
            fn push(&self, _task: u32) {}
            fn push_batch<I: Iterator<Item = u32>>(&self, mut tasks: I) {
                tasks.next();
            }
        }
        let (mut local, _steal) = filled(MIN_CAPACITY, 0, MIN_CAPACITY as u32);
        local.push_back_or_overflow(9, &TakesOne);
    }

    #[test]
    fn steal_half_takes_the_ceiling_of_half_for_every_fill_level() {
        for n in 1..=CAPACITY as u32 {
            let (mut src, steal) = filled(CAPACITY, 0, n);
            let (mut dst, _) = local::<u32>(CAPACITY);
            let expected = n - n / 2;
            let (last, moved) = steal.steal_into(&mut dst, StealLimit::Half).unwrap();
            assert_eq!((last, moved), (expected - 1, expected as usize), "n = {n}");
            assert_eq!(
                drain(&mut dst),
                (0..expected - 1).collect::<Vec<_>>(),
                "n = {n}"
            );
            assert_eq!(
                drain(&mut src),
                (expected..n).collect::<Vec<_>>(),
                "n = {n}"
            );
        }
    }

    #[test]
    fn steal_at_most_respects_its_limit() {
        for (limit, n, expected) in [(1, 5, 1), (3, 5, 3), (3, 2, 2), (0, 5, 0), (100, 16, 16)] {
            let (mut src, steal) = filled(CAPACITY, 0, n);
            let (mut dst, _) = local::<u32>(CAPACITY);
            let got = steal.steal_into(&mut dst, StealLimit::AtMost(limit));
            assert_eq!(
                got.map(|(_, moved)| moved),
                (expected > 0).then_some(expected as usize)
            );
            assert_eq!(src.len() + dst.len() + got.iter().count(), n as usize);
            assert_eq!(
                drain(&mut src).first().copied(),
                (expected < n).then_some(expected)
            );
        }
    }

    #[test]
    fn steal_from_empty_returns_none() {
        let (_src, steal) = local::<u32>(CAPACITY);
        let (mut dst, _) = local::<u32>(CAPACITY);
        assert!(steal.steal_into(&mut dst, StealLimit::Half).is_none());
        assert!(dst.is_empty());
    }

    #[test]
    fn steal_refused_when_dst_more_than_half_full() {
        let (src, steal) = filled(CAPACITY, 0, 10);
        let half = CAPACITY as u32 / 2;
        let (mut dst, _) = filled(CAPACITY, 0, half + 1);
        assert!(steal.steal_into(&mut dst, StealLimit::Half).is_none());
        assert_eq!((src.len(), dst.len()), (10, 9));
        dst.pop();
        let (_, moved) = steal.steal_into(&mut dst, StealLimit::Half).unwrap();
        assert_eq!((moved, src.len(), dst.len()), (5, 5, 12));
    }

    #[test]
    fn steal_refused_while_another_claim_is_held() {
        let (_src, steal) = filled(CAPACITY, 0, 10);
        let (first, _) = steal.claim(StealLimit::AtMost(1), u32::MAX).unwrap();
        let (mut dst, _) = local::<u32>(CAPACITY);
        assert!(steal
            .clone()
            .steal_into(&mut dst, StealLimit::Half)
            .is_none());
        // SAFETY: index 0 is claimed above.
        assert_eq!(unsafe { steal.0.take(first) }, 0);
        steal.end_claim(first);
        assert_eq!(
            steal.steal_into(&mut dst, StealLimit::Half).map(|(_, n)| n),
            Some(5)
        );
    }

    #[test]
    fn steal_is_capped_by_a_smaller_dst() {
        let big = MIN_CAPACITY * 16;
        let (mut src, steal) = filled(big, 0, big as u32);
        let (mut dst, _) = local::<u32>(MIN_CAPACITY);
        let (last, moved) = steal.steal_into(&mut dst, StealLimit::Half).unwrap();
        assert_eq!((last, moved), (MIN_CAPACITY as u32, MIN_CAPACITY + 1));
        assert_eq!(
            drain(&mut dst),
            (0..MIN_CAPACITY as u32).collect::<Vec<_>>()
        );
        assert_eq!(src.pop(), Some(MIN_CAPACITY as u32 + 1));
    }

    #[test]
    #[should_panic(expected = "its own queue")]
    fn steal_from_own_queue_panics() {
        let (mut local, steal) = filled(CAPACITY, 0, 4);
        steal.steal_into(&mut local, StealLimit::Half);
    }

    #[test]
    fn indices_wrap_around_u32_max() {
        let sink = Sink::default();
        let start = u32::MAX - 3;
        let (mut local, steal) = filled(CAPACITY, start, 10);
        assert_eq!(local.len(), 10);
        assert_eq!(local.pop(), Some(0));
        let (mut dst, _) = with_start_index::<u32>(CAPACITY, u32::MAX - 1);
        let (last, moved) = steal.steal_into(&mut dst, StealLimit::Half).unwrap();
        assert_eq!((last, moved), (5, 5));
        assert_eq!(drain(&mut dst), vec![1, 2, 3, 4]);
        local.push_back(10..22);
        assert_eq!(local.remaining_slots(), 0);
        assert!(local.push_back_or_overflow(99, &sink));
        assert_eq!(
            sink.batches.borrow()[0],
            (6..14).chain([99]).collect::<Vec<_>>()
        );
        assert_eq!(drain(&mut local), (14..22).collect::<Vec<_>>());
    }

    #[test]
    #[should_panic(expected = "free slots")]
    fn push_back_panics_past_remaining_slots() {
        let (mut local, _steal) = filled(MIN_CAPACITY, 0, 1);
        local.push_back(0..MIN_CAPACITY as u32);
    }

    #[test]
    fn push_back_publishes_what_a_panicking_iterator_yielded() {
        let (mut local, _steal) = local::<u32>(CAPACITY);
        let tasks = (0..4).inspect(|&task| assert!(task < 2, "iterator gives up"));
        let result = catch_unwind(AssertUnwindSafe(|| local.push_back(tasks)));
        assert!(result.is_err());
        assert_eq!(drain(&mut local), vec![0, 1]);
    }

    /// A task that counts its drops in a per-id slot.
    struct Tracked {
        id: usize,
        drops: StdArc<Vec<StdAtomicU32>>,
    }

    impl Drop for Tracked {
        fn drop(&mut self) {
            self.drops[self.id].fetch_add(1, SeqCst);
        }
    }

    fn drop_counters(count: usize) -> StdArc<Vec<StdAtomicU32>> {
        StdArc::new((0..count).map(|_| StdAtomicU32::new(0)).collect())
    }

    fn tracked(drops: &StdArc<Vec<StdAtomicU32>>, ids: std::ops::Range<usize>) -> Vec<Tracked> {
        ids.map(|id| Tracked {
            id,
            drops: drops.clone(),
        })
        .collect()
    }

    fn assert_each_dropped_once(drops: &[StdAtomicU32]) {
        for (id, count) in drops.iter().enumerate() {
            assert_eq!(count.load(SeqCst), 1, "task {id}");
        }
    }

    #[test]
    fn every_task_dropped_exactly_once_including_on_queue_drop() {
        let total = 3 * CAPACITY;
        let drops = drop_counters(total);
        let sink = Sink::default();
        let (mut src, steal) = with_start_index(CAPACITY, u32::MAX - 2);
        let (mut dst, dst_steal) = local(CAPACITY);
        for task in tracked(&drops, 0..CAPACITY + 1) {
            src.push_back_or_overflow(task, &sink);
        }
        drop(src.pop());
        let stolen = steal.steal_into(&mut dst, StealLimit::Half);
        assert!(stolen.is_some());
        drop(stolen);
        // The four pushed stay queued; the iterator drops the rest.
        dst.push_back(tracked(&drops, CAPACITY + 1..total).into_iter().take(4));
        drop(sink);
        // Tasks are left in both rings; the order of the last drops varies.
        drop(src);
        drop(dst_steal);
        drop(steal);
        drop(dst);
        assert_each_dropped_once(&drops);
    }

    #[test]
    fn unconsumed_overflow_batch_is_dropped_not_leaked() {
        struct DropsBatch;
        impl Overflow<Tracked> for DropsBatch {
            fn push(&self, _task: Tracked) {}
            fn push_batch<I: Iterator<Item = Tracked>>(&self, _tasks: I) {}
        }
        let drops = drop_counters(MIN_CAPACITY + 1);
        let (mut local, steal) = local(MIN_CAPACITY);
        let mut tasks = tracked(&drops, 0..MIN_CAPACITY + 1);
        let last = tasks.pop().unwrap();
        local.push_back(tasks.into_iter());
        let result = catch_unwind(AssertUnwindSafe(|| {
            local.push_back_or_overflow(last, &DropsBatch)
        }));
        assert!(result.is_err());
        drop(local);
        drop(steal);
        assert_each_dropped_once(&drops);
    }

    #[test]
    fn handles_are_send_and_steal_is_sync() {
        fn send<T: Send>() {}
        fn sync<T: Sync>() {}
        send::<Local<Box<u8>>>();
        send::<Steal<Box<u8>>>();
        sync::<Steal<Box<u8>>>();
    }
}

/// Many-thread runs with real threads: one owner pushing (with overflow) and
/// popping, several thieves stealing from it and from each other, every task
/// accounted for with per-task flags.
#[cfg(all(test, not(loom)))]
mod stress {
    use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::SeqCst};
    use std::sync::{Barrier, Mutex};
    use std::thread;

    use super::*;

    /// What happened to each task.
    struct Ledger {
        ran: Vec<AtomicU8>,
        dropped: Vec<AtomicU8>,
    }

    impl Ledger {
        fn new(tasks: usize) -> Ledger {
            let counters = || (0..tasks).map(|_| AtomicU8::new(0)).collect();
            Ledger {
                ran: counters(),
                dropped: counters(),
            }
        }

        fn task(&self, id: usize) -> Task<'_> {
            Task { id, ledger: self }
        }

        fn check(&self, every_task_ran: bool) {
            for id in 0..self.ran.len() {
                let ran = self.ran[id].load(SeqCst);
                let dropped = self.dropped[id].load(SeqCst);
                assert_eq!(dropped, 1, "task {id} dropped {dropped} times");
                assert!(ran <= 1, "task {id} ran {ran} times");
                assert!(!every_task_ran || ran == 1, "task {id} never ran");
            }
        }
    }

    struct Task<'a> {
        id: usize,
        ledger: &'a Ledger,
    }

    impl Task<'_> {
        fn run(self) {
            let before = self.ledger.ran[self.id].fetch_add(1, SeqCst);
            assert_eq!(before, 0, "task {} ran twice", self.id);
        }
    }

    impl Drop for Task<'_> {
        fn drop(&mut self) {
            self.ledger.dropped[self.id].fetch_add(1, SeqCst);
        }
    }

    struct Inject<T>(Mutex<Vec<T>>);

    impl<T> Overflow<T> for Inject<T> {
        fn push(&self, task: T) {
            self.0.lock().unwrap().push(task);
        }

        fn push_batch<I: Iterator<Item = T>>(&self, tasks: I) {
            self.0.lock().unwrap().extend(tasks);
        }
    }

    /// xorshift64: a fixed seed gives the same push/pop pattern every run.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, bound: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % bound as u64) as usize
        }
    }

    /// One stress configuration.
    struct Run {
        tasks: usize,
        capacity: usize,
        limits: &'static [StealLimit],
        /// Whether everyone drains before stopping; otherwise tasks are left
        /// in the rings and must be dropped with them.
        drain: bool,
    }

    const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

    impl Run {
        fn go(self) {
            let ledger = Ledger::new(self.tasks);
            let inject = Inject(Mutex::default());
            let done = AtomicBool::new(false);
            let barrier = Barrier::new(self.limits.len() + 1);
            // Start near the top so indices wrap while threads race.
            let start = u32::MAX - self.capacity as u32;
            let (mut owner, owner_steal) = with_start_index(self.capacity, start);
            let thieves: Vec<_> = self
                .limits
                .iter()
                .map(|_| with_start_index(self.capacity, start))
                .collect();
            let steals: Vec<Steal<Task<'_>>> = std::iter::once(owner_steal)
                .chain(thieves.iter().map(|(_, steal)| steal.clone()))
                .collect();
            thread::scope(|scope| {
                for (index, ((dst, _), &limit)) in thieves.into_iter().zip(self.limits).enumerate()
                {
                    let victims: Vec<_> = steals
                        .iter()
                        .enumerate()
                        .filter(|&(victim, _)| victim != index + 1)
                        .map(|(_, steal)| steal.clone())
                        .collect();
                    let (done, barrier, drain) = (&done, &barrier, self.drain);
                    scope.spawn(move || thief(dst, victims, limit, done, barrier, drain));
                }
                barrier.wait();
                self.own(&mut owner, &ledger, &inject);
                done.store(true, SeqCst);
            });
            let spilled = inject.0.into_inner().unwrap();
            if self.drain {
                spilled.into_iter().for_each(Task::run);
            } else {
                drop(spilled);
            }
            drop((owner, steals));
            ledger.check(self.drain);
        }

        /// The owner: bursts of pushes (single and batched), some pops.
        fn own<'a>(
            &self,
            owner: &mut Local<Task<'a>>,
            ledger: &'a Ledger,
            inject: &Inject<Task<'a>>,
        ) {
            let mut rng = Rng(SEED);
            let mut next = 0;
            while next < self.tasks {
                let burst = (1 + rng.below(2 * self.capacity)).min(self.tasks - next);
                if rng.below(4) == 0 {
                    let count = burst.min(owner.remaining_slots());
                    owner.push_back((next..next + count).map(|id| ledger.task(id)));
                    next += count;
                } else {
                    for id in next..next + burst {
                        owner.push_back_or_overflow(ledger.task(id), inject);
                    }
                    next += burst;
                }
                for _ in 0..rng.below(burst + 1) {
                    let Some(task) = owner.pop() else { break };
                    task.run();
                }
                // Not for correctness: on a machine with fewer cores than
                // threads, the owner would otherwise finish whole time
                // slices alone and the thieves would rarely overlap with it.
                thread::yield_now();
            }
            if self.drain {
                while let Some(task) = owner.pop() {
                    task.run();
                }
            }
        }
    }

    /// A thief: runs its own tasks first, then steals from the others.
    fn thief<'a>(
        mut dst: Local<Task<'a>>,
        victims: Vec<Steal<Task<'a>>>,
        limit: StealLimit,
        done: &AtomicBool,
        barrier: &Barrier,
        drain: bool,
    ) {
        barrier.wait();
        loop {
            if !drain && done.load(SeqCst) {
                return;
            }
            if let Some(task) = dst.pop() {
                task.run();
                continue;
            }
            if let Some((task, moved)) = victims.iter().find_map(|v| v.steal_into(&mut dst, limit))
            {
                // `dst` was empty; other thieves may already have taken some.
                assert!(dst.len() < moved, "stole {moved}, dst holds {}", dst.len());
                task.run();
                continue;
            }
            if done.load(SeqCst) && victims.iter().all(Steal::is_empty) {
                return;
            }
            thread::yield_now();
        }
    }

    #[test]
    fn steal_half_default_ring_exactly_once() {
        Run {
            tasks: 400_000,
            capacity: 256,
            limits: &[StealLimit::Half; 3],
            drain: true,
        }
        .go();
    }

    #[test]
    fn smallest_ring_mixed_limits_exactly_once() {
        Run {
            tasks: 300_000,
            capacity: MIN_CAPACITY,
            limits: &[
                StealLimit::Half,
                StealLimit::AtMost(1),
                StealLimit::AtMost(3),
            ],
            drain: true,
        }
        .go();
    }

    #[test]
    fn tasks_left_behind_are_dropped_exactly_once() {
        Run {
            tasks: 300_000,
            capacity: 64,
            limits: &[StealLimit::Half, StealLimit::AtMost(2)],
            drain: false,
        }
        .go();
    }
}

/// loom models on the smallest ring ([`DEFAULT_CAPACITY`] is 4 under loom).
///
/// Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release
/// --lib loom` in its own target dir. Every model is bounded at 2 preemptions
/// there: each race below needs at most two (a thief cut off between its head
/// and tail loads, or between claim and end of claim, plus one switch back),
/// and all nine together then take under a second on a 2-core machine. All
/// also pass with `LOOM_MAX_PREEMPTIONS=10` (about a minute, most of it the
/// first model). Each non-Relaxed ordering in this file was weakened to
/// Relaxed one at a time and at least one model failed at bound 2, except the
/// Acquire loads in `claim`, which only keep its retry lock-free.
#[cfg(all(test, loom))]
mod loom_tests {
    use std::cell::RefCell;

    use loom::sync::atomic::AtomicUsize;
    use loom::thread;

    use super::*;

    /// Records spilled tasks and the size of each batch.
    #[derive(Default)]
    struct Sink {
        tasks: RefCell<Vec<usize>>,
        batch_sizes: RefCell<Vec<usize>>,
    }

    impl Overflow<usize> for Sink {
        fn push(&self, task: usize) {
            self.tasks.borrow_mut().push(task);
        }

        fn push_batch<I: Iterator<Item = usize>>(&self, tasks: I) {
            let before = self.tasks.borrow().len();
            self.tasks.borrow_mut().extend(tasks);
            let size = self.tasks.borrow().len() - before;
            self.batch_sizes.borrow_mut().push(size);
        }
    }

    /// Preemption bound when `LOOM_MAX_PREEMPTIONS` is unset (see the module
    /// doc for why 2 is enough).
    const PREEMPTIONS: usize = 2;

    fn check(model: impl Fn() + Send + Sync + 'static) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound.get_or_insert(PREEMPTIONS);
        builder.check(model);
    }

    fn drain(local: &mut Local<usize>) -> Vec<usize> {
        std::iter::from_fn(|| local.pop()).collect()
    }

    /// A thief with its own empty ring: steals once, runs what it got.
    fn spawn_thief(steal: Steal<usize>, limit: StealLimit) -> thread::JoinHandle<Vec<usize>> {
        thread::spawn(move || {
            // The tail read after the head must not lag behind it (a lag
            // would wrap to a huge count).
            let count = steal.tail_minus_head();
            assert!(i32::try_from(count).is_ok(), "tail behind head: {count}");
            let (mut dst, _) = local(DEFAULT_CAPACITY);
            let Some((task, moved)) = steal.steal_into(&mut dst, limit) else {
                return Vec::new();
            };
            let mut got = vec![task];
            got.extend(drain(&mut dst));
            assert_eq!(got.len(), moved);
            got
        })
    }

    fn assert_exactly_once(mut seen: Vec<usize>, total: usize) {
        seen.sort_unstable();
        assert_eq!(seen, (0..total).collect::<Vec<_>>());
    }

    fn full_ring() -> (Local<usize>, Steal<usize>) {
        let (mut owner, steal) = local(DEFAULT_CAPACITY);
        owner.push_back(0..DEFAULT_CAPACITY);
        (owner, steal)
    }

    /// Pushes (single and batch) and pops race a steal that starts on an
    /// empty ring. Bound 2: two threads; the largest model, the one that
    /// dominates at higher bounds.
    #[test]
    fn loom_push_and_pop_race_one_thief() {
        check(|| {
            let sink = Sink::default();
            let (mut owner, steal) = local(DEFAULT_CAPACITY);
            let thief = spawn_thief(steal, StealLimit::Half);
            owner.push_back_or_overflow(0, &sink);
            owner.push_back(1..3);
            let mut seen: Vec<usize> = owner.pop().into_iter().collect();
            owner.push_back_or_overflow(3, &sink);
            seen.extend(drain(&mut owner));
            seen.extend(thief.join().unwrap());
            assert!(sink.tasks.borrow().is_empty(), "never more than 3 queued");
            assert_exactly_once(seen, 4);
        });
    }

    /// The owner fills the ring and overflows while a thief steals: whole
    /// batch, only the new task, or a plain push. Bound 2: two threads.
    #[test]
    fn loom_overflow_races_a_steal() {
        check(|| {
            let sink = Sink::default();
            let (mut owner, steal) = local(DEFAULT_CAPACITY);
            let thief = spawn_thief(steal, StealLimit::Half);
            owner.push_back(0..DEFAULT_CAPACITY);
            let overflowed = owner.push_back_or_overflow(DEFAULT_CAPACITY, &sink);
            let mut seen = drain(&mut owner);
            seen.extend(thief.join().unwrap());
            let spilled = sink.tasks.take();
            // Whole batch, only the new task during a claim, or nothing when
            // the steal freed slots first.
            let half_plus_one = DEFAULT_CAPACITY / 2 + 1;
            assert!(
                [0, 1, half_plus_one].contains(&spilled.len()),
                "{spilled:?}"
            );
            assert_eq!(overflowed, !spilled.is_empty());
            assert!(sink
                .batch_sizes
                .borrow()
                .iter()
                .all(|&n| n == half_plus_one));
            seen.extend(spilled);
            assert_exactly_once(seen, DEFAULT_CAPACITY + 1);
        });
    }

    /// The owner writes into slots a thief read, once `remaining_slots`
    /// shows its claim ended: with `push_back`, or with single pushes (each
    /// has its own Acquire head load to check). Bound 2: two threads.
    fn reuse_slots_a_thief_freed(single_pushes: bool) {
        check(move || {
            let sink = Sink::default();
            let (mut owner, steal) = full_ring();
            let thief = spawn_thief(steal, StealLimit::Half);
            // A loom scheduling point: without it loom never ran the whole
            // steal before `remaining_slots` (room was 0 in every execution),
            // and the Acquire loads of the pushes went unchecked.
            thread::yield_now();
            let room = owner.remaining_slots();
            let tasks = DEFAULT_CAPACITY..DEFAULT_CAPACITY + room;
            if single_pushes {
                for task in tasks {
                    assert!(!owner.push_back_or_overflow(task, &sink));
                }
            } else {
                owner.push_back(tasks);
            }
            let mut seen = drain(&mut owner);
            seen.extend(thief.join().unwrap());
            assert_exactly_once(seen, DEFAULT_CAPACITY + room);
        });
    }

    #[test]
    fn loom_push_back_reuses_slots_a_thief_freed() {
        reuse_slots_a_thief_freed(false);
    }

    #[test]
    fn loom_push_reuses_slots_a_thief_freed() {
        reuse_slots_a_thief_freed(true);
    }

    /// Two thieves race each other and the owner's pushes. Bound 2: three
    /// threads, so the space grows fast with the bound.
    #[test]
    fn loom_two_thieves_race() {
        check(|| {
            let (mut owner, steal) = local(DEFAULT_CAPACITY);
            let first = spawn_thief(steal.clone(), StealLimit::Half);
            let second = spawn_thief(steal, StealLimit::AtMost(1));
            owner.push_back(0..DEFAULT_CAPACITY);
            let mut seen = first.join().unwrap();
            seen.extend(second.join().unwrap());
            seen.extend(drain(&mut owner));
            assert_exactly_once(seen, DEFAULT_CAPACITY);
        });
    }

    /// The owner pops until empty while a thief steals. Bound 2: two
    /// threads.
    #[test]
    fn loom_steal_races_pop_until_empty() {
        check(|| {
            let (mut owner, steal) = local(DEFAULT_CAPACITY);
            owner.push_back(0..3);
            let thief = spawn_thief(steal, StealLimit::Half);
            let popped = drain(&mut owner);
            assert!(popped.windows(2).all(|w| w[0] < w[1]), "FIFO: {popped:?}");
            let mut seen = thief.join().unwrap();
            seen.extend(popped);
            assert_exactly_once(seen, 3);
        });
    }

    /// The thief in the middle is both a destination (step 7 publishes
    /// into it) and a victim. Bound 2: three threads, main only joins.
    #[test]
    fn loom_stolen_tasks_can_be_stolen_again() {
        check(|| {
            let (mut owner, steal) = full_ring();
            let (mut middle, middle_steal) = local(DEFAULT_CAPACITY);
            let middle = thread::spawn(move || {
                let mut got = Vec::new();
                if let Some((task, _)) = steal.steal_into(&mut middle, StealLimit::Half) {
                    got.push(task);
                }
                got.extend(drain(&mut middle));
                got
            });
            let last = spawn_thief(middle_steal, StealLimit::Half);
            let mut seen = middle.join().unwrap();
            seen.extend(last.join().unwrap());
            seen.extend(drain(&mut owner));
            assert_exactly_once(seen, DEFAULT_CAPACITY);
        });
    }

    /// `middle` starts full, so it may steal only after `last` has taken
    /// half of it, and then writes into a slot `last` just read (steal step
    /// 1 must see `last`'s step 6). Bound 2: three threads, main only joins.
    #[test]
    fn loom_thief_refills_slots_its_own_thief_freed() {
        check(|| {
            let (mut owner, steal) = full_ring();
            let (mut middle, middle_steal) = local(DEFAULT_CAPACITY);
            middle.push_back(DEFAULT_CAPACITY..2 * DEFAULT_CAPACITY);
            let last = spawn_thief(middle_steal, StealLimit::Half);
            let middle = thread::spawn(move || {
                let stolen = steal.steal_into(&mut middle, StealLimit::Half);
                let mut got: Vec<usize> = stolen.map(|(task, _)| task).into_iter().collect();
                got.extend(drain(&mut middle));
                got
            });
            let mut seen = middle.join().unwrap();
            seen.extend(last.join().unwrap());
            seen.extend(drain(&mut owner));
            assert_exactly_once(seen, 2 * DEFAULT_CAPACITY);
        });
    }

    /// A task that counts its drops.
    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Relaxed);
        }
    }

    /// Whichever thread drops the last handle drops the tasks left in
    /// either ring exactly once. Bound 2: two threads.
    #[test]
    fn loom_last_handle_drops_leftovers_once() {
        check(|| {
            let drops = Arc::new(AtomicUsize::new(0));
            let (mut owner, steal) = local(DEFAULT_CAPACITY);
            owner.push_back((0..3).map(|_| Counted(drops.clone())));
            let thief = thread::spawn(move || {
                let (mut dst, _) = local(DEFAULT_CAPACITY);
                // The stolen task is dropped here; the rest with the rings.
                drop(steal.steal_into(&mut dst, StealLimit::Half));
            });
            drop(owner);
            thief.join().unwrap();
            assert_eq!(drops.load(Relaxed), 3);
        });
    }
}
