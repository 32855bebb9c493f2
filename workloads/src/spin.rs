//! Calibrated CPU work: "spin for S nanoseconds" as a fixed amount of
//! arithmetic, not a clock loop, so that a worker preempted mid-request
//! still owes the same work afterwards (as a real handler would).
//!
//! Calibration runs once per process: time [`CALIBRATION_ITERS`] iterations
//! [`CALIBRATION_TRIALS`] times and keep the fastest trial — a trial that was
//! preempted or migrated is only ever slower, never faster.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Instant;

/// Iterations timed per calibration trial (about a millisecond).
pub const CALIBRATION_ITERS: u64 = 500_000;
/// Calibration trials; the fastest wins.
pub const CALIBRATION_TRIALS: u32 = 9;
/// A multiplier with good mixing (Knuth's MMIX LCG), so the loop cannot
/// be folded into a closed form.
const LCG_MUL: u64 = 6_364_136_223_846_793_005;

static ITERS_PER_NS: OnceLock<f64> = OnceLock::new();

/// `iters` rounds of dependent integer arithmetic.
#[inline(never)]
fn work(iters: u64) -> u64 {
    let mut x = black_box(1u64);
    for i in 0..iters {
        x = black_box(x.wrapping_mul(LCG_MUL).wrapping_add(i));
    }
    x
}

fn calibrate() -> f64 {
    let best_ns = (0..CALIBRATION_TRIALS)
        .map(|_| {
            let t = Instant::now();
            black_box(work(CALIBRATION_ITERS));
            t.elapsed().as_nanos().max(1)
        })
        .min()
        .expect("at least one calibration trial");
    CALIBRATION_ITERS as f64 / best_ns as f64
}

/// Iterations of [`work`] per nanosecond on this machine (calibrated on
/// first use).
pub fn iters_per_ns() -> f64 {
    *ITERS_PER_NS.get_or_init(calibrate)
}

/// Does about `ns` nanoseconds of CPU work (as calibrated).
pub fn spin_ns(ns: u64) {
    if ns == 0 {
        return;
    }
    let iters = (ns as f64 * iters_per_ns()) as u64;
    black_box(work(iters));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_is_positive_and_stable() {
        let r = iters_per_ns();
        assert!(r.is_finite() && r > 0.0, "{r}");
        assert_eq!(iters_per_ns(), r, "calibrated once per process");
    }

    #[test]
    fn more_work_means_more_iterations() {
        // Not timed: the iteration count is what `spin_ns` promises.
        let per_ns = iters_per_ns();
        assert!((1_000_000.0 * per_ns) as u64 > (1_000.0 * per_ns) as u64);
        assert_eq!(work(0), 1);
        assert_ne!(work(10), work(11));
    }
}
