//! The four functions the harness calls.

use std::time::Duration;

use crate::api::{RunOptions, RunOutput, RuntimeSpec, SchedInfo, WorkloadInfo, WorkloadSpec};
use crate::bench::run_bench;
use crate::catalog::WORKLOADS;
use crate::cpu::CpuMeter;
use crate::micro::{fanout_request, skewed_request, timeouts_request, timers_request};
use crate::openloop::{run_in_process, Injection};
use crate::plan::{plan, which, Plan, Which, Work};
use crate::rt::smol_rt::Smol;
use crate::rt::tokio_rt::{TokioCurrent, TokioMulti};
use crate::rt::{Rt, Spawner};
use crate::tcp::run_tcp;
use crate::Error;

/// How long shutdown waits for a task that is blocking a worker.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// Every `--sched` name: ours (the built-in policies — `global`,
/// `per-worker`, `steal-one`, `steal-half`, `current-thread`,
/// `thread-per-core` — then any registered with
/// `wsbench_schedulers::register`) and the references (`tokio`,
/// `tokio-current`, `smol`).
pub fn schedulers() -> Vec<SchedInfo> {
    crate::catalog::schedulers()
}

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
    // Before the runtime exists: every thread alive now is not its own.
    let meter = CpuMeter::new();
    let m = &meter;
    match which {
        Which::Ours(kind) => execute(crate::rt::ours::Ours::build(kind, rt)?, rt, &plan, opts, m),
        Which::Registered(r) => (r.run)(rt, &plan, opts, m),
        Which::Tokio => execute(TokioMulti::build(rt)?, rt, &plan, opts, m),
        Which::TokioCurrent => execute(TokioCurrent::build(rt)?, rt, &plan, opts, m),
        Which::Smol => execute(Smol::build(rt)?, rt, &plan, opts, m),
    }
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
    runtime.shutdown(SHUTDOWN_GRACE);
    let mut out = result?;
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
        Work::Tcp(handler, load) => {
            let spec = load.spec(rt, opts);
            Ok(run_tcp(runtime, &spec, handler, meter)?.into_output(&spec, params))
        }
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
