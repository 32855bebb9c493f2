//! `history add|list|detect` and `report` on hand-made nightly series.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::{scratch, wsbench_in};
use wsbench::internals::record::SCHEMA_VERSION;

const HEADER: &str =
    "schema_version,timestamp,git_sha,host,cpu_model,logical_cpus,scheduler,workers,workload,knobs,run,duration_s,ops,\
throughput_per_s,offered_per_s,p50_us,p90_us,p99_us,p999_us,max_us,mean_us,status,cpu_us_per_op,extras";

/// One night: 5 runs of two cells; `level` scales steal-half x2's
/// throughput (latencies follow 1/throughput); `wobble` is that night's
/// deterministic noise in [-1, 1].
fn night(schema: u32, day: usize, sha: &str, level: f64, wobble: f64) -> String {
    let mut out = format!("{HEADER}\n");
    for (sched, base) in [("steal-half", 1000.0), ("global", 500.0)] {
        for run in 0..5 {
            let scale = if sched == "steal-half" { level } else { 1.0 };
            let t = base * scale * (1.0 + 0.01 * wobble + 0.002 * run as f64);
            let p50 = 1e6 / t;
            // An A/B session number that differs every night, the night's
            // settings (the seed changes at night 7) and one measured
            // extra: only the last is a series.
            let extras = format!(
                "ab_session={};ab_order={};setting_duration_s=1;setting_warmup_s=0.2;setting_seed={};ns_per_task={}",
                1_000 + day * 7_919,
                run % 2,
                if day < 7 { 42 } else { 43 },
                2.0 / scale
            );
            let _ = writeln!(
                out,
                "{schema},2026-01-{:02}T02:17:00Z,{sha},night-host,cpu-x,2,{sched},2,yield-many,,{run},1.0,{},{t},,{p50},{},{},{},{},{p50},ok,{},{extras}",
                day + 1,
                t.round(),
                p50 * 1.5,
                p50 * 2.0,
                p50 * 3.0,
                p50 * 5.0,
                2.0 / scale,
            );
        }
    }
    out
}

/// Night `i`'s noise: a fixed pseudo-random sequence in [-1, 1].
fn wobble(i: usize) -> f64 {
    const PATTERN: [f64; 7] = [0.3, -0.8, 0.9, -0.2, 0.5, -0.6, 0.0];
    PATTERN[i % PATTERN.len()]
}

/// Writes `nights` run directories; from night `drop_at` on, steal-half's
/// throughput is multiplied by `level`.
fn nights(dir: &Path, count: usize, drop_at: usize, level: f64) -> Vec<String> {
    (0..count)
        .map(|i| {
            let name = format!("night{i:02}");
            std::fs::create_dir_all(dir.join(&name)).unwrap();
            let l = if i >= drop_at { level } else { 1.0 };
            std::fs::write(
                dir.join(&name).join("results.csv"),
                night(SCHEMA_VERSION, i, &format!("sha{i:02}aaaaaaaa"), l, wobble(i)),
            )
            .unwrap();
            name
        })
        .collect()
}

fn add_all(dir: &Path, names: &[String]) -> common::Run {
    let mut args = vec!["history", "add", "--db", "h.sqlite"];
    args.extend(names.iter().map(String::as_str));
    wsbench_in(dir, &args)
}

#[test]
fn adding_twice_changes_nothing_and_list_shows_one_line_per_run() {
    let dir = scratch("hist-add");
    let names = nights(&dir, 3, usize::MAX, 1.0);
    add_all(&dir, &names).ok().stdout_has(&["added run 1", "added run 2", "added run 3", "(2 cells, 10 runs)"]);
    let before = std::fs::read(dir.join("h.sqlite")).unwrap();
    add_all(&dir, &names).ok().stdout_has(&["already held as run 1", "already held as run 3"]);
    assert_eq!(std::fs::read(dir.join("h.sqlite")).unwrap(), before, "a second add changed the database");
    let list = wsbench_in(&dir, &["history", "list", "--db", "h.sqlite"]);
    list.ok().stdout_has(&["3 run(s)", "schema version 3", "sha00aaaaaaa", "night-host", "cpu-x (2 CPUs)"]);
    let lines: Vec<&str> = list.stdout.lines().filter(|l| l.contains("night-host")).collect();
    assert_eq!(lines.len(), 3, "{}", list.stdout);
    assert!(lines[0].contains("2026-01-01") && lines[2].contains("2026-01-03"), "oldest first: {lines:?}");
}

#[test]
fn foreign_files_and_other_schema_versions_are_refused_and_add_nothing() {
    let dir = scratch("hist-refuse");
    let names = nights(&dir, 1, usize::MAX, 1.0);
    std::fs::write(dir.join("foreign.csv"), "name,score\nbob,3\n").unwrap();
    wsbench_in(&dir, &["history", "add", "--db", "h.sqlite", &names[0], "foreign.csv"])
        .code(2)
        .stderr_has(&["refusing `foreign.csv`", "missing column `schema_version`"]);
    assert!(!dir.join("h.sqlite").exists(), "a refused add created the database");
    let other = SCHEMA_VERSION + 1;
    std::fs::write(dir.join("newer.csv"), night(other, 0, "x", 1.0, 0.0)).unwrap();
    wsbench_in(&dir, &["history", "add", "--db", "h.sqlite", "newer.csv"])
        .code(2)
        .stderr_has(&[&format!("has schema_version {other}"), &format!("stores {SCHEMA_VERSION}")]);
    std::fs::create_dir_all(dir.join("empty-dir")).unwrap();
    wsbench_in(&dir, &["history", "add", "--db", "h.sqlite", "empty-dir"])
        .code(2)
        .stderr_has(&["without a results.csv"]);
    std::fs::write(dir.join("not.sqlite"), "this is not a database, just text long enough to be read as a header...")
        .unwrap();
    wsbench_in(&dir, &["history", "add", "--db", "not.sqlite", &names[0]]).code(2).stderr_has(&["not.sqlite"]);
    wsbench_in(&dir, &["history", "list", "--db", "missing.sqlite"])
        .code(2)
        .stderr_has(&["no history at `missing.sqlite`"]);
}

#[test]
fn detect_finds_the_commit_where_a_drop_starts_and_fails_the_gate() {
    let dir = scratch("hist-drop");
    let names = nights(&dir, 20, 12, 0.8);
    add_all(&dir, &names).ok();
    let run = wsbench_in(&dir, &["history", "detect", "--db", "h.sqlite", "--json", "cp.json"]);
    run.code(1).stderr_has(&["series end in a regression"]).stdout_has(&["regression (newest)", "sha12aaaaa"]);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("cp.json")).unwrap()).unwrap();
    let found = json["found"].as_array().unwrap();
    // steal-half's five metrics each change at night 12; global never does.
    assert_eq!(found.len(), 5, "{json:#}");
    for f in found {
        assert_eq!(f["cell"]["scheduler"], "steal-half", "{f:#}");
        assert_eq!(f["first"]["git_sha"], "sha12aaaaaaaa", "{f:#}");
        assert_eq!(f["last_before"]["git_sha"], "sha11aaaaaaaa", "{f:#}");
        assert_eq!(f["kind"], "regression", "{f:#}");
        assert!(f["change"]["p_value"].as_f64().unwrap() < 0.01, "{f:#}");
    }
    let throughput = found.iter().find(|f| f["metric"] == "throughput_per_s").unwrap();
    let size = throughput["relative_change"].as_f64().unwrap();
    assert!((size + 0.2).abs() < 0.01, "{size}");
    // A column the history has never been told about is a metric too.
    wsbench_in(&dir, &["history", "detect", "--db", "h.sqlite", "--metric", "cpu_us_per_op"])
        .code(1)
        .stdout_has(&["cpu_us_per_op", "+25.0%"]);
}

#[test]
fn an_improvement_or_noise_passes_the_gate() {
    let dir = scratch("hist-up");
    let names = nights(&dir, 20, 12, 1.25);
    add_all(&dir, &names).ok();
    wsbench_in(&dir, &["history", "detect", "--db", "h.sqlite"])
        .ok()
        .stdout_has(&["improvement (newest)", "sha12aaaaa"]);

    let dir = scratch("hist-flat");
    let names = nights(&dir, 14, usize::MAX, 1.0);
    add_all(&dir, &names).ok();
    wsbench_in(&dir, &["history", "detect", "--db", "h.sqlite"]).ok().stdout_has(&["**0 change point(s) in 10 series"]);
    // Every stored metric: the CSV's 10 numeric columns and `ns_per_task`,
    // per cell; the A/B pairing and the settings in `extras` are not
    // series (the session number changes every night).
    let all = wsbench_in(&dir, &["history", "detect", "--db", "h.sqlite", "--metric", "all", "--json", "all.json"]);
    all.ok().stdout_has(&["**0 change point(s) in 22 series"]);
    let doc = std::fs::read_to_string(dir.join("all.json")).unwrap();
    for key in ["ab_session", "ab_order", "setting_seed", "setting_duration_s"] {
        assert!(!doc.contains(key), "{key} was stored as a measurement");
    }
}

#[test]
fn detect_refuses_unusable_input() {
    let dir = scratch("hist-bad");
    wsbench_in(&dir, &["history", "detect", "--db", "none.sqlite"]).code(2).stderr_has(&["no history at"]);
    let names = nights(&dir, 2, usize::MAX, 1.0);
    add_all(&dir, &names).ok();
    wsbench_in(&dir, &["history", "detect", "--db", "h.sqlite", "--p-value", "2"]).code(2).stderr_has(&[
        "--p-value",
        "`2` is out of range",
        "between 0 and 1",
    ]);
    wsbench_in(&dir, &["history", "detect", "--db", "h.sqlite", "--min-size", "1"])
        .code(2)
        .stderr_has(&["--min-size", "1 is out of range; allowed: 2..=1000"]);
    wsbench_in(&dir, &["history", "detect", "--db", "h.sqlite", "--metric", "nope"])
        .code(2)
        .stderr_has(&["no values of nope"]);
    // Two nights cannot hold a change point: no regression, exit 0.
    wsbench_in(&dir, &["history", "detect", "--db", "h.sqlite"]).ok().stdout_has(&["10 series have fewer than 6 runs"]);
}
