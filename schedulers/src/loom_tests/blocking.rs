//! The blocking pool (`blocking.rs`) on loom's types: its lock, both
//! condition variables, its threads (loom threads, started by the pool's
//! own `start_thread`) and the task cells its jobs run in. The pool has
//! `max_threads = 1` so that a spawn must reuse the one thread or wait for
//! it to exit. loom's `Condvar::wait_timeout` never times out, so the
//! keep-alive expiry is the explicit step `expire_keep_alive` (every wait
//! from then on times out; one in progress is ended by its `notify_all`;
//! see the module doc of `blocking.rs`).
//!
//! Checked in every interleaving:
//! - `spawn_racing_idle_wake_up`: a spawn races the thread on its way from
//!   job a (completed) to its idle wait (no expiry): both jobs run exactly once (a
//!   lost wake-up leaves `block_on` waiting forever: a loom deadlock), and
//!   shutdown then ends with no thread left.
//! - `spawn_racing_keep_alive_expiry`: the keep-alive runs out and then
//!   the second job is spawned, both racing the thread on its way from
//!   job a to its idle wait (the expiry lands before its wait or during
//!   it; the spawn before or after its timed-out wait took the lock back,
//!   or after it exited): both jobs run exactly once, whether the old
//!   thread takes the second job or exits and a new one is started, and
//!   every pool thread exits by itself (one left waiting is a loom
//!   deadlock at the end of the model; nothing shuts the pool down). The
//!   expiry runs on the model's main thread: on a separate "clock" thread
//!   (racing the spawn too) the model took 132 s at bound 3 on 2 loaded
//!   cores, against 12 s here.
//! - `shutdown_racing_spawn`: shutdown (on its own thread) races a spawn
//!   and the thread running the first job: each job runs exactly once or
//!   its handle reports cancelled (and then it never ran), each closure is
//!   dropped exactly once, shutdown returns only with no thread left.
//!
//! Able to fail (each mutation tried, the model failed, then restored):
//! - `spawn` without its `work.notify_one()`: `spawn_racing_idle_wake_up`
//!   deadlocks (the idle thread never wakes for the second job).
//! - a thread that exits whenever its wait timed out (dropping the
//!   `wakeups` and empty-queue checks): `spawn_racing_keep_alive_expiry`
//!   deadlocks (the spawn counted the timed-out thread as idle, so started
//!   none, and the job stays queued with no thread).
//! - `shutdown` without its `work.notify_all()`: `shutdown_racing_spawn`
//!   deadlocks (the idle thread never sees the flag; shutdown waits for it).
//!
//! Bound: `LOOM_MAX_PREEMPTIONS=3`.

use std::sync::Arc;

use loom::thread;

use super::support::{counter, DropCount};
use crate::blocking::BlockingPool;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// Far longer than any model runs: shutdown's wait is untimed under loom
/// anyway (its `wait_timeout` never times out).
const SHUTDOWN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);

fn pool() -> Arc<BlockingPool> {
    Arc::new(BlockingPool::new(1, std::time::Duration::from_secs(10), "loom"))
}

/// Spawns a job that counts its runs in `ran`, returns 7 and holds a
/// drop counter.
fn spawn_counted(
    pool: &BlockingPool,
    ran: &std::sync::Arc<AtomicUsize>,
    drops: &std::sync::Arc<AtomicUsize>,
) -> crate::task::JoinHandle<u32> {
    let (ran, dropped) = (ran.clone(), DropCount(drops.clone()));
    pool.spawn_without_runtime(move || {
        let _d = dropped;
        ran.fetch_add(1, SeqCst);
        7u32
    })
}

#[test]
fn spawn_racing_idle_wake_up() {
    loom::model(|| {
        let pool = pool();
        let (ran_a, ran_b, drops) = (counter(), counter(), counter());
        let join_a = spawn_counted(&pool, &ran_a, &drops);
        assert_eq!(loom::future::block_on(join_a).expect("job a"), 7);
        // The thread is now between finishing job a and waiting idle.
        let join_b = spawn_counted(&pool, &ran_b, &drops);
        assert_eq!(loom::future::block_on(join_b).expect("job b"), 7);
        assert_eq!((ran_a.load(SeqCst), ran_b.load(SeqCst)), (1, 1), "runs of jobs a and b");
        pool.shutdown(SHUTDOWN_TIMEOUT);
        assert_eq!(pool.threads(), 0, "threads left after shutdown");
        assert_eq!(drops.load(SeqCst), 2, "closures dropped");
    });
}

#[test]
fn spawn_racing_keep_alive_expiry() {
    loom::model(|| {
        let pool = pool();
        let (ran_a, ran_b, drops) = (counter(), counter(), counter());
        let join_a = spawn_counted(&pool, &ran_a, &drops);
        assert_eq!(loom::future::block_on(join_a).expect("job a"), 7);
        // The thread is between finishing job a and waiting idle when the
        // keep-alive runs out and job b arrives.
        pool.expire_keep_alive();
        let join_b = spawn_counted(&pool, &ran_b, &drops);
        assert_eq!(loom::future::block_on(join_b).expect("job b"), 7);
        assert_eq!((ran_a.load(SeqCst), ran_b.load(SeqCst)), (1, 1), "runs of jobs a and b");
        assert_eq!(drops.load(SeqCst), 2, "closures dropped");
        // No shutdown: the pool threads must exit on the expiry alone.
    });
}

#[test]
fn shutdown_racing_spawn() {
    loom::model(|| {
        let pool = pool();
        let (ran_a, ran_b, drops) = (counter(), counter(), counter());
        let join_a = spawn_counted(&pool, &ran_a, &drops);
        let closer = {
            let pool = pool.clone();
            thread::spawn(move || {
                pool.shutdown(SHUTDOWN_TIMEOUT);
                pool.threads()
            })
        };
        let join_b = spawn_counted(&pool, &ran_b, &drops);
        assert_eq!(closer.join().unwrap(), 0, "threads left after shutdown");
        for (name, join, ran) in [("a", join_a, &ran_a), ("b", join_b, &ran_b)] {
            match loom::future::block_on(join) {
                Ok(v) => assert_eq!((v, ran.load(SeqCst)), (7, 1), "job {name}: value and runs"),
                Err(e) => {
                    assert!(e.is_cancelled(), "job {name}: {e:?}");
                    assert_eq!(ran.load(SeqCst), 0, "job {name} cancelled but ran");
                }
            }
        }
        assert_eq!(drops.load(SeqCst), 2, "closures dropped");
    });
}
