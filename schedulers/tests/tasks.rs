//! Task semantics on every policy: wakers, JoinHandle, abort, panics,
//! shutdown, bad input.

mod common;

use std::future::{poll_fn, Future};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use common::{build, configs, DropCount, Latch};
use wsbench_schedulers::task::yield_now;
use wsbench_schedulers::{spawn, Builder, SchedulerKind};

const LIMIT: Duration = Duration::from_secs(30);

/// A future that stays pending until `open` is set, exposing its waker.
struct Gate {
    open: Arc<AtomicBool>,
    waker: Arc<Mutex<Option<Waker>>>,
}

impl Future for Gate {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        if self.open.load(Ordering::SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

fn gate() -> (Gate, Arc<AtomicBool>, Arc<Mutex<Option<Waker>>>) {
    let open = Arc::new(AtomicBool::new(false));
    let waker = Arc::new(Mutex::new(None));
    (Gate { open: open.clone(), waker: waker.clone() }, open, waker)
}

fn wait_for_waker(slot: &Mutex<Option<Waker>>) -> Waker {
    let deadline = std::time::Instant::now() + LIMIT;
    loop {
        if let Some(w) = slot.lock().unwrap().clone() {
            return w;
        }
        assert!(std::time::Instant::now() < deadline, "task never polled");
        std::thread::yield_now();
    }
}

#[test]
fn wake_from_another_thread_by_value_and_by_ref() {
    for (kind, workers) in configs(&[1, 2, 8]) {
        let rt = build(kind, workers);
        for by_ref in [false, true] {
            let (g, open, slot) = gate();
            let h = rt.spawn(async move {
                g.await;
                42
            });
            let w = wait_for_waker(&slot);
            open.store(true, Ordering::SeqCst);
            std::thread::spawn(move || if by_ref { w.wake_by_ref() } else { w.wake() }).join().unwrap();
            assert_eq!(rt.block_on(h).unwrap(), 42, "{kind} x{workers} by_ref={by_ref}");
        }
    }
}

#[test]
fn wake_while_running_reschedules_and_wake_after_completion_is_harmless() {
    for (kind, workers) in configs(&[1, 2, 8]) {
        let rt = build(kind, workers);
        let polls = Arc::new(AtomicUsize::new(0));
        let kept: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let (p, k) = (polls.clone(), kept.clone());
        let h = rt.spawn(poll_fn(move |cx| {
            let n = p.fetch_add(1, Ordering::SeqCst);
            *k.lock().unwrap() = Some(cx.waker().clone());
            if n < 3 {
                cx.waker().wake_by_ref(); // wake while running
                Poll::Pending
            } else {
                Poll::Ready(n)
            }
        }));
        assert_eq!(rt.block_on(h).unwrap(), 3, "{kind} x{workers}");
        let w = kept.lock().unwrap().take().unwrap();
        w.wake_by_ref(); // after completion: no effect
        #[allow(clippy::waker_clone_wake)] // reason: exercises wake-by-value on a completed task
        w.clone().wake();
        drop(w);
        assert_eq!(polls.load(Ordering::SeqCst), 4, "{kind} x{workers}: polled after completion");
    }
}

/// Polls its inner future only after the inner future's own waker fired
/// (how `FuturesUnordered` and similar combinators behave), with a waker of
/// its own that records the wake and passes it on.
struct OnOwnWake<F> {
    inner: Pin<Box<F>>,
    woken: Arc<AtomicBool>,
    first: bool,
}

struct Flag(Arc<AtomicBool>, Waker);

impl std::task::Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
        self.1.wake_by_ref();
    }
}

impl<F: Future> Future for OnOwnWake<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        if !self.first && !self.woken.swap(false, Ordering::SeqCst) {
            return Poll::Pending;
        }
        self.first = false;
        let waker = Waker::from(Arc::new(Flag(self.woken.clone(), cx.waker().clone())));
        self.inner.as_mut().poll(&mut Context::from_waker(&waker))
    }
}

#[test]
fn yield_under_a_combinator_waker_wakes_that_waker() {
    // `yield_now` skips the waker only when it is the polled task's own;
    // here it must wake the combinator's, or the task never finishes.
    for (kind, workers) in configs(&[1, 2]) {
        let rt = build(kind, workers);
        let latch = Latch::new(50);
        for _ in 0..50 {
            let l = latch.clone();
            drop(rt.spawn(async move {
                let inner = async {
                    for _ in 0..3 {
                        yield_now().await;
                    }
                };
                OnOwnWake { inner: Box::pin(inner), woken: Arc::new(AtomicBool::new(false)), first: true }.await;
                l.count_down();
            }));
        }
        latch.wait(LIMIT, &format!("{kind} x{workers}"));
    }
}

#[test]
fn dropped_join_handle_detaches_task() {
    for (kind, workers) in configs(&[1, 2, 8]) {
        let rt = build(kind, workers);
        let latch = Latch::new(100);
        for _ in 0..100 {
            let l = latch.clone();
            drop(rt.spawn(async move {
                yield_now().await;
                l.count_down();
            }));
        }
        latch.wait(LIMIT, &format!("{kind} x{workers}"));
    }
}

#[test]
fn aligned_task_cells_run_hand_back_outputs_and_drop_once() {
    // `task-align` places cells inside a larger allocation; the cells are
    // spawned on one thread and freed on the workers (and, at shutdown, on
    // this one): every output must come back and every payload drop once.
    for align in ["64", "128"] {
        for (kind, workers) in configs(&[2, 8]) {
            let rt = Builder::new(kind).workers(workers).knob("task-align", align).build().unwrap();
            let drops = Arc::new(AtomicUsize::new(0));
            let handles: Vec<_> = (0..2000u64)
                .map(|i| {
                    let token = DropCount(drops.clone());
                    rt.spawn(async move {
                        yield_now().await;
                        drop(token);
                        i * 3
                    })
                })
                .collect();
            // Pending at shutdown: dropped with the runtime, also once.
            for _ in 0..100 {
                let token = DropCount(drops.clone());
                drop(rt.spawn(async move {
                    std::future::pending::<()>().await;
                    drop(token);
                }));
            }
            let sum: u64 = rt.block_on(async move {
                let mut sum = 0;
                for h in handles {
                    sum += h.await.unwrap();
                }
                sum
            });
            assert_eq!(sum, 3 * (0..2000u64).sum::<u64>(), "{kind} x{workers} task-align={align}");
            drop(rt);
            assert_eq!(
                drops.load(Ordering::SeqCst),
                2100,
                "{kind} x{workers} task-align={align}: every payload dropped once"
            );
        }
    }
}

#[test]
fn abort_before_and_during_run() {
    for (kind, workers) in configs(&[1, 2, 8]) {
        let rt = build(kind, workers);
        let drops = Arc::new(AtomicUsize::new(0));
        // During: the task is parked on a gate that never opens.
        let (g, _open, slot) = gate();
        let d = DropCount(drops.clone());
        let h = rt.spawn(async move {
            let _d = d;
            g.await;
        });
        wait_for_waker(&slot);
        h.abort();
        let err = rt.block_on(h).unwrap_err();
        assert!(err.is_cancelled() && !err.is_panic(), "{kind} x{workers}: {err:?}");
        assert_eq!(drops.load(Ordering::SeqCst), 1, "{kind} x{workers}: future not dropped once");
        // Before: a busy worker pool, abort right after spawn; either it
        // was cancelled or it ran to completion, never both, never lost.
        let ran = Arc::new(AtomicUsize::new(0));
        let mut cancelled = 0;
        for _ in 0..1000 {
            let r = ran.clone();
            let h = rt.spawn(async move {
                r.fetch_add(1, Ordering::SeqCst);
            });
            h.abort();
            h.abort();
            match rt.block_on(h) {
                Ok(()) => {}
                Err(e) => {
                    assert!(e.is_cancelled(), "{e:?}");
                    cancelled += 1;
                }
            }
        }
        assert_eq!(ran.load(Ordering::SeqCst) + cancelled, 1000, "{kind} x{workers}");
    }
}

#[test]
fn panic_becomes_join_error_and_worker_survives() {
    for (kind, workers) in configs(&[1, 2]) {
        let rt = build(kind, workers);
        let h = rt.spawn(async {
            panic!("boom in a task");
        });
        let err = rt.block_on(h).unwrap_err();
        assert!(err.is_panic(), "{kind}: {err:?}");
        assert!(err.to_string().contains("boom in a task"), "{err}");
        let after = rt.block_on(async { spawn(async { 5 }).await.unwrap() });
        assert_eq!(after, 5, "{kind} x{workers}: worker died with the panic");
    }
}

#[test]
fn block_on_inside_a_worker_panics_with_a_clear_message() {
    let rt = build(SchedulerKind::StealHalf, 2);
    let inner = Arc::new(build(SchedulerKind::Global, 1));
    let msg = rt.block_on(rt.spawn(async move {
        let r = catch_unwind(AssertUnwindSafe(|| inner.block_on(async {})));
        let payload = r.expect_err("block_on on a worker must panic");
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap()
    }));
    let msg = msg.unwrap();
    assert!(msg.contains("inside a worker thread"), "{msg}");
}

#[test]
fn spawn_without_a_runtime_panics_with_a_clear_message() {
    let r = catch_unwind(|| spawn(async {}));
    let payload = r.expect_err("spawn outside a runtime must panic");
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap();
    assert!(msg.contains("no runtime is running on this thread"), "{msg}");
}

#[test]
fn build_errors_name_the_value_and_what_is_allowed() {
    let e = Builder::new(SchedulerKind::StealHalf).workers(0).build().unwrap_err().to_string();
    assert!(e.contains('0') && e.contains("1..="), "{e}");
    let e = Builder::new(SchedulerKind::CurrentThread).workers(2).build().unwrap_err().to_string();
    assert!(e.contains('2') && e.contains("exactly 1"), "{e}");
    let e = Builder::new(SchedulerKind::StealHalf).knob("fifo", "on").build().unwrap_err().to_string();
    assert!(e.contains("fifo") && e.contains("lifo"), "{e}");
    let e = Builder::new(SchedulerKind::StealHalf).knob("max-lifo-polls", "0").build().unwrap_err().to_string();
    assert!(e.contains("`0`") && e.contains("1..=1024"), "{e}");
    let e = Builder::new(SchedulerKind::Global).knob("lifo", "off").build().unwrap_err().to_string();
    assert!(e.contains("does not apply") && e.contains("global"), "{e}");
    let e = Builder::new(SchedulerKind::Bwos).knob("lifo", "off").knob("lifo-steal", "on").build().unwrap_err();
    assert!(e.to_string().contains("`lifo-steal=on` needs `lifo=on`"), "{e}");
}

#[test]
fn knobs_build_and_run() {
    let knobs: &[(&str, &str)] = &[
        ("lifo", "off"),
        ("max-lifo-polls", "1"),
        ("global-interval", "7"),
        ("steal", "one"),
        ("steal", "3"),
        ("queue-capacity", "4"),
        ("searching-limit", "none"),
        ("idle", "backoff"),
        ("inject", "sharded"),
        ("budget", "off"),
        ("victim", "sequential"),
        ("event-interval", "1"),
        ("lifo-steal", "on"),
        ("steal-passes", "4"),
        ("timer", "per-worker"),
    ];
    for &(k, v) in knobs {
        let rt = Builder::new(SchedulerKind::StealHalf).workers(4).knob(k, v).build().unwrap();
        let n = rt.block_on(async {
            let hs: Vec<_> = (0..2000u64)
                .map(|i| {
                    spawn(async move {
                        yield_now().await;
                        i
                    })
                })
                .collect();
            let mut s = 0;
            for h in hs {
                s += h.await.unwrap();
            }
            s
        });
        assert_eq!(n, 1999 * 2000 / 2, "{k}={v}");
    }
}

#[test]
fn shutdown_drops_every_pending_task_exactly_once() {
    const PENDING: usize = 200_000;
    for (kind, workers) in configs(&[1, 2, 8]) {
        let rt = build(kind, workers);
        let drops = Arc::new(AtomicUsize::new(0));
        let started = Latch::new(PENDING / 2);
        // Half parked on a never-ready future (in no queue), half never polled.
        for i in 0..PENDING {
            let d = DropCount(drops.clone());
            let s = started.clone();
            rt.spawn(async move {
                let _d = d;
                if i % 2 == 0 {
                    s.count_down();
                    std::future::pending::<()>().await;
                }
            });
        }
        drop(rt); // tasks queued or parked: each dropped once, no hang
        assert_eq!(drops.load(Ordering::SeqCst), PENDING, "{kind} x{workers}");
    }
}

#[test]
fn spawn_after_shutdown_is_cancelled_not_lost() {
    let rt = build(SchedulerKind::StealHalf, 2);
    let handle = rt.handle();
    assert!(rt.shutdown_timeout(Duration::from_secs(5)));
    let drops = Arc::new(AtomicUsize::new(0));
    let d = DropCount(drops.clone());
    let h = handle.spawn(async move {
        let _d = d;
    });
    assert_eq!(drops.load(Ordering::SeqCst), 1, "future of a refused spawn must be dropped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(futures_block_on(h)).unwrap());
    let r = rx.recv_timeout(LIMIT).expect("JoinHandle of a refused spawn never resolved");
    assert!(r.unwrap_err().is_cancelled());
}

/// Minimal block_on for a thread outside any runtime.
fn futures_block_on<F: Future>(f: F) -> F::Output {
    let rt = build(SchedulerKind::CurrentThread, 1);
    rt.block_on(f)
}

#[test]
fn spawn_blocking_does_not_stop_async_tasks_on_one_worker() {
    for kind in [SchedulerKind::CurrentThread, SchedulerKind::StealHalf] {
        let rt = build(kind, 1);
        let (tx, rx) = mpsc::channel::<()>();
        let blocking = rt.spawn_blocking(move || rx.recv_timeout(LIMIT).is_ok());
        // The async task runs while the blocking closure is still waiting.
        let v = rt.block_on(rt.spawn(async { 7 })).unwrap();
        assert_eq!(v, 7);
        tx.send(()).unwrap();
        assert!(rt.block_on(blocking).unwrap(), "{kind}: blocking closure timed out");
        assert!(rt.metrics().driver.blocking_threads_spawned >= 1);
    }
}

/// Counts how often the wrapped future is polled.
struct CountPolls<F> {
    inner: Pin<Box<F>>,
    polls: Arc<AtomicUsize>,
}

impl<F: Future> Future for CountPolls<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        self.inner.as_mut().poll(cx)
    }
}

#[test]
fn budget_forces_a_yield_after_128_resource_operations() {
    const READY: usize = 300;
    // 128 awaits per poll, then a forced yield: polls 1 and 2 take 128 each,
    // poll 3 the last 44, so exactly ceil(300 / 128) = 3 polls; without a
    // budget, one poll.
    for (budget, want_polls) in [("128", 3), ("off", 1)] {
        let rt = Builder::new(SchedulerKind::StealHalf).workers(1).knob("budget", budget).build().unwrap();
        let handles: Vec<_> = (0..READY).map(|i| rt.spawn(async move { i })).collect();
        // Wait until every handle is ready, so awaiting them never blocks.
        rt.block_on(async {
            while !handles.iter().all(|h| h.is_finished()) {
                yield_now().await;
            }
        });
        let polls = Arc::new(AtomicUsize::new(0));
        let sum = rt.block_on(rt.spawn(CountPolls {
            inner: Box::pin(async move {
                let mut s = 0;
                for h in handles {
                    s += h.await.unwrap();
                }
                s
            }),
            polls: polls.clone(),
        }));
        assert_eq!(sum.unwrap(), READY * (READY - 1) / 2);
        let n = polls.load(Ordering::SeqCst);
        assert_eq!(n, want_polls, "budget={budget}: awaiting {READY} ready handles took {n} polls");
    }
}

/// Runs 400 tasks of 50 yields each on `rt` and returns its metrics.
fn after_yielding_work(rt: &wsbench_schedulers::Runtime, what: &str) -> wsbench_schedulers::metrics::RuntimeMetrics {
    let latch = Latch::new(400);
    for _ in 0..400 {
        let l = latch.clone();
        drop(rt.spawn(async move {
            for _ in 0..50 {
                yield_now().await;
            }
            l.count_down();
        }));
    }
    latch.wait(LIMIT, what);
    rt.metrics()
}

#[test]
fn metrics_report_the_global_queue_interval_in_force() {
    // A fixed interval is reported as set, by every worker that checked.
    for kind in [SchedulerKind::StealHalf, SchedulerKind::StealOne, SchedulerKind::Bwos] {
        let rt = Builder::new(kind).workers(2).knob("global-interval", "7").build().unwrap();
        let m = after_yielding_work(&rt, &format!("{kind} global-interval=7"));
        assert_eq!(m.global_queue_intervals.len(), 2);
        let seen: Vec<u32> = m.global_queue_intervals.iter().flatten().copied().collect();
        assert!(!seen.is_empty(), "{kind}: no worker reported an interval after 20,000 polls");
        assert!(seen.iter().all(|&i| i == 7), "{kind}: {seen:?}, set to 7");
        // Adaptive: within tokio's clamp [2, 127].
        let rt = build(kind, 2);
        let m = after_yielding_work(&rt, &format!("{kind} adaptive"));
        let seen: Vec<u32> = m.global_queue_intervals.iter().flatten().copied().collect();
        assert!(!seen.is_empty() && seen.iter().all(|i| (2..=127).contains(i)), "{kind}: {seen:?}");
    }
    // Policies without a global-queue interval report none.
    for (kind, workers) in
        [(SchedulerKind::Global, 2), (SchedulerKind::PerWorker, 2), (SchedulerKind::CurrentThread, 1)]
    {
        let rt = build(kind, workers);
        let m = after_yielding_work(&rt, &format!("{kind}"));
        assert_eq!(m.global_queue_intervals.len(), workers);
        assert!(m.global_queue_intervals.iter().all(Option::is_none), "{kind}: {:?}", m.global_queue_intervals);
    }
}
