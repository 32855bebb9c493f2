//! The stealing policies' global-queue fairness interval (fixed or
//! tokio's adaptive one). Their victim RNG is `crate::fast_rand`, the
//! victim order itself `crate::policies::victims`.

use crate::knobs::{GlobalInterval, DEFAULT_GLOBAL_INTERVAL};
use crate::loom::sync::atomic::AtomicU64;
use crate::metrics::Counters;

/// tokio's target time between inject-queue checks: 200 µs.
const TARGET_GLOBAL_QUEUE_INTERVAL_NS: f64 = 200_000.0;
/// Bounds of the adaptive interval (tokio's).
const MIN_ADAPTIVE_INTERVAL: u32 = 2;
const MAX_ADAPTIVE_INTERVAL: u32 = 127;
/// Weight of one poll in the poll-time EWMA (tokio's 0.1); a window of `n`
/// polls weighs `1 - 0.9^n`.
const POLL_TIME_EWMA_ALPHA: f64 = 0.1;
/// The interval moves only when the newly tuned value differs from the
/// current one by more than this (tokio's jitter filter).
const INTERVAL_HYSTERESIS: u32 = 2;

/// How often a worker checks the inject queue before its own.
///
/// The adaptive mode is tokio's tuning, step for step: the EWMA of the poll
/// time starts at `200 µs / 61`, each measured window of `n` polls moves it
/// with weight `1 - 0.9^n`, the interval is `clamp(200 µs / ewma, 2, 127)`,
/// and it only changes when the new value is more than 2 away from the
/// current one. That filter makes the interval sticky: it keeps the value of
/// the first window that moved it far (for example the one measured before
/// remote work arrived) until the poll time changes a lot.
///
/// Checks are counted down rather than taken as `tick % interval == 0`
/// (tokio's form): the interval is a runtime value, and a division per tick
/// is not free; an interval that changes also never skips or doubles a
/// check this way.
pub(crate) struct Fairness {
    adaptive: bool,
    interval: u32,
    /// Ticks left until the next check.
    countdown: u32,
    ewma_poll_ns: f64,
}

impl Fairness {
    pub(crate) fn new(mode: GlobalInterval) -> Fairness {
        let (adaptive, interval) = match mode {
            GlobalInterval::Adaptive => (true, DEFAULT_GLOBAL_INTERVAL),
            GlobalInterval::Fixed(n) => (false, n),
        };
        let ewma_poll_ns = TARGET_GLOBAL_QUEUE_INTERVAL_NS / f64::from(DEFAULT_GLOBAL_INTERVAL);
        Fairness { adaptive, interval, countdown: interval, ewma_poll_ns }
    }

    /// Called once per tick: whether this tick checks the inject queue
    /// first (every `interval`-th call). A due tick also re-tunes the
    /// interval from the current EWMA, as tokio does; tuning only there
    /// (not after every measured window) means a short transitional window
    /// that the EWMA has already forgotten by the next check does not set
    /// the interval. A due tick stores the interval in force into
    /// `reported`, the worker's gauge (`Counters::global_interval`).
    #[inline]
    pub(crate) fn due(&mut self, reported: &AtomicU64) -> bool {
        self.countdown -= 1;
        if self.countdown > 0 {
            return false;
        }
        if self.adaptive {
            self.retune();
        }
        self.countdown = self.interval;
        Counters::set(reported, u64::from(self.interval));
        true
    }

    /// Feeds one measured window: `polls` polls (a task plus the LIFO tasks
    /// it led to counts once, as in tokio) with mean time `mean_poll_ns`.
    pub(crate) fn update(&mut self, mean_poll_ns: f64, polls: u64) {
        if !self.adaptive || polls == 0 || !mean_poll_ns.is_finite() || mean_poll_ns <= 0.0 {
            return;
        }
        let weight = 1.0 - (1.0 - POLL_TIME_EWMA_ALPHA).powf(polls as f64);
        self.ewma_poll_ns = weight * mean_poll_ns + (1.0 - weight) * self.ewma_poll_ns;
    }

    fn retune(&mut self) {
        // `as` saturates: a tiny EWMA gives u32::MAX, then the clamp.
        let tuned = ((TARGET_GLOBAL_QUEUE_INTERVAL_NS / self.ewma_poll_ns) as u32)
            .clamp(MIN_ADAPTIVE_INTERVAL, MAX_ADAPTIVE_INTERVAL);
        if tuned.abs_diff(self.interval) > INTERVAL_HYSTERESIS {
            self.interval = tuned;
        }
    }

    /// The interval in force (tests).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn interval(&self) -> u32 {
        self.interval
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Feeds a window, then runs ticks up to the next due one (which
    /// re-tunes); returns the interval after it, checking that the due tick
    /// reported it.
    fn feed(f: &mut Fairness, mean_poll_ns: f64, polls: u64) -> u32 {
        f.update(mean_poll_ns, polls);
        let gauge = AtomicU64::new(0);
        while !f.due(&gauge) {}
        assert_eq!(gauge.into_inner(), u64::from(f.interval()), "the due tick reports the interval in force");
        f.interval()
    }

    #[test]
    fn adaptive_interval_follows_poll_time_within_bounds() {
        let gauge = AtomicU64::new(0);
        let mut f = Fairness::new(GlobalInterval::Adaptive);
        assert_eq!(f.interval(), DEFAULT_GLOBAL_INTERVAL);
        f.update(10_000.0, 1000); // a long window of 10 µs polls → 20 ticks ...
        assert_eq!(f.interval(), DEFAULT_GLOBAL_INTERVAL, "... but only from the next due tick");
        for _ in 1..DEFAULT_GLOBAL_INTERVAL {
            assert!(!f.due(&gauge));
        }
        assert_eq!(f.interval(), DEFAULT_GLOBAL_INTERVAL);
        assert!(f.due(&gauge), "the 61st tick checks");
        assert_eq!(f.interval(), 20);
        for _ in 1..20 {
            assert!(!f.due(&gauge));
        }
        assert!(f.due(&gauge), "then every 20th");
        assert_eq!(feed(&mut f, 1.0, 1000), MAX_ADAPTIVE_INTERVAL); // tiny polls → clamp high
        assert_eq!(feed(&mut f, 1e9, 1000), MIN_ADAPTIVE_INTERVAL); // huge polls → clamp low
        assert_eq!(feed(&mut f, 1.0, 0), MIN_ADAPTIVE_INTERVAL); // an empty window changes nothing
        let mut fixed = Fairness::new(GlobalInterval::Fixed(7));
        assert_eq!(feed(&mut fixed, 1.0, 1000), 7);
        let checks: Vec<bool> = (0..14).map(|_| fixed.due(&gauge)).collect();
        assert_eq!(checks.iter().filter(|&&c| c).count(), 2);
        assert!(checks[6] && checks[13]);
    }

    #[test]
    fn adaptive_interval_weighs_windows_by_polls_and_ignores_small_moves() {
        let mut f = Fairness::new(GlobalInterval::Adaptive);
        // 40 µs polls → 5.
        assert_eq!(feed(&mut f, 40_000.0, 1000), 5);
        // 30 µs polls would tune to 6: within the jitter filter, no move.
        assert_eq!(feed(&mut f, 30_000.0, 1000), 5);
        // 25 µs → 8: more than 2 away, moves.
        assert_eq!(feed(&mut f, 25_000.0, 1000), 8);
        // One poll weighs 0.1: 0.1 × 1 ms + 0.9 × 25 µs = 122.5 µs → 1.6 → 2.
        assert_eq!(feed(&mut f, 1_000_000.0, 1), MIN_ADAPTIVE_INTERVAL);
    }

    #[test]
    fn a_window_overwritten_before_the_next_check_does_not_tune() {
        let mut f = Fairness::new(GlobalInterval::Adaptive);
        assert_eq!(feed(&mut f, 100.0, 1000), MAX_ADAPTIVE_INTERVAL);
        // A mixed window (→ 7) then a steady one (→ 4) before the next
        // due tick: the interval follows the steady one.
        f.update(28_000.0, 61);
        f.update(44_000.0, 61);
        assert_eq!(feed(&mut f, 44_000.0, 61), 4);
    }
}
