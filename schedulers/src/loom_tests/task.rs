//! The task state machine and the JoinHandle waker hand-off.

use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Poll, Waker};

use loom::thread;

use super::support::{counter, DropCount, Sched};
use crate::loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use crate::loom::sync::Mutex;

/// A future that completes once `go` is set; stores its waker first, then
/// checks (so a concurrent setter that takes the waker cannot be missed).
fn gated(
    go: Arc<AtomicBool>,
    slot: Arc<Mutex<Option<Waker>>>,
    _drop: DropCount,
) -> impl std::future::Future<Output = u32> {
    poll_fn(move |cx| {
        let _keep = &_drop;
        *slot.lock().unwrap() = Some(cx.waker().clone());
        if go.load(SeqCst) {
            Poll::Ready(7)
        } else {
            Poll::Pending
        }
    })
}

fn open(go: &AtomicBool, slot: &Mutex<Option<Waker>>) {
    go.store(true, SeqCst);
    if let Some(w) = slot.lock().unwrap().take() {
        w.wake();
    }
}

/// Poll racing wake (by value, from another thread), then the JoinHandle
/// (main) racing completion on the other thread. Bound: 2 preemptions.
#[test]
fn poll_races_wake_and_join_waker_hand_off() {
    loom::model(|| {
        let sched = Sched::new();
        let drops = counter();
        let go = Arc::new(AtomicBool::new(false));
        let slot = Arc::new(Mutex::new(None));
        let join = sched.spawn(gated(go.clone(), slot.clone(), DropCount(drops.clone())));
        let (s2, go2, slot2) = (sched.clone(), go.clone(), slot.clone());
        let waker_thread = thread::spawn(move || {
            open(&go2, &slot2);
            s2.run_all();
        });
        sched.run_all();
        // A lost wake-up here is a loom deadlock.
        let out = loom::future::block_on(join);
        waker_thread.join().unwrap();
        sched.run_all();
        assert_eq!(out.unwrap(), 7);
        assert_eq!(drops.load(SeqCst), 1, "future dropped {} times", drops.load(SeqCst));
        drop(slot.lock().unwrap().take());
        sched.finish();
    });
}

/// abort() racing the task's poll on another thread. Bound: 2.
#[test]
fn abort_races_poll() {
    loom::model(|| {
        let sched = Sched::new();
        let drops = counter();
        let go = Arc::new(AtomicBool::new(false));
        let slot = Arc::new(Mutex::new(None));
        let join = sched.spawn(gated(go, slot.clone(), DropCount(drops.clone())));
        let s2 = sched.clone();
        let runner = thread::spawn(move || s2.run_all());
        join.abort();
        runner.join().unwrap();
        sched.run_all();
        let err = loom::future::block_on(join).unwrap_err();
        assert!(err.is_cancelled(), "{err:?}");
        assert_eq!(drops.load(SeqCst), 1);
        drop(slot.lock().unwrap().take());
        sched.finish();
    });
}

/// JoinHandle drop racing completion: the output is dropped exactly once,
/// by whichever side owns it. Bound: 2.
#[test]
fn join_handle_drop_races_completion() {
    loom::model(|| {
        let sched = Sched::new();
        let out_drops = counter();
        let d = out_drops.clone();
        let join = sched.spawn(async move { DropCount(d) });
        let s2 = sched.clone();
        let runner = thread::spawn(move || s2.run_all());
        drop(join);
        runner.join().unwrap();
        assert_eq!(out_drops.load(SeqCst), 1);
        sched.finish();
    });
}

/// Shutdown (close + cancel all) racing a wake and poll on another thread.
/// Bound: 2.
#[test]
fn shutdown_races_wake_and_poll() {
    loom::model(|| {
        let sched = Sched::new();
        let drops = counter();
        let go = Arc::new(AtomicBool::new(false));
        let slot = Arc::new(Mutex::new(None));
        let join = sched.spawn(gated(go.clone(), slot.clone(), DropCount(drops.clone())));
        sched.run_all(); // parked on the gate
        let (s2, go2, slot2) = (sched.clone(), go.clone(), slot.clone());
        let waker = thread::spawn(move || {
            open(&go2, &slot2);
            s2.run_all();
        });
        sched.0.owned.close();
        sched.0.owned.shutdown_all();
        waker.join().unwrap();
        sched.run_all();
        match loom::future::block_on(join) {
            Ok(v) => assert_eq!(v, 7),
            Err(e) => assert!(e.is_cancelled(), "{e:?}"),
        }
        assert_eq!(drops.load(SeqCst), 1);
        drop(slot.lock().unwrap().take());
        sched.finish();
    });
}
