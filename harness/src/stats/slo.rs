//! Service-level objectives (`--slo p99<1ms`) and capacity: the highest
//! offered rate up to which a scheduler keeps the objective.

use std::fmt;
use std::str::FromStr;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::data::record::LatencyMetric;
use crate::parse::parse_duration;

/// Microseconds per second.
const US_PER_S: f64 = 1e6;

/// A latency objective: `metric < threshold`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Slo {
    /// Which statistic.
    pub metric: LatencyMetric,
    /// The bound, in microseconds (exclusive).
    pub threshold_us: f64,
}

impl FromStr for Slo {
    type Err = anyhow::Error;

    fn from_str(text: &str) -> Result<Slo> {
        let Some((metric, bound)) = text.split_once('<') else {
            bail!("--slo `{text}` is not of the form METRIC<DURATION, e.g. `p99<1ms`");
        };
        let metric = LatencyMetric::from_label(metric).with_context(|| {
            let allowed: Vec<_> = LatencyMetric::ALL.iter().map(|m| m.label()).collect();
            format!("unknown metric `{}` in --slo `{text}`; allowed: {}", metric.trim(), allowed.join(", "))
        })?;
        let bound = parse_duration(bound).with_context(|| format!("bad bound in --slo `{text}`"))?;
        if bound.is_zero() {
            bail!("--slo `{text}`: the bound must be longer than zero");
        }
        Ok(Slo { metric, threshold_us: bound.as_secs_f64() * US_PER_S })
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}<{}", self.metric.label(), crate::output::units::format_us(self.threshold_us))
    }
}

impl Slo {
    /// Capacity from `(offered rate, metric value)` points: the highest rate
    /// such that the objective holds at it and at every lower rate measured.
    /// `None` when it fails already at the lowest rate.
    pub fn capacity(&self, points: &[(f64, f64)]) -> Option<f64> {
        let mut sorted = points.to_vec();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut best = None;
        for (rate, value_us) in sorted {
            if value_us < self.threshold_us {
                best = Some(rate);
            } else {
                break;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_metric_and_bound() {
        let slo: Slo = "p99<1ms".parse().unwrap();
        assert_eq!(slo.metric, LatencyMetric::P99);
        assert_eq!(slo.threshold_us, 1000.0);
        let slo: Slo = "p99.9<250us".parse().unwrap();
        assert_eq!(slo.metric, LatencyMetric::P999);
        assert_eq!(slo.threshold_us, 250.0);
        for bad in ["p99", "p42<1ms", "p99<soon", "p99<0ms"] {
            let err = format!("{:#}", bad.parse::<Slo>().unwrap_err());
            assert!(err.contains(bad) || err.contains("p42"), "{bad}: {err}");
        }
    }

    #[test]
    fn capacity_is_the_last_rate_before_the_first_violation() {
        let slo: Slo = "p99<1ms".parse().unwrap();
        let points = [(4000.0, 900.0), (1000.0, 100.0), (2000.0, 300.0), (8000.0, 800.0), (3000.0, 1500.0)];
        assert_eq!(slo.capacity(&points), Some(2000.0));
        assert_eq!(slo.capacity(&[(1000.0, 2000.0)]), None);
        assert_eq!(slo.capacity(&[(1000.0, 10.0), (2000.0, 20.0)]), Some(2000.0));
    }
}
