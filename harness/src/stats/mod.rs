//! The statistics, all pure functions with no I/O. This module holds the
//! figures over the runs of a cell: median, spread, a distribution-free
//! confidence interval of the median from order statistics, and the
//! Mann–Whitney U test that `compare` uses. Beside it: per-cell summaries
//! and the ratio to a reference (`summary`), Welch's t-test and the
//! false-discovery correction (`ttest`), capacity at an objective (`slo`)
//! change points in a nightly series (`changepoint`), the sign-flip
//! test over an A/B invocation's pairs (`signflip`) with its two
//! statistics (`shift`, `pooled`), and the Universal
//! Scalability Law fitted to a scaling curve (`usl`).

pub mod changepoint;
pub mod pooled;
pub mod shift;
pub mod signflip;
pub mod slo;
pub mod summary;
pub mod ttest;
pub mod usl;

use serde::Serialize;

/// Confidence level asked of reported intervals.
pub const CONFIDENCE: f64 = 0.95;
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
    /// Lower end of the order-statistic interval of the median.
    pub ci_lo: f64,
    /// Upper end of the order-statistic interval of the median.
    pub ci_hi: f64,
    /// The interval's true confidence for `n` runs (its exact chance of
    /// covering the population median): at least [`CONFIDENCE`] when
    /// `ci_meets_level`, else the best `n` runs can give (min..max).
    pub ci_confidence: f64,
    /// Whether `n` runs are enough for an interval at [`CONFIDENCE`].
    pub ci_meets_level: bool,
}

impl Summary {
    /// Summarises `values`; `None` when empty or when any is not finite.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let ci = MedianInterval::of_sorted(&sorted, CONFIDENCE);
        Some(Summary {
            n: sorted.len(),
            median: median_sorted(&sorted),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            ci_lo: ci.lo,
            ci_hi: ci.hi,
            ci_confidence: ci.confidence,
            ci_meets_level: ci.meets_level,
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
/// generator, good enough to pick permutations.
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

/// A seed for a generator from a name (FNV-1a of `text`, its offset basis
/// mixed with `base`): each series or cell draws its own numbers, and the
/// same input always gets the same answer.
pub(crate) fn seed_from(base: u64, text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325 ^ base, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// A distribution-free interval of the median: the order statistics
/// `[x(k), x(n+1-k)]` of `n` sorted values. Each value falls below the
/// population median with probability 1/2, so the number below is
/// Binomial(n, 1/2), and the interval misses the median exactly when fewer
/// than k values fall below it or fewer than k above: its coverage is
/// `1 - 2 P(B <= k - 1)` for any continuous distribution (e.g. Hollander &
/// Wolfe, Nonparametric Statistical Methods, ch. 3). The narrowest such
/// interval whose coverage reaches the level is chosen; when even min..max
/// (k = 1) falls short, that is reported with its true, lower confidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MedianInterval {
    /// x(k).
    pub lo: f64,
    /// x(n+1-k).
    pub hi: f64,
    /// The rank k (1-based) of the lower end.
    pub rank: usize,
    /// Exact coverage `1 - 2 P(Binomial(n, 1/2) <= k - 1)`.
    pub confidence: f64,
    /// `confidence >= level`.
    pub meets_level: bool,
}

impl MedianInterval {
    /// The interval of `sorted` (ascending, not empty) at `level`.
    pub fn of_sorted(sorted: &[f64], level: f64) -> MedianInterval {
        let n = sorted.len();
        assert!(n > 0, "interval of an empty sample");
        let mut k = 1;
        while k < n.div_ceil(2) && order_statistic_coverage(n, k + 1) >= level {
            k += 1;
        }
        let confidence = order_statistic_coverage(n, k);
        MedianInterval { lo: sorted[k - 1], hi: sorted[n - k], rank: k, confidence, meets_level: confidence >= level }
    }
}

/// The exact chance that `[x(k), x(n+1-k)]` of `n` values covers the
/// population median: `1 - 2 P(Binomial(n, 1/2) <= k - 1)`; 0 when the
/// interval is empty (k > n + 1 - k).
pub fn order_statistic_coverage(n: usize, k: usize) -> f64 {
    if k == 0 || 2 * k > n + 1 {
        return 0.0;
    }
    // P(B = i) = C(n, i) / 2^n, built in logs so that large n cannot
    // underflow 2^-n.
    let mut ln_pmf = -(n as f64) * std::f64::consts::LN_2;
    let mut tail = 0.0;
    for i in 0..k {
        tail += ln_pmf.exp();
        ln_pmf += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    (1.0 - 2.0 * tail).max(0.0)
}

/// The fewest runs whose min..max interval reaches `level`:
/// the smallest n with `1 - 2^(1-n) >= level`.
pub fn min_runs_for(level: f64) -> usize {
    (1..).find(|&n| order_statistic_coverage(n, 1) >= level).expect("coverage tends to 1")
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
        // 5 runs: only min..max, whose coverage is 1 - 2/32.
        assert_eq!((s.ci_lo, s.ci_hi, s.ci_confidence, s.ci_meets_level), (9.0, 50.0, 0.9375, false));
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
        // One run: an interval of a point that covers the median never
        // (coverage 1 - 2 * 1/2 = 0).
        let one = Summary::of(&[7.0]).unwrap();
        assert_eq!((one.ci_lo, one.ci_hi, one.ci_confidence, one.ci_meets_level), (7.0, 7.0, 0.0, false));
    }

    /// Coverages worked by hand from C(n, i) / 2^n.
    #[test]
    fn order_statistic_coverage_is_exact() {
        // n = 3, min..max: 1 - 2 (1/8) = 0.75 (the old "95%" at 3 runs).
        assert_eq!(order_statistic_coverage(3, 1), 0.75);
        // n = 5: 1 - 2/32; n = 6: 1 - 2/64.
        assert_eq!(order_statistic_coverage(5, 1), 0.9375);
        assert_eq!(order_statistic_coverage(6, 1), 0.968_75);
        // n = 10, k = 2: 1 - 2 (1 + 10) / 1024; k = 3: 1 - 2 (1 + 10 + 45) / 1024.
        assert!((order_statistic_coverage(10, 2) - (1.0 - 22.0 / 1024.0)).abs() < 1e-15);
        assert!((order_statistic_coverage(10, 3) - (1.0 - 112.0 / 1024.0)).abs() < 1e-15);
        // n = 20, k = 6: P(B <= 5) = (1 + 20 + 190 + 1140 + 4845 + 15504) / 2^20.
        assert!((order_statistic_coverage(20, 6) - (1.0 - 2.0 * 21_700.0 / 1_048_576.0)).abs() < 1e-15);
        assert_eq!(order_statistic_coverage(4, 3), 0.0, "x(3)..x(2) is empty");
        // Large n does not underflow: n = 2000, k = 1 is 1 - 2^-1999.
        assert_eq!(order_statistic_coverage(2000, 1), 1.0);
    }

    #[test]
    fn the_interval_is_the_narrowest_that_reaches_the_level() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        // n = 20 at 95%: k = 6 gives 0.9586, k = 7 only 0.8847 -> x(6)..x(15).
        let ci = MedianInterval::of_sorted(&v, 0.95);
        assert_eq!((ci.lo, ci.hi, ci.rank, ci.meets_level), (6.0, 15.0, 6, true));
        // n = 10: k = 2 (0.9785); k = 3 gives 0.8906.
        let ci = MedianInterval::of_sorted(&v[..10], 0.95);
        assert_eq!((ci.lo, ci.hi, ci.rank), (2.0, 9.0, 2));
        // n = 6 is the fewest runs for 95% (min..max, 0.96875); 5 fall short.
        assert_eq!(min_runs_for(0.95), 6);
        let ci = MedianInterval::of_sorted(&v[..6], 0.95);
        assert_eq!((ci.lo, ci.hi, ci.confidence, ci.meets_level), (1.0, 6.0, 0.968_75, true));
        let ci = MedianInterval::of_sorted(&v[..3], 0.95);
        assert_eq!((ci.lo, ci.hi, ci.confidence, ci.meets_level), (1.0, 3.0, 0.75, false));
    }

    /// Two-sided exact p-values, checked against a count of all
    /// C(n1 + n2, n1) assignments of ranks (done by hand / by a separate
    /// enumeration script): p = (assignments with |U - n1 n2 / 2| at least
    /// the observed one) / C(n1 + n2, n1). scipy.stats.mannwhitneyu
    /// (method="exact") gives the same values.
    #[test]
    fn exact_mann_whitney_matches_enumeration() {
        let close = |p: f64, want: f64| assert!((p - want).abs() < 1e-12, "p = {p}, want {want}");
        // Complete separation of 3 vs 3: 2 / C(6,3) = 0.1.
        close(mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap(), 0.1);
        close(min_possible_p(3, 3), 0.1);
        // 3 vs 3 with U = 1: 4 of 20 assignments have U <= 1 or U >= 8.
        close(mann_whitney_p(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0]).unwrap(), 0.2);
        // 5 vs 5 separated: 2 / 252.
        close(mann_whitney_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap(), 2.0 / 252.0);
        // U = 7 of 25: 78 of 252 assignments as extreme (0.3095).
        close(mann_whitney_p(&[1.0, 2.0, 3.0, 6.0, 10.0], &[4.0, 5.0, 7.0, 8.0, 9.0]).unwrap(), 78.0 / 252.0);
        // Interleaved, U = 10 of 25: 174 of 252 (0.6905).
        close(mann_whitney_p(&[1.0, 3.0, 5.0, 7.0, 9.0], &[2.0, 4.0, 6.0, 8.0, 10.0]).unwrap(), 174.0 / 252.0);
        assert!(mann_whitney_p(&[], &[1.0]).is_none());
    }

    /// With ties the normal approximation with tie and continuity
    /// corrections is used. Reference: scipy 1.17.1
    /// `mannwhitneyu(a, b, alternative="two-sided", method="asymptotic",
    /// use_continuity=True)` = 0.04859743569452557 for these samples
    /// (R's `wilcox.test(a, b, exact = FALSE, correct = TRUE)` computes the
    /// same statistic). The tolerance is the erfc approximation's 1.5e-7.
    #[test]
    fn normal_approximation_with_ties_matches_the_reference() {
        let a = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0];
        let b = [2.0, 3.0, 4.0, 4.0, 5.0, 6.0, 6.0, 7.0];
        let p = mann_whitney_p(&a, &b).unwrap();
        assert!((p - 0.048_597_435_694_525_57).abs() < 3e-7, "{p}");
        // Identical samples: |U - mean| = 0, so z = 0 after the continuity
        // correction and p = 1 (to the erfc approximation's accuracy).
        let t: Vec<f64> = (0..40).map(|i| (i / 4) as f64).collect();
        let p = mann_whitney_p(&t, &t).unwrap();
        assert!((p - 1.0).abs() < 3e-7, "{p}");
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
    }
}
