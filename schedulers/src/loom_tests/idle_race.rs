//! A focused model of one race in `runtime/idle.rs`, found by the idle
//! models at `LOOM_MAX_PREEMPTIONS=3`: a worker that decided not to sleep
//! (its re-check found work) reads `parked[i] == WOKEN_SEARCHING` on
//! `transition_from_parked`'s lock-free fast path while the notifier that
//! chose it (`worker_to_notify`) has stored that value but not yet added
//! the worker to `searching`. The worker then leaves searching
//! (`transition_from_searching`) before it was ever counted: the assert
//! "leaving searching with no searchers" fires (without the assert, the
//! packed counter would borrow from the `unparked` half).
//!
//! The same ordering exists in `notify_worker` (`WOKEN_TARGETED` stored
//! before `ONE_UNPARKED` is added): a worker can re-park and subtract
//! `ONE_UNPARKED` before the notifier added it.
//!
//! Fixed in the runtime: in both notifiers, do the `state.fetch_add` before the
//! `parked[index].store(WOKEN_*)`, so that whoever sees `WOKEN_*` sees the
//! count too (SeqCst RMW sequenced before the SeqCst store).
//!
//! Bound: 2 preemptions (the worker after registering, so the notifier
//! picks it; the notifier between its store and its add). Failed at 2 before the fix.

use std::sync::Arc;

use loom::thread;

use crate::knobs::SearchingLimit;
use crate::runtime::idle::{Idle, Woken};

/// Worker 0 registers as parked, its re-check finds work so it does not
/// sleep, and it comes back; meanwhile a pusher picks it as the searcher
/// to wake. If it came back as a searcher, it leaves searching once.
#[test]
fn woken_searcher_is_counted_before_it_can_leave() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(2, SearchingLimit::Half));
        let notifier = {
            let idle = idle.clone();
            thread::spawn(move || idle.worker_to_notify())
        };
        idle.transition_to_parked(0, false);
        idle.fence_before_recheck();
        // The re-check found the pushed work: do not sleep.
        if idle.transition_from_parked(0) == Woken::Searching {
            // It found the task: the last searcher leaves searching.
            idle.transition_from_searching();
        }
        notifier.join().unwrap();
    });
}
