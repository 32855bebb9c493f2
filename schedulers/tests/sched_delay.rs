//! Schedule delay (`sched-delay=on`): every poll of a task records one
//! delay, so the histogram's count equals the `polls` counter exactly, on
//! every policy, whichever way the task was scheduled (spawned from inside
//! or outside, woken by another task, by a timer, or yielding). Off, there
//! is no histogram. No timing is asserted: only counts.

mod common;

use std::time::Duration;

use wsbench_schedulers::metrics::RuntimeMetrics;
use wsbench_schedulers::{task, time, Builder, Runtime, SchedulerKind};

/// Tasks spawned from `block_on`; each spawns a child it joins.
const TASKS: usize = 40;
/// Yields per task (each one a reschedule and a poll).
const YIELDS: usize = 10;

/// Spawns, yields, joins (a wake from another task) and sleeps (a wake from
/// the timer driver), from inside `block_on` and from the test thread.
fn exercise(rt: &Runtime) {
    let outside: Vec<_> = (0..TASKS).map(|i| rt.spawn(async move { i })).collect();
    rt.block_on(async move {
        let mut handles = Vec::new();
        for i in 0..TASKS {
            handles.push(wsbench_schedulers::spawn(async move {
                let child = wsbench_schedulers::spawn(async move {
                    for _ in 0..YIELDS {
                        task::yield_now().await;
                    }
                    i
                });
                if i % 8 == 0 {
                    time::sleep(Duration::from_millis(1)).await;
                }
                child.await.unwrap()
            }));
        }
        for (i, h) in handles.into_iter().enumerate() {
            assert_eq!(h.await.unwrap(), i);
        }
        for (i, h) in outside.into_iter().enumerate() {
            assert_eq!(h.await.unwrap(), i);
        }
    });
}

fn build(kind: SchedulerKind, workers: usize, driver_thread: bool, value: Option<&str>) -> Runtime {
    let mut b = Builder::new(kind).workers(workers).driver_thread(driver_thread);
    if let Some(v) = value {
        b = b.knob("sched-delay", v);
    }
    b.build().unwrap_or_else(|e| panic!("building {kind} x{workers} sched-delay={value:?}: {e}"))
}

/// Every joined task has finished its last poll, and each poll counted
/// itself and its delay before it ran: the counts are final and equal.
fn assert_one_delay_per_poll(m: &RuntimeMetrics, at: &str) {
    let polls = m.totals().polls;
    let delays = m.sched_delay.as_ref().unwrap_or_else(|| panic!("{at}: sched-delay=on reports no histogram"));
    // At least: every task's first poll, one per yield, one per wake.
    let least = (3 * TASKS + TASKS * YIELDS) as u64;
    assert!(polls >= least, "{at}: {polls} polls, fewer than the {least} the tasks need");
    assert_eq!(delays.count(), polls, "{at}: one schedule delay per poll");
    let summed: u64 = delays
        .buckets()
        .map(|(low, high, count)| {
            assert!(low < high, "{at}: empty bucket range {low}..{high}");
            count
        })
        .sum();
    assert_eq!(summed, polls, "{at}: the buckets hold every delay");
}

#[test]
fn every_poll_records_one_delay_on_every_policy() {
    for (kind, workers) in common::configs(&[1, 2]) {
        let rt = build(kind, workers, true, Some("on"));
        exercise(&rt);
        assert_one_delay_per_poll(&rt.metrics(), &format!("{kind} x{workers}"));
        rt.shutdown_timeout(Duration::from_secs(5));
    }
    // current-thread driven by `block_on` on the calling thread.
    let rt = build(SchedulerKind::CurrentThread, 1, false, Some("on"));
    exercise(&rt);
    assert_one_delay_per_poll(&rt.metrics(), "current-thread on block_on");
}

#[test]
fn off_by_knob_or_default_there_is_no_histogram() {
    for value in [None, Some("off")] {
        for kind in [SchedulerKind::StealHalf, SchedulerKind::CurrentThread, SchedulerKind::ThreadPerCore] {
            let rt = build(kind, 1, true, value);
            exercise(&rt);
            let m = rt.metrics();
            assert!(m.totals().polls > 0, "{kind}: the runtime ran tasks");
            assert!(m.sched_delay.is_none(), "{kind} sched-delay={value:?}: {:?}", m.sched_delay.map(|d| d.count()));
        }
    }
}

#[test]
fn the_knob_takes_on_and_off_only() {
    let e = Builder::new(SchedulerKind::StealHalf).knob("sched-delay", "yes").build().err().expect("a bad value");
    let text = e.to_string();
    assert!(text.contains("`yes`") && text.contains("off|on"), "{text}");
}
