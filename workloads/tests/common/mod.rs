//! Helpers shared by the integration tests.
#![allow(dead_code, unused_macros)] // each test binary uses a different subset

use std::time::Duration;

use wsbench_workloads::api::{RunOptions, RunOutput, RuntimeSpec, WorkloadSpec};

pub const SEED: u64 = 0x5EED;

pub fn rt(sched: &str, workers: usize) -> RuntimeSpec {
    RuntimeSpec::parse(sched, workers).unwrap_or_else(|e| panic!("{sched} x{workers}: {e}"))
}

/// `sched` at `workers` with `--knob` pairs, parsed as the harness does.
pub fn rt_knobs(sched: &str, workers: usize, knobs: &[(&str, &str)]) -> Result<RuntimeSpec, wsbench_workloads::Error> {
    let knobs = wsbench_schedulers::knobs::KnobSet::parse(knobs)?;
    RuntimeSpec::new(wsbench_workloads::api::Sched::parse(sched)?, workers, knobs)
}

pub fn wl(name: &str, params: &[(&str, &str)], rate: Option<f64>) -> WorkloadSpec {
    WorkloadSpec {
        name: name.into(),
        params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        rate_per_s: rate,
    }
}

pub fn opts(duration_ms: u64, warmup_ms: u64) -> RunOptions {
    RunOptions { duration: Duration::from_millis(duration_ms), warmup: Duration::from_millis(warmup_ms), seed: SEED }
}

/// Runs; any error fails the test with the error's message. (Returns an
/// `Option` so tests read the same whether or not a scheduler may be
/// skipped; every listed scheduler is built into this crate.)
pub fn run(rt: &RuntimeSpec, w: &WorkloadSpec, o: &RunOptions) -> Option<RunOutput> {
    match wsbench_workloads::run(rt, w, o) {
        Ok(out) => Some(out),
        Err(e) => panic!("{} on {} x{}: {e}", w.name, rt.sched(), rt.workers()),
    }
}

pub fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// Like [`run`], on its own thread: a run that has not finished after
/// `limit` fails the test naming the cell, instead of hanging the suite
/// (the hung thread is left behind; the test process ends with the
/// failure).
pub fn run_watched(rt: &RuntimeSpec, w: &WorkloadSpec, o: &RunOptions, limit: Duration) -> RunOutput {
    let (tx, rx) = std::sync::mpsc::channel();
    let (rt2, w2, o2) = (rt.clone(), w.clone(), o.clone());
    std::thread::spawn(move || {
        // The receiver is gone only if the watchdog already fired.
        let _ = tx.send(wsbench_workloads::run(&rt2, &w2, &o2).map_err(|e| e.to_string()));
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => panic!("{} on {} x{}: {e}", w.name, rt.sched(), rt.workers()),
        Err(_) => panic!("{} on {} x{} did not finish within {limit:?} (hung)", w.name, rt.sched(), rt.workers()),
    }
}

/// Every runtime row that runs at `workers` (single-worker rows at 1 only).
pub fn rows(workers: usize) -> Vec<wsbench_workloads::api::SchedInfo> {
    wsbench_workloads::schedulers().into_iter().filter(|s| workers == 1 || !s.single_worker_only).collect()
}

/// Validating `workload` with `name=bad` (on tokio x2) fails, naming the
/// value, the parameter, the workload and what is allowed (`range`).
pub fn assert_refused(workload: &str, name: &str, bad: &str, range: &str) {
    let e =
        wsbench_workloads::validate(&rt("tokio", 2), &wl(workload, &[(name, bad)], None)).expect_err(bad).to_string();
    for part in [&format!("`{bad}`"), name, workload, range] {
        assert!(e.contains(part), "`{part}` missing from: {e}");
    }
}

/// The tests `every_row_at_{1,2,128}_worker(s)`, each calling `$each`
/// with that worker count (a test file that uses it declares
/// `#[macro_use] mod common;`).
macro_rules! every_row_at_1_2_and_128_workers {
    ($each:ident) => {
        #[test]
        fn every_row_at_1_worker() {
            $each(1);
        }

        #[test]
        fn every_row_at_2_workers() {
            $each(2);
        }

        #[test]
        fn every_row_at_128_workers() {
            $each(128);
        }
    };
}
