//! The pathology zoo on every runtime row at 1, 2 and 128 workers: the
//! counts are whole iterations of the sizes asked for (`accept-storm`:
//! requests sent, answered and attributed to workers add up), the
//! signature figures are the ones the histograms and counters hold, and
//! the counters that a knob switches off read exactly zero.
//! (`blocking-storm` is tested with `spawn-storm` in `storm.rs`.)

#[macro_use]
mod common;

use std::time::Duration;

use common::{assert_refused, opts, rows, rt, rt_knobs, run_watched, wl};
use wsbench_workloads::api::RunOutput;

const DURATION_MS: u64 = 20;
const WARMUP_MS: u64 = 5;
/// Far beyond what a cell needs: only a hang reaches it.
const WATCHDOG: Duration = Duration::from_secs(120);

fn extra(out: &RunOutput, name: &str) -> Option<f64> {
    out.extras.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

fn must(out: &RunOutput, name: &str) -> f64 {
    extra(out, name).unwrap_or_else(|| panic!("no {name} in {:?}", out.extras))
}

/// The run's measured iterations: at least one.
fn iterations(at: &str, out: &RunOutput) -> u64 {
    let n = must(out, "iterations") as u64;
    assert!(n >= 1, "{at}: no measured iteration");
    n
}

fn counter(out: &RunOutput, name: &str) -> Option<u64> {
    out.counters.iter().find(|(n, _)| *n == name).and_then(|(_, v)| *v)
}

const LIFO: [(&str, &str); 2] = [("bystanders", "3"), ("yields", "20")];
const IDLE: [(&str, &str); 4] = [("jobs", "4"), ("job-us", "5"), ("idle-us", "200"), ("bursts", "3")];

fn check_lifo(at: &str, is_reference: bool, out: &RunOutput) {
    let iterations = iterations(at, out);
    assert_eq!(out.ops, iterations * 3 * 20, "{at}: one wait per bystander yield");
    assert_eq!(out.latency_ns.len(), out.ops, "{at}");
    let (sent, received) = (must(out, "pair_messages_sent"), must(out, "pair_messages_received"));
    assert_eq!(sent, received, "{at}");
    assert_eq!(sent % 2.0, 0.0, "{at}: a ping and a pong per round");
    assert_eq!(must(out, "bystander_wait_p99_us"), out.latency_ns.value_at_quantile(0.99) as f64 / 1e3, "{at}");
    assert_eq!(must(out, "bystander_wait_max_us"), out.latency_ns.max() as f64 / 1e3, "{at}");
    let per_poll = extra(out, "lifo_hits_per_poll");
    if is_reference {
        assert_eq!(per_poll, None, "{at}: no runtime counts LIFO hits here but ours");
    } else {
        let (hits, polls) = (counter(out, "lifo_hits").expect(at), counter(out, "polls").expect(at));
        assert_eq!(per_poll, Some(hits as f64 / polls as f64), "{at}");
    }
}

fn check_idle(at: &str, out: &RunOutput) {
    let iterations = iterations(at, out);
    assert_eq!(out.ops, iterations * 3, "{at}: bursts");
    assert_eq!(must(out, "bursts"), out.ops as f64, "{at}");
    assert_eq!(out.latency_ns.len(), out.ops, "{at}: one latency per burst");
    assert_eq!(must(out, "jobs_run"), (out.ops * 4) as f64, "{at}");
    // Linux always has a thread CPU clock: the jobs' CPU is measured.
    assert!(must(out, "job_cpu_us_per_burst") > 0.0, "{at}");
    if let (Some(cpu), Some(overhead)) = (out.cpu, extra(out, "overhead_cpu_us_per_burst")) {
        let jobs_us = must(out, "job_cpu_us_per_burst") * out.ops as f64;
        let total_us = cpu.cpu_ns as f64 / 1e3;
        assert!((overhead * out.ops as f64 + jobs_us - total_us).abs() <= 1e-6 * total_us, "{at}");
    }
}

const CHURN: [(&str, &str); 3] = [("spawners", "3"), ("tasks", "40"), ("batch", "16")];

fn check_churn(at: &str, is_reference: bool, out: &RunOutput) {
    let iterations = iterations(at, out);
    let tasks = iterations * 3 * 40;
    assert_eq!(out.ops, tasks, "{at}: spawners x tasks per iteration");
    assert_eq!(must(out, "tasks_spawned"), tasks as f64, "{at}");
    assert_eq!(must(out, "tasks_completed"), tasks as f64, "{at}");
    // 40 tasks in batches of 16: 16, 16, 8.
    assert_eq!(out.latency_ns.len(), iterations * 3 * 3, "{at}: one entry per batch");
    let ns = must(out, "ns_per_task");
    let want = out.elapsed.as_nanos() as f64 * 3.0 / tasks as f64;
    assert!((ns - want).abs() <= 1e-6 * want, "{at}: {ns} vs {want}");
    let contended = extra(out, "task_registry_contended");
    if is_reference {
        assert_eq!(contended, None, "{at}: not counted by this runtime, so absent");
    } else {
        // Each spawn binds and each completion unlinks: at most one
        // contended acquisition each (plus none at shutdown, outside).
        let c = contended.unwrap_or_else(|| panic!("{at}: no task_registry_contended in {:?}", out.extras));
        let spawns = iterations * 3 + tasks;
        assert!(c <= 2.0 * spawns as f64, "{at}: {c} contended for {spawns} spawns");
        let (local, remote) = (counter(out, "spawns_local").expect(at), counter(out, "spawns_remote").expect(at));
        assert_eq!(local + remote, spawns, "{at}: the churners and their tasks");
    }
}

const TIMERS: [(&str, &str); 3] = [("tasks", "3"), ("timers", "15"), ("timeout-ms", "60000")];

fn check_timers(at: &str, workers: usize, out: &RunOutput) {
    let iterations = iterations(at, out);
    let timers = iterations * 3 * 15;
    assert_eq!(out.ops, timers, "{at}: tasks x timers per iteration");
    assert_eq!(out.latency_ns.len(), timers, "{at}: one arming time per timer");
    assert_eq!(must(out, "timers_armed"), timers as f64, "{at}");
    // A minute-long timer never fires within a test: every one is cancelled.
    assert_eq!(must(out, "timers_fired_early"), 0.0, "{at}");
    assert_eq!(must(out, "timers_cancelled"), timers as f64, "{at}");
    let cross = must(out, "cross_thread_cancels");
    assert!(cross <= timers as f64, "{at}");
    if workers == 1 {
        assert_eq!(cross, 0.0, "{at}: one runtime thread");
    }
    if let Some(fired) = counter(out, "timers_fired") {
        assert_eq!(fired, 0, "{at}: the runtime fired a cancelled timer");
    }
}

/// A small storm: 8 connections (one client thread connects them at once)
/// and a uniform 2000/s, so that every row at 128 workers stays quick.
const ACCEPT: [(&str, &str); 3] = [("connections", "8"), ("client-threads", "1"), ("arrival", "uniform")];
const ACCEPT_RATE_PER_S: f64 = 2000.0;

/// The server attributes every request it answered to one worker: at
/// least every completed one, at most every sent one, exactly `ops` when
/// none failed; the index is busiest / mean over all the workers.
fn check_accept(at: &str, workers: usize, out: &RunOutput) {
    let (sent, failed) = (out.sent.expect(at), out.failed.expect(at));
    assert_eq!(sent, out.ops + failed, "{at}");
    assert_eq!(must(out, "connections"), 8.0, "{at}");
    let attributed = must(out, "requests_attributed") as u64;
    assert!(out.ops <= attributed && attributed <= sent, "{at}: {} ok, {attributed} attributed, {sent} sent", out.ops);
    if failed == 0 {
        assert_eq!(attributed, out.ops, "{at}: every sent request answered once");
    }
    let (serving, busiest) = (must(out, "workers_serving") as u64, must(out, "busiest_worker_requests") as u64);
    assert!(serving <= workers as u64 && busiest <= attributed, "{at}: {serving} serving, busiest {busiest}");
    assert!(busiest * serving >= attributed, "{at}: the busiest serves at least the mean of those serving");
    match extra(out, "imbalance_index") {
        None => assert_eq!(attributed, 0, "{at}: every runtime here attributes requests to workers"),
        Some(index) => {
            assert_eq!(index, busiest as f64 * workers as f64 / attributed as f64, "{at}");
            assert!((1.0..=workers as f64).contains(&index), "{at}: {index}");
            if workers == 1 {
                assert_eq!(index, 1.0, "{at}");
            }
        }
    }
}

fn every_row(workers: usize) {
    let o = opts(DURATION_MS, WARMUP_MS);
    for info in rows(workers) {
        let r = rt(info.name, workers);
        let out = run_watched(&r, &wl("lifo-starvation", &LIFO, None), &o, WATCHDOG);
        check_lifo(&format!("lifo-starvation on {} x{workers}", info.name), info.is_reference, &out);
        let out = run_watched(&r, &wl("idle-burst", &IDLE, None), &o, WATCHDOG);
        check_idle(&format!("idle-burst on {} x{workers}", info.name), &out);
        let out = run_watched(&r, &wl("task-churn", &CHURN, None), &o, WATCHDOG);
        check_churn(&format!("task-churn on {} x{workers}", info.name), info.is_reference, &out);
        let out = run_watched(&r, &wl("timer-churn", &TIMERS, None), &o, WATCHDOG);
        check_timers(&format!("timer-churn on {} x{workers}", info.name), workers, &out);
        let out = run_watched(&r, &wl("accept-storm", &ACCEPT, Some(ACCEPT_RATE_PER_S)), &o, WATCHDOG);
        check_accept(&format!("accept-storm on {} x{workers}", info.name), workers, &out);
    }
}

every_row_at_1_2_and_128_workers!(every_row);

/// On one steal-half worker the pair's first pong wakes the pinger from
/// the worker, into the LIFO slot, before any bystander runs: hits > 0.
/// With `lifo=off` there is no slot: exactly zero hits.
#[test]
fn lifo_hits_follow_the_lifo_knob() {
    let o = opts(DURATION_MS, 0);
    let w = wl("lifo-starvation", &LIFO, None);
    let on = run_watched(&rt_knobs("steal-half", 1, &[("lifo", "on")]).unwrap(), &w, &o, WATCHDOG);
    assert!(counter(&on, "lifo_hits").unwrap() > 0, "{:?}", on.counters);
    let off = run_watched(&rt_knobs("steal-half", 1, &[("lifo", "off")]).unwrap(), &w, &o, WATCHDOG);
    assert_eq!(counter(&off, "lifo_hits"), Some(0));
    assert_eq!(extra(&off, "lifo_hits_per_poll"), Some(0.0));
}

#[test]
fn defaults_are_recorded() {
    let o = opts(DURATION_MS, 0);
    let out = run_watched(&rt("steal-half", 2), &wl("lifo-starvation", &[], None), &o, WATCHDOG);
    assert_eq!(out.ops % (4 * 100), 0, "4 bystanders x 100 yields");
    let out = run_watched(&rt("tokio", 2), &wl("idle-burst", &[], None), &o, WATCHDOG);
    assert_eq!(must(&out, "jobs_run"), must(&out, "bursts") * 16.0);
    assert_eq!(out.ops % 10, 0, "10 bursts an iteration");
    for p in [("jobs", "16"), ("job-us", "12"), ("idle-us", "3000"), ("bursts", "10")] {
        assert!(out.params.contains(&(p.0.into(), p.1.into())), "{:?}", out.params);
    }
    // spawners=auto is the worker count, recorded as the number.
    let out = run_watched(&rt("steal-half", 2), &wl("task-churn", &[], None), &o, WATCHDOG);
    assert_eq!(out.ops % (2 * 1000), 0, "2 spawners x 1000 tasks");
    assert!(out.params.contains(&("spawners".into(), "2".into())), "{:?}", out.params);
}

#[test]
fn bad_sizes_are_refused_naming_the_value_and_the_range() {
    let cases = [
        ("lifo-starvation", "bystanders", "0", "1..=4096"),
        ("lifo-starvation", "yields", "0", "1..=1000000"),
        ("idle-burst", "jobs", "0", "1..=100000"),
        ("idle-burst", "job-us", "x", "0..=1000000"),
        ("idle-burst", "idle-us", "10000001", "0..=10000000"),
        ("idle-burst", "bursts", "0", "1..=1000000"),
        ("task-churn", "spawners", "0", "auto or an integer in 1..=1024"),
        ("task-churn", "tasks", "0", "1..=10000000"),
        ("task-churn", "batch", "65537", "1..=65536"),
        ("timer-churn", "tasks", "257", "auto or an integer in 1..=256"),
        ("timer-churn", "timers", "0", "1..=1000000"),
        ("timer-churn", "timeout-ms", "0", "1..=3600000"),
        ("accept-storm", "connections", "0", "1..=100000"),
        ("accept-storm", "client-threads", "0", "auto or an integer in 1..=256"),
    ];
    for (workload, name, bad, range) in cases {
        assert_refused(workload, name, bad, range);
    }
}
