//! Work actually moves: tasks spawned on one worker end up polled by every
//! worker under the stealing policies, and never move under `per-worker`.

mod common;

use std::time::{Duration, Instant};

use common::{build, Latch};
use wsbench_schedulers::{spawn, Builder, SchedulerKind};

const WORKERS: usize = 4;
const TASKS: usize = 4_000;
/// CPU work per task, long enough that one worker cannot drain the queue
/// before the others wake up.
const SPIN: Duration = Duration::from_micros(50);

fn spin(d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

/// A steal-half ring (or BWoS queue) that holds every task of `skewed`: with the default
/// 256 slots most spawns overflow to the inject queue and the other workers
/// take them from there, so whether any batch is stolen from a ring came
/// down to timing (one CI run saw a single one-task steal).
const ROOMY_RING: &str = "8192";

fn skewed(kind: SchedulerKind) -> wsbench_schedulers::metrics::RuntimeMetrics {
    let rt = if matches!(kind, SchedulerKind::StealHalf | SchedulerKind::Bwos) {
        Builder::new(kind).workers(WORKERS).knob("queue-capacity", ROOMY_RING).build().unwrap()
    } else {
        build(kind, WORKERS)
    };
    let latch = Latch::new(TASKS);
    let l = latch.clone();
    // One task on one worker spawns everything: all work starts local.
    rt.spawn(async move {
        for _ in 0..TASKS {
            let l = l.clone();
            spawn(async move {
                spin(SPIN);
                l.count_down();
            });
        }
    });
    latch.wait(Duration::from_secs(60), kind.name());
    rt.metrics()
}

#[test]
fn stealing_policies_spread_skewed_spawns() {
    for kind in [SchedulerKind::StealOne, SchedulerKind::StealHalf, SchedulerKind::Bwos] {
        let m = skewed(kind);
        let t = m.totals();
        assert!(t.steals > 0 && t.tasks_stolen > 0, "{kind}: no steals: {t:?}");
        for (i, w) in m.workers.iter().enumerate() {
            assert!(w.polls > 0, "{kind}: worker {i} polled nothing: {:?}", m.workers);
        }
        if kind == SchedulerKind::StealHalf {
            assert!(t.tasks_stolen > t.steals, "steal-half should move batches: {t:?}");
        }
    }
}

#[test]
fn per_worker_never_steals() {
    let m = skewed(SchedulerKind::PerWorker);
    let t = m.totals();
    assert_eq!((t.steal_attempts, t.steals, t.tasks_stolen), (0, 0, 0), "{t:?}");
    // All spawned tasks stayed with the spawning worker: exactly one worker
    // polled them (the outer task itself went to some inbox).
    let busy = m.workers.iter().filter(|w| w.polls >= TASKS as u64).count();
    assert_eq!(busy, 1, "{:?}", m.workers);
}

#[test]
fn lifo_slot_serves_ping_pong_and_can_be_switched_off() {
    for lifo in ["on", "off"] {
        let rt =
            wsbench_schedulers::Builder::new(SchedulerKind::StealHalf).workers(2).knob("lifo", lifo).build().unwrap();
        rt.block_on(rt.spawn(async {
            for _ in 0..1000 {
                // Spawned from a worker: goes to the LIFO slot when on.
                spawn(async {}).await.unwrap();
            }
        }))
        .unwrap();
        let hits = rt.metrics().totals().lifo_hits;
        if lifo == "on" {
            assert!(hits > 0, "lifo=on: no LIFO hits");
        } else {
            assert_eq!(hits, 0, "lifo=off: LIFO used");
        }
    }
}
