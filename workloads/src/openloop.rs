//! The open-loop load generator for in-process workloads, and what their
//! handlers share with the server side of the socket workloads (outcome,
//! [`serve`]). The vocabulary every load generator shares (load, window,
//! schedule, request, report) is in [`crate::loadgen`].
//!
//! Load-generator threads are plain std threads — never workers of the
//! runtime under test. Each owns an arrival schedule ([`crate::arrivals::Arrivals`]) at
//! `rate / threads`, waits for each intended arrival time, and hands the
//! request to the runtime from outside (a remote spawn, or a channel to one
//! dispatcher task). It never waits for a response, so a slow runtime
//! cannot slow the schedule down: latency grows instead, and is measured
//! from the *intended* arrival time. A generator that itself falls behind
//! (sends late) is detected and reported, never hidden.
//!
//! Steps of a run:
//! 1. start every generator thread; all share one [`Window`];
//! 2. at `measure_from` snapshot the runtime's counters (warm-up requests
//!    are sent but never recorded);
//! 3. at `end` the generators stop; requests still in flight are drained
//!    (bounded by a drain timeout);
//! 4. merge every thread's histograms into one [`crate::api::RunOutput`].

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use futures_lite::FutureExt;

use crate::affinity::pin_current;
use crate::cpu_time::CpuMeter;
use crate::loadgen::{schedule, wait_until, GenTotals, LoadSpec, OpenReport, Request, Window};
use crate::recorders::{Collector, Histos};
use crate::rt::{counters_delta, Rt, Spawner};
use crate::Error;

/// How often draining checks for completion.
const DRAIN_POLL: Duration = Duration::from_millis(1);

/// What a handler reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub ok: bool,
    pub deadline_miss: bool,
    /// A workload-specific value for the `aux` histogram.
    pub aux_ns: Option<u64>,
}

impl Outcome {
    pub const OK: Outcome = Outcome { ok: true, deadline_miss: false, aux_ns: None };
    pub const FAILED: Outcome = Outcome { ok: false, deadline_miss: false, aux_ns: None };
    pub const MISSED: Outcome = Outcome { ok: false, deadline_miss: true, aux_ns: None };
}

/// The message of an injected handler panic.
pub(crate) const INJECTED_PANIC: &str = "wsbench: injected handler panic (panic-every)";

/// One generator thread: waits for each intended arrival and hands it to
/// `inject`; thread 0 also fires `stall` once at the midpoint.
fn gen_thread(
    spec: &LoadSpec,
    w: &Window,
    index: usize,
    inject: &(impl Fn(Request) + Sync),
    stall: &(impl Fn() + Sync),
    meter: &CpuMeter,
) -> GenTotals {
    let _guest = meter.guest();
    pin_current(&spec.cores, index);
    let mut arrivals = schedule(spec, index);
    let mut totals = GenTotals::new();
    let mut id = index as u64;
    let mut stall_pending = index == 0 && !spec.stall.is_zero();
    loop {
        let intended = arrivals.next_at(w.start);
        if intended >= w.end {
            break;
        }
        totals.schedule(w, intended);
        let now = wait_until(intended);
        if now >= w.send_until {
            totals.never_sent(w, intended);
            totals.skip_rest(&mut arrivals, w);
            break;
        }
        if stall_pending && intended >= w.midpoint {
            stall_pending = false;
            stall();
        }
        let measured = intended >= w.measure_from;
        let must_panic = spec.must_panic(id);
        inject(Request { id, intended, sent: now, seed: spec.request_seed(id), measured, must_panic });
        totals.record_send(w, intended, now);
        id += spec.threads as u64;
    }
    totals
}

/// Runs `spec.threads` generator threads over `w`; calls `at_measure_start`
/// on this thread when measuring begins.
pub(crate) fn generate(
    spec: &LoadSpec,
    w: &Window,
    inject: &(impl Fn(Request) + Sync),
    stall: &(impl Fn() + Sync),
    at_measure_start: impl FnOnce(),
    meter: &CpuMeter,
) -> Result<GenTotals, Error> {
    thread::scope(|s| {
        let mut handles = Vec::with_capacity(spec.threads);
        for index in 0..spec.threads {
            let h = thread::Builder::new()
                .name(format!("wsbench-loadgen-{index}"))
                .spawn_scoped(s, move || gen_thread(spec, w, index, inject, stall, meter))
                .map_err(|e| Error::io("starting a load-generator thread", e))?;
            handles.push(h);
        }
        wait_until(w.measure_from);
        at_measure_start();
        let mut totals = GenTotals::new();
        for h in handles {
            totals.merge(&h.join().expect("a load-generator thread panicked"));
        }
        Ok(totals)
    })
}

/// Runs a handler future for `req` and records it (if measured) as a
/// request of a window ending at `end`.
pub(crate) async fn serve<F>(req: Request, collector: Arc<Collector>, end: Instant, handler: F)
where
    F: Future<Output = Outcome>,
{
    let first_poll = Instant::now();
    let out = AssertUnwindSafe(handler).catch_unwind().await.unwrap_or(Outcome::FAILED);
    let done = Instant::now();
    if req.measured {
        collector.with_local(|h| {
            h.record_answer(end, req.intended, req.sent, done, out.ok);
            h.record_server(req.intended, first_poll, done);
            h.deadline_misses += u64::from(out.deadline_miss);
            if let Some(aux) = out.aux_ns {
                h.aux.saturating_record(aux);
            }
        });
    }
}

/// How requests reach the runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Injection {
    /// Every request is a spawn from outside (the remote-spawn path).
    Remote,
    /// Every request goes through a channel to one dispatcher task, which
    /// spawns it from inside — so all requests enter at one worker.
    OneWorker,
}

/// An in-process open-loop run: `handler(spawner, request)` makes each
/// request's future.
pub(crate) fn run_in_process<R, H, Fut>(
    rt: &R,
    spec: &LoadSpec,
    injection: Injection,
    handler: H,
    meter: &CpuMeter,
) -> Result<OpenReport, Error>
where
    R: Rt,
    H: Fn(&R::Spawner, Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    let spawner = rt.spawner();
    let collector = Collector::new();
    let handler = Arc::new(handler);
    let w = Window::new(spec);
    let task = {
        let (spawner, collector, end) = (spawner.clone(), Arc::clone(&collector), w.end);
        move |req: Request| serve(req, Arc::clone(&collector), end, handler(&spawner, req))
    };
    let stall_for = spec.stall;
    let stall = || drop(spawner.spawn(async move { thread::sleep(stall_for) }));
    let mut counters_start = Vec::new();
    let snapshot = || {
        meter.start();
        counters_start = spawner.window_start();
    };
    let (totals, side_cpu_ms) = crate::side::around(spec.side, meter, || match injection {
        Injection::Remote => {
            let inject = |req: Request| drop(spawner.spawn(task(req)));
            generate(spec, &w, &inject, &stall, snapshot, meter)
        }
        Injection::OneWorker => {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Request>();
            let inner = spawner.clone();
            let task = task.clone();
            let dispatcher = spawner.spawn(async move {
                while let Some(req) = rx.recv().await {
                    drop(inner.spawn_inside(task(req)));
                }
            });
            // Err only if the dispatcher is gone, which cannot happen
            // before `tx` drops; the drain would then report the loss.
            let inject = |req: Request| {
                let _ = tx.send(req);
            };
            let totals = generate(spec, &w, &inject, &stall, snapshot, meter)?;
            drop(dispatcher);
            Ok(totals)
        }
    })?;
    let histos = drain(&collector, totals.sent, w.drain_deadline(spec));
    let counters = counters_delta(&counters_start, &spawner.window_end());
    let cpu = meter.finish();
    let extras = side_cpu_ms.map(|ms| vec![(crate::side::SIDE_CPU_EXTRA.to_string(), ms)]).unwrap_or_default();
    Ok(OpenReport { histos, gen: totals, window: w, counters, notes: Vec::new(), extras, cpu })
}

/// Waits until `sent` measured requests have finished or `deadline`
/// passes; returns the merged measurements.
pub(crate) fn drain(collector: &Collector, sent: u64, deadline: Instant) -> Histos {
    while collector.finished() < sent && Instant::now() < deadline {
        thread::sleep(DRAIN_POLL);
    }
    collector.merged()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrivals::ArrivalKind;

    /// A generator whose every hand-off takes 2 ms cannot offer 1000/s:
    /// the measured offered rate is at most 1 / 2 ms = 500/s (at most 50
    /// hand-offs fit in the 100 ms window), although the 100 scheduled
    /// requests are sent late (before `send_until`, or counted never sent), so the
    /// configured rate and sent / window both still say 1000/s.
    #[test]
    fn a_generator_that_cannot_keep_up_offers_less_than_its_rate() {
        const HANDOFF: Duration = Duration::from_millis(2);
        let spec = LoadSpec {
            rate_per_s: 1_000.0,
            arrival: ArrivalKind::Uniform,
            threads: 1,
            cores: Vec::new(),
            seed: 1,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(100),
            stall: Duration::ZERO,
            panic_every: 0,
            side: crate::side::SidePool::OFF,
        };
        let w = Window::new(&spec);
        let slow = |_: Request| thread::sleep(HANDOFF);
        let totals = generate(&spec, &w, &slow, &|| (), || (), &crate::cpu_time::CpuMeter::new()).unwrap();
        // Every scheduled request is accounted for: sent (late) or, if the
        // 2 ms sleeps overran the drain on a busy machine, never sent.
        assert_eq!(totals.scheduled, 100);
        assert_eq!(totals.sent + totals.skipped, 100, "every scheduled request is sent or never sent");
        assert!(totals.sent_in_window <= 50, "{} hand-offs of 2 ms in 100 ms", totals.sent_in_window);
        let offered = totals.offered_per_s(&w);
        assert!(offered <= 500.0, "offered {offered}/s at a configured 1000/s");
        // A generator with an instant hand-off offers at most its schedule:
        // exactly 100 arrivals are intended inside the window.
        let w = Window::new(&spec);
        let totals = generate(&spec, &w, &|_: Request| (), &|| (), || (), &crate::cpu_time::CpuMeter::new()).unwrap();
        assert_eq!(totals.sent, 100);
        assert!(totals.sent_in_window <= 100 && totals.offered_per_s(&w) <= 1_000.0 + 1e-9);
    }
}
