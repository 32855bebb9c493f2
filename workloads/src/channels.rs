//! Message-passing workloads: `channel-ping-pong` and `pipeline` (issue 28
//! item 2), closed loop, fixed-size iterations ([`crate::closed`]).
//!
//! Origin: tokio 1.51.0 made the LIFO slot stealable, so that pushing a
//! task into an empty slot woke a parked worker; a message router lost
//! 29–32 % of its throughput and an OTLP ingest 23 %, and none of tokio's
//! own benchmarks moved. Message passing between a few tasks, with most
//! workers idle, is the shape where one extra wake-up per message costs
//! most. Signature: wake-ups (worker unparks) per message and CPU per
//! message rise while the work per message stays the same.
//!
//! ## The channel
//! Every runtime uses the same channel, `async-channel` (bounded MPMC,
//! woken through `event-listener`). It belongs to no runtime: it takes no
//! share of any runtime's cooperative budget, needs no runtime context and
//! wakes through the plain `Waker`, so each runtime is measured on exactly
//! the same channel code. tokio's own `tokio::sync::mpsc` would charge
//! tokio's budget on tokio rows only (a forced yield every 128 operations
//! there and never on ours), and our runtimes have no channel of their own.
//!
//! ## `channel-ping-pong`
//! P pairs; in each, a pinger and a ponger exchange `rounds` round trips
//! over two `bounded(1)` channels (ping: pinger → ponger, pong: back), all
//! P pairs at once; an iteration spawns the 2P tasks from `block_on` and
//! joins them. The default P is 1, so at 2 workers and beyond most workers
//! are idle: each message is a wake-up of a task that may be run where it
//! was woken, or stolen by (or handed to) a parked worker.
//!
//! ## `pipeline`
//! S stages in a ring joined by S `bounded(capacity)` channels: stage 0
//! injects a message, stages 1..S forward it, and it comes back to stage 0,
//! which counts it done and injects the next, keeping M messages in flight
//! until `messages` have gone round (S hops each). M is at most
//! `(capacity + 1) × S − 1`: a ring deadlocks only when every channel is
//! full and every stage holds a message it cannot send, which takes
//! `(capacity + 1) × S` messages.
//!
//! ## The mode lottery, and cross-worker hand-offs
//! A 4-stage pipeline on 2 workers falls into one of two steady modes, 8x
//! apart, on any tokio version (issue 28): its stages stay on one worker,
//! or bounce between two. Each message therefore carries its sender's
//! [`thread_tag`], taken when the sender calls `send`, and its receiver
//! compares it with its own: a *cross-worker hand-off* is a message
//! received on another thread than the one it was sent from. This is an
//! exact count, not an estimate (a worker is a thread on every runtime
//! here). Reported per message, and as a share of hand-offs per iteration
//! (min and max over the run's iterations, each iteration being fresh
//! tasks that may settle in either mode). The iterations are split into
//! modes by that share ([`crate::modes`]): a run with more than one
//! reports each mode's iterations, time per message and share apart
//! (`modes`, `modeN_*`), no whole-run `ns_per_message`, and a note; the
//! harness leaves its whole-run throughput, latency and per-op CPU blank,
//! so two modes are never averaged into one number.
//!
//! ## Reported
//! `ops` is messages received (ping-pong: pings and pongs; pipeline:
//! messages that went all the way round), so the harness's
//! `cpu_us_per_op` and `wakeups_per_op` are CPU and worker unparks per
//! message. The latency histogram holds one entry per message: ping-pong,
//! its hand-off latency (send call to receive); pipeline, its time round
//! the ring (injection to return). Extras: `ns_per_message` (ping-pong:
//! measured time × pairs / messages, one hand-off in one pair; pipeline:
//! measured time / messages; blank when the run has several modes),
//! `modes` and, with several, `modeN_iterations`, `modeN_ns_per_message`
//! and `modeN_cross_worker_share`, `messages_sent`, `messages_received`
//! (ping-pong: equal, and 2 × pairs × rounds per iteration), `hops`
//! (pipeline: stages × messages), `cross_worker_per_message`,
//! `cross_worker_share_min` and `_max` (cross-worker hand-offs / hand-offs,
//! per iteration).

use std::time::{Duration, Instant};

use async_channel::{bounded, Receiver, Sender};
use hdrhistogram::Histogram;

use crate::api::{RunOptions, RunOutput};
use crate::closed::{measure, thread_tag, Phase, Window};
use crate::cpu_time::CpuMeter;
use crate::modes::Modes;
use crate::recorders::{nanos, new_histogram};
use crate::rt::{Rt, Spawner};

/// Largest `pairs`: each pair keeps a latency histogram (about 230 KB).
pub(crate) const MAX_PAIRS: u64 = 256;
/// Largest `stages`.
pub(crate) const MAX_STAGES: u64 = 1024;
/// Largest `capacity` of a pipeline channel.
pub(crate) const MAX_CAPACITY: u64 = 65_536;
/// Largest `rounds` / `messages` per iteration.
pub(crate) const MAX_PER_ITERATION: u64 = 10_000_000;

/// A validated `channel-ping-pong`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PingPong {
    pub pairs: u64,
    pub rounds: u64,
}

/// A validated `pipeline`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pipeline {
    pub stages: u64,
    pub capacity: u64,
    pub in_flight: u64,
    pub messages: u64,
}

impl Pipeline {
    /// The most messages a ring of `stages` channels of `capacity` can hold
    /// in flight without deadlock.
    pub(crate) fn max_in_flight(stages: u64, capacity: u64) -> u64 {
        (capacity + 1) * stages - 1
    }
}

/// A message: when it was made (pipeline: injected) and when and from
/// which thread it was last sent, how many of its hand-offs so far crossed
/// threads, and (pong only) the latency of the ping it answers.
#[derive(Debug, Clone, Copy)]
struct Msg {
    born: Instant,
    sent_at: Instant,
    from: u64,
    cross: u32,
    answers_ns: u64,
}

impl Msg {
    fn new() -> Msg {
        let now = Instant::now();
        Msg { born: now, sent_at: now, from: thread_tag(), cross: 0, answers_ns: 0 }
    }

    /// Marks a send from the calling thread now.
    fn resend(mut self) -> Msg {
        self.sent_at = Instant::now();
        self.from = thread_tag();
        self
    }

    /// Records its arrival on the calling thread: whether it crossed.
    fn arrive(&mut self) -> bool {
        let crossed = self.from != thread_tag();
        self.cross += u32::from(crossed);
        crossed
    }
}

/// What one task counted in one iteration.
#[derive(Debug, Clone, Copy, Default)]
struct Count {
    sent: u64,
    received: u64,
    cross: u64,
}

impl Count {
    fn add(&mut self, o: Count) {
        self.sent += o.sent;
        self.received += o.received;
        self.cross += o.cross;
    }
}

/// A send that cannot fail: the other end lives while this end has
/// messages for it (see each task).
async fn send(tx: &Sender<Msg>, m: Msg, c: &mut Count) {
    tx.send(m).await.expect("the receiving task outlives every message sent to it");
    c.sent += 1;
}

async fn pinger(
    ping: Sender<Msg>,
    pong: Receiver<Msg>,
    rounds: u64,
    mut hist: Histogram<u64>,
) -> (Count, Histogram<u64>) {
    let mut c = Count::default();
    for _ in 0..rounds {
        send(&ping, Msg::new(), &mut c).await;
        let mut m = pong.recv().await.expect("the ponger answers every ping");
        c.received += 1;
        c.cross += u64::from(m.arrive());
        hist.saturating_record(m.answers_ns.max(1));
        hist.saturating_record(nanos(m.sent_at.elapsed()).max(1));
    }
    // Dropping `ping` here ends the ponger's loop.
    (c, hist)
}

async fn ponger(pong: Sender<Msg>, ping: Receiver<Msg>) -> Count {
    let mut c = Count::default();
    while let Ok(mut m) = ping.recv().await {
        let latency_ns = nanos(m.sent_at.elapsed());
        c.received += 1;
        c.cross += u64::from(m.arrive());
        // The pinger waits for this answer before it can drop `pong`'s
        // receiver.
        send(&pong, Msg { answers_ns: latency_ns, ..Msg::new() }, &mut c).await;
    }
    c
}

/// What a run's measured iterations added up to.
struct Totals {
    count: Count,
    hist: Histogram<u64>,
    busy: Duration,
    modes: Modes,
}

impl Totals {
    fn new() -> Totals {
        Totals { count: Count::default(), hist: new_histogram(), busy: Duration::ZERO, modes: Modes::new() }
    }

    /// Adds one iteration: its counts (summed over its tasks), its time,
    /// and the messages its time per message divides by.
    fn add(&mut self, c: Count, took: Duration, messages: u64) {
        self.count.add(c);
        self.busy += took;
        self.modes.add(took, messages, c.cross, c.received);
    }

    /// The run's output: `ops` = messages, one latency each (`hist`);
    /// `cross_per_message` = cross-worker hand-offs per message.
    fn output(
        self,
        w: Window,
        per_message_ns: f64,
        cross_per_message: f64,
        mut extras: Vec<(String, f64)>,
    ) -> RunOutput {
        let c = self.count;
        let modes = self.modes.split();
        if modes.len() <= 1 {
            // One mode: the whole run's time per message is that mode's.
            extras.push(("ns_per_message".to_string(), per_message_ns));
        }
        let (share_min, share_max) = self.modes.share_range().unwrap_or((0.0, 0.0));
        extras.extend([
            ("messages_sent".to_string(), c.sent as f64),
            ("messages_received".to_string(), c.received as f64),
            ("cross_worker_hops".to_string(), c.cross as f64),
            ("cross_worker_per_message".to_string(), cross_per_message),
            ("cross_worker_share_min".to_string(), share_min),
            ("cross_worker_share_max".to_string(), share_max),
            ("iterations".to_string(), w.iterations as f64),
        ]);
        extras.extend(crate::modes::extras(&modes));
        let mut out = RunOutput::closed_loop(self.hist.len(), w.elapsed, self.hist);
        out.notes.extend(crate::modes::note(&modes));
        RunOutput { counters: w.counters, extras, cpu: w.cpu, ..out }
    }
}

/// One ping-pong iteration: spawns the pairs from `block_on`, joins them.
fn ping_pong_iteration<R: Rt>(rt: &R, cfg: PingPong, hists: Vec<Histogram<u64>>) -> (Count, Vec<Histogram<u64>>) {
    let sp = rt.spawner();
    rt.block_on(async move {
        let joins: Vec<_> = hists
            .into_iter()
            .map(|hist| {
                let (ping_tx, ping_rx) = bounded(1);
                let (pong_tx, pong_rx) = bounded(1);
                let a = sp.spawn_inside(pinger(ping_tx, pong_rx, cfg.rounds, hist));
                let b = sp.spawn_inside(ponger(pong_tx, ping_rx));
                (a, b)
            })
            .collect();
        let mut count = Count::default();
        let mut hists = Vec::with_capacity(joins.len());
        for (a, b) in joins {
            let (c, hist) = a.await.expect("a pinger does not fail");
            count.add(c);
            count.add(b.await.expect("a ponger does not fail"));
            hists.push(hist);
        }
        (count, hists)
    })
}

/// Runs `channel-ping-pong`.
pub(crate) fn run_ping_pong<R: Rt>(
    rt: &R,
    cfg: PingPong,
    opts: &RunOptions,
    params: Vec<(String, String)>,
    meter: &CpuMeter,
) -> RunOutput {
    let mut hists: Vec<_> = (0..cfg.pairs).map(|_| new_histogram()).collect();
    let mut totals = Totals::new();
    let w = measure(rt, opts, meter, |rt, phase| {
        let t = Instant::now();
        let (c, mut back) = ping_pong_iteration(rt, cfg, std::mem::take(&mut hists));
        let took = t.elapsed();
        if phase == Phase::Measured {
            // One hand-off in one pair is the unit of ns_per_message.
            totals.add(c, took, c.received / cfg.pairs);
            for h in &back {
                totals.hist.add(h).expect("histograms share bounds");
            }
        }
        back.iter_mut().for_each(Histogram::reset);
        hists = back;
    });
    let per_pair = totals.count.received as f64 / cfg.pairs as f64;
    let per_message_ns = totals.busy.as_nanos() as f64 / per_pair.max(1.0);
    let cross = totals.count.cross as f64 / totals.count.received.max(1) as f64;
    let extras = vec![("pairs".to_string(), cfg.pairs as f64)];
    RunOutput { params, ..totals.output(w, per_message_ns, cross, extras) }
}

/// Stage 0: injects, takes back, keeps `in_flight` going round.
async fn source(
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    cfg: Pipeline,
    mut hist: Histogram<u64>,
) -> (Count, u64, Histogram<u64>) {
    let mut c = Count::default();
    let mut injected = 0u64;
    while injected < cfg.in_flight.min(cfg.messages) {
        send(&tx, Msg::new(), &mut c).await;
        injected += 1;
    }
    // Cross-worker hand-offs as the messages counted them.
    let mut cross_carried = 0u64;
    for _ in 0..cfg.messages {
        let mut m = rx.recv().await.expect("every injected message comes back");
        c.received += 1;
        c.cross += u64::from(m.arrive());
        cross_carried += u64::from(m.cross);
        hist.saturating_record(nanos(m.born.elapsed()).max(1));
        if injected < cfg.messages {
            send(&tx, Msg::new(), &mut c).await;
            injected += 1;
        }
    }
    // Dropping `tx` ends stage 1, whose end ends stage 2, and so on.
    (c, cross_carried, hist)
}

/// Stages 1..S: forward every message until the previous stage ends.
async fn stage(rx: Receiver<Msg>, tx: Sender<Msg>) -> Count {
    let mut c = Count::default();
    while let Ok(mut m) = rx.recv().await {
        c.received += 1;
        c.cross += u64::from(m.arrive());
        // The next stage ends only after this one drops `tx`.
        send(&tx, m.resend(), &mut c).await;
    }
    c
}

/// One pipeline iteration; returns the counts summed over stages, the
/// cross-worker hand-offs the messages carried back, and the histogram.
fn pipeline_iteration<R: Rt>(rt: &R, cfg: Pipeline, hist: Histogram<u64>) -> (Count, u64, Histogram<u64>) {
    let sp = rt.spawner();
    rt.block_on(async move {
        let capacity = usize::try_from(cfg.capacity).expect("capacity is validated to fit");
        let (txs, mut rxs): (Vec<_>, Vec<_>) = (0..cfg.stages).map(|_| bounded::<Msg>(capacity)).unzip();
        // Channel i runs from stage i to stage i + 1; the last one back to
        // stage 0.
        rxs.rotate_right(1);
        let mut pairs = rxs.into_iter().zip(txs);
        let (rx0, tx0) = pairs.next().expect("at least two stages");
        let stages: Vec<_> = pairs.map(|(rx, tx)| sp.spawn_inside(stage(rx, tx))).collect();
        let src = sp.spawn_inside(source(tx0, rx0, cfg, hist));
        let (mut count, carried, hist) = src.await.expect("the source does not fail");
        for s in stages {
            count.add(s.await.expect("a stage does not fail"));
        }
        (count, carried, hist)
    })
}

/// Runs `pipeline`.
pub(crate) fn run_pipeline<R: Rt>(
    rt: &R,
    cfg: Pipeline,
    opts: &RunOptions,
    params: Vec<(String, String)>,
    meter: &CpuMeter,
) -> RunOutput {
    let mut hist = Some(new_histogram());
    let mut totals = Totals::new();
    let mut carried_total = 0u64;
    let mut messages = 0u64;
    let w = measure(rt, opts, meter, |rt, phase| {
        let t = Instant::now();
        let (c, carried, mut back) = pipeline_iteration(rt, cfg, hist.take().expect("returned by every iteration"));
        let took = t.elapsed();
        if phase == Phase::Measured {
            totals.add(c, took, cfg.messages);
            totals.hist.add(&back).expect("histograms share bounds");
            carried_total += carried;
            messages += cfg.messages;
        }
        back.reset();
        hist = Some(back);
    });
    let per_message_ns = totals.busy.as_nanos() as f64 / messages.max(1) as f64;
    let hops = totals.count.received;
    let extras = vec![
        ("stages".to_string(), cfg.stages as f64),
        ("hops".to_string(), hops as f64),
        ("cross_worker_carried".to_string(), carried_total as f64),
    ];
    // Per message (S hops each), as the messages counted them.
    let cross = carried_total as f64 / messages.max(1) as f64;
    RunOutput { params, ..totals.output(w, per_message_ns, cross, extras) }
}
