//! The runtime's timers: one [`Wheel`] behind one mutex, plus the clock that
//! turns `Instant`s into wheel ticks.
//!
//! The wheel is shared by every worker and protected the simple way, a
//! `Mutex`; each acquisition first tries `try_lock` and counts a failure in
//! `timer_lock_contended`, so the cost of this choice at high core counts is
//! measured rather than guessed.
//!
//! # Ticks
//! Tick `t` is the instant `origin + t ms`. A deadline is rounded *up* to its
//! tick and the wheel fires tick `t` only once the clock has reached it, so a
//! timer never fires early; it fires at most about one tick plus the
//! scheduling delay late.
//!
//! # Park / insert handshake
//! 1. Before blocking in epoll, the parking driver computes its wake-up tick
//!    (the wheel's next expiration, bounded by the caller's timeout) and
//!    stores it in `parked_until`, under the wheel lock.
//! 2. A registration due before `parked_until` asks its caller (under the
//!    same lock) to unpark the driver; the mio waker's eventfd keeps the
//!    wake-up even if epoll has not been entered yet.
//! 3. After the poll, the driver clears `parked_until` and advances the wheel.
//!
//! A poll that did not block (the workers' periodic zero-timeout poll) skips
//! the lock entirely when the clock has not reached `next_due`, a lower
//! bound on the earliest pending tick that every insert lowers and every
//! advance recomputes, both under the lock.
//!
//! Wakers are never woken nor dropped under the lock: a waker's drop can
//! free a task whose future owns a `Sleep`, whose drop takes this lock.

use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use super::wheel::{TimerKey, Wheel};
use crate::loom::lock_counted;
use crate::loom::sync::atomic::{AtomicU64, Ordering};
use crate::loom::sync::{Mutex, MutexGuard};

/// Nanoseconds per tick: the wheel's resolution is one millisecond.
const TICK_NS: u32 = 1_000_000;
/// Ticks per second.
const TICKS_PER_S: u64 = 1_000;
/// Microseconds per tick, for lateness.
const NS_PER_US: u128 = 1_000;

/// What the wheel stores per timer.
#[derive(Debug)]
pub(crate) struct TimerData {
    waker: Option<Waker>,
    deadline: Instant,
}

#[derive(Debug)]
struct TimeCore {
    wheel: Wheel<TimerData>,
    /// The tick a blocked park will wake at by itself; `None` when no
    /// driver is blocked.
    parked_until: Option<u64>,
    shutdown: bool,
}

/// Outcome of registering a timer.
#[derive(Debug)]
pub(crate) enum Registered {
    /// Filed; poll it with its key.
    Pending { key: TimerKey, unpark: bool },
    /// Due already (or the runtime is shutting down): complete now.
    Elapsed,
}

/// Timer counters (see `DriverMetrics`); one set for the shared wheel and
/// one per worker wheel (`local.rs`), summed by `Handle::metrics`.
#[derive(Debug, Default)]
pub(crate) struct TimerCounters {
    pub(crate) fired: AtomicU64,
    pub(crate) lateness_us_total: AtomicU64,
    pub(crate) lateness_us_max: AtomicU64,
    pub(crate) lock_contended: AtomicU64,
    /// Cancels of a worker wheel's timers from another thread (`local.rs`);
    /// always 0 on the shared wheel.
    pub(crate) remote_cancels: AtomicU64,
}

impl TimerCounters {
    /// Counts `fired` timers, their summed and largest lateness.
    pub(crate) fn record_fired(&self, fired: u64, late_total_us: u64, late_max_us: u64) {
        // Relaxed: statistics, read by snapshots that tolerate staleness.
        self.fired.fetch_add(fired, Ordering::Relaxed);
        self.lateness_us_total.fetch_add(late_total_us, Ordering::Relaxed);
        self.lateness_us_max.fetch_max(late_max_us, Ordering::Relaxed);
    }
}

/// Lateness of a timer due at `deadline` firing at `now`, in µs.
pub(crate) fn lateness_us(now: Instant, deadline: Instant) -> u64 {
    u64::try_from(now.saturating_duration_since(deadline).as_nanos() / NS_PER_US).unwrap_or(u64::MAX)
}

/// Turns `Instant`s into wheel ticks (module doc, *Ticks*). Every wheel of
/// a driver shares its clock, so ticks mean the same instant in all.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    origin: Instant,
}

impl Clock {
    /// The tick of `deadline`, rounded up; saturates instead of overflowing.
    pub(crate) fn tick_ceil(&self, deadline: Instant) -> u64 {
        let d = deadline.saturating_duration_since(self.origin);
        // u64 arithmetic: `as_nanos` is u128 and its division is slow.
        let sub_ticks = u64::from(d.subsec_nanos().div_ceil(TICK_NS));
        d.as_secs().saturating_mul(TICKS_PER_S).saturating_add(sub_ticks)
    }

    /// The last tick the clock has reached at `now`.
    pub(crate) fn tick_floor(&self, now: Instant) -> u64 {
        let d = now.saturating_duration_since(self.origin);
        let sub_ticks = u64::from(d.subsec_nanos() / TICK_NS);
        d.as_secs().saturating_mul(TICKS_PER_S).saturating_add(sub_ticks)
    }

    /// The instant of `tick`; `None` if it is not representable.
    pub(crate) fn instant_of(&self, tick: u64) -> Option<Instant> {
        self.origin.checked_add(Duration::from_millis(tick))
    }

    /// How long a park at `now` may block to wake by `next` (a wheel's
    /// next expiration): zero when it is due, `None` without one.
    pub(crate) fn wait_for(&self, next: Option<u64>, now: Instant) -> Option<Duration> {
        next.and_then(|next| {
            if next <= self.tick_floor(now) {
                return Some(Duration::ZERO);
            }
            self.instant_of(next).map(|at| at.saturating_duration_since(now))
        })
    }
}

/// The runtime's timers.
#[derive(Debug)]
pub(crate) struct TimeShared {
    core: Mutex<TimeCore>,
    pub(crate) clock: Clock,
    /// Lower bound on the earliest pending tick (`u64::MAX`: none).
    next_due: AtomicU64,
    pub(crate) counters: TimerCounters,
}

impl TimeShared {
    pub(crate) fn new() -> Self {
        TimeShared {
            core: Mutex::new(TimeCore { wheel: Wheel::new(), parked_until: None, shutdown: false }),
            clock: Clock { origin: Instant::now() },
            next_due: AtomicU64::new(u64::MAX),
            counters: TimerCounters::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, TimeCore> {
        // Nothing that can panic runs under this lock (no waker code; the
        // wheel's own asserts are invariant breaks), so poison is ignored.
        lock_counted(&self.core, &self.counters.lock_contended)
    }

    /// The tick of `deadline`, rounded up (see [`Clock::tick_ceil`]).
    pub(crate) fn tick_ceil(&self, deadline: Instant) -> u64 {
        self.clock.tick_ceil(deadline)
    }

    fn tick_floor(&self, now: Instant) -> u64 {
        self.clock.tick_floor(now)
    }

    /// Files a timer for `deadline` that wakes `waker`. The caller unparks
    /// the driver when told to (handshake step 2). `Elapsed` only if the
    /// wheel's clock has passed the deadline: a caller that wants "a past
    /// deadline is ready now" checks the clock first (a clock read costs
    /// as much as the rest of an insert, so `sleep(d)` skips it).
    pub(crate) fn register(&self, deadline: Instant, waker: &Waker) -> Registered {
        let when = self.tick_ceil(deadline);
        let data = TimerData { waker: Some(waker.clone()), deadline };
        let mut core = self.lock();
        if core.shutdown {
            drop(core);
            return Registered::Elapsed; // `data` (a waker) drops unlocked
        }
        match core.wheel.insert(when, data) {
            Ok(key) => {
                // Release: publishes the lower bound to `after_park`'s
                // lock-free Acquire check (the wheel itself is read locked).
                self.next_due.fetch_min(when, Ordering::Release);
                let unpark = core.parked_until.is_some_and(|until| when < until);
                Registered::Pending { key, unpark }
            }
            Err(data) => {
                drop(core);
                drop(data);
                Registered::Elapsed
            }
        }
    }

    /// `Ready` once the timer fired (its entry is then freed); otherwise
    /// makes sure `waker` is the one woken and returns `Pending`.
    pub(crate) fn poll_fired(&self, key: TimerKey, waker: &Waker) -> Poll<()> {
        let mut core = self.lock();
        let replaced = match core.wheel.get_mut(key) {
            None => return Poll::Ready(()), // not ours any more: treat as fired
            Some((_, true)) => {
                let data = core.wheel.remove(key);
                drop(core);
                drop(data);
                return Poll::Ready(());
            }
            Some((data, false)) => match &data.waker {
                Some(w) if w.will_wake(waker) => None,
                _ => data.waker.replace(waker.clone()),
            },
        };
        drop(core);
        drop(replaced);
        Poll::Pending
    }

    /// Removes the timer, fired or not: it will never wake anything.
    pub(crate) fn cancel(&self, key: TimerKey) {
        let data = self.lock().wheel.remove(key);
        drop(data); // after the guard: a waker drop may re-enter
    }

    /// Handshake step 1: how long the park may block, given the caller's
    /// `timeout`; records the wake-up tick if it blocks at all.
    pub(crate) fn before_park(&self, timeout: Option<Duration>) -> Option<Duration> {
        let now = Instant::now();
        let mut core = self.lock();
        let timer_wait = self.clock.wait_for(core.wheel.next_expiration(), now);
        let wait = match (timeout, timer_wait) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if wait != Some(Duration::ZERO) {
            let until = wait.and_then(|w| now.checked_add(w)).map_or(u64::MAX, |at| self.tick_ceil(at));
            core.parked_until = Some(until);
        }
        wait
    }

    /// Handshake step 3: fires every due timer; their wakers go to `out`
    /// (in deadline order) for the caller to wake after the lock. `blocked`:
    /// whether `before_park` recorded a wake-up tick to clear.
    pub(crate) fn after_park(&self, out: &mut Vec<Waker>, blocked: bool) {
        let now = Instant::now();
        let now_tick = self.tick_floor(now);
        // Acquire: pairs with the Release of `register` / the store below.
        if !blocked && now_tick < self.next_due.load(Ordering::Acquire) {
            return; // nothing can be due: skip the lock
        }
        let mut late_total_us = 0u64;
        let mut late_max_us = 0u64;
        let mut core = self.lock();
        core.parked_until = None;
        let fired = core.wheel.advance(now_tick, |data| {
            let late_us = lateness_us(now, data.deadline);
            late_total_us = late_total_us.saturating_add(late_us);
            late_max_us = late_max_us.max(late_us);
            out.extend(data.waker.take());
        });
        let next = core.wheel.next_expiration().unwrap_or(u64::MAX);
        // Release: see `register`; under the lock, so inserts cannot race it.
        self.next_due.store(next, Ordering::Release);
        drop(core);
        if fired > 0 {
            self.counters.record_fired(fired as u64, late_total_us, late_max_us);
        }
    }

    /// Runtime shutdown: fires every timer (sleeps complete) and makes later
    /// registrations complete at once.
    pub(crate) fn shutdown(&self, out: &mut Vec<Waker>) {
        let mut core = self.lock();
        core.shutdown = true;
        core.wheel.fire_all(|data| out.extend(data.waker.take()));
    }

    /// Timers filed and not yet fired.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn pending(&self) -> usize {
        self.lock().wheel.pending()
    }

    /// `next_due` and the earliest pending tick (read under the lock), for
    /// the loom model of the fast path.
    #[cfg(loom)]
    pub(crate) fn next_due_and_earliest(&self) -> (u64, Option<u64>) {
        let core = self.lock();
        // Acquire: as in `after_park`.
        (self.next_due.load(Ordering::Acquire), core.wheel.next_expiration())
    }

    /// Holds the wheel's lock (without counting) until the result drops:
    /// lets a test make another thread's acquisition contended.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn hold_lock(&self) -> impl Sized + '_ {
        self.core.lock().unwrap()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn deadlines_round_up_to_the_next_tick() {
        let t = TimeShared::new();
        let o = t.clock.origin;
        assert_eq!(t.tick_ceil(o), 0);
        assert_eq!(t.tick_ceil(o + Duration::from_nanos(1)), 1);
        assert_eq!(t.tick_ceil(o + Duration::from_millis(1)), 1);
        assert_eq!(t.tick_ceil(o + Duration::from_millis(1) + Duration::from_nanos(1)), 2);
        assert_eq!(t.tick_floor(o + Duration::from_micros(1999)), 1);
        // Before the origin: tick 0, no underflow.
        assert_eq!(t.tick_ceil(o.checked_sub(Duration::from_secs(1)).unwrap_or(o)), 0);
    }

    #[test]
    fn far_future_does_not_overflow() {
        let t = TimeShared::new();
        let far = t.clock.origin + Duration::from_secs(60 * 60 * 24 * 365 * 100);
        let tick = t.tick_ceil(far);
        assert!(tick > 3_000_000_000_000, "{tick}");
        let waker = Waker::noop();
        let Registered::Pending { key, .. } = t.register(far, waker) else { panic!("far future elapsed") };
        assert_eq!(t.before_park(Some(Duration::ZERO)), Some(Duration::ZERO));
        let wait = t.before_park(None).expect("a timer bounds the park");
        assert!(wait > Duration::from_secs(60 * 60 * 24), "{wait:?}");
        t.cancel(key);
        assert_eq!(t.pending(), 0);
        assert_eq!(t.before_park(None), None);
    }

    #[test]
    fn past_deadline_is_elapsed_without_filing() {
        let t = TimeShared::new();
        assert!(matches!(t.register(t.clock.origin, Waker::noop()), Registered::Elapsed));
        let past = Instant::now();
        // Let the clock reach the next tick; then the wheel has passed `past`.
        while t.tick_floor(Instant::now()) <= t.tick_ceil(past) {
            std::hint::spin_loop();
        }
        t.after_park(&mut Vec::new(), true);
        assert!(matches!(t.register(past, Waker::noop()), Registered::Elapsed));
        assert_eq!(t.pending(), 0);
    }

    #[test]
    fn earlier_timer_than_the_park_asks_for_unpark() {
        let t = TimeShared::new();
        let late = Instant::now() + Duration::from_secs(100);
        let Registered::Pending { unpark: false, .. } = t.register(late, Waker::noop()) else { panic!() };
        t.before_park(None); // a driver now blocks until `late`
        let soon = Instant::now() + Duration::from_secs(10);
        let Registered::Pending { unpark: true, .. } = t.register(soon, Waker::noop()) else {
            panic!("an earlier timer must unpark the blocked driver")
        };
        let later = Instant::now() + Duration::from_secs(200);
        let Registered::Pending { unpark: false, .. } = t.register(later, Waker::noop()) else { panic!() };
        t.after_park(&mut Vec::new(), true);
        let Registered::Pending { unpark: false, .. } = t.register(soon, Waker::noop()) else {
            panic!("no driver is parked any more")
        };
    }

    #[test]
    fn shutdown_fires_everything_and_later_registrations_elapse() {
        let t = TimeShared::new();
        let far = Instant::now() + Duration::from_secs(100);
        let Registered::Pending { key, .. } = t.register(far, Waker::noop()) else { panic!() };
        let mut out = Vec::new();
        t.shutdown(&mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(t.poll_fired(key, Waker::noop()), Poll::Ready(()));
        assert!(matches!(t.register(far, Waker::noop()), Registered::Elapsed));
    }
}
