//! The idle / searching / park protocol: no lost wake-up when work arrives
//! as workers park. Workers use the real `Idle` and `Parker` (condvar
//! path); the "queue" is a counter of pushed-but-untaken items.

use std::sync::Arc;

use loom::thread;

use crate::knobs::SearchingLimit;
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use crate::runtime::idle::{Idle, Woken};
use crate::runtime::park::{pair, Parker, Unparker};

struct World {
    idle: Idle,
    work: AtomicUsize,
    done: AtomicBool,
    unparkers: Vec<Unparker>,
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

    fn push(&self) {
        self.work.fetch_add(1, SeqCst);
        if let Some(i) = self.idle.worker_to_notify() {
            self.unparkers[i].unpark();
        }
    }
}

/// The worker loop reduced to the protocol: look, search, park, re-check.
fn worker(world: Arc<World>, index: usize, parker: Parker) {
    let mut searching = false;
    loop {
        if world.done.load(SeqCst) {
            return;
        }
        if !searching {
            searching = world.idle.transition_to_searching();
        }
        if world.take() {
            if searching && world.idle.transition_from_searching() {
                // The last searcher to find work wakes another.
                if let Some(i) = world.idle.worker_to_notify() {
                    world.unparkers[i].unpark();
                }
            }
            // The one item is consumed: release the other worker.
            world.done.store(true, SeqCst);
            for u in &world.unparkers {
                u.unpark();
            }
            return;
        }
        world.idle.transition_to_parked(index, searching);
        world.idle.fence_before_recheck();
        if world.work.load(SeqCst) == 0 && !world.done.load(SeqCst) {
            parker.park_without_driver();
        }
        searching = world.idle.transition_from_parked(index) == Woken::Searching;
    }
}

fn model(limit: SearchingLimit) {
    loom::model(move || {
        let (p0, u0) = pair(None);
        let (p1, u1) = pair(None);
        let world = Arc::new(World {
            idle: Idle::new(2, limit),
            work: AtomicUsize::new(0),
            done: AtomicBool::new(false),
            unparkers: vec![u0, u1],
        });
        let w0 = {
            let w = world.clone();
            thread::spawn(move || worker(w, 0, p0))
        };
        let w1 = {
            let w = world.clone();
            thread::spawn(move || worker(w, 1, p1))
        };
        // If the push's wake-up were lost, both workers would sleep forever
        // and loom would report a deadlock.
        world.push();
        w0.join().unwrap();
        w1.join().unwrap();
        assert_eq!(world.work.load(SeqCst), 0);
    });
}

/// Two workers, one remote push, tokio's searching throttle. Bound: 2.
#[test]
fn no_lost_wakeup_with_searching_limit() {
    model(SearchingLimit::Half);
}

/// The same without the throttle. Bound: 2.
#[test]
fn no_lost_wakeup_without_searching_limit() {
    model(SearchingLimit::None);
}
