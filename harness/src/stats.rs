//! Statistics over the runs of a cell: median, spread, a bootstrap
//! confidence interval of the median, and the Mann–Whitney U test that
//! `compare` uses. Pure functions, no I/O.

use serde::Serialize;

/// Bootstrap resamples for a confidence interval of the median.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// Confidence level of reported intervals.
pub const CONFIDENCE: f64 = 0.95;
/// Seed of the bootstrap's generator: intervals are reproducible.
const BOOTSTRAP_SEED: u64 = 0x5EED_B007;
/// Above this many runs per side the exact U distribution is replaced by
/// its normal approximation.
const EXACT_U_MAX_N: usize = 30;

/// Median and spread of one metric over the runs of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Lower end of the bootstrap interval of the median.
    pub ci_lo: f64,
    /// Upper end of the bootstrap interval of the median.
    pub ci_hi: f64,
}

impl Summary {
    /// Summarises `values`; `None` when empty or when any is not finite.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let (ci_lo, ci_hi) = bootstrap_median_ci(&sorted, BOOTSTRAP_RESAMPLES, CONFIDENCE);
        Some(Summary {
            n: sorted.len(),
            median: median_sorted(&sorted),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            ci_lo,
            ci_hi,
        })
    }

    /// (max - min) / median, the relative spread; 0 when the median is 0.
    pub fn relative_spread(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / self.median.abs()
        }
    }
}

/// Median of an already sorted slice (mean of the middle two for even
/// lengths). Panics on an empty slice.
pub fn median_sorted(sorted: &[f64]) -> f64 {
    assert!(!sorted.is_empty(), "median of an empty sample");
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Median of any slice.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    median_sorted(&sorted)
}

/// SplitMix64 (Steele, Lea, Flood, OOPSLA'14): a tiny deterministic
/// generator, good enough to pick bootstrap resamples and permutations.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
    const MIX_1: u64 = 0xBF58_476D_1CE4_E5B9;
    const MIX_2: u64 = 0x94D0_49BB_1331_11EB;

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(Self::GOLDEN_GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(Self::MIX_1);
        z = (z ^ (z >> 27)).wrapping_mul(Self::MIX_2);
        z ^ (z >> 31)
    }

    /// Uniform index below `n` (the modulo bias is irrelevant for n ≪ 2^64).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Percentile bootstrap interval of the median at `confidence`.
pub fn bootstrap_median_ci(values: &[f64], resamples: usize, confidence: f64) -> (f64, f64) {
    if values.len() < 2 {
        let v = values.first().copied().unwrap_or(f64::NAN);
        return (v, v);
    }
    let mut rng = SplitMix64(BOOTSTRAP_SEED);
    let mut medians = Vec::with_capacity(resamples);
    let mut sample = vec![0.0; values.len()];
    for _ in 0..resamples {
        for slot in sample.iter_mut() {
            *slot = values[rng.below(values.len())];
        }
        sample.sort_by(f64::total_cmp);
        medians.push(median_sorted(&sample));
    }
    medians.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| medians[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    (at(tail), at(1.0 - tail))
}

/// Ranks with ties given their average rank (1-based), for `a ++ b`.
fn midranks(a: &[f64], b: &[f64]) -> (Vec<f64>, bool) {
    let mut all: Vec<(f64, usize)> = a.iter().chain(b).copied().zip(0..).collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut ranks = vec![0.0; all.len()];
    let mut ties = false;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        ties |= j > i;
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for item in &all[i..=j] {
            ranks[item.1] = rank;
        }
        i = j + 1;
    }
    (ranks, ties)
}

/// The null distribution of U: `counts[u]` is the number of orderings of
/// `n1 + n2` distinct values in which sample 1's U statistic equals `u`.
fn exact_u_counts(n1: usize, n2: usize) -> Vec<f64> {
    // f[i][j][u]: arrangements of i items of sample 1 and j of sample 2
    // with statistic u; f(i,j,u) = f(i-1,j,u-j) + f(i,j-1,u).
    let max_u = n1 * n2;
    let mut prev: Vec<Vec<f64>> = (0..=n2)
        .map(|_| {
            let mut v = vec![0.0; max_u + 1];
            v[0] = 1.0;
            v
        })
        .collect();
    for _i in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max_u + 1]; n2 + 1];
        cur[0][0] = 1.0;
        for j in 1..=n2 {
            for u in 0..=max_u {
                let from_first = if u >= j { prev[j][u - j] } else { 0.0 };
                cur[j][u] = from_first + cur[j - 1][u];
            }
        }
        prev = cur;
    }
    prev.swap_remove(n2)
}

/// Two-sided p-value of the Mann–Whitney U test (Wilcoxon rank-sum) that
/// `a` and `b` come from the same distribution. Exact for small samples
/// without ties, else the normal approximation with tie and continuity
/// corrections. `None` when either side is empty.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (ranks, ties) = midranks(a, b);
    let rank_sum_a: f64 = ranks[..n1].iter().sum();
    let u_a = rank_sum_a - (n1 * (n1 + 1)) as f64 / 2.0;
    let mean_u = (n1 * n2) as f64 / 2.0;
    if !ties && n1 <= EXACT_U_MAX_N && n2 <= EXACT_U_MAX_N {
        let counts = exact_u_counts(n1, n2);
        let total: f64 = counts.iter().sum();
        let u_small = u_a.min((n1 * n2) as f64 - u_a).round() as usize;
        let tail: f64 = counts[..=u_small].iter().sum();
        return Some((2.0 * tail / total).min(1.0));
    }
    let n = (n1 + n2) as f64;
    let tie_term = tie_correction(&ranks);
    let var_u = (n1 * n2) as f64 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var_u <= 0.0 {
        return Some(1.0);
    }
    let z = ((u_a - mean_u).abs() - 0.5).max(0.0) / var_u.sqrt();
    Some((2.0 * normal_upper_tail(z)).min(1.0))
}

/// Σ (t³ − t) over groups of tied ranks.
fn tie_correction(ranks: &[f64]) -> f64 {
    let mut sorted = ranks.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut sum = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|r| **r == sorted[i]).count();
        let t = j as f64;
        sum += t * t * t - t;
        i += j;
    }
    sum
}

/// P(Z > z) for a standard normal Z, via the complementary error function
/// (Abramowitz & Stegun 7.1.26, absolute error < 1.5e-7).
pub fn normal_upper_tail(z: f64) -> f64 {
    const P: f64 = 0.327_591_1;
    const A: [f64; 5] = [0.254_829_592, -0.284_496_736, 1.421_413_741, -1.453_152_027, 1.061_405_429];
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + P * x);
    let poly = A.iter().rev().fold(0.0, |acc, c| acc * t + c) * t;
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        erfc / 2.0
    } else {
        1.0 - erfc / 2.0
    }
}

/// The smallest two-sided p-value the exact test can give with `n1` and
/// `n2` runs (complete separation): 2 / C(n1 + n2, n1).
pub fn min_possible_p(n1: usize, n2: usize) -> f64 {
    let mut c = 1.0;
    for i in 0..n1 {
        c = c * (n2 + n1 - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_samples() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn summary_spread_and_interval_bracket_the_median() {
        let s = Summary::of(&[10.0, 12.0, 11.0, 50.0, 9.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max), (5, 11.0, 9.0, 50.0));
        assert!(s.ci_lo <= s.median && s.median <= s.ci_hi, "{s:?}");
        assert!(s.ci_lo >= 9.0 && s.ci_hi <= 50.0, "{s:?}");
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
        let one = Summary::of(&[7.0]).unwrap();
        assert_eq!((one.ci_lo, one.ci_hi), (7.0, 7.0));
    }

    #[test]
    fn exact_mann_whitney_matches_the_tables() {
        // Complete separation of 3 vs 3: 2 / C(6,3) = 0.1.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!((p - 0.1).abs() < 1e-12, "{p}");
        assert!((min_possible_p(3, 3) - 0.1).abs() < 1e-12);
        // 5 vs 5 separated: 2 / 252.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // Interleaved samples: not significant.
        let p = mann_whitney_p(&[1.0, 3.0, 5.0, 7.0, 9.0], &[2.0, 4.0, 6.0, 8.0, 10.0]).unwrap();
        assert!(p > 0.5, "{p}");
        assert!(mann_whitney_p(&[], &[1.0]).is_none());
    }

    #[test]
    fn normal_approximation_with_ties() {
        let a: Vec<f64> = (0..40).map(|i| (i / 4) as f64).collect();
        let b: Vec<f64> = (0..40).map(|i| (i / 4 + 5) as f64).collect();
        let p = mann_whitney_p(&a, &b).unwrap();
        assert!(p < 1e-4, "{p}");
        let p_same = mann_whitney_p(&a, &a).unwrap();
        assert!(p_same > 0.9, "{p_same}");
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
    }
}
