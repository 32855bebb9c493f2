//! Reference runtimes registered from outside the crate: a user's own
//! binary adds a row for another runtime (or another configuration of
//! tokio) by implementing [`Rt`](crate::rt::Rt) and calling
//! [`register_reference`] before the harness parses `--sched`. Every
//! workload then runs on it, monomorphised for it like the built-in
//! references. Part of the extension API (see the README, "Adding your own
//! scheduler").

use std::sync::RwLock;

use crate::api::{RunOptions, RunOutput, RuntimeSpec, SchedInfo};
use crate::cpu::CpuMeter;
use crate::plan::Plan;
use crate::rt::Rt;
use crate::Error;

type RunFn = dyn Fn(&RuntimeSpec, &Plan, &RunOptions, &CpuMeter) -> Result<RunOutput, Error> + Send + Sync;

/// A registered reference runtime.
pub(crate) struct RefEntry {
    pub(crate) info: SchedInfo,
    pub(crate) run: Box<RunFn>,
}

impl PartialEq for RefEntry {
    fn eq(&self, other: &Self) -> bool {
        self.info.name == other.info.name
    }
}

impl Eq for RefEntry {}

impl std::fmt::Debug for RefEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RefEntry({:?})", self.info.name)
    }
}

/// Registered references, in registration order; leaked on purpose (they
/// live as long as the process, a handful of them).
fn registry() -> &'static RwLock<Vec<&'static RefEntry>> {
    static REGISTRY: RwLock<Vec<&'static RefEntry>> = RwLock::new(Vec::new());
    &REGISTRY
}

/// Every registered reference.
pub(crate) fn registered() -> Vec<&'static RefEntry> {
    registry().read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Why [`register_reference`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterReferenceError {
    /// The name is taken by a scheduler or an earlier registration.
    #[error("scheduler name `{0}` is already taken (see `wsbench list`)")]
    Taken(&'static str),
    /// The name is not lower-case kebab-case starting with a letter, or
    /// is `all`.
    #[error("bad scheduler name `{0}`: allowed are lower-case letters, digits and `-`, starting with a letter, and not `all`")]
    BadName(&'static str),
}

/// Registers a reference runtime under `name`: `build` makes one from the
/// run's [`RuntimeSpec`] (worker count, worker cores; references take no
/// knobs). `single_worker_only` rows run only at `--workers 1`. Register
/// first thing in `main` (the harness's per-run child processes re-run the
/// same binary and must register it too).
pub fn register_reference<R, B>(
    name: &'static str,
    about: &'static str,
    single_worker_only: bool,
    build: B,
) -> Result<(), RegisterReferenceError>
where
    R: Rt,
    B: Fn(&RuntimeSpec) -> Result<R, Error> + Send + Sync + 'static,
{
    let good = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name != "all";
    if !good {
        return Err(RegisterReferenceError::BadName(name));
    }
    let mut reg = registry().write().unwrap_or_else(|e| e.into_inner());
    if crate::catalog::builtin_schedulers().iter().any(|s| s.name == name) || reg.iter().any(|e| e.info.name == name) {
        return Err(RegisterReferenceError::Taken(name));
    }
    let run = move |rt: &RuntimeSpec, plan: &Plan, opts: &RunOptions, meter: &CpuMeter| {
        crate::runner::execute(build(rt)?, rt, plan, opts, meter)
    };
    let info = SchedInfo { name, about, is_reference: true, single_worker_only };
    reg.push(Box::leak(Box::new(RefEntry { info, run: Box::new(run) })));
    Ok(())
}
