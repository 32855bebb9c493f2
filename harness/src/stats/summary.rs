//! Per-cell summaries of the runs (median, spread, interval), the ratio to a
//! reference scheduler, and capacity at an SLO. Consumed by the table, the
//! exporters and `plot`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::data::record::{counter_names, CellKey, Dim, LatencyMetric, RunRecord, Status};
use crate::stats::slo::Slo;
use crate::stats::{median, Summary};

const PERCENT: f64 = 100.0;

/// The summary of one cell over its ok runs.
#[derive(Debug, Clone, Serialize)]
pub struct CellSummary {
    /// The cell.
    #[serde(flatten)]
    pub key: CellKey,
    /// Runs that produced a measurement.
    pub ok_runs: usize,
    /// Runs that failed.
    pub failed_runs: usize,
    /// Distinct failure reasons.
    pub errors: Vec<String>,
    /// Throughput (ops/s) over ok runs.
    pub throughput_per_s: Option<Summary>,
    /// Median measured offered rate (open loop).
    pub offered_per_s: Option<f64>,
    /// Ok runs whose load generator fell behind its schedule: the cell's
    /// offered rate is not the one asked, and it stays out of capacity.
    pub slipped_runs: usize,
    /// Each latency statistic over ok runs, by label (`p99`, ...), in µs.
    pub latency_us: BTreeMap<&'static str, Summary>,
    /// Median of each counter over the runs that reported it; absent when
    /// none did.
    pub counters: BTreeMap<&'static str, f64>,
    /// Failed requests as a share of the requests answered, over every run
    /// that finished (ok or failed for too many failures); `None` when no
    /// run answered any.
    pub failed_request_fraction: Option<f64>,
    /// CPU time of the runtime per op (µs) over the runs that measured it.
    pub cpu_us_per_op: Option<Summary>,
    /// The uncorrected p99 (µs, from each request's actual send) over the
    /// runs that kept one.
    pub uncorrected_p99_us: Option<Summary>,
    /// The ideal scheduler's p50 and p99 (µs) over the runs that have one.
    pub ideal_p50_us: Option<Summary>,
    /// See `ideal_p50_us`.
    pub ideal_p99_us: Option<Summary>,
    /// Measured p99 / ideal p99 over the runs that have both.
    pub p99_over_ideal: Option<Summary>,
    /// Time the run's cgroup spent throttled in the measured window (ms),
    /// over the runs under `--cpus` that read it.
    pub throttled_ms: Option<Summary>,
}

impl CellSummary {
    /// Summarises the runs of one cell.
    pub fn of(key: &CellKey, records: &[RunRecord]) -> CellSummary {
        let ok: Vec<&RunRecord> = records.iter().filter(|r| r.status == Status::Ok).collect();
        let mut errors: Vec<String> =
            records.iter().filter(|r| r.status == Status::Failed).map(|r| r.error.clone()).collect();
        errors.sort();
        errors.dedup();
        let throughput: Vec<f64> = ok.iter().filter_map(|r| r.throughput_per_s).collect();
        let offered: Vec<f64> = ok.iter().filter_map(|r| r.offered_per_s).collect();
        let mut latency_us = BTreeMap::new();
        for metric in LatencyMetric::ALL {
            // Runs whose samples could not support the statistic (blank)
            // are left out of it.
            let values: Vec<f64> =
                ok.iter().filter_map(|r| r.latency.map(|l| l.get(metric))).filter(|v| v.is_finite()).collect();
            if let Some(s) = Summary::of(&values) {
                latency_us.insert(metric.label(), s);
            }
        }
        let mut counters = BTreeMap::new();
        for name in counter_names() {
            let values: Vec<f64> = ok.iter().filter_map(|r| r.counter(name)).map(|v| v as f64).collect();
            if !values.is_empty() {
                counters.insert(name, median(&values));
            }
        }
        CellSummary {
            key: key.clone(),
            ok_runs: ok.len(),
            failed_runs: records.len() - ok.len(),
            errors,
            throughput_per_s: Summary::of(&throughput),
            offered_per_s: (!offered.is_empty()).then(|| median(&offered)),
            slipped_runs: ok.iter().filter(|r| r.schedule_slipped).count(),
            latency_us,
            counters,
            failed_request_fraction: failed_request_fraction(records),
            cpu_us_per_op: Summary::of(&ok.iter().filter_map(|r| r.cpu.cpu_us_per_op).collect::<Vec<_>>()),
            uncorrected_p99_us: Summary::of(&ok.iter().filter_map(|r| r.uncorrected_p99_us).collect::<Vec<_>>()),
            ideal_p50_us: Summary::of(&ok.iter().filter_map(|r| r.ideal.ideal_p50_us).collect::<Vec<_>>()),
            ideal_p99_us: Summary::of(&ok.iter().filter_map(|r| r.ideal.ideal_p99_us).collect::<Vec<_>>()),
            p99_over_ideal: Summary::of(&ok.iter().filter_map(|r| r.ideal.p99_over_ideal).collect::<Vec<_>>()),
            throttled_ms: Summary::of(&ok.iter().filter_map(|r| r.limits.throttled_ms).collect::<Vec<_>>()),
        }
    }

    /// One latency statistic.
    pub fn latency(&self, metric: LatencyMetric) -> Option<&Summary> {
        self.latency_us.get(metric.label())
    }

    /// The ideal scheduler's value of `metric` (it keeps p50 and p99).
    pub fn ideal_latency(&self, metric: LatencyMetric) -> Option<&Summary> {
        match metric {
            LatencyMetric::P50 => self.ideal_p50_us.as_ref(),
            LatencyMetric::P99 => self.ideal_p99_us.as_ref(),
            _ => None,
        }
    }

    /// The x value of a load curve: the requested rate, else the measured
    /// offered rate.
    pub fn load_per_s(&self) -> Option<f64> {
        self.key.rate_per_s.map(|r| r as f64).or(self.offered_per_s)
    }

    /// The rate really offered: the measured one, else (no run measured
    /// it) the one asked.
    pub fn achieved_per_s(&self) -> Option<f64> {
        self.offered_per_s.or(self.key.rate_per_s.map(|r| r as f64))
    }

    /// Whether every ok run's load generator kept its schedule.
    pub fn kept_schedule(&self) -> bool {
        self.slipped_runs == 0
    }
}

/// Failed / (completed + failed) requests summed over `records`.
fn failed_request_fraction(records: &[RunRecord]) -> Option<f64> {
    // Rows without requests (benchmarks, failed runs) count nothing.
    let failed: u64 = records.iter().filter_map(|r| r.failed).sum();
    let answered: u64 = records.iter().filter_map(|r| Some(r.ops? + r.failed?)).sum();
    (answered > 0).then(|| failed as f64 / answered as f64)
}

/// Groups records by cell, keeping first-seen order, and summarises each.
pub fn summarise(records: &[RunRecord]) -> Vec<CellSummary> {
    let mut order: Vec<CellKey> = Vec::new();
    let mut groups: BTreeMap<CellKey, Vec<RunRecord>> = BTreeMap::new();
    for r in records {
        if !groups.contains_key(&r.key) {
            order.push(r.key.clone());
        }
        groups.entry(r.key.clone()).or_default().push(r.clone());
    }
    order.iter().map(|k| CellSummary::of(k, &groups[k])).collect()
}

/// The cell that differs from `cell` only in running `baseline` (knobs
/// ignored on the baseline side when it has none).
pub fn baseline_cell<'a>(cells: &'a [CellSummary], cell: &CellSummary, baseline: &str) -> Option<&'a CellSummary> {
    let setting = cell.key.ignoring(&[Dim::Scheduler, Dim::Knobs]);
    cells.iter().find(|c| {
        c.key.scheduler == baseline
            && (c.key.knobs == cell.key.knobs || c.key.knobs.is_empty())
            && c.key.ignoring(&[Dim::Scheduler, Dim::Knobs]) == setting
    })
}

/// Ratios of a cell's medians to its baseline cell's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratios {
    /// Throughput ratio (higher is better).
    pub throughput: Option<f64>,
    /// p99 latency ratio (lower is better).
    pub p99: Option<f64>,
}

/// `cell`'s throughput and p99 relative to the same cell on `baseline`.
pub fn ratios_to(cells: &[CellSummary], cell: &CellSummary, baseline: &str) -> Ratios {
    let Some(base) = baseline_cell(cells, cell, baseline) else {
        return Ratios { throughput: None, p99: None };
    };
    let ratio = |mine: Option<f64>, theirs: Option<f64>| match (mine, theirs) {
        (Some(m), Some(t)) if t > 0.0 => Some(m / t),
        _ => None,
    };
    let p99 = |c: &CellSummary| c.latency(LatencyMetric::P99).map(|s| s.median);
    Ratios {
        throughput: ratio(cell.throughput_per_s.map(|s| s.median), base.throughput_per_s.map(|s| s.median)),
        p99: ratio(p99(cell), p99(base)),
    }
}

/// Capacity of one series: a cell without its rate (scheduler, workers,
/// workload, knobs, params, CPU limits).
#[derive(Debug, Clone, Serialize)]
pub struct Capacity {
    /// Scheduler.
    pub scheduler: String,
    /// Workers.
    pub workers: usize,
    /// Workload.
    pub workload: String,
    /// Knobs.
    pub knobs: String,
    /// Params.
    pub params: String,
    /// `--cpus` (empty = none).
    pub cpus: String,
    /// `--cpuset` (empty = none).
    pub cpuset: String,
    /// The objective.
    pub slo: String,
    /// Highest offered rate up to which the objective holds; `None` when it
    /// fails at the lowest rate measured.
    pub capacity_per_s: Option<f64>,
    /// Highest rate measured.
    pub highest_measured_per_s: f64,
    /// Rates measured.
    pub points: usize,
    /// Rates left out because their load generator fell behind.
    pub behind: usize,
    /// Rates left out because their runs had too few latency samples to
    /// support the objective's percentile (it is blank).
    pub too_few_samples: usize,
    /// The ideal scheduler's capacity at the same objective, by the same
    /// rule over the same cells at the same (achieved) rates; `None` where
    /// the workload has no ideal, the objective's statistic is not one the
    /// ideal keeps (p50, p99), or it fails at the lowest rate.
    pub ideal_capacity_per_s: Option<f64>,
    /// `capacity_per_s` as a percentage of `ideal_capacity_per_s`.
    pub percent_of_ideal: Option<f64>,
}

/// Capacity at `slo` for every series with a load axis.
pub fn capacities(cells: &[CellSummary], slo: &Slo) -> Vec<Capacity> {
    type Series = CellKey;
    let mut order: Vec<Series> = Vec::new();
    let mut points: BTreeMap<Series, Vec<(f64, f64)>> = BTreeMap::new();
    let mut behind: BTreeMap<Series, usize> = BTreeMap::new();
    let mut too_few: BTreeMap<Series, usize> = BTreeMap::new();
    let mut ideal: BTreeMap<Series, Vec<(f64, f64)>> = BTreeMap::new();
    // Achieved rates, over cells whose generator kept its schedule and
    // whose samples support the percentile only.
    for c in cells {
        let Some(load) = c.achieved_per_s() else {
            continue;
        };
        let value = c.latency(slo.metric);
        if value.is_none() && c.ok_runs == 0 {
            continue;
        }
        let series = c.key.ignoring(&[Dim::Rate]);
        if !points.contains_key(&series) {
            order.push(series.clone());
        }
        // The ideal never falls behind: a cell whose generator did counts
        // for it at the rate asked, which is what it simulated.
        if let Some(v) = c.ideal_latency(slo.metric) {
            let x = if c.kept_schedule() { load } else { c.load_per_s().unwrap_or(load) };
            ideal.entry(series.clone()).or_default().push((x, v.median));
        }
        let pts = points.entry(series.clone()).or_default();
        match value {
            None => *too_few.entry(series).or_default() += 1,
            Some(_) if !c.kept_schedule() => *behind.entry(series).or_default() += 1,
            Some(v) => pts.push((load, v.median)),
        }
    }
    order
        .into_iter()
        .map(|series| {
            let pts = &points[&series];
            let behind = behind.get(&series).copied().unwrap_or(0);
            let too_few_samples = too_few.get(&series).copied().unwrap_or(0);
            let capacity_per_s = slo.capacity(pts);
            let ideal_capacity_per_s = ideal.get(&series).and_then(|p| slo.capacity(p));
            let percent_of_ideal = match (capacity_per_s, ideal_capacity_per_s) {
                (Some(c), Some(i)) if i > 0.0 => Some(c / i * PERCENT),
                _ => None,
            };
            let CellKey { scheduler, workers, workload, knobs, params, cpus, cpuset, .. } = series;
            Capacity {
                scheduler,
                workers,
                workload,
                knobs,
                params,
                cpus,
                cpuset,
                slo: slo.to_string(),
                capacity_per_s,
                highest_measured_per_s: pts.iter().map(|p| p.0).fold(0.0, f64::max),
                points: pts.len(),
                behind,
                too_few_samples,
                ideal_capacity_per_s,
                percent_of_ideal,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::record::Latencies;

    fn record(sched: &str, rate: u64, run: usize, throughput: f64, p99_us: f64) -> RunRecord {
        let key = CellKey { rate_per_s: Some(rate), ..CellKey::plain(sched, 2, "rpc") };
        let mut r = RunRecord::failed(key, run, String::new());
        r.status = Status::Ok;
        r.throughput_per_s = Some(throughput);
        let mut l =
            Latencies { p50_us: 1.0, p90_us: 1.0, p99_us: 1.0, p999_us: 1.0, p9999_us: 1.0, max_us: 1.0, mean_us: 1.0 };
        l.set(LatencyMetric::P99, p99_us);
        r.latency = Some(l);
        r
    }

    #[test]
    fn summaries_ratios_and_capacity() {
        let mut records = Vec::new();
        for run in 0..3 {
            records.push(record("a", 1000, run, 100.0 + run as f64, 200.0));
            records.push(record("tokio", 1000, run, 50.0, 100.0));
            records.push(record("a", 2000, run, 200.0, 2000.0));
        }
        records.push(RunRecord::failed(records[0].key.clone(), 3, "hung".into()));
        let cells = summarise(&records);
        assert_eq!(cells.len(), 3);
        assert_eq!((cells[0].ok_runs, cells[0].failed_runs), (3, 1));
        assert_eq!(cells[0].errors, vec!["hung".to_string()]);
        assert_eq!(cells[0].throughput_per_s.unwrap().median, 101.0);
        let r = ratios_to(&cells, &cells[0], "tokio");
        assert_eq!((r.throughput, r.p99), (Some(101.0 / 50.0), Some(2.0)));
        assert_eq!(ratios_to(&cells, &cells[2], "tokio").throughput, None);
        assert!(cells[0].counters.is_empty(), "failed() rows carry no counters");
        let caps = capacities(&cells, &"p99<1ms".parse().unwrap());
        let a = caps.iter().find(|c| c.scheduler == "a").unwrap();
        assert_eq!((a.capacity_per_s, a.points), (Some(1000.0), 2));
    }

    /// With an objective the ideal keeps (p99), capacity is also read off
    /// the ideal's values at the same rates, and given as a percentage.
    #[test]
    fn capacity_against_the_ideal() {
        let mut records = Vec::new();
        for (rate, p99, ideal) in [(1000, 200.0, 100.0), (2000, 900.0, 300.0), (3000, 4000.0, 800.0), (4000, 9e3, 2e3)]
        {
            let mut r = record("a", rate, 0, rate as f64, p99);
            r.ideal = crate::data::ideal::IdealColumns::of(Some(ideal / 2.0), Some(ideal), Some(p99));
            records.push(r);
        }
        let cells = summarise(&records);
        assert_eq!(cells[1].p99_over_ideal.unwrap().median, 3.0);
        let caps = capacities(&cells, &"p99<1ms".parse().unwrap());
        assert_eq!((caps[0].capacity_per_s, caps[0].ideal_capacity_per_s), (Some(2000.0), Some(3000.0)));
        assert!((caps[0].percent_of_ideal.unwrap() - 200.0 / 3.0).abs() < 1e-9);
        // The ideal keeps p50 and p99 only: at p99.9 there is no ideal capacity.
        let caps = capacities(&cells, &"p99.9<1ms".parse().unwrap());
        assert_eq!((caps[0].ideal_capacity_per_s, caps[0].percent_of_ideal), (None, None));
    }

    /// Issue 26: capacity is read at the rates achieved, over rows whose
    /// generator kept its schedule: a row asked 50M that offered 700k is
    /// left out (and counted), the others count at their measured rate.
    #[test]
    fn capacity_uses_achieved_rates_of_rows_that_kept_their_schedule() {
        let mut records = Vec::new();
        for (rate, offered, slipped) in [(1000, 990.0, false), (2000, 1990.0, false), (50_000_000, 700_000.0, true)] {
            let mut r = record("a", rate, 0, offered, 10.0);
            (r.offered_per_s, r.schedule_slipped) = (Some(offered), slipped);
            records.push(r);
        }
        let cells = summarise(&records);
        assert_eq!((cells[2].slipped_runs, cells[2].kept_schedule()), (1, false));
        assert_eq!(cells[2].achieved_per_s(), Some(700_000.0));
        let caps = capacities(&cells, &"p99<1ms".parse().unwrap());
        assert_eq!((caps[0].capacity_per_s, caps[0].points, caps[0].behind), (Some(1990.0), 2, 1));
        assert_eq!(caps[0].highest_measured_per_s, 1990.0);
    }

    /// `--cpus 1,2` makes two cells of every (scheduler, workers,
    /// workload): each ratio is to the baseline under the same quota, and
    /// each quota is its own capacity series.
    #[test]
    fn cpu_limits_separate_ratios_and_capacity_series() {
        let mut records = Vec::new();
        for (cpus, rate, a_p99, tokio_p99) in
            [("1", 1000, 400.0, 200.0), ("2", 1000, 300.0, 600.0), ("1", 2000, 2e3, 2e3)]
        {
            for (sched, p99) in [("a", a_p99), ("tokio", tokio_p99)] {
                let mut r = record(sched, rate, 0, rate as f64, p99);
                r.key.cpus = cpus.to_string();
                records.push(r);
            }
        }
        let cells = summarise(&records);
        let find = |sched: &str, cpus: &str, rate: u64| {
            cells
                .iter()
                .find(|c| c.key.scheduler == sched && c.key.cpus == cpus && c.key.rate_per_s == Some(rate))
                .unwrap()
        };
        assert_eq!(ratios_to(&cells, find("a", "1", 1000), "tokio").p99, Some(2.0));
        assert_eq!(ratios_to(&cells, find("a", "2", 1000), "tokio").p99, Some(0.5));
        let caps = capacities(&cells, &"p99<1ms".parse().unwrap());
        let a: Vec<(&str, usize, Option<f64>)> =
            caps.iter().filter(|c| c.scheduler == "a").map(|c| (c.cpus.as_str(), c.points, c.capacity_per_s)).collect();
        assert_eq!(a, [("1", 2, Some(1000.0)), ("2", 1, Some(1000.0))]);
    }
}
