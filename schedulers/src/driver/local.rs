//! `timer=per-worker`: one timer wheel per worker, beside the driver's
//! shared wheel (`timer.rs`), after the per-worker-wheel proposals for
//! tokio (tokio issue 6504 and the RFCs it links): a timer armed on a
//! worker goes into that worker's own wheel, so arming and cancelling on
//! the worker touch no lock or cache line another worker uses.
//!
//! # Who touches a worker wheel
//! - Its **owner**, worker `i` (the thread the driver's thread-local names
//!   as worker `i` of this driver, `mod.rs`), is the only thread that arms
//!   timers in it, cancels them directly and fires them. Each wheel is
//!   still behind its own mutex, so that runtime shutdown can reach it
//!   from another thread; the owner's acquisitions are uncontended, which
//!   `timer_lock_contended` (counted for these wheels too) shows.
//! - **Other threads** (a task that was stolen or woken elsewhere since it
//!   armed its timer) never take the wheel's lock. Each timer has an
//!   [`Entry`] shared by its `Sleep` and the wheel, holding its state
//!   (pending, fired, cancelled) and waker under a mutex of its own:
//!   - poll: reads the state, stores the waker (any thread);
//!   - cancel from another thread: marks the entry cancelled (it will
//!     never wake anything after that) and sends its key to the owner as a
//!     message: a queue under the wheel's `remote` lock, flagged by
//!     `has_remote`; counted in `timer_remote_cancels`;
//!   - a reset (`Sleep::reset`) is a cancel followed by a fresh arm on the
//!     thread that polls next: into that worker's own wheel, or the shared
//!     wheel off the workers.
//! - Timers armed **off the workers** (`block_on`, blocking-pool threads,
//!   other threads) go into the driver's shared wheel, fired by whichever
//!   worker holds the driver, exactly as under `timer=shared`.
//!
//! # Fire and cancel race
//! Both decide under the entry's lock, which is the linearization point:
//! 1. the owner, advancing its wheel, frees every due entry from the wheel
//!    (its key goes stale) and, under the entry lock, moves it pending →
//!    fired and takes its waker (woken after every lock is released);
//! 2. a remote cancel, under the entry lock, moves it pending → cancelled
//!    and takes its waker (dropped after the lock); only then does it post
//!    the key. Whoever comes second sees the other's state and does
//!    nothing: the waker is woken at most once, and never once a cancel
//!    took effect. (A cancel that finds the timer fired returns while the
//!    fire's wake may still be on its way, as with the shared wheel.)
//! 3. The owner drains posted keys before each advance and removes them
//!    from its wheel; a key whose entry already fired is stale (the wheel's
//!    generation check) and removes nothing.
//!
//! `loom_tests/timer_remote_cancel.rs` checks 1–3.
//!
//! # Parking
//! A worker computes its park timeout from its own wheel's next
//! expiration ([`WorkerWheels::park_timeout`]): a worker blocked on its
//! condvar wakes by itself for its timers, and one blocked in epoll bounds
//! the wait by both its wheel and the shared one. Since only the owner
//! arms timers in its wheel, no other thread ever needs to wake it for a
//! new timer. After every park and at every maintenance tick it fires what
//! is due ([`WorkerWheels::fire_due`]); a cheap owner-only `next_due`
//! check skips the lock when nothing can be due.
//!
//! A worker stuck in one long poll fires its own timers late (no other
//! worker fires them, as the shared wheel's driver holder would).

use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use super::timer::{lateness_us, Clock, TimerCounters};
use super::wheel::{TimerKey, Wheel};
use crate::loom::lock_counted;
use crate::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use crate::loom::sync::{Arc, Mutex, MutexGuard};

/// A timer's state; see the module doc, *Fire and cancel race*.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Pending,
    Fired,
    Cancelled,
}

#[derive(Debug)]
struct Slot {
    state: State,
    waker: Option<Waker>,
}

/// One timer of a worker wheel, shared by its `Sleep` and the wheel.
#[derive(Debug)]
pub(crate) struct Entry {
    slot: Mutex<Slot>,
    deadline: Instant,
}

/// A timer filed in worker `worker`'s wheel under `key`.
#[derive(Debug)]
pub(crate) struct LocalTimer {
    entry: Arc<Entry>,
    worker: usize,
    key: TimerKey,
}

impl LocalTimer {
    /// The wheel it is filed in.
    pub(crate) fn worker(&self) -> usize {
        self.worker
    }
}

#[derive(Debug)]
struct LocalCore {
    wheel: Wheel<Arc<Entry>>,
    shutdown: bool,
}

/// One worker's wheel.
#[derive(Debug)]
struct WorkerWheel {
    core: Mutex<LocalCore>,
    /// Keys cancelled by other threads, for the owner to remove.
    remote: Mutex<Vec<TimerKey>>,
    /// Set after a key is posted to `remote`; cleared by the owner.
    has_remote: AtomicBool,
    /// Lower bound on the wheel's earliest pending tick (`u64::MAX`:
    /// none). Owner-only: written under `core` by the owner's arms and
    /// advances, read lock-free by the owner.
    next_due: AtomicU64,
    counters: TimerCounters,
}

/// Every worker's wheel of one driver.
#[derive(Debug)]
pub(crate) struct WorkerWheels {
    /// Padded: each wheel's hot words belong to its worker's cache.
    wheels: Box<[CachePadded<WorkerWheel>]>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl WorkerWheel {
    fn lock(&self) -> MutexGuard<'_, LocalCore> {
        lock_counted(&self.core, &self.counters.lock_contended)
    }
}

impl WorkerWheels {
    /// `workers` empty wheels.
    pub(crate) fn new(workers: usize) -> WorkerWheels {
        let wheels = (0..workers)
            .map(|_| {
                CachePadded::new(WorkerWheel {
                    core: Mutex::new(LocalCore { wheel: Wheel::new(), shutdown: false }),
                    remote: Mutex::new(Vec::new()),
                    has_remote: AtomicBool::new(false),
                    next_due: AtomicU64::new(u64::MAX),
                    counters: TimerCounters::default(),
                })
            })
            .collect();
        WorkerWheels { wheels }
    }

    /// Number of wheels.
    pub(crate) fn len(&self) -> usize {
        self.wheels.len()
    }

    /// Owner `worker` files a timer for `deadline` waking `waker`; `None`
    /// when its tick has passed or the driver has shut down (complete now).
    pub(crate) fn arm(&self, clock: &Clock, worker: usize, deadline: Instant, waker: &Waker) -> Option<LocalTimer> {
        let when = clock.tick_ceil(deadline);
        let entry =
            Arc::new(Entry { slot: Mutex::new(Slot { state: State::Pending, waker: Some(waker.clone()) }), deadline });
        let w = &self.wheels[worker];
        let mut core = w.lock();
        if core.shutdown {
            drop(core);
            return None; // `entry` (a waker) drops unlocked
        }
        match core.wheel.insert(when, entry.clone()) {
            Ok(key) => {
                // Relaxed: owner-only (module doc, `next_due`).
                if when < w.next_due.load(Ordering::Relaxed) {
                    w.next_due.store(when, Ordering::Relaxed);
                }
                drop(core);
                Some(LocalTimer { entry, worker, key })
            }
            Err(refused) => {
                drop(core);
                drop(refused);
                None
            }
        }
    }

    /// `Ready` once the timer fired (or was cancelled: not reachable
    /// through a `Sleep`); otherwise makes `waker` the one woken. Any
    /// thread.
    pub(crate) fn poll(timer: &LocalTimer, waker: &Waker) -> Poll<()> {
        let mut slot = lock(&timer.entry.slot);
        if slot.state != State::Pending {
            return Poll::Ready(());
        }
        let replaced = match &slot.waker {
            Some(w) if w.will_wake(waker) => None,
            _ => slot.waker.replace(waker.clone()),
        };
        drop(slot);
        drop(replaced);
        Poll::Pending
    }

    /// Cancels on the owner's thread: removes it from the wheel (nothing
    /// if it fired: the key is stale then).
    pub(crate) fn cancel_owned(&self, timer: LocalTimer) {
        let removed = self.wheels[timer.worker].lock().wheel.remove(timer.key);
        drop(removed); // after the guard
    }

    /// Cancels from another thread (module doc, step 2). `true`: it was
    /// pending and will never wake anything; `false`: it had fired (the
    /// owner freed it; its wake may still be on its way) or shut down.
    pub(crate) fn cancel_remote(&self, timer: LocalTimer) -> bool {
        let mut slot = lock(&timer.entry.slot);
        if slot.state != State::Pending {
            return false;
        }
        slot.state = State::Cancelled;
        let waker = slot.waker.take();
        drop(slot);
        drop(waker);
        let w = &self.wheels[timer.worker];
        lock(&w.remote).push(timer.key);
        // Relaxed: the queue's lock orders the key; the flag only tells the
        // owner to look (a late flag costs one empty drain, see `fire_due`).
        w.has_remote.store(true, Ordering::Relaxed);
        // Relaxed: a statistic.
        w.counters.remote_cancels.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// How long owner `worker` may park, at `now`, before its next timer
    /// is due; `None`: no timer.
    pub(crate) fn park_timeout(&self, clock: &Clock, worker: usize, now: Instant) -> Option<Duration> {
        // Relaxed: owner-only.
        let next = self.wheels[worker].next_due.load(Ordering::Relaxed);
        clock.wait_for((next != u64::MAX).then_some(next), now)
    }

    /// Owner `worker` removes the keys other threads cancelled and fires
    /// every timer due at `now`: wakers to `out` (deadline order).
    pub(crate) fn fire_due(&self, clock: &Clock, worker: usize, now: Instant, out: &mut Vec<Waker>) {
        let w = &self.wheels[worker];
        let now_tick = clock.tick_floor(now);
        // Relaxed: see `cancel_remote`; `next_due` is owner-only.
        let drain = w.has_remote.load(Ordering::Relaxed) && w.has_remote.swap(false, Ordering::Relaxed);
        if !drain && now_tick < w.next_due.load(Ordering::Relaxed) {
            return;
        }
        let cancelled = if drain { std::mem::take(&mut *lock(&w.remote)) } else { Vec::new() };
        let mut freed: Vec<Arc<Entry>> = Vec::new();
        let (mut fired, mut late_total_us, mut late_max_us) = (0u64, 0u64, 0u64);
        let mut core = w.lock();
        for key in cancelled {
            freed.extend(core.wheel.remove(key));
        }
        core.wheel.advance_free(now_tick, |entry| {
            let mut slot = lock(&entry.slot);
            if slot.state == State::Pending {
                slot.state = State::Fired;
                out.extend(slot.waker.take());
                let late = lateness_us(now, entry.deadline);
                fired += 1;
                late_total_us = late_total_us.saturating_add(late);
                late_max_us = late_max_us.max(late);
            }
            drop(slot);
            freed.push(entry);
        });
        let next = core.wheel.next_expiration().unwrap_or(u64::MAX);
        // Relaxed: owner-only.
        w.next_due.store(next, Ordering::Relaxed);
        drop(core);
        drop(freed); // holds no waker any more; dropped unlocked anyway
        if fired > 0 {
            w.counters.record_fired(fired, late_total_us, late_max_us);
        }
    }

    /// Runtime shutdown: fires every timer of every wheel (their sleeps
    /// complete) and makes later arms complete at once.
    pub(crate) fn shutdown(&self, out: &mut Vec<Waker>) {
        for w in self.wheels.iter() {
            let mut freed = Vec::new();
            let mut core = w.lock();
            core.shutdown = true;
            core.wheel.fire_all_free(|entry| {
                let mut slot = lock(&entry.slot);
                if slot.state == State::Pending {
                    slot.state = State::Fired;
                    out.extend(slot.waker.take());
                }
                drop(slot);
                freed.push(entry);
            });
            // Relaxed: nothing is pending any more.
            w.next_due.store(u64::MAX, Ordering::Relaxed);
            drop(core);
            lock(&w.remote).clear();
        }
    }

    /// Runs `f` on each wheel's counters.
    pub(crate) fn for_each_counters(&self, mut f: impl FnMut(&TimerCounters)) {
        self.wheels.iter().for_each(|w| f(&w.counters));
    }

    /// Timers pending in `worker`'s wheel (including cancelled ones whose
    /// keys the owner has not drained yet).
    #[cfg(any(loom, all(test, not(loom))))]
    pub(crate) fn pending(&self, worker: usize) -> usize {
        self.wheels[worker].lock().wheel.pending()
    }

    /// Holds `worker`'s wheel lock (without counting) until the result
    /// drops: lets a test make another acquisition contended.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn hold_lock(&self, worker: usize) -> impl Sized + '_ {
        self.wheels[worker].core.lock().unwrap()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::test_util::counting_waker;

    fn clock() -> Clock {
        super::super::timer::TimeShared::new().clock
    }

    #[test]
    fn owner_arm_fire_and_cancel() {
        let clock = clock();
        let wheels = WorkerWheels::new(2);
        let now = Instant::now();
        let (count, waker) = counting_waker();
        let a = wheels.arm(&clock, 1, now + Duration::from_millis(5), &waker).expect("filed");
        let b = wheels.arm(&clock, 1, now + Duration::from_millis(7), &waker).expect("filed");
        assert_eq!((a.worker(), wheels.pending(1), wheels.pending(0)), (1, 2, 0));
        let wait = wheels.park_timeout(&clock, 1, now).expect("bounded by the 5 ms timer");
        assert!(wait <= Duration::from_millis(6) && wait >= Duration::from_millis(4), "{wait:?}");
        assert_eq!(wheels.park_timeout(&clock, 0, now), None);
        wheels.cancel_owned(b);
        assert_eq!(wheels.pending(1), 1);
        let mut out = Vec::new();
        wheels.fire_due(&clock, 1, now + Duration::from_millis(4), &mut out);
        assert!(out.is_empty(), "fired 1 ms early");
        assert_eq!(WorkerWheels::poll(&a, &waker), Poll::Pending);
        wheels.fire_due(&clock, 1, now + Duration::from_millis(10), &mut out);
        assert_eq!(out.len(), 1);
        out.drain(..).for_each(Waker::wake);
        assert_eq!(count.get(), 1);
        assert_eq!(WorkerWheels::poll(&a, &waker), Poll::Ready(()));
        assert_eq!(wheels.pending(1), 0, "a fired entry leaves the wheel");
        wheels.cancel_owned(a); // stale key: nothing
        let c = &wheels.wheels[1].counters;
        assert_eq!(c.fired.load(Ordering::SeqCst), 1);
        assert!(c.lateness_us_total.load(Ordering::SeqCst) >= 3_000, "fired at +10 ms, due at +5 ms");
    }

    #[test]
    fn remote_cancel_never_wakes_and_the_owner_unlinks_it() {
        let clock = clock();
        let wheels = std::sync::Arc::new(WorkerWheels::new(1));
        let now = Instant::now();
        let (count, waker) = counting_waker();
        let t = wheels.arm(&clock, 0, now + Duration::from_millis(3), &waker).expect("filed");
        let w2 = wheels.clone();
        assert!(std::thread::spawn(move || w2.cancel_remote(t)).join().unwrap());
        assert_eq!(wheels.pending(0), 1, "still linked until the owner drains");
        assert_eq!(wheels.wheels[0].counters.remote_cancels.load(Ordering::SeqCst), 1);
        // Before the deadline: the drain alone runs.
        let mut out = Vec::new();
        wheels.fire_due(&clock, 0, now, &mut out);
        assert_eq!((out.len(), wheels.pending(0)), (0, 0));
        wheels.fire_due(&clock, 0, now + Duration::from_millis(10), &mut out);
        assert!(out.is_empty());
        assert_eq!(count.get(), 0);
        assert_eq!(wheels.wheels[0].counters.fired.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn remote_cancel_after_the_fire_is_a_no_op() {
        let clock = clock();
        let wheels = WorkerWheels::new(1);
        let now = Instant::now();
        let (count, waker) = counting_waker();
        let t = wheels.arm(&clock, 0, now + Duration::from_millis(2), &waker).expect("filed");
        let mut out = Vec::new();
        wheels.fire_due(&clock, 0, now + Duration::from_millis(5), &mut out);
        out.drain(..).for_each(Waker::wake);
        // A new timer may reuse the fired entry's arena slot.
        let (other_count, other) = counting_waker();
        let u = wheels.arm(&clock, 0, now + Duration::from_millis(50), &other).expect("filed");
        assert!(!wheels.cancel_remote(t), "it had fired");
        assert_eq!(wheels.wheels[0].counters.remote_cancels.load(Ordering::SeqCst), 0, "nothing to cancel");
        wheels.fire_due(&clock, 0, now + Duration::from_millis(6), &mut out);
        assert_eq!((wheels.pending(0), count.get()), (1, 1));
        wheels.fire_due(&clock, 0, now + Duration::from_millis(60), &mut out);
        assert_eq!(out.len(), 1, "the other timer still fires");
        drop((u, other_count));
    }

    #[test]
    fn shutdown_fires_everything_and_later_arms_elapse() {
        let clock = clock();
        let wheels = WorkerWheels::new(3);
        let far = Instant::now() + Duration::from_secs(100);
        let (_, waker) = counting_waker();
        let timers: Vec<_> = (0..3).map(|i| wheels.arm(&clock, i, far, &waker).expect("filed")).collect();
        let mut out = Vec::new();
        wheels.shutdown(&mut out);
        assert_eq!(out.len(), 3);
        assert!(timers.iter().all(|t| WorkerWheels::poll(t, &waker).is_ready()));
        assert!(wheels.arm(&clock, 0, far, &waker).is_none());
    }

    #[test]
    fn the_owner_lock_counts_contention() {
        let clock = clock();
        let wheels = std::sync::Arc::new(WorkerWheels::new(1));
        let guard = wheels.hold_lock(0);
        let w2 = wheels.clone();
        let t = std::thread::spawn(move || {
            let _ = w2.arm(&clock, 0, Instant::now() + Duration::from_secs(1), Waker::noop());
        });
        while wheels.wheels[0].counters.lock_contended.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        drop(guard);
        t.join().unwrap();
    }
}
