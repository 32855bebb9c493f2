//! A paired test of a per-run value that tolerates outlying runs: the
//! typical ratio of a current run's value to a base run's, over every
//! (base run, current run) combination of one cell, tested by the
//! sign-flip permutation test over the pairs ([`super::signflip`]).
//!
//! The statistic is T = the median over all i, j of ln(c_j) − ln(b_i)
//! (Hodges and Lehmann's two-sample shift, on the logarithms). `compare`
//! judges the latency percentiles of an A/B invocation with it.
//!
//! Why: on a shared VM a run's p99 is set by whether a stall of a few ms
//! landed in it. A pair then mixes a stalled run with a clean one, and the
//! pairs' log ratios spread so far that a 20 % change in p99 is lost (the
//! paired t-test, and the quantile of each side's runs added into one
//! histogram, whose tail the stalled runs fill). Over every base run
//! against every current run, the combinations of clean runs set the
//! median: one stalled run enters n of the n² combinations, however slow
//! it was. The test still swaps whole pairs, so the pairing against the
//! machine's drift is kept in the null. Measured against the added
//! histograms on nine A/B invocations of identical code
//! (results/gate-power/shift/), a +20 % change planted into one cell:
//! p99 flagged in 95 of 162 cells against 61, p50 in 144 against 148.

use super::signflip::sign_flip;

/// The most pairs `compare` gives the shift test, and the nightly's runs
/// per open-loop cell. Each swap costs n² differences: `compare` took about
/// 0.3 s per cell that drew all 99,999 swaps at 20 pairs
/// (results/gate-power/shift/), 0.85 s at 40 and 1.7 s at 64
/// (results/gate-power/length/), so 1,000 pairs would cost minutes.
/// Above it a percentile goes to the added histograms (with `--hdr-dir`)
/// or to the paired t-test.
pub const MAX_PAIRS: usize = 64;

/// The outcome of [`shift_test`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShiftTest {
    /// exp(T) − 1: the typical ratio current/base of two runs, minus 1.
    pub change: f64,
    /// Two-sided p-value of the sign-flip test.
    pub p: f64,
    /// The smallest change (a fraction) the test finds at `alpha` with
    /// 80 % power, from the spread of T over the splits.
    pub detectable: f64,
}

/// The median of all differences `current[j] − base[i]`, using `buf`.
fn median_difference(base: &[f64], current: &[f64], buf: &mut Vec<f64>) -> f64 {
    buf.clear();
    buf.extend(current.iter().flat_map(|&c| base.iter().map(move |&b| c - b)));
    let (mid, odd) = (buf.len() / 2, buf.len() % 2 == 1);
    let (below, &mut upper, _) = buf.select_nth_unstable_by(mid, f64::total_cmp);
    if odd {
        return upper;
    }
    let lower = below.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lower + upper) / 2.0
}

/// Tests whether the current runs' values differ from the base runs' over
/// `pairs` of (base, current) values of one metric. `seed` fixes the random
/// splits. `None` with fewer than 2 pairs or a value that is not positive
/// and finite.
pub fn shift_test(pairs: &[(f64, f64)], alpha: f64, seed: u64) -> Option<ShiftTest> {
    let usable = |v: f64| v.is_finite() && v > 0.0;
    if pairs.len() < 2 || !pairs.iter().all(|&(b, c)| usable(b) && usable(c)) {
        return None;
    }
    let logs: Vec<(f64, f64)> = pairs.iter().map(|&(b, c)| (b.ln(), c.ln())).collect();
    let (mut base, mut current, mut buf) = (Vec::new(), Vec::new(), Vec::new());
    let flip = sign_flip(logs.len(), seed, |swapped| {
        base.clear();
        current.clear();
        for (&(b, c), &s) in logs.iter().zip(swapped) {
            let (b, c) = if s { (c, b) } else { (b, c) };
            base.push(b);
            current.push(c);
        }
        median_difference(&base, &current, &mut buf)
    });
    Some(ShiftTest { change: flip.observed.exp() - 1.0, p: flip.p, detectable: flip.detectable(alpha) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(pairs: &[(f64, f64)]) -> Option<ShiftTest> {
        shift_test(pairs, 0.05, 1)
    }

    #[test]
    fn the_change_is_the_median_ratio_over_all_combinations() {
        // Base 100, 200; current 110, 400. Ratios c/b: 1.1, 0.55, 4, 2:
        // the median of their logarithms is between 1.1 and 2.
        let t = test(&[(100.0, 110.0), (200.0, 400.0)]).unwrap();
        assert!((t.change - (1.1f64 * 2.0).sqrt() + 1.0).abs() < 1e-12, "{t:?}");
        // 3 runs a side: 9 combinations, an odd count.
        let mut buf = Vec::new();
        assert_eq!(median_difference(&[0.0, 1.0, 2.0], &[5.0, 6.0, 7.0], &mut buf), 5.0);
    }

    #[test]
    fn one_stalled_run_does_not_set_the_change() {
        // 20 pairs of p99s: current 20 % above base in every pair, but one
        // current run stalled at 50x. The median over all combinations
        // stays near +20 % and the test finds it.
        let mut pairs: Vec<(f64, f64)> =
            (0..20).map(|i| (400.0 + 5.0 * f64::from(i), 480.0 + 6.0 * f64::from(i))).collect();
        pairs[7].1 = 20_000.0;
        let t = test(&pairs).unwrap();
        assert!((t.change - 0.2).abs() < 0.03, "{t:?}");
        assert!(t.p < 0.001, "{t:?}");
        assert!(t.detectable > 0.0 && t.detectable < t.change, "{t:?}");
        assert_eq!(test(&pairs), Some(t), "the same input, the same p");
    }

    #[test]
    fn runs_in_two_states_still_give_the_change() {
        // Each run is in one of two states (about 100 or about 200, ±3 %),
        // at random between the sides of a pair; current is 20 % slower
        // in either state. The pairs' own ratios spread from 0.6 to 2.4,
        // but runs in the same state compare at about 1.2.
        let run = |i: u32, salt: u32| {
            let state = if (i * 7 + salt * 3) % 5 < 2 { 200.0 } else { 100.0 };
            state * (1.0 + 0.01 * f64::from((i * 13 + salt * 5) % 7) - 0.03)
        };
        let pairs: Vec<(f64, f64)> = (0..20).map(|i| (run(i, 0), 1.2 * run(i, 1))).collect();
        let t = test(&pairs).unwrap();
        assert!((t.change - 0.2).abs() < 0.03, "{t:?}");
        // Whether it is significant depends on how the states fall: the
        // splits move runs of either state between the sides, and the
        // null spreads with them.
        assert!(t.detectable > 0.2, "{t:?}");
    }

    #[test]
    fn identical_sides_give_no_change_and_p_one() {
        let pairs: Vec<(f64, f64)> = (0..16).map(|i| (100.0 + f64::from(i), 100.0 + f64::from(i))).collect();
        let t = test(&pairs).unwrap();
        assert_eq!(t.change, 0.0);
        assert_eq!(t.p, 1.0);
    }

    #[test]
    fn a_change_the_pairs_disagree_on_is_not_significant() {
        // Half the pairs say +20 %, half −20 %.
        let pairs: Vec<(f64, f64)> = (0..16).map(|i| (100.0, if i % 2 == 0 { 120.0 } else { 100.0 / 1.2 })).collect();
        assert!(test(&pairs).unwrap().p > 0.05);
    }

    #[test]
    fn unusable_input_gets_no_test() {
        assert_eq!(test(&[(1.0, 2.0)]), None, "one pair");
        assert_eq!(test(&[(1.0, 2.0), (0.0, 2.0)]), None, "a zero value");
        assert_eq!(test(&[(1.0, 2.0), (f64::NAN, 2.0)]), None, "not finite");
    }
}
