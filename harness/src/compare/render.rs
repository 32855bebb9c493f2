//! `wsbench compare`'s markdown report: the verdicts table, the mechanism
//! behind each verdict and the method in words.

use std::fmt::Write as _;

use super::{mechanism, Comparison, Report, METRICS};
use crate::output::table::Table;
use crate::stats::ttest::POWER;

/// A q-value for a table: small ones in scientific notation.
pub fn format_q(q: f64) -> String {
    if q < 0.001 {
        format!("{q:.0e}")
    } else {
        format!("{q:.3}")
    }
}

/// The column of the minimum detectable change.
pub const DETECTABLE: &str = "detectable";

/// What the detectable column means, for both methods' notes.
fn detectable_method(alpha: f64) -> String {
    format!(
        " `{DETECTABLE}` is the minimum detectable change: the smallest true change that test finds at p < {alpha} with {:.0}% \
         power, given this cell's spread (before the correction over all comparisons, so the gate needs at least that); an \
         `unchanged` whose {DETECTABLE} exceeds the floor says \"not enough power to see\" the floor: add runs or steady the machine.",
        POWER * 100.0
    )
}

/// The change column's name when the runs are paired (`run --base-bin`).
pub const PAIR_CHANGE: &str = "pair change";

/// The note's mark of the test that judged a latency percentile, `""`
/// for the t-tests.
fn test_mark(c: &Comparison) -> &'static str {
    if c.pooled {
        "pooled"
    } else if c.shift {
        "shift"
    } else {
        ""
    }
}

/// Renders the markdown report.
pub fn render_markdown(report: &Report) -> String {
    const PERCENT: f64 = 100.0;
    let mut out = String::from("# wsbench compare\n\n");
    let total = report.comparisons.len();
    let _ = writeln!(
        out,
        "**{} regressed, {} improved, {} unchanged** of {total} comparisons ({}); base `{}`, current `{}`.\n",
        report.counts["regressed"],
        report.counts["improved"],
        report.counts["unchanged"],
        if report.pairing == "paired" { "paired runs of one A/B invocation" } else { "independent files" },
        report.base,
        report.current
    );
    for w in &report.warnings {
        let _ = writeln!(out, "> warning: {w}\n");
    }
    let metric_of = |name: &str| METRICS.iter().find(|m| m.name == name).copied();
    let rows = report
        .comparisons
        .iter()
        .map(|c| {
            let fmt = |v: f64| metric_of(c.metric).map(|m| m.format(v)).unwrap_or_else(|| format!("{v:.0}"));
            let scope = if c.all_runtimes { " (all runtimes)" } else { "" };
            vec![
                format!("{}{scope}", c.verdict.as_str()),
                c.cell.to_string(),
                c.metric.to_string(),
                fmt(c.base),
                fmt(c.current),
                format!("{:+.1}%", c.change * PERCENT),
                c.p_value.map(|p| format!("{p:.3}")).unwrap_or_else(|| "-".to_string()),
                c.q_value.map(format_q).unwrap_or_else(|| "-".to_string()),
                c.detectable.map(|d| format!("{:.1}%", d * PERCENT)).unwrap_or_else(|| "-".to_string()),
                format!("{}/{}", c.runs.0, c.runs.1),
                match (test_mark(c), c.note.as_str()) {
                    ("", note) => note.to_string(),
                    (test, "") => test.to_string(),
                    (test, note) => format!("{test}; {note}"),
                },
            ]
        })
        .collect();
    // Paired, the change is the median of the pairs' own ratios, which can
    // differ from the ratio of the two medians beside it: its name says so.
    let change = if report.pairing == "paired" { PAIR_CHANGE } else { "change" };
    let table = Table {
        header: ["verdict", "cell", "metric", "base", "current", change, "p", "q", DETECTABLE, "runs", "note"]
            .map(String::from)
            .to_vec(),
        right: vec![false, false, false, true, true, true, true, true, true, true, false],
        rows,
    };
    out.push_str(&table.render_markdown());
    out.push_str(&mechanism::render(&report.mechanism, report.alpha));
    for (title, cells) in
        [("Cells only in base", &report.only_in_base), ("Cells only in current", &report.only_in_current)]
    {
        if !cells.is_empty() {
            let _ = writeln!(out, "\n{title} (not compared):\n");
            for c in cells {
                let _ = writeln!(out, "- {c}");
            }
        }
    }
    if report.pairing == "paired" {
        let _ = writeln!(
            out,
            "\nMethod: the two files are the sides of one A/B invocation (`run --base-bin`): run i of a cell in one was made \
             back to back with run i in the other, so the runs are judged as pairs. `{PAIR_CHANGE}` is the median over the pairs of \
             each pair's own ratio current/base − 1, so it need not equal the ratio of the `base` and `current` medians beside it \
             (each side's median alone); `p` is the one-sample t-test on the pairs' log ratios, `q` that p adjusted for all {total} comparisons \
             (Benjamini-Hochberg). A change counts only when p < {a} and q < {a} and the change is at least {:.1}% (throughput, \
             p50, p90) or {:.1}% (p99, p99.9, CPU per op). `base` and `current` are the medians of each side; `runs` counts pairs.",
            report.threshold * PERCENT,
            report.tail_threshold * PERCENT,
            a = report.alpha,
        );
        if report.comparisons.iter().any(|c| c.shift) {
            out.insert_str(
                out.len() - 1,
                " Latency percentiles marked `shift` are judged differently: the change is the median over every \
                 (base run, current run) combination of the ratio current/base − 1, so a run that a stall of the machine \
                 inflated moves it little, and `p` is a sign-flip permutation test over the pairs (whole pairs swap sides, \
                 so the pairing is kept); its detectable change comes from the spread of the statistic over the swaps.",
            );
        }
        if report.comparisons.iter().any(|c| c.pooled) {
            out.insert_str(
                out.len() - 1,
                " Latency percentiles marked `pooled` (from --hdr-dir) are judged differently: `base` and `current` are the \
                 percentile of each side's runs added into one histogram, the change their ratio − 1, and `p` a sign-flip \
                 permutation test over the pairs (whole runs swap sides, so what is correlated within a run moves with it); \
                 its detectable change comes from the spread of the statistic over the swaps.",
            );
        }
        out.insert_str(out.len() - 1, &detectable_method(report.alpha));
        return out;
    }
    let _ = writeln!(
        out,
        "\nMethod: medians over runs; `p` is the two-sided Mann-Whitney U test, `q` Welch's t-test on the logarithms of the runs \
         adjusted for all {total} comparisons (Benjamini-Hochberg). A change counts only when p < {a} and q < {a} and the medians \
         differ by at least {:.1}% (throughput, p50, p90) or {:.1}% (p99, p99.9). max and p99.99 are not judged (too noisy).",
        report.threshold * PERCENT,
        report.tail_threshold * PERCENT,
        a = report.alpha,
    );
    out.insert_str(out.len() - 1, &detectable_method(report.alpha));
    out
}
