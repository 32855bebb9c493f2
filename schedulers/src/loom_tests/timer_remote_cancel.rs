//! `timer=per-worker` (`driver/local.rs`): a timer in worker 0's wheel,
//! touched from another thread while its owner fires it, on the real
//! `WorkerWheels` (wheel, wheel lock, entry lock, message queue):
//!
//! 1. A remote cancel racing the fire: exactly one wins. A cancel that
//!    took effect means no wake ever (counted in `timer_remote_cancels`);
//!    otherwise the fire wakes the waker exactly once (counted in
//!    `timers_fired`). After the owner drains the posted key the wheel is
//!    empty and no entry (a loom `Arc`) leaks.
//! 2. The posted key of a timer that fired meanwhile is stale: a new timer
//!    the owner armed in the freed arena slot is not removed by it.
//! 3. A remote poll (a new waker) racing the fire: either the poll sees
//!    the fire (`Ready`) or the fire wakes the new waker; never neither.
//!
//! The deadlines are real instants and the owner fires with an explicit
//! `now` past them, so every execution of a schedule takes the same
//! branches.
//!
//! Able to fail: deciding the cancel outside the entry lock (reading the
//! state, then marking it) lets the fire slip in between (model 1: a wake
//! after the cancel, or both counters); freeing fired entries without
//! bumping the arena generation makes the stale key remove the new timer
//! (model 2); storing the new waker without re-checking the state under
//! the lock loses the wake (model 3).
//! Bound: `LOOM_MAX_PREEMPTIONS=3`.

use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use loom::sync::Arc;
use loom::thread;

use crate::driver::{TimeShared, WorkerWheels};
use crate::test_util::counting_waker;

const DUE_IN: Duration = Duration::from_millis(2);
const FIRE_AT: Duration = Duration::from_millis(10);

/// `(fired, remote cancels)` summed over the wheels.
fn counters(wheels: &WorkerWheels) -> (u64, u64) {
    let mut out = (0, 0);
    wheels.for_each_counters(|c| {
        out.0 += c.fired.load(loom::sync::atomic::Ordering::Relaxed);
        out.1 += c.remote_cancels.load(loom::sync::atomic::Ordering::Relaxed);
    });
    out
}

#[test]
fn remote_cancel_racing_the_fire_wakes_at_most_once() {
    loom::model(|| {
        let clock = TimeShared::new().clock;
        let wheels = Arc::new(WorkerWheels::new(1));
        let start = Instant::now();
        let (count, waker) = counting_waker();
        let timer = wheels.arm(&clock, 0, start + DUE_IN, &waker).expect("filed");
        drop(waker);
        let canceller = {
            let wheels = wheels.clone();
            thread::spawn(move || wheels.cancel_remote(timer))
        };
        let mut out = Vec::new();
        wheels.fire_due(&clock, 0, start + FIRE_AT, &mut out);
        out.drain(..).for_each(Waker::wake);
        let cancelled = canceller.join().unwrap();
        // The owner drains the posted key, if any.
        wheels.fire_due(&clock, 0, start + FIRE_AT, &mut out);
        assert!(out.is_empty(), "a second fire");
        let woken = count.get();
        assert_eq!(woken, usize::from(!cancelled), "cancel took effect: {cancelled}; woken {woken} times");
        let (fired, remote) = counters(&wheels);
        assert_eq!((fired, remote), if cancelled { (0, 1) } else { (1, 0) }, "cancelled: {cancelled}");
        assert_eq!(wheels.pending(0), 0, "the cancelled entry is still in the wheel");
    });
}

#[test]
fn a_stale_cancel_does_not_remove_a_new_timer_in_the_freed_slot() {
    loom::model(|| {
        let clock = TimeShared::new().clock;
        let wheels = Arc::new(WorkerWheels::new(1));
        let start = Instant::now();
        let first = wheels.arm(&clock, 0, start + DUE_IN, Waker::noop()).expect("filed");
        let canceller = {
            let wheels = wheels.clone();
            thread::spawn(move || wheels.cancel_remote(first))
        };
        let mut out = Vec::new();
        wheels.fire_due(&clock, 0, start + FIRE_AT, &mut out);
        // Reuses the first timer's arena slot when it fired and was freed.
        let second = wheels.arm(&clock, 0, start + FIRE_AT * 2, Waker::noop()).expect("filed");
        canceller.join().unwrap();
        wheels.fire_due(&clock, 0, start + FIRE_AT, &mut out);
        assert_eq!(wheels.pending(0), 1, "the new timer was removed by a stale cancel");
        wheels.fire_due(&clock, 0, start + FIRE_AT * 3, &mut out);
        assert_eq!(WorkerWheels::poll(&second, Waker::noop()), Poll::Ready(()), "the new timer fires");
    });
}

#[test]
fn a_remote_poll_racing_the_fire_is_never_lost() {
    loom::model(|| {
        let clock = TimeShared::new().clock;
        let wheels = Arc::new(WorkerWheels::new(1));
        let start = Instant::now();
        let (old_count, old) = counting_waker();
        let timer = wheels.arm(&clock, 0, start + DUE_IN, &old).expect("filed");
        let (new_count, new) = counting_waker();
        let poller = thread::spawn(move || WorkerWheels::poll(&timer, &new).is_ready());
        let mut out = Vec::new();
        wheels.fire_due(&clock, 0, start + FIRE_AT, &mut out);
        out.drain(..).for_each(Waker::wake);
        let ready = poller.join().unwrap();
        let (old_woken, new_woken) = (old_count.get(), new_count.get());
        assert_eq!(old_woken + new_woken, 1, "one wake in all");
        assert!(ready || new_woken == 1, "the poll registered its waker after the fire took the old one: lost");
    });
}
