//! tokio's scheduler benchmarks (`benches/rt_multi_threaded.rs`, tokio
//! 1.5x), with tokio's parameters, written once against [`Rt`] /
//! [`Spawner`]. One iteration is one `b.iter` body of tokio's bench;
//! iterations repeat until the run's duration is used (at least one).
//!
//! Differences from tokio's code, none of which changes what is measured:
//! completion is awaited with `tokio::sync::Notify` instead of blocking on a
//! std channel inside `block_on` (which would deadlock a runtime whose only
//! worker runs the `block_on` future), and the busy tasks of
//! `spawn-many-remote-busy*` scale with the worker count (tokio: 2 x 4 and
//! 4 tasks for its fixed 4 workers). As in tokio, `spawn-many-local`
//! spawns from inside `block_on`, whose thread is not a worker.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, Notify};

use crate::api::{RunOptions, RunOutput};
use crate::closed::{measure, Phase};
use crate::cpu_time::CpuMeter;
use crate::recorders::{nanos, new_histogram};
use crate::rt::{Rt, Spawner};

/// Which of tokio's benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    SpawnManyLocal,
    SpawnManyRemoteIdle,
    SpawnManyRemoteBusy1,
    SpawnManyRemoteBusy2,
    YieldMany,
    PingPong,
    ChainedSpawn,
}

/// A benchmark with its (validated) sizes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bench {
    pub shape: Shape,
    /// Spawns, tasks, pings or chain depth, per iteration.
    pub size: u64,
    /// `yield-many`: yields per task.
    pub yields: u64,
    /// `busy*`: background tasks.
    pub busy_tasks: u64,
    /// `busy*`: CPU time each background step burns (tokio: 10 us).
    pub stall: Duration,
}

impl Bench {
    /// Tasks one iteration runs (for the per-task time).
    fn tasks_per_iteration(&self) -> u64 {
        match self.shape {
            // Each ping spawns a pinger and a ponger.
            Shape::PingPong => 2 * self.size,
            _ => self.size,
        }
    }
}

/// tokio's `stall()`: burn `d` of wall time, yielding the thread meanwhile.
fn stall(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::thread::yield_now();
    }
}

/// Counts tasks down; the last one wakes the waiter.
struct Countdown {
    left: AtomicUsize,
    done: Notify,
}

impl Countdown {
    fn new(n: u64) -> Arc<Countdown> {
        let n = usize::try_from(n).expect("bench sizes are validated to fit usize");
        Arc::new(Countdown { left: AtomicUsize::new(n), done: Notify::new() })
    }

    fn tick(&self) {
        // Relaxed: only the count matters; `Notify` orders the wake-up with
        // the waiter (it stores a permit if the waiter is not there yet).
        if self.left.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.done.notify_one();
        }
    }
}

fn spawn_many_local<R: Rt>(rt: &R, n: u64) {
    let sp = rt.spawner();
    let cd = Countdown::new(n);
    rt.block_on(async move {
        for _ in 0..n {
            let cd = Arc::clone(&cd);
            drop(sp.spawn_inside(async move { cd.tick() }));
        }
        cd.done.notified().await;
    });
}

fn spawn_many_remote<R: Rt>(rt: &R, n: u64) {
    let sp = rt.spawner();
    let joins: Vec<_> = (0..n).map(|_| sp.spawn(async {})).collect();
    rt.block_on(async move {
        for j in joins {
            j.await.expect("an empty task cannot fail");
        }
    });
}

fn yield_many<R: Rt>(rt: &R, tasks: u64, yields: u64) {
    let sp = rt.spawner();
    let cd = Countdown::new(tasks);
    for _ in 0..tasks {
        let (inner, cd) = (sp.clone(), Arc::clone(&cd));
        drop(sp.spawn(async move {
            for _ in 0..yields {
                inner.yield_now().await;
            }
            cd.tick();
        }));
    }
    rt.block_on(async move { cd.done.notified().await });
}

async fn ping<S: Spawner>(sp: S, cd: Arc<Countdown>) {
    let (tx1, rx1) = oneshot::channel::<()>();
    let (tx2, rx2) = oneshot::channel::<()>();
    drop(sp.spawn_inside(async move {
        rx1.await.expect("the pinger sends before it waits");
        tx2.send(()).expect("the pinger waits for this");
    }));
    tx1.send(()).expect("the ponger waits for this");
    rx2.await.expect("the ponger answers");
    cd.tick();
}

fn ping_pong<R: Rt>(rt: &R, pings: u64) {
    let sp = rt.spawner();
    let cd = Countdown::new(pings);
    rt.block_on(async move {
        let (outer, cd2) = (sp.clone(), Arc::clone(&cd));
        drop(sp.spawn_inside(async move {
            for _ in 0..pings {
                drop(outer.spawn_inside(ping(outer.clone(), Arc::clone(&cd2))));
            }
        }));
        cd.done.notified().await;
    });
}

fn chain<S: Spawner>(sp: S, cd: Arc<Countdown>, n: u64) {
    if n == 0 {
        cd.tick();
    } else {
        let next = sp.clone();
        drop(sp.spawn_inside(async move { chain(next, cd, n - 1) }));
    }
}

fn chained_spawn<R: Rt>(rt: &R, depth: u64) {
    let sp = rt.spawner();
    let cd = Countdown::new(1);
    rt.block_on(async move {
        let (next, cd2) = (sp.clone(), Arc::clone(&cd));
        drop(sp.spawn_inside(async move { chain(next, cd2, depth) }));
        cd.done.notified().await;
    });
}

/// `busy1`: tasks that yield and burn CPU, forever until `flag` clears.
fn start_busy1<S: Spawner>(sp: &S, b: &Bench, flag: &Arc<AtomicBool>) {
    for _ in 0..b.busy_tasks {
        let (inner, flag, d) = (sp.clone(), Arc::clone(flag), b.stall);
        // Relaxed: a stop request, nothing is published through it.
        drop(sp.spawn(async move {
            while flag.load(Ordering::Relaxed) {
                inner.yield_now().await;
                stall(d);
            }
        }));
    }
}

/// `busy2`: each burns CPU and spawns its successor, until `flag` clears.
fn busy2_step<S: Spawner>(sp: S, flag: Arc<AtomicBool>, d: Duration) {
    let next = sp.clone();
    drop(sp.spawn_inside(async move {
        // Relaxed: a stop request, nothing is published through it.
        if flag.load(Ordering::Relaxed) {
            stall(d);
            busy2_step(next, flag, d);
        }
    }));
}

fn start_busy2<S: Spawner>(sp: &S, b: &Bench, flag: &Arc<AtomicBool>) {
    for _ in 0..b.busy_tasks {
        let (inner, flag, d) = (sp.clone(), Arc::clone(flag), b.stall);
        drop(sp.spawn(async move { busy2_step(inner, flag, d) }));
    }
}

fn iteration<R: Rt>(rt: &R, b: &Bench) {
    match b.shape {
        Shape::SpawnManyLocal => spawn_many_local(rt, b.size),
        Shape::SpawnManyRemoteIdle | Shape::SpawnManyRemoteBusy1 | Shape::SpawnManyRemoteBusy2 => {
            spawn_many_remote(rt, b.size)
        }
        Shape::YieldMany => yield_many(rt, b.size, b.yields),
        Shape::PingPong => ping_pong(rt, b.size),
        Shape::ChainedSpawn => chained_spawn(rt, b.size),
    }
}

/// Runs warm-up iterations (discarded), then measured ones until
/// `opts.duration` is used ([`measure`]); one histogram entry per
/// iteration.
pub(crate) fn run_bench<R: Rt>(
    rt: &R,
    b: &Bench,
    opts: &RunOptions,
    params: Vec<(String, String)>,
    meter: &CpuMeter,
) -> RunOutput {
    let sp = rt.spawner();
    let busy = Arc::new(AtomicBool::new(true));
    match b.shape {
        Shape::SpawnManyRemoteBusy1 => start_busy1(&sp, b, &busy),
        Shape::SpawnManyRemoteBusy2 => start_busy2(&sp, b, &busy),
        _ => {}
    }
    let mut hist = new_histogram();
    let w = measure(rt, opts, meter, |rt, phase| {
        let t = Instant::now();
        iteration(rt, b);
        if phase == Phase::Measured {
            hist.saturating_record(nanos(t.elapsed()));
        }
    });
    // Relaxed: a stop request, see `start_busy1`.
    busy.store(false, Ordering::Relaxed);
    let per_task_ns = hist.mean() / b.tasks_per_iteration() as f64;
    let mut extras =
        vec![("ns_per_task".into(), per_task_ns), ("tasks_per_iteration".into(), b.tasks_per_iteration() as f64)];
    // Where the runtime reports it: the global-queue interval each worker
    // ended the run with (an adaptive interval can settle differently in
    // different runtime instances, e.g. 4 or 5 on spawn-many-remote-busy2,
    // which moves the time per iteration by ~12%).
    let intervals = sp.global_queue_intervals();
    if let (Some(lo), Some(hi)) = (intervals.iter().min(), intervals.iter().max()) {
        extras.push(("global_interval_min".into(), f64::from(*lo)));
        extras.push(("global_interval_max".into(), f64::from(*hi)));
    }
    RunOutput {
        counters: w.counters,
        params,
        extras,
        cpu: w.cpu,
        ..RunOutput::closed_loop(w.iterations, w.elapsed, hist)
    }
}
