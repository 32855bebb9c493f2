//! CFS throttling of the cgroup a run is in, over its measured window.
//!
//! The harness puts a run in a cgroup of its own (`--cpus`, `--cpuset`)
//! and names that cgroup's `cpu.stat` here ([`set_source`]); the CPU meter
//! reads it when the window starts and when it ends, and the difference is
//! the window's throttling. Both cgroup versions write `nr_periods` and
//! `nr_throttled`; v1 writes the throttled time as `throttled_time` (ns),
//! v2 as `throttled_usec` (µs). With no source, or an unreadable file, the
//! throttling is `None`: unmeasured, never zero.

use std::path::PathBuf;
use std::sync::Mutex;

/// CFS throttling over a window, from the cgroup's `cpu.stat` (both cgroup
/// versions; see [`set_source`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttle {
    /// Enforcement periods that elapsed with runnable threads.
    pub nr_periods: u64,
    /// Periods in which the quota ran out and the cgroup was throttled.
    pub nr_throttled: u64,
    /// Time the cgroup's threads spent throttled, in ns.
    pub throttled_ns: u64,
}

static SOURCE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Names the `cpu.stat` file the meter reads (`None`: no cgroup).
pub fn set_source(path: Option<PathBuf>) {
    *SOURCE.lock().unwrap_or_else(|e| e.into_inner()) = path;
}

/// Parses a `cpu.stat` file of either cgroup version.
pub fn parse_cpu_stat(text: &str) -> Option<Throttle> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == name).then(|| v.trim().parse::<u64>().ok()).flatten()
        })
    };
    let throttled_ns = match (field("throttled_time"), field("throttled_usec")) {
        (Some(ns), _) => ns,
        (None, Some(us)) => us.saturating_mul(1_000),
        (None, None) => return None,
    };
    Some(Throttle { nr_periods: field("nr_periods")?, nr_throttled: field("nr_throttled")?, throttled_ns })
}

/// The source's counters now; `None` without a source or when unreadable.
pub(crate) fn read() -> Option<Throttle> {
    let path = SOURCE.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
    parse_cpu_stat(&std::fs::read_to_string(path).ok()?)
}

/// The counters between two readings.
pub(crate) fn delta(start: Option<Throttle>, end: Option<Throttle>) -> Option<Throttle> {
    let (s, e) = (start?, end?);
    Some(Throttle {
        nr_periods: e.nr_periods.checked_sub(s.nr_periods)?,
        nr_throttled: e.nr_throttled.checked_sub(s.nr_throttled)?,
        throttled_ns: e.throttled_ns.checked_sub(s.throttled_ns)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_versions_parse() {
        let v1 = "nr_periods 10\nnr_throttled 4\nthrottled_time 123456789\nnr_bursts 0\nburst_time 0\n";
        assert_eq!(parse_cpu_stat(v1), Some(Throttle { nr_periods: 10, nr_throttled: 4, throttled_ns: 123_456_789 }));
        let v2 = "usage_usec 5\nuser_usec 3\nsystem_usec 2\nnr_periods 7\nnr_throttled 2\nthrottled_usec 1500\n";
        assert_eq!(parse_cpu_stat(v2), Some(Throttle { nr_periods: 7, nr_throttled: 2, throttled_ns: 1_500_000 }));
        // A v2 cgroup without the cpu controller writes only usage.
        assert_eq!(parse_cpu_stat("usage_usec 5\nuser_usec 3\nsystem_usec 2\n"), None);
    }

    #[test]
    fn a_delta_is_measured_or_none() {
        let a = Throttle { nr_periods: 1, nr_throttled: 1, throttled_ns: 10 };
        let b = Throttle { nr_periods: 5, nr_throttled: 3, throttled_ns: 50 };
        assert_eq!(delta(Some(a), Some(b)), Some(Throttle { nr_periods: 4, nr_throttled: 2, throttled_ns: 40 }));
        assert_eq!(delta(None, Some(b)), None);
        assert_eq!(delta(Some(b), Some(a)), None, "a counter that went back is not a measurement");
    }
}
