//! The results table: one row per cell, the columns a reader needs first.
//! Rendered aligned for the terminal or as markdown.

use crate::data::outcome::Results;
use crate::data::record::{limits_label, LatencyMetric};
use crate::output::term::{self, TABLE_WIDTH};
pub use crate::output::units::{format_count, format_us};
use crate::stats::summary::{capacities, ratios_to, CellSummary};

/// Shown where a value does not exist.
pub const BLANK: &str = "-";
/// The counter shown in the table.
const STEALS_COUNTER: &str = "steals";
const PERCENT: f64 = 100.0;

/// A table: header and rows of cells.
#[derive(Debug, Clone)]
pub struct Table {
    /// Column titles.
    pub header: Vec<String>,
    /// Rows, each as long as the header.
    pub rows: Vec<Vec<String>>,
    /// Columns aligned right (numbers).
    pub right: Vec<bool>,
}

impl Table {
    /// Aligned plain text.
    pub fn render_text(&self) -> String {
        let width = |i: usize| {
            self.rows.iter().map(|r| r[i].chars().count()).chain([self.header[i].chars().count()]).max().unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.header.len()).map(width).collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let pad = " ".repeat(widths[i] - c.chars().count());
                    if self.right[i] {
                        format!("{pad}{c}")
                    } else {
                        format!("{c}{pad}")
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = line(&self.header);
        out.push('\n');
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }

    /// Drops the columns named in `droppable`, in that order, until the
    /// text rendering is at most `width` characters wide; returns the names
    /// dropped. Columns not named are kept whatever the width.
    pub fn fit(&mut self, width: usize, droppable: &[String]) -> Vec<String> {
        let mut dropped = Vec::new();
        for name in droppable {
            if self.text_width() <= width {
                break;
            }
            if let Some(i) = self.header.iter().position(|h| h == name) {
                self.remove_column(i);
                dropped.push(name.clone());
            }
        }
        dropped
    }

    /// Removes column `i` from the header and every row.
    pub fn remove_column(&mut self, i: usize) {
        self.header.remove(i);
        self.right.remove(i);
        for r in &mut self.rows {
            r.remove(i);
        }
    }

    /// The widest line of [`Table::render_text`].
    fn text_width(&self) -> usize {
        self.render_text().lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    /// A markdown table.
    pub fn render_markdown(&self) -> String {
        let esc = |s: &String| s.replace('|', "\\|");
        let mut out = format!("| {} |\n", self.header.iter().map(esc).collect::<Vec<_>>().join(" | "));
        let align: Vec<&str> = self.right.iter().map(|r| if *r { "---:" } else { "---" }).collect();
        out.push_str(&format!("| {} |\n", align.join(" | ")));
        for r in &self.rows {
            out.push_str(&format!("| {} |\n", r.iter().map(esc).collect::<Vec<_>>().join(" | ")));
        }
        out
    }
}

fn latency_cell(c: &CellSummary, metric: LatencyMetric) -> String {
    c.latency(metric).map(|s| format_us(s.median)).unwrap_or_else(|| BLANK.to_string())
}

/// Which optional columns a result set needs.
struct Optional {
    knobs: bool,
    params: bool,
    cpus: bool,
    cpuset: bool,
    throttled: bool,
    load: bool,
    failed: bool,
    failed_requests: bool,
    uncorrected: bool,
    ideal: bool,
}

/// The share of failed requests, next to the latencies it qualifies.
fn failed_requests_cell(c: &CellSummary) -> String {
    or_blank(c.failed_request_fraction.map(|f| format!("{:.2}%", f * PERCENT)))
}

fn or_blank(v: Option<String>) -> String {
    v.unwrap_or_else(|| BLANK.to_string())
}

fn non_empty_or_blank(text: &str) -> String {
    or_blank((!text.is_empty()).then(|| text.to_string()))
}

/// The column of the median time a run's cgroup was throttled (`--cpus`).
pub const THROTTLED: &str = "throttled";
/// The column of the uncorrected p99.
pub const UNCORRECTED_P99: &str = "p99 uncorr";
/// The columns of the ideal scheduler's p99 and the measured p99 over it.
pub const IDEAL_P99: &str = "ideal p99";
/// See [`IDEAL_P99`].
pub const P99_OVER_IDEAL: &str = "p99/ideal";

/// Asked and offered differ when they are more than this apart (relative).
const ASKED_OFFERED_TOLERANCE: f64 = 0.01;
/// Marks a row whose load generator fell behind its schedule.
const BEHIND_MARK: &str = " behind";

/// The measured offered rate, with the asked one beside it when they
/// differ by more than 1 % (`1.25M of 2.00M`), marked when the load
/// generator fell behind in a run.
fn offered_cell(c: &CellSummary) -> String {
    let asked = c.key.rate_per_s.map(|r| r as f64);
    let mut text = match (c.offered_per_s, asked) {
        (Some(o), Some(a)) if (o - a).abs() > ASKED_OFFERED_TOLERANCE * a => {
            format!("{} of {}", format_count(o), format_count(a))
        }
        (Some(o), _) => format_count(o),
        // No ok run measured it: the asked rate only, never as if offered.
        (None, Some(a)) => format!("{BLANK} of {}", format_count(a)),
        (None, None) => return BLANK.to_string(),
    };
    if !c.kept_schedule() {
        text.push_str(BEHIND_MARK);
    }
    text
}

/// One cell's row, in the column order of [`cells_table`].
fn cell_row(c: &CellSummary, cells: &[CellSummary], baseline: &str, optional: &Optional) -> Vec<String> {
    let mut row = vec![c.key.scheduler.clone(), c.key.workers.to_string(), c.key.workload.clone()];
    if optional.knobs {
        row.push(non_empty_or_blank(&c.key.knobs));
    }
    if optional.params {
        row.push(non_empty_or_blank(&c.key.params));
    }
    if optional.cpus {
        row.push(non_empty_or_blank(&c.key.cpus));
    }
    if optional.cpuset {
        row.push(non_empty_or_blank(&c.key.cpuset));
    }
    if optional.load {
        row.push(offered_cell(c));
    }
    let thr = c.throughput_per_s.filter(|_| c.ok_runs > 0);
    row.push(or_blank(thr.map(|s| format_count(s.median))));
    row.push(or_blank(thr.map(|s| format!("{:.1}%", s.relative_spread() * PERCENT))));
    for m in [LatencyMetric::P50, LatencyMetric::P99, LatencyMetric::P999, LatencyMetric::Max] {
        row.push(latency_cell(c, m));
        if m == LatencyMetric::P99 && optional.uncorrected {
            row.push(or_blank(c.uncorrected_p99_us.map(|s| format_us(s.median))));
        }
    }
    if optional.failed_requests {
        row.push(failed_requests_cell(c));
    }
    row.push(or_blank(c.counters.get(STEALS_COUNTER).map(|v| format_count(*v))));
    row.push(or_blank(c.cpu_us_per_op.map(|s| format_us(s.median))));
    if optional.throttled {
        row.push(or_blank(c.throttled_ms.map(|s| format!("{:.1}ms", s.median))));
    }
    let ratios = ratios_to(cells, c, baseline);
    for r in [ratios.throughput, ratios.p99] {
        row.push(or_blank(r.map(|r| format!("{r:.2}x"))));
    }
    if optional.ideal {
        row.push(or_blank(c.ideal_p99_us.map(|s| format_us(s.median))));
        row.push(or_blank(c.p99_over_ideal.map(|s| format!("{:.2}x", s.median))));
    }
    if optional.failed {
        row.push(format!("{}/{}", c.failed_runs, c.failed_runs + c.ok_runs));
    }
    row
}

/// The main table of a result set; `uncorrected`: with the uncorrected p99
/// beside the corrected one, when any cell kept it (`--wide`, markdown).
pub fn cells_table(results: &Results, uncorrected: bool) -> Table {
    let cells = &results.cells;
    let optional = Optional {
        knobs: cells.iter().any(|c| !c.key.knobs.is_empty()),
        params: cells.iter().any(|c| !c.key.params.is_empty()),
        cpus: cells.iter().any(|c| !c.key.cpus.is_empty()),
        cpuset: cells.iter().any(|c| !c.key.cpuset.is_empty()),
        throttled: cells.iter().any(|c| c.throttled_ms.is_some()),
        load: cells.iter().any(|c| c.load_per_s().is_some()),
        failed: cells.iter().any(|c| c.failed_runs > 0),
        failed_requests: cells.iter().any(|c| c.failed_request_fraction.is_some_and(|f| f > 0.0)),
        uncorrected: uncorrected && cells.iter().any(|c| c.uncorrected_p99_us.is_some()),
        ideal: cells.iter().any(|c| c.ideal_p99_us.is_some()),
    };
    let baseline = &results.settings.baseline_sched;
    let mut columns: Vec<(String, bool)> =
        vec![("scheduler".into(), false), ("workers".into(), true), ("workload".into(), false)];
    for (wanted, name, right) in [
        (optional.knobs, "knobs", false),
        (optional.params, "params", false),
        (optional.cpus, "cpus", true),
        (optional.cpuset, "cpuset", false),
        (optional.load, "offered/s", true),
    ] {
        if wanted {
            columns.push((name.into(), right));
        }
    }
    for name in ["throughput/s", "spread", "p50", "p99", "p99.9", "max"] {
        columns.push((name.into(), true));
        if name == "p99" && optional.uncorrected {
            columns.push((UNCORRECTED_P99.into(), true));
        }
    }
    if optional.failed_requests {
        columns.push(("failed req".into(), true));
    }
    columns.push(("steals".into(), true));
    columns.push(("cpu/op".into(), true));
    if optional.throttled {
        columns.push((THROTTLED.into(), true));
    }
    columns.push((format!("thr/{baseline}"), true));
    columns.push((format!("p99/{baseline}"), true));
    if optional.ideal {
        columns.push((IDEAL_P99.into(), true));
        columns.push((P99_OVER_IDEAL.into(), true));
    }
    if optional.failed {
        columns.push(("failed".into(), true));
    }
    Table {
        header: columns.iter().map(|c| c.0.clone()).collect(),
        right: columns.iter().map(|c| c.1).collect(),
        rows: cells.iter().map(|c| cell_row(c, cells, baseline, &optional)).collect(),
    }
}

/// Where the capacity table has its `limits` column (`--cpus`, `--cpuset`),
/// shown only when a series has a limit.
const LIMITS_COLUMN: usize = 4;

/// The capacity table, when an SLO was given.
pub fn capacity_table(results: &Results) -> Option<Table> {
    let slo = results.settings.slo?;
    let caps = capacities(&results.cells, &slo);
    if caps.is_empty() {
        return None;
    }
    let limits = caps.iter().any(|c| !c.cpus.is_empty() || !c.cpuset.is_empty());
    let header = [
        "scheduler",
        "workers",
        "workload",
        "knobs",
        "limits",
        &format!("capacity at {slo}"),
        "highest offered",
        "rates",
        "ideal capacity",
        "% of ideal",
    ];
    let rows = caps
        .iter()
        .map(|c| {
            vec![
                c.scheduler.clone(),
                c.workers.to_string(),
                c.workload.clone(),
                if c.knobs.is_empty() { BLANK.to_string() } else { c.knobs.clone() },
                non_empty_or_blank(&limits_label(&c.cpus, &c.cpuset)),
                match c.capacity_per_s {
                    Some(r) => format!("{}/s", format_count(r)),
                    None if c.points == 0 && c.behind == 0 => format!("too few samples for {}", slo.metric.label()),
                    None if c.points == 0 => "no rate kept its schedule".to_string(),
                    None => "below lowest rate".to_string(),
                },
                if c.points == 0 { BLANK.to_string() } else { format!("{}/s", format_count(c.highest_measured_per_s)) },
                {
                    let mut left_out = Vec::new();
                    if c.behind > 0 {
                        left_out.push(format!("{} behind", c.behind));
                    }
                    if c.too_few_samples > 0 {
                        left_out.push(format!("{} with too few samples", c.too_few_samples));
                    }
                    if left_out.is_empty() {
                        c.points.to_string()
                    } else {
                        format!("{} ({}, left out)", c.points, left_out.join(", "))
                    }
                },
                or_blank(c.ideal_capacity_per_s.map(|r| format!("{}/s", format_count(r)))),
                or_blank(c.percent_of_ideal.map(|p| format!("{p:.0}%"))),
            ]
        })
        .collect();
    let mut table = Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        right: vec![false, true, false, false, false, true, true, true, true, true],
        rows,
    };
    if !limits {
        table.remove_column(LIMITS_COLUMN);
    }
    Some(table)
}

/// Prints the cells table, the capacity table (with a rate sweep and an
/// SLO), the legend and the notes: what `run`, `serve` and `load` show.
pub fn print_results(results: &Results) {
    let wide = results.settings.wide;
    let mut table = cells_table(results, wide);
    let dropped =
        if wide { Vec::new() } else { table.fit(TABLE_WIDTH, &narrow_drops(&results.settings.baseline_sched)) };
    crate::out!("{}", table.render_text());
    if let Some(capacity) = capacity_table(results) {
        crate::outln!();
        crate::out!("{}", capacity.render_text());
    }
    let mut lines = legend(results);
    if !dropped.is_empty() {
        lines.push(format!(
            "left out to fit {TABLE_WIDTH} columns: {} (--wide shows every column; the CSV and JSON have them all)",
            dropped.join(", ")
        ));
    }
    lines.extend(results.notes().into_iter().map(|n| format!("note: {n}")));
    for line in lines {
        crate::outln!("{}", term::footnote(&line));
    }
}

/// The columns the run table gives up, first to last, to fit
/// [`TABLE_WIDTH`] without `--wide`: the tail and the counters before the
/// medians and ratios a reader compares first.
fn narrow_drops(baseline: &str) -> Vec<String> {
    ["p99.9", "max", "spread", IDEAL_P99, "steals", UNCORRECTED_P99, THROTTLED]
        .into_iter()
        .map(String::from)
        .chain([format!("thr/{baseline}"), format!("p99/{baseline}"), "cpu/op".to_string()])
        .collect()
}

/// Legend lines printed under the table.
pub fn legend(results: &Results) -> Vec<String> {
    let mut lines = vec![format!(
        "medians over {runs}; spread = (max - min) / median of throughput; {latency}; \
         steals = successful steals per run; cpu/op = CPU time of the runtime under test per operation \
         (load generator and harness excluded); thr/{base} and p99/{base} = ratios of the medians to {base} in the same cell \
         (open-loop workloads offer everyone the same load, so read their p99 ratio)",
        runs = results.settings.runs_per_cell(),
        latency = latency_legend(results.cells.iter().map(|c| {
            let name = c.key.workload.as_str();
            let sample = results.settings.latency_sample.get(name).copied();
            (name, results.settings.open_loop.get(name).copied(), sample)
        })),
        base = results.settings.baseline_sched
    )];
    if results.cells.iter().any(|c| c.failed_request_fraction.is_some_and(|f| f > 0.0)) {
        lines.push(format!(
            "failed req = failed requests / requests answered over every finished run; a run with more than {:.0}% failed \
             requests or client connections is a failed run, and its latencies are left out of the medians",
            crate::run::health::MAX_FAILED_FRACTION * PERCENT
        ));
    }
    if results.cells.iter().any(|c| c.offered_per_s.is_some()) {
        let behind = results.cells.iter().filter(|c| !c.kept_schedule()).count();
        let mut line = "offered/s = requests sent per second in the measured window (median), `of` the asked \
                        --rate when they differ by more than 1%"
            .to_string();
        if behind > 0 {
            line.push_str(&format!(
                "; `behind`: the load generator fell behind its schedule in a run ({behind} row(s)), its latencies \
                 describe a lower load than asked, and capacity at an SLO leaves it out"
            ));
        }
        lines.push(line);
    }
    if results.cells.iter().any(|c| c.uncorrected_p99_us.is_some()) {
        lines.push(format!(
            "{UNCORRECTED_P99} (with --wide, and in the markdown report) = p99 from each request's actual send, as \
             wrk2 prints beside its corrected one; p99 runs from its scheduled arrival, so a client that fell behind \
             cannot hide the wait"
        ));
    }
    let blanked = |c: &CellSummary| {
        c.latency(LatencyMetric::Max).is_some()
            && LatencyMetric::ALL.into_iter().any(|m| m.quantile().is_some() && c.latency(m).is_none())
    };
    if results.cells.iter().any(blanked) {
        lines.push(format!(
            "{BLANK} in a percentile column: its runs had too few latency samples to support it (it needs enough that \
             its 95% order-statistics interval lies within them: p99 {}, p99.9 {} samples; the CSV notes column says which)",
            format_count(crate::data::record::min_samples(0.99) as f64),
            format_count(crate::data::record::min_samples(0.999) as f64)
        ));
    }
    if results.cells.iter().any(|c| !c.key.cpus.is_empty() || !c.key.cpuset.is_empty()) {
        lines.push(format!(
            "cpus = the CFS quota of each run's cgroup (--cpus), cpuset = its CPU list (--cpuset); {THROTTLED} = time \
             the cgroup's threads spent throttled in the measured window (median; the CSV has nr_periods, nr_throttled \
             and the worker count tokio would pick by default, tokio_default_workers)"
        ));
    }
    if results.cells.iter().any(|c| c.ideal_p99_us.is_some()) {
        lines.push(format!("{IDEAL_P99}, {P99_OVER_IDEAL}: {}", crate::data::ideal::IDEAL_LEGEND));
    }
    if results.settings.slo.is_some() && results.cells.iter().any(|c| c.ideal_p99_us.is_some()) {
        lines.push(
            "ideal capacity = the ideal's capacity at the same objective, by the same rule (the highest rate \
             before the first that breaks it) over the same rates; % of ideal = capacity / ideal capacity"
                .to_string(),
        );
    }
    if !results.cells.iter().any(|c| c.key.scheduler == results.settings.baseline_sched) {
        lines.push(format!(
            "no {0} cells in this matrix, so the ratio column is blank; add it with --sched ...,{0}",
            results.settings.baseline_sched
        ));
    }
    lines
}

/// What the latency columns mean for the workloads in the table, each
/// given with whether it is open-loop (`None`: not known here) and its own
/// meaning of a sample where it has one: an open-loop row's latency runs
/// from each request's intended send time to its completion; a benchmark
/// row's is the time of one iteration; a workload's own meaning is printed
/// as it gives it.
pub fn latency_legend<'a>(workloads: impl IntoIterator<Item = (&'a str, Option<bool>, Option<&'a str>)>) -> String {
    let (mut open, mut bench, mut other): (Vec<&str>, Vec<&str>, Vec<&str>) = Default::default();
    let mut own: Vec<(&str, &str)> = Vec::new();
    for (name, open_loop, sample) in workloads {
        let kind = match open_loop {
            _ if sample.is_some() => {
                if let Some(sample) = sample.filter(|_| !own.iter().any(|(n, _)| *n == name)) {
                    own.push((name, sample));
                }
                continue;
            }
            Some(true) => &mut open,
            Some(false) => &mut bench,
            None => &mut other,
        };
        if !kind.contains(&name) {
            kind.push(name);
        }
    }
    let mut parts = Vec::new();
    if !open.is_empty() {
        parts.push(format!(
            "latency of {} (open loop) = from each request's intended send time to its completion",
            open.join(", ")
        ));
    }
    if !bench.is_empty() {
        parts.push(format!("latency of {} (benchmark) = time per iteration", bench.join(", ")));
    }
    for (name, sample) in own {
        parts.push(format!("latency of {name} = {sample}"));
    }
    if !other.is_empty() {
        parts.push(format!("latency of {} = as its workload recorded it", other.join(", ")));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_says_what_each_rows_latency_is() {
        assert_eq!(
            latency_legend([
                ("yield-many", Some(false), None),
                ("rpc-fanout", Some(true), None),
                ("yield-many", Some(false), None),
                ("tcp-rpc", Some(true), None)
            ]),
            "latency of rpc-fanout, tcp-rpc (open loop) = from each request's intended send time to its completion; \
             latency of yield-many (benchmark) = time per iteration"
        );
        assert_eq!(
            latency_legend([("chained-spawn", Some(false), None)]),
            "latency of chained-spawn (benchmark) = time per iteration"
        );
        assert_eq!(latency_legend([("no-such", None, None)]), "latency of no-such = as its workload recorded it");
        // A workload's own meaning comes from the catalog, not from a name here.
        let storm = crate::run::backend::workloads().iter().find(|w| w.name == "spawn-storm").unwrap();
        let sample = storm.latency_sample.expect("spawn-storm says what its latency is");
        assert_eq!(
            latency_legend([("spawn-storm", Some(false), Some(sample)), ("chained-spawn", Some(false), None)]),
            format!("latency of chained-spawn (benchmark) = time per iteration; latency of spawn-storm = {sample}")
        );
    }

    #[test]
    fn units_keep_three_significant_digits() {
        assert_eq!(format_us(1.234), "1.23µs");
        assert_eq!(format_us(12.34), "12.3µs");
        assert_eq!(format_us(123.4), "123µs");
        assert_eq!(format_us(1234.0), "1.234ms");
        assert_eq!(format_us(2_500_000.0), "2.500s");
        assert_eq!(format_count(999.0), "999");
        assert_eq!(format_count(12_345.0), "12.35k");
        assert_eq!(format_count(3_200_000.0), "3.20M");
    }

    #[test]
    fn fit_drops_the_named_columns_in_order_until_the_table_fits() {
        let mut t = Table {
            header: vec!["scheduler".into(), "p50".into(), "p99.9".into(), "max".into(), "spread".into()],
            rows: vec![vec!["steal-half".into(), "10µs".into(), "2.000ms".into(), "9.000ms".into(), "1.0%".into()]],
            right: vec![false, true, true, true, true],
        };
        let full = t.text_width();
        let drops: Vec<String> = ["p99.9", "max", "absent", "spread"].map(String::from).to_vec();
        // Wide enough already: nothing dropped.
        assert!(t.clone().fit(full, &drops).is_empty());
        // One column short: the first named goes, and only it.
        let mut one = t.clone();
        assert_eq!(one.fit(full - 1, &drops), ["p99.9"]);
        assert_eq!(one.header, ["scheduler", "p50", "max", "spread"]);
        assert_eq!(one.rows[0].len(), 4);
        // Narrower than the kept columns: every named one goes, the rest stay.
        assert_eq!(t.fit(5, &drops), ["p99.9", "max", "spread"]);
        assert_eq!(t.header, ["scheduler", "p50"]);
        assert_eq!(t.rows[0], ["steal-half", "10µs"]);
    }

    #[test]
    fn text_and_markdown_rendering_align_columns() {
        let t = Table {
            header: vec!["a".into(), "num".into()],
            rows: vec![vec!["long-name".into(), "1".into()], vec!["x|y".into(), "22".into()]],
            right: vec![false, true],
        };
        let text = t.render_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "a          num");
        assert_eq!(lines[2], "long-name    1");
        assert_eq!(lines[3], "x|y         22");
        let md = t.render_markdown();
        assert!(md.contains("| --- | ---: |"), "{md}");
        assert!(md.contains("x\\|y"), "{md}");
    }
}
