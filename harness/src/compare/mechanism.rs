//! The mechanism named beside a verdict: for each cell that regressed or
//! improved, the per-operation figures that moved with it, and by how
//! much (`steal-half x2 channel-ping-pong: throughput_per_s -14.0% (q
//! 0.01); per op: cpu_us +16%, unparks +0.9 (+60%), steals +0.4`).
//!
//! The figures ([`FIGURES`]): CPU per op; voluntary and involuntary
//! context switches per op; parks, unparks, spurious unparks, steals,
//! tasks stolen, LIFO hits, inject pops, overflows, polls and busy time per
//! op (ours report all of them; a tokio row reports tokio's metrics among
//! them — parks, unparks, busy time, and under `tokio_unstable` polls,
//! steals, tasks stolen, overflows — and the rest are blank, so untested);
//! and the message-passing workloads' cross-worker hand-offs per message.
//!
//! The test is the verdict's: paired files (one A/B invocation) are judged
//! on the pairs (one-sample t-test on the log ratios), independent files by
//! the Mann–Whitney U test and Welch's t-test on the logarithms; then the
//! Benjamini–Hochberg correction over every figure tested in the report.
//! A figure moved when p < alpha and q < alpha. A figure that is 0 in some
//! run (no steals at all) has no logarithm: its t-test runs on the values
//! (paired: on the differences) instead. No effect floor: the verdict
//! already passed its own; these say what moved with it.

use serde::Serialize;

use crate::data::record::{CellKey, RunRecord, Status};
use crate::run::ab;
use crate::stats::ttest::{benjamini_hochberg, one_sample_t_p, welch_log_p, welch_p};
use crate::stats::{mann_whitney_p, median};

/// How a figure is read from a row.
#[derive(Debug, Clone, Copy)]
enum PerOp {
    /// `cpu_us_per_op`.
    Cpu,
    /// Voluntary context switches / ops.
    Voluntary,
    /// Involuntary context switches / ops.
    Involuntary,
    /// A counter / ops.
    Counter(&'static str),
    /// An extra that is already per op.
    Extra(&'static str),
}

/// A per-operation figure and its name in the report.
#[derive(Debug, Clone, Copy)]
struct Figure {
    name: &'static str,
    per_op: PerOp,
}

const fn counter(name: &'static str) -> Figure {
    Figure { name, per_op: PerOp::Counter(name) }
}

/// Every figure, in report order.
const FIGURES: [Figure; 14] = [
    Figure { name: "cpu_us", per_op: PerOp::Cpu },
    Figure { name: "voluntary_switches", per_op: PerOp::Voluntary },
    Figure { name: "involuntary_switches", per_op: PerOp::Involuntary },
    counter("parks"),
    counter("unparks"),
    counter("spurious_unparks"),
    counter("steals"),
    counter("tasks_stolen"),
    counter("lifo_hits"),
    counter("inject_pops"),
    counter("overflows"),
    counter("polls"),
    counter("busy_ns"),
    Figure { name: "cross_worker", per_op: PerOp::Extra("cross_worker_per_message") },
];

impl Figure {
    fn value(&self, r: &RunRecord) -> Option<f64> {
        let ops = r.ops.filter(|&n| n > 0)? as f64;
        let v = match self.per_op {
            PerOp::Cpu => r.cpu.cpu_us_per_op?,
            PerOp::Voluntary => r.cpu.ctx_switches_voluntary? as f64 / ops,
            PerOp::Involuntary => r.cpu.ctx_switches_involuntary? as f64 / ops,
            PerOp::Counter(name) => r.counter(name)? as f64 / ops,
            PerOp::Extra(name) => r.extras.iter().find(|(k, _)| k == name)?.1,
        };
        v.is_finite().then_some(v)
    }
}

/// A per-operation figure that moved with a cell's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    /// The figure, per operation (`unparks`: unparks per op).
    pub figure: &'static str,
    /// Median per op on the base side.
    pub base: f64,
    /// Median per op on the current side.
    pub current: f64,
    /// current − base, per op (paired: the median of the pairs'
    /// differences).
    pub difference: f64,
    /// Relative change (paired: the median of the pairs' ratios − 1);
    /// `None` when the base is 0.
    pub change: Option<f64>,
    /// The test's p-value.
    pub p_value: f64,
    /// Corrected over every figure tested in the report.
    pub q_value: f64,
}

/// The figures that moved in one cell.
#[derive(Debug, Clone, Serialize)]
pub struct CellMechanism {
    /// The cell.
    pub cell: CellKey,
    /// Its regressed or improved metrics, `metric change (q)`.
    pub verdicts: Vec<String>,
    /// The figures that moved, in [`FIGURES`] order.
    pub moved: Vec<Moved>,
}

/// One figure of one cell, tested, before the correction.
struct Tested {
    cell: usize,
    moved: Moved,
    /// The p-value the correction adjusts (the t-test's).
    t_p: f64,
}

fn ok<'a>(runs: &[&'a RunRecord]) -> Vec<&'a RunRecord> {
    runs.iter().filter(|r| r.status == Status::Ok).copied().collect()
}

/// Tests `figure` between two sides of a cell.
fn test(figure: &Figure, base: &[&RunRecord], current: &[&RunRecord], paired: bool) -> Option<(Moved, f64)> {
    let value = |r: &RunRecord| figure.value(r);
    let (b, c, difference, change, p, t_p);
    if paired {
        let pairs = ab::pairs(base, current, value);
        (b, c) = pairs.iter().copied().unzip::<f64, f64, Vec<_>, Vec<_>>();
        let diffs: Vec<f64> = pairs.iter().map(|(x, y)| y - x).collect();
        difference = (!diffs.is_empty()).then(|| median(&diffs))?;
        let positive = pairs.iter().all(|&(x, y)| x > 0.0 && y > 0.0);
        let test = if positive { ab::paired_test(&pairs)?.p } else { one_sample_t_p(&diffs) };
        change = positive.then(|| ab::paired_test(&pairs).map(|t| t.change)).flatten();
        (p, t_p) = (test?, test?);
    } else {
        b = ok(base).into_iter().filter_map(value).collect();
        c = ok(current).into_iter().filter_map(value).collect();
        if b.is_empty() || c.is_empty() {
            return None;
        }
        difference = median(&c) - median(&b);
        change = (median(&b) > 0.0).then(|| median(&c) / median(&b) - 1.0);
        p = mann_whitney_p(&b, &c)?;
        t_p = welch_log_p(&b, &c).or_else(|| welch_p(&b, &c))?;
    }
    let moved = Moved {
        figure: figure.name,
        base: median(&b),
        current: median(&c),
        difference,
        change,
        p_value: p,
        q_value: 1.0,
    };
    Some((moved, t_p))
}

/// The mechanism of each cell in `cells` (key, its verdicts, base runs,
/// current runs): the figures that moved, at `alpha`, after the
/// correction over every figure tested in all of them. Cells where nothing
/// moved are kept, with an empty list (nothing to name is a finding too).
pub fn explain(
    cells: &[(CellKey, Vec<String>, Vec<&RunRecord>, Vec<&RunRecord>)],
    paired: bool,
    alpha: f64,
) -> Vec<CellMechanism> {
    let mut tested: Vec<Tested> = Vec::new();
    for (i, (_, _, base, current)) in cells.iter().enumerate() {
        for figure in &FIGURES {
            if let Some((moved, t_p)) = test(figure, base, current, paired) {
                tested.push(Tested { cell: i, moved, t_p });
            }
        }
    }
    let q = benjamini_hochberg(&tested.iter().map(|t| t.t_p).collect::<Vec<_>>());
    let mut out: Vec<CellMechanism> = cells
        .iter()
        .map(|(cell, verdicts, ..)| CellMechanism { cell: cell.clone(), verdicts: verdicts.clone(), moved: Vec::new() })
        .collect();
    for (mut t, q) in tested.into_iter().zip(q) {
        t.moved.q_value = q;
        if t.moved.p_value < alpha && q < alpha {
            out[t.cell].moved.push(t.moved);
        }
    }
    out
}

/// A per-op value for the report: 3 significant digits.
fn short(v: f64) -> String {
    let digits = if v == 0.0 { 0 } else { (2 - v.abs().log10().floor() as i32).max(0) as usize };
    format!("{v:+.digits$}")
}

/// `unparks +0.9 (+60%)`.
pub fn describe(m: &Moved) -> String {
    match m.change {
        Some(change) => format!("{} {} ({:+.0}%)", m.figure, short(m.difference), change * 100.0),
        None => format!("{} {} (from 0)", m.figure, short(m.difference)),
    }
}

/// The markdown section: one line per cell.
pub fn render(cells: &[CellMechanism], alpha: f64) -> String {
    let mut out = String::new();
    if cells.is_empty() {
        return out;
    }
    out.push_str("\n## What moved with each verdict (per operation)\n\n");
    for c in cells {
        let moved = if c.moved.is_empty() {
            "no per-op figure moved significantly".to_string()
        } else {
            c.moved.iter().map(describe).collect::<Vec<_>>().join(", ")
        };
        out.push_str(&format!("- {}: {}; per op: {moved}\n", c.cell, c.verdicts.join(", ")));
    }
    out.push_str(&format!(
        "\nPer op: CPU (µs), context switches, and the runtime's counters divided by the run's ops; each tested as the \
         verdicts are, and named when p < {alpha} and q < {alpha} (Benjamini-Hochberg over every figure tested here). \
         A blank counter (a reference runtime does not keep it) is not tested.\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(run: usize, ops: u64, cpu_us: f64, unparks: u64, steals: u64) -> RunRecord {
        let mut r = RunRecord::failed(CellKey::plain("steal-half", 2, "channel-ping-pong"), run, String::new());
        r.status = Status::Ok;
        r.ops = Some(ops);
        r.cpu.cpu_us_per_op = Some(cpu_us);
        let names = crate::data::record::counter_names();
        for (name, v) in [("unparks", unparks), ("steals", steals), ("parks", 100)] {
            r.counters[names.iter().position(|n| *n == name).unwrap()] = Some(v);
        }
        r
    }

    /// Base: 1000 ops, CPU 0.80..0.84 µs/op, 1.5 unparks/op, no steals;
    /// current: CPU 16 % more, unparks +0.9/op (+60 %), steals 0.4/op; parks
    /// the same (100 per run).
    fn sides() -> (Vec<RunRecord>, Vec<RunRecord>) {
        let cpu = [0.80, 0.82, 0.84, 0.81, 0.83];
        let jitter = [0, 3, 1, 4, 2];
        let base = (0..5).map(|i| row(i, 1000, cpu[i], 1500 + jitter[i], 0)).collect();
        let current = (0..5).map(|i| row(i, 1000, cpu[i] * 1.16, 2400 + jitter[i], 400 + jitter[i])).collect();
        (base, current)
    }

    fn names(m: &CellMechanism) -> Vec<&str> {
        m.moved.iter().map(|m| m.figure).collect()
    }

    #[test]
    fn the_figures_that_moved_are_named_with_their_change() {
        let (base, current) = sides();
        let cell = CellKey::plain("steal-half", 2, "channel-ping-pong");
        let cells =
            vec![(cell, vec!["throughput_per_s -14.0%".to_string()], base.iter().collect(), current.iter().collect())];
        for paired in [false, true] {
            let m = &explain(&cells, paired, 0.05)[0];
            // parks per op did not move; voluntary switches are blank.
            assert_eq!(names(m), ["cpu_us", "unparks", "steals"], "paired {paired}");
            let unparks = &m.moved[1];
            assert!((unparks.difference - 0.9).abs() < 1e-9, "{unparks:?}");
            assert!((unparks.change.unwrap() - 0.6).abs() < 0.005, "{unparks:?}");
            assert_eq!(describe(unparks), "unparks +0.900 (+60%)");
            let steals = &m.moved[2];
            assert_eq!(steals.change, None, "from 0: no ratio");
            assert!(describe(steals).starts_with("steals +0.40"), "{}", describe(steals));
            assert!((m.moved[0].change.unwrap() - 0.16).abs() < 0.005, "{:?}", m.moved[0]);
        }
    }

    #[test]
    fn nothing_moved_between_equal_sides() {
        let (base, _) = sides();
        let cell = CellKey::plain("steal-half", 2, "channel-ping-pong");
        let cells = vec![(cell, vec![], base.iter().collect(), base.iter().collect())];
        for paired in [false, true] {
            assert!(explain(&cells, paired, 0.05)[0].moved.is_empty());
        }
        let text = render(&explain(&cells, true, 0.05), 0.05);
        assert!(text.contains("no per-op figure moved significantly"), "{text}");
    }
}
