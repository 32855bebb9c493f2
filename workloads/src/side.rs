//! A CPU-bound side pool beside the runtime under test
//! (`--param side-threads=N`, `--param side-duty=F`), as a rayon-style
//! pool of a real service burns CPU next to its async runtime.
//!
//! Each of the N plain threads repeats, for the whole run (warm-up
//! included): a burst of calibrated CPU work ([`crate::spin::spin_ns`])
//! of `F x` [`SIDE_PERIOD`], then a sleep of the rest of the period. The
//! work is a fixed amount, not a clock loop, so under a CPU quota a
//! throttled burst takes longer, as a real job would. The threads are the
//! CPU meter's guests: their CPU time is not the runtime's (`cpu_ms`), but
//! they share the run's cgroup and its quota, which is the point; their
//! own CPU time is the row's `side_cpu_ms` extra.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, Scope, ScopedJoinHandle};
use std::time::Duration;

use crate::cpu_time::CpuMeter;
use crate::Error;

/// One burst plus its sleep.
pub const SIDE_PERIOD: Duration = Duration::from_millis(10);
/// The most side threads accepted.
pub const MAX_SIDE_THREADS: u64 = 256;
/// The extra holding the side pool's CPU time over the run, in ms.
pub const SIDE_CPU_EXTRA: &str = "side_cpu_ms";

/// The side pool of a run; `threads == 0` is none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SidePool {
    pub threads: usize,
    /// Fraction of each period spent working, in `0..=1`.
    pub duty: f64,
}

impl SidePool {
    /// No side pool.
    pub const OFF: SidePool = SidePool { threads: 0, duty: 0.0 };
}

/// The running pool: [`Running::stop`] ends and joins it.
pub(crate) struct Running<'scope> {
    stop: &'scope AtomicBool,
    handles: Vec<ScopedJoinHandle<'scope, Option<Duration>>>,
}

fn side_thread(pool: SidePool, stop: &AtomicBool, meter: &CpuMeter) -> Option<Duration> {
    let busy = SIDE_PERIOD.mul_f64(pool.duty);
    let idle = SIDE_PERIOD.saturating_sub(busy);
    let _guest = meter.guest();
    // Relaxed: a flag polled each period; nothing is published through it.
    crate::cpu_time::thread_cpu_of(|| {
        while !stop.load(Ordering::Relaxed) {
            crate::spin::spin_ns(busy.as_nanos() as u64);
            if !idle.is_zero() {
                thread::sleep(idle);
            }
        }
    })
}

/// Starts `pool` inside `scope`; `stop` must outlive it.
pub(crate) fn start<'scope, 'env>(
    scope: &'scope Scope<'scope, 'env>,
    pool: SidePool,
    stop: &'scope AtomicBool,
    meter: &'scope CpuMeter,
) -> Result<Running<'scope>, Error> {
    let mut handles = Vec::with_capacity(pool.threads);
    for index in 0..pool.threads {
        let h = thread::Builder::new()
            .name(format!("wsbench-side-{index}"))
            .spawn_scoped(scope, move || side_thread(pool, stop, meter))
            .map_err(|e| Error::io("starting a side-pool thread", e))?;
        handles.push(h);
    }
    Ok(Running { stop, handles })
}

impl Running<'_> {
    /// Stops and joins the pool; its threads' CPU time in ms, `None` when
    /// there is no pool or a thread's clock was unreadable.
    pub(crate) fn stop(self) -> Option<f64> {
        self.stop.store(true, Ordering::Relaxed);
        if self.handles.is_empty() {
            return None;
        }
        let mut total = Some(Duration::ZERO);
        for h in self.handles {
            let own = h.join().expect("a side-pool thread panicked");
            total = total.zip(own).map(|(t, o)| t + o);
        }
        total.map(|t| t.as_secs_f64() * 1e3)
    }
}

/// Runs `f` on this thread with `pool` running beside it; returns what `f`
/// returned and the pool's CPU time in ms (`None` without a pool).
pub(crate) fn around<T>(
    pool: SidePool,
    meter: &CpuMeter,
    f: impl FnOnce() -> Result<T, Error>,
) -> Result<(T, Option<f64>), Error> {
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        let running = start(s, pool, &stop, meter)?;
        let out = f();
        let cpu_ms = running.stop();
        Ok((out?, cpu_ms))
    })
}
