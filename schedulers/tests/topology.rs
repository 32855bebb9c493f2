//! Topology-aware stealing on a running runtime (issue 13 item 3): with a
//! worker topology every successful steal is counted once, within the
//! thief's L3 group or across, so the two group counters add up to
//! `steals`; without one they are not counted (and the runtime says so);
//! a topology for another worker count is refused.

mod common;

use std::time::{Duration, Instant};

use common::Latch;
use wsbench_schedulers::metrics::RuntimeMetrics;
use wsbench_schedulers::topology::{Imposed, WorkerTopology};
use wsbench_schedulers::{Builder, Runtime, SchedulerKind};

/// Hang detector only (never a timing assertion).
const LIMIT: Duration = Duration::from_secs(20);
/// Children per round and the CPU each burns: long enough that idle
/// workers find the spawner's queue worth stealing from.
const CHILDREN: usize = 64;
const CHILD_SPIN: Duration = Duration::from_micros(50);
const STEALING: [SchedulerKind; 3] = [SchedulerKind::StealOne, SchedulerKind::StealHalf, SchedulerKind::Bwos];

fn two_by_two() -> WorkerTopology {
    WorkerTopology::imposed(Imposed { groups: 2, size: 2 })
}

fn build(kind: SchedulerKind, victim: &str, topology: Option<WorkerTopology>) -> Runtime {
    let mut b = Builder::new(kind).workers(4).knob("victim", victim);
    if let Some(t) = topology {
        b = b.topology(t);
    }
    b.build().unwrap_or_else(|e| panic!("{kind} victim={victim}: {e}"))
}

/// Rounds of one task spawning busy children until some were stolen
/// (bounded by `LIMIT`); returns the metrics once every child has run.
fn steal_some(rt: &Runtime, what: &str) -> RuntimeMetrics {
    let start = Instant::now();
    loop {
        let latch = Latch::new(CHILDREN);
        let l = latch.clone();
        drop(rt.spawn(async move {
            for _ in 0..CHILDREN {
                let l = l.clone();
                drop(wsbench_schedulers::spawn(async move {
                    let t = Instant::now();
                    while t.elapsed() < CHILD_SPIN {
                        std::hint::spin_loop();
                    }
                    l.count_down();
                }));
            }
        }));
        latch.wait(LIMIT, what);
        let m = rt.metrics();
        if m.totals().steals > 0 {
            return m;
        }
        assert!(start.elapsed() < LIMIT, "{what}: no steal in {LIMIT:?}");
    }
}

#[test]
fn with_a_topology_group_steals_add_up_to_steals() {
    for kind in STEALING {
        for victim in ["random", "topology"] {
            let what = format!("{kind} victim={victim} 2x2");
            let rt = build(kind, victim, Some(two_by_two()));
            let m = steal_some(&rt, &what);
            let t = m.totals();
            assert!(m.steal_groups_counted, "{what}");
            assert_eq!(t.steals_local_group + t.steals_remote_group, t.steals, "{what}: {t:?}");
            rt.shutdown_timeout(LIMIT);
        }
    }
}

#[test]
fn without_a_topology_groups_are_not_counted() {
    for kind in STEALING {
        let rt = build(kind, "topology", None);
        let m = steal_some(&rt, &format!("{kind} without topology"));
        assert!(!m.steal_groups_counted, "{kind}");
        assert_eq!((m.totals().steals_local_group, m.totals().steals_remote_group), (0, 0), "{kind}");
        rt.shutdown_timeout(LIMIT);
    }
    // Non-stealing policies never count groups, topology or not.
    let rt = Builder::new(SchedulerKind::Global).workers(4).topology(two_by_two()).build().unwrap();
    assert!(!rt.metrics().steal_groups_counted);
    rt.shutdown_timeout(LIMIT);
}

#[test]
fn a_topology_for_another_worker_count_is_refused() {
    let e = Builder::new(SchedulerKind::StealHalf).workers(8).topology(two_by_two()).build().unwrap_err().to_string();
    assert!(e.contains("covers 4 workers") && e.contains("has 8"), "{e}");
}
