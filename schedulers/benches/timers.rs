//! Timer costs.
//!
//! - `wheel/insert_cancel`: one insert plus one cancel on a wheel that
//!   already holds `POPULATION` timers (the wheel alone: no lock, no clock).
//! - `wheel/advance_idle_1ms`: one 1 ms step with `POPULATION` timers all far
//!   in the future (what a park costs when nothing is due).
//! - `wheel/advance_fire`: advancing 1 ms at a time through `POPULATION`
//!   timers spread over `SPREAD_MS`, firing all of them (reported per timer).
//! - `sleep/insert_cancel`: `time::sleep` polled once (filed in the runtime's
//!   wheel under its mutex) then dropped (cancelled), through the public API.
//!
//! Run: `cargo bench -p wsbench-schedulers --bench timers`.

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[allow(dead_code, unused_imports)] // reason: the bench uses part of the wheel; its unit tests are compiled in too
#[path = "../src/driver/wheel.rs"]
mod wheel;

use wheel::Wheel;

/// Timers already in the wheel while measuring.
const POPULATION: usize = 10_000;
/// Their deadlines spread over this many ms (10 s).
const SPREAD_MS: u64 = 10_000;
/// Deadlines of the timers inserted and cancelled (a typical request timeout).
const INSERT_AHEAD_MS: u64 = 100;
const SEED: u64 = 42;
/// Deadlines of the idle population: far beyond anything the bench reaches.
const FAR_TICK: u64 = 1 << 40;

fn populated(now: u64) -> Wheel<()> {
    let mut rng = StdRng::seed_from_u64(SEED);
    let mut w = Wheel::new();
    w.advance(now, |_| {});
    for _ in 0..POPULATION {
        w.insert(now + 1 + rng.random_range(0..SPREAD_MS), ()).expect("future deadline");
    }
    w
}

fn wheel_benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("wheel");

    g.throughput(Throughput::Elements(1));
    let mut w = populated(0);
    let mut when = 1;
    g.bench_function("insert_cancel", |b| {
        b.iter(|| {
            // Cycle deadlines through every level-0/level-1 slot.
            when = when % SPREAD_MS + 1;
            let key = w.insert(black_box(when + INSERT_AHEAD_MS), ()).expect("future deadline");
            black_box(w.remove(key));
        })
    });

    let mut far: Wheel<()> = Wheel::new();
    for i in 0..POPULATION as u64 {
        far.insert(FAR_TICK + i, ()).expect("future deadline");
    }
    let mut far_now = 0;
    g.bench_function("advance_idle_1ms", |b| {
        b.iter(|| {
            far_now += 1;
            black_box(far.advance(far_now, |_| {}))
        })
    });

    g.throughput(Throughput::Elements(POPULATION as u64));
    g.bench_function("advance_fire", |b| {
        b.iter_batched(
            || populated(0),
            |mut w| {
                let mut fired = 0;
                for now in 1..=SPREAD_MS {
                    fired += w.advance(now, |_| {});
                }
                assert_eq!(fired, POPULATION);
                w
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn sleep_benches(c: &mut Criterion) {
    use wsbench_schedulers::task::yield_now;
    use wsbench_schedulers::time::{sleep, Sleep};
    use wsbench_schedulers::{Builder, SchedulerKind};

    /// Yield this often so the task's cooperative budget never runs out.
    const YIELD_EVERY: u64 = 64;

    fn poll_once(s: &mut Sleep) -> bool {
        Pin::new(s).poll(&mut Context::from_waker(Waker::noop())).is_pending()
    }

    let rt = Builder::new(SchedulerKind::CurrentThread).workers(1).build().expect("runtime");
    // A realistic population in the runtime's wheel while measuring.
    let population: Vec<Sleep> = rt.block_on(async {
        let mut v = Vec::with_capacity(POPULATION);
        for i in 0..POPULATION as u64 {
            let mut s = sleep(Duration::from_millis(SPREAD_MS + i % SPREAD_MS));
            assert!(poll_once(&mut s));
            v.push(s);
            if i % YIELD_EVERY == 0 {
                yield_now().await;
            }
        }
        v
    });
    let mut g = c.benchmark_group("sleep");
    g.throughput(Throughput::Elements(1));
    g.bench_function("insert_cancel", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async move {
                let start = Instant::now();
                for i in 0..iters {
                    let mut s = sleep(Duration::from_millis(INSERT_AHEAD_MS));
                    black_box(poll_once(&mut s));
                    drop(s);
                    if i % YIELD_EVERY == 0 {
                        yield_now().await;
                    }
                }
                start.elapsed()
            })
        })
    });
    g.finish();
    drop(population);
}

criterion_group!(benches, wheel_benches, sleep_benches);
criterion_main!(benches);
