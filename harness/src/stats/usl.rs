//! The Universal Scalability Law (Gunther): throughput on `N` workers is
//!
//! ```text
//! X(N) = λ N / (1 + σ (N − 1) + κ N (N − 1))
//! ```
//!
//! with σ the contention (the serial fraction) and κ the coherence cost
//! (pairwise crosstalk). Fitted to a measured throughput-vs-workers curve,
//! it says where the curve is heading beyond the cores measured — a model,
//! never a measurement, and drawn as one.
//!
//! The fit is least squares on X. For given (σ, κ) the best λ has a closed
//! form, so the search is over (σ, κ) only: a start from the linearised
//! law (when one worker was measured, `N/C(N) − 1 = σ (N−1) + κ N (N−1)`
//! with `C(N) = X(N)/X(1)` is linear in σ and κ), then Nelder–Mead on
//! (σ, κ) ≥ 0.

use serde::Serialize;

/// The fewest distinct worker counts a fit uses (three parameters, and at
/// least one degree of freedom to judge it by).
pub const MIN_POINTS: usize = 4;
/// Nelder–Mead iterations.
const ITERATIONS: usize = 2_000;
/// Stop when the simplex's values differ by less than this (relative).
const TOLERANCE: f64 = 1e-14;
/// Starting point when the linearised law cannot give one.
const DEFAULT_START: (f64, f64) = (0.05, 0.001);

/// A fitted law.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Usl {
    /// Throughput of one worker without contention (ops/s).
    pub lambda: f64,
    /// Contention σ.
    pub sigma: f64,
    /// Coherence κ.
    pub kappa: f64,
    /// Coefficient of determination of the fit on X.
    pub r_squared: f64,
}

impl Usl {
    /// The model's throughput at `n` workers.
    pub fn throughput(&self, n: f64) -> f64 {
        self.lambda * shape(self.sigma, self.kappa, n)
    }

    /// The worker count of the peak, `sqrt((1 − σ) / κ)`; `None` when κ
    /// is 0 (no peak: the curve rises towards λ/σ).
    pub fn peak_workers(&self) -> Option<f64> {
        (self.kappa > 0.0).then(|| ((1.0 - self.sigma).max(0.0) / self.kappa).sqrt())
    }
}

/// `N / (1 + σ (N − 1) + κ N (N − 1))`.
fn shape(sigma: f64, kappa: f64, n: f64) -> f64 {
    n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// The best λ for (σ, κ) and its sum of squared errors.
fn profile(points: &[(f64, f64)], sigma: f64, kappa: f64) -> (f64, f64) {
    let (xg, gg) = points.iter().fold((0.0, 0.0), |(xg, gg), &(n, x)| {
        let g = shape(sigma, kappa, n);
        (xg + x * g, gg + g * g)
    });
    let lambda = if gg > 0.0 { xg / gg } else { 0.0 };
    let sse = points.iter().map(|&(n, x)| (x - lambda * shape(sigma, kappa, n)).powi(2)).sum();
    (lambda, sse)
}

/// The linearised estimate of (σ, κ), when one worker was measured.
fn linear_start(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let x1 = points.iter().find(|p| p.0 == 1.0)?.1;
    if x1 <= 0.0 {
        return None;
    }
    // y = σ a + κ b with a = N − 1, b = N (N − 1): the normal equations.
    let (mut aa, mut ab, mut bb, mut ay, mut by) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(n, x) in points.iter().filter(|p| p.0 > 1.0 && p.1 > 0.0) {
        let (a, b, y) = (n - 1.0, n * (n - 1.0), n / (x / x1) - 1.0);
        (aa, ab, bb, ay, by) = (aa + a * a, ab + a * b, bb + b * b, ay + a * y, by + b * y);
    }
    let det = aa * bb - ab * ab;
    (det.abs() > f64::EPSILON).then(|| (((ay * bb - by * ab) / det).max(0.0), ((aa * by - ab * ay) / det).max(0.0)))
}

/// Nelder–Mead over (σ, κ), both kept at 0 or more (by their absolute
/// values), minimising `f`.
fn nelder_mead(f: impl Fn(f64, f64) -> f64, start: (f64, f64)) -> (f64, f64) {
    let g = |p: [f64; 2]| f(p[0].abs(), p[1].abs());
    let step = |v: f64, d: f64| if v == 0.0 { d } else { v * 0.5 };
    let mut s: [[f64; 2]; 3] =
        [[start.0, start.1], [start.0 + step(start.0, 0.01), start.1], [start.0, start.1 + step(start.1, 1e-4)]];
    let mut v: [f64; 3] = s.map(g);
    for _ in 0..ITERATIONS {
        let mut order = [0, 1, 2];
        order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
        (s, v) = (order.map(|i| s[i]), order.map(|i| v[i]));
        if (v[2] - v[0]).abs() <= TOLERANCE * v[0].abs().max(f64::MIN_POSITIVE) {
            break;
        }
        let c = [(s[0][0] + s[1][0]) / 2.0, (s[0][1] + s[1][1]) / 2.0];
        let at = |t: f64| [c[0] + t * (s[2][0] - c[0]), c[1] + t * (s[2][1] - c[1])];
        let r = at(-1.0);
        let vr = g(r);
        if vr < v[0] {
            let e = at(-2.0);
            let ve = g(e);
            (s[2], v[2]) = if ve < vr { (e, ve) } else { (r, vr) };
        } else if vr < v[1] {
            (s[2], v[2]) = (r, vr);
        } else {
            let k = if vr < v[2] { at(-0.5) } else { at(0.5) };
            let vk = g(k);
            if vk < v[2].min(vr) {
                (s[2], v[2]) = (k, vk);
            } else {
                for i in 1..3 {
                    s[i] = [(s[0][0] + s[i][0]) / 2.0, (s[0][1] + s[i][1]) / 2.0];
                    v[i] = g(s[i]);
                }
            }
        }
    }
    let best = (0..3).min_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap_or(0);
    (s[best][0].abs(), s[best][1].abs())
}

/// Fits the law to `(workers, throughput)` points; `None` with fewer than
/// [`MIN_POINTS`] distinct worker counts or no positive throughput.
pub fn fit(points: &[(f64, f64)]) -> Option<Usl> {
    let mut counts: Vec<f64> = points.iter().map(|p| p.0).collect();
    counts.sort_by(f64::total_cmp);
    counts.dedup();
    if counts.len() < MIN_POINTS || !points.iter().any(|p| p.1 > 0.0) || points.iter().any(|p| p.0 < 1.0) {
        return None;
    }
    let start = linear_start(points).unwrap_or(DEFAULT_START);
    let (sigma, kappa) = nelder_mead(|s, k| profile(points, s, k).1, start);
    let (lambda, sse) = profile(points, sigma, kappa);
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let sst: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let r_squared = if sst > 0.0 { 1.0 - sse / sst } else { 1.0 };
    Some(Usl { lambda, sigma, kappa, r_squared })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(law: &Usl, workers: &[f64]) -> Vec<(f64, f64)> {
        workers.iter().map(|&n| (n, law.throughput(n))).collect()
    }

    const WORKERS: [f64; 6] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];

    #[test]
    fn recovers_known_sigma_and_kappa_from_an_exact_curve() {
        for (sigma, kappa) in [(0.05, 0.002), (0.1, 0.0), (0.0, 0.0005), (0.3, 0.01)] {
            let law = Usl { lambda: 1_000_000.0, sigma, kappa, r_squared: 1.0 };
            let f = fit(&curve(&law, &WORKERS)).unwrap();
            assert!((f.sigma - sigma).abs() < 1e-4, "σ {} vs {sigma}", f.sigma);
            assert!((f.kappa - kappa).abs() < 1e-5, "κ {} vs {kappa}", f.kappa);
            assert!((f.lambda / law.lambda - 1.0).abs() < 1e-3, "λ {}", f.lambda);
            assert!(f.r_squared > 0.999_999, "R² {}", f.r_squared);
        }
    }

    /// Without a one-worker point the start is the default one; the fit
    /// still finds the law.
    #[test]
    fn recovers_the_law_without_one_worker() {
        let law = Usl { lambda: 50_000.0, sigma: 0.08, kappa: 0.001, r_squared: 1.0 };
        let f = fit(&curve(&law, &[2.0, 4.0, 8.0, 16.0, 24.0])).unwrap();
        assert!((f.sigma - 0.08).abs() < 1e-3 && (f.kappa - 0.001).abs() < 1e-4, "{f:?}");
    }

    /// ±2 % deterministic noise: σ and κ within a few times the noise.
    #[test]
    fn tolerates_noise() {
        let law = Usl { lambda: 1_000.0, sigma: 0.05, kappa: 0.002, r_squared: 1.0 };
        let noise = [0.02, -0.02, 0.01, -0.01, 0.02, -0.02];
        let pts: Vec<(f64, f64)> =
            curve(&law, &WORKERS).into_iter().zip(noise).map(|((n, x), e)| (n, x * (1.0 + e))).collect();
        let f = fit(&pts).unwrap();
        assert!((f.sigma - 0.05).abs() < 0.03 && (f.kappa - 0.002).abs() < 0.001, "{f:?}");
        assert!(f.r_squared > 0.99 && f.r_squared < 1.0, "{f:?}");
        let peak = f.peak_workers().unwrap();
        assert!((peak - ((1.0 - 0.05) / 0.002_f64).sqrt()).abs() < 8.0, "peak at {peak}");
    }

    #[test]
    fn peak_is_where_the_curve_turns() {
        let law = Usl { lambda: 1.0, sigma: 0.04, kappa: 0.0024, r_squared: 1.0 };
        let peak = law.peak_workers().unwrap();
        assert!((peak - 20.0).abs() < 1e-9);
        assert!(law.throughput(peak) > law.throughput(peak - 1.0) && law.throughput(peak) > law.throughput(peak + 1.0));
        assert_eq!(Usl { kappa: 0.0, ..law }.peak_workers(), None);
    }

    #[test]
    fn too_few_points_are_no_fit() {
        assert_eq!(fit(&[(1.0, 1.0), (2.0, 1.9), (4.0, 3.5)]), None);
        assert_eq!(fit(&[(1.0, 1.0), (1.0, 1.1), (2.0, 1.9), (4.0, 3.5)]), None, "3 distinct counts");
        assert!(fit(&[(1.0, 1.0), (2.0, 1.9), (4.0, 3.5), (8.0, 6.0)]).is_some());
    }
}
