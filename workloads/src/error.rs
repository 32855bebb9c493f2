//! The one error type of this crate. Every message names the bad value and
//! says what is allowed.

use wsbench_schedulers::knobs::KnobError;

/// Why a runtime or workload could not be validated, built or run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No scheduler of that name.
    #[error("unknown scheduler `{name}`; allowed: {allowed}")]
    UnknownScheduler {
        /// The given name.
        name: String,
        /// Every `--sched` name, comma-separated.
        allowed: String,
    },
    /// A name registered both as one of our policies and as a reference.
    #[error("scheduler name `{name}` is registered both as a policy and as a reference runtime; register it once")]
    AmbiguousScheduler {
        /// The name.
        name: String,
    },
    /// No workload of that name.
    #[error("unknown workload `{name}`; allowed: {allowed}")]
    UnknownWorkload {
        /// The given name.
        name: String,
        /// Every workload name, comma-separated.
        allowed: String,
    },
    /// The workload has no parameter of that name.
    #[error("unknown parameter `{name}` for workload `{workload}`; allowed: {allowed}")]
    UnknownParam {
        /// Workload name.
        workload: String,
        /// The given parameter name.
        name: String,
        /// The workload's parameter names (or "none").
        allowed: String,
    },
    /// A parameter value outside what the parameter allows, or a
    /// combination of values that describes an impossible distribution.
    #[error("bad value `{value}` for parameter `{name}` of workload `{workload}`; allowed: {allowed}")]
    BadParam {
        /// Workload name.
        workload: String,
        /// Parameter name.
        name: String,
        /// The given value.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// A rate that is not a finite positive number in range.
    #[error("bad rate `{value}` requests/s; allowed: a finite number > 0 and <= {max}")]
    BadRate {
        /// The given rate, as printed.
        value: String,
        /// Largest accepted rate.
        max: f64,
    },
    /// A worker count the scheduler cannot run with.
    #[error("bad worker count {workers} for scheduler `{sched}`; allowed: {allowed}")]
    BadWorkers {
        /// Scheduler name.
        sched: String,
        /// The given count.
        workers: usize,
        /// What is allowed.
        allowed: String,
    },
    /// A `--knob` given to a reference runtime.
    #[error("scheduler `{sched}` is a reference runtime and takes no knobs; got `{name}={value}`")]
    KnobOnReference {
        /// Scheduler name.
        sched: String,
        /// Knob name.
        name: String,
        /// Knob value.
        value: String,
    },
    /// A knob that is unknown, has a bad value, or does not apply.
    #[error(transparent)]
    Knob(#[from] KnobError),
    /// A core id to pin to that this machine does not have.
    #[error("bad core id {core} in {role} pinning list; allowed: 0..{available}")]
    BadCore {
        /// Worker or load-generator pinning.
        role: &'static str,
        /// The given id.
        core: usize,
        /// Number of cores core_affinity reports.
        available: usize,
    },
    /// An imposed worker grouping for another number of workers.
    #[error("topology `{topology}` groups {grouped} workers but the runtime has {workers}; allowed: GROUPSxSIZE with GROUPS x SIZE = the worker count")]
    BadTopology {
        /// The grouping, `GROUPSxSIZE`.
        topology: String,
        /// Workers it groups.
        grouped: usize,
        /// Workers of the runtime.
        workers: usize,
    },
    /// A runtime failed to build.
    #[error("could not build runtime `{sched}`: {message}")]
    Build {
        /// Scheduler name.
        sched: String,
        /// The builder's error, as text.
        message: String,
    },
    /// `serve` / `load` of a workload without a separate server.
    #[error("workload `{name}` has no separate server and client; allowed: {allowed}")]
    NotServable {
        /// The workload given.
        name: String,
        /// The workloads that do.
        allowed: String,
    },
    /// An I/O step of a workload (binding, connecting, spawning threads).
    #[error("I/O error while {context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io { context: context.into(), source }
    }
}
