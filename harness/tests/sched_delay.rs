//! The schedule-delay columns (schema 9) through the real CLI: with `--knob
//! sched-delay=on` every row of ours has a median and a p99 (the run polls
//! far more tasks than a p99 needs), with `off` both are blank, in the CSV
//! and the JSON; files of older schemas, which have no such columns, still
//! load, with the columns blank.

mod common;

use std::path::Path;

use common::{col, read_csv, scratch, wsbench_in};
use wsbench::internals::load::load;
use wsbench::internals::record::SCHED_DELAY_COLUMNS;

const POLICIES: [&str; 3] = ["steal-half", "current-thread", "thread-per-core"];

#[test]
fn on_fills_both_columns_and_off_leaves_them_blank() {
    let dir = scratch("sched-delay");
    let sched = POLICIES.join(",");
    wsbench_in(
        &dir,
        &[
            "--sched",
            &sched,
            "--workers",
            "1",
            "--workload",
            "yield-many",
            "--param",
            "tasks=20",
            "--param",
            "yields=50",
            "--knob",
            "sched-delay=on,off",
            "--duration",
            "50ms",
            "--warmup",
            "10ms",
            "--runs",
            "1",
            "--quiet",
            "--csv",
            "out.csv",
            "--json",
            "out.json",
        ],
    )
    .ok();
    let (header, rows) = read_csv(&dir.join("out.csv"));
    let n = header.len();
    assert_eq!(&header[n - 2..], SCHED_DELAY_COLUMNS.map(String::from).as_slice(), "at the end of the row");
    assert_eq!(rows.len(), POLICIES.len() * 2, "one row per cell");
    for row in &rows {
        let at = format!("{} [{}]", col(&header, row, "scheduler"), col(&header, row, "knobs"));
        assert_eq!(col(&header, row, "status"), "ok", "{at}: {}", col(&header, row, "error"));
        let (p50, p99) = (col(&header, row, "sched_delay_p50_us"), col(&header, row, "sched_delay_p99_us"));
        match col(&header, row, "knobs") {
            "sched-delay=on" => {
                // 20 tasks x 50 yields: over a thousand polls per iteration.
                let p50: f64 = p50.parse().unwrap_or_else(|_| panic!("{at}: p50 `{p50}`"));
                let p99: f64 = p99.parse().unwrap_or_else(|_| panic!("{at}: p99 `{p99}`"));
                assert!(p50 >= 0.0 && p50 <= p99, "{at}: p50 {p50}, p99 {p99}");
            }
            "sched-delay=off" => assert_eq!((p50, p99), ("", ""), "{at}: not measured, blank"),
            other => panic!("{at}: unexpected knobs `{other}`"),
        }
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    for cell in json["cells"].as_array().unwrap() {
        for run in cell["runs"].as_array().unwrap() {
            let on = run["knobs"].as_str() == Some("sched-delay=on");
            for column in SCHED_DELAY_COLUMNS {
                assert_eq!(run[column].is_number(), on, "{column} of {run}");
            }
        }
    }
    // The CSV reads back with the same columns.
    let back = load(&dir.join("out.csv")).unwrap();
    assert_eq!(back.records.iter().filter(|r| r.sched_delay_p99_us.is_some()).count(), POLICIES.len());
}

#[test]
fn files_of_older_schemas_load_with_the_columns_blank() {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/baseline/readme");
    let mut loaded = 0;
    for entry in std::fs::read_dir(&readme).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "csv") {
            let file = load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
            assert!(file.schema_version < 9, "{}: a committed file of schema {}", path.display(), file.schema_version);
            assert!(file.records.iter().all(|r| r.sched_delay_p50_us.is_none() && r.sched_delay_p99_us.is_none()));
            loaded += 1;
        }
    }
    assert!(loaded >= 5, "{loaded} committed CSVs under {}", readme.display());
}
