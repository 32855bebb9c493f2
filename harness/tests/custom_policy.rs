//! The out-of-tree path of the book's "Extending" (`docs/src/extending.md`): the
//! `custom_policy` example (a policy written with the public extension API
//! only, registered in its own `main`, then the whole wsbench CLI) runs the
//! issue's command, and its rows are measured like any other — also in the
//! child process the harness starts for each run, which re-runs the
//! example binary.

mod common;

use std::path::PathBuf;

use common::{col, program_env, read_csv, scratch};

/// `cargo test` (with no target filter, as CI runs it) builds the examples
/// next to the test binaries: `target/<profile>/examples/custom_policy`.
/// `cargo test --test custom_policy` alone does not: build the example
/// first (`cargo build --release -p wsbench --example custom_policy`), or
/// this runs whatever older copy is there.
fn example() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps/<test>");
    let path = profile_dir.join("examples").join("custom_policy");
    assert!(path.exists(), "{} not built (cargo test builds examples)", path.display());
    path
}

#[test]
fn custom_policy_example_runs_beside_ours_through_the_whole_cli() {
    let dir = scratch("custom-policy");
    let run = program_env(
        &example(),
        &dir,
        &[
            "--sched",
            "stack,steal-half",
            "--workers",
            "2",
            "--workload",
            "chained-spawn,rpc-fanout",
            "--runs",
            "1",
            "--duration",
            "150ms",
            "--warmup",
            "20ms",
            "--csv",
            "out.csv",
            "--quiet",
        ],
        &[],
    );
    run.ok().stdout_has(&["stack", "steal-half", "chained-spawn", "rpc-fanout"]);
    let (header, rows) = read_csv(&dir.join("out.csv"));
    assert_eq!(rows.len(), 4, "one run per cell: {rows:?}");
    for row in &rows {
        assert_eq!(col(&header, row, "status"), "ok", "{row:?}");
        let ops: f64 = col(&header, row, "ops").parse().expect("ops measured");
        assert!(ops > 0.0, "{row:?}");
    }
    let stack_rows = rows.iter().filter(|r| col(&header, r, "scheduler") == "stack").count();
    assert_eq!(stack_rows, 2);

    // The registered reference row runs too, and takes no knobs.
    let refs = program_env(
        &example(),
        &dir,
        &["--sched", "tokio-gqi31", "--workers", "2", "--workload", "chained-spawn", "--runs", "1"],
        &[],
    );
    refs.ok().stdout_has(&["tokio-gqi31", "chained-spawn"]);
    program_env(&example(), &dir, &["--sched", "tokio-gqi31", "--knob", "idle=park", "--workers", "2"], &[])
        .code(2)
        .stderr_has(&["tokio-gqi31", "no knobs"]);

    // `list` names it with its meaning; a knob it does not honour is a
    // usage error (exit 2) that names both.
    program_env(&example(), &dir, &["list"], &[]).ok().stdout_has(&[
        "stack",
        "one LIFO stack behind a mutex",
        "tokio-gqi31",
    ]);
    program_env(&example(), &dir, &["--sched", "stack", "--knob", "lifo=off", "--workers", "2"], &[])
        .code(2)
        .stderr_has(&["lifo", "stack"]);
}
