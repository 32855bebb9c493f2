//! The measuring loop of the closed workloads that run fixed-size
//! iterations (tokio's benchmarks, the message-passing workloads, the
//! pathology zoo): warm-up iterations until `opts.warmup` is used
//! (discarded), then measured ones until `opts.duration` is used (at least
//! one), with the runtime's counters and CPU over the measured ones only.
//!
//! Also the thread tag the workloads use to tell, exactly, whether a
//! hand-off crossed threads: [`thread_tag`].

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::api::{CpuUsage, RunOptions};
use crate::cpu_time::CpuMeter;
use crate::rt::{counters_delta, CounterValues, Rt, Spawner};

/// What the measured iterations of one run took.
pub(crate) struct Window {
    /// Measured iterations (at least one).
    pub iterations: u64,
    /// Wall time of the measured iterations, end to end.
    pub elapsed: Duration,
    /// The runtime's counters over them.
    pub counters: CounterValues,
    /// CPU of the runtime under test over them.
    pub cpu: Option<CpuUsage>,
    /// Task-registry lock acquisitions that found the lock held, over
    /// them, where the runtime counts them ([`Spawner::task_registry_contended`]).
    pub task_registry_contended: Option<u64>,
}

/// Whether an iteration is measured (its results kept) or warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    WarmUp,
    Measured,
}

/// Runs `iteration` through the warm-up, then measured until the run's
/// duration is used; each call is told its [`Phase`], so that the caller
/// keeps only what measured iterations record.
pub(crate) fn measure<R: Rt>(
    rt: &R,
    opts: &RunOptions,
    meter: &CpuMeter,
    mut iteration: impl FnMut(&R, Phase),
) -> Window {
    let sp = rt.spawner();
    let warm_until = Instant::now() + opts.warmup;
    while Instant::now() < warm_until {
        iteration(rt, Phase::WarmUp);
    }
    meter.start();
    let counters_start = sp.window_start();
    let registry_start = sp.task_registry_contended();
    let t0 = Instant::now();
    let mut iterations = 0u64;
    loop {
        iteration(rt, Phase::Measured);
        iterations += 1;
        if t0.elapsed() >= opts.duration {
            break;
        }
    }
    let elapsed = t0.elapsed();
    let counters = counters_delta(&counters_start, &sp.window_end());
    let task_registry_contended =
        sp.task_registry_contended().zip(registry_start).map(|(end, start)| end.saturating_sub(start));
    let cpu = meter.finish();
    Window { iterations, elapsed, counters, cpu, task_registry_contended }
}

/// The value of counter `name` in `counters`, where the runtime reports it.
pub(crate) fn counter(counters: &CounterValues, name: &str) -> Option<u64> {
    counters.iter().find(|(n, _)| *n == name).and_then(|(_, v)| *v)
}

/// A number for the calling thread, unique in the process and fixed for
/// the thread's life (1, 2, ... in order of first use): a message carries
/// its sender's tag, and a receiver whose tag differs got it from another
/// thread — an exact count of cross-thread hand-offs, not an estimate.
/// (A worker is a thread on every runtime here, so "another thread" is
/// "another worker" or, for a task polled inside `block_on`, the caller.)
pub(crate) fn thread_tag() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static TAG: Cell<u64> = const { Cell::new(0) };
    }
    TAG.with(|t| {
        if t.get() == 0 {
            // Relaxed: only uniqueness matters, which the RMW gives.
            t.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_keeps_its_tag_and_another_thread_gets_another() {
        let mine = thread_tag();
        assert_eq!(thread_tag(), mine);
        let theirs = std::thread::spawn(thread_tag).join().expect("the tag thread panicked");
        assert_ne!(theirs, mine);
        assert_ne!(theirs, 0);
    }
}
