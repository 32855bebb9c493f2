//! `lifo-starvation`: a pair of tasks that wake each other through the
//! LIFO slot, while bystander tasks wait in the run queue behind them.
//!
//! Origin: a tokio user's injected tasks took 68 s to start under load, and
//! 2 s once the LIFO slot's polls in a row were capped (tokio's
//! `MAX_LIFO_POLLS_PER_TICK`, our `max-lifo-polls`). Signature: the
//! bystanders' wait (p99 and max) grows with the LIFO slot's share of the
//! polls, `lifo_hits` per poll; `lifo=off`, `max-lifo-polls` and
//! `lifo-steal=on` move both.
//!
//! An iteration spawns one root task from `block_on`; the root, running
//! on a worker, spawns the pair and `bystanders` tasks from there (that
//! worker's local queue) and waits for the bystanders. Each bystander
//! yields `yields` times and records each wait: the time from its yield to
//! its next poll. The pair bounces a message over two `bounded(1)`
//! channels (async-channel, as `channel-ping-pong`) until every bystander
//! is done; every wake-up of a pair task happens on a worker, so a runtime
//! with a LIFO slot puts the woken task there, ahead of the bystanders.
//!
//! Reported: `ops` is bystander waits (bystanders × yields per
//! iteration), one latency entry each, so the latency columns are the
//! bystanders' waits; extras `bystander_wait_p99_us`,
//! `bystander_wait_max_us`, `pair_messages_sent`, `pair_messages_received`
//! (equal), `lifo_hits_per_poll` where the runtime counts both (ours).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use async_channel::{bounded, Receiver, Sender};

use crate::api::{RunOptions, RunOutput};
use crate::closed::{counter, measure, Phase};
use crate::cpu_time::CpuMeter;
use crate::recorders::{nanos, new_histogram};
use crate::rt::{Rt, Spawner};

/// Largest `bystanders`.
pub(crate) const MAX_BYSTANDERS: u64 = 4096;
/// Largest `yields` per bystander per iteration.
pub(crate) const MAX_YIELDS: u64 = 1_000_000;

/// A validated `lifo-starvation`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LifoStarvation {
    pub bystanders: u64,
    pub yields: u64,
}

/// Messages the pair sent and received in one iteration.
#[derive(Debug, Clone, Copy, Default)]
struct PairCount {
    sent: u64,
    received: u64,
}

/// Pings until `stop`; dropping `ping` at the end ends the ponger.
async fn pinger(ping: Sender<()>, pong: Receiver<()>, stop: Arc<AtomicBool>) -> PairCount {
    let mut c = PairCount::default();
    // Relaxed: a stop request; the joins order everything else.
    while !stop.load(Ordering::Relaxed) {
        ping.send(()).await.expect("the ponger answers until the pinger stops");
        c.sent += 1;
        pong.recv().await.expect("the ponger answers every ping");
        c.received += 1;
    }
    c
}

async fn ponger(pong: Sender<()>, ping: Receiver<()>) -> PairCount {
    let mut c = PairCount::default();
    while ping.recv().await.is_ok() {
        c.received += 1;
        // The pinger waits for this answer before it can stop.
        pong.send(()).await.expect("the pinger waits for every answer");
        c.sent += 1;
    }
    c
}

/// One bystander: `yields` yields, each wait recorded (ns).
async fn bystander<S: Spawner>(sp: S, yields: u64) -> Vec<u64> {
    let mut waits = Vec::with_capacity(usize::try_from(yields).expect("yields are validated to fit"));
    for _ in 0..yields {
        let t = Instant::now();
        sp.yield_now().await;
        waits.push(nanos(t.elapsed()).max(1));
    }
    waits
}

/// The root task: spawns the pair and the bystanders from its worker.
async fn root<S: Spawner>(sp: S, cfg: LifoStarvation) -> (Vec<Vec<u64>>, PairCount) {
    let stop = Arc::new(AtomicBool::new(false));
    let (ping_tx, ping_rx) = bounded(1);
    let (pong_tx, pong_rx) = bounded(1);
    let a = sp.spawn_inside(pinger(ping_tx, pong_rx, Arc::clone(&stop)));
    let b = sp.spawn_inside(ponger(pong_tx, ping_rx));
    let joins: Vec<_> = (0..cfg.bystanders).map(|_| sp.spawn_inside(bystander(sp.clone(), cfg.yields))).collect();
    let mut waits = Vec::with_capacity(joins.len());
    for j in joins {
        waits.push(j.await.expect("a bystander does not fail"));
    }
    // Relaxed: see `pinger`.
    stop.store(true, Ordering::Relaxed);
    let mut pair = a.await.expect("the pinger does not fail");
    let p = b.await.expect("the ponger does not fail");
    pair.sent += p.sent;
    pair.received += p.received;
    (waits, pair)
}

/// Runs `lifo-starvation`.
pub(crate) fn run_lifo_starvation<R: Rt>(
    rt: &R,
    cfg: LifoStarvation,
    opts: &RunOptions,
    params: Vec<(String, String)>,
    meter: &CpuMeter,
) -> RunOutput {
    let mut hist = new_histogram();
    let mut pair = PairCount::default();
    let w = measure(rt, opts, meter, |rt, phase| {
        let sp = rt.spawner();
        let (waits, p) = rt.block_on(async move {
            let inner = sp.clone();
            sp.spawn_inside(root(inner, cfg)).await.expect("the root task does not fail")
        });
        if phase == Phase::Measured {
            for ns in waits.iter().flatten() {
                hist.saturating_record(*ns);
            }
            pair.sent += p.sent;
            pair.received += p.received;
        }
    });
    let us = |ns: u64| ns as f64 / 1e3;
    let mut extras = vec![
        ("bystander_wait_p99_us".to_string(), us(hist.value_at_quantile(0.99))),
        ("bystander_wait_max_us".to_string(), us(hist.max())),
        ("bystanders".to_string(), cfg.bystanders as f64),
        ("pair_messages_sent".to_string(), pair.sent as f64),
        ("pair_messages_received".to_string(), pair.received as f64),
        ("iterations".to_string(), w.iterations as f64),
    ];
    if let (Some(hits), Some(polls)) = (counter(&w.counters, "lifo_hits"), counter(&w.counters, "polls")) {
        extras.push(("lifo_hits_per_poll".to_string(), hits as f64 / polls.max(1) as f64));
    }
    let out = RunOutput::closed_loop(hist.len(), w.elapsed, hist);
    RunOutput { counters: w.counters, params, extras, cpu: w.cpu, ..out }
}
