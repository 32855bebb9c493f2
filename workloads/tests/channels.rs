//! `channel-ping-pong` and `pipeline` on every runtime row at 1, 2 and 128
//! workers: every message sent is received, the counts are whole
//! iterations of the sizes asked for, the cross-worker hand-offs counted by
//! the receivers equal those the messages carried, at 1 worker no
//! hand-off crosses threads (one mode), a run of several modes reports
//! each apart and no whole-run time per message; bad sizes are refused.

#[macro_use]
mod common;

use std::time::Duration;

use common::{assert_refused, opts, rows, rt, run_watched, wl};
use wsbench_workloads::api::RunOutput;

const DURATION_MS: u64 = 20;
const WARMUP_MS: u64 = 5;
/// Far beyond what a cell needs: only a hang reaches it.
const WATCHDOG: Duration = Duration::from_secs(120);

fn extra(out: &RunOutput, name: &str) -> f64 {
    out.extras
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("no {name} in {:?}", out.extras))
}

fn check_cross(at: &str, out: &RunOutput, hand_offs: u64, workers: usize) {
    let cross = extra(out, "cross_worker_hops");
    assert!(cross <= hand_offs as f64, "{at}: {cross} cross-worker of {hand_offs} hand-offs");
    let (lo, hi) = (extra(out, "cross_worker_share_min"), extra(out, "cross_worker_share_max"));
    assert!((0.0..=1.0).contains(&lo) && lo <= hi && hi <= 1.0, "{at}: shares {lo}..{hi}");
    if workers == 1 {
        // Every task runs on the one runtime thread: nothing crosses.
        assert_eq!(cross, 0.0, "{at}: one thread, yet {cross} hand-offs crossed");
        assert_eq!(extra(out, "modes"), 1.0, "{at}: one thread is one mode");
    }
    check_modes(at, out);
}

/// One mode: the run's ns_per_message. Several: each mode's iterations
/// (adding up to the run's), time per message and share, and no
/// whole-run ns_per_message.
fn check_modes(at: &str, out: &RunOutput) {
    let modes = extra(out, "modes") as usize;
    let has = |name: &str| out.extras.iter().any(|(n, _)| n == name);
    assert!(modes >= 1, "{at}: {modes} modes");
    assert_eq!(has("ns_per_message"), modes == 1, "{at}: ns_per_message with {modes} modes");
    if modes == 1 {
        assert!(extra(out, "ns_per_message") > 0.0, "{at}");
        assert!(!has("mode1_iterations"), "{at}");
        return;
    }
    let iterations: f64 = (1..=modes).map(|n| extra(out, &format!("mode{n}_iterations"))).sum();
    assert_eq!(iterations, extra(out, "iterations"), "{at}: every iteration in one mode");
    for n in 1..=modes {
        assert!(extra(out, &format!("mode{n}_ns_per_message")) > 0.0, "{at}");
        let share = extra(out, &format!("mode{n}_cross_worker_share"));
        assert!((0.0..=1.0).contains(&share), "{at}: mode {n} share {share}");
    }
    assert!(out.notes.iter().any(|n| n.contains("modes")), "{at}: {:?}", out.notes);
}

fn check_ping_pong(sched: &str, workers: usize, pairs: u64, rounds: u64, out: &RunOutput) {
    let at = format!("channel-ping-pong pairs={pairs} rounds={rounds} on {sched} x{workers}");
    let iterations = extra(out, "iterations") as u64;
    assert!(iterations >= 1, "{at}");
    let messages = iterations * 2 * pairs * rounds;
    assert_eq!(out.ops, messages, "{at}: {iterations} iterations");
    assert_eq!(extra(out, "messages_sent"), messages as f64, "{at}");
    assert_eq!(extra(out, "messages_received"), messages as f64, "{at}");
    assert_eq!(out.latency_ns.len(), messages, "{at}: one latency per message");
    assert_eq!(extra(out, "pairs"), pairs as f64, "{at}");
    let cross = extra(out, "cross_worker_hops");
    assert_eq!(extra(out, "cross_worker_per_message"), cross / messages as f64, "{at}");
    check_cross(&at, out, messages, workers);
    for (name, value) in [("pairs", pairs), ("rounds", rounds)] {
        assert!(out.params.contains(&(name.into(), value.to_string())), "{at}: {:?}", out.params);
    }
}

fn check_pipeline(sched: &str, workers: usize, stages: u64, messages: u64, out: &RunOutput) {
    let at = format!("pipeline stages={stages} messages={messages} on {sched} x{workers}");
    let iterations = extra(out, "iterations") as u64;
    assert!(iterations >= 1, "{at}");
    let total = iterations * messages;
    assert_eq!(out.ops, total, "{at}: {iterations} iterations");
    assert_eq!(out.latency_ns.len(), total, "{at}: one latency per message");
    let hops = stages * total;
    assert_eq!(extra(out, "hops"), hops as f64, "{at}");
    assert_eq!(extra(out, "messages_sent"), hops as f64, "{at}: every hop is a send");
    assert_eq!(extra(out, "messages_received"), hops as f64, "{at}: and a receive");
    // The receivers' count and the messages' own count of crossed hops.
    let cross = extra(out, "cross_worker_hops");
    assert_eq!(extra(out, "cross_worker_carried"), cross, "{at}");
    assert_eq!(extra(out, "cross_worker_per_message"), cross / total as f64, "{at}");
    check_cross(&at, out, hops, workers);
}

fn every_row(workers: usize) {
    let o = opts(DURATION_MS, WARMUP_MS);
    for row in rows(workers) {
        let sched = row.name;
        let w = wl("channel-ping-pong", &[("pairs", "2"), ("rounds", "50")], None);
        check_ping_pong(sched, workers, 2, 50, &run_watched(&rt(sched, workers), &w, &o, WATCHDOG));
        let w = wl("pipeline", &[("stages", "3"), ("in-flight", "2"), ("messages", "40")], None);
        check_pipeline(sched, workers, 3, 40, &run_watched(&rt(sched, workers), &w, &o, WATCHDOG));
    }
}

every_row_at_1_2_and_128_workers!(every_row);

/// The defaults (1 pair x 1000 rounds; 4 stages, capacity 1, 4 in
/// flight, 1000 messages), recorded as used.
#[test]
fn defaults_are_recorded_and_add_up() {
    let o = opts(DURATION_MS, 0);
    let out = run_watched(&rt("steal-half", 2), &wl("channel-ping-pong", &[], None), &o, WATCHDOG);
    check_ping_pong("steal-half", 2, 1, 1000, &out);
    let out = run_watched(&rt("tokio", 2), &wl("pipeline", &[], None), &o, WATCHDOG);
    check_pipeline("tokio", 2, 4, 1000, &out);
    for p in [("capacity", "1"), ("in-flight", "4")] {
        assert!(out.params.contains(&(p.0.into(), p.1.into())), "{:?}", out.params);
    }
}

/// The most messages a ring holds without deadlock, (capacity + 1) x
/// stages - 1, runs; one more is refused naming the limit.
#[test]
fn a_full_ring_runs_and_one_more_in_flight_is_refused() {
    let full = wl("pipeline", &[("stages", "2"), ("capacity", "2"), ("in-flight", "5"), ("messages", "30")], None);
    let out = run_watched(&rt("steal-half", 2), &full, &opts(DURATION_MS, 0), WATCHDOG);
    check_pipeline("steal-half", 2, 2, 30, &out);
    let over = wl("pipeline", &[("stages", "2"), ("capacity", "2"), ("in-flight", "6")], None);
    let e = wsbench_workloads::validate(&rt("steal-half", 2), &over).expect_err("6 in flight can deadlock").to_string();
    for part in ["`6`", "in-flight", "pipeline", "1..=5", "deadlock"] {
        assert!(e.contains(part), "`{part}` missing from: {e}");
    }
}

#[test]
fn bad_sizes_are_refused_naming_the_value_and_the_range() {
    let cases = [
        ("channel-ping-pong", "pairs", "0", "1..=256"),
        ("channel-ping-pong", "pairs", "257", "1..=256"),
        ("channel-ping-pong", "rounds", "0", "1..=10000000"),
        ("pipeline", "stages", "1", "2..=1024"),
        ("pipeline", "capacity", "0", "1..=65536"),
        ("pipeline", "messages", "-1", "1..=10000000"),
    ];
    for (workload, name, bad, range) in cases {
        assert_refused(workload, name, bad, range);
    }
}
