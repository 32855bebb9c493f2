//! `--knob timer=per-worker` through the harness: every workload (the
//! default suite and `http`) on every policy that takes the knob, at 1, 2
//! and 128 workers, with tiny durations; every run healthy, and the
//! driver's counters, `timer_remote_cancels` included, in the CSV.

mod common;

use common::{col, read_csv, scratch, wsbench_in};

const POLICIES: [&str; 5] = ["global", "per-worker", "steal-one", "steal-half", "bwos"];
const WORKERS: [&str; 3] = ["1", "2", "128"];

#[test]
fn every_workload_runs_with_per_worker_timers_at_1_2_and_128_workers() {
    let dir = scratch("timer-knob");
    let workloads = wsbench_workloads::workloads()
        .iter()
        .filter(|w| w.in_default_suite || w.name == "http")
        .map(|w| w.name)
        .collect::<Vec<_>>();
    assert!(workloads.contains(&"timeouts") && workloads.contains(&"http"), "{workloads:?}");
    let (sched, workers, list) = (POLICIES.join(","), WORKERS.join(","), workloads.join(","));
    wsbench_in(
        &dir,
        &[
            "--sched",
            &sched,
            "--workers",
            &workers,
            "--workload",
            &list,
            "--knob",
            "timer=per-worker",
            // The busy benches' stall yields the thread; on a loaded machine
            // `per-worker`'s inbox then waits whole time slices per poll and a
            // busy2 iteration can pass the watchdog (`docs/src/troubleshooting.md`).
            // Without the stall they keep their shape and stay quick.
            "--param",
            "stall-us=0",
            "--duration",
            "20ms",
            "--warmup",
            "5ms",
            "--runs",
            "1",
            "--quiet",
            "--csv",
            "out.csv",
            common::GENEROUS_TIMEOUT[0],
            common::GENEROUS_TIMEOUT[1],
        ],
    )
    .ok();
    let (header, rows) = read_csv(&dir.join("out.csv"));
    assert_eq!(rows.len(), POLICIES.len() * WORKERS.len() * workloads.len(), "one row per cell");
    let mut timers_fired = 0u64;
    for row in &rows {
        let at = format!(
            "{} x{} {}",
            col(&header, row, "scheduler"),
            col(&header, row, "workers"),
            col(&header, row, "workload")
        );
        assert_eq!(col(&header, row, "status"), "ok", "{at}: {}", col(&header, row, "error"));
        assert_eq!(col(&header, row, "knobs"), "timer=per-worker", "{at}");
        for counter in ["timers_fired", "timer_lock_contended", "timer_remote_cancels"] {
            assert!(col(&header, row, counter).parse::<u64>().is_ok(), "{at}: {counter} is not a count");
        }
        if col(&header, row, "workload") == "timers" {
            timers_fired += col(&header, row, "timers_fired").parse::<u64>().unwrap();
        }
    }
    // Every `timers` request sleeps: the worker wheels fired them.
    assert!(timers_fired > 0, "no timer fired in any `timers` run");
}

#[test]
fn the_knob_is_refused_where_it_does_not_apply() {
    let dir = scratch("timer-knob-bad");
    for sched in ["current-thread", "thread-per-core"] {
        wsbench_in(
            &dir,
            &["--sched", sched, "--workers", "1", "--workload", "yield-many", "--knob", "timer=per-worker"],
        )
        .failed()
        .stderr_has(&["`timer`", sched, "steal-half"]);
    }
    wsbench_in(&dir, &["--sched", "steal-half", "--workload", "yield-many", "--knob", "timer=wheel"])
        .failed()
        .stderr_has(&["`wheel`", "shared|per-worker"]);
}
