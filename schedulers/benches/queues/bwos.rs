//! The `bwos` queue's cases, beside the ring's and crossbeam-deque's in the
//! same groups: same batch sizes, same prepared states, same clock.

use std::hint::black_box;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use criterion::{BenchmarkGroup, BenchmarkId};
pub use wsbench_schedulers::__bench::bwos::{local, Local, Steal};

use super::{bench_prepared, Task, ThreadCpuTime, VecSink, OWNER_BATCH, PREPARED, SINGLE_STEALS_PER_FILL};

/// The owner's round: push `tasks`, then pop until empty.
pub fn push_pop(local: &mut Local<Task>, sink: &VecSink, tasks: Range<usize>) {
    for task in tasks {
        local.push_back_or_overflow(black_box(task), sink);
    }
    while let Some(task) = local.pop() {
        black_box(task);
    }
}

pub fn full(src: &mut Local<Task>) {
    let missing = src.remaining_slots();
    src.push_back(0..missing);
}

pub fn empty(local: &mut Local<Task>) {
    while local.pop().is_some() {}
}

/// What one block-granular steal moves from a full queue.
const BLOCK: usize = wsbench_schedulers::__bench::bwos::DEFAULT_BLOCK_SIZE;

/// A victim queue, its steal handle, and the thief's own queue.
pub type Pair = (Local<Task>, Steal<Task>, Local<Task>);

pub fn pairs() -> Vec<Pair> {
    (0..PREPARED)
        .map(|_| {
            let (src, steal) = local();
            (src, steal, local().0)
        })
        .collect()
}

/// Untimed: a full victim, an empty thief. The victim is emptied first:
/// its consumer must move on for the producer to reuse the blocks thieves
/// emptied.
pub fn prepare((src, _, dst): &mut Pair) {
    empty(dst);
    empty(src);
    full(src);
}

pub fn owner(group: &mut BenchmarkGroup<'_, ThreadCpuTime>, sink: &VecSink) {
    let (mut queue, _steal) = local::<Task>();
    group.bench_function(BenchmarkId::new("bwos", OWNER_BATCH), |b| {
        b.iter(|| push_pop(&mut queue, sink, 0..OWNER_BATCH));
    });
}

pub fn steal_one(group: &mut BenchmarkGroup<'_, ThreadCpuTime>) {
    let mut pairs = pairs();
    bench_prepared(group, "bwos", &mut pairs, SINGLE_STEALS_PER_FILL, prepare, |(_, steal, dst)| {
        let stolen = black_box(steal.steal_into(dst, 1));
        assert!(stolen.is_some(), "steal_one found the victim empty");
    });
}

/// One block-granular steal (32 tasks) from a full queue.
pub fn steal_block(group: &mut BenchmarkGroup<'_, ThreadCpuTime>) {
    let mut pairs = pairs();
    bench_prepared(group, "default_32/bwos_block", &mut pairs, 1, prepare, |(_, steal, dst)| {
        let stolen = black_box(steal.steal_into(dst, u32::MAX));
        assert!(stolen.is_some_and(|(_, n)| n == BLOCK), "a block steal moved less than a block");
    });
}

/// The owner pushes and pops while another thread keeps stealing blocks.
pub fn contended(group: &mut BenchmarkGroup<'_, ThreadCpuTime>, sink: &VecSink) {
    // Relaxed: a stop flag; nothing is published through it.
    let stop = AtomicBool::new(false);
    let (mut queue, steal) = local::<Task>();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let (mut own, _) = local::<Task>();
            while !stop.load(Ordering::Relaxed) {
                if let Some((task, _)) = steal.steal_into(&mut own, u32::MAX) {
                    black_box(task);
                    empty(&mut own);
                }
            }
        });
        group.bench_function(BenchmarkId::new("bwos", OWNER_BATCH), |b| {
            b.iter(|| push_pop(&mut queue, sink, 0..OWNER_BATCH));
        });
        stop.store(true, Ordering::Relaxed);
    });
}

/// Hot paths for callgrind (see `hot` in queues.rs).
#[inline(never)]
pub fn hot_bwos_push_pop(queue: &mut Local<Task>, sink: &VecSink, tasks: usize) {
    for start in (0..tasks).step_by(OWNER_BATCH) {
        push_pop(queue, sink, start..tasks.min(start + OWNER_BATCH));
    }
}

#[inline(never)]
pub fn hot_bwos_steal(steal: &Steal<Task>, dst: &mut Local<Task>, max: u32) {
    black_box(steal.steal_into(dst, max));
}
