//! What a scheduler is, as plain facts: its `--sched` name, its one-line
//! meaning, how many workers it runs and which knobs it honours
//! ([`PolicyInfo`]), and the worker limit every runtime shares. Each
//! policy states its own `INFO` in its folder; `crate::kind` (the names),
//! the topology and the builders read them. This module names nothing else
//! in the crate, so that everything may read it.

/// Most worker threads a runtime accepts (the idle state packs counts in
/// half a word). The one definition; the workloads and harness use it.
pub const MAX_WORKERS: usize = 4096;

/// How many workers a scheduler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerRule {
    /// Any count in `1..=MAX_WORKERS`; the default is the CPU count.
    Any,
    /// Exactly one (single-threaded schedulers); the default is 1.
    ExactlyOne,
}

impl WorkerRule {
    /// Checks `workers`; the error says what is allowed.
    pub fn check(self, workers: usize) -> Result<(), String> {
        match self {
            WorkerRule::ExactlyOne if workers != 1 => Err("exactly 1 (single-threaded scheduler)".to_string()),
            _ if workers == 0 || workers > MAX_WORKERS => Err(format!("1..={MAX_WORKERS}")),
            _ => Ok(()),
        }
    }

    /// The worker count used when none is given.
    pub fn default_workers(self) -> usize {
        match self {
            WorkerRule::ExactlyOne => 1,
            WorkerRule::Any => std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// What a scheduler is, for users and for validation. Part of the
/// extension API (see `crate::policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyInfo {
    /// The `--sched` name (kebab-case).
    pub name: &'static str,
    /// One line saying what the policy tests (`wsbench list`).
    pub about: &'static str,
    /// How many workers it runs.
    pub workers: WorkerRule,
    /// The knobs (by `--knob` name) it honours; setting any other knob on
    /// it is a build error. A registered policy usually lists
    /// [`crate::knobs::CORE_KNOBS`], the knobs the runtime core implements
    /// for every policy.
    pub knobs: &'static [&'static str],
}
