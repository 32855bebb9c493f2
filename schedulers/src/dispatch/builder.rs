//! `Builder`: validated construction of a runtime of any kind, and
//! [`register`], which records how to start a policy from another crate.
//! The built-in policies start through `crate::builtins`' list, a
//! registered one through its entry in the table here; both on the core's
//! `runtime::start::start`.

use std::io;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::handle::{Handle, Runtime};
use crate::info::PolicyInfo;
use crate::kind::{add_custom, RegisterError, SchedulerKind};
use crate::knobs::{KnobError, KnobSet, Knobs};
use crate::policies::thread_per_core::ThreadPerCore;
use crate::policy::Policy;
use crate::runtime::shared::Shared;
use crate::runtime::start::{self, Config, ThreadHook};
use crate::topology::WorkerTopology;

/// Default blocking-pool thread limit (tokio's).
pub const DEFAULT_MAX_BLOCKING_THREADS: usize = 512;
/// Default keep-alive of an idle blocking thread (tokio's).
pub const DEFAULT_BLOCKING_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Configures and builds a [`Runtime`].
#[derive(Clone)]
pub struct Builder {
    kind: SchedulerKind,
    workers: Option<usize>,
    knobs: KnobSet,
    /// The first [`Builder::knob`] call that did not parse, reported by
    /// `validate`/`build` (the builder's setters do not fail).
    knob_error: Option<KnobError>,
    on_thread_start: Option<ThreadHook>,
    max_blocking_threads: usize,
    blocking_keep_alive: Duration,
    thread_name: String,
    driver_thread: bool,
    /// Where each worker sits, for `victim=topology` and the group steal
    /// counters; `None` = unknown.
    topology: Option<WorkerTopology>,
}

/// Why `build()` refused.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Bad worker count.
    #[error("invalid worker count {value} for scheduler `{kind}`; allowed: {allowed}")]
    Workers {
        /// Given count.
        value: usize,
        /// Policy.
        kind: SchedulerKind,
        /// What is allowed.
        allowed: String,
    },
    /// Unknown knob, bad value, or knob not applicable.
    #[error(transparent)]
    Knob(#[from] KnobError),
    /// Bad blocking-pool limit.
    #[error("invalid max_blocking_threads {0}: must be at least 1")]
    BlockingThreads(usize),
    /// A topology for another number of workers.
    #[error(
        "the worker topology covers {covers} workers but the runtime has {workers}; it must cover each worker once"
    )]
    Topology {
        /// Workers the topology places.
        covers: usize,
        /// Workers of the runtime.
        workers: usize,
    },
    /// Creating the driver or a thread failed.
    #[error("could not start the runtime: {0}")]
    Io(#[from] io::Error),
}

impl Builder {
    /// A builder for `kind` with default workers (CPU count; 1 for
    /// current-thread) and default knobs.
    pub fn new(kind: SchedulerKind) -> Builder {
        Builder {
            kind,
            workers: None,
            knobs: KnobSet::new(),
            knob_error: None,
            on_thread_start: None,
            max_blocking_threads: DEFAULT_MAX_BLOCKING_THREADS,
            blocking_keep_alive: DEFAULT_BLOCKING_KEEP_ALIVE,
            thread_name: format!("wsbench-{}", kind.name()),
            driver_thread: false,
            topology: None,
        }
    }

    /// Each worker's L3 group and NUMA node (from the cores the workers are
    /// pinned to, `WorkerTopology::from_pinning`, or imposed): the victim
    /// order of `victim=topology` and the group steal counters of the
    /// stealing policies. It must cover exactly the worker count
    /// (`build()` refuses otherwise); other policies ignore it.
    pub fn topology(mut self, topology: WorkerTopology) -> Builder {
        self.topology = Some(topology);
        self
    }

    /// Worker threads.
    pub fn workers(mut self, n: usize) -> Builder {
        self.workers = Some(n);
        self
    }

    /// Sets an ablation knob by its CLI name, parsed here; a bad name or
    /// value (or applicability, checked against the policy) is reported by
    /// `build()`.
    pub fn knob(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Builder {
        if let Err(e) = self.knobs.push(name.as_ref(), value.as_ref()) {
            self.knob_error.get_or_insert(e);
        }
        self
    }

    /// Sets every knob from an already parsed [`KnobSet`] (what the harness
    /// carries from `--knob`), replacing any set before; applicability to
    /// the policy is checked by `build()`.
    pub fn knobs(mut self, knobs: KnobSet) -> Builder {
        self.knobs = knobs;
        self.knob_error = None;
        self
    }

    /// Called on each worker thread, with its index, before it runs tasks
    /// (e.g. to pin it to a core). `thread-per-core` passes the core index.
    pub fn on_thread_start(mut self, f: impl Fn(usize) + Send + Sync + 'static) -> Builder {
        self.on_thread_start = Some(Arc::new(f));
        self
    }

    /// Blocking-pool thread limit (default 512).
    pub fn max_blocking_threads(mut self, n: usize) -> Builder {
        self.max_blocking_threads = n;
        self
    }

    /// Idle blocking threads exit after this long (default 10 s).
    pub fn blocking_keep_alive(mut self, d: Duration) -> Builder {
        self.blocking_keep_alive = d;
        self
    }

    /// `current-thread` only: whether a thread of the runtime drives its
    /// scheduler (runs tasks, I/O and timers) all the time, `block_on`
    /// then only polling its future on the calling thread. Default
    /// `false`: as in tokio's current_thread, the scheduler runs inside
    /// [`Runtime::block_on`] on the calling thread, and nothing runs tasks
    /// between `block_on` calls (spawns from other threads wait for the
    /// next one). `thread-per-core` runs each core with a driver thread.
    /// Ignored by the other policies, whose workers are threads.
    pub fn driver_thread(mut self, on: bool) -> Builder {
        self.driver_thread = on;
        self
    }

    /// Prefix of worker thread names.
    pub fn thread_name(mut self, name: impl Into<String>) -> Builder {
        self.thread_name = name.into();
        self
    }

    /// Checks everything `build()` checks, without starting anything.
    /// Returns the typed knobs and the worker count.
    pub fn validate(&self) -> Result<(Knobs, usize), BuildError> {
        let rule = self.kind.worker_rule();
        let workers = self.workers.unwrap_or_else(|| rule.default_workers());
        rule.check(workers).map_err(|allowed| BuildError::Workers { value: workers, kind: self.kind, allowed })?;
        if self.max_blocking_threads == 0 {
            return Err(BuildError::BlockingThreads(0));
        }
        if let Some(e) = &self.knob_error {
            return Err(e.clone().into());
        }
        self.knobs.check_applies(self.kind)?;
        let mut knobs = self.knobs.values().clone();
        if let Some(t) = &self.topology {
            if t.workers() != workers {
                return Err(BuildError::Topology { covers: t.workers(), workers });
            }
            knobs.topology = Some(t.clone());
        }
        Ok((knobs, workers))
    }

    /// Starts the runtime.
    pub fn build(&self) -> Result<Runtime, BuildError> {
        let (knobs, workers) = self.validate()?;
        macro_rules! build_kind {
            ([] $($variant:ident => $module:ident :: $policy:ident,)*) => {
                match self.kind {
                    $(SchedulerKind::$variant => self.start::<crate::policies::$module::$policy>(knobs, workers, Handle::from),)*
                    SchedulerKind::ThreadPerCore => self.start_thread_per_core(workers),
                    SchedulerKind::Custom(custom) => {
                        let start = starts().read().unwrap()[custom.index()];
                        start(self, knobs, workers)
                    }
                }
            };
        }
        crate::builtins::builtin_policies!(build_kind, [])
    }

    /// `thread-per-core`: `workers` `current-thread` runtimes, one per
    /// core, each with a driver thread, this builder's knobs and blocking
    /// pool settings; each core's thread marks itself as that core, then
    /// runs this builder's hook with the core index.
    fn start_thread_per_core(&self, workers: usize) -> Result<Runtime, BuildError> {
        let (tpc, parts) = ThreadPerCore::start(workers, Runtime::handle, |core, mark| {
            let hook = self.on_thread_start.clone();
            self.current_thread_core(core)
                .on_thread_start(move |_worker: usize| {
                    mark.set();
                    if let Some(hook) = &hook {
                        hook(core);
                    }
                })
                .build()
        })?;
        Ok(Runtime::from_parts(Handle::from(tpc), parts))
    }

    /// The builder of core `index` of a `thread-per-core` runtime: one
    /// `current-thread` worker with this builder's knobs and blocking pool
    /// settings, no hook (the caller sets one).
    fn current_thread_core(&self, index: usize) -> Builder {
        Builder {
            kind: SchedulerKind::CurrentThread,
            workers: Some(1),
            knobs: self.knobs.clone(),
            knob_error: self.knob_error.clone(),
            on_thread_start: None,
            max_blocking_threads: self.max_blocking_threads,
            blocking_keep_alive: self.blocking_keep_alive,
            thread_name: format!("{}-{index}", self.thread_name),
            driver_thread: true,
            topology: None,
        }
    }

    /// Starts a runtime of a registered policy: the same core, reached
    /// through a `dyn` handle (see `runtime/custom.rs`).
    fn start_policy<P: Policy>(&self, knobs: Knobs, workers: usize) -> Result<Runtime, BuildError> {
        let kind = self.kind;
        self.start::<P>(knobs, workers, move |shared| Handle::custom(shared, kind))
    }

    fn start<P: Policy>(
        &self,
        knobs: Knobs,
        workers: usize,
        make_handle: impl FnOnce(Arc<Shared<P>>) -> Handle,
    ) -> Result<Runtime, BuildError> {
        let cfg = Config {
            knobs,
            workers,
            max_blocking_threads: self.max_blocking_threads,
            blocking_keep_alive: self.blocking_keep_alive,
            thread_name: &self.thread_name,
            on_thread_start: self.on_thread_start.clone(),
            driven_by_block_on: self.kind == SchedulerKind::CurrentThread && !self.driver_thread,
        };
        let (handle, threads) = start::start::<P, Handle>(cfg, make_handle)?;
        Ok(Runtime::new(handle, threads))
    }
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("kind", &self.kind)
            .field("workers", &self.workers)
            .field("knobs", &self.knobs)
            .field("driver_thread", &self.driver_thread)
            .finish()
    }
}

/// Starts a runtime of a registered policy (a monomorphised
/// `Builder::start_policy::<P>`), with validated knobs and worker count.
type StartFn = fn(&Builder, Knobs, usize) -> Result<Runtime, BuildError>;

/// How to start each registered policy, at its [`crate::CustomKind`]'s
/// index (registration order); its name and info are `crate::kind`'s.
fn starts() -> &'static RwLock<Vec<StartFn>> {
    static STARTS: RwLock<Vec<StartFn>> = RwLock::new(Vec::new());
    &STARTS
}

/// Registers policy `P` under `info.name`, so that it parses, lists and
/// builds like a built-in ([`Builder::new`] with the returned kind) and runs
/// on the same runtime core. Part of the extension API (see
/// `crate::policy`). Register before anything parses `--sched` names (first
/// thing in `main`): every process that builds runtimes — the harness runs
/// each run in a child process of the same binary — must register the same
/// policies.
pub fn register<P: Policy>(info: PolicyInfo) -> Result<SchedulerKind, RegisterError> {
    add_custom(info, |kind| {
        let mut starts = starts().write().unwrap();
        assert_eq!(starts.len(), kind.index(), "the start table is out of step with the registered kinds");
        starts.push(Builder::start_policy::<P>);
    })
}
