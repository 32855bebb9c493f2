//! Bad input: every error names the option and the value, lists what is
//! allowed, exits 2 (as clap's own usage errors do; `docs/src/output.md` says so)
//! and leaves no file behind.

mod common;

use std::path::Path;

use common::{scratch, wsbench_in};

const TINY: &[&str] = &["--duration", "20ms", "--warmup", "0", "--runs", "1"];

/// `extra` plus short settings, and `--workload yield-many` unless `extra`
/// names a workload.
fn with_tiny<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let workload: &[&str] = if extra.contains(&"--workload") { &[] } else { &["--workload", "yield-many"] };
    extra.iter().chain(workload).chain(TINY).copied().collect()
}

/// Runs a bad command in a fresh directory and checks the failure and
/// that the directory is still empty.
fn rejects(name: &str, args: &[&str], needles: &[&str]) {
    let dir = scratch(name);
    let run = wsbench_in(&dir, args);
    run.code(2).stderr_has(needles);
    assert!(run.stderr.starts_with("Error:") || run.stderr.starts_with("error:"), "{}", run.stderr);
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "{name}: files left behind: {left:?}");
}

#[test]
fn unknown_names_list_the_valid_ones() {
    rejects(
        "sched",
        &with_tiny(&["--sched", "fastest", "--csv", "x.csv"]),
        &["`fastest`", "steal-half", "tokio", "all"],
    );
    rejects(
        "workload",
        &["--sched", "tokio", "--workload", "nap", "--csv", "x.csv"],
        &["`nap`", "yield-many", "rpc-fanout"],
    );
    rejects(
        "param",
        &with_tiny(&["--sched", "tokio", "--param", "colour=blue", "--csv", "x.csv"]),
        &["`colour`", "yield-many:tasks"],
    );
    rejects(
        "knob",
        &with_tiny(&["--sched", "steal-half", "--knob", "turbo=on", "--csv", "x.csv"]),
        &["`turbo`", "lifo", "steal"],
    );
    rejects(
        "knob-value",
        &with_tiny(&["--sched", "steal-half", "--knob", "lifo=maybe", "--csv", "x.csv"]),
        &["`maybe`", "on|off"],
    );
    rejects(
        "knob-reference",
        &with_tiny(&["--sched", "steal-half,tokio", "--knob", "lifo=off", "--csv", "x.csv"]),
        &["`tokio`", "reference"],
    );
    rejects(
        "knob-policy",
        &with_tiny(&["--sched", "global", "--knob", "lifo=off", "--csv", "x.csv"]),
        &["`lifo`", "`global`", "steal-half"],
    );
    rejects(
        "knob-combination",
        &with_tiny(&["--sched", "steal-half", "--knob", "lifo=off", "--knob", "lifo-steal=on", "--csv", "x.csv"]),
        &["combination", "`lifo-steal=on` needs `lifo=on`", "no LIFO slot"],
    );
    rejects(
        "knob-passes",
        &with_tiny(&["--sched", "bwos", "--knob", "steal-passes=0", "--csv", "x.csv"]),
        &["`0`", "steal-passes", "1..=64"],
    );
    for bad in ["8by16", "0x2", "2x0", "x", "3x"] {
        rejects(
            "topology",
            &with_tiny(&["--sched", "steal-half", "--workers", "2", "--topology", bad, "--csv", "x.csv"]),
            &["--topology", &format!("`{bad}`"), "GROUPSxSIZE", "8x16"],
        );
    }
    rejects(
        "topology-workers",
        &with_tiny(&["--sched", "steal-half", "--workers", "2,4", "--topology", "2x1", "--csv", "x.csv"]),
        &["--topology", "`2x1`", "groups 2 workers", "includes 4", "GROUPS x SIZE equal to every --workers value"],
    );
    rejects("baseline", &with_tiny(&["--sched", "steal-half", "--baseline-sched", "tokyo"]), &["`tokyo`", "tokio"]);
    rejects(
        "slo",
        &with_tiny(&["--sched", "steal-half", "--workload", "rpc-fanout", "--slo", "p42<1ms"]),
        &["`p42`", "p99"],
    );
}

#[test]
fn bad_worker_lists_and_ranges() {
    rejects(
        "workers0",
        &with_tiny(&["--sched", "steal-half", "--workers", "0", "--csv", "x.csv"]),
        &["--workers", "0", "at least 1"],
    );
    rejects("workers-range0", &with_tiny(&["--sched", "steal-half", "--workers", "0..=4"]), &["`0..=4`", "at least 1"]);
    rejects("open-range", &with_tiny(&["--sched", "steal-half", "--workers", "1.."]), &["`1..`", "1..=128:pow2"]);
    rejects("empty-range", &with_tiny(&["--sched", "steal-half", "--workers", "8..=2"]), &["`8..=2`", "empty"]);
    rejects("empty-item", &with_tiny(&["--sched", "steal-half", "--workers", "1,,2"]), &["`1,,2`"]);
    rejects("bad-step", &with_tiny(&["--sched", "steal-half", "--workers", "1..=8:pow3"]), &["`:pow3`", ":pow2"]);
    rejects("word", &with_tiny(&["--sched", "steal-half", "--workers", "many"]), &["`many`"]);
    rejects(
        "rate0",
        &with_tiny(&["--sched", "steal-half", "--workload", "rpc-fanout", "--rate", "0,100"]),
        &["--rate", "0"],
    );
    rejects(
        "rate-closed",
        &with_tiny(&["--sched", "steal-half", "--rate", "100"]),
        &["--rate", "open-loop", "rpc-fanout"],
    );
    rejects(
        "duration",
        &["--sched", "steal-half", "--workload", "yield-many", "--duration", "soon"],
        &["`soon`", "500ms"],
    );
}

#[test]
fn current_thread_with_more_workers_is_an_error_when_it_is_the_only_cell() {
    rejects(
        "ct",
        &with_tiny(&["--sched", "current-thread", "--workers", "4", "--csv", "x.csv"]),
        &["current-thread", "4 workers", "exactly 1"],
    );
}

#[test]
fn output_paths_are_checked_before_anything_runs() {
    rejects(
        "csv-dir",
        &with_tiny(&["--sched", "steal-half", "--csv", "missing/dir/x.csv"]),
        &["missing/dir", "does not exist"],
    );
    rejects(
        "json-dir",
        &with_tiny(&["--sched", "steal-half", "--json", "missing/x.json"]),
        &["missing", "does not exist"],
    );
    rejects(
        "md-dir",
        &with_tiny(&["--sched", "steal-half", "--markdown", "missing/x.md"]),
        &["missing", "does not exist"],
    );
}

#[test]
fn a_read_only_directory_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("readonly");
    let locked = dir.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(locked.join("probe"), b"").is_ok() {
        // Running as root: permissions do not bind, so there is nothing to test.
        eprintln!("skipped: this user can write into a read-only directory");
        return;
    }
    let run = wsbench_in(&dir, &with_tiny(&["--sched", "steal-half", "--csv", "locked/x.csv"]));
    run.failed().stderr_has(&["locked/x.csv"]);
    assert!(!Path::new(&locked.join("x.csv")).exists());
}

#[test]
fn an_existing_csv_with_another_header_is_left_alone() {
    let dir = scratch("schema");
    let foreign = "schema_version,when,what\n0,yesterday,something\n";
    std::fs::write(dir.join("old.csv"), foreign).unwrap();
    let run = wsbench_in(&dir, &with_tiny(&["--sched", "steal-half", "--csv", "old.csv"]));
    run.failed().stderr_has(&["refusing to append", "old.csv", "column 2 is `when`, expected `timestamp`"]);
    assert_eq!(std::fs::read_to_string(dir.join("old.csv")).unwrap(), foreign, "file untouched");
    assert!(run.stdout.is_empty(), "nothing ran:\n{}", run.stdout);
}

#[test]
fn malformed_numbers_name_the_option_and_exit_2() {
    rejects("workers-neg", &with_tiny(&["--sched", "steal-half", "--workers", "-1"]), &["--workers", "`-1`"]);
    rejects("runs-word", &with_tiny(&["--sched", "steal-half", "--runs", "abc"]), &["--runs", "`abc`", "1..=1000"]);
    rejects("runs-huge", &["--sched", "steal-half", "--runs", "100000"], &["--runs", "100000", "1..=1000"]);
    rejects(
        "runs-open-loop-zero",
        &["--sched", "steal-half", "--runs-open-loop", "0"],
        &["--runs-open-loop", "0", "1..=1000"],
    );
    rejects("seed-neg", &with_tiny(&["--sched", "steal-half", "--seed", "-3"]), &["--seed", "`-3`"]);
    rejects(
        "rate-neg",
        &with_tiny(&["--sched", "steal-half", "--workload", "rpc-fanout", "--rate", "-5"]),
        &["--rate", "`-5`"],
    );
    rejects("duration-neg", &["--sched", "steal-half", "--duration", "-1s"], &["--duration", "`-1s`"]);
}

#[test]
fn durations_and_chart_sizes_are_bounded() {
    let huge = "10000000000000000000s";
    rejects(
        "duration-huge",
        &["--sched", "steal-half", "--workload", "yield-many", "--duration", huge],
        &["--duration", huge, "too long", "up to 86400s"],
    );
    rejects(
        "warmup-huge",
        &["--sched", "steal-half", "--workload", "yield-many", "--warmup", huge],
        &["--warmup", huge, "too long", "up to 86400s"],
    );
    rejects("timeout-huge", &with_tiny(&["--sched", "steal-half", "--timeout", huge]), &["--timeout", "up to 604800s"]);
    let dir = common::scratch("plot-size");
    for (option, value) in [("--width", "100000"), ("--height", "100000"), ("--width", "0"), ("--height", "-5")] {
        let run = wsbench_in(&dir, &["plot", "none.csv", "--out", "charts", option, value]);
        run.code(2).stderr_has(&[option, value, "320..=4096"]);
    }
    assert!(!dir.join("charts").exists());
}

#[test]
fn a_timeout_shorter_than_a_run_is_refused() {
    rejects(
        "timeout-short",
        &[
            "--sched",
            "steal-half",
            "--workload",
            "yield-many",
            "--duration",
            "1s",
            "--warmup",
            "100ms",
            "--timeout",
            "1s",
        ],
        &["--timeout `1s`", "warm-up + duration (1.100s)", "more than 1.100s"],
    );
}
