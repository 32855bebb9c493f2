//! The contract between workloads and the harness: the types the crate's
//! entry points ([`crate::run`], [`crate::validate`], the lists) take and
//! return. Items may be added, never removed.

use std::time::Duration;

use hdrhistogram::Histogram;
use wsbench_schedulers::knobs::KnobSet;
use wsbench_schedulers::topology::Imposed;

pub use crate::sched::{Sched, SchedInfo};
use crate::Error;

/// Counter values in the order of `COUNTER_NAMES` then
/// `DRIVER_COUNTER_NAMES`; `None` where the runtime cannot report one.
pub type CounterValues = Vec<(&'static str, Option<u64>)>;

/// A workload parameter (`--param name=value`).
#[derive(Debug, Clone, Copy)]
pub struct ParamInfo {
    /// kebab-case name.
    pub name: &'static str,
    /// Default as written on the CLI.
    pub default: &'static str,
    /// One line of meaning, with what is allowed.
    pub about: &'static str,
}

/// A workload.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadInfo {
    /// Stable kebab-case name.
    pub name: &'static str,
    /// One line of meaning.
    pub about: &'static str,
    /// Whether it is open-loop (uses `--rate`).
    pub open_loop: bool,
    /// In the default representative suite.
    pub in_default_suite: bool,
    /// Its parameters.
    pub params: &'static [ParamInfo],
    /// Open loop: the default offered rate is this many requests per second
    /// per worker (so defaults scale from 2 to 128 cores); `None` for
    /// closed workloads.
    pub default_rate_per_worker: Option<f64>,
    /// Has a separate server and client: `wsbench serve` and `load` run it.
    pub servable: bool,
    /// Exists to test the harness (`hang`, `crash`): never in the default
    /// suite or in `all`.
    pub test_only: bool,
    /// Aborts the process it runs in (`crash`), so it runs only in a
    /// child process of the harness, never `--in-process`.
    pub aborts_process: bool,
    /// What one latency sample is, where it is neither an open-loop
    /// request (from its intended send time to its completion) nor one
    /// benchmark iteration; legends print it.
    pub latency_sample: Option<&'static str>,
    /// In the pathology zoo (`--workload zoo`): a workload shaped after a
    /// public incident, its origin and signature in `about`.
    pub zoo: bool,
}

/// The runtime under test: scheduler, worker count and knobs, parsed and
/// checked against each other once ([`RuntimeSpec::new`]); later layers
/// read the typed values and never parse a name again.
#[derive(Debug, Clone)]
pub struct RuntimeSpec {
    sched: Sched,
    workers: usize,
    knobs: KnobSet,
    /// Core ids to pin workers to, round-robin; empty = no pinning.
    pub worker_cores: Vec<usize>,
    /// Core ids for load-generator threads; empty = no pinning.
    pub loadgen_cores: Vec<usize>,
    /// A worker grouping imposed where the machine has none (`--topology
    /// GROUPSxSIZE`; it must cover `workers`, checked by [`crate::validate`]):
    /// the victim order of `victim=topology` and the group steal counters.
    /// `None`: pinned workers take their cores' topology from sysfs.
    pub topology: Option<Imposed>,
}

impl RuntimeSpec {
    /// Checks the worker count against the scheduler's rule (and
    /// [`crate::MAX_WORKERS`]) and the knobs against the scheduler: ours
    /// take the knobs their policy honours, references none.
    pub fn new(sched: Sched, workers: usize, knobs: KnobSet) -> Result<RuntimeSpec, Error> {
        sched.worker_rule().check(workers).map_err(|allowed| Error::BadWorkers {
            sched: sched.name().to_string(),
            workers,
            allowed,
        })?;
        match sched.kind() {
            Some(kind) => knobs.check_applies(kind)?,
            None => {
                if let Some((name, value)) = knobs.pairs().next() {
                    return Err(Error::KnobOnReference {
                        sched: sched.name().to_string(),
                        name: name.to_string(),
                        value: value.to_string(),
                    });
                }
            }
        }
        Ok(RuntimeSpec { sched, workers, knobs, worker_cores: Vec::new(), loadgen_cores: Vec::new(), topology: None })
    }

    /// [`Sched::parse`] then [`RuntimeSpec::new`] with no knobs: for
    /// examples and tests, and where a name arrives as text (a child
    /// process's wire message).
    pub fn parse(sched: &str, workers: usize) -> Result<RuntimeSpec, Error> {
        RuntimeSpec::new(Sched::parse(sched)?, workers, KnobSet::new())
    }

    /// The scheduler.
    pub fn sched(&self) -> Sched {
        self.sched
    }

    /// Worker threads.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The knobs set (ours only; empty on references).
    pub fn knobs(&self) -> &KnobSet {
        &self.knobs
    }
}

/// The workload to run.
#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    /// A name from [`workloads`].
    pub name: String,
    /// `--param` pairs (validated by [`validate`]).
    pub params: Vec<(String, String)>,
    /// Offered rate in requests per second for open-loop workloads; `None`
    /// = the workload's default.
    pub rate_per_s: Option<f64>,
}

/// How long and with which seed.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Measured duration (open-loop), or a time cap for fixed-size
    /// benchmarks which instead run iterations until it is reached.
    pub duration: Duration,
    /// Warm-up before measuring; discarded.
    pub warmup: Duration,
    /// Seed for every random choice (same for every scheduler).
    pub seed: u64,
}

/// CPU use of the runtime under test over a run's measured window: the
/// process's CPU time (user + system) minus the load generator's threads
/// and the threads that existed before the runtime was built (the harness).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuUsage {
    /// CPU time of the runtime under test.
    pub cpu_ns: u64,
    /// Wall time of the window it was measured over.
    pub window: Duration,
    /// Voluntary context switches of the runtime's threads.
    pub ctx_switches_voluntary: u64,
    /// Involuntary context switches (preemptions) of the runtime's threads.
    pub ctx_switches_involuntary: u64,
    /// CFS throttling of the run's cgroup over the window; `None` when the
    /// run is in no cgroup of the harness's (no `--cpus`/`--cpuset`).
    pub throttle: Option<Throttle>,
}

pub use crate::throttle::{parse_cpu_stat, set_source as set_throttle_source, Throttle};

/// The worker count tokio's multi-thread runtime picks by default in this
/// process (its CPUs, under any cgroup quota or cpuset): read from a
/// runtime built for the purpose, not computed.
pub fn tokio_default_workers() -> Result<usize, Error> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .build()
        .map_err(|e| Error::io("building a tokio runtime to read its default worker count", e))?;
    let workers = rt.metrics().num_workers();
    rt.shutdown_background();
    Ok(workers)
}

/// What one run measured. Latencies are in nanoseconds.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Completed operations (requests, or tasks for the tokio benches).
    pub ops: u64,
    /// Failed requests (panicked handler, timeout, I/O error); `None` for
    /// closed-loop benchmarks, which send no requests.
    pub failed: Option<u64>,
    /// Measured requests sent (open loop) = ops + failed when the run
    /// drained; `None` for closed-loop benchmarks.
    pub sent: Option<u64>,
    /// Measured wall time.
    pub elapsed: Duration,
    /// The rate at which requests were actually handed to the runtime
    /// during the measured window (open loop; below the configured rate
    /// when the load generator fell behind), else `None`.
    pub offered_per_s: Option<f64>,
    /// Latency from intended start (coordinated-omission corrected).
    pub latency_ns: Histogram<u64>,
    /// Latency from actual send (uncorrected), for diagnosis.
    pub uncorrected_ns: Option<Histogram<u64>>,
    /// Arrival → first poll.
    pub queue_wait_ns: Option<Histogram<u64>>,
    /// First poll → completion.
    pub service_ns: Option<Histogram<u64>>,
    /// Schedule delay: a task scheduled (spawned or woken) → its next poll,
    /// one per task poll over the span the counters cover
    /// ([`crate::rt::Spawner::sched_delay_window`]); `None` where the
    /// runtime does not measure it (ours with `sched-delay=off`, tokio,
    /// smol).
    pub sched_delay_ns: Option<Histogram<u64>>,
    /// Counters in the order of `wsbench_schedulers::metrics::COUNTER_NAMES`
    /// then `DRIVER_COUNTER_NAMES`; `None` where the runtime cannot report it.
    pub counters: CounterValues,
    /// True when the load generator fell behind its schedule.
    pub schedule_slipped: bool,
    /// Human-readable notes (slipped schedule, failures, ...).
    pub notes: Vec<String>,
    /// Every workload parameter with the value actually used (defaults and
    /// `auto` resolved), plus `rate` for open-loop workloads.
    pub params: Vec<(String, String)>,
    /// Workload-specific results, `snake_case` names with a unit suffix
    /// (`ns_per_task`, `timer_lateness_p99_us`, `deadline_misses`, ...);
    /// the names the harness reads are in [`extra`].
    pub extras: Vec<(String, f64)>,
    /// CPU use over the measured window; `None` where it cannot be read.
    pub cpu: Option<CpuUsage>,
}

impl RunOutput {
    /// Re-checks the spin calibration at the end of a run (every run and
    /// every server goes through here): the process's calibrated rate
    /// (`spin_iters_per_ns`, which `compare` holds between two files) and
    /// `spin_drift` ([`crate::spin::drift`]) in the extras, and a note when
    /// the drift is beyond [`crate::spin::DRIFT_NOTE`].
    pub(crate) fn record_spin_drift(&mut self) {
        let d = crate::spin::drift();
        self.extras.push((extra::SPIN_ITERS_PER_NS.to_string(), crate::spin::iters_per_ns()));
        self.extras.push((extra::SPIN_DRIFT.to_string(), d));
        self.notes.extend(crate::spin::drift_note(d));
    }

    /// The output of a closed-loop run (a benchmark, a storm): `ops`
    /// operations in `elapsed`, one latency each in `latency_ns`. It sends
    /// no requests, so `failed`, `sent`, `offered_per_s` and the open-loop
    /// histograms stay blank, and it has no schedule to slip; the caller
    /// adds its counters, parameters, extras and CPU.
    pub(crate) fn closed_loop(ops: u64, elapsed: Duration, latency_ns: Histogram<u64>) -> RunOutput {
        RunOutput {
            ops,
            failed: None,
            sent: None,
            elapsed,
            offered_per_s: None,
            latency_ns,
            uncorrected_ns: None,
            queue_wait_ns: None,
            service_ns: None,
            sched_delay_ns: None,
            counters: Vec::new(),
            schedule_slipped: false,
            notes: Vec::new(),
            params: Vec::new(),
            extras: Vec::new(),
            cpu: None,
        }
    }
}

/// The names of the [`RunOutput::extras`] that the harness reads (its
/// health rule, throughput, compare's calibration check): one definition,
/// written by the workloads and read by the harness.
pub mod extra {
    /// Client connections the run asked for.
    pub const CONNECTIONS: &str = "connections";
    /// Client connections that never came up or ended before the run did.
    pub const FAILED_CONNECTIONS: &str = "failed_connections";
    /// Client threads of the load generator.
    pub const CLIENT_THREADS: &str = "client_threads";
    /// HTTP/2: the most streams one connection had in flight at once;
    /// HTTP/1.1 and tcp-rpc with `pipeline` > 1: the most requests.
    pub const MAX_STREAMS_PER_CONNECTION: &str = "max_streams_per_connection";
    /// Measured arrivals taken from the schedule.
    pub const SCHEDULED: &str = "scheduled";
    /// Scheduled arrivals never sent (`scheduled = sent + never_sent`).
    pub const NEVER_SENT: &str = "never_sent";
    /// Answers completed inside the measured window (throughput's count).
    pub const COMPLETED_IN_WINDOW: &str = "completed_in_window";
    /// Measured sends per second of the window, whenever they were sent.
    pub const SENT_PER_S: &str = "sent_per_s";
    /// Requests that missed their deadline (also counted as failed).
    pub const DEADLINE_MISSES: &str = "deadline_misses";
    /// The process's calibrated spin rate, iterations per ns.
    pub const SPIN_ITERS_PER_NS: &str = "spin_iters_per_ns";
    /// How far the spin rate moved during the run (`+0.12` = 12 % faster).
    pub const SPIN_DRIFT: &str = "spin_drift";
    /// Steady modes the run's iterations fell into (message-passing
    /// workloads, told apart by cross-worker hand-offs); above 1, the
    /// run's whole-run means would mix them and are left blank.
    pub const MODES: &str = "modes";
}
