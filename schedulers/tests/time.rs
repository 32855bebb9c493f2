//! Timers through the public API, for every scheduling policy: current-thread
//! at 1 worker, the others at 1, 2 and 8 workers; those that take the
//! `timer` knob also with `timer=per-worker` (one wheel per worker).

mod common;

use std::collections::BTreeMap;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use wsbench_schedulers::time::{interval, sleep, sleep_until, timeout, Elapsed, Sleep};
use wsbench_schedulers::{Builder, Runtime, SchedulerKind};

/// A policy, its worker count, and whether it runs `timer=per-worker`.
#[derive(Debug, Clone, Copy)]
struct Config {
    kind: SchedulerKind,
    workers: usize,
    per_worker_timers: bool,
}

impl std::fmt::Display for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} x{}{}", self.kind, self.workers, if self.per_worker_timers { " timer=per-worker" } else { "" })
    }
}

/// Every configuration under test.
fn configs() -> Vec<Config> {
    let mut out = Vec::new();
    for kind in SchedulerKind::ALL {
        let workers: &[usize] = if kind == SchedulerKind::CurrentThread { &[1] } else { &[1, 2, 8] };
        let modes: &[bool] = if kind.info().knobs.contains(&"timer") { &[false, true] } else { &[false] };
        for &per_worker_timers in modes {
            out.extend(workers.iter().map(|&workers| Config { kind, workers, per_worker_timers }));
        }
    }
    out
}

fn runtime(c: Config) -> Runtime {
    let mut b = Builder::new(c.kind).workers(c.workers);
    if c.per_worker_timers {
        b = b.knob("timer", "per-worker");
    }
    b.build().unwrap_or_else(|e| panic!("{c}: {e}"))
}

/// One global sequence of "registered" and "fired" events.
static SEQ: AtomicU64 = AtomicU64::new(0);
const NOT_FIRED: u64 = u64::MAX;

/// The waker a probed sleep files: records when the driver wakes it.
struct Probe {
    fired_seq: AtomicU64,
    wakes: AtomicUsize,
    task: Mutex<Option<Waker>>,
    /// The thread that fired it first (under `timer=per-worker`, the
    /// worker whose wheel held it).
    fired_on: Mutex<Option<std::thread::ThreadId>>,
}

impl Wake for Probe {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let seq = SEQ.fetch_add(1, Ordering::SeqCst);
        let _ = self.fired_seq.compare_exchange(NOT_FIRED, seq, Ordering::SeqCst, Ordering::SeqCst);
        self.fired_on.lock().unwrap().get_or_insert_with(|| std::thread::current().id());
        self.wakes.fetch_add(1, Ordering::SeqCst);
        if let Some(w) = self.task.lock().unwrap().as_ref() {
            w.wake_by_ref();
        }
    }
}

/// A sleep polled through a [`Probe`] waker.
struct Probed {
    sleep: Sleep,
    probe: Arc<Probe>,
    waker: Waker,
    polls: usize,
    immediate: bool,
}

impl Probed {
    fn new(sleep: Sleep) -> Probed {
        let probe = Arc::new(Probe {
            fired_seq: AtomicU64::new(NOT_FIRED),
            wakes: AtomicUsize::new(0),
            task: Mutex::new(None),
            fired_on: Mutex::new(None),
        });
        Probed { sleep, waker: Waker::from(probe.clone()), probe, polls: 0, immediate: false }
    }
}

impl Future for Probed {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        *this.probe.task.lock().unwrap() = Some(cx.waker().clone());
        this.polls += 1;
        let ready = Pin::new(&mut this.sleep).poll(&mut Context::from_waker(&this.waker));
        if ready.is_ready() && this.polls == 1 {
            this.immediate = true;
        }
        ready
    }
}

#[derive(Debug, Clone)]
struct Outcome {
    deadline: Instant,
    done_at: Instant,
    registered_seq: u64,
    fired_seq: u64,
    wakes: usize,
    immediate: bool,
    /// The thread that finished it (on `thread-per-core`, its core: a
    /// task never leaves its core there).
    thread: std::thread::ThreadId,
    /// The thread that fired it.
    fired_on: Option<std::thread::ThreadId>,
}

async fn probed_sleep(deadline: Instant) -> Outcome {
    let mut p = Probed::new(sleep_until(deadline));
    // The first poll files the timer; its registration is sequenced after
    // that, so a task preempted between its clock check and the filing is
    // never counted as waiting in the wheel before it was there.
    // Polled only when the executor polls it (first, then after wakes).
    let mut registered_seq = None;
    poll_fn(|cx| {
        let r = Pin::new(&mut p).poll(cx);
        registered_seq.get_or_insert_with(|| SEQ.fetch_add(1, Ordering::SeqCst));
        r
    })
    .await;
    let registered_seq = registered_seq.expect("polled at least once");
    let fired_on = *p.probe.fired_on.lock().unwrap();
    Outcome {
        deadline,
        done_at: Instant::now(),
        registered_seq,
        fired_seq: p.probe.fired_seq.load(Ordering::SeqCst),
        wakes: p.probe.wakes.load(Ordering::SeqCst),
        immediate: p.immediate,
        thread: std::thread::current().id(),
        fired_on,
    }
}

/// Replays registrations and fires in sequence order: when a timer fires, no
/// timer filed before it and due a full millisecond (one wheel tick) earlier
/// may still be waiting.
fn check_deadline_order(outcomes: &[Outcome], label: &str) {
    enum Ev {
        Registered(Instant),
        Fired(Instant),
    }
    let mut events: Vec<(u64, u8, Ev)> = Vec::new();
    for o in outcomes.iter().filter(|o| !o.immediate) {
        assert_ne!(o.fired_seq, NOT_FIRED, "{label}: completed without a wake");
        // A timer that fired before its task took the registration number
        // was registered just before it fired.
        events.push((o.registered_seq.min(o.fired_seq), 0, Ev::Registered(o.deadline)));
        events.push((o.fired_seq, 1, Ev::Fired(o.deadline)));
    }
    events.sort_unstable_by_key(|e| (e.0, e.1));
    let mut waiting: BTreeMap<Instant, usize> = BTreeMap::new();
    for (_, _, ev) in events {
        match ev {
            Ev::Registered(d) => *waiting.entry(d).or_default() += 1,
            Ev::Fired(d) => {
                let n = waiting.get_mut(&d).expect("fired before it was registered");
                *n -= 1;
                if *n == 0 {
                    waiting.remove(&d);
                }
                if let Some((&first, _)) = waiting.first_key_value() {
                    assert!(
                        first + Duration::from_millis(1) > d,
                        "{label}: a timer due {:?} earlier was still waiting when one fired",
                        d - first
                    );
                }
            }
        }
    }
}

#[test]
fn hundred_thousand_sleeps_fire_once_never_early_in_deadline_order() {
    const SLEEPS: usize = 100_000;
    const SPREAD_US: u64 = 300_000;
    for c in configs() {
        let (kind, workers, label) = (c.kind, c.workers, c.to_string());
        let rt = runtime(c);
        let mut rng = StdRng::seed_from_u64(42);
        let offsets: Vec<u64> = (0..SLEEPS).map(|_| rng.random_range(0..SPREAD_US)).collect();
        let outcomes = rt.block_on(async move {
            let start = Instant::now();
            let handles: Vec<_> = offsets
                .into_iter()
                .map(|us| wsbench_schedulers::spawn(probed_sleep(start + Duration::from_micros(us))))
                .collect();
            let mut out = Vec::with_capacity(handles.len());
            for h in handles {
                out.push(h.await.expect("sleep task failed"));
            }
            out
        });
        assert_eq!(outcomes.len(), SLEEPS);
        for o in &outcomes {
            assert!(o.done_at >= o.deadline, "{label}: early by {:?}", o.deadline - o.done_at);
            assert!(o.wakes <= 1, "{label}: a timer fired {} times", o.wakes);
        }
        if kind == SchedulerKind::ThreadPerCore {
            // One wheel per core: deadline order holds within each core's
            // wheel, not across cores (a busy core fires its timers late
            // while another fires later deadlines on time).
            let mut by_core: BTreeMap<String, Vec<Outcome>> = BTreeMap::new();
            for o in outcomes.iter() {
                by_core.entry(format!("{:?}", o.thread)).or_default().push(o.clone());
            }
            assert_eq!(by_core.len(), workers, "{label}: cores that ran sleeps");
            for (core, group) in &by_core {
                check_deadline_order(group, &format!("{label} core {core}"));
            }
        } else if c.per_worker_timers {
            // One wheel per worker: the order holds within each wheel,
            // i.e. among the timers one worker fired.
            let mut by_wheel: BTreeMap<String, Vec<Outcome>> = BTreeMap::new();
            for o in outcomes.iter().filter(|o| !o.immediate) {
                by_wheel.entry(format!("{:?}", o.fired_on)).or_default().push(o.clone());
            }
            assert!(by_wheel.len() <= workers, "{label}: {} threads fired timers", by_wheel.len());
            for (thread, group) in &by_wheel {
                check_deadline_order(group, &format!("{label} wheel of {thread}"));
            }
        } else {
            check_deadline_order(&outcomes, &label);
        }
        let fired = outcomes.iter().filter(|o| !o.immediate).count() as u64;
        assert_eq!(rt.metrics().driver.timers_fired, fired, "{label}: timers_fired counter");
    }
}

/// 2,000 timers, each polled once (filed) and dropped (cancelled) before
/// its deadline, then a sleep past all of them: none fires, and only that
/// sleep is counted. A round whose clock shows a cancel at or after its
/// deadline (the task was preempted that long) proves nothing and runs
/// again with a longer lead ([`common::with_lead`]).
#[test]
fn cancelled_timers_never_fire() {
    const TIMERS: usize = 2_000;
    const CANCEL_AHEAD: Duration = Duration::from_millis(50);
    for c in configs() {
        let label = c.to_string();
        let (probes, fired) = common::with_lead(&label, CANCEL_AHEAD, |lead| {
            let rt = runtime(c);
            let probes = rt.block_on(cancel_ahead(TIMERS, lead, &label))?;
            Some((probes, rt.metrics().driver.timers_fired))
        });
        for p in &probes {
            assert_eq!(p.wakes.load(Ordering::SeqCst), 0, "{label}: a cancelled timer fired");
        }
        assert_eq!(fired, 1, "{label}: only the final sleep fires");
    }
}

/// The rounds of [`cancelled_timers_never_fire`]: `None` when some timer
/// was not filed and cancelled before its deadline.
async fn cancel_ahead(timers: usize, lead: Duration, label: &str) -> Option<Vec<Arc<Probe>>> {
    let mut tasks = Vec::new();
    for i in 0..timers {
        // Each in its own task, so every poll has a fresh budget.
        let deadline = Instant::now() + lead + Duration::from_micros(i as u64);
        let label = label.to_string();
        tasks.push(wsbench_schedulers::spawn(async move {
            let mut p = Probed::new(sleep_until(deadline));
            let polled = Pin::new(&mut p).poll(&mut Context::from_waker(Waker::noop()));
            let probe = p.probe.clone();
            drop(p); // the timer is cancelled
            let cancelled_at = Instant::now();
            assert!(polled.is_pending() || cancelled_at >= deadline, "{label}: timer {i} elapsed early");
            (deadline, probe, polled.is_pending() && cancelled_at < deadline)
        }));
    }
    let mut probes = Vec::new();
    let mut ahead = true;
    let mut last = Instant::now();
    for t in tasks {
        let (deadline, probe, in_time) = t.await.expect("cancelling task");
        ahead &= in_time;
        last = last.max(deadline);
        probes.push(probe);
    }
    // The wheel fires in deadline order, so once this sleep is done every
    // cancelled deadline has been passed by the driver.
    sleep_until(last + Duration::from_millis(2)).await;
    ahead.then_some(probes)
}

#[test]
fn timeout_elapses_for_pending_and_passes_ready_values() {
    for c in configs() {
        let label = c.to_string();
        let rt = runtime(c);
        rt.block_on(async {
            let start = Instant::now();
            let r: Result<u8, Elapsed> = timeout(Duration::from_millis(5), std::future::pending()).await;
            assert!(r.is_err(), "{label}");
            assert!(start.elapsed() >= Duration::from_millis(5), "{label}: elapsed early");
            assert_eq!(timeout(Duration::from_millis(5), async { 7 }).await, Ok(7), "{label}");
            assert_eq!(timeout(Duration::ZERO, async { 8 }).await, Ok(8), "{label}");
            assert_eq!(timeout(Duration::MAX, async { 9 }).await, Ok(9), "{label}");
            let slow = timeout(Duration::from_millis(1), sleep(Duration::from_secs(60))).await;
            assert!(slow.is_err(), "{label}");
            let fast = timeout(Duration::from_secs(60), sleep(Duration::from_millis(1))).await;
            assert_eq!(fast, Ok(()), "{label}");
            let io_err: std::io::Error = slow.unwrap_err().into();
            assert_eq!(io_err.kind(), std::io::ErrorKind::TimedOut);
        });
    }
}

#[test]
fn interval_ticks_on_schedule_without_drift() {
    const PERIOD: Duration = Duration::from_millis(3);
    const TICKS: u32 = 20;
    for c in configs() {
        let label = c.to_string();
        let rt = runtime(c);
        rt.block_on(async {
            let mut ticker = interval(PERIOD);
            let first = ticker.tick().await;
            for k in 1..TICKS {
                if k == TICKS / 2 {
                    // A slow consumer: the schedule must not shift.
                    sleep(PERIOD * 3).await;
                }
                let at = ticker.tick().await;
                assert_eq!(at, first + PERIOD * k, "{label}: tick {k} drifted");
                assert!(Instant::now() >= at, "{label}: tick {k} early");
            }
            assert_eq!(ticker.period(), PERIOD);
        });
    }
}

#[test]
fn zero_past_and_max_sleeps_are_well_defined() {
    for c in configs() {
        let label = c.to_string();
        let rt = runtime(c);
        rt.block_on(async {
            sleep(Duration::ZERO).await;
            sleep_until(Instant::now() - Duration::from_secs(1)).await;
            let mut forever = sleep(Duration::MAX);
            assert!(forever.deadline() > Instant::now() + Duration::from_secs(60 * 60 * 24 * 365), "{label}");
            let polled = Pin::new(&mut forever).poll(&mut Context::from_waker(Waker::noop()));
            assert!(polled.is_pending(), "{label}");
            assert!(!forever.is_elapsed(), "{label}");
            let h = wsbench_schedulers::spawn(sleep(Duration::MAX));
            h.abort();
            assert!(h.await.unwrap_err().is_cancelled(), "{label}");
        });
        assert_eq!(rt.metrics().driver.timers_fired, 0, "{label}");
    }
}

#[test]
fn shutdown_with_tasks_asleep_does_not_hang() {
    for c in configs() {
        let rt = runtime(c);
        let dropped = Arc::new(AtomicUsize::new(0));
        struct CountDrop(Arc<AtomicUsize>);
        impl Drop for CountDrop {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        for _ in 0..100 {
            let guard = CountDrop(dropped.clone());
            rt.spawn(async move {
                let _guard = guard;
                sleep(Duration::from_secs(3600)).await;
            });
        }
        rt.shutdown_timeout(Duration::from_secs(10));
        assert_eq!(dropped.load(Ordering::SeqCst), 100, "{c}: tasks not dropped");
    }
}
