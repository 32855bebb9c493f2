//! Every task runs exactly once, none lost: a million tasks per policy and
//! worker count, spawned from outside, from inside, nested and chained;
//! and the same for `current-thread` driven by `block_on` (no thread of
//! its own), with the outside spawns racing the `block_on` from another
//! thread.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{build, build_native, configs, Flags, Latch};
use wsbench_schedulers::spawn;

/// Tasks per shape; four shapes make a million per configuration.
const PER_SHAPE: usize = 250_000;
const NESTED_FANOUT: usize = 500;
const CHAIN_LEN: usize = 1_000;
/// A hang detector for the latch, far above the expected seconds.
const HANG_LIMIT: Duration = Duration::from_secs(120);

fn chain(flags: Arc<Flags>, latch: Latch, base: usize, depth: usize) {
    flags.hit(base + depth);
    latch.count_down();
    if depth + 1 < CHAIN_LEN {
        spawn(async move { chain(flags, latch, base, depth + 1) });
    }
}

fn run_config(kind: wsbench_schedulers::SchedulerKind, workers: usize) {
    let rt = build(kind, workers);
    let what = format!("{kind} x{workers}");
    let flags = Flags::new(4 * PER_SHAPE);
    let latch = Latch::new(4 * PER_SHAPE);

    // 1. From outside.
    for i in 0..PER_SHAPE {
        let (f, l) = (flags.clone(), latch.clone());
        rt.spawn(async move {
            f.hit(i);
            l.count_down();
        });
    }
    // 2. From inside one task.
    let (f, l) = (flags.clone(), latch.clone());
    rt.spawn(async move {
        for i in PER_SHAPE..2 * PER_SHAPE {
            let (f, l) = (f.clone(), l.clone());
            spawn(async move {
                f.hit(i);
                l.count_down();
            });
        }
    });
    // 3. Nested: tasks that spawn tasks.
    for outer in 0..PER_SHAPE / NESTED_FANOUT {
        let (f, l) = (flags.clone(), latch.clone());
        rt.spawn(async move {
            for inner in 0..NESTED_FANOUT {
                let i = 2 * PER_SHAPE + outer * NESTED_FANOUT + inner;
                let (f, l) = (f.clone(), l.clone());
                spawn(async move {
                    f.hit(i);
                    l.count_down();
                });
            }
        });
    }
    // 4. Chained: each task spawns the next.
    for c in 0..PER_SHAPE / CHAIN_LEN {
        let (f, l) = (flags.clone(), latch.clone());
        rt.spawn(async move { chain(f, l, 3 * PER_SHAPE + c * CHAIN_LEN, 0) });
    }
    latch.wait(HANG_LIMIT, &what);
    flags.assert_all_once(&what);
    let m = rt.metrics().totals();
    assert!(m.polls >= 4 * PER_SHAPE as u64, "{what}: polls {} < tasks", m.polls);
    assert!(rt.shutdown_timeout(Duration::from_secs(10)), "{what}: workers did not stop");
}

#[test]
fn million_tasks_exactly_once_every_policy() {
    for (kind, workers) in configs(&[1, 2, 8, 128]) {
        run_config(kind, workers);
    }
}

/// Counts tasks down; the last one wakes the `block_on` awaiting it.
struct AsyncLatch {
    left: AtomicUsize,
    done: tokio::sync::Notify,
}

impl AsyncLatch {
    fn count_down(&self) {
        // Relaxed: only the count matters; `Notify` orders the wake-up (it
        // keeps a permit when the waiter is not there yet).
        if self.left.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.done.notify_one();
        }
    }
}

fn native_chain(flags: Arc<Flags>, latch: Arc<AsyncLatch>, base: usize, depth: usize) {
    flags.hit(base + depth);
    latch.count_down();
    if depth + 1 < CHAIN_LEN {
        spawn(async move { native_chain(flags, latch, base, depth + 1) });
    }
}

/// `current-thread` driven by `block_on`: shape 1 is spawned from another
/// thread while the test thread is in `block_on` (each spawn a remote
/// push that must wake it), shapes 2-4 from the `block_on` future and its
/// tasks (local pushes).
#[test]
fn million_tasks_exactly_once_current_thread_driven_by_block_on() {
    let rt = build_native();
    let flags = Flags::new(4 * PER_SHAPE);
    let latch = Arc::new(AsyncLatch { left: AtomicUsize::new(4 * PER_SHAPE), done: tokio::sync::Notify::new() });
    let handle = rt.handle();
    let (f, l) = (flags.clone(), latch.clone());
    let outside = std::thread::spawn(move || {
        for i in 0..PER_SHAPE {
            let (f, l) = (f.clone(), l.clone());
            drop(handle.spawn(async move {
                f.hit(i);
                l.count_down();
            }));
        }
    });
    let (f, l) = (flags.clone(), latch.clone());
    rt.block_on(async move {
        for i in PER_SHAPE..2 * PER_SHAPE {
            let (f, l) = (f.clone(), l.clone());
            spawn(async move {
                f.hit(i);
                l.count_down();
            });
        }
        for outer in 0..PER_SHAPE / NESTED_FANOUT {
            let (f, l) = (f.clone(), l.clone());
            spawn(async move {
                for inner in 0..NESTED_FANOUT {
                    let i = 2 * PER_SHAPE + outer * NESTED_FANOUT + inner;
                    let (f, l) = (f.clone(), l.clone());
                    spawn(async move {
                        f.hit(i);
                        l.count_down();
                    });
                }
            });
        }
        for c in 0..PER_SHAPE / CHAIN_LEN {
            let (f, l) = (f.clone(), l.clone());
            spawn(async move { native_chain(f, l, 3 * PER_SHAPE + c * CHAIN_LEN, 0) });
        }
        l.done.notified().await;
    });
    outside.join().unwrap();
    flags.assert_all_once("current-thread driven by block_on");
    let m = rt.metrics().totals();
    // Tasks plus the nested and chain spawners' own polls, at least.
    assert!(m.polls >= 4 * PER_SHAPE as u64, "polls {} < tasks", m.polls);
    assert!(rt.shutdown_timeout(Duration::from_secs(10)));
}
