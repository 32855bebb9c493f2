//! A paired test of one latency quantile of pooled histograms: the runs of
//! each side of an A/B invocation (`run --base-bin --hdr-dir`) added into
//! one distribution per side, and a sign-flip permutation test over the
//! pairs.
//!
//! Why: an open-loop run of 1 s answers a few thousand requests, so its p99
//! is one of its 20 or so slowest answers, and whether a stall of a shared
//! VM landed in that run sets it. The paired t-test on per-run p99s then
//! sees pairs spread by a factor of 2 or more and cannot find a 20 %
//! change (results/gate-power/). Added over all runs, the p99 is one of a
//! few hundred answers, and one stalled run moves it a little instead of
//! setting it.
//!
//! The statistic is T = ln(Q(current) / Q(base)), Q the quantile of a
//! side's added histogram, tested by [`super::signflip`]: whole runs swap
//! sides, so everything correlated inside a run (a stall delays many
//! requests at once, a run's placement on the cores holds for all its
//! requests) moves with them and is part of the null.
//!
//! The quantile of an added histogram lies between the smallest and the
//! largest of the runs' own quantiles (below the smallest, every run has
//! less than q of its answers, so the sum does too; at the largest, every
//! run has at least q), so only the values in that range are kept, and
//! each split's quantile is a binary search over them.

use super::signflip::sign_flip;

/// One run's latencies: `(value, count)` with values ascending and counts
/// above 0.
pub type Run = [(f64, u64)];

/// The outcome of [`pooled_quantile_test`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PooledTest {
    /// The quantile of the base side's added runs.
    pub base: f64,
    /// The quantile of the current side's added runs.
    pub current: f64,
    /// current / base − 1.
    pub change: f64,
    /// Two-sided p-value of the sign-flip test.
    pub p: f64,
    /// The smallest change (a fraction) the test finds at `alpha` with
    /// [`POWER`], from the spread of T over the splits, in a normal
    /// approximation.
    pub detectable: f64,
}

/// The runs' latencies between the lowest and highest per-run quantile, as
/// cumulative counts on the common values.
struct Grid {
    values: Vec<f64>,
    /// Per run (base of pair i at 2i, current at 2i + 1): answers at or
    /// below each value.
    cum: Vec<Vec<u64>>,
    totals: Vec<u64>,
}

fn run_quantile(run: &Run, q: f64) -> f64 {
    let total: u64 = run.iter().map(|&(_, c)| c).sum();
    let target = q * total as f64;
    let mut seen = 0u64;
    for &(v, c) in run {
        seen += c;
        if seen as f64 >= target {
            return v;
        }
    }
    run.last().map_or(0.0, |&(v, _)| v)
}

impl Grid {
    fn new(runs: &[&Run], q: f64) -> Grid {
        let per_run: Vec<f64> = runs.iter().map(|r| run_quantile(r, q)).collect();
        let lo = per_run.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per_run.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut values: Vec<f64> =
            runs.iter().flat_map(|r| r.iter().map(|&(v, _)| v)).filter(|v| (lo..=hi).contains(v)).collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        let cum = runs
            .iter()
            .map(|run| {
                let mut below: u64 = run.iter().filter(|&&(v, _)| v < lo).map(|&(_, c)| c).sum();
                let mut next = run.iter().filter(|&&(v, _)| v >= lo).peekable();
                values
                    .iter()
                    .map(|&grid| {
                        while let Some(&&(v, c)) = next.peek() {
                            if v > grid {
                                break;
                            }
                            below += c;
                            next.next();
                        }
                        below
                    })
                    .collect()
            })
            .collect();
        let totals = runs.iter().map(|r| r.iter().map(|&(_, c)| c).sum()).collect();
        Grid { values, cum, totals }
    }

    /// The quantile's index of the runs `chosen` yields, added.
    fn quantile_index(&self, chosen: impl Iterator<Item = usize> + Clone, q: f64) -> usize {
        let total: u64 = chosen.clone().map(|r| self.totals[r]).sum();
        let target = q * total as f64;
        let (mut lo, mut hi) = (0, self.values.len() - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let at: u64 = chosen.clone().map(|r| self.cum[r][mid]).sum();
            if at as f64 >= target {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    /// T for the split where pair i's runs are swapped when `swapped[i]`:
    /// (T, base index, current index).
    fn split(&self, swapped: &[bool], q: f64) -> (f64, usize, usize) {
        let base = swapped.iter().enumerate().map(|(i, &s)| 2 * i + usize::from(s));
        let current = swapped.iter().enumerate().map(|(i, &s)| 2 * i + usize::from(!s));
        let (b, c) = (self.quantile_index(base, q), self.quantile_index(current, q));
        (self.values[c].ln() - self.values[b].ln(), b, c)
    }
}

/// Tests whether quantile `q` (0 < q < 1) of the current runs, added,
/// differs from the base runs', added, over `pairs` of (base, current)
/// runs. `seed` fixes the random splits, so the same input always gets the
/// same p-value. `None` with fewer than 2 pairs, an empty run, or a value
/// that is not positive and finite.
pub fn pooled_quantile_test(pairs: &[(&Run, &Run)], q: f64, alpha: f64, seed: u64) -> Option<PooledTest> {
    let runs: Vec<&Run> = pairs.iter().flat_map(|&(b, c)| [b, c]).collect();
    let usable = |r: &Run| !r.is_empty() && r.iter().all(|&(v, c)| v.is_finite() && v > 0.0 && c > 0);
    if pairs.len() < 2 || !(q > 0.0 && q < 1.0) || !runs.iter().all(|r| usable(r)) {
        return None;
    }
    let grid = Grid::new(&runs, q);
    let flip = sign_flip(pairs.len(), seed, |swapped| grid.split(swapped, q).0);
    let (_, b, c) = grid.split(&vec![false; pairs.len()], q);
    let (base, current) = (grid.values[b], grid.values[c]);
    Some(PooledTest { base, current, change: current / base - 1.0, p: flip.p, detectable: flip.detectable(alpha) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of `n` answers at `value` plus `slow` answers at 10 × `value`.
    fn run(value: f64, n: u64, slow: u64) -> Vec<(f64, u64)> {
        let mut r = vec![(value, n)];
        if slow > 0 {
            r.push((value * 10.0, slow));
        }
        r
    }

    /// A (base, current) pair of owned runs.
    type Pair = (Vec<(f64, u64)>, Vec<(f64, u64)>);

    fn test(pairs: &[Pair], q: f64) -> Option<PooledTest> {
        let refs: Vec<(&Run, &Run)> = pairs.iter().map(|(b, c)| (b.as_slice(), c.as_slice())).collect();
        pooled_quantile_test(&refs, q, 0.05, 1)
    }

    #[test]
    fn the_pooled_quantile_is_the_added_runs_quantile() {
        // Base: 2 runs of 100 answers, 1 of them at 1000 in one run: added,
        // 1 in 200 is slow, so p99 is 100. Current: 3 of 100 slow in each
        // run, so the added p99 is 1000.
        let pairs = vec![(run(100.0, 99, 1), run(100.0, 97, 3)), (run(100.0, 100, 0), run(100.0, 97, 3))];
        let t = test(&pairs, 0.99).unwrap();
        assert_eq!((t.base, t.current), (100.0, 1000.0));
        assert!((t.change - 9.0).abs() < 1e-12);
    }

    #[test]
    fn every_split_is_tried_up_to_the_exact_limit() {
        // 4 pairs whose current side is always 2x. A split keeps the
        // observed |T| = ln 2 unless it swaps exactly 2 pairs: with 3 runs
        // of one value and 1 of the other in a side, that side's median is
        // still the value of the 3. So 1 + 4 + 4 + 1 of the 16 splits reach
        // it: p = 10/16, where the per-run t-test would call it certain.
        let pairs: Vec<_> = (0..4).map(|_| (run(100.0, 50, 0), run(200.0, 50, 0))).collect();
        let t = test(&pairs, 0.5).unwrap();
        assert_eq!(t.p, 10.0 / 16.0);
        assert_eq!(t.change, 1.0);
        // Runs of distinct values (base 100..=103, current twice that):
        // every swap brings a side's median nearer the other's, so only
        // the observed split and its mirror reach |T|: p = 2/16.
        let distinct: Vec<_> =
            (0..4).map(|i| (run(100.0 + f64::from(i), 1, 0), run(2.0 * (100.0 + f64::from(i)), 1, 0))).collect();
        let t = test(&distinct, 0.5).unwrap();
        assert_eq!((t.base, t.current), (101.0, 202.0));
        assert_eq!(t.p, 2.0 / 16.0);
    }

    #[test]
    fn identical_sides_give_p_one_and_no_change() {
        let pairs: Vec<_> = (0..5).map(|i| (run(100.0 + i as f64, 50, 1), run(100.0 + i as f64, 50, 1))).collect();
        let t = test(&pairs, 0.99).unwrap();
        assert_eq!(t.p, 1.0);
        assert_eq!(t.change, 0.0);
    }

    #[test]
    fn random_splits_resolve_a_consistent_change_and_repeat_with_the_seed() {
        // 20 pairs, current 20 % slower in each: only 2 of 2^20 splits reach
        // the observed |T|, so the draws end without 20 hits and p is
        // (1 + hits) / 100,000.
        let pairs: Vec<_> =
            (0..20).map(|i| (run(100.0 + i as f64, 50, 0), run(120.0 + 1.2 * i as f64, 50, 0))).collect();
        let t = test(&pairs, 0.5).unwrap();
        assert!(t.p <= 3.0 / (1.0 + super::super::signflip::MAX_DRAWS as f64), "p {}", t.p);
        assert!(t.p > 0.0);
        assert_eq!(test(&pairs, 0.5), Some(t));
        assert!(t.detectable > 0.0 && t.detectable < t.change, "{t:?}");
    }

    /// A run of 50 answers spread evenly over `value` × [1, 1.5).
    fn spread(value: f64) -> Vec<(f64, u64)> {
        (0..50).map(|j| (value * (1.0 + f64::from(j) / 100.0), 1)).collect()
    }

    #[test]
    fn a_change_the_pairs_disagree_on_is_not_significant() {
        // Half the pairs say +20 %, half −20 %.
        let pairs: Vec<_> = (0..16)
            .map(|i| {
                let f = if i % 2 == 0 { 1.2 } else { 1.0 / 1.2 };
                (spread(100.0), spread(100.0 * f))
            })
            .collect();
        let t = test(&pairs, 0.5).unwrap();
        assert!(t.p > 0.05, "{t:?}");
    }

    #[test]
    fn unusable_input_gets_no_test() {
        let ok = run(100.0, 10, 0);
        assert_eq!(test(&[(ok.clone(), ok.clone())], 0.5), None, "one pair");
        assert_eq!(test(&[(ok.clone(), vec![]), (ok.clone(), ok.clone())], 0.5), None, "an empty run");
        assert_eq!(test(&[(ok.clone(), vec![(0.0, 3)]), (ok.clone(), ok.clone())], 0.5), None, "a zero value");
        assert_eq!(test(&[(ok.clone(), ok.clone()), (ok.clone(), ok.clone())], 1.0), None, "q = 1");
    }
}
