//! `task-churn`: tasks on every worker spawn and complete tiny tasks in a
//! tight loop.
//!
//! Origin: a 2026 report found a query engine bound by contention in
//! tokio's task registry (the list of every live task, locked on each
//! spawn and completion): 4.6x faster at 6 cores and about 10x at 10 once
//! it was removed. Signature: spawn + complete cost per task rising with
//! the worker count, with the registry's lock contention
//! (`task_registry_contended`, ours: acquisitions of the owned-tasks
//! list's shard locks that found the lock held). Needs more cores than
//! spawners contending for one shard to show: at 2 workers it is small.
//!
//! An iteration spawns `spawners` churner tasks from `block_on`; each, on
//! whatever worker runs it, spawns `batch` empty tasks from there (the
//! local-spawn path) and awaits them, until it has spawned `tasks`.
//!
//! Reported: `ops` is tasks completed (spawners × tasks per iteration);
//! the latency histogram holds one entry per batch, its time / `batch`;
//! extras `ns_per_task` (measured time × spawners / tasks: one task's
//! spawn and completion as one churner sees it), `tasks_spawned`,
//! `tasks_completed` (equal), `spawners`, `task_registry_contended`
//! (absent where the runtime does not count it).

use std::time::Instant;

use hdrhistogram::Histogram;

use crate::api::{RunOptions, RunOutput};
use crate::closed::{measure, Phase};
use crate::cpu_time::CpuMeter;
use crate::recorders::{nanos, new_histogram};
use crate::rt::{Rt, Spawner};

/// Largest `spawners`.
pub(crate) const MAX_SPAWNERS: u64 = 1024;
/// Largest `tasks` per spawner per iteration.
pub(crate) const MAX_TASKS: u64 = 10_000_000;
/// Largest `batch`.
pub(crate) const MAX_BATCH: u64 = 65_536;

/// A validated `task-churn`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskChurn {
    pub spawners: u64,
    pub tasks: u64,
    pub batch: u64,
}

/// What one churner did: tasks spawned and completed, batch times.
struct Churned {
    spawned: u64,
    completed: u64,
    batch_ns: Vec<u64>,
}

async fn churner<S: Spawner>(sp: S, cfg: TaskChurn) -> Churned {
    let mut c = Churned { spawned: 0, completed: 0, batch_ns: Vec::new() };
    while c.spawned < cfg.tasks {
        let n = cfg.batch.min(cfg.tasks - c.spawned);
        let t = Instant::now();
        let joins: Vec<_> = (0..n).map(|_| sp.spawn_inside(async {})).collect();
        c.spawned += n;
        for j in joins {
            j.await.expect("an empty task does not fail");
            c.completed += 1;
        }
        c.batch_ns.push((nanos(t.elapsed()) / n).max(1));
    }
    c
}

fn iteration<R: Rt>(rt: &R, cfg: TaskChurn) -> Vec<Churned> {
    let sp = rt.spawner();
    rt.block_on(async move {
        let joins: Vec<_> = (0..cfg.spawners).map(|_| sp.spawn_inside(churner(sp.clone(), cfg))).collect();
        let mut out = Vec::with_capacity(joins.len());
        for j in joins {
            out.push(j.await.expect("a churner does not fail"));
        }
        out
    })
}

/// Runs `task-churn`.
pub(crate) fn run_task_churn<R: Rt>(
    rt: &R,
    cfg: TaskChurn,
    opts: &RunOptions,
    params: Vec<(String, String)>,
    meter: &CpuMeter,
) -> RunOutput {
    let mut hist: Histogram<u64> = new_histogram();
    let (mut spawned, mut completed) = (0u64, 0u64);
    let w = measure(rt, opts, meter, |rt, phase| {
        let churned = iteration(rt, cfg);
        if phase == Phase::Measured {
            for c in &churned {
                spawned += c.spawned;
                completed += c.completed;
                c.batch_ns.iter().for_each(|ns| hist.saturating_record(*ns));
            }
        }
    });
    let mut extras = vec![
        ("ns_per_task".to_string(), w.elapsed.as_nanos() as f64 * cfg.spawners as f64 / completed.max(1) as f64),
        ("tasks_spawned".to_string(), spawned as f64),
        ("tasks_completed".to_string(), completed as f64),
        ("spawners".to_string(), cfg.spawners as f64),
        ("iterations".to_string(), w.iterations as f64),
    ];
    if let Some(c) = w.task_registry_contended {
        extras.push(("task_registry_contended".to_string(), c as f64));
    }
    let out = RunOutput::closed_loop(completed, w.elapsed, hist);
    RunOutput { counters: w.counters, params, extras, cpu: w.cpu, ..out }
}
