//! `--knob timer=per-worker` (one timer wheel per worker, `driver/local.rs`)
//! on every policy that takes it, against `timer=shared` where the two must
//! agree: timers armed on a worker and cancelled, reset or polled from
//! another thread; a parked worker's timers; every task exactly once with
//! timers armed and cancelled across workers; shutdown with timers pending.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use common::{with_lead, DropCount, Flags};
use wsbench_schedulers::task::yield_now;
use wsbench_schedulers::time::{sleep, sleep_until, timeout, Sleep};
use wsbench_schedulers::{spawn, Builder, Runtime, SchedulerKind};

/// The policies that take the knob (every multi-worker one but
/// thread-per-core, whose cores have a wheel each already).
const KINDS: [SchedulerKind; 5] = [
    SchedulerKind::Global,
    SchedulerKind::PerWorker,
    SchedulerKind::StealOne,
    SchedulerKind::StealHalf,
    SchedulerKind::Bwos,
];
const MODES: [&str; 2] = ["shared", "per-worker"];
/// A hang detector, far above anything these tests wait for.
const HANG_LIMIT: Duration = Duration::from_secs(30);

fn runtime(kind: SchedulerKind, workers: usize, mode: &str) -> Runtime {
    Builder::new(kind)
        .workers(workers)
        .knob("timer", mode)
        .build()
        .unwrap_or_else(|e| panic!("{kind} x{workers} timer={mode}: {e}"))
}

/// Counts wakes, records when the first came, and passes each on to the
/// task waker it holds, if any.
struct Probe {
    wakes: AtomicUsize,
    first_at: Mutex<Option<Instant>>,
    task: Mutex<Option<Waker>>,
}

impl Wake for Probe {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.first_at.lock().unwrap().get_or_insert_with(Instant::now);
        self.wakes.fetch_add(1, Ordering::SeqCst);
        if let Some(w) = self.task.lock().unwrap().as_ref() {
            w.wake_by_ref();
        }
    }
}

fn probe() -> (Arc<Probe>, Waker) {
    let p = Arc::new(Probe { wakes: AtomicUsize::new(0), first_at: Mutex::new(None), task: Mutex::new(None) });
    (p.clone(), Waker::from(p))
}

fn poll_with(sleep: &mut Sleep, waker: &Waker) -> Poll<()> {
    Pin::new(sleep).poll(&mut Context::from_waker(waker))
}

/// Waits (hang-limited) until `done` holds.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < HANG_LIMIT, "{what}: still waiting after {HANG_LIMIT:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Sleeps armed by tasks on the workers (each polled once there, in a
/// task of its own so that the poll has a fresh budget), handed to the
/// caller. A sleep may be ready at once only if its deadline had passed
/// (the caller's clock tells whether its setup was ahead of them).
fn arm_on_a_worker(rt: &Runtime, deadlines: Vec<Instant>) -> Vec<(Sleep, Arc<Probe>)> {
    rt.block_on(async move {
        let tasks: Vec<_> = deadlines
            .into_iter()
            .map(|d| {
                spawn(async move {
                    let (p, waker) = probe();
                    let mut s = sleep_until(d);
                    let pending = poll_with(&mut s, &waker).is_pending();
                    assert!(pending || Instant::now() >= d, "ready {:?} before its deadline", d - Instant::now());
                    (s, p)
                })
            })
            .collect();
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.expect("arming task"));
        }
        out
    })
}

/// 400 timers armed on the workers; from this (non-worker) thread the even
/// ones are cancelled and the odd ones re-polled with a new waker, which
/// their fire must reach, never early and never the replaced waker. The
/// deadlines are a lead ahead of the start; a round whose setup (arming,
/// cancels, re-polls) did not end before the first deadline runs again
/// with a longer lead ([`common::with_lead`]).
#[test]
fn cancel_and_poll_from_another_thread() {
    const TIMERS: usize = 400;
    const AHEAD: Duration = Duration::from_millis(40);
    for kind in KINDS {
        for workers in [1, 2, 8] {
            for mode in MODES {
                let label = format!("{kind} x{workers} timer={mode}");
                common::with_lead(&label, AHEAD, |lead| cancel_and_poll_round(kind, workers, mode, TIMERS, lead));
            }
        }
    }
}

/// One round of [`cancel_and_poll_from_another_thread`]; `None` when the
/// setup overran the first deadline.
fn cancel_and_poll_round(kind: SchedulerKind, workers: usize, mode: &str, timers: usize, lead: Duration) -> Option<()> {
    let label = format!("{kind} x{workers} timer={mode}");
    let rt = runtime(kind, workers, mode);
    let start = Instant::now();
    let deadlines: Vec<Instant> = (0..timers).map(|i| start + lead + Duration::from_micros(20 * i as u64)).collect();
    let armed = arm_on_a_worker(&rt, deadlines.clone());
    let mut kept = Vec::new();
    let mut cancelled = Vec::new();
    let mut repolled_pending = true;
    for (i, (mut s, old)) in armed.into_iter().enumerate() {
        if i % 2 == 0 {
            drop(s);
            cancelled.push(old);
        } else {
            let (p, waker) = probe();
            repolled_pending &= poll_with(&mut s, &waker).is_pending();
            kept.push((i, s, p, old));
        }
    }
    if Instant::now() >= deadlines[0] {
        return None;
    }
    // Every arm, cancel and re-poll came before any deadline.
    assert!(repolled_pending, "{label}: a timer was ready before its deadline");
    wait_until(&label, || kept.iter().all(|(_, _, p, _)| p.wakes.load(Ordering::SeqCst) > 0));
    for (i, s, p, old) in &mut kept {
        assert_eq!(p.wakes.load(Ordering::SeqCst), 1, "{label}: timer {i} woke twice");
        assert_eq!(old.wakes.load(Ordering::SeqCst), 0, "{label}: timer {i} woke its replaced waker");
        let at = p.first_at.lock().unwrap().unwrap();
        assert!(at >= deadlines[*i], "{label}: timer {i} early by {:?}", deadlines[*i] - at);
        assert!(poll_with(s, Waker::noop()).is_ready(), "{label}: fired but not ready");
    }
    // Every cancelled deadline is behind the last kept one.
    assert!(cancelled.iter().all(|p| p.wakes.load(Ordering::SeqCst) == 0), "{label}: a cancel fired");
    let m = rt.metrics().driver;
    assert_eq!(m.timers_fired, (timers / 2) as u64, "{label}: timers_fired");
    let remote = if mode == "per-worker" { timers / 2 } else { 0 };
    assert_eq!(m.timer_remote_cancels, remote as u64, "{label}: timer_remote_cancels");
    Some(())
}

/// Polls `s` to completion on the calling future's task; whether its first
/// poll was pending (it then sat in a wheel and fired from there) or ready
/// (its deadline had passed before it was first polled: no timer fired).
async fn first_poll_pending(s: &mut Sleep) -> bool {
    let mut first = None;
    std::future::poll_fn(|cx| {
        let p = Pin::new(&mut *s).poll(cx);
        first.get_or_insert(p.is_pending());
        p
    })
    .await;
    first == Some(true)
}

/// `timers_fired` counts sleeps that fired from a wheel: one already due at
/// its first poll completes without a timer. So each round records whether
/// its sleeps were pending when first polled; a round whose setup overran
/// its lead (a preempted machine) is run again with a longer one
/// ([`with_lead`]), and the counts are asserted exactly for rounds that
/// were ahead of their deadlines.
#[test]
fn reset_from_another_thread_rearms_where_it_is_polled() {
    for kind in KINDS {
        for mode in MODES {
            let label = format!("{kind} x2 timer={mode}");
            with_lead(&label, Duration::from_millis(15), |lead| {
                let rt = runtime(kind, 2, mode);
                let far = Instant::now() + Duration::from_secs(3600);
                let (mut s, old) = arm_on_a_worker(&rt, vec![far]).pop().unwrap();
                let soon = Instant::now() + lead;
                s.reset(soon);
                // `block_on` polls it on this thread: the shared wheel.
                let pending = rt.block_on(first_poll_pending(&mut s));
                assert!(Instant::now() >= soon, "{label}: early");
                assert_eq!(old.wakes.load(Ordering::SeqCst), 0, "{label}: the replaced timer woke");
                if !pending {
                    return None;
                }
                let m = rt.metrics().driver;
                assert_eq!(m.timers_fired, 1, "{label}");
                assert_eq!(m.timer_remote_cancels, u64::from(mode == "per-worker"), "{label}");
                // A reset on the worker that armed it stays local.
                let pending = rt.block_on(async move {
                    spawn(async move {
                        let mut s = sleep(Duration::from_secs(3600));
                        assert!(poll_with(&mut s, Waker::noop()).is_pending());
                        s.reset(Instant::now() + lead);
                        first_poll_pending(&mut s).await
                    })
                    .await
                    .unwrap()
                });
                if !pending {
                    return None;
                }
                let m = rt.metrics().driver;
                assert_eq!(m.timers_fired, 2, "{label}");
                assert_eq!(m.timer_remote_cancels, u64::from(mode == "per-worker"), "{label}");
                Some(())
            });
        }
    }
}

#[test]
fn a_parked_workers_timers_fire() {
    const ROUNDS: usize = 30;
    for kind in KINDS {
        for workers in [1, 2] {
            let label = format!("{kind} x{workers} timer=per-worker");
            // A round whose sleep was already due at its first poll fired
            // no timer: the whole run is tried again with a longer nap.
            with_lead(&label, Duration::from_millis(5), |nap| {
                let rt = runtime(kind, workers, "per-worker");
                // One sleeper at a time, spawned from outside: it arms in
                // the wheel of the worker that runs it; both then park (one
                // in epoll, one on its condvar) and only that worker's own
                // park timeout can fire it.
                for round in 0..ROUNDS {
                    let (tx, rx) = mpsc::channel();
                    rt.spawn(async move {
                        let deadline = Instant::now() + nap;
                        let pending = first_poll_pending(&mut sleep_until(deadline)).await;
                        let _ = tx.send((deadline, Instant::now(), pending));
                    });
                    let (deadline, done, pending) =
                        rx.recv_timeout(HANG_LIMIT).unwrap_or_else(|_| panic!("{label}: round {round} never woke"));
                    assert!(done >= deadline, "{label}: early");
                    if !pending {
                        return None;
                    }
                }
                let m = rt.metrics().driver;
                assert_eq!(m.timers_fired, ROUNDS as u64, "{label}");
                assert_eq!(m.timer_remote_cancels, 0, "{label}");
                Some(())
            });
        }
    }
}

#[test]
fn every_task_once_with_timers_armed_and_cancelled_across_workers() {
    const SLEEPERS: usize = 3_000;
    const TIMEOUTS: usize = 20_000;
    for kind in KINDS {
        for workers in [2, 8] {
            for mode in MODES {
                let label = format!("{kind} x{workers} timer={mode}");
                let rt = runtime(kind, workers, mode);
                let flags = Flags::new(SLEEPERS + TIMEOUTS);
                let probes: Vec<_> = (0..SLEEPERS).map(|_| probe()).collect();
                let wakers: Vec<(Arc<Probe>, Waker)> = probes.iter().map(|(p, w)| (p.clone(), w.clone())).collect();
                let f = flags.clone();
                rt.block_on(async move {
                    let mut handles = Vec::new();
                    for (i, (p, waker)) in wakers.into_iter().enumerate() {
                        let f = f.clone();
                        handles.push(spawn(async move {
                            // 1..=3 ms: never due at its first poll.
                            let mut s = sleep(Duration::from_millis(1 + (i % 3) as u64));
                            // The timer wakes the probe, which wakes the task.
                            std::future::poll_fn(|cx| {
                                *p.task.lock().unwrap() = Some(cx.waker().clone());
                                poll_with(&mut s, &waker)
                            })
                            .await;
                            f.hit(i);
                        }));
                    }
                    for i in 0..TIMEOUTS {
                        let f = f.clone();
                        handles.push(spawn(async move {
                            // Armed here, cancelled after yields: often on
                            // another worker by then.
                            let r = timeout(Duration::from_secs(3600), async {
                                for _ in 0..3 {
                                    yield_now().await;
                                }
                            })
                            .await;
                            assert!(r.is_ok());
                            f.hit(SLEEPERS + i);
                        }));
                    }
                    for h in handles {
                        h.await.expect("task");
                    }
                });
                flags.assert_all_once(&label);
                // A sleeper preempted past its deadline before it armed
                // completes at once, unfired; every other fires once.
                let mut fired = 0;
                for (i, (p, _)) in probes.iter().enumerate() {
                    let wakes = p.wakes.load(Ordering::SeqCst);
                    assert!(wakes <= 1, "{label}: sleeper {i} fired {wakes} times");
                    fired += wakes as u64;
                }
                let m = rt.metrics().driver;
                assert_eq!(m.timers_fired, fired, "{label}: only the sleepers fire, each counted once");
                assert!(fired > 0, "{label}: no sleeper armed");
                if mode == "shared" {
                    assert_eq!(m.timer_remote_cancels, 0, "{label}");
                }
                assert!(m.timer_remote_cancels <= TIMEOUTS as u64, "{label}: {}", m.timer_remote_cancels);
                assert!(rt.shutdown_timeout(Duration::from_secs(10)), "{label}: workers did not stop");
            }
        }
    }
}

#[test]
fn shutdown_with_timers_pending_drops_every_task_once_and_completes_handed_out_sleeps() {
    const TASKS: usize = 2_000;
    for kind in KINDS {
        for workers in [1, 2, 8] {
            let label = format!("{kind} x{workers} timer=per-worker");
            let rt = runtime(kind, workers, "per-worker");
            let drops = Arc::new(AtomicUsize::new(0));
            let started = Arc::new(AtomicUsize::new(0));
            for _ in 0..TASKS {
                let (guard, started) = (DropCount(drops.clone()), started.clone());
                rt.spawn(async move {
                    let _guard = guard;
                    started.fetch_add(1, Ordering::SeqCst);
                    sleep(Duration::from_secs(3600)).await;
                });
            }
            wait_until(&label, || started.load(Ordering::SeqCst) == TASKS);
            let far = Instant::now() + Duration::from_secs(3600);
            let mut handed_out = arm_on_a_worker(&rt, vec![far, far]);
            assert!(rt.shutdown_timeout(Duration::from_secs(10)), "{label}: workers did not stop");
            assert_eq!(drops.load(Ordering::SeqCst), TASKS, "{label}: tasks dropped");
            for (s, p) in &mut handed_out {
                assert_eq!(p.wakes.load(Ordering::SeqCst), 1, "{label}: shutdown fires a pending timer once");
                assert!(poll_with(s, Waker::noop()).is_ready(), "{label}: a sleep outlived its runtime");
            }
        }
    }
}
