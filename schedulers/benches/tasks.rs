//! Task costs, ours against tokio, each measured inside a task on a worker
//! (the timing is taken inside the task, so the hand-off from the bench
//! thread is not counted):
//!
//! - `spawn_batch`: spawn [`BATCH`] tasks from inside a task, then await
//!   them all; per task (spawn + poll + complete + JoinHandle read).
//! - `spawn_await_one`: spawn one task and await it, [`BATCH`] times in a
//!   row; per task (adds the wake of the awaiting task each time).
//! - `join_await_finished`: await a JoinHandle whose task already finished
//!   (reading the output and dropping the handle); per handle.
//! - `yield_now`: one `yield_now().await` (wake, reschedule, poll); per
//!   yield.
//! - `waker_clone_drop`, `waker_clone_wake`: clone a task's waker and drop
//!   it, or clone it and wake by value, while the task runs (so every wake
//!   after the first finds the task already notified); per operation.
//!
//! Runtimes: steal-half at 1 and 2 workers, current-thread, tokio
//! multi-thread at 1 and 2 workers, tokio current-thread.
//!
//! Run: `cargo bench -p wsbench-schedulers --bench tasks` (add
//! `-- --quick` for a rough pass).

use std::future::{poll_fn, Future};
use std::hint::black_box;
use std::pin::Pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use wsbench_schedulers::{Builder, SchedulerKind};

/// Tasks per batch, and operations per timed block.
const BATCH: u64 = 1_000;
const SAMPLE_SIZE: usize = 20;
const WARM_UP: Duration = Duration::from_millis(500);
const MEASUREMENT: Duration = Duration::from_secs(1);

type Body = fn(u64) -> Pin<Box<dyn Future<Output = Duration> + Send>>;

/// The measured bodies, written once and instantiated for each runtime's
/// `spawn` and `yield_now`. Each takes criterion's iteration count and
/// returns the time the iterations took.
macro_rules! bodies {
    ($spawn:path, $yield_now:path) => {
        pub fn spawn_batch(iters: u64) -> Pin<Box<dyn Future<Output = Duration> + Send>> {
            Box::pin(async move {
                let mut handles = Vec::with_capacity(BATCH as usize);
                let start = Instant::now();
                for _ in 0..iters {
                    handles.extend((0..BATCH).map(|i| $spawn(async move { black_box(i) })));
                    for h in handles.drain(..) {
                        black_box(h.await.unwrap());
                    }
                }
                start.elapsed()
            })
        }

        pub fn spawn_await_one(iters: u64) -> Pin<Box<dyn Future<Output = Duration> + Send>> {
            Box::pin(async move {
                let start = Instant::now();
                for _ in 0..iters {
                    for i in 0..BATCH {
                        black_box($spawn(async move { black_box(i) }).await.unwrap());
                    }
                }
                start.elapsed()
            })
        }

        pub fn join_await_finished(iters: u64) -> Pin<Box<dyn Future<Output = Duration> + Send>> {
            Box::pin(async move {
                let mut total = Duration::ZERO;
                let mut handles = Vec::with_capacity(BATCH as usize);
                for _ in 0..iters {
                    handles.extend((0..BATCH).map(|i| $spawn(async move { black_box(i) })));
                    // Not timed: let every task finish first.
                    while !handles.iter().all(|h| h.is_finished()) {
                        $yield_now().await;
                    }
                    let start = Instant::now();
                    for h in handles.drain(..) {
                        black_box(h.await.unwrap());
                    }
                    total += start.elapsed();
                }
                total
            })
        }

        pub fn yield_now(iters: u64) -> Pin<Box<dyn Future<Output = Duration> + Send>> {
            Box::pin(async move {
                let start = Instant::now();
                for _ in 0..iters * BATCH {
                    $yield_now().await;
                }
                start.elapsed()
            })
        }

        pub fn waker_clone_drop(iters: u64) -> Pin<Box<dyn Future<Output = Duration> + Send>> {
            Box::pin(poll_fn(move |cx| {
                let start = Instant::now();
                for _ in 0..iters * BATCH {
                    drop(black_box(cx.waker().clone()));
                }
                Poll::Ready(start.elapsed())
            }))
        }

        pub fn waker_clone_wake(iters: u64) -> Pin<Box<dyn Future<Output = Duration> + Send>> {
            Box::pin(poll_fn(move |cx| {
                let start = Instant::now();
                for _ in 0..iters * BATCH {
                    black_box(cx.waker().clone()).wake();
                }
                Poll::Ready(start.elapsed())
            }))
        }

        pub const ALL: [(&str, super::Body); 6] = [
            ("spawn_batch", spawn_batch),
            ("spawn_await_one", spawn_await_one),
            ("join_await_finished", join_await_finished),
            ("yield_now", yield_now),
            ("waker_clone_drop", waker_clone_drop),
            ("waker_clone_wake", waker_clone_wake),
        ];
    };
}

mod ours {
    use super::*;
    bodies!(wsbench_schedulers::spawn, wsbench_schedulers::task::yield_now);
}

mod tokio_bodies {
    use super::*;
    bodies!(tokio::spawn, tokio::task::yield_now);
}

/// A runtime under test: runs one body as a task and returns its time.
enum Rt {
    Ours(wsbench_schedulers::Runtime),
    Tokio(tokio::runtime::Runtime),
}

impl Rt {
    fn run(&self, body: Body, iters: u64) -> Duration {
        match self {
            Rt::Ours(rt) => rt.block_on(rt.spawn(body(iters))).expect("bench task failed"),
            Rt::Tokio(rt) => rt.block_on(rt.spawn(body(iters))).expect("bench task failed"),
        }
    }

    fn bodies(&self) -> &'static [(&'static str, Body)] {
        match self {
            Rt::Ours(_) => &ours::ALL,
            Rt::Tokio(_) => &tokio_bodies::ALL,
        }
    }
}

fn ours(kind: SchedulerKind, workers: usize) -> Rt {
    Rt::Ours(Builder::new(kind).workers(workers).build().expect("runtime"))
}

fn tokio_multi(workers: usize) -> Rt {
    Rt::Tokio(tokio::runtime::Builder::new_multi_thread().worker_threads(workers).build().expect("tokio runtime"))
}

fn tokio_current() -> Rt {
    Rt::Tokio(tokio::runtime::Builder::new_current_thread().build().expect("tokio runtime"))
}

/// A runtime's row name and how to build it.
type RuntimeRow = (&'static str, fn() -> Rt);

fn tasks(c: &mut Criterion) {
    let runtimes: Vec<RuntimeRow> = vec![
        ("steal-half-x1", || ours(SchedulerKind::StealHalf, 1)),
        ("steal-half-x2", || ours(SchedulerKind::StealHalf, 2)),
        ("current-thread", || ours(SchedulerKind::CurrentThread, 1)),
        ("tokio-x1", || tokio_multi(1)),
        ("tokio-x2", || tokio_multi(2)),
        ("tokio-current", tokio_current),
    ];
    for (name, make) in runtimes {
        let rt = make();
        let mut g = c.benchmark_group(name);
        g.sample_size(SAMPLE_SIZE).warm_up_time(WARM_UP).measurement_time(MEASUREMENT);
        g.throughput(Throughput::Elements(BATCH));
        for &(case, body) in rt.bodies() {
            g.bench_function(case, |b| b.iter_custom(|iters| rt.run(body, iters)));
        }
        g.finish();
    }
}

criterion_group!(benches, tasks);
criterion_main!(benches);
