//! `compare` and `plot` on hand-made CSVs.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::{scratch, wsbench_in};

/// The schema this wsbench writes and reads.
const SCHEMA: u32 = wsbench::internals::record::SCHEMA_VERSION;

const HEADER: &str =
    "schema_version,timestamp,git_sha,host,cpu_model,logical_cpus,scheduler,workers,workload,knobs,run,duration_s,ops,\
throughput_per_s,offered_per_s,p50_us,p90_us,p99_us,p999_us,max_us,mean_us,status";

/// One cell's runs: throughput per run; latencies scale with 1/throughput.
struct Cell<'a> {
    sched: &'a str,
    workers: usize,
    workload: &'a str,
    throughput: Vec<f64>,
}

fn csv_text(schema: u32, cpu: &str, cells: &[Cell<'_>]) -> String {
    let mut out = format!("{HEADER}\n");
    for c in cells {
        for (run, t) in c.throughput.iter().enumerate() {
            let p50 = 1e6 / t;
            let ops = t.round() as u64;
            let _ = writeln!(
                out,
                "{schema},2026-01-01T00:00:00Z,abc,host-a,{cpu},2,{},{},{},,{run},1.0,{ops},{t},,{p50},{},{},{},{},{p50},ok",
                c.sched,
                c.workers,
                c.workload,
                p50 * 1.5,
                p50 * 2.0,
                p50 * 3.0,
                p50 * 5.0,
            );
        }
    }
    out
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// Five runs around `center` with relative spread `noise` (deterministic).
fn runs(center: f64, noise: f64) -> Vec<f64> {
    [-1.0, -0.5, 0.0, 0.5, 1.0].iter().map(|k| center * (1.0 + k * noise)).collect()
}

fn one_cell(throughput: Vec<f64>) -> Vec<Cell<'static>> {
    vec![Cell { sched: "steal-half", workers: 2, workload: "yield-many", throughput }]
}

fn compare(dir: &Path, base: &[Cell<'_>], current: &[Cell<'_>]) -> common::Run {
    write(dir, "base.csv", &csv_text(SCHEMA, "cpu-x", base));
    write(dir, "current.csv", &csv_text(SCHEMA, "cpu-x", current));
    wsbench_in(dir, &["compare", "base.csv", "current.csv", "--json", "report.json", "--out", "report.md"])
}

fn verdict_of(dir: &Path, metric: &str) -> String {
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let c = json["comparisons"].as_array().unwrap().iter().find(|c| c["metric"] == metric).expect("metric compared");
    c["verdict"].as_str().unwrap().to_string()
}

#[test]
fn identical_inputs_are_unchanged_everywhere() {
    let dir = scratch("cmp-same");
    let cells = one_cell(runs(1000.0, 0.01));
    compare(&dir, &cells, &cells).code(0).stdout_has(&["**0 regressed, 0 improved, 5 unchanged**"]);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("| verdict | cell |"), "{md}");
}

#[test]
fn a_20_percent_drop_with_tight_runs_regresses() {
    let dir = scratch("cmp-drop");
    let run = compare(&dir, &one_cell(runs(1000.0, 0.01)), &one_cell(runs(800.0, 0.01)));
    run.code(1).stdout_has(&["regressed", "-20.0%"]);
    assert_eq!(verdict_of(&dir, "throughput_per_s"), "regressed");
    // Latency rose by 25%: beyond the tail floor too.
    assert_eq!(verdict_of(&dir, "p99_us"), "regressed");
    // Worst first: the first table row is a regression.
    let first_row = run.stdout.lines().find(|l| l.starts_with("| regressed") || l.starts_with("| unchanged")).unwrap();
    assert!(first_row.starts_with("| regressed"), "{first_row}");
}

#[test]
fn an_improvement_is_not_a_regression() {
    let dir = scratch("cmp-up");
    compare(&dir, &one_cell(runs(1000.0, 0.01)), &one_cell(runs(1300.0, 0.01))).code(0).stdout_has(&["improved"]);
    assert_eq!(verdict_of(&dir, "throughput_per_s"), "improved");
}

#[test]
fn a_20_percent_change_inside_heavy_noise_is_unchanged() {
    let dir = scratch("cmp-noise");
    let base = vec![1000.0, 400.0, 1600.0, 700.0, 1300.0];
    let current: Vec<f64> = vec![1300.0, 350.0, 1100.0, 800.0, 600.0];
    compare(&dir, &one_cell(base), &one_cell(current)).code(0);
    assert_eq!(verdict_of(&dir, "throughput_per_s"), "unchanged");
}

#[test]
fn a_spread_cell_says_it_lacks_the_power_to_see_the_floor() {
    let dir = scratch("cmp-power");
    let base = vec![1000.0, 400.0, 1600.0, 700.0, 1300.0];
    let current: Vec<f64> = vec![1300.0, 350.0, 1100.0, 800.0, 600.0];
    compare(&dir, &one_cell(base), &one_cell(current))
        .code(0)
        .stdout_has(&["| detectable |", "not enough power to see 5%"]);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let c = json["comparisons"].as_array().unwrap().iter().find(|c| c["metric"] == "throughput_per_s").unwrap();
    let d = c["detectable"].as_f64().expect("a detectable change");
    assert!(d > 0.5, "runs spread by ±60% cannot see 5%: {d}");
    assert!(c["note"].as_str().unwrap().starts_with("not enough power to see 5%"), "{c}");
    // Tight runs can see far less than the floor, and say nothing about power.
    let dir = scratch("cmp-power-tight");
    compare(&dir, &one_cell(runs(1000.0, 0.01)), &one_cell(runs(1000.0, 0.01))).code(0);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let c = json["comparisons"].as_array().unwrap().iter().find(|c| c["metric"] == "throughput_per_s").unwrap();
    assert!(c["detectable"].as_f64().unwrap() < 0.05, "{c}");
    assert_eq!(c["note"], "", "{c}");
}

#[test]
fn a_2_percent_change_with_tight_runs_is_below_the_floor() {
    let dir = scratch("cmp-small");
    compare(&dir, &one_cell(runs(1000.0, 0.001)), &one_cell(runs(980.0, 0.001))).code(0);
    assert_eq!(verdict_of(&dir, "throughput_per_s"), "unchanged");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let p = json["comparisons"][0]["p_value"].as_f64().unwrap();
    assert!(p < 0.05, "significant ({p}) yet below the 5% floor");
}

#[test]
fn cells_in_one_file_only_are_listed() {
    let dir = scratch("cmp-only");
    let mut base = one_cell(runs(1000.0, 0.01));
    base.push(Cell { sched: "global", workers: 2, workload: "yield-many", throughput: runs(10.0, 0.01) });
    let mut current = one_cell(runs(1000.0, 0.01));
    current.push(Cell { sched: "tokio", workers: 4, workload: "yield-many", throughput: runs(10.0, 0.01) });
    compare(&dir, &base, &current).code(0).stdout_has(&[
        "Cells only in base",
        "global x2 yield-many",
        "Cells only in current",
        "tokio x4 yield-many",
    ]);
}

#[test]
fn schema_mismatch_and_broken_files_are_unusable() {
    let dir = scratch("cmp-bad");
    let cells = one_cell(runs(1000.0, 0.01));
    write(&dir, "v1.csv", &csv_text(SCHEMA, "cpu-x", &cells));
    write(&dir, "v0.csv", &csv_text(SCHEMA - 1, "cpu-x", &cells));
    wsbench_in(&dir, &["compare", "v0.csv", "v1.csv"]).code(2).stderr_has(&["schema versions", "v0.csv", "v1.csv"]);

    write(&dir, "empty.csv", "");
    wsbench_in(&dir, &["compare", "empty.csv", "v1.csv"]).code(2).stderr_has(&["empty.csv", "is empty"]);
    wsbench_in(&dir, &["compare", "missing.csv", "v1.csv"]).code(2).stderr_has(&["missing.csv"]);
    write(&dir, "foreign.csv", "name,score\nbob,3\n");
    wsbench_in(&dir, &["compare", "foreign.csv", "v1.csv"]).code(2).stderr_has(&[
        "foreign.csv",
        "line 1",
        "missing column `schema_version`",
    ]);

    let text = csv_text(SCHEMA, "cpu-x", &cells);
    let truncated = &text[..text.len() - 20];
    write(&dir, "truncated.csv", truncated);
    wsbench_in(&dir, &["compare", "v1.csv", "truncated.csv"]).code(2).stderr_has(&[
        "truncated.csv",
        "line 6",
        "fields",
    ]);

    write(&dir, "nan.csv", &text.replacen(",1000,1000,", ",1000,lots,", 1));
    wsbench_in(&dir, &["compare", "v1.csv", "nan.csv"]).code(2).stderr_has(&[
        "nan.csv",
        "line 4",
        "column `throughput_per_s`",
        "`lots`",
    ]);

    let mut dup = text.clone();
    dup.push_str(text.lines().nth(1).unwrap());
    dup.push('\n');
    write(&dir, "dup.csv", &dup);
    wsbench_in(&dir, &["compare", "v1.csv", "dup.csv"]).code(2).stderr_has(&[
        "dup.csv",
        "line 7",
        "duplicate",
        "first at line 2",
    ]);
}

#[test]
fn different_machines_warn_but_still_compare() {
    let dir = scratch("cmp-env");
    let cells = one_cell(runs(1000.0, 0.01));
    write(&dir, "a.csv", &csv_text(SCHEMA, "cpu-x", &cells));
    write(&dir, "b.csv", &csv_text(SCHEMA, "cpu-y", &cells));
    wsbench_in(&dir, &["compare", "a.csv", "b.csv"]).code(0).stderr_has(&["different CPU models", "cpu-x", "cpu-y"]);
}

fn sweep() -> Vec<Cell<'static>> {
    let mut cells = Vec::new();
    for (sched, scale) in [("steal-half", 1.0), ("global", 0.6), ("tokio", 0.9)] {
        for workers in [1, 2, 4, 8] {
            cells.push(Cell {
                sched,
                workers,
                workload: "yield-many",
                throughput: runs(1000.0 * workers as f64 * scale, 0.05),
            });
        }
    }
    cells
}

#[test]
fn plot_writes_svg_and_png_with_one_series_per_scheduler() {
    let dir = scratch("plot");
    // With a CPU column: 5 µs per op on every row.
    let text: String = csv_text(SCHEMA, "cpu-x", &sweep())
        .lines()
        .enumerate()
        .map(|(i, l)| if i == 0 { format!("{l},cpu_us_per_op\n") } else { format!("{l},5\n") })
        .collect();
    write(&dir, "r.csv", &text);
    let run = wsbench_in(&dir, &["plot", "r.csv", "--out", "charts", "--width", "640", "--height", "400"]);
    run.ok();
    let cpu_svg = std::fs::read_to_string(dir.join("charts").join("yield-many-cpu.svg")).unwrap();
    assert!(cpu_svg.contains("CPU time per request"), "the CPU chart's axis label");
    for name in ["yield-many-throughput", "yield-many-p99", "yield-many-cpu"] {
        let svg = std::fs::read_to_string(dir.join("charts").join(format!("{name}.svg"))).unwrap();
        let lines =
            svg.split("<polyline").filter(|p| p.split('>').next().unwrap().contains("stroke-width=\"2\"")).count();
        assert_eq!(lines, 3, "{name}: one line per scheduler");
        for sched in ["steal-half", "global", "tokio"] {
            assert!(
                svg.contains(&format!(">{sched}<")) || svg.contains(&format!(">\n{sched}\n<")),
                "{name}: legend lacks {sched}"
            );
        }
        assert!(svg.contains("worker threads (log2)") && svg.contains("cpu-x"), "{name}: axis label and caption");
        let png = std::fs::File::open(dir.join("charts").join(format!("{name}.png"))).unwrap();
        let mut reader = png::Decoder::new(std::io::BufReader::new(png)).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (640, 400));
        assert!(buf.iter().any(|b| *b != 255), "{name}: the PNG is not blank");
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn plot_without_a_sweep_says_what_it_needs() {
    let dir = scratch("plot-none");
    write(&dir, "one.csv", &csv_text(SCHEMA, "cpu-x", &one_cell(runs(1000.0, 0.01))));
    wsbench_in(&dir, &["plot", "one.csv", "--out", "charts"]).failed().stderr_has(&[
        "nothing to plot",
        "--workers 1,2,4",
        "--rate",
    ]);
    assert!(!dir.join("charts").exists(), "no empty chart directory");
}

#[test]
fn cpu_per_op_is_judged_like_a_latency_with_the_tail_floor() {
    let dir = scratch("cmp-cpu");
    // Same throughput on both sides; only the CPU per op moves.
    let text = |cpu_us: f64| {
        let mut out = format!("{HEADER},cpu_us_per_op\n");
        for (run, k) in [-1.0, -0.5, 0.0, 0.5, 1.0].iter().enumerate() {
            let cpu = cpu_us * (1.0 + k * 0.01);
            let _ = writeln!(
                out,
                "{SCHEMA},2026-01-01T00:00:00Z,abc,host-a,cpu-x,2,steal-half,2,rpc-fanout,,{run},1.0,1000,1000,,100,150,200,300,500,100,ok,{cpu}"
            );
        }
        out
    };
    write(&dir, "base.csv", &text(10.0));
    // +20%: beyond the 10% tail floor, and the 5 + 5 runs do not overlap.
    write(&dir, "current.csv", &text(12.0));
    wsbench_in(&dir, &["compare", "base.csv", "current.csv", "--json", "report.json"])
        .code(1)
        .stdout_has(&["cpu_us_per_op"]);
    assert_eq!(verdict_of(&dir, "cpu_us_per_op"), "regressed");
    assert_eq!(verdict_of(&dir, "throughput_per_s"), "unchanged");
    // Lower is better.
    write(&dir, "current.csv", &text(8.0));
    wsbench_in(&dir, &["compare", "base.csv", "current.csv", "--json", "report.json"]).code(0);
    assert_eq!(verdict_of(&dir, "cpu_us_per_op"), "improved");
    // +7%: significant, but under the 10% tail floor (it would pass the 5% one).
    write(&dir, "current.csv", &text(10.7));
    wsbench_in(&dir, &["compare", "base.csv", "current.csv", "--json", "report.json"]).code(0);
    assert_eq!(verdict_of(&dir, "cpu_us_per_op"), "unchanged");
}
