//! What measuring costs a request: the instrumentation on its path.
//!
//! - `record/one_request`: the latency recorder, as `serve` uses it for one
//!   measured request (the thread's own slot: lock, four histogram records);
//! - `clock/instant_now`: one `Instant::now()` (a request reads it twice:
//!   first poll and completion);
//! - `counters/per_poll`: a worker's counters for one task poll (`polls`
//!   and `busy_ns` in its own cache-padded block, load + store, no RMW).
//!
//! Run: `cargo bench -p wsbench-workloads --bench instrumentation`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use wsbench_schedulers::__bench::{count_poll, counter_blocks};
use wsbench_workloads::__bench::Recorder;

/// Workers whose counter blocks exist while one of them counts.
const WORKERS: usize = 128;

fn record(c: &mut Criterion) {
    let recorder = Recorder::default();
    let t0 = Instant::now();
    let mut i = 0u64;
    c.bench_function("record/one_request", |b| {
        b.iter(|| {
            // Latencies spread over 1..~1000 us so the histogram's buckets vary.
            i = i.wrapping_add(7919);
            let done = t0 + Duration::from_nanos(1_000 + (i % 1_000_000));
            recorder.record(black_box(t0), t0, t0, black_box(done));
        })
    });
}

fn clock(c: &mut Criterion) {
    c.bench_function("clock/instant_now", |b| b.iter(|| black_box(Instant::now())));
}

fn counters(c: &mut Criterion) {
    let blocks = counter_blocks(WORKERS);
    c.bench_function("counters/per_poll", |b| {
        b.iter(|| count_poll(black_box(&blocks), black_box(3), black_box(1_234)))
    });
}

criterion_group!(benches, record, clock, counters);
criterion_main!(benches);
