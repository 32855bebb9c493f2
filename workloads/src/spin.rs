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

/// Trials of the re-check at the end of a run ([`drift`]): short, and
/// the fastest of three, because a preempted trial only reads slower.
pub const RECHECK_TRIALS: u32 = 3;
/// A run whose [`drift`] is beyond this (either way) gets a note.
pub const DRIFT_NOTE: f64 = 0.10;

/// Iterations of [`work`] per nanosecond measured now: the fastest of
/// `trials` timings of [`CALIBRATION_ITERS`] iterations. It does not touch
/// the process's calibration.
pub fn measure_iters_per_ns(trials: u32) -> f64 {
    let best_ns = (0..trials.max(1))
        .map(|_| {
            let t = Instant::now();
            black_box(work(CALIBRATION_ITERS));
            t.elapsed().as_nanos().max(1)
        })
        .min()
        .expect("at least one calibration trial");
    CALIBRATION_ITERS as f64 / best_ns as f64
}

fn calibrate() -> f64 {
    measure_iters_per_ns(CALIBRATION_TRIALS)
}

/// How far the CPU has moved since this process calibrated: a fresh
/// measurement ([`RECHECK_TRIALS`]) over the calibrated rate, minus one.
/// `+0.12` means the CPU now does 12 % more iterations per nanosecond, so
/// a nominal S ns of spin now takes S / 1.12; `-0.12`, that it takes
/// longer. Calibrates first if this process has not.
pub fn drift() -> f64 {
    let calibrated = iters_per_ns();
    measure_iters_per_ns(RECHECK_TRIALS) / calibrated - 1.0
}

/// The note a run gets when `drift` is beyond [`DRIFT_NOTE`].
pub fn drift_note(drift: f64) -> Option<String> {
    (drift.abs() > DRIFT_NOTE).then(|| {
        let (way, what) = if drift > 0.0 { ("faster", "shorter") } else { ("slower", "longer") };
        format!(
            "spin calibration drifted {:+.1}% by the end of the run (the CPU ran {way} than when it was calibrated): \
             the calibrated service times were {what} than nominal; the measured service time is in service_p99_us where the workload measures it",
            drift * 100.0
        )
    })
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

    #[test]
    fn drift_is_a_ratio_and_a_note_only_beyond_the_bound() {
        let d = drift();
        assert!(d.is_finite() && d > -1.0, "{d}");
        assert_eq!(drift_note(0.0), None);
        assert_eq!(drift_note(DRIFT_NOTE), None);
        let fast = drift_note(0.25).expect("beyond the bound");
        assert!(fast.contains("+25.0%") && fast.contains("faster") && fast.contains("shorter"), "{fast}");
        let slow = drift_note(-0.5).expect("beyond the bound");
        assert!(slow.contains("-50.0%") && slow.contains("slower"), "{slow}");
    }
}
