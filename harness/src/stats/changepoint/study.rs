//! The sensitivity table of the change-point tests on short series,
//! reproduced by `cargo test --release -p wsbench sensitivity_table --
//! --ignored --nocapture` (about a minute; `results/changepoints/README.md`
//! holds its output). Ignored because it is a measurement, not a property:
//! it prints a table (to stderr: the stdout guard test allows no print! in src) and asserts nothing but that it ran.
//!
//! The series: nights around 1000 with independent relative noise of sd
//! 2 %, 3 % or 5 % (Gaussian; a heavy-tailed Student t with 3 degrees of
//! freedom, scaled to the same sd, for the false alarms), and a clean
//! +15 % step after 5 of 10 nights (5 + 5) or after 9 of 12 (9 + 3). A step
//! counts as found when a change point lies within one night of it.

use super::tests::series;
use super::{detect, normal, Method, Search};
use crate::stats::SplitMix64;

/// The tests compared: a label and the settings.
fn contenders() -> Vec<(&'static str, Search)> {
    let e = Search::of(Method::EDivisive);
    let m = Search::default();
    vec![
        ("e-divisive, 199 shuffles, p < 0.01 (before)", Search { permutations: 199, ..e }),
        ("e-divisive, adaptive ≤ 4,999 shuffles, p < 0.01", e),
        ("mean-shift, adaptive ≤ 19,999 draws, p < 0.01", Search { p_value: 0.01, ..m }),
        ("mean-shift, adaptive ≤ 19,999 draws, p < 0.001 (default)", m),
    ]
}

/// Series (of `count`, seeded from `base`) with a change point within one
/// night of `step_at`, or with any change point when there is no step.
fn hits(settings: &Search, base: u64, count: u64, make: impl Fn(u64) -> Vec<f64>, step_at: Option<usize>) -> usize {
    (0..count)
        .filter(|&seed| {
            let found = detect(&make(base + seed), &Search { seed, ..*settings });
            match step_at {
                Some(at) => found.iter().any(|c| c.index.abs_diff(at) <= 1),
                None => !found.is_empty(),
            }
        })
        .count()
}

/// `n` nights around 1000 with Student-t(3) noise of relative sd `sd`
/// (t₃ has variance 3, hence the √3).
fn heavy_tailed(seed: u64, n: usize, sd: f64) -> Vec<f64> {
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|_| {
            let z = normal(&mut rng);
            let chi2: f64 = (0..3).map(|_| normal(&mut rng).powi(2)).sum();
            1000.0 * (1.0 + sd * z / (chi2 / 3.0).sqrt() / 3f64.sqrt())
        })
        .collect()
}

#[test]
#[ignore = "a measurement: prints the sensitivity table"]
fn sensitivity_table() {
    let sds = [0.02, 0.03, 0.05];
    eprintln!("| test | 5+5, sd 2 % | 5+5, 3 % | 5+5, 5 % | 9+3, 2 % | 9+3, 3 % | 9+3, 5 % | false, 660 × 10 nights | false, 660 × 12 | false, t₃ noise 660 × 10 | false, t₃ 660 × 12 |");
    eprintln!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (label, settings) in contenders() {
        let mut row = vec![label.to_string()];
        for (n, at) in [(10, 5), (12, 9)] {
            for sd in sds {
                let found = hits(&settings, 50_000, 60, |seed| series(seed, n, sd, at, 0.15), Some(at));
                row.push(format!("{found}/60"));
            }
        }
        for n in [10, 12] {
            let false_alarms = hits(&settings, 60_000, 660, |seed| series(seed, n, 0.03, usize::MAX, 0.0), None);
            row.push(format!("{false_alarms}/660"));
        }
        for n in [10, 12] {
            let false_alarms = hits(&settings, 70_000, 660, |seed| heavy_tailed(seed, n, 0.03), None);
            row.push(format!("{false_alarms}/660"));
        }
        eprintln!("| {} |", row.join(" | "));
    }
}

#[test]
#[ignore = "a measurement: prints the false-alarm rate of the default test"]
fn false_alarm_rate() {
    // The rate the threshold promises, measured on more series than the
    // table's 660, so that it is known to a few tenths of a per mille.
    let count = 20_000;
    for n in [10, 12, 30] {
        let false_alarms =
            hits(&Search::default(), 100_000, count, |seed| series(seed, n, 0.03, usize::MAX, 0.0), None);
        eprintln!("{n} nights: {false_alarms} of {count} Gaussian noise series had a change point");
    }
}
