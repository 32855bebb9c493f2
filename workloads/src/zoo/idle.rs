//! `idle-burst`: bursts of a dozen-odd short jobs, about 200 µs of serial
//! work, then about 3 ms idle — a control loop.
//!
//! Origin: a production trace of a control loop of this shape, on which a
//! work-stealing pool spent more CPU searching for work and parking than
//! running the jobs. Signature: CPU burned per burst outside the jobs
//! (`overhead_cpu_us_per_burst`) and wake-ups per burst (the harness's
//! `wakeups_per_op`, `ops` being bursts); `idle=park|backoff` moves both.
//!
//! An iteration spawns a control task from `block_on`; for each of
//! `bursts` bursts it spawns `jobs` jobs from its worker, each spinning
//! `job-us` of calibrated CPU work ([`crate::spin`]), waits for all of
//! them, then sleeps `idle-us` on the runtime's timer. Each job reads its
//! thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`) around its spin, so the
//! jobs' CPU is measured, not assumed; the overhead is the runtime's CPU
//! over the window (the harness's `cpu_ms`) minus the jobs' CPU, per
//! burst. Where a clock cannot be read the overhead is left out.
//!
//! Reported: `ops` is bursts, one latency entry each (first spawn to last
//! job done); extras `overhead_cpu_us_per_burst`, `job_cpu_us_per_burst`,
//! `bursts`, `jobs_run` (= bursts × jobs).

use std::time::{Duration, Instant};

use crate::api::{RunOptions, RunOutput};
use crate::closed::{measure, Phase};
use crate::cpu_time::CpuMeter;
use crate::recorders::{nanos, new_histogram};
use crate::rt::{Rt, Spawner};
use crate::spin::spin_ns;

/// Largest `jobs` per burst.
pub(crate) const MAX_JOBS: u64 = 100_000;
/// Largest `job-us`.
pub(crate) const MAX_JOB_US: u64 = 1_000_000;
/// Largest `idle-us`.
pub(crate) const MAX_IDLE_US: u64 = 10_000_000;
/// Largest `bursts` per iteration.
pub(crate) const MAX_BURSTS: u64 = 1_000_000;

/// A validated `idle-burst`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IdleBurst {
    pub jobs: u64,
    pub job: Duration,
    pub idle: Duration,
    pub bursts: u64,
}

/// The calling thread's CPU clock in ns; `None` when unreadable.
fn thread_cpu_ns() -> Option<u64> {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(u64::try_from(t.tv_sec()).ok()? * 1_000_000_000 + u64::try_from(t.tv_nsec()).ok()?)
}

/// One job: spins, returns the CPU its spin took (`None`: unreadable).
fn job(ns: u64) -> Option<u64> {
    let before = thread_cpu_ns();
    spin_ns(ns);
    Some(thread_cpu_ns()?.saturating_sub(before?))
}

/// What one iteration's control loop measured.
struct Loop {
    burst_ns: Vec<u64>,
    jobs_run: u64,
    job_cpu_ns: Option<u64>,
}

async fn control<S: Spawner>(sp: S, cfg: IdleBurst) -> Loop {
    let mut l = Loop { burst_ns: Vec::new(), jobs_run: 0, job_cpu_ns: Some(0) };
    let ns = nanos(cfg.job);
    for _ in 0..cfg.bursts {
        let t = Instant::now();
        let joins: Vec<_> = (0..cfg.jobs).map(|_| sp.spawn_inside(async move { job(ns) })).collect();
        for j in joins {
            let cpu = j.await.expect("a job does not fail");
            l.jobs_run += 1;
            l.job_cpu_ns = l.job_cpu_ns.zip(cpu).map(|(a, b)| a + b);
        }
        l.burst_ns.push(nanos(t.elapsed()).max(1));
        sp.sleep(cfg.idle).await;
    }
    l
}

/// Runs `idle-burst`.
pub(crate) fn run_idle_burst<R: Rt>(
    rt: &R,
    cfg: IdleBurst,
    opts: &RunOptions,
    params: Vec<(String, String)>,
    meter: &CpuMeter,
) -> RunOutput {
    let mut hist = new_histogram();
    let (mut jobs_run, mut job_cpu_ns) = (0u64, Some(0u64));
    let w = measure(rt, opts, meter, |rt, phase| {
        let sp = rt.spawner();
        let l = rt.block_on(async move {
            let inner = sp.clone();
            sp.spawn_inside(control(inner, cfg)).await.expect("the control task does not fail")
        });
        if phase == Phase::Measured {
            for ns in &l.burst_ns {
                hist.saturating_record(*ns);
            }
            jobs_run += l.jobs_run;
            job_cpu_ns = job_cpu_ns.zip(l.job_cpu_ns).map(|(a, b)| a + b);
        }
    });
    let bursts = hist.len();
    let per_burst_us = |ns: u64| ns as f64 / 1e3 / bursts.max(1) as f64;
    let mut extras = vec![("bursts".to_string(), bursts as f64), ("jobs_run".to_string(), jobs_run as f64)];
    if let Some(jobs_ns) = job_cpu_ns {
        extras.push(("job_cpu_us_per_burst".to_string(), per_burst_us(jobs_ns)));
        // Left out, not clamped, if the two clocks disagree.
        if let Some(overhead_ns) = w.cpu.and_then(|cpu| cpu.cpu_ns.checked_sub(jobs_ns)) {
            extras.push(("overhead_cpu_us_per_burst".to_string(), per_burst_us(overhead_ns)));
        }
    }
    extras.push(("iterations".to_string(), w.iterations as f64));
    let out = RunOutput::closed_loop(bursts, w.elapsed, hist);
    RunOutput { counters: w.counters, params, extras, cpu: w.cpu, ..out }
}
