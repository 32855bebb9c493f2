//! The Universal Scalability Law on a throughput-vs-workers chart: each
//! scheduler's curve with at least [`MIN_POINTS`] worker counts on distinct
//! cores is fitted ([`crate::stats::usl`]), and the model is drawn dashed
//! from the last count measured out to [`EXTRAPOLATE_TO`] workers, its
//! legend saying it is a model, not a measurement. Points with more
//! workers than the machine's logical CPUs (oversubscribed: workers share
//! cores) are left out of the fit, and the chart's caption says how many.

use super::chart::{Point, Series};
use crate::stats::usl::{fit, Usl, MIN_POINTS};

/// The worker counts the model is drawn at beyond the data.
pub const EXTRAPOLATE_TO: [f64; 2] = [64.0, 128.0];
/// A fitted peak beyond this many workers is not named (the fit says no
/// more than that the curve keeps rising across any machine sold).
const MAX_PEAK_SHOWN: f64 = 10_000.0;
/// Said for an open-loop chart, which gets no fit: its throughput follows
/// the offered load (which the workloads scale with the workers), not the
/// scheduler's capacity.
pub const OPEN_LOOP_NOTE: &str =
    "no USL fit: open-loop throughput follows the offered load, not capacity (read the p99 chart)";
/// What a model line's legend says first.
pub const MODEL_LABEL: &str = "USL model, not measured";

/// One fit, for the chart's caption and `plot`'s output.
#[derive(Debug, Clone)]
pub struct Fit {
    /// The scheduler.
    pub scheduler: String,
    /// The law.
    pub usl: Usl,
    /// Worker counts fitted.
    pub points: usize,
    /// Points left out as oversubscribed.
    pub excluded: usize,
}

impl Fit {
    /// `σ=… κ=… R²=… peak …`, as printed and in the legend.
    pub fn describe(&self) -> String {
        let u = &self.usl;
        let peak = match u.peak_workers() {
            // σ ≥ 1 (or a peak below one worker): every added worker costs more
            // than it brings, so the model's best is its first worker.
            _ if u.sigma >= 1.0 => "no peak past 1 worker (σ ≥ 1: the model falls with every worker added)".to_string(),
            Some(n) if n < 1.0 => format!("no peak past 1 worker (the model's peak is at {n:.2} workers)"),
            Some(n) if n > MAX_PEAK_SHOWN => format!("no peak within {MAX_PEAK_SHOWN:.0} workers"),
            Some(n) => format!("peak {} at {:.0} workers", crate::output::units::format_count(u.throughput(n)), n),
            None => format!("no peak (κ = 0; limit λ/σ = {})", limit(u)),
        };
        format!("σ={:.4} κ={:.6} R²={:.4} {peak}", u.sigma, u.kappa, u.r_squared)
    }
}

impl Fit {
    /// How many worker counts were fitted and left out.
    pub fn counts(&self) -> String {
        let mut text = format!("{} worker counts fitted", self.points);
        if self.excluded > 0 {
            text.push_str(&format!(", {} oversubscribed left out", self.excluded));
        }
        text.push_str("; a model, not a measurement");
        text
    }
}

fn limit(u: &Usl) -> String {
    if u.sigma > 0.0 {
        crate::output::units::format_count(u.lambda / u.sigma)
    } else {
        "none (linear)".to_string()
    }
}

/// The model series for `measured` (one scheduler's throughput points),
/// with its fit; `None` when too few points on distinct cores remain.
/// `logical_cpus`: the machine's, when known (points above it are left
/// out; when unknown, none are).
pub fn model(measured: &Series, logical_cpus: Option<usize>) -> Option<(Series, Fit)> {
    let on_cores = |p: &&Point| logical_cpus.is_none_or(|c| p.x <= c as f64);
    let used: Vec<(f64, f64)> = measured.points.iter().filter(on_cores).map(|p| (p.x, p.y)).collect();
    let excluded = measured.points.len() - used.len();
    if used.len() < MIN_POINTS {
        return None;
    }
    let usl = fit(&used)?;
    let last = used.iter().map(|p| p.0).fold(1.0, f64::max);
    let mut xs: Vec<f64> = std::iter::successors(Some(last), |x| Some(x * 2.0)).take_while(|x| *x < 128.0).collect();
    xs.extend(EXTRAPOLATE_TO.iter().filter(|x| **x > last));
    xs.dedup();
    let points = xs
        .into_iter()
        .map(|x| {
            let y = usl.throughput(x);
            Point { x, y, lo: y, hi: y }
        })
        .collect();
    let fit = Fit { scheduler: measured.name.clone(), usl, points: used.len(), excluded };
    let series = Series {
        name: format!("{}: {MODEL_LABEL} (σ {:.3}, κ {:.5})", measured.name, usl.sigma, usl.kappa),
        color_slot: measured.color_slot,
        points,
        dashed: true,
    };
    Some((series, fit))
}

/// The caption's addition for a chart with fits: how many points were
/// left out of them as oversubscribed.
pub fn caption_note(fits: &[Fit], logical_cpus: Option<usize>) -> Option<String> {
    let excluded: usize = fits.iter().map(|f| f.excluded).sum();
    let cpus = logical_cpus?;
    (excluded > 0).then(|| format!("USL fit leaves out {excluded} oversubscribed point(s), workers > {cpus} CPUs"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(law: &Usl, workers: &[f64]) -> Series {
        let points = workers
            .iter()
            .map(|&n| {
                let y = law.throughput(n);
                Point { x: n, y, lo: y, hi: y }
            })
            .collect();
        Series { name: "steal-half".into(), color_slot: 3, points, dashed: false }
    }

    #[test]
    fn the_model_runs_dashed_to_128_and_skips_oversubscribed_points() {
        let law = Usl { lambda: 1000.0, sigma: 0.05, kappa: 0.002, r_squared: 1.0 };
        // 16 workers on an 8-CPU machine: left out.
        let (s, fit) = model(&series(&law, &[1.0, 2.0, 4.0, 8.0, 16.0]), Some(8)).unwrap();
        assert!(s.dashed && s.color_slot == 3);
        assert!(s.name.contains(MODEL_LABEL) && s.name.contains("σ 0.050"), "{}", s.name);
        assert!(fit.describe().contains("σ=0.0500") && fit.describe().contains("peak"), "{}", fit.describe());
        assert_eq!((fit.points, fit.excluded), (4, 1));
        let xs: Vec<f64> = s.points.iter().map(|p| p.x).collect();
        assert_eq!(xs, [8.0, 16.0, 32.0, 64.0, 128.0]);
        assert!((s.points[4].y - law.throughput(128.0)).abs() < 1e-6 * law.throughput(128.0));
        let note = caption_note(&[fit.clone()], Some(8)).unwrap();
        assert!(note.contains("1 oversubscribed") && note.contains("workers > 8 CPUs"), "{note}");
        // A peak below one worker, or beyond any machine, is said in words.
        let falling = Fit { usl: Usl { lambda: 1000.0, sigma: 1.8, kappa: 0.0, r_squared: 0.9 }, ..fit.clone() };
        assert!(falling.describe().contains("no peak past 1 worker (σ ≥ 1"), "{}", falling.describe());
        let below = Fit { usl: Usl { lambda: 1000.0, sigma: 0.9, kappa: 0.5, r_squared: 0.9 }, ..fit.clone() };
        assert!(
            below.describe().contains("no peak past 1 worker (the model's peak is at 0.45"),
            "{}",
            below.describe()
        );
        let far = Fit { usl: Usl { lambda: 1000.0, sigma: 0.001, kappa: 1e-12, r_squared: 1.0 }, ..fit.clone() };
        assert!(far.describe().contains("no peak within 10000 workers"), "{}", far.describe());
        // Three points on distinct cores: no fit.
        assert!(model(&series(&law, &[1.0, 2.0, 4.0, 16.0]), Some(8)).is_none());
    }
}
