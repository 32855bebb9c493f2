//! The ideal scheduler's columns of a row: what a zero-overhead central
//! FCFS queue with `workers` servers did with the run's own arrivals and
//! service draws (`wsbench_workloads::ideal`), and how far the measured
//! p99 is from it.

use serde::Serialize;

/// The CSV columns, in order (appended at the end of the row, schema 6).
pub const IDEAL_COLUMNS: [&str; 3] = ["ideal_p50_us", "ideal_p99_us", "p99_over_ideal"];

/// What the ideal columns mean, for legends and docs.
pub const IDEAL_LEGEND: &str = "ideal = a zero-overhead central FCFS queue with k = workers servers fed the run's own \
     arrival times and service draws (same seed; a fan-out request ends with its last subtask); p99/ideal = measured \
     p99 / the ideal's p99";

/// One row's ideal columns; `None` = blank (no ideal for its workload, a
/// failed run, too few samples for the percentile, or an ideal p99 of 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct IdealColumns {
    /// The ideal's median latency, µs.
    pub ideal_p50_us: Option<f64>,
    /// The ideal's p99 latency, µs.
    pub ideal_p99_us: Option<f64>,
    /// The measured p99 over the ideal's p99.
    pub p99_over_ideal: Option<f64>,
}

impl IdealColumns {
    /// The columns of a run whose ideal p50 and p99 are `ideal_p50_us` and
    /// `ideal_p99_us` (blank where the ideal's samples cannot support them,
    /// by the rule every percentile follows) and whose measured p99 is
    /// `measured_p99_us`.
    pub fn of(ideal_p50_us: Option<f64>, ideal_p99_us: Option<f64>, measured_p99_us: Option<f64>) -> IdealColumns {
        let p99_over_ideal = match (measured_p99_us, ideal_p99_us) {
            (Some(m), Some(i)) if m.is_finite() && i > 0.0 => Some(m / i),
            _ => None,
        };
        IdealColumns { ideal_p50_us, ideal_p99_us, p99_over_ideal }
    }

    /// The CSV fields, in [`IDEAL_COLUMNS`] order.
    pub fn fields(&self) -> [String; 3] {
        let f = |v: Option<f64>, digits: usize| v.map(|v| format!("{v:.digits$}")).unwrap_or_default();
        [f(self.ideal_p50_us, 3), f(self.ideal_p99_us, 3), f(self.p99_over_ideal, 4)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_is_the_measured_p99_over_the_ideal_one() {
        let c = IdealColumns::of(Some(500.0), Some(990.0), Some(1980.0));
        assert_eq!((c.ideal_p50_us, c.ideal_p99_us, c.p99_over_ideal), (Some(500.0), Some(990.0), Some(2.0)));
        assert_eq!(c.fields(), ["500.000".to_string(), "990.000".to_string(), "2.0000".to_string()]);
        // No measured p99, no ideal p99, or an ideal p99 of 0: no ratio.
        assert_eq!(IdealColumns::of(Some(1.0), Some(2.0), None).p99_over_ideal, None);
        assert_eq!(IdealColumns::of(None, None, Some(1.0)).p99_over_ideal, None);
        assert_eq!(IdealColumns::of(Some(0.0), Some(0.0), Some(12.0)).p99_over_ideal, None);
        assert_eq!(IdealColumns::default().fields(), [String::new(), String::new(), String::new()]);
    }
}
