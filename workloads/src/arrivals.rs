//! Open-loop arrival schedules: when each request is *meant* to arrive.
//!
//! A schedule is a deterministic function of (kind, rate, phase, seed).
//! Load-generator threads each own one schedule at `rate / threads`: the
//! superposition of independent Poisson processes is a Poisson process at
//! the summed rate, and uniform schedules are interleaved by giving thread
//! `i` the phase `i / rate`.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const NS_PER_S: f64 = 1e9;

/// How inter-arrival times are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrivalKind {
    /// Exponential inter-arrivals (a Poisson process).
    Poisson,
    /// Constant inter-arrivals.
    Uniform,
}

/// The `arrival` parameter's options.
pub(crate) const ARRIVAL_KINDS: &[(&str, ArrivalKind)] =
    &[("poisson", ArrivalKind::Poisson), ("uniform", ArrivalKind::Uniform)];

/// An infinite sequence of intended arrival offsets from the schedule's
/// start, in nanoseconds, strictly increasing for `Uniform` and
/// non-decreasing for `Poisson`.
/// A clone continues the same sequence (the client's backlog replays
/// the schedule with one).
#[derive(Debug, Clone)]
pub struct Arrivals {
    kind: ArrivalKind,
    mean_gap_ns: f64,
    next_ns: f64,
    rng: SmallRng,
}

impl Arrivals {
    /// A schedule at `rate_per_s` (> 0) whose first arrival is `phase_ns`
    /// after the start (plus one drawn gap for Poisson).
    pub fn new(kind: ArrivalKind, rate_per_s: f64, phase_ns: f64, seed: u64) -> Arrivals {
        assert!(rate_per_s.is_finite() && rate_per_s > 0.0, "rate must be validated before scheduling: {rate_per_s}");
        let mut a = Arrivals {
            kind,
            mean_gap_ns: NS_PER_S / rate_per_s,
            next_ns: phase_ns,
            rng: SmallRng::seed_from_u64(seed),
        };
        if kind == ArrivalKind::Poisson {
            a.next_ns += a.gap_ns();
        }
        a
    }

    fn gap_ns(&mut self) -> f64 {
        match self.kind {
            ArrivalKind::Uniform => self.mean_gap_ns,
            // Inverse CDF of the exponential; 1 - U is in (0, 1].
            ArrivalKind::Poisson => -self.mean_gap_ns * (1.0 - self.rng.random::<f64>()).ln(),
        }
    }

    /// The next intended arrival, in nanoseconds after the start.
    pub fn next_offset_ns(&mut self) -> u64 {
        let at = self.next_ns;
        self.next_ns += self.gap_ns();
        at as u64
    }

    /// The next intended arrival as an instant, the schedule starting at
    /// `start` (every generator's and the client backlog's one conversion).
    pub(crate) fn next_at(&mut self, start: Instant) -> Instant {
        start + Duration::from_nanos(self.next_offset_ns())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: u64 = 42;
    const DRAWS: usize = 100_000;
    /// Kolmogorov–Smirnov critical value coefficient at alpha = 0.01
    /// (D_crit ~ 1.628 / sqrt(n) for large n).
    const KS_COEFF_ALPHA_001: f64 = 1.628;

    /// Gaps between consecutive arrivals of `a`.
    fn gaps(a: &mut Arrivals, n: usize) -> Vec<f64> {
        let mut prev = a.next_offset_ns();
        (0..n)
            .map(|_| {
                let t = a.next_offset_ns();
                let g = (t - prev) as f64;
                prev = t;
                g
            })
            .collect()
    }

    /// Kolmogorov–Smirnov statistic of `gaps` against Exp(mean).
    fn ks_vs_exponential(mut gaps: Vec<f64>, mean: f64) -> f64 {
        gaps.sort_by(f64::total_cmp);
        let n = gaps.len() as f64;
        gaps.iter()
            .enumerate()
            .map(|(i, &g)| {
                let cdf = 1.0 - (-g / mean).exp();
                (cdf - i as f64 / n).abs().max(((i + 1) as f64 / n - cdf).abs())
            })
            .fold(0.0, f64::max)
    }

    /// (c) of the issue: Poisson inter-arrivals look exponential — the mean
    /// is within 1% of 1/rate and the KS statistic against Exp(rate) is
    /// below the 1% critical value. Fixed seed: the outcome is determined.
    #[test]
    fn poisson_gaps_pass_an_exponential_check() {
        let rate = 20_000.0;
        let gaps = gaps(&mut Arrivals::new(ArrivalKind::Poisson, rate, 0.0, SEED), DRAWS);
        let mean_gap = NS_PER_S / rate;
        let mean = gaps.iter().sum::<f64>() / DRAWS as f64;
        assert!((mean - mean_gap).abs() < 0.01 * mean_gap, "mean gap {mean} ns vs {mean_gap}");
        let d = ks_vs_exponential(gaps, mean_gap);
        let crit = KS_COEFF_ALPHA_001 / (DRAWS as f64).sqrt();
        assert!(d < crit, "KS statistic {d} >= critical {crit}");
    }

    #[test]
    fn the_exponential_check_rejects_uniform_gaps() {
        let rate = 20_000.0;
        let gaps = gaps(&mut Arrivals::new(ArrivalKind::Uniform, rate, 0.0, SEED), DRAWS);
        let mean_gap = NS_PER_S / rate;
        assert!(gaps.iter().all(|&g| (g - mean_gap).abs() <= 1.0), "uniform gaps must be constant");
        let d = ks_vs_exponential(gaps, mean_gap);
        let crit = KS_COEFF_ALPHA_001 / (DRAWS as f64).sqrt();
        assert!(d > 10.0 * crit, "constant gaps passed the exponential check: D = {d}");
    }

    #[test]
    fn uniform_phase_interleaves_threads() {
        let rate = 1_000.0;
        let threads = 4;
        let per_thread = rate / threads as f64;
        let mut all: Vec<u64> = (0..threads)
            .flat_map(|i| {
                let mut a = Arrivals::new(ArrivalKind::Uniform, per_thread, i as f64 * NS_PER_S / rate, SEED);
                (0..5).map(move |_| a.next_offset_ns())
            })
            .collect();
        all.sort_unstable();
        let want: Vec<u64> = (0..20).map(|k| k * 1_000_000).collect();
        assert_eq!(all, want);
    }
}
