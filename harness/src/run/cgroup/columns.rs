//! The columns a run's limits add to its row: which cgroup version held
//! it, its CFS throttling over the measured window, and the worker count
//! tokio picks by default under the same limits. (The limits themselves,
//! `cpus` and `cpuset`, are part of the cell's key.)

use serde::Serialize;
use wsbench_workloads::api::RunOutput;

/// The CSV columns, in order, after the key's `cpus` and `cpuset`.
pub const LIMIT_COLUMNS: [&str; 5] = ["cgroup", "nr_periods", "nr_throttled", "throttled_ms", "tokio_default_workers"];

const NS_PER_MS: f64 = 1e6;

/// One row's limit columns; blank = not measured (no cgroup).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LimitColumns {
    /// `v1` or `v2`: the cgroup version the run was in; empty = none.
    pub cgroup: String,
    /// CFS periods in the window (from the cgroup's `cpu.stat`).
    pub nr_periods: Option<u64>,
    /// Periods in which the cgroup ran out of quota and was throttled.
    pub nr_throttled: Option<u64>,
    /// Time the cgroup's threads spent throttled, in ms.
    pub throttled_ms: Option<f64>,
    /// The worker count tokio's multi-thread runtime picks by default
    /// under the cell's limits (probed, not computed).
    pub tokio_default_workers: Option<usize>,
}

impl LimitColumns {
    /// The throttling `out` measured, with the cell's cgroup version and
    /// probed tokio default.
    pub fn of(out: &RunOutput, cgroup: &str, tokio_default_workers: Option<usize>) -> LimitColumns {
        let throttle = out.cpu.and_then(|c| c.throttle);
        LimitColumns {
            cgroup: cgroup.to_string(),
            nr_periods: throttle.map(|t| t.nr_periods),
            nr_throttled: throttle.map(|t| t.nr_throttled),
            throttled_ms: throttle.map(|t| t.throttled_ns as f64 / NS_PER_MS),
            tokio_default_workers,
        }
    }

    /// The CSV fields, in [`LIMIT_COLUMNS`] order.
    pub fn fields(&self) -> [String; 5] {
        let n = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        [
            self.cgroup.clone(),
            n(self.nr_periods),
            n(self.nr_throttled),
            self.throttled_ms.map(|v| format!("{v:.3}")).unwrap_or_default(),
            n(self.tokio_default_workers.map(|w| w as u64)),
        ]
    }
}
