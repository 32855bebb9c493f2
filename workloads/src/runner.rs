//! The entry points of a run (`workloads`, `validate`, `run`), the one
//! extension point of this crate (`register_reference`), and how each
//! runtime a `--sched` name selects is built and run (the names themselves
//! are in `sched.rs`).

use std::sync::RwLock;

use wsbench_schedulers::SchedulerKind;

use crate::affinity::{check_cores, pin_current};
use crate::api::{RunOptions, RunOutput, RuntimeSpec, WorkloadInfo, WorkloadSpec};
use crate::bench::run_bench;
use crate::catalog::WORKLOADS;
use crate::channels::{run_ping_pong, run_pipeline};
use crate::cpu_time::CpuMeter;
use crate::http::run_http;
use crate::micro::{fanout_request, skewed_request, timeouts_request, timers_request};
use crate::openloop::{run_in_process, Injection};
use crate::plan::{plan, Plan, Work};
use crate::rt::smol_rt::Smol;
use crate::rt::tokio_rt::{TokioCurrent, TokioMulti};
use crate::rt::{Rt, Spawner, SHUTDOWN_GRACE};
use crate::sched::{register, RegisterReferenceError, SchedInfo, Which};
use crate::storm::run_storm;
use crate::tcp::run_tcp;
use crate::zoo::accept::run_accept_storm;
use crate::zoo::churn::run_task_churn;
use crate::zoo::idle::run_idle_burst;
use crate::zoo::lifo::run_lifo_starvation;
use crate::zoo::timers::run_timer_churn;
use crate::Error;

/// Every workload with its parameters.
pub fn workloads() -> &'static [WorkloadInfo] {
    WORKLOADS
}

/// Checks a runtime and workload without running anything: scheduler
/// name, worker count, knobs, core ids, workload name, parameters, rate.
pub fn validate(rt: &RuntimeSpec, w: &WorkloadSpec) -> Result<(), Error> {
    which(rt)?;
    plan(rt, w)?;
    Ok(())
}

/// Builds a fresh runtime, runs the workload on it, shuts it down.
///
/// The `hang` workload never returns and `crash` aborts the process (by
/// design).
pub fn run(rt: &RuntimeSpec, w: &WorkloadSpec, opts: &RunOptions) -> Result<RunOutput, Error> {
    let which = which(rt)?;
    let plan = plan(rt, w)?;
    // Calibrate the CPU spin now, not inside the first request.
    crate::spin::iters_per_ns();
    // Before the runtime exists: every thread alive now is not its own,
    // except this one where it runs a single-threaded runtime's scheduler.
    let mut meter = CpuMeter::new();
    let native = driven_by_block_on(&plan);
    if native && single_threaded(which) {
        meter.include_calling_thread();
        // It is the worker: pinned where workers are (`--pin`).
        pin_current(&rt.worker_cores, 0);
    }
    let job = Execute { rt, plan: &plan, opts, meter: &meter };
    let mut out = with_runtime(which, rt, native, job, |info| run_fn(info)(rt, &plan, opts, &meter))?;
    out.record_spin_drift();
    Ok(out)
}

/// What to do with a freshly built runtime: `run` measures a workload on
/// it, `serve` serves on it. Every caller builds through [`with_runtime`],
/// so the runtimes a `--sched` name selects are built in one place.
pub(crate) trait WithRuntime {
    /// What the job returns.
    type Out;
    /// Does the job on `runtime`, and shuts it down.
    fn on<R: Rt>(self, runtime: R) -> Result<Self::Out, Error>;
}

/// Builds the runtime `which` names and hands it to `job`; a registered
/// reference runtime builds its own, so it goes to `registered` instead.
/// `native`: a single-threaded runtime is driven by `block_on` on the
/// calling thread (see [`driven_by_block_on`]).
pub(crate) fn with_runtime<J: WithRuntime>(
    which: Which,
    rt: &RuntimeSpec,
    native: bool,
    job: J,
    registered: impl FnOnce(&'static SchedInfo) -> Result<J::Out, Error>,
) -> Result<J::Out, Error> {
    match which {
        Which::Ours(kind) => job.on(crate::rt::ours::Ours::build_with(kind, rt, native)?),
        Which::Registered(info) => registered(info),
        Which::Tokio => job.on(TokioMulti::build(rt)?),
        Which::TokioCurrent if native => job.on(TokioCurrent::native(rt)?),
        Which::TokioCurrent => job.on(TokioCurrent::build(rt)?),
        Which::Smol => job.on(Smol::build(rt)?),
    }
}

/// `run`'s job: the workload measured on the runtime.
struct Execute<'a> {
    rt: &'a RuntimeSpec,
    plan: &'a Plan,
    opts: &'a RunOptions,
    meter: &'a CpuMeter,
}

impl WithRuntime for Execute<'_> {
    type Out = RunOutput;
    fn on<R: Rt>(self, runtime: R) -> Result<RunOutput, Error> {
        execute(runtime, self.rt, self.plan, self.opts, self.meter)
    }
}

/// Whether the single-threaded runtimes (`current-thread`,
/// `tokio-current`) run `plan` driven by `block_on` on the calling thread,
/// the way a single-threaded program uses them: tokio's benchmarks, whose
/// every iteration is a `block_on`, and the closed workloads built the same
/// way (message passing, the zoo). The other workloads hand requests to
/// the runtime from load-generator threads while the calling thread waits
/// outside `block_on`, so there a thread of the runtime sits in `block_on`
/// for the whole run instead (a service whose main thread is in
/// `block_on`).
fn driven_by_block_on(plan: &Plan) -> bool {
    matches!(
        plan.work,
        Work::Bench(_)
            | Work::PingPong(_)
            | Work::Pipeline(_)
            | Work::LifoStarvation(_)
            | Work::IdleBurst(_)
            | Work::TaskChurn(_)
            | Work::TimerChurn(_)
    )
}

/// The runtimes whose scheduler runs inside `block_on` when `native`.
fn single_threaded(which: Which) -> bool {
    matches!(which, Which::Ours(SchedulerKind::CurrentThread) | Which::TokioCurrent)
}

/// Runs `plan` on a built runtime, then shuts the runtime down.
pub(crate) fn execute<R: Rt>(
    runtime: R,
    rt: &RuntimeSpec,
    plan: &Plan,
    opts: &RunOptions,
    meter: &CpuMeter,
) -> Result<RunOutput, Error> {
    let result = dispatch(&runtime, rt, plan, opts, meter);
    // The window the workload marked (`Spawner::window_start`/`window_end`),
    // read here once for every workload.
    let sched_delay_ns = runtime.spawner().sched_delay_window();
    runtime.shutdown(SHUTDOWN_GRACE);
    let mut out = result?;
    out.sched_delay_ns = sched_delay_ns;
    let mut notes = plan.notes.clone();
    notes.append(&mut out.notes);
    out.notes = notes;
    Ok(out)
}

fn dispatch<R: Rt>(
    runtime: &R,
    rt: &RuntimeSpec,
    plan: &Plan,
    opts: &RunOptions,
    meter: &CpuMeter,
) -> Result<RunOutput, Error> {
    let params = plan.params.clone();
    match plan.work {
        Work::Bench(b) => Ok(run_bench(runtime, &b, opts, params, meter)),
        Work::Fanout(cfg, load) => {
            let spec = load.spec(rt, opts);
            let handler = move |sp: &R::Spawner, req| fanout_request(sp.clone(), req, cfg);
            Ok(run_in_process(runtime, &spec, Injection::Remote, handler, meter)?.into_output(&spec, params))
        }
        Work::Skewed(cfg, injection, load) => {
            let spec = load.spec(rt, opts);
            let handler = move |_: &R::Spawner, req| skewed_request(req, cfg);
            Ok(run_in_process(runtime, &spec, injection, handler, meter)?.into_output(&spec, params))
        }
        Work::Timers(cfg, load) => {
            let spec = load.spec(rt, opts);
            let handler = move |sp: &R::Spawner, req| timers_request(sp.clone(), req, cfg);
            let mut report = run_in_process(runtime, &spec, Injection::Remote, handler, meter)?;
            report.aux_extras("timer_lateness");
            Ok(report.into_output(&spec, params))
        }
        Work::Timeouts(cfg, load) => {
            let spec = load.spec(rt, opts);
            let handler = move |sp: &R::Spawner, req| timeouts_request(sp.clone(), req, cfg);
            let mut report = run_in_process(runtime, &spec, Injection::Remote, handler, meter)?;
            report.extras.push(("timeouts_fired".into(), report.histos.deadline_misses as f64));
            report.aux_extras("timeout_lateness");
            Ok(report.into_output(&spec, params))
        }
        Work::Tcp(handler, load, client) => {
            let spec = load.spec(rt, opts);
            Ok(run_tcp(runtime, &spec, handler, client, meter)?.into_output(&spec, params))
        }
        Work::AcceptStorm(cfg, load, client) => {
            let spec = load.spec(rt, opts);
            run_accept_storm(runtime, &spec, cfg, client, rt.workers(), params, meter)
        }
        Work::Http(cfg, load, client) => {
            let spec = load.spec(rt, opts);
            Ok(run_http(runtime, &spec, cfg, client, meter)?.into_output(&spec, params))
        }
        Work::PingPong(cfg) => Ok(run_ping_pong(runtime, cfg, opts, params, meter)),
        Work::Pipeline(cfg) => Ok(run_pipeline(runtime, cfg, opts, params, meter)),
        Work::LifoStarvation(cfg) => Ok(run_lifo_starvation(runtime, cfg, opts, params, meter)),
        Work::IdleBurst(cfg) => Ok(run_idle_burst(runtime, cfg, opts, params, meter)),
        Work::TaskChurn(cfg) => Ok(run_task_churn(runtime, cfg, opts, params, meter)),
        Work::TimerChurn(cfg) => Ok(run_timer_churn(runtime, cfg, opts, params, meter)),
        Work::Storm(cfg) => Ok(run_storm(runtime, &cfg, &rt.loadgen_cores, opts, params, meter)),
        Work::Hang => {
            let sp = runtime.spawner();
            // Never finishes, on purpose: the harness's watchdog is what
            // ends a run of `hang`.
            runtime.block_on(async move {
                sp.yield_now().await;
                futures_lite::future::pending::<()>().await;
            });
            unreachable!("the hang workload finished")
        }
        Work::Crash => {
            // Aborts the whole process from a worker, on purpose: what the
            // harness's child process must survive as a failed row.
            drop(runtime.spawner().spawn(async { std::process::abort() }));
            runtime.block_on(futures_lite::future::pending::<()>());
            unreachable!("the crash workload finished")
        }
    }
}

/// The runtime `rt` selects, after checking the core ids it pins to and
/// the imposed topology (the scheduler, worker count and knobs were
/// checked when `rt` was made).
pub(crate) fn which(rt: &RuntimeSpec) -> Result<Which, Error> {
    check_cores("worker", &rt.worker_cores)?;
    check_cores("load-generator", &rt.loadgen_cores)?;
    if let Some(t) = rt.topology.filter(|t| t.workers() != rt.workers()) {
        return Err(Error::BadTopology { topology: t.to_string(), grouped: t.workers(), workers: rt.workers() });
    }
    Ok(rt.sched().which())
}

// ---- reference runtimes registered from outside the crate ----

type RunFn = dyn Fn(&RuntimeSpec, &Plan, &RunOptions, &CpuMeter) -> Result<RunOutput, Error> + Send + Sync;

/// How each registered reference runs, filed under the address of its
/// entry in `sched.rs`'s registry; leaked on purpose (they live as long as
/// the process, a handful of them).
fn runners() -> &'static RwLock<Vec<(&'static SchedInfo, &'static RunFn)>> {
    static RUNNERS: RwLock<Vec<(&'static SchedInfo, &'static RunFn)>> = RwLock::new(Vec::new());
    &RUNNERS
}

/// The run function filed for `info`, a registered reference.
fn run_fn(info: &'static SchedInfo) -> &'static RunFn {
    let runners = runners().read().unwrap_or_else(|e| e.into_inner());
    match runners.iter().find(|(i, _)| std::ptr::eq(*i, info)) {
        Some((_, run)) => *run,
        None => unreachable!("registered reference `{}` has no run function", info.name),
    }
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
    // Held across `register`, so that no one can resolve the name before
    // its run function is filed (`run_fn` waits on this lock).
    let mut runners = runners().write().unwrap_or_else(|e| e.into_inner());
    let info = register(SchedInfo { name, about, is_reference: true, single_worker_only })?;
    let run = move |rt: &RuntimeSpec, plan: &Plan, opts: &RunOptions, meter: &CpuMeter| {
        execute(build(rt)?, rt, plan, opts, meter)
    };
    let run: &'static RunFn = Box::leak(Box::new(run));
    runners.push((info, run));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Sched;

    /// The catalog's `aborts_process` flag and the plan that aborts say
    /// the same thing, for every workload.
    #[test]
    fn the_aborts_process_flag_is_the_plan_that_aborts() {
        let rt = RuntimeSpec::new(Sched::parse("steal-half").unwrap(), 2, Default::default()).unwrap();
        for info in WORKLOADS {
            let w = WorkloadSpec { name: info.name.to_string(), params: Vec::new(), rate_per_s: None };
            let p = plan(&rt, &w).unwrap_or_else(|e| panic!("{}: {e}", info.name));
            assert_eq!(info.aborts_process, matches!(p.work, Work::Crash), "{}", info.name);
        }
    }
}
