//! The owned-task list (`task/owned.rs`) with more than one shard: the
//! model's scheduler has 4 shards and task ids 0, 1, 2 land in shards 0, 1
//! and 2. A task completing (its `remove` in shard 0) and a spawn (its
//! `bind` in shard 2) race shutdown's `close` (shard by shard) and
//! `shutdown_all` (pop, then shut down without the lock).
//!
//! Checked in every interleaving: the task that runs completes with 7 or
//! is cancelled; the never-run task and the task spawned during shutdown
//! are cancelled (bound after its shard closed, or bound before and found
//! by `shutdown_all`); each future is dropped exactly once; the list ends
//! empty; no task reference leaks (`Sched::finish`).
//!
//! Able to fail: with `remove` locking the shard after the task's own
//! (`(id + 1) & mask`), the unlink of task 0 races `shutdown_all`'s pop
//! of the same shard and loom reports the concurrent access to the links.
//! Bound: `LOOM_MAX_PREEMPTIONS=3`.

use loom::thread;

use super::support::{counter, DropCount, Sched};
use crate::loom::sync::atomic::Ordering::SeqCst;

#[test]
fn complete_and_spawn_race_shutdown_across_shards() {
    loom::model(|| {
        let sched = Sched::new();
        let drops = counter();
        let (da, db, dc) = (DropCount(drops.clone()), DropCount(drops.clone()), DropCount(drops.clone()));
        let join_a = sched.spawn(async move {
            let _d = da;
            7u32
        });
        let join_b = sched.spawn(async move {
            let _d = db;
            7u32
        });
        let mut queued = sched.take_queued();
        let b = queued.pop().expect("task b queued");
        let a = queued.pop().expect("task a queued");
        let runner = thread::spawn(move || a.run());
        let spawner = {
            let sched = sched.clone();
            thread::spawn(move || {
                sched.spawn(async move {
                    let _d = dc;
                    7u32
                })
            })
        };
        sched.0.owned.close();
        sched.0.owned.shutdown_all();
        runner.join().unwrap();
        let join_c = spawner.join().unwrap();
        drop(b);
        // Runs task c if its bind came first (shutdown_all cancelled it, so
        // the run finds it complete).
        sched.run_all();
        match loom::future::block_on(join_a) {
            Ok(v) => assert_eq!(v, 7),
            Err(e) => assert!(e.is_cancelled(), "{e:?}"),
        }
        let b_out = loom::future::block_on(join_b);
        assert!(b_out.as_ref().is_err_and(|e| e.is_cancelled()), "never-run task: {b_out:?}");
        let c_out = loom::future::block_on(join_c);
        assert!(c_out.as_ref().is_err_and(|e| e.is_cancelled()), "task spawned during shutdown: {c_out:?}");
        assert_eq!(sched.0.owned.len(), 0, "tasks left in the owned list");
        assert_eq!(drops.load(SeqCst), 3, "futures dropped {} times", drops.load(SeqCst));
        sched.finish();
    });
}
