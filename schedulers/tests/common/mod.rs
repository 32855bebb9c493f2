//! Helpers shared by the runtime integration tests.
#![allow(dead_code)] // reason: each test binary uses a subset

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use wsbench_schedulers::{Builder, Runtime, SchedulerKind};

/// The policies that take more than one worker.
pub const MULTI: [SchedulerKind; 6] = [
    SchedulerKind::Global,
    SchedulerKind::PerWorker,
    SchedulerKind::StealOne,
    SchedulerKind::StealHalf,
    SchedulerKind::ThreadPerCore,
    SchedulerKind::Bwos,
];

/// Every policy with each worker count in `counts` (current-thread: 1).
pub fn configs(counts: &[usize]) -> Vec<(SchedulerKind, usize)> {
    let mut v = vec![(SchedulerKind::CurrentThread, 1)];
    for k in MULTI {
        for &w in counts {
            v.push((k, w));
        }
    }
    v
}

/// A runtime whose tasks run without anyone in `block_on` (tests that
/// wait on a [`Latch`] from the test thread): `current-thread` gets its
/// driver thread. [`build_native`] is the `block_on`-driven one.
pub fn build(kind: SchedulerKind, workers: usize) -> Runtime {
    Builder::new(kind)
        .workers(workers)
        .driver_thread(true)
        .build()
        .unwrap_or_else(|e| panic!("building {kind} x{workers}: {e}"))
}

/// [`build`] with knob settings.
pub fn build_knobs(kind: SchedulerKind, workers: usize, knobs: &[(&str, &str)]) -> Runtime {
    let mut b = Builder::new(kind).workers(workers).driver_thread(true);
    for (k, v) in knobs {
        b = b.knob(*k, *v);
    }
    b.build().unwrap_or_else(|e| panic!("building {kind} x{workers} {knobs:?}: {e}"))
}

/// `current-thread` as built by default: driven by `block_on` on the
/// calling thread, no thread of its own.
pub fn build_native() -> Runtime {
    Builder::new(SchedulerKind::CurrentThread).build().expect("building current-thread")
}

/// A countdown that a test thread can wait on without polling.
#[derive(Clone)]
pub struct Latch(Arc<(Mutex<usize>, Condvar)>);

impl Latch {
    pub fn new(n: usize) -> Latch {
        Latch(Arc::new((Mutex::new(n), Condvar::new())))
    }

    pub fn count_down(&self) {
        let mut left = self.0 .0.lock().unwrap();
        *left -= 1;
        if *left == 0 {
            self.0 .1.notify_all();
        }
    }

    /// Waits until zero; panics with the remaining count after `limit`
    /// (a hang detector, not a timing assertion).
    pub fn wait(&self, limit: Duration, what: &str) {
        let left = self.0 .0.lock().unwrap();
        let (left, res) = self.0 .1.wait_timeout_while(left, limit, |l| *l > 0).unwrap();
        assert!(!res.timed_out(), "{what}: still {} outstanding after {limit:?}", *left);
    }
}

/// Per-task run flags: each index must be set exactly once.
pub struct Flags(Vec<AtomicUsize>);

impl Flags {
    pub fn new(n: usize) -> Arc<Flags> {
        Arc::new(Flags((0..n).map(|_| AtomicUsize::new(0)).collect()))
    }

    pub fn hit(&self, i: usize) {
        let prev = self.0[i].fetch_add(1, Ordering::Relaxed);
        assert_eq!(prev, 0, "task {i} ran twice");
    }

    pub fn assert_all_once(&self, what: &str) {
        let missing: Vec<usize> =
            (0..self.0.len()).filter(|&i| self.0[i].load(Ordering::Relaxed) != 1).take(10).collect();
        assert!(missing.is_empty(), "{what}: tasks not run exactly once (first few): {missing:?}");
    }
}

/// Counts drops of the value it is embedded in.
pub struct DropCount(pub Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// The longest lead [`with_lead`] tries: a hang detector (a test's setup
/// takes microseconds to milliseconds).
pub const LEAD_LIMIT: Duration = Duration::from_secs(10);

/// Runs `round(lead)` with a lead (how far ahead of now its timers are
/// due) starting at `first` and growing 4x, until a round returns `Some`.
/// A round returns `None` when its clock shows that its setup (arming,
/// polling, cancelling) did not finish before the deadlines it set: then
/// what it would assert ("pending", "cancelled before it fired") is not
/// owed, and a machine that preempted the setup past a deadline gets a
/// longer lead instead of a false failure. A round must still fail on
/// anything that is wrong at any lead (a sleep ready before its deadline).
pub fn with_lead<T>(what: &str, first: Duration, mut round: impl FnMut(Duration) -> Option<T>) -> T {
    let mut lead = first;
    loop {
        if let Some(out) = round(lead) {
            return out;
        }
        assert!(lead < LEAD_LIMIT, "{what}: the setup overran even a {lead:?} lead");
        eprintln!("{what}: the setup overran a {lead:?} lead; again with {:?}", lead * 4);
        lead *= 4;
    }
}
