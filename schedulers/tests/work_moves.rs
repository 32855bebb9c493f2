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

fn skewed_runtime(kind: SchedulerKind) -> wsbench_schedulers::Runtime {
    if matches!(kind, SchedulerKind::StealHalf | SchedulerKind::Bwos) {
        Builder::new(kind).workers(WORKERS).knob("queue-capacity", ROOMY_RING).build().unwrap()
    } else {
        build(kind, WORKERS)
    }
}

/// One round: one task on one worker spawns everything (all work starts
/// local); returns once every task ran.
fn skewed_round(rt: &wsbench_schedulers::Runtime, what: &str) {
    let latch = Latch::new(TASKS);
    let l = latch.clone();
    rt.spawn(async move {
        for _ in 0..TASKS {
            let l = l.clone();
            spawn(async move {
                spin(SPIN);
                l.count_down();
            });
        }
    });
    latch.wait(Duration::from_secs(60), what);
}

fn skewed(kind: SchedulerKind) -> wsbench_schedulers::metrics::RuntimeMetrics {
    let rt = skewed_runtime(kind);
    skewed_round(&rt, kind.name());
    rt.metrics()
}

/// Hang detector of [`skewed_until`].
const SPREAD_LIMIT: Duration = Duration::from_secs(60);

/// Rounds of skewed spawns (counters add up over them) until `moved`
/// holds; a hang detector after [`SPREAD_LIMIT`]. Which workers the kernel
/// runs during a round is its choice: on a loaded machine a worker may
/// not run at all for one round's ~50 ms, never for a minute.
fn skewed_until(kind: SchedulerKind, moved: impl Fn(&wsbench_schedulers::metrics::RuntimeMetrics) -> bool) {
    let rt = skewed_runtime(kind);
    let start = Instant::now();
    loop {
        skewed_round(&rt, kind.name());
        let m = rt.metrics();
        if moved(&m) {
            return;
        }
        assert!(start.elapsed() < SPREAD_LIMIT, "{kind}: work did not move in {SPREAD_LIMIT:?}: {:?}", m.workers);
    }
}

/// Under the stealing policies the spawner's queue is stolen from (by
/// batches under steal-half) and every worker polls some of its tasks.
#[test]
fn stealing_policies_spread_skewed_spawns() {
    for kind in [SchedulerKind::StealOne, SchedulerKind::StealHalf, SchedulerKind::Bwos] {
        skewed_until(kind, |m| {
            let t = m.totals();
            let batches = kind != SchedulerKind::StealHalf || t.tasks_stolen > t.steals;
            t.steals > 0 && t.tasks_stolen > 0 && batches && m.workers.iter().all(|w| w.polls > 0)
        });
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

/// How long the spinning task of [`lifo_task_runs_beside_a_spinning_owner`]
/// spins at most: far above what a nudged peer needs to steal (about a
/// millisecond), and a hang detector for `lifo-steal=on`.
const OWNER_SPIN_LIMIT: Duration = Duration::from_secs(20);
/// How long it spins with `lifo-steal=off`, where nothing can run its LIFO
/// task meanwhile (it is not stealable); not a timing assertion: any
/// length gives the same answer.
const OWNER_SPIN_OFF: Duration = Duration::from_millis(200);

/// tokio issue 4941's pattern: a task spawns one task (into its worker's
/// LIFO slot, no wake-up for it) and then runs for long without yielding.
/// With `lifo-steal=off` the spawned task waits for the spinner to finish;
/// with `lifo-steal=on` an idle peer, nudged by spawns from outside (each
/// wakes it, it runs the spawned no-op, finds nothing local and steals),
/// takes it from the slot and runs it while the spinner still spins.
#[test]
fn lifo_task_runs_beside_a_spinning_owner() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;
    for lifo_steal in ["off", "on"] {
        for kind in [SchedulerKind::StealHalf, SchedulerKind::Bwos] {
            let what = format!("{kind} lifo-steal={lifo_steal}");
            let knobs = [("lifo-steal", lifo_steal), ("steal-passes", "4")];
            let mut b = Builder::new(kind).workers(2);
            for (k, v) in knobs {
                b = b.knob(k, v);
            }
            let rt = b.build().unwrap();
            let (spinning, child_ran) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
            let limit = if lifo_steal == "on" { OWNER_SPIN_LIMIT } else { OWNER_SPIN_OFF };
            let (s, c) = (spinning.clone(), child_ran.clone());
            let owner = rt.spawn(async move {
                let c2 = c.clone();
                let child = spawn(async move { c2.store(true, SeqCst) });
                s.store(true, SeqCst);
                let end = Instant::now() + limit;
                while !c.load(SeqCst) && Instant::now() < end {
                    std::hint::spin_loop();
                }
                let ran_meanwhile = c.load(SeqCst);
                child.await.unwrap();
                ran_meanwhile
            });
            while !spinning.load(SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            while !owner.is_finished() {
                drop(rt.spawn(async {}));
                std::thread::sleep(Duration::from_millis(5));
            }
            let ran_meanwhile = rt.block_on(owner).unwrap();
            let t = rt.metrics().totals();
            if lifo_steal == "on" {
                assert!(ran_meanwhile, "{what}: the spawned task waited for the spinner: {t:?}");
                assert!(t.lifo_steals >= 1 && t.steals >= t.lifo_steals, "{what}: {t:?}");
            } else {
                assert!(!ran_meanwhile, "{what}: an unstealable LIFO task ran beside its owner: {t:?}");
                assert_eq!(t.lifo_steals, 0, "{what}: {t:?}");
            }
        }
    }
}
