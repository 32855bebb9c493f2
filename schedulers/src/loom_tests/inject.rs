//! The inject queue (`crate::inject::Inject`) with real tasks: pushers
//! (`push`, `push_batch`) racing a popper (`pop`, `pop_batch`), and
//! `close` racing pushes. Every task is run or cancelled exactly once, none
//! is lost, and the lock-free length never claims work that is not there.
//!
//! The driver hand-off between parking workers is modelled in
//! `handoff.rs` (with a driver stand-in: the real one blocks in epoll);
//! closing a sharded inject queue in `inject_close.rs`.
//!
//! Bound: every model here runs with `LOOM_MAX_PREEMPTIONS=2` (the
//! setting of `scripts/loom.sh`): a lost or doubled task needs one push
//! and one pop (or close) to interleave inside each other's critical
//! sections, which two preemptions cover.

use std::sync::Arc;

use loom::thread;

use super::support::{counter, DropCount, Sched};
use crate::inject::Inject;
use crate::knobs::InjectMode;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use crate::task::raw::Notified;

/// Worker count that gives two shards in sharded mode (four per shard).
const WORKERS_FOR_TWO_SHARDS: usize = 8;

/// `n` real tasks that count their runs in `runs[i]` and their future
/// drops in `drops`; returned as the `Notified` a scheduler would queue.
fn tasks(
    sched: &Sched,
    n: usize,
    drops: &std::sync::Arc<AtomicUsize>,
) -> (Vec<Notified>, Vec<std::sync::Arc<AtomicUsize>>) {
    let runs: Vec<_> = (0..n).map(|_| counter()).collect();
    for r in &runs {
        let (r, d) = (r.clone(), DropCount(drops.clone()));
        drop(sched.spawn(async move {
            let _future_drop = d;
            r.fetch_add(1, SeqCst);
        }));
    }
    let queued = sched.take_queued();
    assert_eq!(queued.len(), n, "spawn must queue each task once");
    (queued, runs)
}

/// Pops once with `pop` and once with `pop_batch` while two threads push
/// (one `push`, one `push_batch` of two); then drains. Every task runs
/// exactly once.
fn push_pop_model(mode: InjectMode, workers: usize, pop_start: usize) {
    loom::model(move || {
        let sched = Sched::new();
        let drops = counter();
        let (mut queued, runs) = tasks(&sched, 3, &drops);
        let inject = Arc::new(Inject::new(mode, workers));
        let batch: Vec<Notified> = queued.drain(1..).collect();
        let single = queued.pop().expect("three tasks");
        let pusher = {
            let inject = inject.clone();
            thread::spawn(move || {
                inject.push(single).expect("push onto an open queue");
            })
        };
        let batcher = {
            let inject = inject.clone();
            thread::spawn(move || inject.push_batch(batch.into_iter()))
        };
        let mut got = Vec::new();
        // One popper: a length it sees can only shrink through it, so a
        // non-zero length promises a task (the Release/Acquire pair on
        // `len` with the lock).
        if inject.len() > 0 {
            got.push(inject.pop(pop_start).expect("len() > 0 but pop found nothing"));
        }
        if let Some(first) = inject.pop_batch(pop_start, 2, |t| got.push(t)) {
            got.push(first);
        }
        pusher.join().unwrap();
        batcher.join().unwrap();
        while let Some(t) = inject.pop(pop_start) {
            got.push(t);
        }
        assert!(inject.is_empty(), "drained queue reports {} tasks", inject.len());
        assert_eq!(got.len(), 3, "popped {} of 3 tasks", got.len());
        for t in got {
            t.run();
        }
        for (i, r) in runs.iter().enumerate() {
            assert_eq!(r.load(SeqCst), 1, "task {i} ran {} times", r.load(SeqCst));
        }
        sched.finish();
        assert_eq!(drops.load(SeqCst), 3, "futures dropped {} times", drops.load(SeqCst));
    });
}

/// Mutex mode (tokio's shape): two pushers and a popper. Bound: 2.
#[test]
fn push_and_batch_race_pop_mutex() {
    push_pop_model(InjectMode::Mutex, 1, 0);
}

/// Sharded mode with two shards, the popper starting at the second shard.
/// Pushes go to the pushing thread's home shard; loom runs every modelled
/// thread on one OS thread, so here both pushers share one home shard and
/// the popper reaches it only after the empty check of its own. Bound: 2.
#[test]
fn push_and_batch_race_pop_sharded() {
    push_pop_model(InjectMode::Sharded, WORKERS_FOR_TWO_SHARDS, 1);
}

/// `close` races a `push` and a `push_batch`. A push that succeeded must
/// have its task in what `close` drained; a refused push hands its task
/// back; a refused batch drops its tasks, which shutdown then cancels.
/// Either way every future is dropped exactly once and no task reference
/// leaks (`Sched::finish`). Bound: 2.
#[test]
fn close_races_push() {
    loom::model(|| {
        let sched = Sched::new();
        let drops = counter();
        let (mut queued, runs) = tasks(&sched, 3, &drops);
        let inject = Arc::new(Inject::new(InjectMode::Mutex, 1));
        let batch: Vec<Notified> = queued.drain(1..).collect();
        let single = queued.pop().expect("three tasks");
        let pusher = {
            let inject = inject.clone();
            thread::spawn(move || inject.push(single).err())
        };
        let batcher = {
            let inject = inject.clone();
            thread::spawn(move || inject.push_batch(batch.into_iter()))
        };
        let mut drained = Vec::new();
        inject.close(&mut drained);
        let refused = pusher.join().unwrap();
        batcher.join().unwrap();
        let pushed_ok = refused.is_none();
        assert!(inject.pop(0).is_none(), "a task was queued after close");
        assert!(inject.is_empty(), "closed queue reports {} tasks", inject.len());
        let handed_back = drained.len() + usize::from(!pushed_ok);
        for t in drained.into_iter().chain(refused) {
            t.run();
        }
        if pushed_ok {
            assert_eq!(runs[0].load(SeqCst), 1, "push succeeded but close did not drain its task");
        }
        let ran: usize = runs.iter().map(|r| r.load(SeqCst)).sum();
        assert_eq!(ran, handed_back, "ran {ran} tasks, {handed_back} were handed back");
        // Cancels what push_batch dropped after close (its tasks are still
        // in the owned list, as in the runtime's shutdown).
        sched.finish();
        assert_eq!(drops.load(SeqCst), 3, "futures dropped {} times", drops.load(SeqCst));
    });
}
