//! Every workload of the default suite runs to completion on every
//! scheduler (ours and the references) at 1, 2 and 8 workers, with a tiny
//! duration, and its counts add up.

mod common;

use std::time::Duration;

use common::{opts, rt, run_watched, wl};
use wsbench_workloads::api::{RunOutput, WorkloadInfo};

const WORKER_COUNTS: [usize; 3] = [1, 2, 8];
const DURATION_MS: u64 = 30;
const WARMUP_MS: u64 = 10;
/// Far beyond what any cell needs (well under a second each): only a hang
/// reaches it.
const WATCHDOG: Duration = Duration::from_secs(120);

fn check(sched: &str, workers: usize, info: &WorkloadInfo, out: &RunOutput) {
    let at = format!("{} on {sched} x{workers}", info.name);
    assert!(out.ops > 0, "{at}: nothing completed");
    // Open loop: every sent request finished or failed, and every one is in
    // the histogram. Closed loop: no requests, so `sent` and `failed` are
    // unmeasured (None), and every iteration is in the histogram.
    let failed = if info.open_loop {
        let failed = out.failed.expect("open loop counts failures");
        assert_eq!(out.sent, Some(out.ops + failed), "{at}: sent != completed + failed ({out:?})");
        failed
    } else {
        assert_eq!((out.sent, out.failed), (None, None), "{at}: a benchmark sends no requests");
        0
    };
    assert_eq!(out.latency_ns.len(), out.ops + failed, "{at}");
    // Only deadline and timeout workloads may fail without injected faults
    // (a machine stalled past a deadline or timeout).
    if !matches!(info.name, "timers" | "mixed" | "timeouts") {
        assert_eq!(failed, 0, "{at}: {:?}", out.notes);
    }
    for p in info.params {
        assert!(out.params.iter().any(|(n, _)| n == p.name), "{at}: parameter {} not recorded", p.name);
    }
    if info.open_loop {
        assert!(out.offered_per_s.is_some() && out.params.iter().any(|(n, _)| n == "rate"), "{at}");
        let q = out.queue_wait_ns.as_ref().expect("open loop records queue wait");
        assert_eq!(q.len(), out.ops + failed, "{at}: queue wait entries");
    } else {
        assert!(out.offered_per_s.is_none(), "{at}");
        assert!(out.extras.iter().any(|(n, v)| n == "ns_per_task" && *v > 0.0), "{at}: {:?}", out.extras);
        // The global-queue interval: reported by the policies that have one,
        // absent (not a made-up value) for every other runtime.
        let extra = |name: &str| out.extras.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
        let (lo, hi) = (extra("global_interval_min"), extra("global_interval_max"));
        if matches!(sched, "steal-half" | "steal-one" | "bwos") {
            let (lo, hi) = (lo.expect(&at), hi.expect(&at));
            assert!((2.0..=127.0).contains(&lo) && lo <= hi && hi <= 127.0, "{at}: interval {lo}..{hi}");
        } else {
            assert_eq!((lo, hi), (None, None), "{at}: {:?}", out.extras);
        }
    }
    let names: Vec<_> = out.counters.iter().map(|(n, _)| *n).collect();
    let want: Vec<_> = wsbench_schedulers::metrics::COUNTER_NAMES
        .iter()
        .chain(wsbench_schedulers::metrics::DRIVER_COUNTER_NAMES)
        .copied()
        .collect();
    assert_eq!(names, want, "{at}: counter names");
}

fn every_workload_on(sched: &str) {
    let info = wsbench_workloads::schedulers().into_iter().find(|s| s.name == sched).expect("listed scheduler");
    for workers in WORKER_COUNTS {
        if info.single_worker_only && workers != 1 {
            continue;
        }
        for w in wsbench_workloads::workloads().iter().filter(|w| w.in_default_suite) {
            // The busy benches' background stall is CPU time per step: on
            // an oversubscribed or busy machine its default (10 µs a step)
            // made one steal-half iteration take 8.7 s beside two CPU hogs.
            // The counts checked here do not depend on it.
            let params: &[(&str, &str)] =
                if w.params.iter().any(|p| p.name == "stall-us") { &[("stall-us", "0")] } else { &[] };
            let out =
                run_watched(&rt(sched, workers), &wl(w.name, params, None), &opts(DURATION_MS, WARMUP_MS), WATCHDOG);
            check(sched, workers, w, &out);
        }
    }
}

macro_rules! per_scheduler {
    ($($test:ident => $name:literal,)*) => {
        $( #[test] fn $test() { every_workload_on($name); } )*

        #[test]
        fn the_list_above_is_every_scheduler() {
            let mut listed: Vec<_> = wsbench_workloads::schedulers().iter().map(|s| s.name).collect();
            let mut tested = vec![$($name),*];
            listed.sort_unstable();
            tested.sort_unstable();
            assert_eq!(listed, tested);
        }
    };
}

per_scheduler! {
    global => "global",
    per_worker => "per-worker",
    steal_one => "steal-one",
    steal_half => "steal-half",
    bwos => "bwos",
    current_thread => "current-thread",
    thread_per_core => "thread-per-core",
    tokio => "tokio",
    tokio_current => "tokio-current",
    smol => "smol",
}
