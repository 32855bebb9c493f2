//! The stealable LIFO slot (`lifo-steal=on`, `policies/steal_half/lifo_slot.rs`):
//! a thief taking a victim's LIFO task races the owner taking it, the
//! owner displacing it with a newer task, and the shutdown drain. Every
//! task runs (or, at shutdown, is released) exactly once, and the counters
//! say who took it. Plus the pass rule (`steal-passes`), checked on one
//! thread with exact counts: the slot is reached on the last pass only,
//! and never with `lifo-steal=off`.
//!
//! The change that makes it fail: `LifoSlot::take` as a load and a store
//! of null instead of one swap lets owner and thief (or the drain) both
//! get the task (checked: the shutdown-drain model then aborts on the
//! doubly released reference).
//!
//! Bound: 2. Each race is the owner's swap on the slot against the
//! thief's, plus the ring's claim against the owner's push when the owner
//! displaces; one preemption between them shows every order. At CI's
//! bound 3 the models take a few seconds on 2 cores.

use std::sync::Arc;

use loom::thread;

use super::support::{counter, Sched};
use crate::knobs::{Knobs, Victim};
use crate::loom::sync::atomic::Ordering::SeqCst;
use crate::metrics::{Counters, WorkerMetrics};
use crate::policies::steal_half::StealHalf;
use crate::policy::{Origin, Policy, WorkerRef};

fn worker_ref(index: usize, counters: &Counters) -> WorkerRef<'_> {
    // tick 1: not a global-interval tick, so local work comes first.
    WorkerRef { index, counters, tick: 1, is_searching: false }
}

fn knobs(passes: u32, lifo_steal: bool) -> Knobs {
    Knobs { lifo_steal, steal_passes: passes, victim: Victim::Sequential, ..Knobs::default() }
}

/// What worker 0 does while worker 1 steals.
#[derive(Clone, Copy, PartialEq)]
enum Owner {
    /// Runs its queue dry (its slot first).
    Runs,
    /// Spawns a second task first, which displaces the first into its
    /// ring (unless the thief took it already), then runs its queue dry.
    Displaces,
    /// Shuts down: drains its core, then the shared queues are closed.
    ShutsDown,
}

/// Worker 0's running task spawned one task (into worker 0's LIFO slot);
/// worker 1 steals once (one pass, so the slot is in reach) while worker 0
/// does `owner`.
fn race(owner: Owner) {
    loom::model(move || {
        let (policy, mut cores) = <StealHalf>::new(2, &knobs(1, true));
        let policy = Arc::new(policy);
        let mut core1 = cores.pop().unwrap();
        let mut core0 = cores.pop().unwrap();
        let sched = Sched::new();
        let runs = counter();
        let spawned = if owner == Owner::Displaces { 2 } else { 1 };
        for _ in 0..spawned {
            let r = runs.clone();
            drop(sched.spawn(async move {
                r.fetch_add(1, SeqCst);
            }));
        }
        let mut tasks = sched.take_queued().into_iter();
        let c0 = Counters::default();
        policy.push_local(&mut core0, &worker_ref(0, &c0), tasks.next().unwrap(), Origin::Spawn);
        let thief = {
            let policy = policy.clone();
            thread::spawn(move || {
                let c1 = Counters::default();
                if let Some(t) = policy.steal(&mut core1, &worker_ref(1, &c1)) {
                    t.run();
                }
                // Whatever a ring steal moved into the thief's own queue.
                while let Some(t) = policy.next_task(&mut core1, &worker_ref(1, &c1)) {
                    t.run();
                }
                c1.snapshot()
            })
        };
        let mut released = Vec::new();
        match owner {
            Owner::ShutsDown => policy.drain_core(&mut core0, &mut released),
            _ => {
                if let Some(second) = tasks.next() {
                    policy.push_local(&mut core0, &worker_ref(0, &c0), second, Origin::Spawn);
                }
                while let Some(t) = policy.next_task(&mut core0, &worker_ref(0, &c0)) {
                    t.run();
                }
            }
        }
        let t1 = thief.join().unwrap();
        policy.close_shared(&mut released);
        let t0 = c0.snapshot();
        // One steal loop: at most one successful steal, a slot take or not.
        assert!(t1.lifo_steals <= t1.steals && t1.steals <= 1, "thief {t1:?}");
        match owner {
            Owner::Runs => {
                assert_eq!(runs.load(SeqCst), 1, "owner {t0:?} thief {t1:?}");
                // One task, in the slot: exactly one of the two took it there.
                assert_eq!(t0.lifo_hits + t1.lifo_steals, 1, "owner {t0:?} thief {t1:?}");
            }
            Owner::Displaces => assert_eq!(runs.load(SeqCst), 2, "owner {t0:?} thief {t1:?}"),
            Owner::ShutsDown => {
                // Run by the thief or handed out by the drain: never both.
                let ran = runs.load(SeqCst);
                assert_eq!(ran as u64, t1.lifo_steals, "thief {t1:?}");
                assert_eq!(ran + released.len(), 1, "ran {ran}, released {}", released.len());
            }
        }
        drop(released);
        // Panics if a reference is left behind (a task never released).
        sched.finish();
    });
}

#[test]
fn lifo_steal_thief_races_the_owner_taking_its_slot() {
    race(Owner::Runs);
}

#[test]
fn lifo_steal_thief_races_the_owner_displacing_its_slot() {
    race(Owner::Displaces);
}

#[test]
fn lifo_steal_thief_races_the_shutdown_drain() {
    race(Owner::ShutsDown);
}

/// One thread: worker 0 holds a task in its LIFO slot, worker 1 (of 3)
/// runs one steal loop with victims in order 2, 0; returns whether it got
/// the task, worker 1's counters, and worker 0's after it ran its queue.
fn one_steal_loop(passes: u32, lifo_steal: bool) -> (bool, WorkerMetrics, WorkerMetrics) {
    let slot = Arc::new(std::sync::Mutex::new(None));
    let s = slot.clone();
    loom::model(move || {
        let (policy, mut cores) = <StealHalf>::new(3, &knobs(passes, lifo_steal));
        let sched = Sched::new();
        let runs = counter();
        let r = runs.clone();
        drop(sched.spawn(async move {
            r.fetch_add(1, SeqCst);
        }));
        let (c0, c1) = (Counters::default(), Counters::default());
        let task = sched.take_queued().pop().unwrap();
        policy.push_local(&mut cores[0], &worker_ref(0, &c0), task, Origin::Spawn);
        let stolen = policy.steal(&mut cores[1], &worker_ref(1, &c1));
        let got = stolen.is_some();
        if let Some(t) = stolen {
            t.run();
        }
        while let Some(t) = policy.next_task(&mut cores[0], &worker_ref(0, &c0)) {
            t.run();
        }
        assert_eq!(runs.load(SeqCst), 1);
        *s.lock().unwrap() = Some((got, c1.snapshot(), c0.snapshot()));
        sched.finish();
    });
    let result = slot.lock().unwrap().take();
    result.expect("the model ran")
}

#[test]
fn lifo_steal_reaches_the_slot_on_the_last_of_four_passes_only() {
    // Passes 1-3 look at both victims' rings (2 attempts each), pass 4 at
    // worker 2's ring, then worker 0's ring and, being the last, its slot.
    let (got, thief, owner) = one_steal_loop(4, true);
    assert!(got);
    assert_eq!((thief.steal_attempts, thief.steals, thief.tasks_stolen, thief.lifo_steals), (8, 1, 1, 1));
    assert_eq!(owner.lifo_hits, 0);
    // One pass is the last pass.
    let (got, thief, _) = one_steal_loop(1, true);
    assert!(got);
    assert_eq!((thief.steal_attempts, thief.lifo_steals), (2, 1));
}

#[test]
fn lifo_steal_off_never_takes_the_slot() {
    let (got, thief, owner) = one_steal_loop(4, false);
    assert!(!got);
    assert_eq!((thief.steal_attempts, thief.steals, thief.lifo_steals), (8, 0, 0));
    // The owner ran it from its slot.
    assert_eq!(owner.lifo_hits, 1);
}
