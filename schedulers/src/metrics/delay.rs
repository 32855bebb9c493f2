//! The schedule-delay histogram (`--knob sched-delay=on`): how long a task
//! waited from being scheduled (spawned or woken: pushed to a run queue,
//! LIFO slot, inject queue or mailbox) to its next poll.
//!
//! Each worker records into its own block of log-linear buckets, written
//! only by that worker with a Relaxed load and store (no read-modify-write,
//! no lock: the same discipline as the counters in `metrics.rs`), so
//! recording costs a bucket-index computation and a plain increment.
//! Readers sum the blocks into a [`DelayHistogram`] at any time; a window
//! is the difference of two snapshots ([`DelayHistogram::since`]), as for
//! the counters.
//!
//! Values are in ticks of [`TICK_NS`] nanoseconds, the unit of the 32-bit
//! stamp a task header holds (`task::cell::Header::scheduled_at`).
//! Buckets: one per tick below 2^[`SUB_BUCKET_BITS`] ticks, then
//! 2^`SUB_BUCKET_BITS` buckets per power of two up to 2^32 ticks, so a
//! bucket spans at most 1/32 of its lower bound and its midpoint is within
//! 1.6 % of every value in it.

use crossbeam_utils::CachePadded;

use crate::loom::sync::atomic::{AtomicU64, Ordering};

/// Nanoseconds per tick of a schedule stamp, as a power of two: 2^4 = 16 ns.
/// A 32-bit stamp in 16 ns ticks wraps every 2^36 ns (68.7 s): a wait
/// that long or longer is recorded modulo that period.
pub const TICK_SHIFT: u32 = 4;
/// Nanoseconds per tick ([`TICK_SHIFT`]).
pub const TICK_NS: u64 = 1 << TICK_SHIFT;
/// Sub-buckets per power of two, as a power of two (2^5 = 32).
pub const SUB_BUCKET_BITS: u32 = 5;
const SUB_BUCKETS: usize = 1 << SUB_BUCKET_BITS;
/// Bits of a recorded value (a tick count from a 32-bit stamp).
const VALUE_BITS: u32 = 32;
/// Buckets per histogram: the exact ones below 2^SUB_BUCKET_BITS, then
/// SUB_BUCKETS per power of two from 2^SUB_BUCKET_BITS to 2^32 (896).
pub const BUCKETS: usize = SUB_BUCKETS * (VALUE_BITS - SUB_BUCKET_BITS + 1) as usize;

/// The bucket of a delay of `ticks`.
#[inline(always)]
pub(crate) fn bucket_of(ticks: u32) -> usize {
    if (ticks as usize) < SUB_BUCKETS {
        return ticks as usize;
    }
    // `ticks` lies in [2^exp, 2^(exp+1)) with exp >= SUB_BUCKET_BITS; its
    // SUB_BUCKET_BITS bits below the leading one pick the sub-bucket.
    let exp = 31 - ticks.leading_zeros();
    let sub = (ticks >> (exp - SUB_BUCKET_BITS)) as usize - SUB_BUCKETS;
    (exp - SUB_BUCKET_BITS + 1) as usize * SUB_BUCKETS + sub
}

/// The ticks bucket `index` holds: `[low, high)`.
fn bucket_ticks(index: usize) -> (u64, u64) {
    assert!(index < BUCKETS, "bucket {index} out of 0..{BUCKETS}");
    if index < SUB_BUCKETS {
        return (index as u64, index as u64 + 1);
    }
    let exp = (index / SUB_BUCKETS) as u32 + SUB_BUCKET_BITS - 1;
    let sub = (index % SUB_BUCKETS) as u64;
    let width = 1u64 << (exp - SUB_BUCKET_BITS);
    let low = (SUB_BUCKETS as u64 + sub) * width;
    (low, low + width)
}

/// A worker's buckets, written by that worker only.
pub(crate) struct DelayBlock {
    counts: [AtomicU64; BUCKETS],
}

impl DelayBlock {
    fn new() -> DelayBlock {
        DelayBlock { counts: std::array::from_fn(|_| AtomicU64::new(0)) }
    }

    /// Owner-only: one delay of `ticks`.
    #[inline(always)]
    pub(crate) fn record(&self, ticks: u32) {
        let c = &self.counts[bucket_of(ticks)];
        // Relaxed: single writer (the owning worker); readers tolerate
        // staleness. A load and a store, no read-modify-write.
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }
}

/// One block per worker, cache-padded so that no two workers' buckets (or
/// a neighbour's data) share a line.
pub(crate) type DelayBlocks = Box<[CachePadded<DelayBlock>]>;

/// One block per worker.
pub(crate) fn delay_blocks(workers: usize) -> DelayBlocks {
    (0..workers).map(|_| CachePadded::new(DelayBlock::new())).collect()
}

/// The sum of every worker's buckets.
pub(crate) fn snapshot(blocks: &DelayBlocks) -> DelayHistogram {
    let mut counts = vec![0u64; BUCKETS];
    for block in blocks.iter() {
        for (sum, c) in counts.iter_mut().zip(&block.counts) {
            // Relaxed: statistics only, as the counters (`metrics.rs`).
            *sum += c.load(Ordering::Relaxed);
        }
    }
    DelayHistogram { counts }
}

/// Schedule delays: counts per bucket, summed over workers (see the module
/// doc for the buckets). Cumulative since the runtime was built; a window
/// is [`DelayHistogram::since`] an earlier snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelayHistogram {
    counts: Vec<u64>,
}

impl Default for DelayHistogram {
    fn default() -> Self {
        DelayHistogram { counts: vec![0; BUCKETS] }
    }
}

impl DelayHistogram {
    /// Delays recorded (one per task poll while measured).
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Every bucket that holds a delay: `(low_ns, high_ns, count)`, the
    /// bucket covering delays in `[low_ns, high_ns)`, in increasing order.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, c)| {
            let (low, high) = bucket_ticks(i);
            (low << TICK_SHIFT, high << TICK_SHIFT, *c)
        })
    }

    /// The delays recorded after `earlier` was taken (bucket by bucket;
    /// `earlier` must be an older snapshot of the same runtime).
    pub fn since(&self, earlier: &DelayHistogram) -> DelayHistogram {
        let counts = self.counts.iter().zip(&earlier.counts).map(|(now, then)| now.saturating_sub(*then)).collect();
        DelayHistogram { counts }
    }

    /// Adds another runtime's delays (the cores of `thread-per-core`).
    pub fn merge(&mut self, other: &DelayHistogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
