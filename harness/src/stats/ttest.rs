//! The second test `compare` uses, and its correction for many
//! comparisons: Welch's t-test on the logarithms of the runs (a test of the
//! ratio of the geometric means, which is how benchmark changes behave:
//! multiplicative, right-skewed), with p-values from Student's t
//! distribution, and the Benjamini–Hochberg adjustment. Pure functions.
//!
//! Why a parametric test: a rank test over 5 + 5 runs cannot go below
//! p = 2/252 ≈ 0.008, so no correction over dozens of comparisons can ever
//! let it through; the t-test's p-value keeps falling as the gap grows
//! relative to the run-to-run spread, so a clear change survives the
//! correction while a marginal one (the chance hits among 80 comparisons)
//! does not.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error < 1e-13).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The continued fraction of the incomplete beta function (modified
/// Lentz), converging for x < (a + 1) / (a + b + 2).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    const MAX_TERMS: usize = 500;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=MAX_TERMS {
        let m = m as f64;
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        for coefficient in [even, odd] {
            d = 1.0 + coefficient * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + coefficient / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b).
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom.
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    if t.is_infinite() {
        return 0.0;
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

fn mean_and_variance(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// Two-sided p-value of Welch's t-test on ln(values): do `a` and `b`
/// differ in their geometric means? `None` with fewer than 2 values on a
/// side or any value that is not positive and finite. When neither side
/// varies at all, 1 for equal sides and 0 otherwise.
pub fn welch_log_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.iter().chain(b).any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
    welch_p(&la, &lb)
}

/// Two-sided p-value of Welch's t-test on the values as they are (for
/// figures that can be 0, whose logarithm has no value). `None` with fewer
/// than 2 values on a side or a value that is not finite. When neither
/// side varies at all, 1 for equal sides and 0 otherwise.
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_and_variance(a), mean_and_variance(b));
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se2 = sa + sb;
    if se2 == 0.0 {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (mb - ma) / se2.sqrt();
    // Welch–Satterthwaite degrees of freedom.
    let df = se2 * se2 / (sa * sa / (a.len() - 1) as f64 + sb * sb / (b.len() - 1) as f64);
    Some(student_t_two_sided(t, df))
}

/// Two-sided p-value of the one-sample t-test of mean 0 on `d` (the
/// differences, or log ratios, of pairs). `None` with fewer than 2 values
/// or one that is not finite. Values that do not vary at all give p = 1
/// when they are all 0 and p = 0 otherwise.
pub fn one_sample_t_p(d: &[f64]) -> Option<f64> {
    if d.len() < 2 || d.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = d.len() as f64;
    let (mean, var) = mean_and_variance(d);
    if var == 0.0 {
        return Some(if mean == 0.0 { 1.0 } else { 0.0 });
    }
    Some(student_t_two_sided(mean / (var / n).sqrt(), n - 1.0))
}

/// The t with P(|T| ≥ t) = `p` for Student's t with `df` degrees of
/// freedom (bisection on [`student_t_two_sided`]).
pub fn t_two_sided_quantile(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while student_t_two_sided(hi, df) > p && hi < 1e9 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if student_t_two_sided(mid, df) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The power the minimum detectable change is stated at.
pub const POWER: f64 = 0.8;

/// The smallest true shift of the mean that a two-sided t-test at `alpha`
/// finds with probability [`POWER`], for a standard error `se` on `df`
/// degrees of freedom: (t₁₋α/₂ + t_power) · se.
pub fn detectable_shift(se: f64, df: f64, alpha: f64) -> f64 {
    (t_two_sided_quantile(alpha, df) + t_two_sided_quantile(2.0 * (1.0 - POWER), df)) * se
}

/// The minimum detectable change (a fraction: 0.2 = 20 %) of the paired
/// one-sample t-test on the log ratios `d`, at `alpha` with [`POWER`];
/// `None` with fewer than 2 finite values.
pub fn paired_detectable(d: &[f64], alpha: f64) -> Option<f64> {
    if d.len() < 2 || d.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = d.len() as f64;
    let (_, var) = mean_and_variance(d);
    Some(detectable_shift((var / n).sqrt(), n - 1.0, alpha).exp() - 1.0)
}

/// The minimum detectable change of Welch's t-test on ln(values) (as
/// [`welch_log_p`]), at `alpha` with [`POWER`]; `None` as there.
pub fn welch_log_detectable(a: &[f64], b: &[f64], alpha: f64) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
    let ((_, va), (_, vb)) = (mean_and_variance(&la), mean_and_variance(&lb));
    let (sa, sb) = (va / la.len() as f64, vb / lb.len() as f64);
    let se2 = sa + sb;
    if se2 == 0.0 {
        return Some(0.0);
    }
    let df = se2 * se2 / (sa * sa / (la.len() - 1) as f64 + sb * sb / (lb.len() - 1) as f64);
    Some(detectable_shift(se2.sqrt(), df, alpha).exp() - 1.0)
}

/// Benjamini–Hochberg adjusted p-values (q-values), in the input order: a
/// comparison is a discovery at false-discovery rate α when its q < α.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut q = vec![1.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        q[i] = running.min(1.0);
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_and_beta_known_values() {
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
        // I_x(1, 1) = x; I_x(a, 1) = x^a.
        assert!((incomplete_beta(1.0, 1.0, 0.3) - 0.3).abs() < 1e-12);
        assert!((incomplete_beta(3.0, 1.0, 0.5) - 0.125).abs() < 1e-12);
    }

    #[test]
    fn student_t_matches_the_tables() {
        // Two-sided 5 % critical values: df 1, 4, 10; and the normal limit.
        for (t, df) in [(12.706_205, 1.0), (2.776_445, 4.0), (2.228_139, 10.0), (1.959_964, 1e7)] {
            let p = student_t_two_sided(t, df);
            assert!((p - 0.05).abs() < 1e-5, "t {t} df {df}: {p}");
        }
        // Cauchy: P(|T| > 1) = 1/2 exactly.
        assert!((student_t_two_sided(1.0, 1.0) - 0.5).abs() < 1e-12);
        assert_eq!(student_t_two_sided(0.0, 8.0), 1.0);
    }

    #[test]
    fn welch_on_logs_by_hand() {
        // ln values 0, ln 2 vs ln 4, ln 8 (times ln 2): 0,1 vs 2,3. Means 0.5
        // and 2.5, variances 0.5 each (× ln²2): se² = 0.5 ln²2, t = 2/√0.5
        // = 2√2 whatever the ln 2 scale, df = 2.
        let p = welch_log_p(&[1.0, 2.0], &[4.0, 8.0]).unwrap();
        let expected = student_t_two_sided(2.0 * 2f64.sqrt(), 2.0);
        assert!((p - expected).abs() < 1e-12, "{p} {expected}");
        // For df = 2, P(|T| > t) = 1 − t / √(t² + 2): 1 − 2√2/√10.
        assert!((expected - (1.0 - 2.0 * 2f64.sqrt() / 10f64.sqrt())).abs() < 1e-12);
        assert_eq!(welch_log_p(&[3.0, 3.0], &[3.0, 3.0]), Some(1.0));
        assert_eq!(welch_log_p(&[3.0, 3.0], &[4.0, 4.0]), Some(0.0));
        assert_eq!(welch_log_p(&[3.0], &[4.0, 4.0]), None);
        assert_eq!(welch_log_p(&[3.0, 0.0], &[4.0, 4.0]), None);
    }

    #[test]
    fn benjamini_hochberg_by_hand() {
        // Sorted 0.01, 0.03, 0.04, 0.2 of m = 4: ×4/1, ×4/2, ×4/3, ×4/4 =
        // 0.04, 0.06, 0.0533, 0.2; made monotone from the top: 0.04,
        // 0.0533, 0.0533, 0.2.
        let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.2]);
        let expected = [0.04, 0.04 * 4.0 / 3.0, 0.04 * 4.0 / 3.0, 0.2];
        for (got, want) in q.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{q:?}");
        }
        assert!(benjamini_hochberg(&[]).is_empty());
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 5 % with 4 df: 2.776; with 1e6 df: 1.960 (normal).
        assert!((t_two_sided_quantile(0.05, 4.0) - 2.776).abs() < 1e-3);
        assert!((t_two_sided_quantile(0.05, 1e6) - 1.960).abs() < 1e-3);
        // One-sided 80 % (two-sided 0.4) with 9 df: 0.883.
        assert!((t_two_sided_quantile(0.4, 9.0) - 0.883).abs() < 1e-3);
    }

    #[test]
    fn the_detectable_change_grows_with_spread_and_shrinks_with_pairs() {
        // 10 pairs with log ratios of sd 0.1: (t(0.05, 9) + t(0.4, 9)) * 0.1 / sqrt(10)
        // = (2.262 + 0.883) * 0.0316 = 0.0995 in log units: +10.5 %.
        let d: Vec<f64> = (0..10).map(|i| (if i % 2 == 0 { 0.1 } else { -0.1 }) * (9.0_f64 / 10.0).sqrt()).collect();
        let mdc = paired_detectable(&d, 0.05).unwrap();
        assert!((mdc - 0.1046).abs() < 2e-3, "{mdc}");
        let wide: Vec<f64> = d.iter().map(|v| v * 3.0).collect();
        assert!(paired_detectable(&wide, 0.05).unwrap() > 2.5 * mdc);
        let more: Vec<f64> = d.iter().chain(&d).copied().collect();
        assert!(paired_detectable(&more, 0.05).unwrap() < mdc);
        assert_eq!(paired_detectable(&[0.1], 0.05), None);
        // Welch on equal-spread sides of 10: about sqrt(2) times the paired figure's shift.
        let a: Vec<f64> = d.iter().map(|v| v.exp()).collect();
        let w = welch_log_detectable(&a, &a, 0.05).unwrap();
        assert!(w > mdc && w < 0.2, "{w}");
    }
}
