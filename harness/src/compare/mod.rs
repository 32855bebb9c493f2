//! `wsbench compare BASE CURRENT`: the regression gate.
//!
//! Cells are matched by (scheduler, workload, workers, knobs, params,
//! rate). For throughput and each latency percentile the runs of both
//! sides go through a two-sided Mann–Whitney U test; a change is
//! `regressed` or `improved` only when the test is significant at `--alpha`
//! **and** the medians differ by at least the effect-size floor
//! (`--threshold`, or `--tail-threshold` for p99 and p99.9). CPU per op
//! (`cpu_us_per_op`) is judged like a latency: lower is better, with the
//! tail floor (it moves with machine noise as much as p99 does). Everything
//! else is `unchanged`. Exit status: 1 when anything regressed, 0
//! otherwise, 2 on unusable input or a report that cannot be written.
//!
//! Two files of one A/B invocation (`run --base-bin`, see [`crate::run::ab`])
//! are judged on their pairs instead: the change is the median ratio
//! current/base over the pairs, and both `p` and the corrected `q` come
//! from the one-sample t-test on the pairs' log ratios. From [`MIN_PAIRS`]
//! to [`shift::MAX_PAIRS`] pairs, a latency percentile that every pair has is judged instead
//! by the shift test on its per-run values ([`crate::stats::shift`]: the
//! median ratio over every base run against every current run, a
//! sign-flip test over the pairs); one the runs are too short for (blank
//! in some) is judged, with the invocation's HDR logs (`--hdr-dir`), on
//! each side's runs added into one histogram ([`pooled`]). `--plant` measures the gate's
//! power on the files instead of judging them ([`plant`]).
//!
//! Beside each cell that regressed or improved, the report names the
//! per-operation figures that moved with it ([`mechanism`]).

pub mod confirm;
mod control;
pub mod mechanism;
pub mod plant;
pub mod pooled;
mod render;

pub use self::pooled::Histograms;
pub use self::render::{format_q, render_markdown, DETECTABLE, PAIR_CHANGE};

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::data::load::{load, ResultsFile};
use crate::data::record::{CellKey, LatencyMetric, RunRecord, Status, SCHEMA_VERSION};
use crate::exit::EXIT_FAILURE;
use crate::output::export::{file, marks, write_output, Kind};
use crate::output::table::{format_count, format_us};
use crate::parse::parse_percent;
use crate::run::ab::{self, Pairing};
use crate::stats::shift::{self, shift_test};
use crate::stats::signflip::MIN_PAIRS;
use crate::stats::ttest::{benjamini_hochberg, paired_detectable, welch_log_detectable, welch_log_p, POWER};
use crate::stats::{mann_whitney_p, median, min_possible_p};

/// Input `compare` cannot judge: missing or malformed files, schema
/// mismatch. Maps to exit status 2.
#[derive(Debug)]
pub struct Unusable(pub String);

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unusable {}

pub(crate) fn unusable(err: anyhow::Error) -> anyhow::Error {
    anyhow::Error::new(Unusable(format!("{err:#}")))
}

/// The verdict on one metric of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Significantly worse by more than the floor.
    Regressed,
    /// Not both significant and beyond the floor.
    Unchanged,
    /// Significantly better by more than the floor.
    Improved,
}

impl Verdict {
    /// `regressed`, `unchanged` or `improved`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regressed => "regressed",
            Verdict::Unchanged => "unchanged",
            Verdict::Improved => "improved",
        }
    }
}

/// Where a metric's value comes from.
#[derive(Debug, Clone, Copy)]
enum Source {
    Throughput,
    Latency(LatencyMetric),
    CpuPerOp,
}

/// What is compared and in which direction.
#[derive(Debug, Clone, Copy)]
struct Metric {
    name: &'static str,
    higher_is_better: bool,
    tail: bool,
    source: Source,
}

const METRICS: [Metric; 6] = [
    Metric { name: "throughput_per_s", higher_is_better: true, tail: false, source: Source::Throughput },
    Metric { name: "p50_us", higher_is_better: false, tail: false, source: Source::Latency(LatencyMetric::P50) },
    Metric { name: "p90_us", higher_is_better: false, tail: false, source: Source::Latency(LatencyMetric::P90) },
    Metric { name: "p99_us", higher_is_better: false, tail: true, source: Source::Latency(LatencyMetric::P99) },
    Metric { name: "p999_us", higher_is_better: false, tail: true, source: Source::Latency(LatencyMetric::P999) },
    Metric { name: "cpu_us_per_op", higher_is_better: false, tail: true, source: Source::CpuPerOp },
];

impl Metric {
    fn value(&self, r: &RunRecord) -> Option<f64> {
        match self.source {
            Source::Throughput => r.throughput_per_s,
            Source::Latency(m) => r.latency.map(|l| l.get(m)),
            Source::CpuPerOp => r.cpu.cpu_us_per_op,
        }
    }

    fn values(&self, runs: &[&RunRecord]) -> Vec<f64> {
        runs.iter().filter_map(|r| self.value(r)).filter(|v| v.is_finite()).collect()
    }

    fn format(&self, v: f64) -> String {
        match self.source {
            Source::Throughput => format!("{}/s", format_count(v)),
            Source::Latency(_) | Source::CpuPerOp => format_us(v),
        }
    }
}

/// The pairs (base, current) of `metric` in one cell of an A/B invocation,
/// as the gate judges them; empty for a column it does not judge.
pub fn metric_pairs(metric: &str, base: &[&RunRecord], current: &[&RunRecord]) -> Vec<(f64, f64)> {
    METRICS.iter().find(|m| m.name == metric).map_or_else(Vec::new, |m| ab::pairs(base, current, |r| m.value(r)))
}

/// One metric of one cell.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The cell.
    pub cell: CellKey,
    /// CSV column compared.
    pub metric: &'static str,
    /// Median of the base runs (paired: of the base side of the pairs).
    pub base: f64,
    /// Median of the current runs.
    pub current: f64,
    /// (current - base) / base; paired: the median of the pairs'
    /// current/base ratios, minus 1.
    pub change: f64,
    /// Two-sided Mann–Whitney U p-value; paired: the t-test's (as
    /// `t_test_p`).
    pub p_value: Option<f64>,
    /// Two-sided p-value of Welch's t-test on the logarithms of the runs;
    /// paired: of the one-sample t-test on the pairs' log ratios.
    pub t_test_p: Option<f64>,
    /// `t_test_p` adjusted for every comparison of the report
    /// (Benjamini–Hochberg).
    pub q_value: Option<f64>,
    /// The minimum detectable change (a fraction): the smallest true
    /// change the t-test finds at alpha with 80 % power, given this cell's
    /// spread (paired: of the pairs' log ratios; else of each side's
    /// logarithms). Before the correction over all comparisons, so a
    /// lower bound. `None` with fewer than 2 runs (pairs) a side.
    pub detectable: Option<f64>,
    /// Ok runs on each side (paired: the pairs, twice).
    pub runs: (usize, usize),
    /// Judged on the pairs of one A/B invocation.
    pub paired: bool,
    /// A latency percentile judged on each side's runs added into one
    /// histogram (`--hdr-dir`, [`pooled`]): `base` and `current` are the
    /// added histograms' percentiles, `p` the sign-flip test's.
    pub pooled: bool,
    /// A latency percentile of paired files judged by the shift test on
    /// its per-run values ([`crate::stats::shift`]): `change` is the
    /// typical ratio of a current run's value to a base run's, over every
    /// combination, minus 1; `p` the sign-flip test's.
    pub shift: bool,
    /// The decision.
    pub verdict: Verdict,
    /// Why, when it is not obvious (e.g. every current run failed).
    pub note: String,
    /// Paired files only: every runtime of the cell's group (same workers,
    /// workload, parameters, rate) moved alike, the references included:
    /// a change in code they share (the workloads), shown as
    /// `regressed (all runtimes)` / `improved (all runtimes)`.
    pub all_runtimes: bool,
}

impl Comparison {
    /// How much worse, as a positive fraction (negative = better).
    fn badness(&self, higher_is_better: bool) -> f64 {
        if higher_is_better {
            -self.change
        } else {
            self.change
        }
    }
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Base file.
    pub base: String,
    /// Current file.
    pub current: String,
    /// The base file's `timestamp` (the start of its invocation).
    pub base_timestamp: String,
    /// The current file's `timestamp`: `report` shows a comparison as a run
    /// directory's only when this is its results.csv's.
    pub current_timestamp: String,
    /// Effect-size floor (fraction).
    pub threshold: f64,
    /// Tail floor (fraction).
    pub tail_threshold: f64,
    /// Significance level.
    pub alpha: f64,
    /// `paired` (two sides of one A/B invocation) or `independent`.
    pub pairing: &'static str,
    /// Regressed / unchanged / improved counts.
    pub counts: BTreeMap<&'static str, usize>,
    /// Every comparison, worst first.
    pub comparisons: Vec<Comparison>,
    /// Cells only in the base file.
    pub only_in_base: Vec<String>,
    /// Cells only in the current file.
    pub only_in_current: Vec<String>,
    /// Environment differences and test-power warnings.
    pub warnings: Vec<String>,
    /// For each regressed or improved cell, the per-op figures that moved.
    pub mechanism: Vec<mechanism::CellMechanism>,
}

impl Report {
    /// True when anything regressed.
    pub fn regressed(&self) -> bool {
        self.comparisons.iter().any(|c| c.verdict == Verdict::Regressed)
    }
}

/// Settings of one comparison.
#[derive(Debug, Clone, Copy)]
pub struct Floors {
    /// Floor for throughput, p50, p90.
    pub threshold: f64,
    /// Floor for p99, p99.9 and CPU per op.
    pub tail_threshold: f64,
    /// Significance level.
    pub alpha: f64,
}

fn group(file: &ResultsFile) -> BTreeMap<CellKey, Vec<&RunRecord>> {
    let mut cells: BTreeMap<CellKey, Vec<&RunRecord>> = BTreeMap::new();
    for r in &file.records {
        cells.entry(r.key.clone()).or_default().push(r);
    }
    cells
}

/// Sets the verdicts once every comparison has its p-values: a change is
/// `regressed` or `improved` when the rank test is significant at alpha,
/// the t-test still is after the Benjamini–Hochberg correction over all
/// comparisons (q < alpha), and the medians differ by at least the floor.
fn decide(comparisons: &mut [Comparison], floors: &Floors) {
    let tested: Vec<usize> = (0..comparisons.len()).filter(|&i| comparisons[i].t_test_p.is_some()).collect();
    let p: Vec<f64> = tested.iter().filter_map(|&i| comparisons[i].t_test_p).collect();
    for (&i, q) in tested.iter().zip(benjamini_hochberg(&p)) {
        comparisons[i].q_value = Some(q);
    }
    for c in comparisons.iter_mut().filter(|c| c.metric != "ok_runs") {
        let Some(metric) = METRICS.iter().find(|m| m.name == c.metric) else { continue };
        let floor = if metric.tail { floors.tail_threshold } else { floors.threshold };
        let significant = c.p_value.is_some_and(|p| p < floors.alpha) && c.q_value.is_some_and(|q| q < floors.alpha);
        let worse = if metric.higher_is_better { -c.change } else { c.change };
        c.verdict = if significant && worse >= floor {
            Verdict::Regressed
        } else if significant && -worse >= floor {
            Verdict::Improved
        } else {
            Verdict::Unchanged
        };
        if c.verdict == Verdict::Unchanged && c.note.is_empty() {
            if let Some(d) = c.detectable.filter(|d| *d > floor) {
                c.note = underpowered_note(floor, d);
            }
        }
    }
}

/// The note on an `unchanged` verdict that could not have seen a change
/// of the floor's size: the cell's runs spread too much.
fn underpowered_note(floor: f64, detectable: f64) -> String {
    format!(
        "not enough power to see {:.0}%: these runs detect {:.0}% or more (at {:.0}% power)",
        floor * 100.0,
        detectable * 100.0,
        POWER * 100.0
    )
}

fn judge(metric: &Metric, cell: &CellKey, base: &[f64], current: &[f64], alpha: f64) -> Option<Comparison> {
    if base.is_empty() || current.is_empty() {
        return None;
    }
    let (b, c) = (median(base), median(current));
    let change = if b == 0.0 {
        if c == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(c)
        }
    } else {
        (c - b) / b.abs()
    };
    Some(Comparison {
        cell: cell.clone(),
        metric: metric.name,
        base: b,
        current: c,
        change,
        p_value: mann_whitney_p(base, current),
        t_test_p: welch_log_p(base, current),
        q_value: None,
        detectable: welch_log_detectable(base, current, alpha),
        runs: (base.len(), current.len()),
        paired: false,
        pooled: false,
        shift: false,
        verdict: Verdict::Unchanged,
        note: String::new(),
        all_runtimes: false,
    })
}

/// What a paired test found, before the verdict.
pub(crate) struct PairedFinding {
    /// The base side's figure: the median of its runs, or the added
    /// histogram's percentile.
    pub base: f64,
    /// The current side's figure, as `base`.
    pub current: f64,
    /// The test's change (a fraction).
    pub change: f64,
    /// The test's two-sided p-value.
    pub p: Option<f64>,
    /// The test's minimum detectable change (a fraction).
    pub detectable: Option<f64>,
    /// The pairs judged.
    pub pairs: usize,
}

impl Comparison {
    /// The comparison of a paired `metric` of `cell`, `unchanged` until
    /// the verdicts; `pooled` and `shift` say which test judged it.
    pub(crate) fn paired(cell: &CellKey, metric: &'static str, found: PairedFinding) -> Comparison {
        Comparison {
            cell: cell.clone(),
            metric,
            base: found.base,
            current: found.current,
            change: found.change,
            p_value: found.p,
            t_test_p: found.p,
            q_value: None,
            detectable: found.detectable,
            runs: (found.pairs, found.pairs),
            paired: true,
            pooled: false,
            shift: false,
            verdict: Verdict::Unchanged,
            note: String::new(),
            all_runtimes: false,
        }
    }
}

/// The seed of a sign-flip test's random swaps, fixed per (cell, metric)
/// for both its statistics (shift, pooled): the same files always get the
/// same verdicts.
fn flip_seed(cell: &CellKey, metric: &str) -> u64 {
    crate::stats::seed_from(0, &format!("{cell}\u{0}{metric}"))
}

/// Judges a latency percentile of [`MIN_PAIRS`] to [`shift::MAX_PAIRS`]
/// pairs by the shift test ([`crate::stats::shift`]). `None` when a value is not
/// positive: the caller then falls back to the paired t-test.
fn judge_shift(metric: &Metric, cell: &CellKey, pairs: &[(f64, f64)], alpha: f64) -> Option<Comparison> {
    let test = shift_test(pairs, alpha, flip_seed(cell, metric.name))?;
    let (b, c): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let found = PairedFinding {
        base: median(&b),
        current: median(&c),
        change: test.change,
        p: Some(test.p),
        detectable: Some(test.detectable),
        pairs: pairs.len(),
    };
    Some(Comparison { shift: true, ..Comparison::paired(cell, metric.name, found) })
}

fn judge_paired(metric: &Metric, cell: &CellKey, pairs: &[(f64, f64)], alpha: f64) -> Option<Comparison> {
    let test = ab::paired_test(pairs)?;
    let (b, c): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let found = PairedFinding {
        base: median(&b),
        current: median(&c),
        change: test.change,
        p: test.p,
        detectable: ab::log_ratios(pairs).and_then(|d| paired_detectable(&d, alpha)),
        pairs: pairs.len(),
    };
    Some(Comparison::paired(cell, metric.name, found))
}

/// Compares two loaded files on their per-run values.
pub fn compare(base: &ResultsFile, current: &ResultsFile, floors: &Floors) -> Report {
    compare_with(base, current, floors, None)
}

/// One cell's runs on each side.
type Cells<'a> = BTreeMap<CellKey, Vec<&'a RunRecord>>;

/// The cells both files have, in the current file's order.
fn common<'k>(base: &Cells<'_>, current: &'k Cells<'_>) -> Vec<&'k CellKey> {
    current.keys().filter(|k| base.contains_key(*k)).collect()
}

/// What the comparisons are made from: both files' cells, how the files
/// relate, and the run histograms when `--hdr-dir` gave them.
struct Inputs<'a> {
    base: Cells<'a>,
    current: Cells<'a>,
    pairing: Pairing,
    histograms: Option<&'a Histograms>,
    alpha: f64,
}

impl<'a> Inputs<'a> {
    /// The inputs of comparing `base` with `current`.
    fn new(base: &'a ResultsFile, current: &'a ResultsFile, histograms: Option<&'a Histograms>, alpha: f64) -> Self {
        Inputs { base: group(base), current: group(current), pairing: ab::pairing(base, current), histograms, alpha }
    }

    /// Judges `metric` of cell `key` (in both files), the current side's
    /// values multiplied by `scale` (1 but for a planted change): on the
    /// added histograms for a latency percentile of paired files with logs,
    /// else on the pairs (paired files) or on the runs.
    fn judge_metric(&self, metric: &Metric, key: &CellKey, scale: f64) -> Option<Comparison> {
        let (base_runs, current_runs) = (self.base.get(key)?, self.current.get(key)?);
        if let Pairing::Paired(_) = self.pairing {
            let pairs: Vec<(f64, f64)> = ab::pairs(base_runs, current_runs, |r| metric.value(r))
                .into_iter()
                .map(|(b, c)| (b, c * scale))
                .collect();
            let Source::Latency(m) = metric.source else {
                return judge_paired(metric, key, &pairs, self.alpha);
            };
            // Every pair of ok runs has the percentile: the shift test on
            // the per-run values. A percentile the runs are too short for
            // (blank in some) is judged on the added histograms when
            // --hdr-dir gave them.
            let ok_pairs = ab::pairs(base_runs, current_runs, |_| Some(1.0)).len();
            if (MIN_PAIRS..=shift::MAX_PAIRS).contains(&pairs.len()) && pairs.len() == ok_pairs {
                if let Some(c) = judge_shift(metric, key, &pairs, self.alpha) {
                    return Some(c);
                }
            }
            let runs = self.histograms.and_then(|h| h.cells.get(key));
            if let (Some(runs), Some(q)) = (runs, pooled::quantile(m)) {
                let sides = (base_runs.as_slice(), current_runs.as_slice());
                if let Some(c) = pooled::judge(metric.name, key, q, runs, sides, scale, self.alpha) {
                    return Some(c);
                }
            }
            return judge_paired(metric, key, &pairs, self.alpha);
        }
        let (b_ok, c_ok) = (ok_runs(base_runs), ok_runs(current_runs));
        let scaled: Vec<f64> = metric.values(&c_ok).iter().map(|v| v * scale).collect();
        judge(metric, key, &metric.values(&b_ok), &scaled, self.alpha)
    }

    /// Every comparison before the verdicts, and the (base, current) ok
    /// run counts of cells too small to test.
    fn judge_all(&self) -> (Vec<Comparison>, Vec<(usize, usize)>) {
        let mut comparisons = Vec::new();
        let mut underpowered = Vec::new();
        for (key, base_runs) in &self.base {
            let Some(current_runs) = self.current.get(key) else {
                continue;
            };
            let (b_ok, c_ok) = (ok_runs(base_runs), ok_runs(current_runs));
            if c_ok.is_empty() && !b_ok.is_empty() {
                comparisons.push(all_failed(key, b_ok.len(), current_runs));
                continue;
            }
            if let Pairing::Paired(_) = self.pairing {
                let single = |m: &&Metric| ab::pairs(base_runs, current_runs, |r| m.value(r)).len() == 1;
                underpowered.extend(METRICS.iter().filter(single).map(|_| (1, 1)));
            } else if !b_ok.is_empty() && !c_ok.is_empty() && min_possible_p(b_ok.len(), c_ok.len()) >= self.alpha {
                underpowered.push((b_ok.len(), c_ok.len()));
            }
            comparisons.extend(METRICS.iter().filter_map(|metric| self.judge_metric(metric, key, 1.0)));
        }
        (comparisons, underpowered)
    }
}

/// Sets every verdict of `comparisons`: the correction over all of them,
/// the floors, and the references' role. Returns the references' own
/// changes set aside as the machine's.
fn verdicts(comparisons: &mut [Comparison], floors: &Floors, pairing: Pairing) -> Vec<String> {
    decide(comparisons, floors);
    control::hold(comparisons, floors, matches!(pairing, Pairing::Paired(_)))
}

/// Compares two loaded files; with `histograms` (`--hdr-dir`), the latency
/// percentiles of paired files on each side's added histograms.
pub fn compare_with(
    base: &ResultsFile,
    current: &ResultsFile,
    floors: &Floors,
    histograms: Option<&Histograms>,
) -> Report {
    compare_stage(base, current, floors, histograms, None)
}

/// [`compare_with`], as the second stage of `first` (`--confirms`) when
/// given: only a metric regressed in both stages stays `regressed`
/// ([`confirm::relabel`]).
pub fn compare_stage(
    base: &ResultsFile,
    current: &ResultsFile,
    floors: &Floors,
    histograms: Option<&Histograms>,
    first: Option<&confirm::Regressed>,
) -> Report {
    let inputs = Inputs::new(base, current, histograms, floors.alpha);
    let (base_cells, current_cells, pairing) = (&inputs.base, &inputs.current, inputs.pairing);
    let (mut comparisons, underpowered) = inputs.judge_all();
    let machine = verdicts(&mut comparisons, floors, pairing);
    if let Some(first) = first {
        confirm::relabel(&mut comparisons, first);
    }
    let direction: BTreeMap<&str, bool> = METRICS.iter().map(|m| (m.name, m.higher_is_better)).collect();
    comparisons.sort_by(|a, b| {
        let bad = |c: &Comparison| c.badness(*direction.get(c.metric).unwrap_or(&true));
        a.verdict.cmp(&b.verdict).then(bad(b).total_cmp(&bad(a)))
    });
    let mut counts = BTreeMap::new();
    for v in [Verdict::Regressed, Verdict::Improved, Verdict::Unchanged] {
        counts.insert(v.as_str(), comparisons.iter().filter(|c| c.verdict == v).count());
    }
    let mechanism = explain_verdicts(&comparisons, base_cells, current_cells, pairing, floors.alpha);
    let mut warnings = environment_warnings(base, current);
    if let Some(h) = histograms.filter(|h| !h.missing.is_empty()) {
        warnings.push(format!(
            "{} cell(s) have no HDR log on one side or both (e.g. `{}`): their latency is judged on the per-run values",
            h.missing.len(),
            h.missing[0]
        ));
    }
    // Cells whose latency a sign-flip test judged (shift or pooled).
    let flipped =
        comparisons.iter().filter(|c| c.pooled || c.shift).map(|c| &c.cell).collect::<std::collections::BTreeSet<_>>();
    let short = histograms.map_or(0, |h| h.cells.keys().filter(|k| !flipped.contains(k)).count());
    if short > 0 && matches!(pairing, Pairing::Paired(_)) {
        warnings.push(format!(
            "{short} cell(s) with HDR logs have fewer than {} pairs of ok runs: the sign-flip tests cannot reach the correction's \
             threshold with so few, so their latency is judged on the per-run values (use --runs {} or more)",
            MIN_PAIRS,
            MIN_PAIRS
        ));
    }
    if histograms.is_some() && !matches!(pairing, Pairing::Paired(_)) {
        warnings.push(
            "--hdr-dir is used only for the two files of one A/B invocation (run --base-bin); these are judged on their runs"
                .to_string(),
        );
    }
    if !machine.is_empty() {
        warnings.push(format!(
            "the reference runtime changed ({}): the machine, the workload code or tokio differs between the two files; \
             changes of ours that {} shows alike in the same cell are not counted",
            machine.join(", "),
            control::CONTROL
        ));
    }
    match pairing {
        Pairing::Paired(_) if !underpowered.is_empty() => warnings.push(format!(
            "{} metric(s) have a single pair of ok runs: no spread to test, so they can only be `unchanged`; use --runs 5 or more",
            underpowered.len()
        )),
        Pairing::Paired(_) => {}
        Pairing::DifferentSessions => warnings.push(
            "both files come from A/B invocations (run --base-bin), but from different ones: their runs are not pairs, \
             so they are judged as independent files; compare the two files of one invocation to judge the pairs"
                .to_string(),
        ),
        Pairing::Unpaired => {
            if let Some(w) = power_warning(&underpowered, floors.alpha) {
                warnings.push(w);
            }
        }
    }
    let only = |a: &BTreeMap<CellKey, Vec<&RunRecord>>, b: &BTreeMap<CellKey, Vec<&RunRecord>>| {
        a.keys().filter(|k| !b.contains_key(*k)).map(|k| k.to_string()).collect()
    };
    Report {
        base: base.path.display().to_string(),
        current: current.path.display().to_string(),
        base_timestamp: base.timestamp.clone(),
        current_timestamp: current.timestamp.clone(),
        threshold: floors.threshold,
        tail_threshold: floors.tail_threshold,
        alpha: floors.alpha,
        pairing: if matches!(pairing, Pairing::Paired(_)) { "paired" } else { "independent" },
        counts,
        comparisons,
        only_in_base: only(base_cells, current_cells),
        only_in_current: only(current_cells, base_cells),
        warnings,
        mechanism,
    }
}

/// The per-op figures that moved in each regressed or improved cell.
fn explain_verdicts(
    comparisons: &[Comparison],
    base: &BTreeMap<CellKey, Vec<&RunRecord>>,
    current: &BTreeMap<CellKey, Vec<&RunRecord>>,
    pairing: Pairing,
    alpha: f64,
) -> Vec<mechanism::CellMechanism> {
    let mut verdicts: BTreeMap<&CellKey, Vec<String>> = BTreeMap::new();
    for c in comparisons.iter().filter(|c| c.verdict != Verdict::Unchanged && c.metric != "ok_runs") {
        let q = c.q_value.map(format_q).unwrap_or_else(|| "-".to_string());
        let text = format!("{} {} {:+.1}% (q {q})", c.verdict.as_str(), c.metric, c.change * 100.0);
        verdicts.entry(&c.cell).or_default().push(text);
    }
    let cells: Vec<_> = verdicts
        .into_iter()
        .filter_map(|(key, texts)| Some((key.clone(), texts, base.get(key)?.clone(), current.get(key)?.clone())))
        .collect();
    mechanism::explain(&cells, matches!(pairing, Pairing::Paired(_)), alpha)
}

/// The warning about cells whose run counts (ok base runs, ok current
/// runs) cannot reach `alpha`, saying which counts were compared and the
/// smallest p-value each allows.
fn power_warning(underpowered: &[(usize, usize)], alpha: f64) -> Option<String> {
    if underpowered.is_empty() {
        return None;
    }
    let mut counts = underpowered.to_vec();
    counts.sort_unstable();
    counts.dedup();
    let pairs: Vec<String> = counts
        .iter()
        .map(|&(b, c)| format!("{b} vs {c} runs cannot go below p = {:.3}", min_possible_p(b, c)))
        .collect();
    Some(format!(
        "{} cell(s) have too few ok runs for the test to ever reach alpha {alpha} ({}); they can only be `unchanged`: \
         use --runs 5 or more",
        underpowered.len(),
        pairs.join("; ")
    ))
}

fn ok_runs<'a>(runs: &[&'a RunRecord]) -> Vec<&'a RunRecord> {
    runs.iter().filter(|r| r.status == Status::Ok).copied().collect()
}

fn all_failed(key: &CellKey, base_ok: usize, current_runs: &[&RunRecord]) -> Comparison {
    let mut errors: Vec<&str> = current_runs.iter().map(|r| r.error.as_str()).collect();
    errors.dedup();
    Comparison {
        cell: key.clone(),
        metric: "ok_runs",
        base: base_ok as f64,
        current: 0.0,
        change: -1.0,
        p_value: None,
        t_test_p: None,
        q_value: None,
        detectable: None,
        runs: (base_ok, 0),
        paired: false,
        pooled: false,
        shift: false,
        verdict: Verdict::Regressed,
        note: format!("every current run failed: {}", errors.join("; ")),
        all_runtimes: false,
    }
}

fn environment_warnings(base: &ResultsFile, current: &ResultsFile) -> Vec<String> {
    let mut out = Vec::new();
    if base.cpu_model != current.cpu_model {
        out.push(format!("different CPU models: base `{}`, current `{}`", base.cpu_model, current.cpu_model));
    }
    if base.logical_cpus != current.logical_cpus {
        out.push(format!(
            "different core counts: base {} logical CPUs, current {}",
            crate::run::env::or_unknown(base.logical_cpus),
            crate::run::env::or_unknown(current.logical_cpus)
        ));
    }
    if base.host != current.host {
        out.push(format!("different hosts: base `{}`, current `{}`", base.host, current.host));
    }
    out.extend(calibration_warnings(base, current));
    out
}

/// The calibrated spin rates of two files differ by more than this share:
/// the same nominal service time was a different amount of work.
pub const SPIN_RATE_TOLERANCE: f64 = 0.10;

/// The median of an extra over a file's rows that have it.
fn median_extra(file: &ResultsFile, name: &str) -> Option<f64> {
    let v: Vec<f64> = file
        .records
        .iter()
        .filter_map(|r| r.extras.iter().find(|(k, _)| k == name).map(|(_, v)| *v))
        .filter(|v| v.is_finite())
        .collect();
    (!v.is_empty()).then(|| crate::stats::median(&v))
}

/// Warnings from the instruments' own figures in the rows: the spin
/// calibration of base and current (`spin_iters_per_ns`) against
/// [`SPIN_RATE_TOLERANCE`], and runs whose calibration drifted
/// (`spin_drift`) beyond the bound at which a run gets a note.
fn calibration_warnings(base: &ResultsFile, current: &ResultsFile) -> Vec<String> {
    let mut out = Vec::new();
    let rate = wsbench_workloads::api::extra::SPIN_ITERS_PER_NS;
    if let (Some(b), Some(c)) = (median_extra(base, rate), median_extra(current, rate)) {
        let change = c / b - 1.0;
        if change.abs() > SPIN_RATE_TOLERANCE {
            out.push(format!(
                "the machines' spin calibrations differ: base {b:.4}, current {c:.4} iterations/ns ({:+.1}%, beyond the {:.0}% tolerance): \
                 the same nominal service time was a different amount of CPU work; run `wsbench doctor --calibrate` on both",
                change * 100.0,
                SPIN_RATE_TOLERANCE * 100.0
            ));
        }
    }
    for (side, file) in [("base", base), ("current", current)] {
        let drifted = file
            .records
            .iter()
            .filter(|r| {
                r.extras.iter().any(|(k, v)| {
                    k == wsbench_workloads::api::extra::SPIN_DRIFT && v.abs() > wsbench_workloads::spin::DRIFT_NOTE
                })
            })
            .count();
        if drifted > 0 {
            out.push(format!(
                "{drifted} of {} {side} runs drifted beyond {:.0}% from their spin calibration (spin_drift): the CPU's speed moved during them",
                file.records.len(),
                wsbench_workloads::spin::DRIFT_NOTE * 100.0
            ));
        }
    }
    out
}

/// `wsbench compare`'s options, checked (`crate::options`).
#[derive(Debug, Clone)]
pub struct Options {
    /// The baseline results.
    pub base: PathBuf,
    /// The results judged against it.
    pub current: PathBuf,
    /// The effect-size floors and the significance level.
    pub floors: Floors,
    /// Also write the verdicts as JSON here.
    pub json: Option<PathBuf>,
    /// Also write the markdown report here.
    pub out: Option<PathBuf>,
    /// The HDR logs of the A/B invocation (`--hdr-dir`).
    pub hdr_dir: Option<PathBuf>,
    /// Changes to plant, one cell at a time (`--plant`): measure the
    /// gate's power instead of judging.
    pub plant: Vec<plant::Plant>,
    /// `--confirms`: these files are the second stage of this first
    /// stage's `compare --json` report.
    pub confirms: Option<PathBuf>,
}

/// Checks the floors given as text (`5%`) and the significance level; an
/// error is an unusable input (exit 2).
pub fn floors_of(threshold: &str, tail_threshold: &str, alpha: f64) -> Result<Floors> {
    let floors = Floors {
        threshold: parse_percent(threshold).context("bad --threshold").map_err(unusable)?,
        tail_threshold: parse_percent(tail_threshold).context("bad --tail-threshold").map_err(unusable)?,
        alpha,
    };
    if !(floors.alpha > 0.0 && floors.alpha < 1.0) {
        return Err(unusable(anyhow::anyhow!("--alpha {alpha} must be between 0 and 1")));
    }
    Ok(floors)
}

/// `wsbench compare`.
pub fn main(args: &Options) -> Result<ExitCode> {
    let floors = args.floors;
    check_outputs(args).map_err(unusable)?;
    if let (Ok(a), Ok(b)) = (std::fs::canonicalize(&args.base), std::fs::canonicalize(&args.current)) {
        if a == b {
            return Err(unusable(anyhow::anyhow!(
                "base `{}` and current `{}` are the same file `{}`: comparing a file with itself says nothing; give \
                 the baseline's results and the new results",
                args.base.display(),
                args.current.display(),
                a.display()
            )));
        }
    }
    let base = load(&args.base).map_err(unusable)?;
    let current = load(&args.current).map_err(unusable)?;
    if base.schema_version != current.schema_version {
        return Err(unusable(anyhow::anyhow!(
            "refusing to compare files of different schema versions: base `{}` has {}, current `{}` has {}",
            base.path.display(),
            base.schema_version,
            current.path.display(),
            current.schema_version
        )));
    }
    for file in [&base, &current] {
        if file.schema_version != SCHEMA_VERSION {
            return Err(unusable(anyhow::anyhow!(
                "`{}` has schema_version {}, this wsbench reads {SCHEMA_VERSION}; compare files written by the same schema",
                file.path.display(),
                file.schema_version
            )));
        }
    }
    let current_cells = group(&current);
    let common = common(&group(&base), &current_cells);
    let spans = pooled::Spans {
        base: pooled::Span::of(&args.base, &base.timestamp),
        current: pooled::Span::of(&args.current, &current.timestamp),
    };
    let histograms = pooled::load_for(args.hdr_dir.as_deref(), &common, spans).map_err(unusable)?;
    if !args.plant.is_empty() {
        return plant_main(args, &base, &current, histograms.as_ref());
    }
    let first = args.confirms.as_deref().map(confirm::regressed_in).transpose().map_err(unusable)?;
    let mut report = compare_stage(&base, &current, &floors, histograms.as_ref(), first.as_ref());
    if report.comparisons.is_empty() {
        return Err(unusable(nothing_compared(&base, &current, &report)));
    }
    let mut standing = Vec::new();
    if let (Some(first), Some(path)) = (&first, &args.confirms) {
        standing = confirm::unjudged(&report.comparisons, first);
        report.warnings.push(if standing.is_empty() {
            format!("the second stage of `{}`: only a metric regressed in both stages is `regressed`", path.display())
        } else {
            format!(
                "the second stage of `{}` could not judge {}: not re-measured, so the first stage's verdict stands",
                path.display(),
                standing.join(", ")
            )
        });
    }
    let markdown = render_markdown(&report);
    crate::out!("{markdown}");
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    write_reports(args, &report, &markdown)?;
    Ok(if report.regressed() || !standing.is_empty() { ExitCode::from(EXIT_FAILURE) } else { ExitCode::SUCCESS })
}

/// `compare --plant`: the power table instead of the verdicts (exit 0).
fn plant_main(
    args: &Options,
    base: &ResultsFile,
    current: &ResultsFile,
    histograms: Option<&Histograms>,
) -> Result<ExitCode> {
    let inputs = Inputs::new(base, current, histograms, args.floors.alpha);
    let report = plant::measure(&inputs, &args.floors, &args.plant);
    if report.comparisons == 0 {
        return Err(unusable(nothing_compared(base, current, &compare_with(base, current, &args.floors, histograms))));
    }
    let markdown = plant::render(&report);
    crate::out!("{markdown}");
    if let Some(path) = &args.out {
        write_output(path, marks::with_comment(Kind::Markdown, &markdown).as_bytes())
            .context("the table is on stdout, but --out could not be written")?;
    }
    if let Some(path) = &args.json {
        let bytes = marks::json(&report).context("cannot encode the table")?;
        write_output(path, &bytes).context("the table is on stdout, but --json could not be written")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Checks `--out` and `--json` before any work through the output guard:
/// each writable, neither the same file as the other or as an input.
fn check_outputs(args: &Options) -> Result<()> {
    let mut outputs: Vec<(&str, &Path, Kind)> = Vec::new();
    if let Some(path) = &args.out {
        outputs.push(("the report (--out)", path, Kind::Markdown));
    }
    if let Some(path) = &args.json {
        outputs.push(("the report (--json)", path, Kind::Json));
    }
    file::check_outputs(&outputs, &[("base", args.base.as_path()), ("current", args.current.as_path())])
}

/// Writes `--out` and `--json` after the report is on stdout. A failure
/// here is an error (exit 2), never taken for a regression.
fn write_reports(args: &Options, report: &Report, markdown: &str) -> Result<()> {
    if let Some(path) = &args.out {
        write_output(path, marks::with_comment(Kind::Markdown, markdown).as_bytes())
            .context("the report is on stdout, but --out could not be written")?;
    }
    if let Some(path) = &args.json {
        let bytes = marks::json(report).context("cannot encode the report")?;
        write_output(path, &bytes).context("the report is on stdout, but --json could not be written")?;
    }
    Ok(())
}

/// Why no comparison came out: a baseline that matches nothing is unusable,
/// not a pass.
fn nothing_compared(base: &ResultsFile, current: &ResultsFile, report: &Report) -> anyhow::Error {
    let cells = |n: usize, list: &[String]| match list.first() {
        Some(first) if n > 1 => format!("{n} cells, e.g. `{first}`"),
        Some(first) => format!("1 cell, `{first}`"),
        None => "none".to_string(),
    };
    if report.only_in_base.len() == group(base).len() {
        anyhow::anyhow!(
            "nothing to compare: base `{}` and current `{}` have no cell in common (only in base: {}; only in current: {}); \
             cells match by scheduler, workers, workload, knobs, params and rate",
            base.path.display(),
            current.path.display(),
            cells(report.only_in_base.len(), &report.only_in_base),
            cells(report.only_in_current.len(), &report.only_in_current)
        )
    } else {
        anyhow::anyhow!(
            "nothing to compare: the cells `{}` and `{}` have in common have no ok run in base (every run there failed)",
            base.path.display(),
            current.path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::record::{CellKey, RunRecord};

    fn file(extras: &[&[(&str, f64)]]) -> ResultsFile {
        let records = extras
            .iter()
            .enumerate()
            .map(|(run, e)| {
                let mut r = RunRecord::failed(CellKey::plain("steal-half", 1, "http"), run, String::new());
                r.extras = e.iter().map(|(k, v)| (k.to_string(), *v)).collect();
                r
            })
            .collect();
        ResultsFile {
            path: "f.csv".into(),
            schema_version: crate::data::record::SCHEMA_VERSION,
            timestamp: "2026-12-02T00:00:00Z".to_string(),
            host: "h".to_string(),
            cpu_model: "c".to_string(),
            logical_cpus: Some(2),
            git_sha: "s".to_string(),
            records,
        }
    }

    /// The two sides of one A/B invocation of `pairs` pairs whose p50s
    /// are equal, run by run.
    fn ab_files(pairs: usize) -> (ResultsFile, ResultsFile) {
        let side = |base: bool| {
            let mut f = file(&[]);
            f.records = (0..pairs)
                .map(|run| {
                    let mut r = RunRecord::failed(CellKey::plain("steal-half", 1, "http"), run, String::new());
                    r.status = Status::Ok;
                    let v = 100.0 + run as f64;
                    r.latency = Some(crate::data::record::Latencies {
                        p50_us: v,
                        p90_us: f64::NAN,
                        p99_us: f64::NAN,
                        p999_us: f64::NAN,
                        p9999_us: f64::NAN,
                        max_us: v,
                        mean_us: v,
                    });
                    ab::mark(&mut r, 7.0, base == ab::base_first(run));
                    r
                })
                .collect();
            f
        };
        (side(true), side(false))
    }

    #[test]
    fn the_shift_test_judges_from_16_to_64_pairs() {
        let floors = Floors { threshold: 0.05, tail_threshold: 0.1, alpha: 0.05 };
        for (pairs, shift) in [(15, false), (16, true), (64, true), (65, false)] {
            let (base, current) = ab_files(pairs);
            let report = compare(&base, &current, &floors);
            let p50 = report.comparisons.iter().find(|c| c.metric == "p50_us").unwrap();
            assert_eq!((p50.shift, p50.pooled, p50.runs), (shift, false, (pairs, pairs)), "{pairs} pairs");
        }
    }

    #[test]
    fn spin_calibrations_beyond_the_tolerance_are_warned_about() {
        let base = file(&[&[("spin_iters_per_ns", 0.50)], &[("spin_iters_per_ns", 0.52)], &[]]);
        let near = file(&[&[("spin_iters_per_ns", 0.55)]]);
        assert!(calibration_warnings(&base, &near).is_empty(), "+7.8% is within 10%");
        let far = file(&[&[("spin_iters_per_ns", 0.60)], &[("spin_iters_per_ns", 0.61)]]);
        let w = calibration_warnings(&base, &far);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("base 0.5100, current 0.6050") && w[0].contains("+18.6%"), "{w:?}");
        let old = file(&[&[("queue_wait", 1.0)]]);
        assert!(calibration_warnings(&base, &old).is_empty(), "files without the figure: nothing to hold");
    }

    #[test]
    fn drifted_runs_are_counted_per_side() {
        let base = file(&[&[("spin_drift", 0.02)], &[("spin_drift", -0.15)], &[("spin_drift", 0.11)]]);
        let current = file(&[&[("spin_drift", 0.10)]]);
        let w = calibration_warnings(&base, &current);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("2 of 3 base runs drifted beyond 10%"), "{w:?}");
    }
}
