//! The wake-up protocol of a `block_on` that drives `current-thread`
//! (`runtime/block_on.rs`, `MainFlag`): a wake from another thread must
//! reach the driving thread however it interleaves with that thread's
//! check-then-park, and the poll after the last wake must see what the
//! waker wrote before waking.
//!
//! The driving thread runs the worker loop's steps for its `block_on`
//! future (`worker.rs`, `run` with a `Main`): poll when the flag is set;
//! with no task to run, park on the core's parker unless the flag is set.
//! The future is ready once it sees both of the waker thread's two events
//! (each written, then woken), so wakes that coalesce are covered too.
//! A lost wake-up shows as a deadlock (loom reports it); a poll that
//! misses an event written before its wake parks for good as well.
//!
//! Bound: 3 preemptions (the waker between its write and its wake, or
//! between its flag swap and its unpark; the driving thread between its
//! check and its park). Shown able to fail: with `MainFlag::set`'s
//! Release weakened to Relaxed, loom finds the poll after the last wake
//! reading a stale event count and the thread parking forever (deadlock).

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

use crate::runtime::block_on::MainFlag;
use crate::runtime::park;

/// Events the waker thread writes, each followed by a wake.
const EVENTS: usize = 2;

#[test]
fn a_wake_from_another_thread_reaches_the_block_on_thread() {
    loom::model(|| {
        let (parker, unparker) = park::pair(None);
        // Starts set, as in `block_on_driving`: the first poll is due.
        let flag = Arc::new(MainFlag::new(true));
        let events = Arc::new(AtomicUsize::new(0));
        let waker = {
            let (flag, events) = (flag.clone(), events.clone());
            thread::spawn(move || {
                for _ in 0..EVENTS {
                    // Relaxed: published by the flag's Release swap.
                    events.fetch_add(1, Ordering::Relaxed);
                    if flag.set() {
                        unparker.unpark();
                    }
                }
            })
        };
        let mut polls = 0;
        loop {
            if flag.is_woken() && flag.take_wake() {
                polls += 1;
                // The future: ready once it sees every event (Relaxed: the
                // Acquire of `take_wake` orders it after the writes).
                if events.load(Ordering::Relaxed) == EVENTS {
                    break;
                }
            }
            if flag.is_woken() {
                continue;
            }
            parker.park_without_driver();
        }
        assert!((1..=EVENTS + 1).contains(&polls), "{polls} polls for {EVENTS} wakes and the first poll");
        waker.join().unwrap();
    });
}
