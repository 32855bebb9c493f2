//! Latency recording: per-thread hdrhistogram sets, merged at the end.
//!
//! A request is recorded by whichever thread finishes it (a worker of the
//! runtime under test, or a load-generator thread). Each thread records
//! into its own [`Histos`], in its own cache-padded slot, behind a mutex
//! that only that thread takes while the run is live — uncontended, so the
//! recording path shares no lock and no cache line with another thread.
//! The slot is found through a thread-local keyed by the collector's id.
//! [`Collector::merged`] and [`Collector::finished`] take each slot's lock
//! briefly, only while draining and at the end.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;

/// Largest latency a histogram tracks exactly (larger values saturate).
pub const MAX_TRACKABLE_NS: u64 = 100_000_000_000;
/// Significant decimal digits kept by every histogram.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// A new latency histogram (1 ns .. [`MAX_TRACKABLE_NS`], 3 digits).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, SIGNIFICANT_DIGITS).expect("constant histogram bounds are valid")
}

pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One thread's measurements.
pub(crate) struct Histos {
    /// Done − intended arrival (coordinated-omission corrected).
    pub latency: Histogram<u64>,
    /// Done − actual send.
    pub uncorrected: Histogram<u64>,
    /// First poll − intended arrival.
    pub queue_wait: Histogram<u64>,
    /// Done − first poll.
    pub service: Histogram<u64>,
    /// Workload-specific (timer lateness, load-generator send lag).
    pub aux: Histogram<u64>,
    pub completed: u64,
    /// Of `completed`, those answered before the measured window ended
    /// (throughput counts these: the drain is not in the window).
    pub completed_in_window: u64,
    pub failed: u64,
    pub deadline_misses: u64,
    /// Server side: measured requests this thread answered (its handler
    /// ran here), whatever their outcome.
    pub served_measured: u64,
    /// Latest completion seen, if any.
    pub last_done: Option<Instant>,
}

impl Histos {
    pub(crate) fn new() -> Histos {
        Histos {
            latency: new_histogram(),
            uncorrected: new_histogram(),
            queue_wait: new_histogram(),
            service: new_histogram(),
            aux: new_histogram(),
            completed: 0,
            completed_in_window: 0,
            failed: 0,
            deadline_misses: 0,
            served_measured: 0,
            last_done: None,
        }
    }

    /// Client-side view of a request: latency from intended and from sent.
    pub(crate) fn record_client(&mut self, intended: Instant, sent: Instant, done: Instant, ok: bool) {
        self.latency.saturating_record(nanos(done.saturating_duration_since(intended)));
        self.uncorrected.saturating_record(nanos(done.saturating_duration_since(sent)));
        if ok {
            self.completed += 1;
        } else {
            self.failed += 1;
        }
        self.last_done = Some(self.last_done.map_or(done, |d| d.max(done)));
    }

    /// [`Histos::record_client`] of a request of a window ending at `end`.
    pub(crate) fn record_answer(&mut self, end: Instant, intended: Instant, sent: Instant, done: Instant, ok: bool) {
        self.record_client(intended, sent, done, ok);
        self.completed_in_window += u64::from(ok && done < end);
    }

    /// Server-side view of a request: queue wait and service time.
    pub(crate) fn record_server(&mut self, intended: Instant, first_poll: Instant, done: Instant) {
        self.queue_wait.saturating_record(nanos(first_poll.saturating_duration_since(intended)));
        self.service.saturating_record(nanos(done.saturating_duration_since(first_poll)));
    }

    pub(crate) fn merge(&mut self, other: &Histos) {
        let add = |a: &mut Histogram<u64>, b: &Histogram<u64>| a.add(b).expect("histograms share bounds");
        add(&mut self.latency, &other.latency);
        add(&mut self.uncorrected, &other.uncorrected);
        add(&mut self.queue_wait, &other.queue_wait);
        add(&mut self.service, &other.service);
        add(&mut self.aux, &other.aux);
        self.completed += other.completed;
        self.completed_in_window += other.completed_in_window;
        self.failed += other.failed;
        self.deadline_misses += other.deadline_misses;
        self.served_measured += other.served_measured;
        self.last_done = match (self.last_done, other.last_done) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
}

type Slot = CachePadded<Mutex<Histos>>;

thread_local! {
    static LOCAL: RefCell<Option<(u64, Arc<Slot>)>> = const { RefCell::new(None) };
}

/// Unique collector ids, so a thread-local slot of an earlier run is never
/// reused. Relaxed: only uniqueness is needed; nothing is published.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Every thread's [`Histos`] for one run.
pub(crate) struct Collector {
    id: u64,
    slots: Mutex<Vec<Arc<Slot>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a slot can only come from hdrhistogram itself;
    // the counts are still meaningful, so keep going.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Collector {
    pub(crate) fn new() -> Arc<Collector> {
        Arc::new(Collector { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), slots: Mutex::new(Vec::new()) })
    }

    /// Runs `f` on the calling thread's own [`Histos`], creating and
    /// registering it on first use.
    pub(crate) fn with_local<R>(&self, f: impl FnOnce(&mut Histos) -> R) -> R {
        let slot = LOCAL.with(|l| {
            let mut l = l.borrow_mut();
            match &*l {
                Some((id, slot)) if *id == self.id => Arc::clone(slot),
                _ => {
                    let slot = Arc::new(CachePadded::new(Mutex::new(Histos::new())));
                    lock(&self.slots).push(Arc::clone(&slot));
                    *l = Some((self.id, Arc::clone(&slot)));
                    slot
                }
            }
        });
        let mut h = lock(&slot);
        f(&mut h)
    }

    /// Completed + failed so far, over every thread.
    pub(crate) fn finished(&self) -> u64 {
        lock(&self.slots)
            .iter()
            .map(|s| {
                let h = lock(s);
                h.completed + h.failed
            })
            .sum()
    }

    /// `count` of each recording thread's [`Histos`], one entry per thread
    /// that recorded anything (in the order they first did).
    pub(crate) fn per_thread(&self, count: impl Fn(&Histos) -> u64) -> Vec<u64> {
        lock(&self.slots).iter().map(|s| count(&*lock(s))).collect()
    }

    /// Every thread's measurements merged.
    pub(crate) fn merged(&self) -> Histos {
        let mut all = Histos::new();
        for s in lock(&self.slots).iter() {
            all.merge(&lock(s));
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_record_apart_and_merge() {
        let c = Collector::new();
        let t0 = Instant::now();
        let ms = Duration::from_millis(1);
        std::thread::scope(|s| {
            for k in 1..=4u32 {
                let c = &c;
                s.spawn(move || {
                    for _ in 0..k {
                        c.with_local(|h| h.record_client(t0, t0 + ms, t0 + ms * k * 2, k % 2 == 0));
                    }
                });
            }
        });
        let m = c.merged();
        assert_eq!(lock(&c.slots).len(), 4, "one slot per recording thread");
        assert_eq!((m.completed, m.failed), (2 + 4, 1 + 3));
        assert_eq!(c.finished(), 10);
        assert_eq!(m.latency.len(), 10);
        // Largest: k = 4 -> done at 8 ms after intended, 7 ms after sent.
        assert!(m.latency.equivalent(m.latency.max(), 8_000_000), "{}", m.latency.max());
        assert!(m.uncorrected.equivalent(m.uncorrected.max(), 7_000_000), "{}", m.uncorrected.max());
    }

    #[test]
    fn a_new_collector_never_sees_an_old_threads_slot() {
        let a = Collector::new();
        let b = Collector::new();
        let t0 = Instant::now();
        a.with_local(|h| h.record_client(t0, t0, t0, true));
        b.with_local(|h| h.record_client(t0, t0, t0, false));
        a.with_local(|h| h.record_client(t0, t0, t0, true));
        assert_eq!((a.merged().completed, a.merged().failed), (2, 0));
        assert_eq!((b.merged().completed, b.merged().failed), (0, 1));
    }

    /// No false sharing at 128 recording threads: each thread's recorder
    /// (its lock and histogram headers, written on every request) starts on
    /// its own cache line and shares no line with another's. (The
    /// histograms' count arrays are separate heap blocks of kilobytes each.)
    #[test]
    fn every_recorder_sits_on_its_own_cache_lines() {
        const THREADS: usize = 128;
        const LINE: usize = 64;
        assert!(std::mem::align_of::<Slot>() >= LINE);
        assert_eq!(std::mem::size_of::<Slot>() % LINE, 0);
        let c = Collector::new();
        let t0 = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| c.with_local(|h| h.record_client(t0, t0, t0, true)));
            }
        });
        let slots = lock(&c.slots);
        assert_eq!(slots.len(), THREADS);
        let mut ranges: Vec<(usize, usize)> = slots
            .iter()
            .map(|slot| {
                let start = std::ptr::from_ref::<Mutex<Histos>>(slot) as usize;
                (start, start + std::mem::size_of::<Mutex<Histos>>() - 1)
            })
            .collect();
        ranges.sort_unstable();
        for (i, w) in ranges.windows(2).enumerate() {
            assert_eq!(w[0].0 % LINE, 0, "recorder {i} at {:#x} is not line-aligned", w[0].0);
            assert!(w[0].1 / LINE < w[1].0 / LINE, "recorders at {:#x} and {:#x} share a line", w[0].0, w[1].0);
        }
    }
}
