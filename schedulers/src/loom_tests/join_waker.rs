//! A JoinHandle polled with one waker and then with a different one (the
//! awaiting task moved, or a `select!` re-polled it from elsewhere) while
//! the task completes on another thread (`raw.rs::can_read_output`: the
//! handle takes the slot back with `unset_join_waker`, stores the new
//! waker, publishes it with `set_join_waker`; `complete` wakes whatever the
//! slot holds when JOIN_WAKER is set).
//!
//! Checked in every interleaving: a handle whose second poll returned
//! `Pending` is woken through the second waker, exactly once, and its
//! next poll is `Ready(7)` (a lost wake-up is a loom deadlock); the first
//! waker is never woken once it was replaced; every waker clone the task
//! took is dropped (no leak, no double drop).
//!
//! Able to fail: with the `will_wake` comparison removed from
//! `can_read_output` (any stored waker treated as the same one, so the
//! replacement is never stored) the completion wakes the first waker only
//! and the model reports the deadlock of the handle waiting on the second.
//! Bound: `LOOM_MAX_PREEMPTIONS=3` explores it in well under a second.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use loom::thread;

use super::support::Sched;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// A waker that counts its wakes and unparks the model's main thread.
struct Flag {
    wakes: AtomicUsize,
    thread: loom::thread::Thread,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, SeqCst);
        self.thread.unpark();
    }
}

fn flag() -> Arc<Flag> {
    Arc::new(Flag { wakes: AtomicUsize::new(0), thread: loom::thread::current() })
}

#[test]
fn join_waker_replaced_while_the_task_completes() {
    loom::model(|| {
        let sched = Sched::new();
        let mut join = sched.spawn(async { 7u32 });
        let runner = {
            let sched = sched.clone();
            thread::spawn(move || sched.run_all())
        };
        let (first, second) = (flag(), flag());
        let (w1, w2) = (Waker::from(first.clone()), Waker::from(second.clone()));
        let mut poll_with = |w: &Waker| Pin::new(&mut join).poll(&mut Context::from_waker(w));
        let mut out = poll_with(&w1);
        if out.is_pending() {
            out = poll_with(&w2);
            if out.is_pending() {
                // Replaced: only the second waker may be woken now.
                while second.wakes.load(SeqCst) == 0 {
                    loom::thread::park();
                }
                out = poll_with(&w2);
                assert!(out.is_ready(), "woken through the second waker but not complete");
                assert_eq!(first.wakes.load(SeqCst), 0, "the replaced waker was woken");
                assert_eq!(second.wakes.load(SeqCst), 1, "the second waker was woken more than once");
            }
        }
        match out {
            Poll::Ready(v) => assert_eq!(v.expect("the task completes"), 7),
            Poll::Pending => unreachable!("every branch above ends ready"),
        }
        runner.join().unwrap();
        drop(join);
        sched.finish();
        drop((w1, w2));
        assert_eq!(Arc::strong_count(&first), 1, "a clone of the first waker leaked");
        assert_eq!(Arc::strong_count(&second), 1, "a clone of the second waker leaked");
    });
}
