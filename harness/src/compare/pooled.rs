//! The latency percentiles of an A/B invocation judged on each side's
//! added histograms (`compare --hdr-dir DIR`): the current side's logs in
//! DIR, the base's in DIR/base/, as `run --base-bin ... --hdr-dir DIR`
//! writes them. The test is `stats::pooled`'s sign-flip test over
//! the pairs; why, and what it measured, in results/gate-power/pooled/.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{ensure, Context, Result};

use super::{flip_seed, Comparison, PairedFinding};
use crate::data::record::{CellKey, LatencyMetric, RunRecord, Status};
use crate::output::export::hdr::{self, BASE_SUBDIR, RUN_TAG};
use crate::run::env::rfc3339_utc;
use crate::stats::pooled::{pooled_quantile_test, Run};
use crate::stats::signflip::MIN_PAIRS;

/// One side's runs: run number → `(latency in µs, count)`, ascending.
type SideRuns = BTreeMap<usize, Vec<(f64, u64)>>;

/// Both sides' run histograms of one cell.
#[derive(Debug, Clone, Default)]
pub struct CellRuns {
    base: SideRuns,
    current: SideRuns,
}

/// The run histograms of the cells that have logs on both sides, and the
/// cells that have none (judged on their per-run values, with a warning).
#[derive(Debug, Clone, Default)]
pub struct Histograms {
    /// Per cell.
    pub cells: BTreeMap<CellKey, CellRuns>,
    /// Cells without a log on one side or both.
    pub missing: Vec<String>,
}

/// When a results file's invocation began (its `timestamp`) and when the
/// file was last written (its modification time): the invocation wrote
/// each cell's log just before the cell's rows, so a log written outside
/// that span belongs to another invocation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Span {
    /// The invocation's start.
    pub began: Option<SystemTime>,
    /// The file's last write.
    pub ended: Option<SystemTime>,
}

impl Span {
    /// The span of the results file at `path` whose `timestamp` is `stamp`.
    pub fn of(path: &Path, stamp: &str) -> Span {
        Span {
            began: crate::run::env::parse_rfc3339_utc(stamp),
            ended: std::fs::metadata(path).and_then(|m| m.modified()).ok(),
        }
    }
}

/// Each side's [`Span`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Spans {
    /// The base file's.
    pub base: Span,
    /// The current file's.
    pub current: Span,
}

/// Reads the logs of `keys` from `dir` (current) and `dir/base` (base). A
/// log that exists but cannot be read, that belongs to another cell, or
/// that was written outside its file's [`Span`], is an error.
pub fn load<'a>(dir: &Path, keys: impl IntoIterator<Item = &'a CellKey>, spans: Spans) -> Result<Histograms> {
    ensure!(
        dir.is_dir(),
        "--hdr-dir `{}` is not a directory; allowed: the --hdr-dir of the `run --base-bin` invocation that wrote the two \
         files (the current side's logs in it, the base's in its `{BASE_SUBDIR}/`)",
        dir.display()
    );
    let mut out = Histograms::default();
    for key in keys {
        let name = hdr::file_name(key);
        let (current, base) = (dir.join(&name), dir.join(BASE_SUBDIR).join(&name));
        if !current.is_file() || !base.is_file() {
            out.missing.push(key.to_string());
            continue;
        }
        let runs = CellRuns { base: side(&base, key, spans.base)?, current: side(&current, key, spans.current)? };
        out.cells.insert(key.clone(), runs);
    }
    Ok(out)
}

/// One log's run histograms, checked to be `key`'s and written within
/// `span`.
fn side(path: &Path, key: &CellKey, span: Span) -> Result<SideRuns> {
    let log = hdr::read(path)?;
    // The timestamp has millisecond precision; a second of slack covers
    // file systems with coarse modification times.
    if let (Some(written), Some(began)) = (log.start, span.began) {
        ensure!(
            written + Duration::from_millis(1) >= began,
            "`{}` was written at {}, before the invocation of its results began ({}): it is left over from an \
             earlier run; give the --hdr-dir of the invocation that wrote both files",
            path.display(),
            rfc3339_utc(written),
            rfc3339_utc(began)
        );
    }
    if let (Some(written), Some(ended)) = (log.start, span.ended) {
        ensure!(
            written <= ended + Duration::from_secs(1),
            "`{}` was written at {}, after its results file was last written ({}): it is from a later run; give the \
             --hdr-dir of the invocation that wrote both files",
            path.display(),
            rfc3339_utc(written),
            rfc3339_utc(ended)
        );
    }
    for (field, want) in [("scheduler", &key.scheduler), ("workload", &key.workload)] {
        let found = log.meta.get(field).map_or("", String::as_str);
        ensure!(
            found == want.as_str(),
            "`{}` is the log of {field} `{found}`, not of cell `{key}`: give the --hdr-dir of the invocation that wrote both files",
            path.display()
        );
    }
    let mut runs = SideRuns::new();
    for (tag, h) in &log.intervals {
        let Some(run) = tag.as_deref().and_then(|t| t.strip_prefix(RUN_TAG)).and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let values = h.iter_recorded().map(|v| (v.value_iterated_to() as f64 / 1000.0, v.count_at_value())).collect();
        runs.insert(run, values);
    }
    ensure!(!runs.is_empty(), "`{}` holds no run histograms", path.display());
    Ok(runs)
}

/// The quantile a latency column stands for; `None` for one the pooled
/// test does not judge.
pub fn quantile(metric: LatencyMetric) -> Option<f64> {
    match metric {
        LatencyMetric::P50 => Some(0.5),
        LatencyMetric::P90 => Some(0.9),
        LatencyMetric::P99 => Some(0.99),
        LatencyMetric::P999 => Some(0.999),
        _ => None,
    }
}

/// Judges quantile `q` of `cell` on the pairs of ok runs that have
/// histograms on both sides, the current side's latencies multiplied by
/// `scale` (1 but for a planted change). `None` with fewer than
/// [`MIN_PAIRS`] such pairs: the caller then judges the per-run values.
pub fn judge(
    metric: &'static str,
    cell: &CellKey,
    q: f64,
    runs: &CellRuns,
    (base, current): (&[&RunRecord], &[&RunRecord]),
    scale: f64,
    alpha: f64,
) -> Option<Comparison> {
    let ok = |records: &[&RunRecord], run: usize| records.iter().any(|r| r.run == run && r.status == Status::Ok);
    let scaled: Vec<(usize, Vec<(f64, u64)>)> = runs
        .current
        .iter()
        .filter(|(run, _)| ok(current, **run) && ok(base, **run))
        .filter(|(run, _)| runs.base.contains_key(run))
        .map(|(&run, values)| (run, values.iter().map(|&(v, c)| (v * scale, c)).collect()))
        .collect();
    let pairs: Vec<(&Run, &Run)> = scaled.iter().map(|(run, c)| (runs.base[run].as_slice(), c.as_slice())).collect();
    if pairs.len() < MIN_PAIRS {
        return None;
    }
    let test = pooled_quantile_test(&pairs, q, alpha, flip_seed(cell, metric))?;
    let found = PairedFinding {
        base: test.base,
        current: test.current,
        change: test.change,
        p: Some(test.p),
        detectable: Some(test.detectable),
        pairs: pairs.len(),
    };
    Some(Comparison { pooled: true, ..Comparison::paired(cell, metric, found) })
}

/// Reads `--hdr-dir` for the cells both files have, when it was given.
pub fn load_for(dir: Option<&Path>, cells: &[&CellKey], spans: Spans) -> Result<Option<Histograms>> {
    dir.map(|d| {
        load(d, cells.iter().copied(), spans).with_context(|| format!("cannot use --hdr-dir `{}`", d.display()))
    })
    .transpose()
}
