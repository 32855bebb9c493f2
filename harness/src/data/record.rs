//! The measured data model: one [`RunRecord`] per run, grouped into cells by
//! [`CellKey`]. Runner, exporters, compare and plot all speak this.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::data::ideal::IdealColumns;
use crate::run::cgroup::columns::LimitColumns;
use crate::run::cpu::CpuColumns;

/// Version of the CSV/JSON column set; bumped whenever a column changes
/// meaning, is renamed or is removed. `compare` refuses to mix versions.
///
/// 2: `offered_per_s` is the rate measured over the window (was the
/// configured rate, which is `rate_per_s`); unmeasured values are blank
/// (a failed run's `duration_s`, `ops`, `throughput_per_s`; a closed-loop
/// run's `sent` and `failed`), never 0.
///
/// 3: the CPU columns `cpu_ms`, `cpu_us_per_op`, `cpu_util`,
/// `ctx_switches_voluntary`, `ctx_switches_involuntary`, `wakeups_per_op`
/// appended at the end of the row.
///
/// 4: the counters `lifo_steals`, `steals_local_group` and
/// `steals_remote_group` appended at the end of the row (after the CPU
/// columns; see [`APPENDED_COUNTERS`]).
///
/// 5: the driver counter `timer_remote_cancels` (`--knob timer=per-worker`)
/// appended after them.
///
/// 6: the ideal scheduler's columns `ideal_p50_us`, `ideal_p99_us`,
/// `p99_over_ideal` appended at the end of the row (`data::ideal::IDEAL_COLUMNS`).
///
/// 7: `runtime_version` (the reference runtime versions a row ran,
/// `tokio=1.50.0;cfg=tokio_unstable`; blank for ours) appended after them.
///
/// 8: the CPU limits (`--cpus`, `--cpuset`) appended after `runtime_version`:
/// the key's `cpus` and `cpuset`, then `cgroup`, `nr_periods`,
/// `nr_throttled`, `throttled_ms` and `tokio_default_workers`
/// ([`crate::run::cgroup::columns::LIMIT_COLUMNS`]).
///
/// 9: the schedule delay's `sched_delay_p50_us`, `sched_delay_p99_us`
/// ([`SCHED_DELAY_COLUMNS`]) appended after them: ours with `--knob
/// sched-delay=on`, blank otherwise.
pub const SCHEMA_VERSION: u32 = 9;

/// The schedule-delay columns (schema 9), at the end of the row: the
/// median and p99 of the run's schedule delays (a task scheduled → its
/// next poll), by the rule every percentile follows ([`quantile_us`]).
pub const SCHED_DELAY_COLUMNS: [&str; 2] = ["sched_delay_p50_us", "sched_delay_p99_us"];

/// Text columns added after schema 6, written after the ideal columns
/// (schema 8's limit columns follow them).
pub const APPENDED_COLUMNS: [&str; 1] = ["runtime_version"];

/// Counters added after schema 3: the CSV writes them at the end of the row,
/// after the CPU columns, in this order (the other counters keep their
/// place), so that the columns of older files keep their positions.
pub const APPENDED_COUNTERS: &[&str] =
    &["lifo_steals", "steals_local_group", "steals_remote_group", "timer_remote_cancels"];

/// Microseconds per nanosecond, for histogram values recorded in ns.
pub const US_PER_NS: f64 = 1e-3;

/// What identifies a cell of the matrix. Two rows with equal keys measure
/// the same thing.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CellKey {
    /// `--sched` name.
    pub scheduler: String,
    /// Worker threads.
    pub workers: usize,
    /// Workload name.
    pub workload: String,
    /// Knob settings `name=value;name=value`, sorted by name; empty = defaults.
    pub knobs: String,
    /// Workload parameters `name=value;...`, sorted by name; empty = defaults.
    pub params: String,
    /// Requested offered rate (`--rate`); `None` = the workload's default.
    pub rate_per_s: Option<u64>,
    /// `--cpus`: the CFS quota in CPUs; empty = none.
    pub cpus: String,
    /// `--cpuset`: the CPU list; empty = none.
    pub cpuset: String,
}

/// `--cpus` and `--cpuset` as a label: `cpus=1.5`, `cpuset=0-3`, joined by
/// `, `; empty when neither is set.
pub fn limits_label(cpus: &str, cpuset: &str) -> String {
    let parts = [("cpus", cpus), ("cpuset", cpuset)];
    parts.iter().filter(|(_, v)| !v.is_empty()).map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(", ")
}

/// A dimension of a cell that a grouping may ignore ([`CellKey::ignoring`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    /// `--sched`.
    Scheduler,
    /// `--workers`.
    Workers,
    /// `--knob`.
    Knobs,
    /// `--rate`.
    Rate,
}

impl CellKey {
    /// The key without the scheduler, borrowed: cells that differ only in
    /// scheduler share it. It is [`CellKey::ignoring`]`(&[Dim::Scheduler])`
    /// without the copy, for the comparisons of every pair of cells in
    /// `compare`'s control check. The destructuring names every field, so a
    /// dimension added to the key fails to compile here until it is added.
    pub fn without_scheduler(&self) -> (usize, &str, &str, &str, Option<u64>, &str, &str) {
        let CellKey { scheduler: _, workers, workload, knobs, params, rate_per_s, cpus, cpuset } = self;
        (*workers, workload, knobs, params, *rate_per_s, cpus, cpuset)
    }

    /// The key with `dims` cleared: cells that differ only in those
    /// dimensions share it. Every grouping of cells (the baseline ratios,
    /// capacity series, charts) goes through this, so a dimension added to
    /// the key, as `--cpus` and `--cpuset` were, separates groups everywhere
    /// without each grouping having to learn of it.
    pub fn ignoring(&self, dims: &[Dim]) -> CellKey {
        let mut key = self.clone();
        for dim in dims {
            match dim {
                Dim::Scheduler => key.scheduler.clear(),
                Dim::Workers => key.workers = 0,
                Dim::Knobs => key.knobs.clear(),
                Dim::Rate => key.rate_per_s = None,
            }
        }
        key
    }

    /// The CPU limits, for labels: `cpus=1.5`, `cpuset=0-3`, joined by
    /// `, `; empty when the cell has none.
    pub fn limits(&self) -> String {
        limits_label(&self.cpus, &self.cpuset)
    }

    /// A cell with default knobs, parameters and rate and no CPU limits
    /// (tests and examples that make records by hand).
    pub fn plain(scheduler: &str, workers: usize, workload: &str) -> CellKey {
        CellKey {
            scheduler: scheduler.into(),
            workers,
            workload: workload.into(),
            knobs: String::new(),
            params: String::new(),
            rate_per_s: None,
            cpus: String::new(),
            cpuset: String::new(),
        }
    }
}

impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} x{} {}", self.scheduler, self.workers, self.workload)?;
        if !self.knobs.is_empty() {
            write!(f, " [{}]", self.knobs)?;
        }
        if !self.params.is_empty() {
            write!(f, " ({})", self.params)?;
        }
        if let Some(rate) = self.rate_per_s {
            write!(f, " @{rate}/s")?;
        }
        if !self.cpus.is_empty() {
            write!(f, " cpus={}", self.cpus)?;
        }
        if !self.cpuset.is_empty() {
            write!(f, " cpuset={}", self.cpuset)?;
        }
        Ok(())
    }
}

/// Joins `name=value` pairs sorted by name with `;` (the CSV form).
pub fn join_pairs(pairs: &[(String, String)]) -> String {
    let mut sorted: Vec<_> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    sorted.sort();
    sorted.join(";")
}

/// Whether a run produced a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The run finished and returned its output.
    Ok,
    /// The run returned an error, panicked or hung (see `error`).
    Failed,
}

impl Status {
    /// CSV form.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
        }
    }
}

/// A latency statistic of one run, with its CSV column name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum LatencyMetric {
    /// Median.
    P50,
    /// 90th percentile.
    P90,
    /// 99th percentile.
    P99,
    /// 99.9th percentile.
    P999,
    /// 99.99th percentile.
    P9999,
    /// Largest recorded value.
    Max,
    /// Arithmetic mean.
    Mean,
}

impl LatencyMetric {
    /// Every metric, in column order.
    pub const ALL: [LatencyMetric; 7] = [
        LatencyMetric::P50,
        LatencyMetric::P90,
        LatencyMetric::P99,
        LatencyMetric::P999,
        LatencyMetric::P9999,
        LatencyMetric::Max,
        LatencyMetric::Mean,
    ];

    /// CSV column name.
    pub fn column(self) -> &'static str {
        match self {
            LatencyMetric::P50 => "p50_us",
            LatencyMetric::P90 => "p90_us",
            LatencyMetric::P99 => "p99_us",
            LatencyMetric::P999 => "p999_us",
            LatencyMetric::P9999 => "p9999_us",
            LatencyMetric::Max => "max_us",
            LatencyMetric::Mean => "mean_us",
        }
    }

    /// Short label for tables and SLOs (`p99`, `p99.9`, `max`).
    pub fn label(self) -> &'static str {
        match self {
            LatencyMetric::P50 => "p50",
            LatencyMetric::P90 => "p90",
            LatencyMetric::P99 => "p99",
            LatencyMetric::P999 => "p99.9",
            LatencyMetric::P9999 => "p99.99",
            LatencyMetric::Max => "max",
            LatencyMetric::Mean => "mean",
        }
    }

    /// The quantile, for percentile metrics.
    pub fn quantile(self) -> Option<f64> {
        match self {
            LatencyMetric::P50 => Some(0.5),
            LatencyMetric::P90 => Some(0.9),
            LatencyMetric::P99 => Some(0.99),
            LatencyMetric::P999 => Some(0.999),
            LatencyMetric::P9999 => Some(0.9999),
            LatencyMetric::Max | LatencyMetric::Mean => None,
        }
    }

    /// Parses a label (`p99`, `p999`, `p99.9`, `max`, ...).
    pub fn from_label(text: &str) -> Option<LatencyMetric> {
        let t = text.trim().to_ascii_lowercase();
        let t = t.strip_suffix("_us").unwrap_or(&t).to_string();
        LatencyMetric::ALL.into_iter().find(|m| m.label() == t || m.column().trim_end_matches("_us") == t)
    }
}

/// The latency statistics of one run's merged histogram, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latencies {
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// 99.99th percentile.
    pub p9999_us: f64,
    /// Largest value.
    pub max_us: f64,
    /// Mean.
    pub mean_us: f64,
}

impl Latencies {
    /// The value of one metric.
    pub fn get(&self, metric: LatencyMetric) -> f64 {
        match metric {
            LatencyMetric::P50 => self.p50_us,
            LatencyMetric::P90 => self.p90_us,
            LatencyMetric::P99 => self.p99_us,
            LatencyMetric::P999 => self.p999_us,
            LatencyMetric::P9999 => self.p9999_us,
            LatencyMetric::Max => self.max_us,
            LatencyMetric::Mean => self.mean_us,
        }
    }

    /// Sets one metric.
    pub fn set(&mut self, metric: LatencyMetric, value: f64) {
        match metric {
            LatencyMetric::P50 => self.p50_us = value,
            LatencyMetric::P90 => self.p90_us = value,
            LatencyMetric::P99 => self.p99_us = value,
            LatencyMetric::P999 => self.p999_us = value,
            LatencyMetric::P9999 => self.p9999_us = value,
            LatencyMetric::Max => self.max_us = value,
            LatencyMetric::Mean => self.mean_us = value,
        }
    }

    /// Every statistic blank (NaN, written as an empty field).
    pub const BLANK: Latencies = Latencies {
        p50_us: f64::NAN,
        p90_us: f64::NAN,
        p99_us: f64::NAN,
        p999_us: f64::NAN,
        p9999_us: f64::NAN,
        max_us: f64::NAN,
        mean_us: f64::NAN,
    };

    /// Reads the statistics from a histogram of nanoseconds; `None` when it
    /// holds no values. A percentile its samples cannot support
    /// ([`quantile_us`]) is blank (NaN).
    pub fn from_histogram_ns(h: &hdrhistogram::Histogram<u64>) -> Option<Latencies> {
        if h.is_empty() {
            return None;
        }
        let mut out = Latencies::BLANK;
        for metric in LatencyMetric::ALL {
            let us = match metric.quantile() {
                Some(q) => quantile_us(h, q).unwrap_or(f64::NAN),
                None if metric == LatencyMetric::Max => h.max() as f64 * US_PER_NS,
                None => h.mean() * US_PER_NS,
            };
            out.set(metric, us);
        }
        Some(out)
    }
}

/// The two-sided normal quantile of the percentile intervals (95 %).
const CI_Z: f64 = 1.959_963_984_540_054;

/// The 1-based ranks `(lo, hi)` of the 95 % distribution-free confidence
/// interval of the `q`-quantile among `n` samples (order statistics, the
/// normal approximation of the binomial), or `None` when the interval does
/// not lie within the samples. That is the sample-sufficiency rule: a
/// percentile is reported only when `n` samples bound it on both sides, so
/// p50 needs 8 samples, p90 35, p99 381, p99.9 3,838 and p99.99
/// 38,411 ([`min_samples`]).
pub fn quantile_ci_ranks(n: u64, q: f64) -> Option<(u64, u64)> {
    let n_f = n as f64;
    let centre = n_f * q;
    let half = CI_Z * (n_f * q * (1.0 - q)).sqrt();
    let (lo, hi) = ((centre - half).floor(), (centre + half).ceil());
    (lo >= 1.0 && hi <= n_f).then_some((lo as u64, hi as u64))
}

/// The fewest samples for which [`quantile_ci_ranks`] supports `q`.
pub fn min_samples(q: f64) -> u64 {
    // The rule needs about 3.84 q / (1 - q) samples; search from just below.
    let guess = (CI_Z * CI_Z * q / (1.0 - q)).floor().max(1.0) as u64;
    (guess.saturating_sub(8).max(1)..).find(|n| quantile_ci_ranks(*n, q).is_some()).unwrap_or(u64::MAX)
}

/// The quantile of every p99 a row reports.
pub const P99: f64 = 0.99;

/// The p99 of an optional histogram of nanoseconds, in µs ([`quantile_us`]):
/// the uncorrected, queue-wait and service p99 of a row.
pub fn p99_us(h: Option<&hdrhistogram::Histogram<u64>>) -> Option<f64> {
    h.and_then(|h| quantile_us(h, P99))
}

/// The `q`-quantile of a histogram of nanoseconds, in µs, when its samples
/// support it ([`quantile_ci_ranks`]); `None` otherwise or when empty. The
/// one place every reported percentile comes from.
pub fn quantile_us(h: &hdrhistogram::Histogram<u64>, q: f64) -> Option<f64> {
    quantile_ci_ranks(h.len(), q)?;
    Some(h.value_at_quantile(q) as f64 * US_PER_NS)
}

/// The 95 % confidence interval of the `q`-quantile, in µs: the sample
/// values at the interval's ranks; `None` when the samples do not support
/// the quantile.
pub fn quantile_ci_us(h: &hdrhistogram::Histogram<u64>, q: f64) -> Option<(f64, f64)> {
    let n = h.len();
    let (lo, hi) = quantile_ci_ranks(n, q)?;
    let at = |rank: u64| h.value_at_quantile(rank as f64 / n as f64) as f64 * US_PER_NS;
    Some((at(lo), at(hi)))
}

/// A note naming the percentiles left blank because `h`'s samples cannot
/// support them; `None` when every one is supported (or `h` is empty).
pub fn insufficient_samples_note(h: &hdrhistogram::Histogram<u64>) -> Option<String> {
    if h.is_empty() {
        return None;
    }
    let blank: Vec<String> = LatencyMetric::ALL
        .into_iter()
        .filter_map(|m| {
            let q = m.quantile()?;
            quantile_ci_ranks(h.len(), q).is_none().then(|| format!("{} (needs {})", m.label(), min_samples(q)))
        })
        .collect();
    (!blank.is_empty()).then(|| {
        format!(
            "{} latency samples: {} left blank (a percentile needs enough samples that its 95 % interval lies within \
             them)",
            h.len(),
            blank.join(", ")
        )
    })
}

/// One measured (or failed) run: one CSV row.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    /// The cell.
    #[serde(flatten)]
    pub key: CellKey,
    /// Run index within the cell, from 0.
    pub run: usize,
    /// Ok or failed.
    pub status: Status,
    /// Why it failed; empty when ok.
    pub error: String,
    /// Measured wall time in seconds; `None` when the run failed.
    pub duration_s: Option<f64>,
    /// Completed operations; `None` when the run failed.
    pub ops: Option<u64>,
    /// Failed requests inside an ok run (open loop); `None` for failed runs
    /// and closed-loop benchmarks, which send no requests.
    pub failed: Option<u64>,
    /// Requests sent (open loop); `None` as for `failed`.
    pub sent: Option<u64>,
    /// ops / duration_s; `None` when the run failed.
    pub throughput_per_s: Option<f64>,
    /// The rate at which an open-loop workload's requests were actually
    /// handed to the runtime during the measured window (the configured
    /// rate is the key's `rate_per_s`).
    pub offered_per_s: Option<f64>,
    /// Coordinated-omission-corrected latency statistics.
    pub latency: Option<Latencies>,
    /// The 95 % confidence interval of the corrected p99 (order
    /// statistics: [`quantile_ci_us`]), `[lo, hi]` in µs; JSON only.
    pub p99_ci_us: Option<(f64, f64)>,
    /// p99 of the uncorrected histogram (from actual send), for diagnosis.
    pub uncorrected_p99_us: Option<f64>,
    /// p99 of arrival -> first poll.
    pub queue_wait_p99_us: Option<f64>,
    /// p99 of first poll -> completion.
    pub service_p99_us: Option<f64>,
    /// Counter values in [`counter_names`] order; `None` = not reported.
    /// Serialised as a map from counter name to value or null.
    #[serde(serialize_with = "serialize_counters")]
    pub counters: Vec<Option<u64>>,
    /// The load generator fell behind its schedule.
    pub schedule_slipped: bool,
    /// Workers exceeded the allowed cores.
    pub oversubscribed: bool,
    /// Threads were pinned.
    pub pinned: bool,
    /// Every workload parameter as actually used (defaults resolved),
    /// `name=value;...`.
    pub resolved_params: String,
    /// Workload-specific results (`ns_per_task`, ...), unit in the name.
    #[serde(serialize_with = "serialize_extras")]
    pub extras: Vec<(String, f64)>,
    /// Free-form notes from the workload and the harness, `; `-separated.
    pub notes: String,
    /// CPU time, context switches and wake-ups of the runtime under test.
    #[serde(flatten)]
    pub cpu: CpuColumns,
    /// The ideal scheduler on the same arrivals and draws.
    #[serde(flatten)]
    pub ideal: IdealColumns,
    /// The reference runtime versions the row ran (`tokio=1.50.0`,
    /// `async-executor=1.14.1;async-io=2.6.0`); blank for ours and when not
    /// known.
    pub runtime_version: String,
    /// The cgroup of `--cpus`/`--cpuset` and its throttling.
    #[serde(flatten)]
    pub limits: LimitColumns,
    /// Median schedule delay (scheduled → next poll), µs; `None` where not
    /// measured (`sched-delay=off`, the references) or too few samples.
    pub sched_delay_p50_us: Option<f64>,
    /// p99 schedule delay, µs; `None` as for the median.
    pub sched_delay_p99_us: Option<f64>,
}

impl RunRecord {
    /// A failed row for `key`.
    pub fn failed(key: CellKey, run: usize, error: String) -> RunRecord {
        RunRecord {
            key,
            run,
            status: Status::Failed,
            error,
            duration_s: None,
            ops: None,
            failed: None,
            sent: None,
            throughput_per_s: None,
            offered_per_s: None,
            latency: None,
            p99_ci_us: None,
            uncorrected_p99_us: None,
            queue_wait_p99_us: None,
            service_p99_us: None,
            counters: vec![None; counter_names().len()],
            schedule_slipped: false,
            oversubscribed: false,
            pinned: false,
            resolved_params: String::new(),
            extras: Vec::new(),
            notes: String::new(),
            cpu: CpuColumns::default(),
            ideal: IdealColumns::default(),
            runtime_version: String::new(),
            limits: LimitColumns::default(),
            sched_delay_p50_us: None,
            sched_delay_p99_us: None,
        }
    }

    /// The value of a counter by CSV name.
    pub fn counter(&self, name: &str) -> Option<u64> {
        let index = counter_names().iter().position(|n| *n == name)?;
        self.counters.get(index).copied().flatten()
    }
}

fn serialize_counters<S: serde::Serializer>(values: &[Option<u64>], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(counter_names().into_iter().zip(values.iter()))
}

fn serialize_extras<S: serde::Serializer>(extras: &[(String, f64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(extras.iter().map(|(k, v)| (k, v)))
}

/// Every counter column: the per-worker counters summed over workers, then
/// the driver counters.
pub fn counter_names() -> Vec<&'static str> {
    use wsbench_schedulers::metrics::{COUNTER_NAMES, DRIVER_COUNTER_NAMES};
    COUNTER_NAMES.iter().chain(DRIVER_COUNTER_NAMES).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_scheduler_groups_as_ignoring_the_scheduler_does() {
        let a = CellKey::plain("steal-half", 2, "rpc-fanout");
        let mut b = a.clone();
        b.scheduler = "tokio".into();
        assert_eq!(a.without_scheduler(), b.without_scheduler());
        assert_eq!(a.ignoring(&[Dim::Scheduler]), b.ignoring(&[Dim::Scheduler]));
        // Every other dimension separates them, in both.
        let others: [fn(&mut CellKey); 7] = [
            |k| k.workers = 3,
            |k| k.workload = "skewed".into(),
            |k| k.knobs = "lifo=off".into(),
            |k| k.params = "fanout=2".into(),
            |k| k.rate_per_s = Some(1000),
            |k| k.cpus = "1.5".into(),
            |k| k.cpuset = "0-1".into(),
        ];
        for change in others {
            let mut c = a.clone();
            change(&mut c);
            assert_ne!(a.without_scheduler(), c.without_scheduler(), "{c:?}");
            assert_ne!(a.ignoring(&[Dim::Scheduler]), c.ignoring(&[Dim::Scheduler]), "{c:?}");
        }
    }

    #[test]
    fn metric_labels_round_trip() {
        for m in LatencyMetric::ALL {
            assert_eq!(LatencyMetric::from_label(m.label()), Some(m));
            assert_eq!(LatencyMetric::from_label(m.column()), Some(m));
        }
        assert_eq!(LatencyMetric::from_label("p999"), Some(LatencyMetric::P999));
        assert_eq!(LatencyMetric::from_label("p42"), None);
    }

    #[test]
    fn latencies_come_from_the_histogram() {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let l = Latencies::from_histogram_ns(&h).unwrap();
        assert!((l.p50_us - 500.0).abs() <= 1.0, "{l:?}");
        assert!((l.p99_us - 990.0).abs() <= 1.0, "{l:?}");
        assert!((l.max_us - 1000.0).abs() <= 1.0, "{l:?}");
        assert!(Latencies::from_histogram_ns(&hdrhistogram::Histogram::<u64>::new(3).unwrap()).is_none());
    }

    #[test]
    fn pairs_are_sorted_for_a_stable_key() {
        let pairs = vec![("steal".to_string(), "one".to_string()), ("lifo".to_string(), "off".to_string())];
        assert_eq!(join_pairs(&pairs), "lifo=off;steal=one");
    }

    #[test]
    fn a_percentile_needs_samples_on_both_sides_of_its_interval() {
        // The thresholds the docs and the legend quote.
        assert_eq!(min_samples(0.5), 8);
        assert_eq!(min_samples(0.99), 381);
        assert!((3_800..3_900).contains(&min_samples(0.999)), "{}", min_samples(0.999));
        assert_eq!(quantile_ci_ranks(380, 0.99), None);
        let (lo, hi) = quantile_ci_ranks(381, 0.99).unwrap();
        assert!(lo >= 1 && hi <= 381 && lo < 377 && hi > 377, "{lo}..{hi}");
        assert_eq!(quantile_ci_ranks(0, 0.5), None);
        // 1..=1000 µs: the median's interval brackets 500 µs, p99.9 is blank.
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let (lo, hi) = quantile_ci_us(&h, 0.5).unwrap();
        assert!(lo < 500.0 && hi > 500.0 && hi - lo < 100.0, "{lo}..{hi}");
        let l = Latencies::from_histogram_ns(&h).unwrap();
        assert!(l.p99_us.is_finite() && l.p999_us.is_nan() && l.p9999_us.is_nan(), "{l:?}");
        assert!((l.max_us - 1000.0).abs() < 1.0, "max is always shown");
        let note = insufficient_samples_note(&h).unwrap();
        assert!(note.starts_with("1000 latency samples: p99.9 (needs 38"), "{note}");
    }
}
