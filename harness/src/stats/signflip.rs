//! The sign-flip permutation test over the pairs of an A/B invocation,
//! whatever the statistic: under "no change" the two runs of a pair are
//! exchangeable, so swapping them (flipping the pair's sign) gives another
//! equally likely split of the runs into sides. The two-sided p-value is
//! the share of splits whose |T| is at least the observed one: over all
//! 2^n splits exactly up to [`EXACT_MAX_PAIRS`] pairs, else over at most
//! [`MAX_DRAWS`] random splits, stopping once [`STOP_AFTER_HITS`] of them
//! reach the observed |T| (Besag and Clifford's sequential p-value).
//!
//! Two statistics use it: [`super::pooled`] (a quantile of each side's
//! runs added into one histogram) and [`super::shift`] (the typical ratio
//! of a current run's value to a base run's).

use super::changepoint::STOP_AFTER_HITS;
use super::ttest::{t_two_sided_quantile, POWER};
use super::SplitMix64;

/// Up to this many pairs every split is tried (2^14 = 16,384).
pub const EXACT_MAX_PAIRS: usize = 14;
/// Random splits drawn above [`EXACT_MAX_PAIRS`]: p-values resolve down to
/// 1/100,000, well below the Benjamini–Hochberg threshold of one change
/// among a nightly matrix's comparisons (0.05 / 648 = 7.7e-5). Only a
/// cell that differs draws them all; the others stop early.
pub const MAX_DRAWS: usize = 99_999;
/// Random splits drawn before the sequential stop may end the draw, so the
/// spread behind the minimum detectable change rests on enough of them.
const MIN_DRAWS: usize = 999;

/// The fewest pairs `compare` uses a sign-flip test with. Its smallest
/// p-value is 2/2^pairs (the observed split and its mirror), and one
/// change among a nightly's 648 comparisons needs p < 0.05/648 = 7.7e-5 to
/// survive the correction: 2/2^16 = 3.1e-5 can, 2/2^14 = 1.2e-4 cannot.
/// With fewer pairs the per-run t-test, whose p has no floor, judges
/// instead (results/gate-power/pooled/: at 12 pairs the pooled p50 flagged
/// 14 of 54 planted +20 % changes, the t-test 41).
pub const MIN_PAIRS: usize = 16;

/// The outcome of [`sign_flip`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignFlip {
    /// T of the observed split (no pair swapped).
    pub observed: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Root mean square of T over the splits tried: T's spread under the
    /// null, as every split's mirror is also a split.
    pub spread: f64,
}

impl SignFlip {
    /// The smallest change (a fraction) the test finds at `alpha` with
    /// [`POWER`], for a statistic that is the logarithm of a ratio, from
    /// its spread in a normal approximation.
    pub fn detectable(&self, alpha: f64) -> f64 {
        let z = t_two_sided_quantile(alpha, 1e9) + t_two_sided_quantile(2.0 * (1.0 - POWER), 1e9);
        (z * self.spread).exp() - 1.0
    }
}

/// Sets `swapped` to a uniformly random split: one random bit per pair,
/// however many pairs there are.
fn random_split(rng: &mut SplitMix64, swapped: &mut [bool]) {
    for chunk in swapped.chunks_mut(64) {
        let bits = rng.next();
        for (i, s) in chunk.iter_mut().enumerate() {
            *s = (bits >> i) & 1 == 1;
        }
    }
}

/// Tests `stat` over the splits of `n` pairs: `stat(swapped)` is T with
/// pair i's runs exchanged where `swapped[i]`. `seed` fixes the random
/// splits, so the same input always gets the same p-value.
pub fn sign_flip(n: usize, seed: u64, mut stat: impl FnMut(&[bool]) -> f64) -> SignFlip {
    let mut swapped = vec![false; n];
    let observed = stat(&swapped);
    let reach = |t: f64| t.abs() >= observed.abs() - 1e-12;
    let (mut hits, mut draws, mut sum_sq) = (0usize, 0usize, 0.0f64);
    let p = if n <= EXACT_MAX_PAIRS {
        for flips in 0..1u64 << n {
            for (i, s) in swapped.iter_mut().enumerate() {
                *s = (flips >> i) & 1 == 1;
            }
            let t = stat(&swapped);
            hits += usize::from(reach(t));
            sum_sq += t * t;
            draws += 1;
        }
        hits as f64 / draws as f64
    } else {
        let mut rng = SplitMix64(seed);
        let mut stopped = None;
        while draws < MAX_DRAWS {
            random_split(&mut rng, &mut swapped);
            let t = stat(&swapped);
            draws += 1;
            sum_sq += t * t;
            if reach(t) {
                hits += 1;
                if hits >= STOP_AFTER_HITS && draws >= MIN_DRAWS {
                    stopped = Some(hits as f64 / draws as f64);
                    break;
                }
            }
        }
        stopped.unwrap_or((1 + hits) as f64 / (1 + draws) as f64)
    };
    SignFlip { observed, p, spread: (sum_sq / draws as f64).sqrt() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_split_is_tried_up_to_the_exact_limit() {
        // T = the number of swapped pairs minus 2, over 4 pairs: |T| >= 2
        // only with 0 or 4 swapped, 2 of the 16 splits.
        let t = sign_flip(4, 1, |s| s.iter().filter(|&&x| x).count() as f64 - 2.0);
        assert_eq!(t.observed, -2.0);
        assert_eq!(t.p, 2.0 / 16.0);
    }

    #[test]
    fn random_splits_stop_after_enough_hits_and_repeat_with_the_seed() {
        // A statistic every split reaches: the draw stops at the minimum.
        let mut calls = 0;
        let t = sign_flip(20, 7, |_| {
            calls += 1;
            1.0
        });
        assert_eq!(t.p, 1.0);
        assert_eq!(calls, 1 + MIN_DRAWS);
        // One only the observed split (and its mirror) reaches: all draws.
        let first = |s: &[bool]| if s.iter().all(|&x| !x) { 5.0 } else { 0.0 };
        let t = sign_flip(20, 7, first);
        assert!(t.p <= 3.0 / (1.0 + MAX_DRAWS as f64) && t.p > 0.0, "{t:?}");
        assert_eq!(sign_flip(20, 7, first), t);
    }

    #[test]
    fn random_splits_swap_every_pair_however_many() {
        // 130 pairs: more than one word of bits. Over 200 draws each pair
        // is swapped and kept at least once (a miss has chance 2^-199).
        let mut rng = SplitMix64(3);
        let mut swapped = vec![false; 130];
        let (mut seen_swapped, mut seen_kept) = (vec![false; 130], vec![false; 130]);
        for _ in 0..200 {
            random_split(&mut rng, &mut swapped);
            for (i, &s) in swapped.iter().enumerate() {
                seen_swapped[i] |= s;
                seen_kept[i] |= !s;
            }
        }
        assert!(seen_swapped.iter().all(|&x| x) && seen_kept.iter().all(|&x| x));
    }
}
