//! Counter values (issue 19 item 10): each counter the harness reports is
//! checked against a scenario whose count is known without the runtime's
//! help, so a counter that is never incremented, incremented in the wrong
//! place or counted twice fails here.
//!
//! Quiescence: parks, unparks and driver polls depend on when a wake-up
//! arrives. The tests below only act (spawn) once every worker is blocked
//! in its park (its thread is in state `S` in `/proc` and its `parks`
//! counter has been bumped, which happens just before it blocks), so each
//! step's effect on the counters follows from the wake protocol alone.

mod common;

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant};

use common::Latch;
use wsbench_schedulers::metrics::WorkerMetrics;
use wsbench_schedulers::{Builder, Runtime, SchedulerKind};

/// Hang detector only (never a timing assertion).
const LIMIT: Duration = Duration::from_secs(20);

/// Policies that run on the shared worker loop, each with one worker.
const ONE_WORKER: [SchedulerKind; 5] = [
    SchedulerKind::CurrentThread,
    SchedulerKind::Global,
    SchedulerKind::PerWorker,
    SchedulerKind::StealOne,
    SchedulerKind::StealHalf,
];

/// A thread-name prefix unique in this process (tests run in parallel and
/// the quiescence check finds workers by name; `comm` keeps 15 bytes).
fn unique_name() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("ctr{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// These tests spawn from the test thread and wait outside `block_on`, so
/// `current-thread` gets its driver thread (its default runs tasks only
/// inside `block_on`; `block_on.rs` tests that mode's counters).
fn build(kind: SchedulerKind, workers: usize, knobs: &[(&str, &str)]) -> (Runtime, String) {
    let name = unique_name();
    let mut b = Builder::new(kind).workers(workers).thread_name(name.clone()).driver_thread(true);
    for (k, v) in knobs {
        b = b.knob(*k, *v);
    }
    (b.build().unwrap_or_else(|e| panic!("building {kind} x{workers} {knobs:?}: {e}")), name)
}

fn totals(rt: &Runtime) -> WorkerMetrics {
    rt.metrics().totals()
}

/// Polls `ready` every millisecond until true; panics with `what` after
/// `LIMIT` (a hang detector).
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < LIMIT, "{what}: condition not reached in {LIMIT:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Thread ids of this process's threads whose name is one of `names`;
/// waits until there are exactly `count`.
fn tids_named(names: &[String], count: usize) -> Vec<String> {
    let mut tids = Vec::new();
    wait_until(&format!("finding {count} threads named {names:?} in /proc/self/task"), || {
        tids = std::fs::read_dir("/proc/self/task")
            .expect("/proc/self/task")
            .filter_map(|e| e.ok())
            .filter(|e| {
                let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
                names.iter().any(|n| n == comm.trim_end())
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        tids.len() == count
    });
    tids
}

/// The worker threads of the runtime built with thread-name `prefix`.
fn worker_tids(prefix: &str, workers: usize) -> Vec<String> {
    let names: Vec<String> = (0..workers).map(|i| format!("{prefix}-{i}")).collect();
    tids_named(&names, workers)
}

/// The thread is blocked (state `S`: interruptible sleep).
fn sleeping(tid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap_or_default();
    // The state follows the parenthesised name, which may hold spaces.
    stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) == Some("S")
}

/// Waits until `parks` reaches `expected` and every worker thread sleeps:
/// a worker bumps `parks` just before it blocks, and after that the only
/// places it can block are the parker's condvar and the driver's epoll.
fn wait_all_parked(rt: &Runtime, tids: &[String], expected: u64, what: &str) {
    wait_until(&format!("{what}: every worker parked with parks == {expected}"), || {
        totals(rt).parks == expected && tids.iter().all(|t| sleeping(t))
    });
}

/// N tasks spawned from the test thread (not a worker): each is one remote
/// spawn, one poll (it finishes in its first) and one pop from the queue
/// remote spawns go to; nothing is spawned locally.
#[test]
fn spawns_from_outside_are_remote_spawns_and_inject_pops() {
    const N: u64 = 100;
    let mut configs: Vec<(SchedulerKind, usize)> = ONE_WORKER.iter().map(|&k| (k, 1)).collect();
    // With two workers a task may be stolen after its inject pop; it is
    // still popped from the inject queue exactly once.
    configs.push((SchedulerKind::StealHalf, 2));
    configs.push((SchedulerKind::Global, 2));
    configs.push((SchedulerKind::ThreadPerCore, 2));
    for (kind, workers) in configs {
        let (rt, _) = build(kind, workers, &[]);
        let latch = Latch::new(N as usize);
        for _ in 0..N {
            let l = latch.clone();
            drop(rt.spawn(async move { l.count_down() }));
        }
        let what = format!("{kind} x{workers}");
        latch.wait(LIMIT, &what);
        let m = totals(&rt);
        assert_eq!(m.spawns_remote, N, "{what}: {m:?}");
        assert_eq!(m.spawns_local, 0, "{what}: {m:?}");
        assert_eq!(m.polls, N, "{what}: {m:?}");
        assert_eq!(m.inject_pops, N, "{what}: {m:?}");
        assert_eq!(m.overflows, 0, "{what}: {m:?}");
        assert!(rt.shutdown_timeout(LIMIT), "{what}: shutdown");
    }
}

/// One task, spawned from outside, spawns N children from inside and
/// returns without awaiting them; every child finishes in its first poll.
/// Returns the counter totals once all children have run.
fn parent_spawns_children(rt: &Runtime, n: usize, what: &str) -> WorkerMetrics {
    let latch = Latch::new(n);
    let l = latch.clone();
    drop(rt.spawn(async move {
        for _ in 0..n {
            let l = l.clone();
            drop(wsbench_schedulers::spawn(async move { l.count_down() }));
        }
    }));
    latch.wait(LIMIT, what);
    totals(rt)
}

/// On one worker, N spawns from inside a task are N local spawns; the
/// parent is the one remote spawn. Every policy but `global` keeps local
/// spawns in the worker's own queue, so the parent is the only inject pop;
/// `global` has only the shared queue, so all N + 1 tasks are popped from
/// it. steal-half's LIFO slot holds the newest child when the parent
/// returns, and the worker runs it next from the slot: exactly one LIFO hit.
#[test]
fn spawns_from_a_task_are_local_spawns() {
    const N: usize = 50;
    let mut configs: Vec<(SchedulerKind, usize)> = ONE_WORKER.iter().map(|&k| (k, 1)).collect();
    configs.push((SchedulerKind::ThreadPerCore, 1));
    for (kind, workers) in configs {
        let (rt, _) = build(kind, workers, &[]);
        let what = format!("{kind} x{workers}");
        let m = parent_spawns_children(&rt, N, &what);
        assert_eq!(m.spawns_local, N as u64, "{what}: {m:?}");
        assert_eq!(m.spawns_remote, 1, "{what}: {m:?}");
        assert_eq!(m.polls, N as u64 + 1, "{what}: {m:?}");
        let inject_pops = if kind == SchedulerKind::Global { N as u64 + 1 } else { 1 };
        assert_eq!(m.inject_pops, inject_pops, "{what}: {m:?}");
        let lifo_hits = u64::from(kind == SchedulerKind::StealHalf);
        assert_eq!(m.lifo_hits, lifo_hits, "{what}: {m:?}");
        assert_eq!(m.overflows, 0, "{what}: {m:?}");
        assert!(rt.shutdown_timeout(LIMIT), "{what}: shutdown");
    }
}

/// The documented overflow rule of steal-half's ring, replayed on a plain
/// count: a push into a full ring of `capacity` moves the older half plus
/// the pushed task to the inject queue. Returns (overflows, tasks moved).
fn overflow_model(capacity: u64, pushes: u64) -> (u64, u64) {
    let (mut len, mut overflows, mut moved) = (0, 0, 0);
    for _ in 0..pushes {
        if len == capacity {
            overflows += 1;
            moved += capacity / 2 + 1;
            len = capacity / 2;
        } else {
            len += 1;
        }
    }
    (overflows, moved)
}

/// steal-half on one worker with a ring of 64: a parent spawning 200
/// children from inside (nothing runs meanwhile) overflows the ring. With
/// `lifo=off` all 200 go through the ring: pushes 65, 98, 131, 164 and 197
/// overflow (5 overflows, 5 * 33 = 165 tasks to the inject queue). With
/// the LIFO slot each spawn displaces the previous child into the ring
/// (199 pushes, the same 5 overflows). Every task moved to the inject
/// queue is popped from it once more, plus the parent.
#[test]
fn ring_overflows_and_their_inject_pops() {
    const N: u64 = 200;
    const CAPACITY: u64 = 64;
    assert_eq!(overflow_model(CAPACITY, N), (5, 165), "the hand count in the doc");
    for lifo in ["off", "on"] {
        let (rt, _) = build(SchedulerKind::StealHalf, 1, &[("lifo", lifo), ("queue-capacity", "64")]);
        let what = format!("steal-half lifo={lifo} queue-capacity=64");
        let m = parent_spawns_children(&rt, N as usize, &what);
        let pushes = if lifo == "on" { N - 1 } else { N };
        let (overflows, moved) = overflow_model(CAPACITY, pushes);
        assert_eq!(m.overflows, overflows, "{what}: {m:?}");
        assert_eq!(m.inject_pops, 1 + moved, "{what}: {m:?}");
        assert_eq!(m.spawns_local, N, "{what}: {m:?}");
        assert_eq!(m.polls, N + 1, "{what}: {m:?}");
        assert_eq!(m.lifo_hits, u64::from(lifo == "on"), "{what}: {m:?}");
        assert!(rt.shutdown_timeout(LIMIT), "{what}: shutdown");
    }
}

/// One worker, idle: it parks on the driver (epoll). Each round spawns one
/// task from outside into the parked runtime: the worker is unparked once
/// (a notification: `unparks`), returns from its driver park once
/// (`driver_polls`), runs the task and parks again (`parks`). It ran a task
/// after each wake-up, so no unpark is spurious. Maintenance (a driver poll
/// every 61 ticks) never comes: the whole test is 1 + 2 * ROUNDS ticks.
#[test]
fn one_worker_parks_unparks_and_driver_polls() {
    const ROUNDS: u64 = 5;
    for kind in ONE_WORKER {
        let (rt, name) = build(kind, 1, &[]);
        let tids = worker_tids(&name, 1);
        let what = format!("{kind} x1");
        wait_all_parked(&rt, &tids, 1, &what);
        for round in 1..=ROUNDS {
            let latch = Latch::new(1);
            let l = latch.clone();
            drop(rt.spawn(async move { l.count_down() }));
            latch.wait(LIMIT, &what);
            wait_all_parked(&rt, &tids, round + 1, &format!("{what} round {round}"));
        }
        let m = totals(&rt);
        assert_eq!(m.parks, ROUNDS + 1, "{what}: {m:?}");
        assert_eq!(m.unparks, ROUNDS, "{what}: {m:?}");
        assert_eq!(m.spurious_unparks, 0, "{what}: {m:?}");
        assert_eq!(m.driver_polls, ROUNDS, "{what}: {m:?}");
        assert_eq!(m.polls, ROUNDS, "{what}: {m:?}");
        assert!(rt.shutdown_timeout(LIMIT), "{what}: shutdown");
    }
}

/// Two workers, both parked (one on the driver, the other on its condvar:
/// the last to park takes the driver when it is free). A task pushed from
/// outside to a shared queue wakes one worker as a searcher; when that
/// last searcher finds the task it wakes the other (tokio's rule), which
/// finds nothing and parks again: per round 2 parks, 2 unparks, 1 of them
/// spurious, and one return from the driver park (only one worker was in
/// it). per-worker pushes to one worker's inbox and wakes only it, not as a
/// searcher: per round 1 park, 1 unpark, none spurious.
#[test]
fn two_workers_wake_protocol_counts() {
    const ROUNDS: u64 = 4;
    for kind in [SchedulerKind::StealHalf, SchedulerKind::StealOne, SchedulerKind::Global, SchedulerKind::PerWorker] {
        let (rt, name) = build(kind, 2, &[]);
        let tids = worker_tids(&name, 2);
        let what = format!("{kind} x2");
        let (parks_per_round, spurious_per_round) = if kind == SchedulerKind::PerWorker { (1, 0) } else { (2, 1) };
        wait_all_parked(&rt, &tids, 2, &what);
        // Starting up, a worker may search once before it parks.
        let start_attempts = totals(&rt).steal_attempts;
        for round in 1..=ROUNDS {
            let latch = Latch::new(1);
            let l = latch.clone();
            drop(rt.spawn(async move { l.count_down() }));
            latch.wait(LIMIT, &what);
            wait_all_parked(&rt, &tids, 2 + round * parks_per_round, &format!("{what} round {round}"));
        }
        let m = totals(&rt);
        assert_eq!(m.parks, 2 + ROUNDS * parks_per_round, "{what}: {m:?}");
        assert_eq!(m.unparks, ROUNDS * parks_per_round, "{what}: {m:?}");
        assert_eq!(m.spurious_unparks, ROUNDS * spurious_per_round, "{what}: {m:?}");
        assert_eq!(m.polls, ROUNDS, "{what}: {m:?}");
        if kind == SchedulerKind::PerWorker {
            // The woken worker was the driver's holder in some rounds only.
            assert!(m.driver_polls <= ROUNDS, "{what}: {m:?}");
        } else {
            assert_eq!(m.driver_polls, ROUNDS, "{what}: {m:?}");
        }
        assert_eq!(m.steals, 0, "{what}: nothing to steal: {m:?}");
        if kind == SchedulerKind::StealHalf {
            // The second worker searches its one peer each round; the first
            // searches too when the other has already parked again.
            let attempts = m.steal_attempts - start_attempts;
            assert!((ROUNDS..=2 * ROUNDS).contains(&attempts), "{what}: {attempts} attempts in the rounds: {m:?}");
        }
        assert!(rt.shutdown_timeout(LIMIT), "{what}: shutdown");
    }
}

/// `busy_ns` counts time running, not time parked: a worker idle for IDLE
/// and then running a task that spins for SPIN reports at least SPIN and
/// at most the whole life of the runtime minus IDLE (a counter that also
/// counted parked time would exceed it).
#[test]
fn busy_time_counts_running_not_parked() {
    const IDLE: Duration = Duration::from_millis(300);
    const SPIN: Duration = Duration::from_millis(50);
    for kind in [SchedulerKind::StealHalf, SchedulerKind::CurrentThread] {
        let start = Instant::now();
        let (rt, name) = build(kind, 1, &[]);
        let tids = worker_tids(&name, 1);
        let what = format!("{kind} x1");
        wait_all_parked(&rt, &tids, 1, &what);
        std::thread::sleep(IDLE);
        let latch = Latch::new(1);
        let l = latch.clone();
        drop(rt.spawn(async move {
            let t = Instant::now();
            while t.elapsed() < SPIN {
                std::hint::spin_loop();
            }
            l.count_down();
        }));
        latch.wait(LIMIT, &what);
        // Busy time is added when the worker parks again.
        wait_all_parked(&rt, &tids, 2, &what);
        let life = start.elapsed();
        let busy = Duration::from_nanos(totals(&rt).busy_ns);
        assert!(busy >= SPIN, "{what}: busy {busy:?} < the {SPIN:?} spin");
        assert!(busy <= life - IDLE, "{what}: busy {busy:?} includes parked time (life {life:?}, idle {IDLE:?})");
        assert!(rt.shutdown_timeout(LIMIT), "{what}: shutdown");
    }
}

/// A timer of SLEEP (2 ms) whose only worker is kept busy for HOLD (SLEEP
/// + 38 ms) after filing it fires late. Its lateness (fire time minus
/// deadline) lies between what the task observes: the deadline is within
/// [t0, t1] + SLEEP (clock reads around the sleep's creation) and the
/// timer fired after the spin ended and before the task saw it complete.
/// One timer: total == maximum. A round whose task was preempted past the
/// deadline before it filed the timer runs again with a longer SLEEP
/// ([`common::with_lead`]).
#[test]
fn timer_lateness_is_fire_time_minus_deadline() {
    const SLEEP: Duration = Duration::from_millis(2);
    const HOLD_PAST: Duration = Duration::from_millis(38);
    for kind in [SchedulerKind::StealHalf, SchedulerKind::CurrentThread] {
        let what = format!("{kind} x1");
        common::with_lead(&what, SLEEP, |sleep_for| {
            let (rt, _) = build(kind, 1, &[]);
            let [t0, t1, spin_end, woke] = late_timer(&rt, sleep_for, sleep_for + HOLD_PAST, &what)?;
            let d = rt.metrics().driver;
            assert_eq!(d.timers_fired, 1, "{what}: {d:?}");
            assert_eq!(d.timer_lateness_us_total, d.timer_lateness_us_max, "{what}: one timer: {d:?}");
            let us = |x: Duration| x.as_micros() as u64;
            let lo = us(spin_end.saturating_duration_since(t1 + sleep_for));
            let hi = us(woke.saturating_duration_since(t0 + sleep_for));
            assert!(lo >= 30_000, "{what}: the spin held the worker {lo} us past the deadline");
            assert!(
                (lo..=hi).contains(&d.timer_lateness_us_max),
                "{what}: lateness {} us outside [{lo}, {hi}]",
                d.timer_lateness_us_max
            );
            assert!(rt.shutdown_timeout(LIMIT), "{what}: shutdown");
            Some(())
        });
    }
}

/// One task on `rt` files a `sleep_for` timer, spins until `hold` after
/// filing it, then awaits it; returns its clock reads (t0, t1 around the
/// sleep's creation, the spin's end, the wake-up), or `None` when the
/// timer was already due at its first poll (the task was preempted that
/// long), so nothing was filed.
fn late_timer(rt: &Runtime, sleep_for: Duration, hold: Duration, what: &str) -> Option<[Instant; 4]> {
    let times = Arc::new(Mutex::new(None));
    let out = times.clone();
    let latch = Latch::new(1);
    let l = latch.clone();
    drop(rt.spawn(async move {
        let t0 = Instant::now();
        let mut sleep = pin!(wsbench_schedulers::time::sleep(sleep_for));
        let t1 = Instant::now();
        // File the timer, then keep the only worker busy past it.
        let filed = poll_fn(|cx| Poll::Ready(sleep.as_mut().poll(cx).is_pending())).await;
        if filed {
            while t1.elapsed() < hold {
                std::hint::spin_loop();
            }
            let spin_end = Instant::now();
            sleep.await;
            *out.lock().unwrap() = Some(Some([t0, t1, spin_end, Instant::now()]));
        } else {
            // Ready at once: only if the deadline had passed before the poll.
            assert!(t0.elapsed() >= sleep_for, "a {sleep_for:?} sleep was ready before its deadline");
            *out.lock().unwrap() = Some(None);
        }
        l.count_down();
    }));
    latch.wait(LIMIT, what);
    let recorded = times.lock().unwrap().take();
    recorded.expect("times recorded")
}

/// Three blocking closures that must run at once (a barrier of 3 plus the
/// test thread) need three pool threads; a fourth closure, submitted once
/// all three threads sleep idle, reuses one of them (keep-alive 60 s):
/// `blocking_threads_spawned` is 3.
#[test]
fn blocking_threads_spawned_counts_pool_threads() {
    let name = unique_name();
    let rt = Builder::new(SchedulerKind::StealHalf)
        .workers(1)
        .thread_name(name.clone())
        .max_blocking_threads(8)
        .blocking_keep_alive(Duration::from_secs(60))
        .build()
        .unwrap();
    let barrier = Arc::new(Barrier::new(4));
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let b = barrier.clone();
            rt.spawn_blocking(move || {
                b.wait();
            })
        })
        .collect();
    barrier.wait();
    for h in handles {
        rt.block_on(h).unwrap();
    }
    assert_eq!(rt.metrics().driver.blocking_threads_spawned, 3);
    let pool = tids_named(&[format!("{name}-blocking")], 3);
    wait_until("three idle pool threads", || pool.iter().all(|t| sleeping(t)));
    rt.block_on(rt.spawn_blocking(|| ())).unwrap();
    assert_eq!(rt.metrics().driver.blocking_threads_spawned, 3, "an idle pool thread is reused");
    assert!(rt.shutdown_timeout(LIMIT));
}
