//! `run --base-bin`: A/B in one invocation. Through the real binary: both
//! files get every cell and run, every row is marked with the one session
//! and its place in the pair (base first on even runs), `compare` judges the
//! two files as pairs, and bad input is refused naming the value.

mod common;

use std::path::Path;

use common::{col, read_csv, scratch, wsbench_in};

const PROGRAM: &str = env!("CARGO_BIN_EXE_wsbench");

fn rows(path: &Path) -> Vec<(String, usize, String)> {
    let (header, rows) = read_csv(path);
    rows.iter()
        .map(|r| {
            let cell = format!("{} x{}", col(&header, r, "scheduler"), col(&header, r, "workers"));
            let run: usize = col(&header, r, "run").parse().unwrap();
            (cell, run, col(&header, r, "extras").to_string())
        })
        .collect()
}

fn extra(extras: &str, key: &str) -> String {
    extras
        .split(';')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in `{extras}`"))
        .to_string()
}

/// A small A/B run, 2 cells x 3 runs, with `base_bin` as the base.
fn ab_run(dir: &Path, base_bin: &str, csv: &str, base_csv: &str, extra: &[&str]) -> common::Run {
    let mut args = vec![
        "--sched",
        "steal-half,tokio",
        "--workers",
        "1",
        "--workload",
        "yield-many",
        "--param",
        "tasks=8",
        "--param",
        "yields=20",
        "--duration",
        "60ms",
        "--warmup",
        "10ms",
        "--runs",
        "3",
        "--quiet",
        "--csv",
        csv,
        "--base-bin",
        base_bin,
        "--base-csv",
        base_csv,
    ];
    args.extend_from_slice(extra);
    wsbench_in(dir, &args)
}

#[test]
fn every_run_is_made_by_both_programs_in_pairs_that_compare_judges_as_pairs() {
    let dir = scratch("ab-pairs");
    let run = ab_run(&dir, PROGRAM, "current.csv", "base.csv", &["--base-sha", "abc123"]);
    run.ok().stdout_has(&["A/B:", "base.csv", "wsbench compare base.csv current.csv"]);
    let (base, current) = (rows(&dir.join("base.csv")), rows(&dir.join("current.csv")));
    assert_eq!(base.len(), 6, "2 cells x 3 runs");
    assert_eq!(current.len(), 6);
    let session = extra(&base[0].2, "ab_session");
    for (side, rows, first_on_even) in [("base", &base, "0"), ("current", &current, "1")] {
        for (cell, run, extras) in rows.iter() {
            assert_eq!(extra(extras, "ab_session"), session, "{side} {cell} run {run}");
            let expected = if run % 2 == 0 {
                first_on_even
            } else if first_on_even == "0" {
                "1"
            } else {
                "0"
            };
            assert_eq!(extra(extras, "ab_order"), expected, "{side} {cell} run {run}");
        }
    }
    let cells = |rows: &[(String, usize, String)]| {
        let mut v: Vec<(String, usize)> = rows.iter().map(|(c, r, _)| (c.clone(), *r)).collect();
        v.sort();
        v
    };
    assert_eq!(cells(&base), cells(&current));
    let (header, base_rows) = read_csv(&dir.join("base.csv"));
    assert!(base_rows.iter().all(|r| col(&header, r, "git_sha") == "abc123"));

    wsbench_in(&dir, &["compare", "base.csv", "current.csv", "--json", "cmp.json", "--out", "cmp.md"]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cmp.json")).unwrap()).unwrap();
    assert_eq!(json["pairing"], "paired");
    let comparisons = json["comparisons"].as_array().unwrap();
    assert!(!comparisons.is_empty());
    for c in comparisons {
        assert_eq!(c["paired"], true, "{c}");
        // Throughput is measured in every run; a percentile only where the
        // run's samples support it (blank otherwise, and left out).
        if c["metric"] == "throughput_per_s" {
            assert_eq!(c["runs"], serde_json::json!([3, 3]), "{c}");
        } else {
            let runs = c["runs"].as_array().unwrap();
            assert!(runs.iter().all(|r| (1..=3).contains(&r.as_u64().unwrap())), "{c}");
        }
    }
    let md = std::fs::read_to_string(dir.join("cmp.md")).unwrap();
    assert!(md.contains("paired runs of one A/B invocation") && md.contains("one-sample t-test"), "{md}");

    // Two files of different invocations are not pairs.
    ab_run(&dir, PROGRAM, "current2.csv", "base2.csv", &[]).ok();
    wsbench_in(&dir, &["compare", "base.csv", "current2.csv", "--json", "cmp2.json", "--out", "cmp2.md"]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cmp2.json")).unwrap()).unwrap();
    assert_eq!(json["pairing"], "independent");
    assert!(json["warnings"].to_string().contains("different ones"), "{}", json["warnings"]);
}

#[test]
fn a_bad_base_is_refused_naming_it() {
    let dir = scratch("ab-bad");
    let tiny = ["--sched", "tokio", "--workload", "yield-many", "--duration", "20ms", "--warmup", "0", "--runs", "1"];
    fn with<'a>(tiny: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        tiny.iter().chain(extra).copied().collect()
    }
    wsbench_in(&dir, &with(&tiny, &["--base-bin", "/no/such/wsbench", "--base-csv", "b.csv"]))
        .code(2)
        .stderr_has(&["/no/such/wsbench", "cannot be read"]);
    let not_a_program = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    wsbench_in(&dir, &with(&tiny, &["--base-bin", not_a_program, "--base-csv", "b.csv"]))
        .code(2)
        .stderr_has(&[not_a_program, "not an executable"]);
    wsbench_in(&dir, &with(&tiny, &["--base-bin", PROGRAM])).code(2).stderr_has(&["--base-csv"]);
    wsbench_in(&dir, &with(&tiny, &["--base-bin", PROGRAM, "--base-csv", "b.csv", "--in-process"]))
        .code(2)
        .stderr_has(&["--in-process"]);
    wsbench_in(&dir, &with(&tiny, &["--base-bin", PROGRAM, "--base-csv", "same.csv", "--csv", "same.csv"]))
        .code(2)
        .stderr_has(&["same.csv"]);
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

#[test]
fn a_base_whose_every_run_failed_is_not_a_healthy_ab_run() {
    let dir = scratch("ab-base-fails");
    // `true` exits 0 without writing a result: every base run fails.
    let run = ab_run(&dir, "/bin/true", "current.csv", "base.csv", &[]);
    run.failed().stderr_has(&["every run of the base", "/bin/true", "base.csv"]);
    let (header, rows) = read_csv(&dir.join("base.csv"));
    assert!(rows.iter().all(|r| col(&header, r, "status") == "failed"), "{rows:?}");
    let (header, rows) = read_csv(&dir.join("current.csv"));
    assert!(rows.iter().all(|r| col(&header, r, "status") == "ok"), "the current side is kept: {rows:?}");
}

#[test]
fn the_second_stage_measures_only_the_regressed_cells_and_an_unjudged_regression_stands() {
    let dir = scratch("ab-confirm");
    ab_run(&dir, PROGRAM, "current.csv", "base.csv", &[]).ok();
    wsbench_in(&dir, &["compare", "base.csv", "current.csv", "--json", "first.json"]);
    // A first stage that found steal-half's throughput regressed: the real
    // report, with that one verdict set.
    let mut first: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("first.json")).unwrap()).unwrap();
    let mut set = 0;
    for c in first["comparisons"].as_array_mut().unwrap() {
        let regressed = c["cell"]["scheduler"] == "steal-half" && c["metric"] == "throughput_per_s";
        c["verdict"] = serde_json::json!(if regressed { "regressed" } else { "unchanged" });
        set += usize::from(regressed);
    }
    assert_eq!(set, 1);
    std::fs::write(dir.join("first.json"), first.to_string()).unwrap();

    ab_run(&dir, PROGRAM, "again.csv", "again-base.csv", &["--regressed-in", "first.json"]).ok();
    for file in ["again.csv", "again-base.csv"] {
        let cells: Vec<String> = rows(&dir.join(file)).into_iter().map(|(cell, _, _)| cell).collect();
        assert_eq!(cells, ["steal-half x1"; 3], "{file}: only the regressed cell, all its runs");
    }
    let second =
        wsbench_in(&dir, &["compare", "again-base.csv", "again.csv", "--confirms", "first.json", "--json", "c.json"]);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("c.json")).unwrap()).unwrap();
    let comparisons = json["comparisons"].as_array().unwrap();
    let regressed: Vec<&serde_json::Value> = comparisons.iter().filter(|c| c["verdict"] == "regressed").collect();
    // Identical code may or may not repeat the regression; whatever else
    // this stage finds is not one.
    assert!(regressed.iter().all(|c| c["metric"] == "throughput_per_s"), "{regressed:?}");
    assert_eq!(second.code, Some(if regressed.is_empty() { 0 } else { 1 }), "{}", second.stderr);
    let throughput = comparisons.iter().find(|c| c["metric"] == "throughput_per_s").unwrap();
    assert!(throughput["note"].as_str().unwrap().contains("confirmed"), "{throughput}");

    // A first-stage regression the second stage did not measure stands.
    for c in first["comparisons"].as_array_mut().unwrap() {
        if c["cell"]["scheduler"] == "tokio" && c["metric"] == "throughput_per_s" {
            c["verdict"] = serde_json::json!("regressed");
        }
    }
    std::fs::write(dir.join("first2.json"), first.to_string()).unwrap();
    wsbench_in(&dir, &["compare", "again-base.csv", "again.csv", "--confirms", "first2.json"]).code(1).stderr_has(&[
        "could not judge",
        "tokio x1 yield-many",
        "stands",
    ]);
    // Bad input names the value.
    wsbench_in(&dir, &["compare", "again-base.csv", "again.csv", "--confirms", "nope.json"])
        .code(2)
        .stderr_has(&["nope.json"]);
    for c in first["comparisons"].as_array_mut().unwrap() {
        c["verdict"] = serde_json::json!("unchanged");
    }
    std::fs::write(dir.join("none.json"), first.to_string()).unwrap();
    ab_run(&dir, PROGRAM, "x.csv", "x-base.csv", &["--regressed-in", "none.json"])
        .code(2)
        .stderr_has(&["none.json", "no regressed comparison"]);
}
