//! `spawn-storm` and `blocking-storm` on every runtime row at 1, 2 and 128
//! workers: every task (closure) spawned is counted as completed, and our
//! runtimes' own counters agree with the workload's count; the lock
//! contention each reports (inject queue, blocking pool) is there exactly
//! where the runtime counts it; a bad `spawners` is refused.

mod common;

use std::time::Duration;

use common::{opts, rt, run_watched, wl};
use wsbench_workloads::api::RunOutput;

const DURATION_MS: u64 = 30;
const WARMUP_MS: u64 = 10;
/// Far beyond what a cell needs: only a hang reaches it.
const WATCHDOG: Duration = Duration::from_secs(120);
/// Tasks a spawner spawns between clock reads (the workload's `BATCH`):
/// every count is a whole number of batches.
const BATCH: u64 = 64;
/// The rows whose runtime counts inject-lock contention: ours with a
/// locked inject queue (`global` and `steal-one` use crossbeam's lock-free
/// injector; the references report none).
const COUNTS_INJECT_LOCK: &[&str] = &["per-worker", "steal-half", "current-thread", "thread-per-core", "bwos"];

fn extra(out: &RunOutput, name: &str) -> Option<f64> {
    out.extras.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

fn counter(out: &RunOutput, name: &str) -> Option<u64> {
    out.counters.iter().find(|(n, _)| *n == name).and_then(|(_, v)| *v)
}

/// The two storms: tasks through the remote spawn, closures through
/// `spawn_blocking`.
const STORMS: [&str; 2] = ["spawn-storm", "blocking-storm"];

fn check(workload: &str, sched: &str, is_reference: bool, workers: usize, spawners: u64, out: &RunOutput) {
    let at = format!("{workload} spawners={spawners} on {sched} x{workers}");
    let ops = out.ops;
    assert!(ops >= spawners * BATCH, "{at}: each spawner spawns at least one batch, got {ops}");
    assert_eq!(ops % BATCH, 0, "{at}: {ops} is not whole batches");
    assert_eq!(extra(out, "tasks_spawned"), Some(ops as f64), "{at}: {:?}", out.extras);
    assert_eq!(extra(out, "tasks_completed"), Some(ops as f64), "{at}: {:?}", out.extras);
    assert_eq!(extra(out, "spawners"), Some(spawners as f64), "{at}");
    // One latency entry per batch.
    assert_eq!(out.latency_ns.len(), ops / BATCH, "{at}");
    let ns = extra(out, "ns_per_task").expect(&at);
    let want = out.elapsed.as_nanos() as f64 * spawners as f64 / ops as f64;
    assert!((ns - want).abs() <= 1e-6 * want, "{at}: ns_per_task {ns}, window x spawners / tasks {want}");
    assert!(extra(out, "spawn_call_ns").expect(&at) > 0.0, "{at}");
    assert!(out.params.contains(&("spawners".into(), spawners.to_string())), "{at}: {:?}", out.params);
    if workload == "blocking-storm" {
        check_blocking(&at, is_reference, ops, out);
        return;
    }
    if !is_reference {
        // Our runtimes count every spawn from outside, when it happens
        // (before the window closes); a poll is counted after the task
        // finished, so a worker's last (or the warm-up's) poll may fall on
        // the other side of the window edge: at most one per worker.
        assert_eq!(counter(out, "spawns_remote"), Some(ops), "{at}");
        let polls = counter(out, "polls").expect(&at);
        assert!(polls.abs_diff(ops) <= workers as u64, "{at}: {polls} polls for {ops} tasks");
    }
    let contended = extra(out, "inject_lock_contended");
    if COUNTS_INJECT_LOCK.contains(&sched) {
        let c = contended.unwrap_or_else(|| panic!("{at}: no inject_lock_contended in {:?}", out.extras));
        assert!(c <= 2.0 * ops as f64 + 1.0, "{at}: {c} contended acquisitions for {ops} tasks");
    } else {
        assert_eq!(contended, None, "{at}: not counted by this runtime, so absent");
    }
}

/// `blocking-storm`: a closure is no task of the workers (no remote
/// spawn, no poll on our runtimes); every one of our policies counts its
/// blocking pool's lock contention, the references count none.
fn check_blocking(at: &str, is_reference: bool, ops: u64, out: &RunOutput) {
    let contended = extra(out, "blocking_lock_contended");
    assert_eq!(extra(out, "inject_lock_contended"), None, "{at}: not this storm's lock");
    if is_reference {
        assert_eq!(contended, None, "{at}: not counted by this runtime, so absent");
        return;
    }
    assert_eq!(counter(out, "spawns_remote"), Some(0), "{at}: spawn_blocking is not a task spawn");
    assert_eq!(counter(out, "polls"), Some(0), "{at}: no task ran on a worker");
    // Each call locks the pool once; each job run, once after it; each
    // thread started in the window, once before its first job.
    let started = counter(out, "blocking_threads_spawned").expect(at);
    let c = contended.unwrap_or_else(|| panic!("{at}: no blocking_lock_contended in {:?}", out.extras));
    assert!(c <= (2 * ops + started) as f64, "{at}: {c} contended acquisitions for {ops} calls, {started} threads");
}

fn storm_on_every_row(workers: usize, spawners: u64) {
    let s = spawners.to_string();
    for info in wsbench_workloads::schedulers() {
        if info.single_worker_only && workers != 1 {
            continue;
        }
        for workload in STORMS {
            let w = wl(workload, &[("spawners", &s)], None);
            let out = run_watched(&rt(info.name, workers), &w, &opts(DURATION_MS, WARMUP_MS), WATCHDOG);
            check(workload, info.name, info.is_reference, workers, spawners, &out);
        }
    }
}

#[test]
fn every_row_at_1_worker() {
    storm_on_every_row(1, 2);
}

#[test]
fn every_row_at_2_workers() {
    storm_on_every_row(2, 3);
}

#[test]
fn every_row_at_128_workers() {
    storm_on_every_row(128, 8);
}

/// The default is 8 spawners, recorded as used.
#[test]
fn spawners_default_to_8() {
    for workload in STORMS {
        let out = run_watched(&rt("steal-half", 2), &wl(workload, &[], None), &opts(DURATION_MS, 0), WATCHDOG);
        check(workload, "steal-half", false, 2, 8, &out);
    }
}

#[test]
fn a_bad_spawner_count_is_refused_naming_the_value_and_the_range() {
    for workload in STORMS {
        for bad in ["0", "1025", "-1", "eight", "2.5"] {
            let e = wsbench_workloads::validate(&rt("steal-half", 2), &wl(workload, &[("spawners", bad)], None))
                .expect_err(bad)
                .to_string();
            for part in [&format!("`{bad}`"), "spawners", workload, "1..=1024"] {
                assert!(e.contains(part), "`{part}` missing from: {e}");
            }
        }
    }
}
