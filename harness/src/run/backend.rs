//! The door for the harness's runs into the workloads crate (runs,
//! validation, the scheduler and workload lists). The rest of the crate's
//! face is called where it is used (see the crate doc: `remote`,
//! `doctor`, `options`, `compare`), and the contract's types
//! (`wsbench_workloads::api`) are imported there, not wrapped here.

use std::sync::Mutex;

use anyhow::Result;
use wsbench_workloads::api::{RunOptions, RunOutput, RuntimeSpec, Sched, SchedInfo, WorkloadInfo, WorkloadSpec};

/// Every `--sched` name: ours (built-in and registered) and the
/// references. The list only changes when a policy is registered (at the
/// start of `main`), so it is built once per change and kept.
pub fn schedulers() -> &'static [SchedInfo] {
    static CACHE: Mutex<&'static [SchedInfo]> = Mutex::new(&[]);
    let mut cached = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let now = wsbench_workloads::schedulers();
    let same = cached.len() == now.len() && cached.iter().zip(&now).all(|(a, b)| a.name == b.name);
    if !same {
        *cached = Box::leak(now.into_boxed_slice());
    }
    *cached
}

/// Every workload.
pub fn workloads() -> &'static [WorkloadInfo] {
    wsbench_workloads::workloads()
}

/// Looks a scheduler up by name.
pub fn scheduler(name: &str) -> Option<&'static SchedInfo> {
    schedulers().iter().find(|s| s.name == name)
}

/// Resolves a `--sched` name (the one place the harness does).
pub fn sched(name: &str) -> Result<Sched, wsbench_workloads::Error> {
    Sched::parse(name)
}

/// Looks a workload up by name.
pub fn workload(name: &str) -> Option<&'static WorkloadInfo> {
    workloads().iter().find(|w| w.name == name)
}

/// Checks a cell without running it.
pub fn validate(runtime: &RuntimeSpec, workload: &WorkloadSpec) -> Result<()> {
    wsbench_workloads::validate(runtime, workload)?;
    Ok(())
}

/// Runs one measured run in a fresh runtime.
pub fn run(runtime: &RuntimeSpec, workload: &WorkloadSpec, options: &RunOptions) -> Result<RunOutput> {
    Ok(wsbench_workloads::run(runtime, workload, options)?)
}

/// The worker count tokio picks by default in this process.
pub fn tokio_default_workers() -> Result<usize> {
    Ok(wsbench_workloads::api::tokio_default_workers()?)
}
