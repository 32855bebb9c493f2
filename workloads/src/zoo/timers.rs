//! `timer-churn`: tasks on every worker arm timeouts that are almost all
//! cancelled, each cancelled by another task than the one that armed it,
//! usually on another worker.
//!
//! Origin: the timer-contention reports against tokio's shared timer
//! wheel, and the sharding of its timer lock that was merged and then
//! reverted for contention of its own. Signature: timer lock contention
//! (`timer_lock_contended`), remote cancels (`timer_remote_cancels` under
//! `timer=per-worker`; measured here for every runtime as
//! `cross_thread_cancels`) and CPU per timer (the harness's `cpu_us_per_op`,
//! `ops` being timers); `timer=shared|per-worker` moves them.
//!
//! An iteration spawns `tasks` tasks from `block_on`, joined in a ring by
//! `bounded(1)` channels (async-channel). Each, `timers` times: arms a
//! timer of `timeout-ms` (a sleep on the runtime's own timer, polled once,
//! which files it), sends it to the next task, receives one from the
//! previous task, polls it once more and drops it — a cancel, unless that
//! poll found it fired (counted apart, `timers_fired_early`). The ring
//! cannot deadlock: every task sends its k-th timer only after receiving
//! its (k−1)-th, so all channels full at once would need every task one
//! receive ahead of the next, all round the ring.
//!
//! Each timer carries the [`thread_tag`] of the thread that armed it;
//! `cross_thread_cancels` counts cancels on another thread, exactly.
//! Reported: `ops` is timers armed, one latency entry each (the arming
//! poll's time); extras `timers_armed`, `timers_cancelled`,
//! `timers_fired_early` (armed = cancelled + fired early),
//! `cross_thread_cancels`, `cancel_ns` (mean time of the check and drop, per cancel).

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use async_channel::{bounded, Receiver, Sender};
use futures_lite::future::poll_once;
use hdrhistogram::Histogram;

use crate::api::{RunOptions, RunOutput};
use crate::closed::{measure, thread_tag, Phase};
use crate::cpu_time::CpuMeter;
use crate::recorders::{nanos, new_histogram};
use crate::rt::{Rt, Spawner};

/// Largest `tasks`: each keeps a latency histogram (about 230 KB).
pub(crate) const MAX_TASKS: u64 = 256;
/// Largest `timers` per task per iteration.
pub(crate) const MAX_TIMERS: u64 = 1_000_000;
/// Largest `timeout-ms`.
pub(crate) const MAX_TIMEOUT_MS: u64 = 3_600_000;

/// A validated `timer-churn`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimerChurn {
    pub tasks: u64,
    pub timers: u64,
    pub timeout: Duration,
}

/// An armed timer on its way to the task that cancels it (`None`: it
/// fired on its arming poll, and a finished future is never polled again).
struct Armed {
    timer: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    armed_on: u64,
}

/// What one task counted.
#[derive(Debug, Clone, Copy, Default)]
struct Count {
    armed: u64,
    cancelled: u64,
    fired_early: u64,
    cross: u64,
    cancel_ns: u64,
}

impl Count {
    fn add(&mut self, o: &Count) {
        self.armed += o.armed;
        self.cancelled += o.cancelled;
        self.fired_early += o.fired_early;
        self.cross += o.cross;
        self.cancel_ns += o.cancel_ns;
    }
}

/// Arms one timer: a sleep that owns its spawner, polled once.
async fn arm<S: Spawner>(sp: &S, timeout: Duration, c: &mut Count, hist: &mut Histogram<u64>) -> Armed {
    let owner = sp.clone();
    let t = Instant::now();
    let mut timer: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(async move { owner.sleep(timeout).await });
    let fired = poll_once(&mut timer).await.is_some();
    hist.saturating_record(nanos(t.elapsed()).max(1));
    c.armed += 1;
    // Fired on its first poll (a wait shorter than the arming): counted as
    // fired early, not cancelled.
    c.fired_early += u64::from(fired);
    Armed { timer: (!fired).then_some(timer), armed_on: thread_tag() }
}

/// Cancels one timer: checks it has not fired, then drops it.
async fn cancel(a: Armed, c: &mut Count) {
    let Some(mut timer) = a.timer else { return };
    let t = Instant::now();
    if poll_once(&mut timer).await.is_some() {
        c.fired_early += 1;
    } else {
        drop(timer);
        c.cancel_ns += nanos(t.elapsed());
        c.cancelled += 1;
        c.cross += u64::from(a.armed_on != thread_tag());
    }
}

async fn churner<S: Spawner>(
    sp: S,
    next: Sender<Armed>,
    prev: Receiver<Armed>,
    cfg: TimerChurn,
    mut hist: Histogram<u64>,
) -> (Count, Histogram<u64>) {
    let mut c = Count::default();
    for _ in 0..cfg.timers {
        let a = arm(&sp, cfg.timeout, &mut c, &mut hist).await;
        next.send(a).await.expect("the next task receives as many timers as it sends");
        let a = prev.recv().await.expect("the previous task sends as many timers as this one");
        cancel(a, &mut c).await;
    }
    (c, hist)
}

fn iteration<R: Rt>(rt: &R, cfg: TimerChurn, hists: Vec<Histogram<u64>>) -> (Count, Vec<Histogram<u64>>) {
    let sp = rt.spawner();
    rt.block_on(async move {
        let (txs, mut rxs): (Vec<_>, Vec<_>) = hists.iter().map(|_| bounded::<Armed>(1)).unzip();
        // Task i sends on channel i and receives on channel i - 1.
        rxs.rotate_right(1);
        let joins: Vec<_> = hists
            .into_iter()
            .zip(txs.into_iter().zip(rxs))
            .map(|(hist, (tx, rx))| sp.spawn_inside(churner(sp.clone(), tx, rx, cfg, hist)))
            .collect();
        let mut count = Count::default();
        let mut hists = Vec::with_capacity(joins.len());
        for j in joins {
            let (c, h) = j.await.expect("a timer task does not fail");
            count.add(&c);
            hists.push(h);
        }
        (count, hists)
    })
}

/// Runs `timer-churn`.
pub(crate) fn run_timer_churn<R: Rt>(
    rt: &R,
    cfg: TimerChurn,
    opts: &RunOptions,
    params: Vec<(String, String)>,
    meter: &CpuMeter,
) -> RunOutput {
    let mut hists: Vec<_> = (0..cfg.tasks).map(|_| new_histogram()).collect();
    let mut hist = new_histogram();
    let mut total = Count::default();
    let w = measure(rt, opts, meter, |rt, phase| {
        let (c, mut back) = iteration(rt, cfg, std::mem::take(&mut hists));
        if phase == Phase::Measured {
            total.add(&c);
            back.iter().for_each(|h| hist.add(h).expect("histograms share bounds"));
        }
        back.iter_mut().for_each(Histogram::reset);
        hists = back;
    });
    let extras = vec![
        ("timers_armed".to_string(), total.armed as f64),
        ("timers_cancelled".to_string(), total.cancelled as f64),
        ("timers_fired_early".to_string(), total.fired_early as f64),
        ("cross_thread_cancels".to_string(), total.cross as f64),
        ("cancel_ns".to_string(), total.cancel_ns as f64 / total.cancelled.max(1) as f64),
        ("tasks".to_string(), cfg.tasks as f64),
        ("iterations".to_string(), w.iterations as f64),
    ];
    let out = RunOutput::closed_loop(total.armed, w.elapsed, hist);
    RunOutput { counters: w.counters, params, extras, cpu: w.cpu, ..out }
}
