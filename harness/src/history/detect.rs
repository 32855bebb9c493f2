//! `wsbench history detect`: the series of the history and their change
//! points, judged with `compare`'s floors.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use anyhow::Result;
use serde::Serialize;

use super::store::{RunSummary, Store};
use crate::data::record::CellKey;
use crate::output::table::Table;
use crate::stats::changepoint::{self, ChangePoint, Method, Search};
use crate::stats::median;

/// The metrics judged when none are named: those `compare` judges.
pub const DEFAULT_METRICS: [&str; 5] = ["throughput_per_s", "p50_us", "p90_us", "p99_us", "p999_us"];

/// True for metrics where a larger value is better (rates).
pub fn higher_is_better(metric: &str) -> bool {
    metric.ends_with("_per_s")
}

/// True for the tail metrics, judged against the tail floor.
pub fn is_tail(metric: &str) -> bool {
    matches!(metric, "p99_us" | "p999_us" | "p9999_us" | "max_us")
}

/// One point of a series: one run's median over its ok repetitions.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// History id of the run.
    pub run_id: i64,
    /// When it started.
    pub run_time: String,
    /// Its commit.
    pub git_sha: String,
    /// Median over the ok repetitions.
    pub value: f64,
    /// Ok repetitions.
    pub repetitions: usize,
}

/// The values of one (host, cell, metric) over the runs, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// Host.
    pub host: String,
    /// Cell.
    pub cell: CellKey,
    /// Metric (CSV column).
    pub metric: String,
    /// Points.
    pub points: Vec<Point>,
}

/// Every series of `metrics` (all stored metrics when empty), ordered by
/// host, cell and metric.
pub fn load_series(store: &Store, runs: &[RunSummary], metrics: &[String]) -> Result<Vec<Series>> {
    let by_id: HashMap<i64, &RunSummary> = runs.iter().map(|r| (r.id, r)).collect();
    let mut series: BTreeMap<(String, CellKey, String), Vec<Point>> = BTreeMap::new();
    for s in store.samples(metrics)? {
        let Some(run) = by_id.get(&s.run_id) else { continue };
        series.entry((s.host, s.cell, s.metric)).or_default().push(Point {
            run_id: s.run_id,
            run_time: run.key.run_time.clone(),
            git_sha: run.key.git_sha.clone(),
            value: median(&s.values),
            repetitions: s.values.len(),
        });
    }
    Ok(series.into_iter().map(|((host, cell, metric), points)| Series { host, cell, metric, points }).collect())
}

/// How a change point is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Worse by at least the floor.
    Regression,
    /// Better by at least the floor.
    Improvement,
    /// Significant, but smaller than the floor.
    Shift,
}

impl Kind {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Regression => "regression",
            Kind::Improvement => "improvement",
            Kind::Shift => "shift",
        }
    }
}

/// A change point with where it starts.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    /// Host.
    pub host: String,
    /// Cell.
    pub cell: CellKey,
    /// Metric.
    pub metric: String,
    /// The first run after the change.
    pub first: Point,
    /// The last run before it.
    pub last_before: Point,
    /// The statistics.
    pub change: ChangePoint,
    /// (after − before) / before of the segment means.
    pub relative_change: f64,
    /// The judgement.
    pub kind: Kind,
    /// True for the newest change point of its series.
    pub newest: bool,
}

/// Effect-size floors, as `compare` takes them.
#[derive(Debug, Clone, Copy)]
pub struct Floors {
    /// Throughput, p50, p90 and other metrics.
    pub threshold: f64,
    /// p99, p99.9, p99.99, max.
    pub tail_threshold: f64,
}

/// A seed per series, so each series' Monte Carlo draws are its own and the
/// same history always gives the same answer (FNV-1a of its identity).
fn seed_of(base: u64, s: &Series) -> u64 {
    crate::stats::seed_from(base, &format!("{}|{}|{}", s.host, s.cell, s.metric))
}

/// The change points of one series.
pub fn detect_series(s: &Series, settings: &Search, floors: &Floors) -> Vec<Found> {
    let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
    let found = changepoint::detect(&values, &Search { seed: seed_of(settings.seed, s), ..*settings });
    let count = found.len();
    found
        .into_iter()
        .enumerate()
        .map(|(i, change)| {
            let relative_change = change.relative_change();
            let worse = if higher_is_better(&s.metric) { -relative_change } else { relative_change };
            let floor = if is_tail(&s.metric) { floors.tail_threshold } else { floors.threshold };
            let kind = if worse >= floor {
                Kind::Regression
            } else if -worse >= floor {
                Kind::Improvement
            } else {
                Kind::Shift
            };
            Found {
                host: s.host.clone(),
                cell: s.cell.clone(),
                metric: s.metric.clone(),
                first: s.points[change.index].clone(),
                last_before: s.points[change.index - 1].clone(),
                change,
                relative_change,
                kind,
                newest: i + 1 == count,
            }
        })
        .collect()
}

/// The outcome of `history detect`.
#[derive(Debug, Clone, Serialize)]
pub struct Detection {
    /// Series examined.
    pub series: usize,
    /// Series too short to hold a change point (fewer than 2 × min size).
    pub too_short: usize,
    /// Every change point, newest first.
    pub found: Vec<Found>,
    /// The split statistic and its null.
    pub method: Method,
    /// The search settings used.
    pub p_value: f64,
    /// Most Monte Carlo draws per test.
    pub permutations: usize,
    /// Fewest runs on each side.
    pub min_size: usize,
}

impl Detection {
    /// The series whose newest change point is a regression.
    pub fn open_regressions(&self) -> impl Iterator<Item = &Found> {
        self.found.iter().filter(|f| f.newest && f.kind == Kind::Regression)
    }
}

/// Runs detection over every series.
pub fn detect_all(series: &[Series], settings: &Search, floors: &Floors) -> Detection {
    let mut found: Vec<Found> = series.iter().flat_map(|s| detect_series(s, settings, floors)).collect();
    found.sort_by(|a, b| b.first.run_time.cmp(&a.first.run_time).then(b.first.run_id.cmp(&a.first.run_id)));
    Detection {
        series: series.len(),
        too_short: series.iter().filter(|s| s.points.len() < 2 * settings.min_size.max(2)).count(),
        found,
        method: settings.method,
        p_value: settings.p_value,
        permutations: settings.permutations,
        min_size: settings.min_size,
    }
}

fn short_sha(sha: &str) -> &str {
    sha.get(..10).unwrap_or(sha)
}

/// The markdown report of a detection.
pub fn render_markdown(d: &Detection) -> String {
    let mut out = String::from("# wsbench history detect\n\n");
    let open = d.open_regressions().count();
    let _ = writeln!(
        out,
        "**{} change point(s) in {} series; {open} series end in a regression.** ({} series have fewer than {} runs and cannot show one.)\n",
        d.found.len(),
        d.series,
        d.too_short,
        2 * d.min_size
    );
    let rows = d
        .found
        .iter()
        .map(|f| {
            vec![
                if f.newest { format!("{} (newest)", f.kind.as_str()) } else { f.kind.as_str().to_string() },
                f.host.clone(),
                f.cell.to_string(),
                f.metric.clone(),
                format!("{} ({})", short_sha(&f.first.git_sha), f.first.run_time),
                short_sha(&f.last_before.git_sha).to_string(),
                format!("{:.4}", f.change.mean_before),
                format!("{:.4}", f.change.mean_after),
                format!("{:+.1}%", f.relative_change * 100.0),
                format!("{:.3}", f.change.p_value),
            ]
        })
        .collect();
    let table = Table {
        header: [
            "change",
            "host",
            "cell",
            "metric",
            "starts at",
            "last before",
            "mean before",
            "mean after",
            "size",
            "p",
        ]
        .map(String::from)
        .to_vec(),
        right: vec![false, false, false, false, false, false, true, true, true, true],
        rows,
    };
    if !d.found.is_empty() {
        out.push_str(&table.render_markdown());
    }
    let _ = writeln!(
        out,
        "\nMethod: {}. A split counts when its Monte Carlo p-value (at most {} draws, fewer once 20 reach it) is below {}, \
         with at least {} runs on each side. `starts at` is the first run after the change, `last before` the last run before it. A \
         change is a regression or improvement when the segment means differ by at least compare's floor.",
        method_line(d.method),
        d.permutations,
        d.p_value,
        d.min_size
    );
    out
}

/// One line naming a detection method, for the reports.
pub fn method_line(method: Method) -> &'static str {
    match method {
        Method::MeanShift => {
            "mean-shift (the largest two-sample t over the splits of each (host, cell, metric) series of per-run medians, tested \
             against independent Gaussian noise)"
        }
        Method::EDivisive => {
            "E-Divisive means (energy distance, alpha = 1, over each (host, cell, metric) series of per-run medians, tested by \
             shuffling the series)"
        }
    }
}
