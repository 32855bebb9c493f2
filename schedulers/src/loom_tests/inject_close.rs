//! Closing a sharded inject queue (`inject=sharded`, two shards) while two
//! threads push: `close` visits the shards one at a time (lock, mark
//! closed, drain), so a push may land in a shard not yet closed while
//! another shard already is. Every push that succeeded must have its task
//! in what `close` drained; a refused `push` hands its task back; a
//! refused `push_batch` drops its tasks (shutdown cancels them through the
//! owned list). Afterwards no shard holds a task, every future is dropped
//! exactly once and no task reference leaks.
//!
//! Able to fail: with `close` draining a shard and marking it closed under
//! two separate lock acquisitions (drain, unlock, lock, mark, zero the
//! length), a push that slips between them is stranded in a closed shard
//! that reports itself empty: it is never run nor cancelled, and the model
//! fails on its leaked task reference (`Sched::finish`).
//! Bound: `LOOM_MAX_PREEMPTIONS=3`.

use std::sync::Arc;

use loom::thread;

use super::support::{counter, DropCount, Sched};
use crate::inject::Inject;
use crate::knobs::InjectMode;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use crate::task::raw::Notified;

/// Worker count that gives two shards in sharded mode (four per shard).
const WORKERS_FOR_TWO_SHARDS: usize = 8;

/// Three real tasks counting their runs; returned as queued `Notified`s.
fn tasks(sched: &Sched, drops: &std::sync::Arc<AtomicUsize>) -> (Vec<Notified>, Vec<std::sync::Arc<AtomicUsize>>) {
    let runs: Vec<_> = (0..3).map(|_| counter()).collect();
    for r in &runs {
        let (r, d) = (r.clone(), DropCount(drops.clone()));
        drop(sched.spawn(async move {
            let _future_drop = d;
            r.fetch_add(1, SeqCst);
        }));
    }
    (sched.take_queued(), runs)
}

#[test]
fn close_races_push_sharded() {
    loom::model(|| {
        let sched = Sched::new();
        let drops = counter();
        let (mut queued, runs) = tasks(&sched, &drops);
        let inject = Arc::new(Inject::new(InjectMode::Sharded, WORKERS_FOR_TWO_SHARDS));
        assert_eq!(inject.shards(), 2);
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
        for shard in 0..inject.shards() {
            assert!(inject.pop(shard).is_none(), "a task was queued after close (pop from shard {shard})");
        }
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
        // Cancels what push_batch dropped after close.
        sched.finish();
        assert_eq!(drops.load(SeqCst), 3, "futures dropped {} times", drops.load(SeqCst));
    });
}
