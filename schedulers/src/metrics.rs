//! Per-worker counters and the snapshot `Runtime::metrics()` returns.
//!
//! Every counter is written by exactly one thread (the worker that owns it)
//! with a Relaxed load + store, never a read-modify-write, so counting costs
//! a plain increment on the hot path. Each worker's block is cache-padded so
//! that a reader (or a neighbour's counters) never shares its line.
//! Readers (`Runtime::metrics`) load Relaxed: a snapshot is a statistical
//! view, not a synchronisation point.

use crossbeam_utils::CachePadded;

use crate::loom::sync::atomic::{AtomicU64, Ordering};

mod delay;

pub(crate) use delay::{delay_blocks, snapshot as delay_snapshot, DelayBlocks};
pub use delay::{DelayHistogram, BUCKETS as DELAY_BUCKETS, TICK_NS, TICK_SHIFT};

macro_rules! counters {
    ($( $(#[$doc:meta])* $name:ident = $csv:literal, )*) => {
        /// One worker's counters (or their sum over workers).
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct WorkerMetrics {
            $( $(#[$doc])* pub $name: u64, )*
        }

        /// Stable CSV column names of [`WorkerMetrics`], in field order.
        pub const COUNTER_NAMES: &[&str] = &[ $( $csv, )* ];

        impl WorkerMetrics {
            /// `(csv name, value)` pairs in [`COUNTER_NAMES`] order.
            pub fn fields(&self) -> Vec<(&'static str, u64)> {
                vec![ $( ($csv, self.$name), )* ]
            }

            fn add(&mut self, other: &WorkerMetrics) {
                $( self.$name += other.$name; )*
            }
        }

        /// The live, atomically readable counters of one worker.
        #[derive(Debug, Default)]
        pub struct Counters {
            $( pub(crate) $name: AtomicU64, )*
            /// Gauge, not a counter (never summed): the global-queue
            /// interval in force at the worker's last inject-queue check;
            /// 0 until the first check, and for policies without one.
            pub(crate) global_interval: AtomicU64,
        }

        impl Counters {
            pub(crate) fn snapshot(&self) -> WorkerMetrics {
                // Relaxed: statistics only, see the module doc.
                WorkerMetrics { $( $name: self.$name.load(Ordering::Relaxed), )* }
            }
        }
    };
}

counters! {
    /// Task polls run by this worker.
    polls = "polls",
    /// Spawns from inside this worker (a task running on it).
    spawns_local = "spawns_local",
    /// Spawns from outside the runtime that this worker received (or, for
    /// shared queues, that were counted against worker 0 of the runtime).
    spawns_remote = "spawns_remote",
    /// Times this worker tried to steal from a victim.
    steal_attempts = "steal_attempts",
    /// Steal attempts that got at least one task.
    steals = "steals",
    /// Tasks moved by successful steals.
    tasks_stolen = "tasks_stolen",
    /// Tasks run from the LIFO slot.
    lifo_hits = "lifo_hits",
    /// Tasks taken from the inject (global) queue.
    inject_pops = "inject_pops",
    /// Times the local queue overflowed into the inject queue.
    overflows = "overflows",
    /// Times the worker parked.
    parks = "parks",
    /// Times the worker was unparked by a notification.
    unparks = "unparks",
    /// Unparks that found no work to run (spurious wake-ups).
    spurious_unparks = "spurious_unparks",
    /// I/O and timer driver polls done by this worker.
    driver_polls = "driver_polls",
    /// Nanoseconds spent running tasks.
    busy_ns = "busy_ns",
    /// Tasks this worker took from other workers' LIFO slots
    /// (`lifo-steal=on`; also counted in `steals` and `tasks_stolen`).
    lifo_steals = "lifo_steals",
    /// Successful steals from a worker of the thief's own L3 group (where a
    /// worker topology is known: `RuntimeMetrics::steal_groups_counted`).
    steals_local_group = "steals_local_group",
    /// Successful steals from a worker of another L3 group (as above).
    steals_remote_group = "steals_remote_group",
}

impl Counters {
    /// Owner-only gauge update: a Relaxed store.
    #[inline(always)]
    pub(crate) fn set(gauge: &AtomicU64, value: u64) {
        // Relaxed: single writer (the owning worker); readers tolerate staleness.
        gauge.store(value, Ordering::Relaxed);
    }

    /// Owner-only increment: a Relaxed load and store, no RMW.
    #[inline(always)]
    pub(crate) fn bump(counter: &AtomicU64, by: u64) {
        // Relaxed: single writer (the owning worker); readers tolerate staleness.
        counter.store(counter.load(Ordering::Relaxed).wrapping_add(by), Ordering::Relaxed);
    }
}

/// Counters of the shared driver and blocking pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DriverMetrics {
    /// I/O readiness events dispatched to wakers.
    pub io_events: u64,
    /// Timers that fired.
    pub timers_fired: u64,
    /// Sum of (fire time − deadline) over fired timers, in microseconds.
    pub timer_lateness_us_total: u64,
    /// Largest lateness of a fired timer, in microseconds.
    pub timer_lateness_us_max: u64,
    /// Times a thread found a timer wheel's lock already held (the shared
    /// wheel's, or under `timer=per-worker` a worker wheel's).
    pub timer_lock_contended: u64,
    /// Blocking-pool threads spawned.
    pub blocking_threads_spawned: u64,
    /// `timer=per-worker`: timers cancelled (or reset) from a thread other
    /// than the worker whose wheel holds them, each sent to that worker as
    /// a message; 0 under `timer=shared` (one wheel: no remote cancels).
    pub timer_remote_cancels: u64,
}

/// Stable CSV column names of [`DriverMetrics`], in field order.
pub const DRIVER_COUNTER_NAMES: &[&str] = &[
    "io_events",
    "timers_fired",
    "timer_lateness_us_total",
    "timer_lateness_us_max",
    "timer_lock_contended",
    "blocking_threads_spawned",
    "timer_remote_cancels",
];

impl DriverMetrics {
    /// Adds another driver's counters (maxima: the larger), for runtimes
    /// made of several drivers (`thread-per-core`).
    pub fn merge(&mut self, other: &DriverMetrics) {
        self.io_events += other.io_events;
        self.timers_fired += other.timers_fired;
        self.timer_lateness_us_total += other.timer_lateness_us_total;
        self.timer_lateness_us_max = self.timer_lateness_us_max.max(other.timer_lateness_us_max);
        self.timer_lock_contended += other.timer_lock_contended;
        self.blocking_threads_spawned += other.blocking_threads_spawned;
        self.timer_remote_cancels += other.timer_remote_cancels;
    }

    /// `(csv name, value)` pairs in [`DRIVER_COUNTER_NAMES`] order.
    pub fn fields(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("io_events", self.io_events),
            ("timers_fired", self.timers_fired),
            ("timer_lateness_us_total", self.timer_lateness_us_total),
            ("timer_lateness_us_max", self.timer_lateness_us_max),
            ("timer_lock_contended", self.timer_lock_contended),
            ("blocking_threads_spawned", self.blocking_threads_spawned),
            ("timer_remote_cancels", self.timer_remote_cancels),
        ]
    }
}

/// A snapshot of a runtime's counters.
#[derive(Debug, Clone, Default)]
pub struct RuntimeMetrics {
    /// One entry per worker, by worker index.
    pub workers: Vec<WorkerMetrics>,
    /// Driver and blocking-pool counters.
    pub driver: DriverMetrics,
    /// Per worker, by index: the global-queue interval (ticks between
    /// inject-queue checks) in force at its last check. `None` for policies
    /// without one and before a worker's first check. Under
    /// `global-interval=adaptive` an interval can settle at different
    /// values in different runtime instances of the same workload, which is
    /// what this shows.
    pub global_queue_intervals: Vec<Option<u32>>,
    /// Acquisitions of the inject queue's lock(s) that found the lock held
    /// (pushes from outside, overflow, refills, shutdown), since the runtime
    /// was built: the inject-lock contention. `None` for policies whose
    /// shared queue takes no lock (`global`, `steal-one`: crossbeam's
    /// lock-free `Injector`).
    pub inject_lock_contended: Option<u64>,
    /// Acquisitions of the task registry's (owned-tasks list's) shard
    /// locks that found the lock held (spawn, completion, shutdown), since
    /// the runtime was built: the task-registry contention. Every policy
    /// has the registry, so every policy counts it.
    pub task_registry_contended: u64,
    /// Acquisitions of the blocking pool's lock that found it held
    /// (`spawn_blocking`, a pool thread taking a job, going idle or
    /// exiting, shutdown), since the runtime was built: the blocking
    /// pool's lock contention. Every policy has the pool, so every policy
    /// counts it.
    pub blocking_lock_contended: u64,
    /// Whether `steals_local_group` and `steals_remote_group` are counted:
    /// a stealing policy that knows each worker's L3 group (pinned workers
    /// with a sysfs topology, or `Builder::topology`); when counted they
    /// add up to `steals`. False: the two are meaningless zeros.
    pub steal_groups_counted: bool,
    /// Schedule delays (scheduled → next poll) since the runtime was
    /// built, summed over workers: one per task poll, so its count equals
    /// the `polls` counter's. `None` unless built with `sched-delay=on`.
    pub sched_delay: Option<DelayHistogram>,
}

impl RuntimeMetrics {
    /// Sum over workers.
    pub fn totals(&self) -> WorkerMetrics {
        let mut sum = WorkerMetrics::default();
        for w in &self.workers {
            sum.add(w);
        }
        sum
    }
}

/// Per-worker counter blocks, cache-padded so workers never share a line.
pub type CounterBlocks = Box<[CachePadded<Counters>]>;

/// One cache-padded counter block per worker.
pub fn counter_blocks(workers: usize) -> CounterBlocks {
    (0..workers).map(|_| CachePadded::new(Counters::default())).collect()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// The cache-line size this check guards against (x86-64, most ARM).
    const LINE: usize = 64;

    /// No false sharing at 128 workers: every worker's counter block starts
    /// on its own cache line and no line holds two blocks.
    #[test]
    fn every_counter_block_sits_on_its_own_cache_lines() {
        const WORKERS: usize = 128;
        assert!(std::mem::align_of::<CachePadded<Counters>>() >= LINE);
        assert_eq!(std::mem::size_of::<CachePadded<Counters>>() % LINE, 0);
        let blocks = counter_blocks(WORKERS);
        let lines: Vec<(usize, usize)> = blocks
            .iter()
            .map(|b| {
                let start = std::ptr::from_ref::<Counters>(b) as usize;
                (start, start + std::mem::size_of::<Counters>() - 1)
            })
            .collect();
        for (i, &(start, last)) in lines.iter().enumerate() {
            assert_eq!(start % LINE, 0, "block {i} at {start:#x} is not line-aligned");
            if let Some(&(next, _)) = lines.get(i + 1) {
                assert!(last / LINE < next / LINE, "blocks {i} and {} share line {:#x}", i + 1, next / LINE);
            }
        }
    }
}
