//! Bad input is an error that names the bad value and says what is
//! allowed; good input (every default, on every scheduler) validates.

mod common;

use common::{rt, rt_knobs, wl};
use wsbench_workloads::api::RuntimeSpec;
use wsbench_workloads::{validate, Error};

fn err(r: &RuntimeSpec, name: &str, params: &[(&str, &str)], rate: Option<f64>) -> String {
    match validate(r, &wl(name, params, rate)) {
        Ok(()) => panic!("{name} {params:?} rate {rate:?} on {} x{} was accepted", r.sched(), r.workers()),
        Err(e) => e.to_string(),
    }
}

fn assert_names(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "`{p}` missing from: {msg}");
    }
}

#[test]
fn every_default_validates_on_every_scheduler_from_2_to_128_workers() {
    for s in wsbench_workloads::schedulers() {
        for workers in [1, 2, 128] {
            if s.single_worker_only && workers != 1 {
                continue;
            }
            for w in wsbench_workloads::workloads() {
                validate(&rt(s.name, workers), &wl(w.name, &[], None))
                    .unwrap_or_else(|e| panic!("{} on {} x{workers}: {e}", w.name, s.name));
            }
        }
    }
}

#[test]
fn unknown_names_list_what_exists() {
    let m = RuntimeSpec::parse("steal-all", 2).unwrap_err().to_string();
    assert_names(&m, &["`steal-all`", "steal-half", "tokio-current", "smol"]);
    let m = err(&rt("tokio", 2), "rpc-fan-out", &[], None);
    assert_names(&m, &["`rpc-fan-out`", "rpc-fanout", "tcp-rpc", "yield-many"]);
    let m = err(&rt("tokio", 2), "rpc-fanout", &[("fan-out", "3")], None);
    assert_names(&m, &["`fan-out`", "fanout", "service-us", "loadgen-threads"]);
    let m = err(&rt("tokio", 2), "ping-pong", &[("fanout", "3")], None);
    assert_names(&m, &["`fanout`", "pings"]);
    let m = err(&rt("tokio", 2), "hang", &[("x", "1")], None);
    assert_names(&m, &["`x`", "none"]);
}

#[test]
fn bad_rates_are_rejected_with_the_value() {
    for (rate, shown) in
        [(0.0, "`0`"), (-5.0, "`-5`"), (f64::NAN, "`NaN`"), (f64::INFINITY, "`inf`"), (1e12, "`1000000000000`")]
    {
        let m = err(&rt("smol", 2), "timers", &[], Some(rate));
        assert_names(&m, &[shown, "> 0"]);
    }
    // A rate given to a closed benchmark is checked too.
    let m = err(&rt("smol", 2), "yield-many", &[], Some(-1.0));
    assert_names(&m, &["`-1`"]);
}

#[test]
fn impossible_distributions_name_the_parameter() {
    let r = rt("tokio", 2);
    let cases: &[(&str, &str, &[&str])] = &[
        ("pareto-shape", "1", &["`1`", "pareto-shape", "> 1"]),
        ("pareto-shape", "0.5", &["`0.5`", "pareto-shape"]),
        ("bimodal-p", "0", &["`0`", "bimodal-p", "(0, 1)"]),
        ("bimodal-p", "1", &["`1`", "bimodal-p", "(0, 1)"]),
        ("bimodal-ratio", "0.5", &["`0.5`", "bimodal-ratio"]),
        ("service-us", "-3", &["`-3`", "service-us"]),
        ("service-us", "NaN", &["`NaN`", "service-us"]),
        ("service", "gauss", &["`gauss`", "fixed|exp|bimodal|pareto"]),
    ];
    for (name, value, parts) in cases {
        let m = err(&r, "rpc-fanout", &[(name, value)], None);
        assert_names(&m, parts);
    }
    let m = err(&r, "timers", &[("deadline-us", "0")], None);
    assert_names(&m, &["`0`", "deadline-us"]);
    let m = err(&r, "skewed", &[("straggler-p", "1")], None);
    assert_names(&m, &["`1`", "straggler-p"]);
    let m = err(&r, "rpc-fanout", &[("fanout", "2"), ("fanout", "3")], None);
    assert_names(&m, &["fanout", "at most once"]);
}

#[test]
fn knobs_are_checked_for_ours_and_refused_by_references() {
    let e = |r: Result<RuntimeSpec, Error>| r.expect_err("accepted").to_string();
    assert_names(&e(rt_knobs("tokio", 2, &[("lifo", "off")])), &["tokio", "no knobs", "lifo=off"]);
    let r = rt_knobs("steal-half", 2, &[("lifo", "off")]).expect("lifo=off is a steal-half knob");
    validate(&r, &wl("rpc-fanout", &[], None)).expect("validates");
    assert_names(&e(rt_knobs("global", 2, &[("lifo", "off")])), &["`lifo`", "global", "steal-half"]);
    assert_names(&e(rt_knobs("steal-half", 2, &[("queue-capacity", "100")])), &["`100`", "power of two"]);
    assert_names(&e(rt_knobs("steal-half", 2, &[("lifo", "off"), ("lifo", "on")])), &["`lifo`", "twice"]);
    assert_names(&e(rt_knobs("steal-half", 2, &[("lifoo", "off")])), &["`lifoo`", "max-lifo-polls"]);
}

#[test]
fn worker_counts_and_cores_are_checked() {
    let e = |s: &str, w: usize| RuntimeSpec::parse(s, w).expect_err("accepted").to_string();
    assert_names(&e("current-thread", 2), &["2", "current-thread", "exactly 1"]);
    assert_names(&e("tokio-current", 4), &["4", "exactly 1"]);
    assert_names(&e("steal-half", 0), &["0", "1..="]);
    assert_names(&e("steal-half", wsbench_workloads::MAX_WORKERS + 1), &["1..="]);
    let mut r = rt("tokio", 2);
    r.worker_cores = vec![0, 1_000_000];
    assert_names(&err(&r, "rpc-fanout", &[], None), &["1000000", "worker"]);
}

#[test]
fn hang_and_crash_are_test_only_and_outside_the_default_suite() {
    for name in ["hang", "crash"] {
        let w = wsbench_workloads::workloads().iter().find(|w| w.name == name).expect("listed");
        assert!(!w.in_default_suite, "{name}");
        assert!(w.about.contains("test-only"), "{}", w.about);
    }
    let outside: Vec<_> =
        wsbench_workloads::workloads().iter().filter(|w| !w.in_default_suite).map(|w| w.name).collect();
    assert_eq!(
        outside,
        [
            "http",
            "channel-ping-pong",
            "pipeline",
            "lifo-starvation",
            "idle-burst",
            "task-churn",
            "timer-churn",
            "blocking-storm",
            "accept-storm",
            "spawn-storm",
            "hang",
            "crash"
        ]
    );
}

#[test]
fn every_error_is_a_typed_variant() {
    let e = validate(&rt("tokio", 2), &wl("timers", &[], Some(0.0))).unwrap_err();
    assert!(matches!(e, Error::BadRate { .. }), "{e:?}");
    let e = validate(&rt("tokio", 2), &wl("nope", &[], None)).unwrap_err();
    assert!(matches!(e, Error::UnknownWorkload { .. }), "{e:?}");
}
