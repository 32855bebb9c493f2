//! Shared helpers of the stealing policies: the global-queue fairness
//! interval (fixed or tokio's adaptive one) and a tiny per-worker RNG for
//! victim selection.

use crate::knobs::{GlobalInterval, Victim, DEFAULT_GLOBAL_INTERVAL};

/// tokio's target time between inject-queue checks: 200 µs.
const TARGET_GLOBAL_QUEUE_INTERVAL_NS: f64 = 200_000.0;
/// Bounds of the adaptive interval (tokio's).
const MIN_ADAPTIVE_INTERVAL: u32 = 2;
const MAX_ADAPTIVE_INTERVAL: u32 = 127;
/// Weight of the newest sample in the poll-time EWMA (tokio's 0.1).
const POLL_TIME_EWMA_ALPHA: f64 = 0.1;

/// How often a worker checks the inject queue before its own.
pub(crate) struct Fairness {
    adaptive: bool,
    interval: u32,
    ewma_poll_ns: f64,
}

impl Fairness {
    pub(crate) fn new(mode: GlobalInterval) -> Fairness {
        let (adaptive, interval) = match mode {
            GlobalInterval::Adaptive => (true, DEFAULT_GLOBAL_INTERVAL),
            GlobalInterval::Fixed(n) => (false, n),
        };
        Fairness { adaptive, interval, ewma_poll_ns: 0.0 }
    }

    /// Whether tick `tick` checks the inject queue first.
    #[inline]
    pub(crate) fn due(&self, tick: u32) -> bool {
        tick.is_multiple_of(self.interval)
    }

    /// Feeds the mean poll time of the last batch.
    pub(crate) fn update(&mut self, mean_poll_ns: f64) {
        if !self.adaptive || !mean_poll_ns.is_finite() || mean_poll_ns <= 0.0 {
            return;
        }
        self.ewma_poll_ns = if self.ewma_poll_ns == 0.0 {
            mean_poll_ns
        } else {
            POLL_TIME_EWMA_ALPHA * mean_poll_ns + (1.0 - POLL_TIME_EWMA_ALPHA) * self.ewma_poll_ns
        };
        let raw = TARGET_GLOBAL_QUEUE_INTERVAL_NS / self.ewma_poll_ns;
        self.interval = (raw as u32).clamp(MIN_ADAPTIVE_INTERVAL, MAX_ADAPTIVE_INTERVAL);
    }

    #[allow(dead_code)] // reason: read by tests
    pub(crate) fn interval(&self) -> u32 {
        self.interval
    }
}

/// The steal loop's victims: every worker but `me` once, starting at a
/// random worker or at `me + 1` (the `victim` knob).
pub(crate) fn victims(victim: Victim, rng: &mut FastRand, me: usize, n: usize) -> impl Iterator<Item = usize> {
    let start = match victim {
        Victim::Random => rng.below(n),
        Victim::Sequential => me + 1,
    };
    (0..n).map(move |k| (start + k) % n).filter(move |&v| v != me)
}

/// xorshift64* — victim selection only needs speed and decorrelation.
pub(crate) struct FastRand(u64);

impl FastRand {
    /// Seeded from the worker index so workers start at different victims.
    pub(crate) fn new(seed: usize) -> FastRand {
        FastRand((seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        ((x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize * n) >> 32
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn adaptive_interval_follows_poll_time_within_bounds() {
        let mut f = Fairness::new(GlobalInterval::Adaptive);
        assert_eq!(f.interval(), DEFAULT_GLOBAL_INTERVAL);
        f.update(10_000.0); // 10 µs polls → 20 ticks
        assert_eq!(f.interval(), 20);
        for _ in 0..200 {
            f.update(1.0); // tiny polls → clamp high
        }
        assert_eq!(f.interval(), MAX_ADAPTIVE_INTERVAL);
        for _ in 0..200 {
            f.update(1e9); // huge polls → clamp low
        }
        assert_eq!(f.interval(), MIN_ADAPTIVE_INTERVAL);
        let mut fixed = Fairness::new(GlobalInterval::Fixed(7));
        fixed.update(1.0);
        assert_eq!(fixed.interval(), 7);
        assert!(fixed.due(14) && !fixed.due(15));
    }

    #[test]
    fn victims_are_every_other_worker_once() {
        let mut rng = FastRand::new(1);
        for victim in [Victim::Random, Victim::Sequential] {
            for (me, n) in [(0, 1), (0, 2), (3, 8), (7, 8)] {
                let mut v: Vec<usize> = victims(victim, &mut rng, me, n).collect();
                v.sort_unstable();
                let want: Vec<usize> = (0..n).filter(|&i| i != me).collect();
                assert_eq!(v, want, "{victim:?} me={me} n={n}");
            }
        }
        let seq: Vec<usize> = victims(Victim::Sequential, &mut rng, 2, 4).collect();
        assert_eq!(seq, [3, 0, 1]);
    }

    #[test]
    fn rng_covers_range() {
        let mut r = FastRand::new(3);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            seen[r.below(7)] = true;
        }
        assert!(seen.iter().all(|&s| s), "{seen:?}");
    }
}
