//! The task state machine and the JoinHandle waker hand-off.

use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Poll, Waker};

use loom::thread;

use super::support::{counter, DropCount, Sched};
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use crate::loom::sync::Mutex;
use crate::task::JoinHandle;

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

/// The controls of a `gated` task: its flag, the slot holding its waker,
/// and the count of its future's drops.
#[derive(Clone)]
struct Gate {
    go: Arc<AtomicBool>,
    slot: Arc<Mutex<Option<Waker>>>,
    drops: Arc<AtomicUsize>,
}

impl Gate {
    fn new() -> Gate {
        Gate { go: Arc::new(AtomicBool::new(false)), slot: Arc::new(Mutex::new(None)), drops: counter() }
    }

    /// Spawns a `gated` task on `sched`.
    fn spawn(sched: &Sched) -> (JoinHandle<u32>, Gate) {
        let gate = Gate::new();
        let join = sched.spawn(gated(gate.go.clone(), gate.slot.clone(), DropCount(gate.drops.clone())));
        (join, gate)
    }

    /// The end of a model whose task may finish or be cancelled: runs what
    /// is queued, expects 7 or a cancellation, exactly one drop of the
    /// future, and no leaked reference.
    fn finish_seven_or_cancelled(&self, sched: &Sched, join: JoinHandle<u32>) {
        sched.run_all();
        match loom::future::block_on(join) {
            Ok(v) => assert_eq!(v, 7),
            Err(e) => assert!(e.is_cancelled(), "{e:?}"),
        }
        assert_eq!(self.drops(), 1, "future dropped {} times", self.drops());
        self.clear();
        sched.finish();
    }

    /// Lets the task finish and wakes it if it is parked.
    fn open(&self) {
        self.go.store(true, SeqCst);
        if let Some(w) = self.slot.lock().unwrap().take() {
            w.wake();
        }
    }

    fn drops(&self) -> usize {
        self.drops.load(SeqCst)
    }

    /// Drops a waker the task left in the slot (it holds a reference).
    fn clear(&self) {
        drop(self.slot.lock().unwrap().take());
    }
}

/// Poll racing wake (by value, from another thread), then the JoinHandle
/// (main) racing completion on the other thread. Bound: 2 preemptions.
#[test]
fn poll_races_wake_and_join_waker_hand_off() {
    loom::model(|| {
        let sched = Sched::new();
        let (join, gate) = Gate::spawn(&sched);
        let (s2, gate2) = (sched.clone(), gate.clone());
        let waker_thread = thread::spawn(move || {
            gate2.open();
            s2.run_all();
        });
        sched.run_all();
        // A lost wake-up here is a loom deadlock.
        let out = loom::future::block_on(join);
        waker_thread.join().unwrap();
        sched.run_all();
        assert_eq!(out.unwrap(), 7);
        assert_eq!(gate.drops(), 1, "future dropped {} times", gate.drops());
        gate.clear();
        sched.finish();
    });
}

/// abort() racing the task's poll on another thread. Bound: 2.
#[test]
fn abort_races_poll() {
    loom::model(|| {
        let sched = Sched::new();
        let (join, gate) = Gate::spawn(&sched);
        let s2 = sched.clone();
        let runner = thread::spawn(move || s2.run_all());
        join.abort();
        runner.join().unwrap();
        sched.run_all();
        let err = loom::future::block_on(join).unwrap_err();
        assert!(err.is_cancelled(), "{err:?}");
        assert_eq!(gate.drops(), 1);
        gate.clear();
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
        let (join, gate) = Gate::spawn(&sched);
        sched.run_all(); // parked on the gate
        let (s2, gate2) = (sched.clone(), gate.clone());
        let waker = thread::spawn(move || {
            gate2.open();
            s2.run_all();
        });
        sched.0.owned.close();
        sched.0.owned.shutdown_all();
        waker.join().unwrap();
        gate.finish_seven_or_cancelled(&sched, join);
    });
}

/// `yield_now` through the task's own waker (the path that marks the poll
/// instead of cloning and waking the waker) racing an abort and a wake by
/// value from another thread: the future is dropped exactly once, the
/// JoinHandle sees 7 or a cancellation, and no reference leaks. Bound: 2.
#[test]
fn own_waker_yield_races_abort_and_wake() {
    loom::model(|| {
        let sched = Sched::new();
        // The gate's waker slot and drop counter; its flag is not used.
        let gate = Gate::new();
        let (keep, s) = (DropCount(gate.drops.clone()), gate.slot.clone());
        let join = sched.spawn(async move {
            let _keep = &keep;
            *s.lock().unwrap() = Some(poll_fn(|cx| Poll::Ready(cx.waker().clone())).await);
            crate::task::yield_now().await;
            7u32
        });
        let s2 = sched.clone();
        let runner = thread::spawn(move || s2.run_all());
        if let Some(w) = gate.slot.lock().unwrap().take() {
            w.wake();
        }
        join.abort();
        runner.join().unwrap();
        gate.finish_seven_or_cancelled(&sched, join);
    });
}
