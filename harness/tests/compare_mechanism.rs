//! `compare` on planted data, through the real CLI: the per-op figures
//! that moved with a verdict (a wake-up regression in one of our policies
//! names its unparks), and the gate on a slowdown in shared code (every
//! runtime alike): `regressed (all runtimes)` for the pairs of one A/B
//! invocation, cancelled by the tokio control for files of different
//! invocations.

mod common;

use std::path::Path;

use common::{scratch, wsbench_in};
use wsbench::internals::env::Environment;
use wsbench::internals::export::csv::{encode, header, row};
use wsbench::internals::record::{counter_names, CellKey, RunRecord, Status};

const RUNS: usize = 6;
/// Each run's (or pair's) machine speed, and a small wobble of the code's
/// own figures.
const SPEED: [f64; RUNS] = [1.0, 0.97, 1.03, 0.99, 1.02, 0.98];
const WOBBLE: [f64; RUNS] = [1.0, 1.004, 0.997, 1.002, 0.999, 1.001];

/// What one side of one cell measured: throughput, CPU per op, and the
/// counters per op.
#[derive(Clone, Copy)]
struct Side {
    throughput: f64,
    cpu_us: f64,
    unparks: f64,
    steals: f64,
    parks: f64,
}

const OPS: u64 = 100_000;

fn record(sched: &str, run: usize, side: Side, session: Option<(f64, bool)>) -> RunRecord {
    let key = CellKey::plain(sched, 2, "channel-ping-pong");
    let mut r = RunRecord::failed(key, run, String::new());
    let (speed, wobble) = (SPEED[run], WOBBLE[run]);
    r.status = Status::Ok;
    r.ops = Some(OPS);
    r.duration_s = Some(OPS as f64 / (side.throughput * speed));
    r.throughput_per_s = Some(side.throughput * speed);
    r.cpu.cpu_us_per_op = Some(side.cpu_us * wobble);
    let names = counter_names();
    for (name, per_op) in [("unparks", side.unparks * wobble), ("steals", side.steals * wobble), ("parks", side.parks)]
    {
        r.counters[names.iter().position(|n| *n == name).unwrap()] = Some((per_op * OPS as f64).round() as u64);
    }
    if let Some((id, base)) = session {
        // Even runs: the base went first (`run::ab::base_first`).
        let first = base == (run % 2 == 0);
        r.extras = vec![("ab_session".to_string(), id), ("ab_order".to_string(), if first { 0.0 } else { 1.0 })];
    }
    r
}

/// Writes a results CSV of `cells` (scheduler, side), `session` = the A/B
/// session and whether this is the base side.
fn write(path: &Path, cells: &[(&str, Side)], session: Option<(f64, bool)>) {
    let env = Environment::capture();
    let rows = cells.iter().flat_map(|&(sched, side)| (0..RUNS).map(move |run| record(sched, run, side, session)));
    let mut bytes = encode([header()]).unwrap();
    bytes.extend(encode(rows.map(|r| row(&env, &r)).collect::<Vec<_>>()).unwrap());
    std::fs::write(path, bytes).unwrap();
}

const BASE: Side = Side { throughput: 1.0e6, cpu_us: 0.80, unparks: 1.5, steals: 0.0, parks: 0.2 };

#[test]
fn a_planted_wake_up_regression_names_its_unparks() {
    let dir = scratch("mechanism");
    // steal-half wakes a parked worker for 0.9 more messages in each 1
    // (+60 %), steals 0.4 per message where it stole none, spends 16 % more
    // CPU per message and loses 14 % of its throughput; tokio is unchanged.
    let slow = Side { throughput: 0.86e6, cpu_us: 0.80 * 1.16, unparks: 2.4, steals: 0.4, parks: 0.2 };
    write(&dir.join("base.csv"), &[("steal-half", BASE), ("tokio", BASE)], None);
    write(&dir.join("current.csv"), &[("steal-half", slow), ("tokio", BASE)], None);
    let run = wsbench_in(&dir, &["compare", "base.csv", "current.csv", "--json", "report.json"]);
    run.code(1).stdout_has(&[
        "## What moved with each verdict (per operation)",
        "- steal-half x2 channel-ping-pong: regressed cpu_us_per_op +16.0% (q ",
        ", regressed throughput_per_s -14.0% (q ",
        "per op: cpu_us +0.128 (+16%), unparks +0.900 (+60%), steals +0.400 (from 0)\n",
    ]);
    assert!(!run.stdout.contains("tokio x2 channel-ping-pong: "), "tokio did not move:\n{}", run.stdout);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let mechanism = json["mechanism"].as_array().unwrap();
    assert_eq!(mechanism.len(), 1, "{mechanism:#?}");
    assert_eq!(mechanism[0]["cell"]["scheduler"], "steal-half");
    let figures: Vec<&str> =
        mechanism[0]["moved"].as_array().unwrap().iter().map(|m| m["figure"].as_str().unwrap()).collect();
    assert_eq!(figures, ["cpu_us", "unparks", "steals"], "parks did not move");
    let unparks = &mechanism[0]["moved"][1];
    // 0.9 per op times the median wobble of the unparks counts (1.0005).
    assert!((unparks["difference"].as_f64().unwrap() - 0.9 * 1.0005).abs() < 1e-9, "{unparks}");
    assert!(unparks["q_value"].as_f64().unwrap() < 0.05, "{unparks}");
}

/// The workloads' service 25 % longer: every runtime of the cell loses
/// the same throughput and spends the same extra CPU per message.
const SHARED_SLOWDOWN: Side = Side { throughput: 0.8e6, cpu_us: 0.80 * 1.22, unparks: 1.5, steals: 0.0, parks: 0.2 };

#[test]
fn a_shared_code_slowdown_fails_the_gate_inside_one_ab_invocation() {
    let dir = scratch("all-runtimes");
    let cells = |side: Side| [("steal-half", side), ("tokio", side)];
    write(&dir.join("base.csv"), &cells(BASE), Some((42.0, true)));
    write(&dir.join("current.csv"), &cells(SHARED_SLOWDOWN), Some((42.0, false)));
    let run = wsbench_in(&dir, &["compare", "base.csv", "current.csv", "--json", "report.json"]);
    run.code(1).stdout_has(&["**4 regressed, 0 improved"]);
    let marked: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("| regressed (all runtimes) |")).collect();
    for (sched, metric) in [
        ("steal-half", "throughput_per_s"),
        ("tokio", "throughput_per_s"),
        ("steal-half", "cpu_us_per_op"),
        ("tokio", "cpu_us_per_op"),
    ] {
        let cell = format!("| {sched} x2 channel-ping-pong ");
        assert!(marked.iter().any(|l| l.contains(&cell) && l.contains(metric)), "{sched} {metric}:\n{}", run.stdout);
    }
    assert_eq!(marked.len(), 4, "{}", run.stdout);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let regressed: Vec<&serde_json::Value> =
        json["comparisons"].as_array().unwrap().iter().filter(|c| c["verdict"] == "regressed").collect();
    assert_eq!(regressed.len(), 4);
    assert!(regressed.iter().all(|c| c["all_runtimes"] == true && c["paired"] == true), "{regressed:#?}");
}

#[test]
fn the_tokio_control_cancels_the_same_slowdown_across_invocations() {
    let dir = scratch("control");
    let cells = |side: Side| [("steal-half", side), ("tokio", side)];
    // Two A/B invocations' files: not pairs, so judged as independent.
    write(&dir.join("base.csv"), &cells(BASE), Some((42.0, true)));
    write(&dir.join("current.csv"), &cells(SHARED_SLOWDOWN), Some((43.0, false)));
    let run = wsbench_in(&dir, &["compare", "base.csv", "current.csv"]);
    run.ok().stdout_has(&[
        "**0 regressed, 0 improved",
        "tokio in this cell moved alike",
        "reference runtime: a regressed here is the machine or the workload, not our code",
    ]);
    assert!(!run.stdout.contains("(all runtimes)"), "{}", run.stdout);
    run.stderr_has(&["from A/B invocations (run --base-bin), but from different ones"]);
}
