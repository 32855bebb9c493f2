//! Each run in a fresh child process: crashes, hangs, garbage on the result
//! channel and a child that cannot start all become failed rows with a
//! clear reason, and the matrix goes on.

mod common;

use std::path::Path;

use common::{col, read_csv, scratch, wsbench_env, wsbench_in, Run};

const SHORT: &[&str] = &["--duration", "50ms", "--warmup", "10ms"];
const TINY: &[&str] = &["--param", "tasks=20", "--param", "yields=50"];

fn run(dir: &Path, workloads: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let mut args = vec!["--sched", "steal-half", "--workers", "1", "--workload", workloads, "--runs", "2"];
    args.extend(TINY);
    args.extend(SHORT);
    args.extend(["--csv", "out.csv"]);
    args.extend(extra);
    wsbench_env(dir, &args, env)
}

/// (workload, status, error) of every row.
fn rows(dir: &Path) -> Vec<(String, String, String)> {
    let (header, rows) = read_csv(&dir.join("out.csv"));
    rows.iter()
        .map(|r| {
            let c = |n| col(&header, r, n).to_string();
            (c("workload"), c("status"), c("error"))
        })
        .collect()
}

#[test]
fn a_crash_is_a_failed_row_with_the_signal_and_stderr_and_the_matrix_goes_on() {
    let dir = scratch("crash");
    run(&dir, "crash,yield-many", &[], &[]).ok();
    let rows = rows(&dir);
    let crash: Vec<_> = rows.iter().filter(|r| r.0 == "crash").collect();
    assert_eq!(crash.len(), 2, "a crash does not skip the cell's other runs: {rows:?}");
    for (_, status, error) in crash {
        assert_eq!(status, "failed");
        assert!(error.contains("killed by signal 6 (SIGABRT)"), "{error}");
        assert!(error.contains("stderr"), "{error}");
    }
    let after: Vec<_> = rows.iter().filter(|r| r.0 == "yield-many").collect();
    assert_eq!(after.len(), 2, "{rows:?}");
    assert!(after.iter().all(|r| r.1 == "ok"), "{rows:?}");
}

#[test]
fn crash_is_refused_in_process() {
    let dir = scratch("crash-in-process");
    run(&dir, "crash,yield-many", &["--in-process"], &[]).code(2).stderr_has(&["`crash`", "--in-process"]);
    assert!(!dir.join("out.csv").exists(), "refused before anything ran");
}

#[test]
fn a_hung_child_is_killed_and_nothing_is_abandoned() {
    let dir = scratch("hang-child");
    // The watchdog applies to the yield-many runs too: 10 s is 100x what
    // one (a child process, 60 ms of work) takes, however loaded the machine.
    let out = run(&dir, "hang,yield-many", &["--timeout", "10s"], &[]);
    out.ok();
    let rows = rows(&dir);
    let hang: Vec<_> = rows.iter().filter(|r| r.0 == "hang").collect();
    assert_eq!(hang.len(), 1, "the cell stops after its first hung run: {rows:?}");
    assert!(hang[0].2.contains("watchdog: no result after 10.0s; the run's child process was killed"), "{hang:?}");
    assert!(rows.iter().filter(|r| r.0 == "yield-many").all(|r| r.1 == "ok"));
    assert!(!out.stdout.contains("abandoned"), "{}", out.stdout);
}

#[test]
fn a_child_that_cannot_start_is_a_failed_row() {
    let dir = scratch("no-child");
    let out = run(&dir, "yield-many", &[], &[("WSBENCH_CHILD_EXE", "/nonexistent/wsbench-child")]);
    out.code(1).stderr_has(&["every run failed"]);
    let rows = rows(&dir);
    assert_eq!(rows.len(), 2);
    for (_, status, error) in &rows {
        assert_eq!(status, "failed");
        assert!(error.contains("could not start the run's child process `/nonexistent/wsbench-child`"), "{error}");
    }
}

fn script(dir: &Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn garbage_on_the_result_channel_is_a_failed_row() {
    let dir = scratch("garbage");
    let exe = script(&dir, "garbage.sh", "cat >/dev/null; echo 'hello, I am not a result'");
    run(&dir, "yield-many", &[], &[("WSBENCH_CHILD_EXE", &exe)]).code(1);
    for (_, status, error) in rows(&dir) {
        assert_eq!(status, "failed");
        assert!(error.contains("garbage on the result channel"), "{error}");
        assert!(error.contains("is not `wsbench-run-result VERSION LENGTH`"), "{error}");
    }
}

#[test]
fn a_child_killed_like_the_oom_killer_does_is_a_failed_row() {
    let dir = scratch("sigkill");
    let exe = script(&dir, "oom.sh", "cat >/dev/null; echo 'allocating' >&2; kill -9 $$");
    run(&dir, "yield-many", &[], &[("WSBENCH_CHILD_EXE", &exe)]).code(1);
    for (_, status, error) in rows(&dir) {
        assert_eq!(status, "failed");
        assert!(error.contains("killed by signal 9 (SIGKILL; the kernel's OOM killer"), "{error}");
        assert!(error.contains("last lines of its stderr: allocating"), "{error}");
    }
}

#[test]
fn child_runs_keep_seeds_pinning_and_interleaving() {
    let dir = scratch("child-matrix");
    let args = [
        &["--sched", "steal-half,tokio", "--workers", "1", "--workload", "yield-many", "--runs", "2"][..],
        TINY,
        SHORT,
        &["--interleave", "--pin", "--csv", "out.csv"],
    ]
    .concat();
    wsbench_in(&dir, &args).ok();
    let (header, rows) = read_csv(&dir.join("out.csv"));
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(col(&header, r, "status"), "ok", "{r:?}");
        assert_eq!(col(&header, r, "pinned"), "true", "{r:?}");
        assert!(col(&header, r, "ops").parse::<u64>().unwrap() > 0);
    }
}
