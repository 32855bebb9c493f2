//! The windowed p99 (`p99_windowed_us`, schema 10) through the real CLI:
//! an open-loop row whose run fills at least 5 windows of 200 answers has
//! it; a benchmark row, and an open-loop row with too few answers, leave it
//! blank; `compare` judges it as a metric of its own.

mod common;

use common::{col, quick, read_csv, scratch, wsbench_in};
use wsbench::internals::record::WINDOWED_COLUMNS;

fn run(dir: &std::path::Path, csv: &str, workload: &str, rate: &str) {
    wsbench_in(
        dir,
        &[
            "--sched",
            "steal-half",
            "--workers",
            "1",
            "--workload",
            workload,
            "--rate",
            rate,
            "--duration",
            "1s",
            "--warmup",
            "50ms",
            "--runs",
            "2",
            "--quiet",
            "--csv",
            csv,
        ],
    )
    .ok();
}

#[test]
fn open_loop_rows_have_it_when_windows_fill_and_others_leave_it_blank() {
    let dir = scratch("windowed");
    // 4000/s for 1 s: 10 slices of 100 ms, 400 intended arrivals each.
    run(&dir, "full.csv", "rpc-fanout", "4000");
    // 500/s for 1 s: 500 answers, two windows of 200 and a remainder.
    run(&dir, "sparse.csv", "rpc-fanout", "500");
    let (header, rows) = read_csv(&dir.join("full.csv"));
    assert_eq!(header.last().map(String::as_str), Some(WINDOWED_COLUMNS[0]), "last in the row");
    assert_eq!(rows.len(), 2);
    for row in &rows {
        assert_eq!(col(&header, row, "status"), "ok", "{}", col(&header, row, "error"));
        let w: f64 = col(&header, row, "p99_windowed_us").parse().expect("a windowed p99 of 10 windows");
        let max: f64 = col(&header, row, "max_us").parse().unwrap();
        assert!(w > 0.0 && w <= max * 1.01, "windowed p99 {w} us within the run's max {max} us");
        assert!(!col(&header, row, "extras").contains("p99_windowed_us"), "its own column, not an extra");
    }
    let (header, rows) = read_csv(&dir.join("sparse.csv"));
    for row in &rows {
        assert_eq!(col(&header, row, "status"), "ok", "{}", col(&header, row, "error"));
        assert_eq!(col(&header, row, "p99_windowed_us"), "", "fewer than 5 windows of 200 answers");
    }
    // The two files compare, the windowed p99 among the judged metrics.
    std::fs::copy(dir.join("full.csv"), dir.join("copy.csv")).unwrap();
    let out = wsbench_in(&dir, &["compare", "full.csv", "copy.csv"]);
    out.ok();
    assert!(out.stdout.contains("p99_windowed_us"), "{}", out.stdout);
}

#[test]
fn benchmark_rows_leave_it_blank() {
    let dir = scratch("windowed-bench");
    wsbench_in(&dir, &quick(&["--csv", "b.csv"])).ok();
    let (header, rows) = read_csv(&dir.join("b.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(col(&header, &rows[0], "status"), "ok");
    assert_eq!(col(&header, &rows[0], "p99_windowed_us"), "");
}
