//! The CPU columns of a run: what a request costs the runtime under test
//! in CPU time, context switches and wake-ups (see
//! `wsbench_workloads::api::CpuUsage` for what is counted).

use serde::Serialize;
use wsbench_workloads::api::RunOutput;

/// The CSV columns, in order (appended at the end of the row).
pub const CPU_COLUMNS: [&str; 6] =
    ["cpu_ms", "cpu_us_per_op", "cpu_util", "ctx_switches_voluntary", "ctx_switches_involuntary", "wakeups_per_op"];

/// The counter whose value per op is `wakeups_per_op`: a worker woken from
/// its park.
pub const WAKEUP_COUNTER: &str = "unparks";

const NS_PER_MS: f64 = 1e6;
const NS_PER_US: f64 = 1e3;

/// One run's CPU columns; `None` = blank (not measured, or no ops).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CpuColumns {
    /// CPU time (user + system) of the runtime under test over the window.
    pub cpu_ms: Option<f64>,
    /// `cpu_ms` per completed op, in µs.
    pub cpu_us_per_op: Option<f64>,
    /// `cpu_ms` / (workers × the window's wall time): 1.0 = every worker
    /// busy all the time.
    pub cpu_util: Option<f64>,
    /// Voluntary context switches of the runtime's threads over the window.
    pub ctx_switches_voluntary: Option<u64>,
    /// Involuntary context switches of the runtime's threads.
    pub ctx_switches_involuntary: Option<u64>,
    /// Worker unparks per op, where the runtime reports unparks.
    pub wakeups_per_op: Option<f64>,
}

impl CpuColumns {
    /// The columns of a finished run on `workers` workers.
    pub fn of(out: &RunOutput, workers: usize) -> CpuColumns {
        let per_op = |v: f64| (out.ops > 0).then(|| v / out.ops as f64);
        let unparks = out.counters.iter().find(|(n, _)| *n == WAKEUP_COUNTER).and_then(|(_, v)| *v);
        let Some(cpu) = out.cpu else {
            return CpuColumns { wakeups_per_op: unparks.and_then(|u| per_op(u as f64)), ..CpuColumns::default() };
        };
        let window_ns = cpu.window.as_nanos() as f64;
        CpuColumns {
            cpu_ms: Some(cpu.cpu_ns as f64 / NS_PER_MS),
            cpu_us_per_op: per_op(cpu.cpu_ns as f64 / NS_PER_US),
            cpu_util: (window_ns > 0.0 && workers > 0).then(|| cpu.cpu_ns as f64 / (workers as f64 * window_ns)),
            ctx_switches_voluntary: Some(cpu.ctx_switches_voluntary),
            ctx_switches_involuntary: Some(cpu.ctx_switches_involuntary),
            wakeups_per_op: unparks.and_then(|u| per_op(u as f64)),
        }
    }

    /// The CSV fields, in [`CPU_COLUMNS`] order.
    pub fn fields(&self) -> [String; 6] {
        let f = |v: Option<f64>, digits: usize| v.map(|v| format!("{v:.digits$}")).unwrap_or_default();
        let n = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        [
            f(self.cpu_ms, 3),
            f(self.cpu_us_per_op, 3),
            f(self.cpu_util, 4),
            n(self.ctx_switches_voluntary),
            n(self.ctx_switches_involuntary),
            f(self.wakeups_per_op, 4),
        ]
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use wsbench_workloads::api::CpuUsage;

    use super::*;

    fn output(ops: u64, cpu: Option<CpuUsage>, unparks: Option<u64>) -> RunOutput {
        RunOutput {
            ops,
            failed: None,
            sent: None,
            elapsed: Duration::from_millis(500),
            offered_per_s: None,
            latency_ns: hdrhistogram::Histogram::new(3).unwrap(),
            uncorrected_ns: None,
            queue_wait_ns: None,
            service_ns: None,
            sched_delay_ns: None,
            counters: vec![("polls", Some(1)), ("unparks", unparks)],
            schedule_slipped: false,
            notes: Vec::new(),
            params: Vec::new(),
            extras: Vec::new(),
            cpu,
        }
    }

    #[test]
    fn columns_follow_from_cpu_time_ops_and_workers() {
        // 300 ms of CPU over a 500 ms window on 2 workers, 1000 ops, 250 unparks.
        let cpu = CpuUsage {
            cpu_ns: 300_000_000,
            window: Duration::from_millis(500),
            ctx_switches_voluntary: 40,
            ctx_switches_involuntary: 2,
            throttle: None,
        };
        let c = CpuColumns::of(&output(1000, Some(cpu), Some(250)), 2);
        assert_eq!(c.cpu_ms, Some(300.0));
        assert_eq!(c.cpu_us_per_op, Some(300.0));
        assert_eq!(c.cpu_util, Some(0.3));
        assert_eq!((c.ctx_switches_voluntary, c.ctx_switches_involuntary), (Some(40), Some(2)));
        assert_eq!(c.wakeups_per_op, Some(0.25));
        assert_eq!(c.fields(), ["300.000", "300.000", "0.3000", "40", "2", "0.2500"].map(String::from));
    }

    #[test]
    fn what_was_not_measured_stays_blank() {
        let c = CpuColumns::of(&output(1000, None, None), 2);
        assert_eq!(c, CpuColumns::default());
        assert_eq!(c.fields(), ["", "", "", "", "", ""].map(String::from));
        // No ops: no per-op values, but the CPU time is still known.
        let cpu = CpuUsage {
            cpu_ns: 1_000_000,
            window: Duration::from_millis(1),
            ctx_switches_voluntary: 0,
            ctx_switches_involuntary: 0,
            throttle: None,
        };
        let c = CpuColumns::of(&output(0, Some(cpu), Some(3)), 1);
        assert_eq!((c.cpu_ms, c.cpu_us_per_op, c.wakeups_per_op), (Some(1.0), None, None));
        assert_eq!(c.ctx_switches_voluntary, Some(0), "a measured zero is a zero");
    }
}
