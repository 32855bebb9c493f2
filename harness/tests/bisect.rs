//! `wsbench bisect`: every malformed range and cell is a named error (exit
//! 2, nothing built or run); `--dry-run` lists the points; and the search
//! over a planted repository, in a short form: a git repository of 8
//! commits whose binaries are already in the bisect's cache (the real
//! wsbench, behind a wrapper per commit), so nothing is compiled but every
//! step is real runs of the real binary. The planted slowdown of the
//! short form is the bad commits' wrapper handing its runs three times the
//! yields per task (through the harness's child hook), so yield-many's
//! throughput drops to about a third on any machine. One commit has no cached binary and
//! a malformed Cargo.toml, so cargo really fails to build it and it is skipped.
//! The full form, 8 real commits of this workspace with a spin planted in
//! a policy's hot path, is `scripts/bisect-planted.sh` (nightly).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{scratch, wsbench_env, wsbench_in, Run};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=wsbench", "-c", "user.email=wsbench@example.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository of `n` commits `c0..c{n-1}` (one text file each); their
/// full shas in order.
fn repo(dir: &Path, n: usize) -> Vec<String> {
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
    // A manifest cargo refuses at once: a commit without a cached build
    // fails to build in a moment (and cargo does not look further up).
    std::fs::write(dir.join("Cargo.toml"), "not a manifest\n").unwrap();
    (0..n)
        .map(|i| {
            std::fs::write(dir.join(format!("c{i}.txt")), format!("commit {i}\n")).unwrap();
            git(dir, &["add", "-A"]);
            git(dir, &["commit", "-q", "-m", &format!("c{i}")]);
            git(dir, &["rev-parse", "HEAD"])
        })
        .collect()
}

const CELL: [&str; 6] = ["--sched", "steal-half", "--workers", "2", "--workload", "yield-many"];

fn bisect(dir: &Path, good: &str, bad: &str, extra: &[&str]) -> Run {
    let mut args = vec!["bisect", "--good", good, "--bad", bad];
    args.extend(CELL);
    args.extend(extra);
    wsbench_in(dir, &args)
}

fn rejected(run: &Run, needles: &[&str]) {
    run.code(2).stderr_has(needles);
    assert!(run.stdout.is_empty(), "nothing measured: {}", run.stdout);
}

#[test]
fn a_cell_of_several_cells_is_a_named_error() {
    let dir = scratch("bisect-cells");
    let run = |args: &[&str]| {
        let mut all = vec!["bisect", "--good", "a", "--bad", "b"];
        all.extend(args);
        wsbench_in(&dir, &all)
    };
    rejected(
        &run(&["--sched", "steal-half,global", "--workload", "yield-many"]),
        &["--sched `steal-half,global` names several schedulers"],
    );
    rejected(&run(&["--sched", "all", "--workload", "yield-many"]), &["--sched `all` names several schedulers"]);
    rejected(&run(&["--sched", "steal-half", "--workload", "yield-many,ping-pong"]), &["names several workloads"]);
    rejected(
        &run(&["--sched", "steal-half", "--workload", "default"]),
        &["--workload `default` names several workloads"],
    );
    rejected(
        &run(&["--sched", "steal-half", "--workload", "yield-many", "--workers", "1,2"]),
        &["--workers `1,2` names 2 cells"],
    );
    rejected(
        &run(&["--sched", "steal-half", "--workload", "yield-many", "--knob", "lifo=on,off"]),
        &["--knob `lifo=on,off` names 2 cells"],
    );
    rejected(&run(&["--sched", "nope", "--workload", "yield-many"]), &["nope"]);
    rejected(
        &run(&["--sched", "tokio@1.50.0", "--workload", "yield-many"]),
        &["--sched `tokio@1.50.0`", "--good 1.49.0 --bad 1.52.1"],
    );
}

#[test]
fn a_malformed_range_of_commits_is_a_named_error() {
    let dir = scratch("bisect-range");
    let shas = repo(&dir, 4);
    rejected(&bisect(&dir, "nosuchref", &shas[3], &[]), &["--good `nosuchref` is not a commit of"]);
    rejected(&bisect(&dir, &shas[0], "nosuchref", &[]), &["--bad `nosuchref` is not a commit of"]);
    rejected(&bisect(&dir, &shas[2], &shas[2], &[]), &["are the same commit"]);
    rejected(&bisect(&dir, "HEAD", &shas[2], &[]), &["--good `HEAD` comes after --bad"]);
    rejected(&bisect(&dir, &shas[1], &shas[2], &[]), &["no commit lies between", &shas[2]]);
    git(&dir, &["checkout", "-q", "-b", "side", &shas[1]]);
    std::fs::write(dir.join("side.txt"), "x").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "side"]);
    rejected(&bisect(&dir, "side", &shas[3], &[]), &["--good `side` is not an ancestor of --bad"]);
    // Versions with the other end a commit.
    let mut args = vec!["bisect", "--good", "1.49.0", "--bad", "main", "--sched", "tokio", "--workload", "yield-many"];
    args.extend(["--workers", "2"]);
    rejected(&wsbench_in(&dir, &args), &["--bad `main` is not an exact version"]);
}

#[test]
fn outside_a_git_repository_is_a_named_error() {
    let dir = scratch("bisect-nogit");
    let parent = dir.parent().unwrap().display().to_string();
    let mut args = vec!["bisect", "--good", "a", "--bad", "b"];
    args.extend(CELL);
    let run = wsbench_env(&dir, &args, &[("GIT_CEILING_DIRECTORIES", &parent)]);
    rejected(&run, &["is not in a git repository", "--sched tokio|tokio-current|smol"]);
}

#[test]
fn a_dry_run_lists_the_points_and_the_estimate() {
    let dir = scratch("bisect-dry");
    let shas = repo(&dir, 8);
    let run = bisect(&dir, &shas[0], &shas[7], &["--dry-run", "--max-runs", "20"]);
    run.ok().stdout_has(&[
        "bisect commits",
        "6 between",
        "throughput_per_s",
        "estimate: 4 A/B steps at most (the ends + 3)",
        "5..20 pairs",
        "8 of 8 points not built yet",
        "dry run: nothing built or run",
    ]);
    for (i, sha) in shas.iter().enumerate() {
        let role = match i {
            0 => " (good)",
            3 => " (first midpoint)",
            7 => " (bad)",
            _ => "",
        };
        let line = format!("{i:>4}  {} c{i}{role}\n", &sha[..10]);
        assert!(run.stdout.contains(&line), "lacks `{line}`:\n{}", run.stdout);
    }
    assert!(!dir.join("target").exists(), "a dry run builds nothing");
}

/// The spec filter of the bad commits' runs: three times the yields per
/// task (the spec's parameters are empty in the short form's cell).
const TRIPLE_YIELDS: &str = r#"s/"params":\[\]/"params":[["yields","3000"]]/"#;

fn script(path: &Path, text: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{text}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Caches a wrapper of the real binary as commit `sha`'s build. A bad
/// one starts its own runs through a filter (`WSBENCH_CHILD_EXE`, the
/// harness's child hook) that hands them three times the work; the runs
/// of the good end (the base side) are never filtered.
fn cache_build(dir: &Path, sha: &str, bad: bool) {
    let bins = dir.join("target/wsbench-bisect/bin");
    std::fs::create_dir_all(&bins).unwrap();
    let real = env!("CARGO_BIN_EXE_wsbench");
    let filter = dir.join("slower-child.sh");
    script(&filter, &format!("unset WSBENCH_CHILD_EXE\nsed '{TRIPLE_YIELDS}' | {real} \"$@\""));
    let path: PathBuf = bins.join(sha);
    if bad {
        script(&path, &format!("export WSBENCH_CHILD_EXE={}\nexec {real} \"$@\"", filter.display()));
    } else {
        script(&path, &format!("unset WSBENCH_CHILD_EXE\nexec {real} \"$@\""));
    }
}

const SHORT_RUNS: [&str; 4] = ["--duration", "200ms", "--warmup", "50ms"];

#[test]
fn the_planted_commit_is_found_and_the_commit_that_does_not_build_is_skipped() {
    let dir = scratch("bisect-planted");
    let shas = repo(&dir, 8);
    for (i, sha) in shas.iter().enumerate() {
        match i {
            5 => {} // no build cached: cargo fails on the manifest
            4.. => cache_build(&dir, sha, true),
            _ => cache_build(&dir, sha, false),
        }
    }
    let json = dir.join("bisect.json");
    let mut extra = SHORT_RUNS.to_vec();
    extra.extend(["--max-runs", "10", "--json", json.to_str().unwrap()]);
    let run = bisect(&dir, &shas[0], &shas[7], &extra);
    run.ok().stdout_has(&[&format!("first bad: {} c4", &shas[4][..10]), "does not build"]);
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let steps: Vec<(String, String)> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["point"].as_str().unwrap().to_string(), s["call"].as_str().unwrap().to_string()))
        .collect();
    let step = |i: usize, call: &str| (shas[i][..10].to_string(), call.to_string());
    assert_eq!(steps, [step(7, "reproduced"), step(3, "good"), step(5, "skipped"), step(4, "bad")]);
    assert_eq!(doc["result"], "found");
    assert_eq!(doc["first_bad"], shas[4][..10]);
    assert!(dir.join("target/wsbench-bisect/bin").join(format!("{}.failed", shas[5])).is_file());
}

#[test]
fn a_range_without_a_regression_is_not_reproduced() {
    let dir = scratch("bisect-none");
    let shas = repo(&dir, 4);
    for sha in &shas {
        cache_build(&dir, sha, false);
    }
    let mut extra = SHORT_RUNS.to_vec();
    extra.extend(["--max-runs", "5", "--alpha", "0.01"]);
    let run = bisect(&dir, &shas[0], &shas[3], &extra);
    run.code(1).stdout_has(&["not reproduced: the gate finds no significant change of throughput_per_s", "at 5 pairs"]);
}
