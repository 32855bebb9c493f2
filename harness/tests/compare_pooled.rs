//! `compare --hdr-dir` and `compare --plant` through the real binary: an A/B
//! run with `--hdr-dir` writes both sides' logs (the base's in `base/`);
//! with 16 pairs or more compare judges a latency percentile every run has
//! by the shift test on the per-run values, one the runs are too short for
//! on the added histograms, and with fewer pairs on the per-run values,
//! saying why;
//! `--plant` reports one verdict per cell; bad input is refused naming the
//! value. Only structure and counts are asserted, never a verdict that the
//! machine's noise could change.

mod common;

use std::path::Path;

use common::{scratch, wsbench_in};

const PROGRAM: &str = env!("CARGO_BIN_EXE_wsbench");

/// An rpc-fanout A/B of `scheds` x `runs` pairs of `duration`, both sides'
/// logs in `hdr/`.
fn ab_run(dir: &Path, scheds: &str, runs: &str, duration: &str) {
    wsbench_in(
        dir,
        &[
            "--sched",
            scheds,
            "--workers",
            "1",
            "--workload",
            "rpc-fanout",
            "--duration",
            duration,
            "--warmup",
            "10ms",
            "--runs",
            runs,
            "--quiet",
            "--csv",
            "current.csv",
            "--base-bin",
            PROGRAM,
            "--base-csv",
            "base.csv",
            "--hdr-dir",
            "hdr",
        ],
    )
    .ok();
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `compare base.csv current.csv` (with `--hdr-dir hdr` when `hdr`),
/// its report in `NAME.json`: the run and the report.
fn judged(dir: &Path, hdr: bool, name: &str) -> (common::Run, serde_json::Value) {
    let (json_path, md) = (format!("{name}.json"), format!("{name}.md"));
    let mut args = vec!["compare", "base.csv", "current.csv", "--json", &json_path, "--out", &md];
    if hdr {
        args.extend(["--hdr-dir", "hdr"]);
    }
    let run = wsbench_in(dir, &args);
    let report = json(&dir.join(&json_path));
    (run, report)
}

fn none_pooled(report: &serde_json::Value) -> bool {
    report["comparisons"].as_array().unwrap().iter().all(|c| c["pooled"] == false)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn latency_is_judged_on_both_sides_added_histograms() {
    let dir = scratch("pooled-judge");
    ab_run(&dir, "steal-half", "16", "40ms");
    let current = names(&dir.join("hdr"));
    assert_eq!(current.len(), 1, "{current:?}");
    assert_eq!(names(&dir.join("hdr/base")), current, "the base's logs have the current side's names");

    let (_, report) = judged(&dir, true, "c");
    assert_eq!(report["pairing"], "paired");
    let comparisons = report["comparisons"].as_array().unwrap();
    let latency = ["p50_us", "p90_us", "p99_us", "p999_us"];
    // A percentile every run of both sides has goes to the shift test on
    // the per-run values; one some runs are too short for, to the added
    // histograms.
    let every_run_has = |metric: &str| {
        ["base.csv", "current.csv"].iter().all(|f| {
            let mut rows = csv::Reader::from_path(dir.join(f)).unwrap();
            let col = rows.headers().unwrap().iter().position(|h| h == metric).unwrap();
            rows.records().all(|r| !r.unwrap()[col].is_empty())
        })
    };
    for c in comparisons {
        let metric = c["metric"].as_str().unwrap();
        let is_latency = latency.contains(&metric);
        let shift = is_latency && every_run_has(metric);
        assert_eq!(c["shift"], shift, "{c}");
        assert_eq!(c["pooled"], is_latency && !shift, "{c}");
        if is_latency {
            assert_eq!(c["runs"], serde_json::json!([16, 16]), "{c}");
            let p = c["p_value"].as_f64().unwrap();
            assert!(p > 0.0 && p <= 1.0 && c["detectable"].as_f64().unwrap() >= 0.0, "{c}");
            assert!(c["base"].as_f64().unwrap() > 0.0 && c["current"].as_f64().unwrap() > 0.0, "{c}");
        }
    }
    let tested = |m: &str| comparisons.iter().any(|c| c["metric"] == m && (c["pooled"] == true || c["shift"] == true));
    assert!(latency.iter().all(|m| tested(m)), "every percentile by a sign-flip test");
    assert!(every_run_has("p50_us") && !every_run_has("p999_us"), "40 ms runs have a p50 and no p99.9");
    let md = std::fs::read_to_string(dir.join("c.md")).unwrap();
    assert!(md.contains("sign-flip") && md.contains("pooled") && md.contains("`shift`"), "{md}");

    // Without the logs, the same files are judged on the per-run values:
    // p50 still by the shift test.
    let plain = judged(&dir, false, "plain").1;
    assert!(none_pooled(&plain));
    let p50 = plain["comparisons"].as_array().unwrap().iter().find(|c| c["metric"] == "p50_us").unwrap().clone();
    assert_eq!(p50["shift"], true, "{p50}");

    // The base log gone: judged on its runs, and said so.
    std::fs::remove_file(dir.join("hdr/base").join(&current[0])).unwrap();
    let (run, report) = judged(&dir, true, "m");
    run.stderr_has(&["1 cell(s) have no HDR log"]);
    assert!(none_pooled(&report));
}

#[test]
fn too_few_pairs_are_judged_per_run_and_said_so() {
    let dir = scratch("pooled-short");
    ab_run(&dir, "steal-half,global", "3", "60ms");
    let (run, report) = judged(&dir, true, "c");
    run.stderr_has(&["2 cell(s) with HDR logs have fewer than 16 pairs"]);
    assert!(none_pooled(&report));
    let comparisons = report["comparisons"].as_array().unwrap();
    assert!(comparisons.iter().all(|c| c["shift"] == false), "3 pairs: the paired t-test");
}

#[test]
fn planting_reports_every_cell_and_the_unplanted_false_alarms() {
    let dir = scratch("pooled-plant");
    ab_run(&dir, "steal-half,global", "3", "60ms");
    let args = ["compare", "base.csv", "current.csv", "--hdr-dir", "hdr", "--json", "p.json", "--out", "p.md"];
    let planted = [args.as_slice(), &["--plant", "p50_us=+50%", "--plant", "cpu_us_per_op=-30%"]].concat();
    wsbench_in(&dir, &planted)
        .ok()
        .stdout_has(&["| metric | planted | cells | flagged | fraction |", "| p50_us | +50% | 2 |"]);
    let report = json(&dir.join("p.json"));
    let plants = report["plants"].as_array().unwrap();
    assert_eq!(plants.len(), 2);
    assert_eq!(plants[0]["plant"]["metric"], "p50_us");
    assert_eq!(plants[0]["expected"], "regressed");
    assert_eq!(plants[1]["expected"], "improved", "less CPU per request is better");
    for p in plants {
        let cells = p["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 2, "one verdict per cell");
        let flagged = cells.iter().filter(|c| c["verdict"] == p["expected"]).count();
        assert_eq!(p["flagged"], flagged, "{p}");
        assert!(cells.iter().all(|c| c["p_value"].is_number() && c["q_value"].is_number()), "{p}");
    }
    let comparisons = report["comparisons"].as_u64().unwrap();
    assert!(comparisons >= 8 && report["false_alarms"].as_u64().unwrap() <= comparisons, "{report}");
}

#[test]
fn bad_hdr_dirs_and_plants_are_refused_naming_them() {
    let dir = scratch("pooled-bad");
    ab_run(&dir, "steal-half,global", "3", "60ms");
    let base = ["compare", "base.csv", "current.csv"];
    wsbench_in(&dir, &[base.as_slice(), &["--hdr-dir", "nowhere"]].concat())
        .code(2)
        .stderr_has(&["`nowhere`", "not a directory"]);
    wsbench_in(&dir, &[base.as_slice(), &["--plant", "p98_us=+20%"]].concat())
        .code(2)
        .stderr_has(&["`p98_us`", "p99_us"]);
    wsbench_in(&dir, &[base.as_slice(), &["--plant", "p99_us=twenty"]].concat())
        .code(2)
        .stderr_has(&["`p99_us=twenty`"]);
    // Files of a later invocation (their timestamp moved on) with these logs.
    for name in ["base.csv", "current.csv"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let stamp = text.lines().nth(1).unwrap().split(',').nth(1).unwrap().to_string();
        std::fs::write(dir.join(format!("later-{name}")), text.replace(&stamp, "2099-01-01T00:00:00.000Z")).unwrap();
    }
    wsbench_in(&dir, &["compare", "later-base.csv", "later-current.csv", "--hdr-dir", "hdr"])
        .code(2)
        .stderr_has(&["left over from an earlier run"]);
    // Files written before these logs: their invocation ended earlier.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for name in ["base.csv", "current.csv"] {
        std::fs::copy(dir.join(name), dir.join(format!("older-{name}"))).unwrap();
        std::fs::File::options()
            .write(true)
            .open(dir.join(format!("older-{name}")))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    wsbench_in(&dir, &["compare", "older-base.csv", "older-current.csv", "--hdr-dir", "hdr"])
        .code(2)
        .stderr_has(&["from a later run"]);
    // One cell's base log replaced by the other cell's.
    let logs = names(&dir.join("hdr"));
    std::fs::copy(dir.join("hdr/base").join(&logs[0]), dir.join("hdr/base").join(&logs[1])).unwrap();
    wsbench_in(&dir, &[base.as_slice(), &["--hdr-dir", "hdr"]].concat())
        .code(2)
        .stderr_has(&["is the log of scheduler"]);
}
