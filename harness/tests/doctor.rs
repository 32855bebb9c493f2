//! `wsbench doctor --calibrate`: every check is printed with a verdict and
//! its figures, `--json` holds the same, and a later run's JSON
//! environment carries them. The figures themselves are this machine's
//! and are not asserted.

mod common;

use common::{scratch, wsbench_env};

const CHECKS: [&str; 12] = [
    "spin-drift",
    "cpu-meter",
    "park-unpark",
    "timer",
    "loopback-floor",
    "loadgen-bias",
    "loadgen-ceiling",
    "steal",
    "governor",
    "cpuidle",
    "smt",
    "clocksource",
];

/// Checks whose figures are measured on every Linux machine (the others
/// may be blank where the kernel does not say).
const MEASURED: [(&str, &[&str]); 7] = [
    ("spin-drift", &["calibrations", "median", "min", "max", "range_pct"]),
    ("cpu-meter", &["nominal_ms", "thread_clock_ms", "meter_ms", "meter_error_pct", "spin_error_pct"]),
    ("park-unpark", &["round_trip_us", "yield_us", "round_trip_per_yield"]),
    ("timer", &["late_p50_us", "late_p99_us", "late_max_us"]),
    ("loopback-floor", &["echo_p50_us", "echo_p99_us"]),
    ("loadgen-bias", &["reference_p50_us", "reference_p99_us", "load_p50_us", "load_p99_us", "bias_p50_us"]),
    (
        "loadgen-ceiling",
        &[
            "offered_per_s_per_client_thread",
            "offered_per_s_per_generator_thread",
            "offered_per_s_generator_alone",
            "offered_per_s_per_client_thread_pipelined",
        ],
    ),
];

#[test]
fn calibrate_prints_every_check_writes_json_and_runs_carry_it() {
    let dir = scratch("calibrate");
    let state = dir.join("state");
    let env = [("WSBENCH_STATE_DIR", state.to_str().unwrap())];
    let out = wsbench_env(&dir, &["doctor", "--calibrate", "--calibrate-span", "2s", "--json", "cal.json"], &env);
    out.ok();
    for check in CHECKS {
        let line = out
            .stdout
            .lines()
            .find(|l| l.split_once(']').and_then(|(_, r)| r.split_whitespace().next()) == Some(check));
        let line = line.unwrap_or_else(|| panic!("no line for {check}:\n{}", out.stdout));
        assert!(
            ["[ok   ]", "[warn ]", "[unfit]"].iter().any(|v| line.starts_with(v)),
            "{check} has no verdict: {line}"
        );
    }
    assert!(out.stdout.contains("tolerance: range ok up to 5%, unfit beyond 10%"), "{}", out.stdout);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("cal.json")).unwrap()).unwrap();
    assert!(json["generator"].as_str().unwrap().starts_with("wsbench "));
    let checks = json["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["check"].as_str().unwrap()).collect();
    assert_eq!(names, CHECKS);
    for (check, figures) in MEASURED {
        let c = checks.iter().find(|c| c["check"] == check).unwrap();
        let got: Vec<&str> = c["figures"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
        for f in figures {
            assert!(got.contains(f), "{check} lacks {f}: {got:?}");
        }
        for f in c["figures"].as_array().unwrap() {
            assert!(f["value"].as_f64().is_some_and(f64::is_finite), "{check}: {f}");
        }
    }
    let spin = checks.iter().find(|c| c["check"] == "spin-drift").unwrap();
    let calibrations = spin["figures"].as_array().unwrap().iter().find(|f| f["name"] == "calibrations").unwrap();
    assert_eq!(calibrations["value"].as_f64(), Some(2.0), "one calibration a second over 2 s");
    // Saved for runs: the next run's environment carries it.
    assert!(state.join("calibration.json").is_file());
    let run = wsbench_env(
        &dir,
        &[
            "run",
            "--sched",
            "global",
            "--workers",
            "1",
            "--workload",
            "yield-many",
            "--param",
            "tasks=4",
            "--param",
            "yields=4",
            "--duration",
            "20ms",
            "--warmup",
            "0s",
            "--runs",
            "1",
            "-q",
            "--json",
            "run.json",
            "--csv",
            "run.csv",
        ],
        &env,
    );
    run.ok();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    let carried = &doc["environment"]["calibration"];
    assert_eq!(carried["taken_at"], json["taken_at"], "{carried}");
    assert_eq!(carried["checks"].as_array().map(Vec::len), Some(CHECKS.len()));
    // Every run re-checked its spin calibration at the end.
    let extras = doc["cells"][0]["runs"][0]["extras"].as_object().unwrap().clone();
    assert!(extras["spin_drift"].as_f64().is_some_and(f64::is_finite), "{extras:?}");
    assert!(extras["spin_iters_per_ns"].as_f64().is_some_and(|v| v > 0.0), "{extras:?}");
    // Before a sweep, a rate beyond what the client threads reached in the
    // calibration is warned about, with the measured figure. No client
    // thread sends 10 million requests a second; every one sends 1.
    let ceiling = checks.iter().find(|c| c["check"] == "loadgen-ceiling").unwrap();
    let reached = ceiling["figures"][0]["value"].as_f64().unwrap();
    assert!(reached > 1.0 && reached < 1e7, "{ceiling}");
    let sweep = |rate: &str| {
        let args = ["--sched", "global", "--workers", "1", "--workload", "http", "--rate", rate, "-q"];
        let tail = ["--param", "arrival=uniform", "--duration", "20ms", "--warmup", "0s", "--runs", "1"];
        wsbench_env(&dir, &[&args[..], &tail[..]].concat(), &env)
    };
    let fast = sweep("10000000,1");
    let warnings: Vec<&str> = fast.stderr.lines().filter(|l| l.starts_with("warning: --rate")).collect();
    assert_eq!(warnings.len(), 1, "one warning, for 10M/s only:\n{}", fast.stderr);
    assert!(
        warnings[0].contains("--rate 10.00M for http") && warnings[0].contains("1 client thread(s)"),
        "{}",
        warnings[0]
    );
    assert!(!sweep("1").stderr.contains("warning: --rate"), "1/s is within reach");
    // The in-process generator has its own figure and its own warning.
    let args = ["--sched", "global", "--workers", "1", "--workload", "rpc-fanout", "--rate", "90000000", "-q"];
    let tail = ["--param", "fanout=0", "--duration", "20ms", "--warmup", "0s", "--runs", "1"];
    let fast = wsbench_env(&dir, &[&args[..], &tail[..]].concat(), &env);
    assert!(
        fast.stderr.lines().any(|l| l.starts_with("warning: --rate 90.00M for rpc-fanout")
            && l.contains("1 in-process generator thread(s)")
            && l.contains("--param loadgen-threads=N")),
        "{}",
        fast.stderr
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn calibrate_refuses_bad_options() {
    let dir = scratch("calibrate-bad");
    let env = [("WSBENCH_STATE_DIR", dir.to_str().unwrap())];
    wsbench_env(&dir, &["doctor", "--calibrate", "--calibrate-span", "0s"], &env)
        .code(2)
        .stderr_has(&["--calibrate-span `0s`", "from 1s to 10m"]);
    wsbench_env(&dir, &["doctor", "--json", "x.json"], &env).code(2).stderr_has(&["--calibrate"]);
    wsbench_env(&dir, &["doctor", "--calibrate", "--json", "no-such-dir/x.json", "--calibrate-span", "1s"], &env)
        .code(2)
        .stderr_has(&["no-such-dir"]);
    assert!(!dir.join("calibration.json").exists(), "nothing measured, nothing saved");
    let _ = std::fs::remove_dir_all(dir);
}
