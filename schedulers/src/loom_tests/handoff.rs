//! The driver hand-off between parking workers (`runtime/park.rs`): a
//! worker with nothing to run takes the driver if nobody holds it
//! (`try_lock`) and blocks in it, else blocks on its own condvar; an
//! `Unparker` wakes a driver-parked worker through the driver's unpark
//! handle. The real driver blocks the OS thread in `epoll_wait`, which
//! loom cannot run, so the models use a stand-in behind the same
//! `ParkDriver` / `UnparkDriver` seam with the two properties the real
//! one has: an unpark that arrives before the park blocks is kept (mio's
//! eventfd stays readable) and consumed by the next park or poll, and an
//! I/O event is dispatched (here: becomes one unit of work) by whichever
//! worker parks in or polls the driver next.
//!
//! The workers run the real `Idle` protocol and `Parker`, reduced to one
//! unit of work as in `idle.rs`. Checked in every interleaving: an I/O
//! event that arrives while the workers park, hand the driver over or
//! sleep on condvars is dispatched and its work taken; the worker that
//! takes it stops the other, wherever that one sleeps (a lost wake-up is a
//! loom deadlock).
//!
//! Able to fail: with `Unparker::unpark` doing nothing for a worker parked
//! on the driver (the `PARKED_DRIVER` arm emptied), or with a stand-in
//! whose unpark handle only notifies (keeps no pending unpark, so a wake
//! that comes before the park blocks is lost), loom reports the deadlock
//! of a worker asleep in the driver.
//! Bound: `LOOM_MAX_PREEMPTIONS=3`.

use std::sync::Arc;
use std::time::Duration;

use loom::thread;

use crate::knobs::SearchingLimit;
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use crate::loom::sync::{Condvar, Mutex};
use crate::runtime::idle::{Idle, Woken};
use crate::runtime::park::{pair_with_driver, ParkDriver, Parked, Parker, UnparkDriver, Unparker};

#[derive(Default)]
struct Pending {
    /// An unpark not yet consumed (the eventfd's readiness).
    unparked: bool,
    /// I/O events not yet dispatched.
    events: usize,
}

struct StandInShared {
    pending: Mutex<Pending>,
    cv: Condvar,
    /// Where dispatched events go (the world's work counter).
    work: Arc<AtomicUsize>,
}

/// The driver stand-in, held under the world's driver mutex.
struct StandIn(Arc<StandInShared>);

impl ParkDriver for StandIn {
    fn park(&mut self, timeout: Option<Duration>) {
        let s = &*self.0;
        let mut p = s.pending.lock().unwrap();
        if timeout != Some(Duration::ZERO) {
            while !p.unparked && p.events == 0 {
                p = s.cv.wait(p).unwrap();
            }
        }
        p.unparked = false;
        let events = std::mem::take(&mut p.events);
        drop(p);
        s.work.fetch_add(events, SeqCst);
    }
}

/// The stand-in's unpark handle (what `driver::Handle` is to the driver).
struct StandInHandle(Arc<StandInShared>);

impl UnparkDriver for StandInHandle {
    fn unpark(&self) {
        self.0.pending.lock().unwrap().unparked = true;
        self.0.cv.notify_one();
    }
}

impl StandInHandle {
    /// An I/O source became ready.
    fn event(&self) {
        self.0.pending.lock().unwrap().events += 1;
        self.0.cv.notify_one();
    }
}

struct World {
    idle: Idle,
    work: Arc<AtomicUsize>,
    done: AtomicBool,
    unparkers: Vec<Unparker>,
    driver: Mutex<StandIn>,
}

impl World {
    fn take(&self) -> bool {
        let mut n = self.work.load(SeqCst);
        while n > 0 {
            match self.work.compare_exchange(n, n - 1, SeqCst, SeqCst) {
                Ok(_) => return true,
                Err(actual) => n = actual,
            }
        }
        false
    }
}

/// The worker loop reduced to the protocol (as in `idle.rs`), parking
/// through the driver hand-off. Returns whether it ever parked on the
/// driver.
fn worker(world: Arc<World>, index: usize, parker: Parker) -> bool {
    let mut searching = false;
    let mut used_driver = false;
    loop {
        if world.done.load(SeqCst) {
            return used_driver;
        }
        if !searching {
            searching = world.idle.transition_to_searching();
        }
        if world.take() {
            if searching {
                world.idle.transition_from_searching();
            }
            world.done.store(true, SeqCst);
            for u in &world.unparkers {
                u.unpark();
            }
            return used_driver;
        }
        world.idle.transition_to_parked(index, searching);
        world.idle.fence_before_recheck();
        if world.work.load(SeqCst) == 0 && !world.done.load(SeqCst) {
            used_driver |= parker.park(&world.driver, None) == Parked::Driver;
        }
        searching = world.idle.transition_from_parked(index) == Woken::Searching;
    }
}

/// Two workers park while an I/O event arrives at the driver; the worker
/// that takes its work stops the other.
#[test]
fn io_event_reaches_a_worker_through_the_driver_hand_off() {
    loom::model(|| {
        let work = Arc::new(AtomicUsize::new(0));
        let shared =
            Arc::new(StandInShared { pending: Mutex::new(Pending::default()), cv: Condvar::new(), work: work.clone() });
        let (p0, u0) = pair_with_driver(Box::new(StandInHandle(shared.clone())));
        let (p1, u1) = pair_with_driver(Box::new(StandInHandle(shared.clone())));
        let world = Arc::new(World {
            idle: Idle::new(2, SearchingLimit::Half),
            work,
            done: AtomicBool::new(false),
            unparkers: vec![u0, u1],
            driver: Mutex::new(StandIn(shared.clone())),
        });
        let w0 = {
            let w = world.clone();
            thread::spawn(move || worker(w, 0, p0))
        };
        let w1 = {
            let w = world.clone();
            thread::spawn(move || worker(w, 1, p1))
        };
        StandInHandle(shared).event();
        let used = [w0.join().unwrap(), w1.join().unwrap()];
        assert!(world.done.load(SeqCst));
        assert_eq!(world.work.load(SeqCst), 0, "the event's work was taken once");
        // Nobody pushed to a queue: the work came through the driver, so a
        // worker parked on it (and dispatched the event there).
        assert!(used.iter().any(|&u| u), "no worker parked on the driver");
    });
}
