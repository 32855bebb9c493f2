//! The steal-half worker state: LIFO slot, ring (capacity 4 under loom) and
//! overflow to the inject queue, with a thief stealing concurrently. Every
//! task runs exactly once; the LIFO task is never stolen.

use std::sync::Arc;

use loom::thread;

use super::support::{counter, Sched};
use crate::knobs::Knobs;
use crate::loom::sync::atomic::Ordering::SeqCst;
use crate::metrics::Counters;
use crate::policies::steal_half::StealHalf;
use crate::policy::{Origin, Policy, WorkerRef};

fn worker_ref(index: usize, counters: &Counters) -> WorkerRef<'_> {
    // tick 1: not a global-interval tick, so local work comes first.
    WorkerRef { index, counters, tick: 1, is_searching: false }
}

/// `spawned` tasks pushed by worker 0 (LIFO, then ring, then overflow)
/// while worker 1 steals once. Bound: 2.
fn model(spawned: usize) {
    loom::model(move || {
        let knobs = Knobs { queue_capacity: crate::knobs::MIN_QUEUE_CAPACITY, ..Knobs::default() };
        let (policy, mut cores) = <StealHalf>::new(2, &knobs);
        let policy = Arc::new(policy);
        let mut core1 = cores.pop().unwrap();
        let mut core0 = cores.pop().unwrap();
        let sched = Sched::new();
        let runs = counter();
        let c0 = Counters::default();
        for _ in 0..spawned {
            let r = runs.clone();
            drop(sched.spawn(async move {
                r.fetch_add(1, SeqCst);
            }));
        }
        // Hand the spawned tasks to worker 0 as if its running task had
        // spawned them: LIFO slot, then ring, then overflow to inject.
        for n in sched.take_queued() {
            policy.push_local(&mut core0, &worker_ref(0, &c0), n, Origin::Spawn);
        }
        let thief = {
            let policy = policy.clone();
            thread::spawn(move || {
                let c1 = Counters::default();
                let stolen = policy.steal(&mut core1, &worker_ref(1, &c1));
                if let Some(t) = stolen {
                    t.run();
                }
                // Run what the steal published into the thief's ring.
                while let Some(t) = policy.next_task(&mut core1, &worker_ref(1, &c1)) {
                    t.run();
                }
                c1.snapshot()
            })
        };
        while let Some(t) = policy.next_task(&mut core0, &worker_ref(0, &c0)) {
            t.run();
        }
        let thief_stats = thief.join().unwrap();
        while let Some(t) = policy.next_task(&mut core0, &worker_ref(0, &c0)) {
            t.run();
        }
        assert_eq!(runs.load(SeqCst), spawned, "thief stats {thief_stats:?}");
        // The newest task sat in worker 0's LIFO slot, which thieves never
        // reach: worker 0 ran it from there, exactly once.
        assert_eq!(c0.snapshot().lifo_hits, 1, "thief stats {thief_stats:?}");
        sched.finish();
    });
}

#[test]
fn lifo_ring_and_steal_three_tasks() {
    model(3);
}

/// One in the LIFO slot, a full ring of 4, one overflow batch. Bound: 2.
#[test]
fn lifo_overflow_and_steal_six_tasks() {
    model(6);
}
