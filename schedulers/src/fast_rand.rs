//! A tiny per-worker RNG for victim selection (the stealing policies and
//! `crate::topology`'s victim order).

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
    fn rng_covers_range() {
        let mut r = FastRand::new(3);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            seen[r.below(7)] = true;
        }
        assert!(seen.iter().all(|&s| s), "{seen:?}");
    }
}
