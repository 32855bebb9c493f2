//! Chart axes (issue 27, item 14), read from the SVG text: worker counts
//! labelled once each, a narrow latency range still labelled with round
//! values, no latency-vs-load chart without a `--rate` sweep.

mod common;

use std::path::Path;

use common::{scratch, wsbench_in};

/// The text elements of an SVG, trimmed.
fn texts(svg: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(svg).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
    text.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().to_string()))
        .collect()
}

#[test]
fn axes_label_each_worker_count_once_and_sweeps_only_when_asked() {
    let dir = scratch("charts");
    let run = [
        "run",
        "-q",
        "--sched",
        "tokio",
        "--workers",
        "1,2",
        "--workload",
        "rpc-fanout",
        // At the default 2.2k/s, enough requests for a p99 (381 samples).
        "--duration",
        "300ms",
        "--warmup",
        "0",
        "--runs",
        "1",
        "--csv",
        "r.csv",
    ];
    wsbench_in(&dir, &run).ok();
    let plot = wsbench_in(&dir, &["plot", "r.csv", "--out", "plots"]);
    plot.ok();
    // Default rates differ per worker count, but no rate was swept.
    assert!(!plot.stdout.contains("latency-vs-load"), "{}", plot.stdout);
    let p99 = texts(&dir.join("plots/rpc-fanout-p99.svg"));
    for workers in ["1", "2"] {
        assert_eq!(p99.iter().filter(|t| *t == workers).count(), 1, "x label {workers}: {p99:?}");
    }
    // Every y label is a distinct round latency, and there are at least
    // two (a single point's axis used to have none).
    let latencies: Vec<&String> = p99.iter().filter(|t| t.ends_with('s') && t.len() <= 6).collect();
    assert!(latencies.len() >= 2, "{p99:?}");
    let mut distinct = latencies.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), latencies.len(), "{p99:?}");
    for t in &latencies {
        let digits: String = t.chars().filter(char::is_ascii_digit).collect();
        assert!(digits.trim_start_matches('0').trim_end_matches('0').len() <= 2, "{t} is not round: {p99:?}");
    }
}

#[test]
fn spectra_from_another_runs_logs_are_flagged() {
    let dir = scratch("charts-hdr");
    let tiny = ["--sched", "tokio", "--workers", "1", "--duration", "20ms", "--warmup", "0", "--runs", "1"];
    let a = [&["run", "-q", "--workload", "yield-many", "--csv", "a.csv", "--hdr-dir", "hdr"][..], &tiny].concat();
    wsbench_in(&dir, &a).ok();
    let b = [&["run", "-q", "--workload", "chained-spawn", "--csv", "b.csv"][..], &tiny].concat();
    wsbench_in(&dir, &b).ok();
    let own = wsbench_in(&dir, &["plot", "a.csv", "--out", "pa", "--hdr-dir", "hdr"]);
    own.ok();
    assert!(!own.stderr.contains("another run"), "{}", own.stderr);
    let other = wsbench_in(&dir, &["plot", "b.csv", "--out", "pb", "--hdr-dir", "hdr"]);
    other.ok().stderr_has(&["warning: `hdr/", "`b.csv` does not hold (another run's log?)"]);
}
