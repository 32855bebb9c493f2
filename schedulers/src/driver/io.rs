//! Readiness-to-waker dispatch for sources registered with mio (epoll,
//! edge-triggered).
//!
//! Every registered source gets a [`ScheduledIo`]: an atomic readiness word
//! and the wakers of the tasks waiting to read or write. The driver maps a
//! mio event to its `ScheduledIo` through [`Slots`], an index arena whose
//! tokens carry a generation, so an event queued for a source that has since
//! been deregistered (and whose slot was reused) is recognised as stale and
//! dropped instead of waking the new owner.
//!
//! # Readiness protocol (edge-triggered)
//! 1. The driver ORs the event's bits into the readiness word and bumps its
//!    tick (`set_readiness`), then takes the waiting wakers of each direction
//!    the event satisfies (`take_wakers`) and wakes them outside every lock.
//! 2. A resource checks the word (`poll_ready`); if the direction is not
//!    ready it stores its waker under the waiter lock and checks the word
//!    again under that lock. Step 1 sets the word before taking the lock, so
//!    either the re-check sees the bits or step 1 finds the waker: no lost
//!    wake-up.
//! 3. The resource runs its syscall. On `WouldBlock` it clears the bits it
//!    saw (`clear_readiness`), but only if the tick is still the one it saw:
//!    an event that arrived meanwhile is not erased, since with
//!    edge-triggered epoll it would never be reported again.

use std::io;
use std::task::{Context, Poll, Waker};

use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Mutex, MutexGuard};

/// Readiness bits (low byte of the readiness word).
pub(crate) const READABLE: usize = 1;
pub(crate) const WRITABLE: usize = 1 << 1;
pub(crate) const READ_CLOSED: usize = 1 << 2;
pub(crate) const WRITE_CLOSED: usize = 1 << 3;
pub(crate) const ERROR: usize = 1 << 4;
/// Set by driver shutdown: every poll fails from then on.
const SHUTDOWN: usize = 1 << 5;
/// Closed states are final; `clear_readiness` never clears them.
const CLOSED: usize = READ_CLOSED | WRITE_CLOSED;
/// The readiness word keeps its bits below this shift, the tick above it.
const TICK_SHIFT: u32 = 8;
const READY_MASK: usize = (1 << TICK_SHIFT) - 1;

/// Bits of a token that hold the slot index (so at most 2^24 sources are
/// registered at once); the generation takes the bits above, except the top
/// one, which stays clear so no token can equal the driver's waker token.
const INDEX_BITS: u32 = 24;
const INDEX_MASK: usize = (1 << INDEX_BITS) - 1;
const GENERATION_MASK: usize = usize::MAX >> (INDEX_BITS + 1);

/// The message of every I/O error caused by runtime shutdown.
pub(crate) const SHUTDOWN_MESSAGE: &str = "the wsbench runtime is shutting down";

pub(crate) fn shutdown_error() -> io::Error {
    io::Error::other(SHUTDOWN_MESSAGE)
}

/// Which half of a source a task waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
}

impl Direction {
    /// The readiness bits that let this direction make progress (an error
    /// or a closed half does: the syscall reports it).
    fn mask(self) -> usize {
        match self {
            Direction::Read => READABLE | READ_CLOSED | ERROR,
            Direction::Write => WRITABLE | WRITE_CLOSED | ERROR,
        }
    }
}

/// Converts a mio event into readiness bits.
pub(crate) fn ready_from_event(event: &mio::event::Event) -> usize {
    let mut ready = 0;
    if event.is_readable() {
        ready |= READABLE;
    }
    if event.is_writable() {
        ready |= WRITABLE;
    }
    if event.is_read_closed() {
        ready |= READ_CLOSED;
    }
    if event.is_write_closed() {
        ready |= WRITE_CLOSED;
    }
    if event.is_error() {
        ready |= ERROR;
    }
    ready
}

/// What `poll_ready` saw: the direction's ready bits and the tick.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadyEvent {
    tick: usize,
    ready: usize,
}

#[derive(Debug, Default)]
struct Waiters {
    readers: Vec<Waker>,
    writers: Vec<Waker>,
}

/// Readiness and waiters of one registered source.
#[derive(Debug)]
pub(crate) struct ScheduledIo {
    /// Ready bits (low byte) and a wrapping tick bumped per event.
    readiness: AtomicUsize,
    waiters: Mutex<Waiters>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No code that can panic runs under these locks (pushes, drains), so a
    // poisoned lock still holds consistent data.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ScheduledIo {
    pub(crate) fn new() -> Self {
        ScheduledIo { readiness: AtomicUsize::new(0), waiters: Mutex::new(Waiters::default()) }
    }

    /// Driver side, step 1: adds `ready` bits and bumps the tick.
    pub(crate) fn set_readiness(&self, ready: usize) {
        let tick_one = 1 << TICK_SHIFT;
        // AcqRel: the Release half publishes the bits to `poll_ready`'s
        // Acquire loads; the Acquire half orders us after earlier clears.
        let _ = self
            .readiness
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |cur| Some(cur.wrapping_add(tick_one) | ready));
    }

    /// Driver side, step 1: moves the wakers of every direction `ready`
    /// satisfies into `out` (the caller wakes them after all locks).
    pub(crate) fn take_wakers(&self, ready: usize, out: &mut Vec<Waker>) {
        let mut waiters = lock(&self.waiters);
        if ready & (Direction::Read.mask() | SHUTDOWN) != 0 {
            out.append(&mut waiters.readers);
        }
        if ready & (Direction::Write.mask() | SHUTDOWN) != 0 {
            out.append(&mut waiters.writers);
        }
    }

    /// Marks the source shut down and hands out every waiter.
    pub(crate) fn shutdown(&self, out: &mut Vec<Waker>) {
        // Release: publishes the shutdown bit; pairs with `poll_ready`'s
        // Acquire loads.
        self.readiness.fetch_or(SHUTDOWN, Ordering::Release);
        self.take_wakers(SHUTDOWN, out);
    }

    /// Resource side, step 2: `Ready` with what was seen once `dir` can make
    /// progress, an error after shutdown, else `Pending` with `cx`'s waker
    /// stored.
    pub(crate) fn poll_ready(&self, cx: &mut Context<'_>, dir: Direction) -> Poll<io::Result<ReadyEvent>> {
        // Acquire: pairs with the Release of `set_readiness` / `shutdown`.
        if let Some(ready) = Self::check(self.readiness.load(Ordering::Acquire), dir) {
            return Poll::Ready(ready);
        }
        let mut waiters = lock(&self.waiters);
        // Re-check under the waiter lock (step 2 of the module protocol).
        if let Some(ready) = Self::check(self.readiness.load(Ordering::Acquire), dir) {
            return Poll::Ready(ready);
        }
        let list = match dir {
            Direction::Read => &mut waiters.readers,
            Direction::Write => &mut waiters.writers,
        };
        if !list.iter().any(|w| w.will_wake(cx.waker())) {
            list.push(cx.waker().clone());
        }
        Poll::Pending
    }

    fn check(word: usize, dir: Direction) -> Option<io::Result<ReadyEvent>> {
        if word & SHUTDOWN != 0 {
            return Some(Err(shutdown_error()));
        }
        let ready = word & READY_MASK & dir.mask();
        (ready != 0).then_some(Ok(ReadyEvent { tick: word >> TICK_SHIFT, ready }))
    }

    /// Resource side, step 3: the syscall said `WouldBlock`; forget the bits
    /// `seen` reported unless a newer event arrived since.
    pub(crate) fn clear_readiness(&self, seen: ReadyEvent) {
        let clear = seen.ready & !CLOSED;
        // Acquire on load / AcqRel on success: orders this CAS with
        // `set_readiness`'s, so a newer tick is always seen.
        let mut cur = self.readiness.load(Ordering::Acquire);
        while cur >> TICK_SHIFT == seen.tick {
            match self.readiness.compare_exchange_weak(cur, cur & !clear, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
    }
}

/// One arena slot.
#[derive(Debug)]
struct Slot {
    generation: usize,
    io: Option<Arc<ScheduledIo>>,
}

/// The registered sources, by token. Lives behind a mutex in the driver's
/// shared state; `shutdown` is checked under that mutex so a registration
/// racing with shutdown is either refused or seen by it.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    slots: Vec<Slot>,
    free: Vec<usize>,
    shutdown: bool,
}

fn token(index: usize, generation: usize) -> mio::Token {
    mio::Token((generation << INDEX_BITS) | index)
}

impl Slots {
    /// Allocates a slot for a new source.
    pub(crate) fn insert(&mut self) -> io::Result<(mio::Token, Arc<ScheduledIo>)> {
        if self.shutdown {
            return Err(shutdown_error());
        }
        let io = Arc::new(ScheduledIo::new());
        let index = match self.free.pop() {
            Some(index) => index,
            None if self.slots.len() <= INDEX_MASK => {
                self.slots.push(Slot { generation: 0, io: None });
                self.slots.len() - 1
            }
            None => return Err(io::Error::other("too many I/O sources registered with one wsbench runtime")),
        };
        let slot = &mut self.slots[index];
        slot.io = Some(io.clone());
        Ok((token(index, slot.generation), io))
    }

    /// The live source behind `token`; `None` if it is stale.
    pub(crate) fn get(&self, token: mio::Token) -> Option<&Arc<ScheduledIo>> {
        let slot = self.slots.get(token.0 & INDEX_MASK)?;
        if slot.generation != token.0 >> INDEX_BITS {
            return None;
        }
        slot.io.as_ref()
    }

    /// Frees `token`'s slot, bumping its generation. Stale tokens are ignored.
    pub(crate) fn remove(&mut self, token: mio::Token) -> Option<Arc<ScheduledIo>> {
        self.get(token)?;
        let index = token.0 & INDEX_MASK;
        let slot = &mut self.slots[index];
        slot.generation = (slot.generation + 1) & GENERATION_MASK;
        self.free.push(index);
        slot.io.take()
    }

    /// Refuses later inserts and returns every live source.
    pub(crate) fn shutdown(&mut self) -> Vec<Arc<ScheduledIo>> {
        self.shutdown = true;
        self.slots.iter().filter_map(|s| s.io.clone()).collect()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::test_util::counting_waker;

    #[test]
    fn stale_token_does_not_reach_a_reused_slot() {
        let mut slots = Slots::default();
        let (old, _) = slots.insert().unwrap();
        assert!(slots.remove(old).is_some());
        let (new, _) = slots.insert().unwrap();
        assert_eq!(new.0 & INDEX_MASK, old.0 & INDEX_MASK, "slot reused");
        assert_ne!(new, old);
        assert!(slots.get(old).is_none());
        assert!(slots.remove(old).is_none());
        assert!(slots.get(new).is_some());
        assert_ne!(new, mio::Token(usize::MAX));
    }

    #[test]
    fn shutdown_refuses_new_sources() {
        let mut slots = Slots::default();
        slots.insert().unwrap();
        assert_eq!(slots.shutdown().len(), 1);
        let err = slots.insert().unwrap_err();
        assert_eq!(err.to_string(), SHUTDOWN_MESSAGE);
    }

    #[test]
    fn pending_until_ready_then_waiter_is_woken_once() {
        let io = ScheduledIo::new();
        let (count, waker) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_pending());
        assert!(io.poll_ready(&mut cx, Direction::Read).is_pending());
        let mut out = Vec::new();
        // Writable does not wake a reader.
        io.set_readiness(WRITABLE);
        io.take_wakers(WRITABLE, &mut out);
        assert!(out.is_empty());
        io.set_readiness(READABLE);
        io.take_wakers(READABLE, &mut out);
        assert_eq!(out.len(), 1, "same waker stored once");
        out.drain(..).for_each(Waker::wake);
        assert_eq!(count.get(), 1);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_ready());
    }

    #[test]
    fn clear_keeps_a_newer_event_and_closed_bits() {
        let io = ScheduledIo::new();
        let waker = counting_waker().1;
        let mut cx = Context::from_waker(&waker);
        io.set_readiness(READABLE);
        let Poll::Ready(Ok(seen)) = io.poll_ready(&mut cx, Direction::Read) else { panic!("not ready") };
        io.set_readiness(READABLE); // arrives while the syscall runs
        io.clear_readiness(seen);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_ready(), "newer event erased");
        let Poll::Ready(Ok(seen)) = io.poll_ready(&mut cx, Direction::Read) else { panic!("not ready") };
        io.clear_readiness(seen);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_pending());
        io.set_readiness(READ_CLOSED);
        let Poll::Ready(Ok(seen)) = io.poll_ready(&mut cx, Direction::Read) else { panic!("not ready") };
        io.clear_readiness(seen);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_ready(), "closed is final");
        assert!(io.poll_ready(&mut cx, Direction::Write).is_pending());
    }

    #[test]
    fn shutdown_wakes_both_directions_and_fails_polls() {
        let io = ScheduledIo::new();
        let (count, waker) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_pending());
        assert!(io.poll_ready(&mut cx, Direction::Write).is_pending());
        let mut out = Vec::new();
        io.shutdown(&mut out);
        out.drain(..).for_each(Waker::wake);
        assert_eq!(count.get(), 2);
        match io.poll_ready(&mut cx, Direction::Write) {
            Poll::Ready(Err(e)) => assert_eq!(e.to_string(), SHUTDOWN_MESSAGE),
            other => panic!("expected a shutdown error, got {other:?}"),
        }
    }
}

/// Models of the readiness protocol (module doc). Run:
/// `RUSTFLAGS="--cfg loom" cargo test -p wsbench-schedulers --lib --release driver::io::loom_tests`
/// (own `CARGO_TARGET_DIR`). Each finishes exhaustively in well under a
/// second.
#[cfg(all(test, loom))]
#[path = "../loom_tests/driver_io.rs"]
mod loom_tests;
