//! `spawn-storm`: S plain OS threads outside the runtime (never its
//! workers) spawn tiny tasks as fast as the runtime accepts them, for the
//! run's duration. It measures the remote-spawn path under contention —
//! the inject queue's lock in our stealing policies, whose cost tokio
//! issue 7944 puts at 265 ns per task with one spawning thread and 633 ns
//! with 8 — so the curve that matters is 1 spawner against many.
//!
//! `blocking-storm` (the pathology zoo) is the same storm through
//! `spawn_blocking`: S outside threads hand tiny closures (each only counts
//! itself done) to the runtime's blocking pool. Origin: tokio's blocking
//! pool kept its queue behind one mutex; sharding that queue took 16
//! spawning threads from 247.8 ms to 22.4 ms and made one thread 34 %
//! slower. Signature: the time per call rising with the spawners, and the
//! pool's lock contention (`blocking_lock_contended`, ours: every
//! acquisition of the pool's lock that found it held; absent for tokio
//! and smol, which count none). Below, "task" is one closure for it, and
//! the contention reported is the blocking pool's lock, not the inject
//! queue's.
//!
//! Each spawner loops: spawn a batch of [`BATCH`] tasks (each only counts
//! itself done on its spawner's counter), timing the batch; before a batch
//! it waits (yielding its thread) while more than
//! [`IN_FLIGHT_PER_SPAWNER`] of its tasks are spawned but not finished, so
//! a runtime that runs tasks slower than they are spawned is measured at
//! the rate it sustains instead of growing its queue without bound. When
//! the duration is up, each spawner finishes its batch and waits until
//! every task it spawned has run, so the window counts every task it
//! spawned as completed (`tasks_spawned == tasks_completed`).
//!
//! Reported (`extras`):
//! - `ns_per_task` = window × spawners / tasks: the spawning threads' time
//!   per task, i.e. what a spawn costs a spawning thread when S of them
//!   spawn flat out (with 1 spawner the inverse of the throughput; with S
//!   each spawner gets a task through every `ns_per_task`). It includes
//!   waits for a full window and the final drain;
//! - `spawn_call_ns`: the mean time inside the spawn calls alone;
//! - `spawners`, `tasks_spawned`, `tasks_completed`, `spawner_waits`
//!   (times a spawner found its in-flight window full and yielded);
//! - `inject_lock_contended` (`blocking_lock_contended` for
//!   `blocking-storm`): acquisitions of that lock that found it held
//!   during the window, where the runtime counts them (ours with a locked
//!   inject queue; ours, every policy, for the blocking pool); absent
//!   elsewhere.
//!
//! The latency columns are the time per spawn call, one entry per batch
//! (the batch's time / [`BATCH`]); `ops` is tasks, so the throughput column
//! is tasks per second. Tasks capture an `Arc` of their spawner's counter
//! (as the tokio benches' tasks capture their countdown).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;

use crate::affinity::pin_current;
use crate::api::{RunOptions, RunOutput};
use crate::cpu_time::CpuMeter;
use crate::recorders::{nanos, new_histogram};
use crate::rt::{counters_delta, Rt, Spawner};

/// Tasks a spawner spawns between two clock reads and two checks of its
/// in-flight count.
pub(crate) const BATCH: u64 = 64;
/// Tasks of one spawner spawned and not yet finished, at most: bounds the
/// queue when the workers fall behind.
pub(crate) const IN_FLIGHT_PER_SPAWNER: u64 = 4096;
/// Largest `spawners` accepted.
pub(crate) const MAX_SPAWNERS: u64 = 1024;

/// What a storm's spawners spawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StormKind {
    /// `spawn-storm`: async tasks, through the runtime's remote spawn.
    Tasks,
    /// `blocking-storm`: closures, through the runtime's `spawn_blocking`.
    Blocking,
}

/// A validated `spawn-storm` or `blocking-storm`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Storm {
    pub spawners: usize,
    pub kind: StormKind,
}

impl StormKind {
    /// Spawns one task or closure that counts itself done on `done`.
    fn spawn_one<S: Spawner>(self, sp: &S, done: &Done) {
        let done = Arc::clone(done);
        // Relaxed (both): a count, read only after the drain.
        match self {
            StormKind::Tasks => drop(sp.spawn(async move {
                done.fetch_add(1, Ordering::Relaxed);
            })),
            StormKind::Blocking => drop(sp.spawn_blocking(move || {
                done.fetch_add(1, Ordering::Relaxed);
            })),
        }
    }

    /// The lock whose contention the storm reports: its extra's name and
    /// the runtime's count, where the runtime counts it.
    fn contention<S: Spawner>(self, sp: &S) -> (&'static str, Option<u64>) {
        match self {
            StormKind::Tasks => ("inject_lock_contended", sp.inject_lock_contended()),
            StormKind::Blocking => ("blocking_lock_contended", sp.blocking_lock_contended()),
        }
    }
}

/// One spawner's count of finished tasks, written by the workers that run
/// them; padded so that spawners' counters share no line.
type Done = Arc<CachePadded<AtomicU64>>;

/// What one spawner did in one phase.
struct Tally {
    spawned: u64,
    call_ns: u64,
    waits: u64,
    hist: Histogram<u64>,
}

/// The shared state of one storm.
struct Shared<'a, S> {
    sp: &'a S,
    kind: StormKind,
    stop: AtomicBool,
    barrier: Barrier,
    cores: &'a [usize],
    meter: &'a CpuMeter,
}

/// Spawns batches until `stop`, then waits until all of them ran.
fn phase<S: Spawner>(sp: &S, kind: StormKind, done: &Done, stop: &AtomicBool, spawned_before: &mut u64) -> Tally {
    let mut t = Tally { spawned: 0, call_ns: 0, waits: 0, hist: new_histogram() };
    let mut total = *spawned_before;
    loop {
        // Relaxed: the count only paces this thread; nothing is read
        // through it.
        while total - done.load(Ordering::Relaxed) + BATCH > IN_FLIGHT_PER_SPAWNER {
            t.waits += 1;
            std::thread::yield_now();
        }
        let start = Instant::now();
        for _ in 0..BATCH {
            kind.spawn_one(sp, done);
        }
        let ns = nanos(start.elapsed());
        t.call_ns += ns;
        t.hist.saturating_record((ns / BATCH).max(1));
        t.spawned += BATCH;
        total += BATCH;
        // Relaxed: a stop request; nothing is published through it.
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    // The drain: every task this spawner spawned has run. Relaxed: see
    // above; the count reaching `total` is all that is waited for.
    while done.load(Ordering::Relaxed) != total {
        std::thread::yield_now();
    }
    *spawned_before = total;
    t
}

/// One spawner thread: pinned where load generators go, its CPU time kept
/// out of the runtime's; a warm-up phase (discarded), then the measured one.
fn spawner<S: Spawner>(st: &Shared<'_, S>, index: usize) -> (Tally, u64) {
    let _guest = st.meter.guest();
    pin_current(st.cores, index);
    let done: Done = Arc::new(CachePadded::new(AtomicU64::new(0)));
    let mut spawned = 0;
    st.barrier.wait(); // warm-up starts
    drop(phase(st.sp, st.kind, &done, &st.stop, &mut spawned));
    st.barrier.wait(); // warm-up drained
    let before = done.load(Ordering::Relaxed);
    st.barrier.wait(); // measuring starts
    let t = phase(st.sp, st.kind, &done, &st.stop, &mut spawned);
    // Relaxed: this thread's own drain saw the count reach `spawned`.
    let completed = done.load(Ordering::Relaxed) - before;
    st.barrier.wait(); // measured tasks drained
    (t, completed)
}

/// Runs the storm: warm-up, then the measured window, each ended by every
/// spawner draining its tasks.
pub(crate) fn run_storm<R: Rt>(
    rt: &R,
    cfg: &Storm,
    cores: &[usize],
    opts: &RunOptions,
    params: Vec<(String, String)>,
    meter: &CpuMeter,
) -> RunOutput {
    let sp = rt.spawner();
    let (kind, barrier) = (cfg.kind, Barrier::new(cfg.spawners + 1));
    let shared = Shared { sp: &sp, kind, stop: AtomicBool::new(false), barrier, cores, meter };
    let st = &shared;
    let (elapsed, counters, (lock_name, contended), cpu, tallies) = std::thread::scope(|s| {
        let threads: Vec<_> = (0..cfg.spawners).map(|i| s.spawn(move || spawner(st, i))).collect();
        // Relaxed (every store below): stop requests, ordered with the
        // spawners' phases by the barrier.
        st.barrier.wait(); // warm-up starts
        std::thread::sleep(opts.warmup);
        st.stop.store(true, Ordering::Relaxed);
        st.barrier.wait(); // warm-up drained
        st.stop.store(false, Ordering::Relaxed);
        let counters_start = sp.window_start();
        let (lock_name, contended_start) = kind.contention(&sp);
        meter.start();
        let t0 = Instant::now();
        st.barrier.wait(); // measuring starts
        std::thread::sleep(opts.duration);
        st.stop.store(true, Ordering::Relaxed);
        st.barrier.wait(); // measured tasks drained
        let elapsed = t0.elapsed();
        let counters = counters_delta(&counters_start, &sp.window_end());
        let contended = kind.contention(&sp).1.zip(contended_start).map(|(e, s)| e.saturating_sub(s));
        let cpu = meter.finish();
        let tallies: Vec<(Tally, u64)> =
            threads.into_iter().map(|t| t.join().expect("a spawner thread panicked")).collect();
        (elapsed, counters, (lock_name, contended), cpu, tallies)
    });
    let mut hist = new_histogram();
    let (mut spawned, mut completed, mut call_ns, mut waits) = (0u64, 0u64, 0u64, 0u64);
    for (t, c) in &tallies {
        hist.add(&t.hist).expect("histograms share bounds");
        spawned += t.spawned;
        completed += c;
        call_ns += t.call_ns;
        waits += t.waits;
    }
    let per_task = |ns: f64| ns / completed.max(1) as f64;
    let mut extras = vec![
        ("ns_per_task".into(), per_task(elapsed.as_nanos() as f64 * cfg.spawners as f64)),
        ("spawn_call_ns".into(), call_ns as f64 / spawned.max(1) as f64),
        ("spawners".into(), cfg.spawners as f64),
        ("tasks_spawned".into(), spawned as f64),
        ("tasks_completed".into(), completed as f64),
        ("spawner_waits".into(), waits as f64),
    ];
    if let Some(c) = contended {
        extras.push((lock_name.into(), c as f64));
    }
    RunOutput { counters, params, extras, cpu, ..RunOutput::closed_loop(completed, elapsed, hist) }
}
