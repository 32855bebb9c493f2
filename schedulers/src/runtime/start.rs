//! Starting a runtime of one policy on the core: its driver, blocking
//! pool, shared state and worker threads. Which policy, with what knobs
//! and how many workers is decided and validated above the core
//! (`crate::dispatch`), which also makes the handle the threads run inside.

use std::io;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::context::Enter;
use super::core::{new_core, Dormant};
use super::park;
use super::shared::Shared;
use super::worker::worker_main;
use crate::blocking::BlockingPool;
use crate::driver::{Driver, DriverConfig};
use crate::knobs::{Knobs, TimerMode};
use crate::policy::Policy;

/// How long dropping a runtime waits for its workers (and a start that
/// failed half-way waits for the workers it had started).
pub(crate) const DROP_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// Called on each worker thread, with its index, before it runs tasks.
pub(crate) type ThreadHook = Arc<dyn Fn(usize) + Send + Sync + 'static>;

/// A validated request for one runtime of one policy.
pub(crate) struct Config<'a> {
    /// Typed knob values (applicability checked).
    pub(crate) knobs: Knobs,
    /// Worker count (checked against the policy's rule).
    pub(crate) workers: usize,
    /// Blocking-pool thread limit (at least 1).
    pub(crate) max_blocking_threads: usize,
    /// Idle blocking threads exit after this long.
    pub(crate) blocking_keep_alive: Duration,
    /// Prefix of the thread names.
    pub(crate) thread_name: &'a str,
    /// Run on each worker thread first.
    pub(crate) on_thread_start: Option<ThreadHook>,
    /// No worker thread: the one core waits for the first `block_on`,
    /// which drives it (`current-thread` without a driver thread, see
    /// `block_on.rs`).
    pub(crate) driven_by_block_on: bool,
}

/// Starts a runtime of policy `P`: `make_handle` turns its shared state into
/// the handle its threads run inside. Returns that handle and the worker
/// threads; when a thread cannot be started, shuts down what was started
/// and returns the error.
pub(crate) fn start<P: Policy, H: Enter>(
    cfg: Config<'_>,
    make_handle: impl FnOnce(Arc<Shared<P>>) -> H,
) -> io::Result<(H, Vec<JoinHandle<()>>)> {
    let workers = cfg.workers;
    let knobs = cfg.knobs;
    let (policy, cores) = P::new(workers, &knobs);
    let worker_wheels = if knobs.timer == TimerMode::PerWorker { workers } else { 0 };
    let (driver, driver_handle) = Driver::new(DriverConfig { worker_wheels, ..DriverConfig::default() })?;
    let (parkers, unparkers): (Vec<_>, Vec<_>) = (0..workers).map(|_| park::pair(Some(driver_handle.clone()))).unzip();
    let blocking = BlockingPool::new(cfg.max_blocking_threads, cfg.blocking_keep_alive, cfg.thread_name);
    let shared = Arc::new(Shared::new(policy, knobs, workers, unparkers.into(), driver, driver_handle, blocking));
    let handle = make_handle(shared.clone());
    if cfg.driven_by_block_on {
        // Driven by `block_on`: no thread; the core waits for the first
        // `block_on` (`block_on.rs`).
        for (core, parker) in cores.into_iter().zip(parkers) {
            shared.park_dormant(Dormant { core: new_core::<P>(shared.knobs.event_interval, core), parker });
        }
        return Ok((handle, Vec::new()));
    }
    let mut threads = Vec::with_capacity(workers);
    for (index, (core, parker)) in cores.into_iter().zip(parkers).enumerate() {
        let worker_shared = shared.clone();
        let worker_handle = handle.clone();
        let hook = cfg.on_thread_start.clone();
        let spawned = std::thread::Builder::new().name(format!("{}-{index}", cfg.thread_name)).spawn(move || {
            if let Some(hook) = hook {
                hook(index);
            }
            worker_main(worker_shared, worker_handle, index, core, parker)
        });
        match spawned {
            Ok(t) => threads.push(t),
            Err(e) => {
                // Workers that never started count as exited.
                for _ in index..workers {
                    shared.worker_exited();
                }
                if shared.shutdown(DROP_SHUTDOWN_TIMEOUT) {
                    join_workers(threads);
                }
                return Err(e);
            }
        }
    }
    Ok((handle, threads))
}

/// Waits for worker threads that have left their loops (after a clean
/// shutdown); the calling thread, if it is one of them, is left alone.
pub(crate) fn join_workers(threads: Vec<JoinHandle<()>>) {
    let me = std::thread::current().id();
    for t in threads {
        if t.thread().id() != me {
            let _ = t.join();
        }
    }
}
