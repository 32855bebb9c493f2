//! `current-thread` driven by `block_on` (the default build, as tokio's
//! current_thread): the scheduler runs on the thread that calls
//! `block_on`; spawns from there are local pushes; spawns and wakes from
//! other threads reach it; nothing runs between `block_on` calls; a second
//! concurrent `block_on` takes over when the first returns; a panic in the
//! future leaves the runtime usable; shutdown drops queued tasks once.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use common::{build_native, DropCount};
use wsbench_schedulers::{spawn, time, Builder, SchedulerKind};

const SPAWNS: usize = 1_000;

#[test]
fn spawns_from_block_on_run_on_the_calling_thread_as_local_pushes() {
    let rt = build_native();
    let me = thread::current().id();
    let ran_here = rt.block_on(async move {
        let handles: Vec<_> = (0..SPAWNS).map(|_| spawn(async move { thread::current().id() == me })).collect();
        let mut here = 0;
        for h in handles {
            here += usize::from(h.await.unwrap());
        }
        here
    });
    assert_eq!(ran_here, SPAWNS, "every task ran on the block_on thread");
    let m = rt.metrics().totals();
    assert_eq!((m.spawns_local, m.spawns_remote), (SPAWNS as u64, 0), "spawns from block_on are local pushes");
    assert_eq!(m.polls, SPAWNS as u64, "one poll per task (each completes at once)");
}

#[test]
fn with_a_driver_thread_spawns_from_block_on_are_remote() {
    // The control of the test above: the old mode, a thread of its own.
    let rt = Builder::new(SchedulerKind::CurrentThread).driver_thread(true).build().unwrap();
    let me = thread::current().id();
    let ran_here = rt.block_on(async move {
        let handles: Vec<_> = (0..SPAWNS).map(|_| spawn(async move { thread::current().id() == me })).collect();
        let mut here = 0;
        for h in handles {
            here += usize::from(h.await.unwrap());
        }
        here
    });
    assert_eq!(ran_here, 0, "every task ran on the driver thread");
    let m = rt.metrics().totals();
    assert_eq!((m.spawns_local, m.spawns_remote), (0, SPAWNS as u64));
}

#[test]
fn spawns_and_wakes_from_another_thread_wake_the_block_on_thread() {
    let rt = build_native();
    let handle = rt.handle();
    let (tx, rx) = mpsc::channel::<()>();
    // The other thread spawns only once block_on is waiting (parked: it
    // has nothing else to do), so each spawn must wake it.
    let remote = thread::spawn(move || {
        rx.recv().unwrap();
        let hs: Vec<_> = (0..SPAWNS).map(|i| handle.spawn(async move { i })).collect();
        hs
    });
    let sum = rt.block_on(async move {
        tx.send(()).unwrap();
        let hs = wsbench_schedulers::task::spawn_blocking(move || remote.join().unwrap()).await.unwrap();
        let mut sum = 0;
        for h in hs {
            sum += h.await.unwrap();
        }
        sum
    });
    assert_eq!(sum, SPAWNS * (SPAWNS - 1) / 2);
    let m = rt.metrics().totals();
    assert_eq!(m.spawns_remote, SPAWNS as u64);
}

#[test]
fn a_timer_fires_while_block_on_parks_in_the_driver() {
    let rt = build_native();
    let woke = rt.block_on(async {
        let h = spawn(async {
            time::sleep(Duration::from_millis(5)).await;
            thread::current().id()
        });
        h.await.unwrap()
    });
    assert_eq!(woke, thread::current().id(), "the timer's task ran on the block_on thread");
    assert!(rt.metrics().driver.timers_fired >= 1);
}

#[test]
fn nothing_runs_between_block_on_calls() {
    let rt = build_native();
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    let h = rt.spawn(async move { r.store(true, Ordering::SeqCst) });
    // No thread drives the runtime now: the task cannot run, however long
    // we wait (the sleep only gives a wrong implementation the chance).
    thread::sleep(Duration::from_millis(20));
    assert!(!ran.load(Ordering::SeqCst), "a task ran with nobody in block_on");
    rt.block_on(h).unwrap();
    assert!(ran.load(Ordering::SeqCst));
}

#[test]
fn a_second_block_on_takes_over_when_the_first_returns() {
    let rt = Arc::new(build_native());
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let first = {
        let rt = rt.clone();
        thread::spawn(move || {
            rt.block_on(async move {
                started_tx.send(()).unwrap();
                // Holds the core until told to return.
                wsbench_schedulers::task::spawn_blocking(move || release_rx.recv().unwrap()).await.unwrap();
            })
        })
    };
    started_rx.recv().unwrap();
    let second = {
        let rt = rt.clone();
        thread::spawn(move || {
            rt.block_on(async move {
                // Spawned while the first block_on drives: a remote push.
                let h = spawn(async { 7 });
                let v = h.await.unwrap();
                // Then a task that needs the core after the first left.
                spawn(async move { v * 6 }).await.unwrap()
            })
        })
    };
    release_tx.send(()).unwrap();
    first.join().unwrap();
    assert_eq!(second.join().unwrap(), 42);
    // And the core is back in its slot: a third block_on drives it.
    assert_eq!(rt.block_on(async { spawn(async { 1 }).await.unwrap() }), 1);
}

#[test]
fn a_panic_in_the_block_on_future_leaves_the_runtime_usable() {
    let rt = build_native();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async {
            spawn(async {}).await.unwrap();
            panic!("boom");
        })
    }));
    assert!(r.is_err());
    assert_eq!(rt.block_on(async { spawn(async { 5 }).await.unwrap() }), 5);
}

#[test]
fn shutdown_drops_tasks_left_in_the_core_exactly_once() {
    let rt = build_native();
    let drops = Arc::new(AtomicUsize::new(0));
    // Queued locally (spawned from block_on, never run: block_on returns
    // first) and remotely (spawned from outside, nobody drives).
    let d = drops.clone();
    rt.block_on(async move {
        for _ in 0..10 {
            let guard = DropCount(d.clone());
            drop(spawn(async move { drop(guard) }));
        }
    });
    for _ in 0..10 {
        let guard = DropCount(drops.clone());
        drop(rt.spawn(async move { drop(guard) }));
    }
    assert_eq!(drops.load(Ordering::SeqCst), 0, "nothing ran or dropped yet");
    assert!(rt.shutdown_timeout(Duration::from_secs(5)));
    assert_eq!(drops.load(Ordering::SeqCst), 20, "each queued task dropped exactly once");
}
