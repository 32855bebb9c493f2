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
    let slots = (0..capacity).map(|_| UnsafeCell::new(MaybeUninit::uninit())).collect();
    let inner = Arc::new(Inner {
        head: CachePadded::new(AtomicU64::new(pack(start, start))),
        tail: CachePadded::new(AtomicU32::new(start)),
        mask: u32::try_from(capacity - 1).expect("capacity is at most MAX_CAPACITY"),
        slots,
    });
    let local = Local { inner: inner.clone(), _not_sync: PhantomData };
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
    fn overflow_half<O: Overflow<T>>(&mut self, task: T, head: u32, tail: u32, overflow: &O) -> Result<(), T> {
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
        let mut batch = Batch { inner: &self.inner, next: head, left_in_ring: moved, new_task: Some(task) };
        overflow.push_batch(batch.by_ref());
        assert!(batch.len() == 0, "overflow sink left {} of {} tasks unconsumed", batch.len(), moved + 1);
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
        let mut publish = PublishOnDrop { tail: &self.inner.tail, start: tail, written: 0 };
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
        self.tail.store(self.start.wrapping_add(self.written), Release);
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

impl<T> fmt::Debug for Local<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Local").field("len", &self.len()).field("capacity", &self.capacity()).finish()
    }
}

#[path = "queue/steal.rs"]
mod steal;

#[cfg(all(test, not(loom)))]
#[path = "queue/tests.rs"]
mod tests;

#[cfg(all(test, not(loom)))]
#[path = "queue/stress.rs"]
mod stress;

#[cfg(all(test, loom))]
#[path = "../../loom_tests/steal_half_queue.rs"]
mod loom_tests;
