//! Micro-benchmarks of the `steal-half` local run queue and the `bwos`
//! block queue (ids `bwos...`, cases in `queues/bwos.rs`) against
//! crossbeam-deque 0.8, operation by operation.
//!
//! `cargo bench -p wsbench-schedulers --bench queues`. Each benchmark's
//! "iteration" is named in its doc; per-task figures divide by the tasks one
//! iteration moves (criterion also prints them as elements/s).
//!
//! Time is the benchmark thread's CPU time ([`ThreadCpuTime`]), not wall
//! time, so that time spent descheduled by other load on a shared machine is
//! not counted. Steal and overflow benchmarks refill their rings outside the
//! timed region and time many operations per clock read (each read is a
//! system call).

use std::cell::RefCell;
use std::hint::black_box;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use crossbeam_deque::{Stealer, Worker};
use wsbench_schedulers::__bench::{local, Local, Overflow, Steal, StealLimit};

#[path = "queues/bwos.rs"]
mod bwos;

/// Ring size under test: tokio's, and the `queue-capacity` default.
const RING_CAPACITY: usize = 256;

/// Tasks pushed then popped per owner iteration: half a ring, so ours never
/// overflows in the owner benchmarks.
const OWNER_BATCH: usize = RING_CAPACITY / 2;

/// What steal-half moves from a full ring (the ceiling of half of it).
const HALF: usize = RING_CAPACITY / 2;

/// Rings prepared per timed region in the steal and overflow benchmarks.
/// 64 pairs of 256-slot rings of 8-byte tasks are 256 KiB: warm in L2.
const PREPARED: usize = 64;

/// Single-task steals from one full ring before it is refilled; it stays at
/// least half full throughout.
const SINGLE_STEALS_PER_FILL: u64 = HALF as u64;

/// A task: tokio's are one pointer wide.
type Task = usize;

type Bench = Criterion<ThreadCpuTime>;

/// Criterion measurement: CPU time of the calling thread, in nanoseconds.
struct ThreadCpuTime(WallTime);

impl Measurement for ThreadCpuTime {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        thread_cpu_time()
    }

    fn end(&self, start: Duration) -> Duration {
        thread_cpu_time() - start
    }

    fn add(&self, v1: &Duration, v2: &Duration) -> Duration {
        *v1 + *v2
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        // Same unit (nanoseconds) as wall time, so the same formatting.
        self.0.formatter()
    }
}

/// CPU time consumed by this thread so far.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_cpu_time() -> Duration {
    /// `struct timespec` on 64-bit Linux (glibc and musl).
    #[repr(C)]
    struct Timespec {
        seconds: i64,
        nanoseconds: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, now: *mut Timespec) -> i32;
    }
    /// From `<time.h>`.
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut now = Timespec { seconds: 0, nanoseconds: 0 };
    // SAFETY: `now` is a valid, writable `struct timespec` for the duration of
    // the call, and the C library linked by std provides `clock_gettime`.
    let status = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    let nanoseconds = u32::try_from(now.nanoseconds).expect("tv_nsec below 1e9");
    Duration::new(now.seconds.unsigned_abs(), nanoseconds)
}

/// Elsewhere: wall time since the first call.
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_cpu_time() -> Duration {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// An overflow sink that keeps what it gets in a `Vec` (cleared outside the
/// timed region), so the benchmark measures the queue's side of overflow.
#[derive(Default)]
struct VecSink(RefCell<Vec<Task>>);

impl Overflow<Task> for VecSink {
    fn push(&self, task: Task) {
        self.0.borrow_mut().push(task);
    }

    fn push_batch<I: Iterator<Item = Task>>(&self, tasks: I) {
        self.0.borrow_mut().extend(tasks);
    }
}

/// Registers benchmark `id`, one iteration being one `op` on a state that
/// `prepare` set up (see [`timed`]).
fn bench_prepared<S>(
    group: &mut BenchmarkGroup<'_, ThreadCpuTime>,
    id: &str,
    states: &mut [S],
    ops_per_state: u64,
    prepare: fn(&mut S),
    op: impl Fn(&mut S),
) {
    group.bench_function(id, |b| b.iter_custom(|iters| timed(iters, states, ops_per_state, prepare, &op)));
}

/// Runs `iters` operations: `prepare` on every state (untimed), then, in one
/// timed region, `ops_per_state` operations on each state in turn; repeats
/// until done.
fn timed<S>(
    iters: u64,
    states: &mut [S],
    ops_per_state: u64,
    mut prepare: impl FnMut(&mut S),
    mut op: impl FnMut(&mut S),
) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        states.iter_mut().for_each(&mut prepare);
        let start = thread_cpu_time();
        for state in states.iter_mut() {
            let count = left.min(ops_per_state);
            (0..count).for_each(|_| op(state));
            left -= count;
        }
        total += thread_cpu_time() - start;
    }
    total
}

/// The owner's round: push `tasks`, then pop until empty.
fn ours_push_pop(local: &mut Local<Task>, sink: &VecSink, tasks: Range<usize>) {
    for task in tasks {
        local.push_back_or_overflow(black_box(task), sink);
    }
    while let Some(task) = local.pop() {
        black_box(task);
    }
}

fn crossbeam_push_pop(worker: &Worker<Task>, tasks: Range<usize>) {
    for task in tasks {
        worker.push(black_box(task));
    }
    while let Some(task) = worker.pop() {
        black_box(task);
    }
}

fn ours_full(src: &mut Local<Task>) {
    let missing = src.remaining_slots();
    src.push_back(0..missing);
}

fn ours_empty(local: &mut Local<Task>) {
    while local.pop().is_some() {}
}

fn crossbeam_full(src: &Worker<Task>) {
    while src.len() < RING_CAPACITY {
        src.push(0);
    }
}

fn crossbeam_empty(worker: &Worker<Task>) {
    while worker.pop().is_some() {}
}

/// One owner iteration: push a batch, pop it all.
fn owner(c: &mut Bench) {
    let mut group = c.benchmark_group("owner_push_pop");
    group.throughput(Throughput::Elements(OWNER_BATCH as u64));
    let sink = VecSink::default();
    let (mut ours, _steal) = local::<Task>(RING_CAPACITY);
    group.bench_function(BenchmarkId::new("ours", OWNER_BATCH), |b| {
        b.iter(|| {
            ours_push_pop(&mut ours, &sink, 0..OWNER_BATCH);
        })
    });
    bwos::owner(&mut group, &sink);
    assert!(sink.0.borrow().is_empty(), "owner benchmark overflowed");
    for (name, worker) in [("crossbeam_fifo", Worker::new_fifo()), ("crossbeam_lifo", Worker::new_lifo())] {
        group.bench_function(BenchmarkId::new(name, OWNER_BATCH), |b| {
            b.iter(|| {
                crossbeam_push_pop(&worker, 0..OWNER_BATCH);
            })
        });
    }
    group.finish();
}

/// A victim ring, its steal handle, and the thief's own ring.
type OursPair = (Local<Task>, Steal<Task>, Local<Task>);
type CrossbeamPair = (Worker<Task>, Stealer<Task>, Worker<Task>);

fn ours_pairs() -> Vec<OursPair> {
    (0..PREPARED)
        .map(|_| {
            let (src, steal) = local(RING_CAPACITY);
            (src, steal, local(RING_CAPACITY).0)
        })
        .collect()
}

fn crossbeam_pairs() -> Vec<CrossbeamPair> {
    (0..PREPARED)
        .map(|_| {
            let src = Worker::new_fifo();
            let stealer = src.stealer();
            (src, stealer, Worker::new_fifo())
        })
        .collect()
}

/// Untimed: a full victim, an empty thief.
fn prepare_ours((src, _, dst): &mut OursPair) {
    ours_empty(dst);
    ours_full(src);
}

fn prepare_crossbeam((src, _, dst): &mut CrossbeamPair) {
    crossbeam_empty(dst);
    crossbeam_full(src);
}

/// One iteration: one single-task steal from a full ring.
fn steal_one(c: &mut Bench) {
    let mut group = c.benchmark_group("steal_one");
    group.throughput(Throughput::Elements(1));
    let (mut ours, mut theirs) = (ours_pairs(), crossbeam_pairs());
    bench_prepared(&mut group, "ours", &mut ours, SINGLE_STEALS_PER_FILL, prepare_ours, |(_, steal, dst)| {
        black_box(steal.steal_into(dst, StealLimit::AtMost(1)));
    });
    bench_prepared(
        &mut group,
        "crossbeam",
        &mut theirs,
        SINGLE_STEALS_PER_FILL,
        prepare_crossbeam,
        |(_, stealer, _)| {
            let _ = black_box(stealer.steal());
        },
    );
    bwos::steal_one(&mut group);
    group.finish();
}

/// One iteration: one batch steal from a full ring; half of it (128 tasks)
/// unless the id says crossbeam's default batch.
fn steal_batch(c: &mut Bench) {
    let mut group = c.benchmark_group("steal_batch");
    let (mut ours, mut theirs) = (ours_pairs(), crossbeam_pairs());
    group.throughput(Throughput::Elements(HALF as u64));
    bench_prepared(&mut group, "half_of_256/ours", &mut ours, 1, prepare_ours, |(_, steal, dst)| {
        black_box(steal.steal_into(dst, StealLimit::Half));
    });
    bench_prepared(
        &mut group,
        "half_of_256/crossbeam_batch_and_pop",
        &mut theirs,
        1,
        prepare_crossbeam,
        |(_, stealer, dst)| {
            let _ = black_box(stealer.steal_batch_with_limit_and_pop(dst, HALF));
        },
    );
    bench_prepared(
        &mut group,
        "half_of_256/crossbeam_batch",
        &mut theirs,
        1,
        prepare_crossbeam,
        |(_, stealer, dst)| {
            let _ = black_box(stealer.steal_batch_with_limit(dst, HALF));
        },
    );
    group.throughput(Throughput::Elements(CROSSBEAM_DEFAULT_BATCH as u64));
    bench_prepared(
        &mut group,
        "default_32/crossbeam_batch_and_pop",
        &mut theirs,
        1,
        prepare_crossbeam,
        |(_, stealer, dst)| {
            let _ = black_box(stealer.steal_batch_and_pop(dst));
        },
    );
    bench_prepared(&mut group, "default_32/crossbeam_batch", &mut theirs, 1, prepare_crossbeam, |(_, stealer, dst)| {
        let _ = black_box(stealer.steal_batch(dst));
    });
    bwos::steal_block(&mut group);
    group.finish();
}

/// crossbeam-deque's `MAX_BATCH` for `steal_batch` / `steal_batch_and_pop`.
const CROSSBEAM_DEFAULT_BATCH: usize = 32;

/// One iteration: one push into a full ring, which spills half of it plus the
/// new task (129 tasks) into the sink. crossbeam grows instead; no peer.
fn overflow(c: &mut Bench) {
    let mut group = c.benchmark_group("overflow");
    group.throughput(Throughput::Elements(HALF as u64 + 1));
    let mut rings: Vec<(Local<Task>, Steal<Task>, VecSink)> = (0..PREPARED)
        .map(|_| {
            let (src, steal) = local(RING_CAPACITY);
            let sink = VecSink(RefCell::new(Vec::with_capacity(HALF + 1)));
            (src, steal, sink)
        })
        .collect();
    bench_prepared(
        &mut group,
        "full_256/ours",
        &mut rings,
        1,
        |(src, _, sink)| {
            sink.0.borrow_mut().clear();
            ours_full(src);
        },
        |(src, _, sink)| {
            black_box(src.push_back_or_overflow(black_box(0), sink));
        },
    );
    group.finish();
}

/// One iteration: the owner pushes a batch and pops until empty while one
/// other thread keeps stealing half into its own queue and draining it.
fn contended(c: &mut Bench) {
    let mut group = c.benchmark_group("contended_owner_push_pop");
    group.throughput(Throughput::Elements(OWNER_BATCH as u64));
    // Relaxed everywhere: a stop flag; nothing is published through it.
    let stop = AtomicBool::new(false);

    let sink = VecSink::default();
    let (mut ours, steal) = local::<Task>(RING_CAPACITY);
    thread::scope(|scope| {
        scope.spawn(|| {
            let (mut own, _) = local::<Task>(RING_CAPACITY);
            while !stop.load(Ordering::Relaxed) {
                if let Some((task, _)) = steal.steal_into(&mut own, StealLimit::Half) {
                    black_box(task);
                    ours_empty(&mut own);
                }
            }
        });
        group.bench_function(BenchmarkId::new("ours", OWNER_BATCH), |b| {
            b.iter(|| {
                ours_push_pop(&mut ours, &sink, 0..OWNER_BATCH);
            })
        });
        stop.store(true, Ordering::Relaxed);
    });

    stop.store(false, Ordering::Relaxed);
    let worker = Worker::new_fifo();
    let stealer = worker.stealer();
    thread::scope(|scope| {
        scope.spawn(|| {
            let own = Worker::new_fifo();
            while !stop.load(Ordering::Relaxed) {
                if let Some(task) = stealer.steal_batch_with_limit_and_pop(&own, HALF).success() {
                    black_box(task);
                    crossbeam_empty(&own);
                }
            }
        });
        group.bench_function(BenchmarkId::new("crossbeam_fifo", OWNER_BATCH), |b| {
            b.iter(|| {
                crossbeam_push_pop(&worker, 0..OWNER_BATCH);
            })
        });
        stop.store(true, Ordering::Relaxed);
    });
    bwos::contended(&mut group, &sink);
    assert!(sink.0.borrow().is_empty(), "contended benchmark overflowed");
    group.finish();
}

/// Short runs: these are nanosecond operations with tight distributions.
fn config() -> Bench {
    Criterion::default()
        .with_measurement(ThreadCpuTime(WallTime))
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = queues;
    config = config();
    targets = owner, steal_one, steal_batch, overflow, contended
}

/// `queues --callgrind-case NAME` runs one single-threaded hot path once,
/// for instruction counts (`scripts/callgrind-queues.sh`); otherwise this is
/// criterion's `main`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|arg| arg == CALLGRIND_FLAG) {
        let case = args.get(at + 1).map(String::as_str).unwrap_or_default();
        hot::run(case);
        return;
    }
    queues();
    Criterion::default().configure_from_args().final_summary();
}

const CALLGRIND_FLAG: &str = "--callgrind-case";

/// The hot paths counted under callgrind. Each case's work is one
/// `#[inline(never)]` function named `hot_<case>`, so that callgrind's
/// `--toggle-collect` counts it and not the set-up.
mod hot {
    use super::*;

    /// Tasks pushed and popped by the owner cases, in batches of
    /// [`OWNER_BATCH`].
    pub const PUSH_POP_TASKS: usize = 1_000;

    /// Every case name, in the order the script reports them.
    pub const CASES: [&str; 10] = [
        "ours_push_pop",
        "crossbeam_fifo_push_pop",
        "crossbeam_lifo_push_pop",
        "ours_steal_half",
        "crossbeam_steal_half",
        "ours_steal_one",
        "crossbeam_steal_one",
        "bwos_push_pop",
        "bwos_steal_block",
        "bwos_steal_one",
    ];

    pub fn run(case: &str) {
        let sink = VecSink::default();
        let (mut src, steal) = local::<Task>(RING_CAPACITY);
        let (mut dst, _) = local::<Task>(RING_CAPACITY);
        let worker = match case {
            "crossbeam_lifo_push_pop" => Worker::new_lifo(),
            _ => Worker::new_fifo(),
        };
        let (stealer, theirs) = (worker.stealer(), Worker::new_fifo());
        ours_full(&mut src);
        crossbeam_full(&worker);
        match case {
            "ours_push_pop" => {
                ours_empty(&mut src);
                hot_ours_push_pop(&mut src, &sink);
            }
            "crossbeam_fifo_push_pop" | "crossbeam_lifo_push_pop" => {
                crossbeam_empty(&worker);
                hot_crossbeam_push_pop(&worker);
            }
            "ours_steal_half" => hot_ours_steal(&steal, &mut dst, StealLimit::Half),
            "crossbeam_steal_half" => hot_crossbeam_steal_half(&stealer, &theirs),
            "ours_steal_one" => hot_ours_steal(&steal, &mut dst, StealLimit::AtMost(1)),
            "crossbeam_steal_one" => hot_crossbeam_steal_one(&stealer),
            "bwos_push_pop" | "bwos_steal_block" | "bwos_steal_one" => run_bwos(case, &sink),
            _ => panic!("unknown case {case:?}; cases: {}", CASES.join(", ")),
        }
    }

    fn run_bwos(case: &str, sink: &VecSink) {
        let (mut src, steal) = bwos::local::<Task>();
        let (mut dst, _) = bwos::local::<Task>();
        match case {
            "bwos_push_pop" => bwos::hot_bwos_push_pop(&mut src, sink, PUSH_POP_TASKS),
            "bwos_steal_block" | "bwos_steal_one" => {
                bwos::full(&mut src);
                let max = if case == "bwos_steal_one" { 1 } else { u32::MAX };
                bwos::hot_bwos_steal(&steal, &mut dst, max);
            }
            _ => unreachable!("{case}"),
        }
    }

    #[inline(never)]
    fn hot_ours_push_pop(local: &mut Local<Task>, sink: &VecSink) {
        for start in (0..PUSH_POP_TASKS).step_by(OWNER_BATCH) {
            ours_push_pop(local, sink, start..PUSH_POP_TASKS.min(start + OWNER_BATCH));
        }
    }

    #[inline(never)]
    fn hot_crossbeam_push_pop(worker: &Worker<Task>) {
        for start in (0..PUSH_POP_TASKS).step_by(OWNER_BATCH) {
            crossbeam_push_pop(worker, start..PUSH_POP_TASKS.min(start + OWNER_BATCH));
        }
    }

    #[inline(never)]
    fn hot_ours_steal(steal: &Steal<Task>, dst: &mut Local<Task>, limit: StealLimit) {
        black_box(steal.steal_into(dst, limit));
    }

    #[inline(never)]
    fn hot_crossbeam_steal_half(stealer: &Stealer<Task>, dst: &Worker<Task>) {
        let _ = black_box(stealer.steal_batch_with_limit_and_pop(dst, HALF));
    }

    #[inline(never)]
    fn hot_crossbeam_steal_one(stealer: &Stealer<Task>) {
        let _ = black_box(stealer.steal());
    }
}
