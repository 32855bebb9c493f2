//! What every open-loop load generator shares — the in-process generator
//! threads of [`crate::openloop`] and the socket clients of
//! [`crate::client`]: the load ([`LoadSpec`]) and its time frame
//! ([`Window`]), the arrival schedule of each generator thread, the
//! [`Request`] it makes, what it did ([`GenTotals`]) and the run's report
//! ([`OpenReport`]) with the slipped-schedule check. Nothing here knows a
//! runtime under test.

use std::thread;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::api::{extra, CounterValues, CpuUsage, RunOutput};
use crate::arrivals::{ArrivalKind, Arrivals};
use crate::recorders::{nanos, new_histogram, Histos};

/// Time between "now" and the first possible arrival, so that every
/// generator thread is running before the schedule starts.
const START_LEAD: Duration = Duration::from_millis(2);
/// A generator sleeps until this long before an arrival, then spins: OS
/// sleeps overshoot by tens of microseconds, which would otherwise be
/// charged to the runtime under test as latency.
const SPIN_SLACK: Duration = Duration::from_micros(50);
/// p99 send lag above which a generator "could not keep its schedule".
pub const SLIP_LAG_P99: Duration = Duration::from_millis(1);
/// Draining waits at least this long for in-flight requests ...
const DRAIN_MIN: Duration = Duration::from_secs(2);
/// ... or this many times the measured duration, whichever is longer.
const DRAIN_DURATION_FACTOR: u32 = 2;
const NS_PER_US: f64 = 1e3;

/// How load is offered.
#[derive(Debug, Clone)]
pub(crate) struct LoadSpec {
    pub rate_per_s: f64,
    pub arrival: ArrivalKind,
    /// Generator threads (connections, for TCP workloads).
    pub threads: usize,
    pub cores: Vec<usize>,
    pub seed: u64,
    pub warmup: Duration,
    pub duration: Duration,
    /// Block one worker this long once, mid-run (fault injection).
    pub stall: Duration,
    /// Every Nth request's handler panics (fault injection); 0 = never.
    pub panic_every: u64,
    /// CPU-bound threads beside the runtime ([`crate::side`]).
    pub side: crate::side::SidePool,
}

impl LoadSpec {
    /// The seed of request `id`'s own draws (its service times): the same
    /// for every runtime, and for the ideal scheduler ([`crate::ideal`]).
    pub(crate) fn request_seed(&self, id: u64) -> u64 {
        mix(self.seed, id)
    }

    /// Whether request `id`'s handler must panic (`panic-every`).
    pub(crate) fn must_panic(&self, id: u64) -> bool {
        self.panic_every != 0 && id % self.panic_every == self.panic_every - 1
    }
}

/// The run's time frame.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub start: Instant,
    pub measure_from: Instant,
    /// No arrival is scheduled at or after this.
    pub end: Instant,
    /// A generator that is behind keeps sending late until this (the
    /// drain budget after `end`), then gives up and counts the rest as
    /// skipped: an overloaded runtime shows growing latency, not silence.
    pub send_until: Instant,
    pub midpoint: Instant,
}

impl Window {
    pub(crate) fn new(spec: &LoadSpec) -> Window {
        let start = Instant::now() + START_LEAD;
        let measure_from = start + spec.warmup;
        let end = measure_from + spec.duration;
        Window {
            start,
            measure_from,
            end,
            send_until: end + drain_budget(spec),
            midpoint: measure_from + spec.duration / 2,
        }
    }

    pub(crate) fn drain_deadline(&self, spec: &LoadSpec) -> Instant {
        Instant::now() + drain_budget(spec)
    }
}

/// How long in-flight requests may take to finish after the schedule ends.
pub(crate) fn drain_budget(spec: &LoadSpec) -> Duration {
    DRAIN_MIN.max(spec.duration * DRAIN_DURATION_FACTOR)
}

/// One request as the generator made it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request {
    pub id: u64,
    pub intended: Instant,
    pub sent: Instant,
    /// Seed for the handler's own draws (service times), derived from the
    /// run seed and the id: the same for every runtime.
    pub seed: u64,
    /// Recorded (not warm-up).
    pub measured: bool,
    /// The handler must panic (fault injection).
    pub must_panic: bool,
}

/// SplitMix64 finaliser: decorrelates per-thread and per-request seeds.
pub(crate) fn mix(seed: u64, k: u64) -> u64 {
    let mut z = seed ^ k.wrapping_add(0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Sleeps, then spins, until `t`; returns the time it woke.
pub(crate) fn wait_until(t: Instant) -> Instant {
    loop {
        let now = Instant::now();
        if now >= t {
            return now;
        }
        let left = t - now;
        if left > SPIN_SLACK {
            thread::sleep(left - SPIN_SLACK);
        } else {
            std::hint::spin_loop();
        }
    }
}

/// What one generator thread did. Every measured arrival (intended in
/// `[measure_from, end)`) is `scheduled`, and ends either `sent` (then
/// answered, failed or unfinished) or `skipped` (never sent): `scheduled =
/// sent + skipped` exactly.
pub(crate) struct GenTotals {
    /// Measured arrivals taken from the schedule.
    pub scheduled: u64,
    /// Measured requests handed to the runtime (or failed at once for
    /// want of a connection).
    pub sent: u64,
    /// Measured arrivals never sent: the generator was still too far
    /// behind at `send_until`, or waited for a connection until the end.
    pub skipped: u64,
    /// Requests (warm-up or measured) actually handed to the runtime at a
    /// time inside the measured window: the load really offered there.
    pub sent_in_window: u64,
    /// Send time − intended time, measured requests.
    pub lag: Histogram<u64>,
}

impl GenTotals {
    pub(crate) fn new() -> GenTotals {
        GenTotals { scheduled: 0, sent: 0, skipped: 0, sent_in_window: 0, lag: new_histogram() }
    }

    pub(crate) fn merge(&mut self, other: &GenTotals) {
        self.scheduled += other.scheduled;
        self.sent += other.sent;
        self.skipped += other.skipped;
        self.sent_in_window += other.sent_in_window;
        self.lag.add(&other.lag).expect("histograms share bounds");
    }

    /// Counts an arrival taken from the schedule (intended before `end`).
    pub(crate) fn schedule(&mut self, w: &Window, intended: Instant) {
        self.scheduled += u64::from(intended >= w.measure_from);
    }

    /// Counts a scheduled arrival that will never be sent.
    pub(crate) fn never_sent(&mut self, w: &Window, intended: Instant) {
        self.skipped += u64::from(intended >= w.measure_from);
    }

    /// Takes every arrival still intended before `end` out of `arrivals`:
    /// scheduled, never sent.
    pub(crate) fn skip_rest(&mut self, arrivals: &mut Arrivals, w: &Window) {
        loop {
            let t = arrivals.next_at(w.start);
            if t >= w.end {
                return;
            }
            self.schedule(w, t);
            self.never_sent(w, t);
        }
    }

    /// Counts one request handed to the runtime at `sent` (intended at
    /// `intended`).
    pub(crate) fn record_send(&mut self, w: &Window, intended: Instant, sent: Instant) {
        if intended >= w.measure_from {
            self.sent += 1;
            self.lag.saturating_record(nanos(sent - intended));
        }
        if sent >= w.measure_from && sent < w.end {
            self.sent_in_window += 1;
        }
    }

    /// The rate at which requests were actually handed to the runtime
    /// during the measured window (whatever their intended times).
    pub(crate) fn offered_per_s(&self, w: &Window) -> f64 {
        self.sent_in_window as f64 / (w.end - w.measure_from).as_secs_f64()
    }
}

/// The arrival schedule of generator `index` of `spec.threads`.
pub(crate) fn schedule(spec: &LoadSpec, index: usize) -> Arrivals {
    let per_thread = spec.rate_per_s / spec.threads as f64;
    // Uniform schedules interleave by phase; Poisson ones need none (and a
    // phase would delay later threads' first arrivals).
    let phase_ns = match spec.arrival {
        ArrivalKind::Uniform => index as f64 * 1e9 / spec.rate_per_s,
        ArrivalKind::Poisson => 0.0,
    };
    Arrivals::new(spec.arrival, per_thread, phase_ns, mix(spec.seed, index as u64))
}

/// What an open-loop run measured, before it becomes a `RunOutput`.
pub(crate) struct OpenReport {
    pub histos: Histos,
    pub gen: GenTotals,
    pub window: Window,
    pub counters: CounterValues,
    pub notes: Vec<String>,
    pub extras: Vec<(String, f64)>,
    /// CPU use over the window (measure start to drained).
    pub cpu: Option<CpuUsage>,
}

fn us(ns: u64) -> f64 {
    ns as f64 / NS_PER_US
}

impl OpenReport {
    /// Adds `{name}_p50_us`, `_p99_us`, `_max_us` of the aux histogram.
    pub(crate) fn aux_extras(&mut self, name: &str) {
        let h = &self.histos.aux;
        if h.is_empty() {
            return;
        }
        for (suffix, q) in [("p50", 0.5), ("p99", 0.99)] {
            self.extras.push((format!("{name}_{suffix}_us"), us(h.value_at_quantile(q))));
        }
        self.extras.push((format!("{name}_max_us"), us(h.max())));
    }

    /// The final result; unfinished requests count as failed.
    pub(crate) fn into_output(self, spec: &LoadSpec, params: Vec<(String, String)>) -> RunOutput {
        let OpenReport { histos: h, gen, window: w, counters, mut notes, mut extras, cpu } = self;
        let finished = h.completed + h.failed;
        let unfinished = gen.sent.saturating_sub(finished);
        if unfinished > 0 {
            notes.push(format!("{unfinished} requests had not finished when draining timed out; counted as failed"));
        }
        let failed = h.failed + unfinished;
        if failed > 0 {
            notes.push(format!(
                "{failed} of {} requests failed (panicked handler, deadline miss, I/O error or unfinished)",
                gen.sent
            ));
        }
        let lag_p99 = gen.lag.value_at_quantile(0.99);
        let slipped = gen.skipped > 0 || lag_p99 > nanos(SLIP_LAG_P99);
        if slipped {
            notes.push(format!(
                "load generator could not keep its schedule: p99 send lag {:.0} us (limit {} us), {} of {} scheduled requests never sent",
                us(lag_p99),
                SLIP_LAG_P99.as_micros(),
                gen.skipped,
                gen.scheduled
            ));
        }
        // The measured window: answers after it (the drain) are counted
        // and recorded, but throughput is completions inside it / it.
        let elapsed = w.end - w.measure_from;
        let window_s = elapsed.as_secs_f64();
        extras.push((extra::SCHEDULED.into(), gen.scheduled as f64));
        extras.push((extra::NEVER_SENT.into(), gen.skipped as f64));
        extras.push((extra::COMPLETED_IN_WINDOW.into(), h.completed_in_window as f64));
        extras.push((extra::SENT_PER_S.into(), gen.sent as f64 / window_s));
        extras.push(("loadgen_lag_p50_us".into(), us(gen.lag.value_at_quantile(0.5))));
        extras.push(("loadgen_lag_p99_us".into(), us(lag_p99)));
        extras.push(("loadgen_lag_max_us".into(), us(gen.lag.max())));
        extras.push((extra::DEADLINE_MISSES.into(), h.deadline_misses as f64));
        let mut params = params;
        params.push(("rate".into(), spec.rate_per_s.to_string()));
        RunOutput {
            ops: h.completed,
            failed: Some(failed),
            sent: Some(gen.sent),
            elapsed,
            offered_per_s: Some(gen.offered_per_s(&w)),
            latency_ns: h.latency,
            uncorrected_ns: Some(h.uncorrected),
            queue_wait_ns: Some(h.queue_wait),
            service_ns: Some(h.service),
            // Filled in by `runner::execute`, which holds the runtime.
            sched_delay_ns: None,
            counters,
            schedule_slipped: slipped,
            notes,
            params,
            extras,
            cpu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_spreads_neighbouring_keys() {
        let a = mix(1, 0);
        let b = mix(1, 1);
        assert_ne!(a, b);
        assert!((a ^ b).count_ones() > 16, "{a:x} {b:x}");
        assert_eq!(mix(1, 0), a, "deterministic");
    }

    #[test]
    fn generators_skip_what_they_cannot_send_and_count_it() {
        let spec = LoadSpec {
            rate_per_s: 1_000.0,
            arrival: ArrivalKind::Uniform,
            threads: 1,
            cores: Vec::new(),
            seed: 1,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(20),
            stall: Duration::ZERO,
            panic_every: 0,
            side: crate::side::SidePool::OFF,
        };
        let w = Window::new(&spec);
        let mut a = schedule(&spec, 0);
        // Uniform at 1 kHz from phase 0: arrivals at 0, 1, ..., 19 ms after
        // the window's start fall before its end (20 ms later).
        let first = a.next_offset_ns();
        assert_eq!(first, 0);
        let mut g = GenTotals::new();
        g.skip_rest(&mut a, &w);
        assert_eq!((g.scheduled, g.skipped, g.sent), (19, 19, 0));
    }
}
