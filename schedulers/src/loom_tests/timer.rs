//! The timer's two lock-free-adjacent protocols (`driver/timer.rs`), on
//! the real `TimeShared` (wheel, lock, `next_due`, `parked_until`):
//!
//! 1. The next-due fast path: a poll that does not block skips the wheel's
//!    lock while the clock is before `next_due`, so `next_due` must stay a
//!    lower bound on the earliest pending tick however inserts (`register`:
//!    `fetch_min` under the lock) and advances (`after_park`: a store of the
//!    recomputed bound under the lock) interleave. Checked: after the
//!    registration of a timer races a blocking park's advance, the bound
//!    is at or below the timer's tick.
//! 2. The parked-until handshake: a timer filed while a driver prepares to
//!    block must either be seen by the park (its wait ends by the new
//!    deadline) or make `register` ask for an unpark. Checked for a 30 min
//!    timer filed while the driver computes a 1 h wait.
//!
//! The clock is real: the models' deadlines are 30 and 60 minutes ahead,
//! so no outcome depends on when an execution runs and every loom
//! execution of one schedule takes the same branches.
//!
//! Able to fail: storing the recomputed bound after `after_park` drops the
//! lock lets a racing insert's lower `next_due` be overwritten (model 1:
//! the bound ends above the pending timer, which non-blocking polls would
//! then never fire);
//! recording `parked_until` in a second lock section after computing the
//! wait lets a registration fall between them (model 2: the driver would
//! sleep an hour past a 30 minute timer with no unpark).
//! Bound: `LOOM_MAX_PREEMPTIONS=3`.

use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};

use loom::thread;

use crate::driver::{Registered, TimeShared};

const HOUR: Duration = Duration::from_secs(3600);

#[test]
fn next_due_stays_a_lower_bound_when_an_insert_races_an_advance() {
    loom::model(|| {
        let time = Arc::new(TimeShared::new());
        let deadline = Instant::now() + HOUR;
        let filer = {
            let time = time.clone();
            thread::spawn(move || {
                let r = time.register(deadline, Waker::noop());
                assert!(matches!(r, Registered::Pending { .. }), "a timer an hour ahead is filed");
            })
        };
        let mut fired = Vec::new();
        time.after_park(&mut fired, true);
        filer.join().unwrap();
        assert!(fired.is_empty(), "a timer an hour ahead fired");
        let (next_due, earliest) = time.next_due_and_earliest();
        assert!(earliest.is_some(), "the timer is pending");
        // (The wheel's next expiration is the start of the timer's slot,
        // at or below its tick; either is a valid bound.)
        let tick = time.tick_ceil(deadline);
        assert!(
            next_due <= tick,
            "next_due {next_due} is above the pending timer's tick {tick}: the fast path would skip it"
        );
    });
}

#[test]
fn a_timer_filed_during_a_park_shortens_it_or_unparks_it() {
    loom::model(|| {
        let time = Arc::new(TimeShared::new());
        let now = Instant::now();
        assert!(matches!(time.register(now + HOUR, Waker::noop()), Registered::Pending { .. }));
        let filer = {
            let time = time.clone();
            thread::spawn(move || match time.register(now + HOUR / 2, Waker::noop()) {
                Registered::Pending { unpark, .. } => unpark,
                Registered::Elapsed => panic!("a 30 min timer elapsed"),
            })
        };
        let wait = time.before_park(None).expect("a timer is pending: the park is bounded");
        let unparked = filer.join().unwrap();
        assert!(
            unparked || wait < HOUR * 3 / 4,
            "the driver would sleep {wait:?} past a 30 min timer filed during its park, with no unpark"
        );
    });
}
