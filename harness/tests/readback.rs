//! `compare` and `plot` read back every CSV wsbench writes, refuse what is
//! not a measurement with exit 2 naming file, line and column, and never
//! pass the gate or draw a chart on nothing.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::{scratch, wsbench_in};

/// The schema this wsbench writes and reads.
const SCHEMA: u32 = wsbench::internals::record::SCHEMA_VERSION;

const HEADER: &str =
    "schema_version,timestamp,git_sha,host,cpu_model,logical_cpus,scheduler,workers,workload,knobs,run,duration_s,ops,\
throughput_per_s,offered_per_s,p50_us,p90_us,p99_us,p999_us,max_us,mean_us,status,error";

/// `runs` ok rows (or failed rows) of one cell; throughput 1000 + 10 * run,
/// p99 100 us.
fn rows(out: &mut String, sched: &str, workers: usize, runs: usize, ok: bool) {
    for run in 0..runs {
        let t = 1000.0 + 10.0 * run as f64;
        if ok {
            let _ = writeln!(
                out,
                "{SCHEMA},2026-01-01T00:00:00Z,abc,host-a,cpu-x,2,{sched},{workers},yield-many,,{run},1.0,{t},{t},,50,80,100,150,200,60,ok,"
            );
        } else {
            let _ = writeln!(
                out,
                "{SCHEMA},2026-01-01T00:00:00Z,abc,host-a,cpu-x,2,{sched},{workers},yield-many,,{run},,,,,,,,,,,failed,panicked: boom"
            );
        }
    }
}

fn file(dir: &Path, name: &str, cells: &[(&str, usize, usize)]) {
    let mut text = format!("{HEADER}\n");
    for &(sched, workers, runs) in cells {
        rows(&mut text, sched, workers, runs, true);
    }
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn nan_inf_and_negative_measurements_are_unusable() {
    let dir = scratch("not-measurements");
    file(&dir, "base.csv", &[("steal-half", 2, 5)]);
    let good = std::fs::read_to_string(dir.join("base.csv")).unwrap();
    // Line 4 is run 2; its p99_us (column 18) is 100.
    for (bad, column) in
        [("NaN", "p99_us"), ("inf", "p99_us"), ("-100", "p99_us"), ("-1020", "throughput_per_s"), ("NaN", "p50_us")]
    {
        let text: Vec<String> = good
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i != 3 {
                    return l.to_string();
                }
                let mut fields: Vec<&str> = l.split(',').collect();
                let at = HEADER.split(',').position(|h| h == column).unwrap();
                fields[at] = bad;
                fields.join(",")
            })
            .collect();
        std::fs::write(dir.join("cur.csv"), text.join("\n") + "\n").unwrap();
        let run = wsbench_in(&dir, &["compare", "base.csv", "cur.csv"]);
        run.code(2).stderr_has(&["cur.csv", "line 4", &format!("column `{column}`"), &format!("`{bad}`")]);
        assert!(run.stdout.is_empty(), "{bad}: no report on unusable input:\n{}", run.stdout);
        wsbench_in(&dir, &["plot", "cur.csv", "--out", "charts"]).code(2).stderr_has(&["line 4", column]);
    }
}

#[test]
fn no_cell_in_common_is_unusable_not_a_pass() {
    let dir = scratch("no-common");
    file(&dir, "base.csv", &[("steal-half", 2, 5)]);
    file(&dir, "cur.csv", &[("global", 2, 5), ("global", 4, 5)]);
    wsbench_in(&dir, &["compare", "base.csv", "cur.csv"]).code(2).stderr_has(&[
        "no cell in common",
        "only in base: 1 cell, `steal-half x2 yield-many`",
        "only in current: 2 cells",
    ]);
    let mut failed_base = format!("{HEADER}\n");
    rows(&mut failed_base, "global", 2, 3, false);
    std::fs::write(dir.join("failed.csv"), failed_base).unwrap();
    wsbench_in(&dir, &["compare", "failed.csv", "cur.csv"]).code(2).stderr_has(&["no ok run in base"]);
}

#[test]
fn the_power_warning_names_the_run_counts_compared() {
    let dir = scratch("power");
    file(&dir, "base.csv", &[("steal-half", 2, 2), ("global", 2, 3)]);
    file(&dir, "cur.csv", &[("steal-half", 2, 4), ("global", 2, 3)]);
    // Exact two-sided minimum p: 2 / C(6, 2) = 0.133 and 2 / C(6, 3) = 0.100.
    wsbench_in(&dir, &["compare", "base.csv", "cur.csv"]).code(0).stderr_has(&[
        "2 cell(s) have too few ok runs",
        "2 vs 4 runs cannot go below p = 0.133",
        "3 vs 3 runs cannot go below p = 0.100",
    ]);
}

#[test]
fn a_csv_of_failed_runs_only_has_nothing_to_plot() {
    let dir = scratch("plot-failed");
    let mut text = format!("{HEADER}\n");
    for workers in [1, 2, 4] {
        rows(&mut text, "steal-half", workers, 2, false);
    }
    std::fs::write(dir.join("failed.csv"), text).unwrap();
    wsbench_in(&dir, &["plot", "failed.csv", "--out", "charts"]).code(1).stderr_has(&[
        "nothing to plot",
        "failed.csv",
        "every one of its 6 run(s) failed",
    ]);
    assert!(!dir.join("charts").exists(), "no chart directory");
}

const RUN: &[&str] = &[
    "--sched",
    "steal-half",
    "--workers",
    "1,2",
    "--workload",
    "yield-many",
    "--param",
    "tasks=10",
    "--param",
    "yields=20",
    "--duration",
    "20ms",
    "--warmup",
    "0",
    "--runs",
    "2",
    "-q",
    "--csv",
    "r.csv",
];

#[test]
fn a_rerun_appended_to_a_csv_reads_back_and_identical_knob_values_are_refused() {
    let dir = scratch("rerun");
    wsbench_in(&dir, RUN).ok();
    wsbench_in(&dir, RUN).ok();
    std::fs::copy(dir.join("r.csv"), dir.join("r2.csv")).unwrap();
    let report = wsbench_in(&dir, &["compare", "r.csv", "r2.csv", "--json", "report.json"]);
    report.ok();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    // Throughput: every run has it (a latency percentile can be blank in a
    // run with too few samples, and the comparisons are sorted worst first).
    let throughput = json["comparisons"].as_array().unwrap().iter().find(|c| c["metric"] == "throughput_per_s");
    let runs = &throughput.expect("throughput compared")["runs"];
    assert_eq!((runs[0].as_u64(), runs[1].as_u64()), (Some(4), Some(4)), "both invocations' runs are read");
    wsbench_in(&dir, &["plot", "r.csv", "--out", "charts"]).ok();
    let mut twice: Vec<&str> = RUN.iter().copied().filter(|a| *a != "r.csv" && *a != "--csv").collect();
    twice.extend(["--knob", "lifo=on,on", "--csv", "k.csv"]);
    wsbench_in(&dir, &twice).code(2).stderr_has(&["lifo=on,on", "`on` twice"]);
    assert!(!dir.join("k.csv").exists());
}
