//! `wsbench plot RESULTS.csv --out DIR`: per workload, throughput, p99 and
//! CPU per request against workers (log2 x); p99 against offered load where
//! the file holds a rate sweep; percentile spectra from `--hdr-dir` logs. One line per
//! scheduler, min..max over runs as a band, the machine in a caption.

pub mod chart;
pub mod usl;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

use crate::data::load::{load, ResultsFile};
use crate::data::record::{CellKey, Dim, LatencyMetric, Status};
use crate::exit::negative;
use crate::output::export::{file_safe, hdr};
use crate::run::env::short_sha;
use crate::stats::summary::{summarise, CellSummary};
use crate::stats::Summary;
use chart::{Chart, Point, Scale, Series, Ticks};

/// Colour slots for scheduler names not in the list.
const UNKNOWN_SLOTS: usize = 40;
/// Base of the workers axis.
const WORKERS_LOG_BASE: f64 = 2.0;
/// Base of latency and spectrum axes.
const DECADE: f64 = 10.0;
/// Quantile steps per halving of the distance to 100% in a spectrum.
const SPECTRUM_TICKS_PER_HALF: u32 = 5;
/// The spectrum stops before this quantile (x = 1/(1-q) must stay finite).
const SPECTRUM_MAX_QUANTILE: f64 = 0.999_999;

fn point(x: f64, s: &Summary) -> Point {
    Point { x, y: s.median, lo: s.min, hi: s.max }
}

/// Series per scheduler (in first-seen order) from `(scheduler, point)`.
fn series_of(points: Vec<(String, Point)>) -> Vec<Series> {
    let mut order: Vec<String> = Vec::new();
    let mut by_name: BTreeMap<String, Vec<Point>> = BTreeMap::new();
    for (name, p) in points {
        if !by_name.contains_key(&name) {
            order.push(name.clone());
        }
        by_name.entry(name).or_default().push(p);
    }
    order
        .into_iter()
        .map(|name| {
            let mut points = by_name.remove(&name).unwrap_or_default();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            Series { color_slot: color_slot(&name), name, points, dashed: false }
        })
        .collect()
}

/// A scheduler's colour slot: its position in the scheduler list, so each
/// keeps its colour in every chart.
fn color_slot(name: &str) -> usize {
    let all = crate::run::backend::schedulers();
    // A name no scheduler has (another binary's, a synthetic file's): a
    // slot from its bytes, so two such names rarely share a colour.
    let other = name.bytes().fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b))) % UNKNOWN_SLOTS;
    all.iter().position(|s| s.name == name).unwrap_or(all.len() + other)
}

/// ` [knobs, params, ...]` from the parts that are not empty; empty when
/// none is.
fn describe_variant(parts: &[&str]) -> String {
    let parts: Vec<&str> = parts.iter().copied().filter(|s| !s.is_empty()).collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" [{}]", parts.join(", "))
    }
}

fn stem(parts: &[&str]) -> String {
    file_safe(&parts.iter().filter(|p| !p.is_empty()).copied().collect::<Vec<_>>().join("-"))
}

/// A chart with workers on a log2 x axis.
fn workers_chart(title: String, y_label: &str, y_scale: Scale, series: Vec<Series>, caption: &str) -> Chart {
    Chart {
        title,
        x_label: "worker threads (log2)".to_string(),
        y_label: y_label.to_string(),
        x_scale: Scale::Log(WORKERS_LOG_BASE),
        y_scale,
        x_ticks: Ticks::AtData,
        y_ticks: if y_scale == Scale::Linear { Ticks::Number } else { Ticks::Latency },
        series,
        markers: true,
        caption: caption.to_string(),
    }
}

/// Throughput and p99 vs workers, for groups with at least two worker
/// counts; each throughput curve with enough worker counts on distinct
/// cores (`logical_cpus`) gets its USL model ([`usl`]), and the fits are
/// returned with the chart they belong to.
pub(crate) fn scaling_charts(
    cells: &[CellSummary],
    caption: &str,
    logical_cpus: Option<usize>,
) -> (Vec<(String, Chart)>, Vec<(String, usl::Fit)>) {
    let mut fits = Vec::new();
    let mut groups: BTreeMap<CellKey, Vec<&CellSummary>> = BTreeMap::new();
    for c in cells {
        groups.entry(c.key.ignoring(&[Dim::Scheduler, Dim::Workers])).or_default().push(c);
    }
    let mut out = Vec::new();
    for (key, group) in groups {
        let CellKey { workload, knobs, params, rate_per_s: rate, .. } = &key;
        let limits = key.limits();
        let mut workers: Vec<usize> = group.iter().map(|c| c.key.workers).collect();
        workers.sort_unstable();
        workers.dedup();
        if workers.len() < 2 {
            continue;
        }
        let rate_text = rate.map(|r| format!("{r}/s offered")).unwrap_or_default();
        let variant = describe_variant(&[knobs, params, &rate_text, &limits]);
        let rate_stem = rate.map(|r| format!("r{r}")).unwrap_or_default();
        let base = stem(&[workload, knobs, params, &rate_stem, &limits]);
        let throughput = series_of(
            group
                .iter()
                .filter_map(|c| {
                    Some((c.key.scheduler.clone(), point(c.key.workers as f64, c.throughput_per_s.as_ref()?)))
                })
                .collect(),
        );
        let p99 = series_of(
            group
                .iter()
                .filter_map(|c| {
                    Some((c.key.scheduler.clone(), point(c.key.workers as f64, c.latency(LatencyMetric::P99)?)))
                })
                .collect(),
        );
        let title = format!("{workload}: throughput vs workers{variant}");
        // An open-loop workload's throughput is the load it was offered (it
        // scales the rate with the workers), so a scalability law fitted to
        // it would describe the generator's schedule, not the scheduler.
        let open_loop = group.iter().any(|c| c.offered_per_s.is_some());
        let (models, chart_fits): (Vec<Series>, Vec<usl::Fit>) = if open_loop {
            (Vec::new(), Vec::new())
        } else {
            throughput.iter().filter_map(|s| usl::model(s, logical_cpus)).unzip()
        };
        let note = if open_loop {
            Some(usl::OPEN_LOOP_NOTE.to_string())
        } else {
            usl::caption_note(&chart_fits, logical_cpus)
        };
        let throughput_caption = match note {
            Some(note) => format!("{caption} · {note}"),
            None => caption.to_string(),
        };
        let mut throughput = throughput;
        throughput.extend(models);
        fits.extend(chart_fits.into_iter().map(|f| (title.clone(), f)));
        out.push((
            format!("{base}-throughput"),
            workers_chart(title, "throughput (operations/s)", Scale::Linear, throughput, &throughput_caption),
        ));
        if p99.iter().any(|s| !s.points.is_empty()) {
            let title = format!("{workload}: p99 latency vs workers{variant}");
            out.push((
                format!("{base}-p99"),
                workers_chart(title, "p99 latency (log scale)", Scale::Log(DECADE), p99, caption),
            ));
        }
        let cpu = series_of(
            group
                .iter()
                .filter_map(|c| Some((c.key.scheduler.clone(), point(c.key.workers as f64, c.cpu_us_per_op.as_ref()?))))
                .collect(),
        );
        if cpu.iter().any(|s| !s.points.is_empty()) {
            let title = format!("{workload}: CPU per request vs workers{variant}");
            out.push((
                format!("{base}-cpu"),
                workers_chart(title, "CPU time per request, µs (runtime under test)", Scale::Linear, cpu, caption),
            ));
        }
    }
    (out, fits)
}

/// p99 vs offered load, for groups with at least two requested rates.
fn load_charts(cells: &[CellSummary], caption: &str) -> Vec<(String, Chart)> {
    let mut groups: BTreeMap<CellKey, Vec<&CellSummary>> = BTreeMap::new();
    for c in cells.iter().filter(|c| c.load_per_s().is_some()) {
        groups.entry(c.key.ignoring(&[Dim::Scheduler, Dim::Rate])).or_default().push(c);
    }
    let mut out = Vec::new();
    for (key, group) in groups {
        let CellKey { workload, workers, knobs, params, .. } = &key;
        let limits = key.limits();
        // A sweep is two or more rates asked for (`--rate`): measured offered
        // loads differ between runs even at one rate, which is no sweep.
        let mut rates: Vec<u64> = group.iter().filter_map(|c| c.key.rate_per_s).collect();
        rates.sort_unstable();
        rates.dedup();
        if rates.len() < 2 {
            continue;
        }
        let mut series = series_of(
            group
                .iter()
                .filter_map(|c| Some((c.key.scheduler.clone(), point(c.load_per_s()?, c.latency(LatencyMetric::P99)?))))
                .collect(),
        );
        series.extend(ideal_series(&group));
        let variant = describe_variant(&[knobs, params, &limits]);
        out.push((
            stem(&[workload, &format!("w{workers}"), knobs, params, &limits, "latency-vs-load"]),
            Chart {
                title: format!("{workload}: p99 latency vs offered load, {workers} workers{variant}"),
                x_label: "offered load (requests/s)".to_string(),
                y_label: "p99 latency (log scale)".to_string(),
                x_scale: Scale::Linear,
                y_scale: Scale::Log(DECADE),
                x_ticks: Ticks::Number,
                y_ticks: Ticks::Latency,
                series,
                markers: true,
                caption: caption.to_string(),
            },
        ));
    }
    out
}

/// The legend of the ideal scheduler's curve.
pub const IDEAL_LABEL: &str = "ideal: zero-overhead FCFS, k = workers";

/// The ideal scheduler's p99 against offered load, over the cells of one
/// load chart: at each rate asked, the median over the cells' medians (the
/// ideal depends on the arrivals and draws, not on the scheduler, so every
/// scheduler's cell at a rate holds the same values when they share the
/// seed). `None` when no cell has an ideal.
fn ideal_series(group: &[&CellSummary]) -> Option<Series> {
    let mut by_rate: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for c in group {
        if let (Some(rate), Some(s)) = (c.key.rate_per_s, c.ideal_p99_us.as_ref()) {
            by_rate.entry(rate).or_default().push(s.median);
        }
    }
    let points: Vec<Point> = by_rate
        .into_iter()
        .map(|(rate, values)| {
            let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(*v), h.max(*v)));
            Point { x: rate as f64, y: crate::stats::median(&values), lo, hi }
        })
        .collect();
    (!points.is_empty()).then(|| Series {
        name: IDEAL_LABEL.to_string(),
        color_slot: chart::REFERENCE_SLOT,
        points,
        dashed: true,
    })
}

/// The identity of a spectrum chart: the cell without the scheduler.
const SPECTRUM_KEY: [&str; 7] = ["workload", "workers", "knobs", "params", "rate_per_s", "cpus", "cpuset"];

/// Whether the results file holds the cell a log's metadata names.
fn holds_cell(cells: &[CellSummary], meta: &BTreeMap<String, String>) -> bool {
    let get = |k: &str| meta.get(k).map(String::as_str).unwrap_or("");
    cells.iter().any(|c| {
        let k = &c.key;
        k.scheduler == get("scheduler")
            && k.workers.to_string() == get("workers")
            && k.workload == get("workload")
            && k.knobs == get("knobs")
            && k.params == get("params")
            && k.rate_per_s.map(|r| r.to_string()).unwrap_or_default() == get("rate_per_s")
            && k.cpus == get("cpus")
            && k.cpuset == get("cpuset")
    })
}

/// One log's merged histogram as a spectrum series, with its chart key;
/// a warning when the results file holds no such cell (another run's log).
fn spectrum_series(path: &Path, cells: &[CellSummary], results: &Path) -> Result<([String; 7], Series)> {
    let log = hdr::read(path)?;
    if !holds_cell(cells, &log.meta) {
        eprintln!(
            "warning: `{}` is the log of a cell `{}` does not hold (another run's log?); its spectrum is drawn anyway",
            path.display(),
            results.display()
        );
    }
    let merged = log.merged_runs().with_context(|| format!("`{}`", path.display()))?;
    let points = merged
        .iter_quantiles(SPECTRUM_TICKS_PER_HALF)
        .map(|v| (v.quantile_iterated_to(), v.value_iterated_to() as f64 * crate::data::record::US_PER_NS))
        .filter(|(q, _)| *q < SPECTRUM_MAX_QUANTILE)
        .map(|(q, us)| Point { x: 1.0 / (1.0 - q), y: us, lo: us, hi: us })
        .collect();
    let name = log.meta.get("scheduler").cloned().unwrap_or_else(|| path.display().to_string());
    let key = SPECTRUM_KEY.map(|k| log.meta.get(k).cloned().unwrap_or_default());
    Ok((key, Series { color_slot: color_slot(&name), name, points, dashed: false }))
}

fn spectrum_chart(key: [String; 7], series: Vec<Series>, caption: &str) -> (String, Chart) {
    let [workload, workers, knobs, params, rate, cpus, cpuset] = key;
    let limits = crate::data::record::limits_label(&cpus, &cpuset);
    let (rate_text, rate_stem) = if rate.is_empty() {
        (String::new(), String::new())
    } else {
        (format!("{rate}/s offered"), format!("r{rate}"))
    };
    let variant = describe_variant(&[&knobs, &params, &rate_text, &limits]);
    let chart = Chart {
        title: format!("{workload}: latency by percentile, {workers} workers{variant}"),
        x_label: "percentile (log scale of 1/(1-p))".to_string(),
        y_label: "latency (log scale)".to_string(),
        x_scale: Scale::Log(DECADE),
        y_scale: Scale::Log(DECADE),
        x_ticks: Ticks::Percentile,
        y_ticks: Ticks::Latency,
        series,
        markers: false,
        caption: caption.to_string(),
    };
    (stem(&[&workload, &format!("w{workers}"), &knobs, &params, &rate_stem, &limits, "spectrum"]), chart)
}

/// Percentile spectra from the logs in `dir`, one chart per cell without
/// the scheduler.
fn spectrum_charts(dir: &Path, caption: &str, cells: &[CellSummary], results: &Path) -> Result<Vec<(String, Chart)>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read --hdr-dir `{}`", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == hdr::EXTENSION))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!(
            "--hdr-dir `{}` holds no .{} files (write them with `wsbench run --hdr-dir`)",
            dir.display(),
            hdr::EXTENSION
        );
    }
    let mut groups: BTreeMap<[String; 7], Vec<Series>> = BTreeMap::new();
    for path in paths {
        let (key, series) = spectrum_series(&path, cells, results)?;
        groups.entry(key).or_default().push(series);
    }
    Ok(groups.into_iter().map(|(key, series)| spectrum_chart(key, series, caption)).collect())
}

pub(crate) fn caption(file: &ResultsFile) -> String {
    format!(
        "{} · {} logical CPUs · host {} · git {} · {}",
        file.cpu_model,
        crate::run::env::or_unknown(file.logical_cpus),
        file.host,
        short_sha(&file.git_sha),
        file.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    )
}

/// `wsbench plot`'s options.
#[derive(Debug, Clone)]
pub struct Options {
    /// A results CSV.
    pub results: PathBuf,
    /// The directory for the charts (created if missing).
    pub out: PathBuf,
    /// HdrHistogram logs, for percentile-spectrum charts.
    pub hdr_dir: Option<PathBuf>,
    /// Chart width in pixels.
    pub width: u32,
    /// Chart height in pixels.
    pub height: u32,
}

/// Draws every chart the file supports; returns the files written.
pub fn plot(args: &Options) -> Result<Vec<PathBuf>> {
    chart::register_embedded_font()?;
    let file = load(&args.results)?;
    if !file.records.iter().any(|r| r.status == Status::Ok) {
        return Err(negative(format!(
            "nothing to plot in `{}`: every one of its {} run(s) failed (see its `error` column)",
            args.results.display(),
            file.records.len()
        )));
    }
    let cells = summarise(&file.records);
    let caption = caption(&file);
    let (mut charts, fits) = scaling_charts(&cells, &caption, file.logical_cpus);
    for (title, fit) in &fits {
        crate::outln!("USL fit ({title}) {}: {}, {}", fit.scheduler, fit.describe(), fit.counts());
    }
    charts.retain(|(_, chart)| chart.series.iter().any(|s| !s.points.is_empty()));
    let scaling = charts.len();
    charts.extend(load_charts(&cells, &caption));
    if let Some(dir) = &args.hdr_dir {
        charts.extend(spectrum_charts(dir, &caption, &cells, &args.results)?);
    }
    charts.retain(|(_, chart)| chart.series.iter().any(|s| !s.points.is_empty()));
    if charts.is_empty() {
        return Err(negative(format!(
            "nothing to plot in `{}`: scaling charts need at least two worker counts per workload (run with e.g. --workers 1,2,4), \
             load charts need at least two offered rates (--rate 1k,2k,4k), spectra need --hdr-dir with logs from `wsbench run --hdr-dir`",
            args.results.display()
        )));
    }
    if scaling == 0 {
        eprintln!(
            "note: no sweep over workers in `{}`, so no scaling charts (run with e.g. --workers 1,2,4)",
            args.results.display()
        );
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create --out `{}`", args.out.display()))?;
    let mut written = Vec::new();
    for (name, chart) in charts {
        written.extend(chart::write(&args.out, &name, &chart, (args.width, args.height))?);
    }
    Ok(written)
}

/// `wsbench plot`.
pub fn main(args: &Options) -> Result<ExitCode> {
    for path in plot(args)? {
        crate::outln!("{}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
