//! The ideal scheduler: what a zero-overhead central FCFS queue with
//! `k = workers` servers would have done with a run's own requests.
//!
//! Beside a measured row this answers "how far from the limit": the same
//! intended arrival times and the same service draws (same seed), served by
//! an M/G/k queue that costs nothing to enter, to leave, or to hand work
//! to a server. For `rpc-fanout` each request's subtasks join the queue at
//! its arrival, in spawn order, and the request completes when its last
//! subtask does (`fanout=0` completes at its arrival); for `skewed` a
//! request is one unit of work (its straggler draw included). Only the
//! latency of the measured requests is kept (warm-up requests are served,
//! as they occupy servers in the run too).
//!
//! Pure: no runtime, no threads, no clock. The schedule comes from
//! [`crate::loadgen::schedule`] and the draws from [`crate::micro`], the
//! functions the run itself uses, so the two consume the same sequences.
//!
//! Where the units of work are not CPU service times the ideal is not
//! defined ([`Ideal::Undefined`], with the reason): timers wait on a clock,
//! the socket workloads' service includes the kernel's network path, and
//! closed-loop benchmarks have no arrivals to queue.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hdrhistogram::Histogram;

use crate::api::{RunOptions, RuntimeSpec, WorkloadSpec};
use crate::arrivals::Arrivals;
use crate::loadgen::{schedule, LoadSpec};
use crate::micro::{Fanout, Skewed};
use crate::plan::{plan, Work};
use crate::recorders::{nanos, new_histogram};
use crate::Error;

#[cfg(test)]
mod tests;

/// A zero-overhead first-come-first-served queue in front of `k` servers
/// (the Kiefer–Wolfowitz recursion): each job, offered in arrival order,
/// starts when it has arrived and a server is free, on the server that
/// frees first.
#[derive(Debug, Clone)]
pub struct Fcfs {
    /// When each server is next free, earliest first.
    free_at: BinaryHeap<Reverse<u64>>,
}

impl Fcfs {
    /// `servers` (at least 1) idle servers at time 0.
    pub fn new(servers: usize) -> Fcfs {
        assert!(servers >= 1, "an FCFS queue needs at least one server");
        Fcfs { free_at: (0..servers).map(|_| Reverse(0)).collect() }
    }

    /// Serves a job arriving at `arrival_ns` that needs `service_ns`;
    /// returns when it completes. Jobs must come in arrival order.
    pub fn serve(&mut self, arrival_ns: u64, service_ns: u64) -> u64 {
        let mut earliest = self.free_at.peek_mut().expect("at least one server");
        let done = earliest.0.max(arrival_ns).saturating_add(service_ns);
        earliest.0 = done;
        done
    }
}

/// What the ideal scheduler did with a run.
#[derive(Debug, Clone)]
pub enum Ideal {
    /// Latency (intended arrival to completion, ns) of every measured
    /// request, as the run records its own.
    Latency(Histogram<u64>),
    /// Not defined for this workload; why.
    Undefined(&'static str),
}

/// Why a workload has no ideal.
const CLOSED: &str = "a closed-loop workload: no arrivals to queue";
const TIMERS: &str = "its requests wait on timers, which the ideal's CPU servers do not model";
const SOCKETS: &str = "its service includes the kernel's socket path, which the ideal does not model";

/// One open-loop request as the ideal sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Arrival {
    /// Intended arrival, ns after the schedule's start.
    pub offset_ns: u64,
    /// The request's id (its seed and fault injection follow from it).
    pub id: u64,
    /// In the measured window (not warm-up).
    pub measured: bool,
}

/// Every intended arrival of `spec`'s generator threads before the window
/// ends, merged in time order (ties: lower thread first), with the ids the
/// generator threads give them.
pub(crate) fn arrivals(spec: &LoadSpec) -> impl Iterator<Item = Arrival> {
    let warmup_ns = nanos(spec.warmup);
    let end_ns = nanos(spec.warmup + spec.duration);
    let threads = spec.threads.max(1);
    let mut schedules: Vec<(Arrivals, u64)> = (0..threads).map(|i| (schedule(spec, i), i as u64)).collect();
    let mut next: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    for (i, (s, _)) in schedules.iter_mut().enumerate() {
        let at = s.next_offset_ns();
        if at < end_ns {
            next.push(Reverse((at, i)));
        }
    }
    std::iter::from_fn(move || {
        let Reverse((offset_ns, i)) = next.pop()?;
        let (s, id) = &mut schedules[i];
        let this = Arrival { offset_ns, id: *id, measured: offset_ns >= warmup_ns };
        *id += threads as u64;
        let at = s.next_offset_ns();
        if at < end_ns {
            next.push(Reverse((at, i)));
        }
        Some(this)
    })
}

/// The units of work of one request kind.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Units {
    /// `rpc-fanout`: the request's subtasks.
    Fanout(Fanout),
    /// `skewed`: the request itself.
    Skewed(Skewed),
}

impl Units {
    /// The service times of request `id`'s units, into `out` (cleared).
    /// A request that must panic (`panic-every`) loses the work its panic
    /// skips: `skewed` panics before it spins, `rpc-fanout` in its first
    /// subtask.
    fn of(&self, spec: &LoadSpec, id: u64, out: &mut Vec<u64>) {
        out.clear();
        let panics = spec.must_panic(id);
        match self {
            Units::Fanout(f) => {
                f.draws_into(spec.request_seed(id), out);
                if panics {
                    if let Some(first) = out.first_mut() {
                        *first = 0;
                    }
                }
            }
            Units::Skewed(s) => out.push(if panics { 0 } else { s.draw(spec.request_seed(id)) }),
        }
    }
}

/// Runs `spec`'s requests of kind `units` through an FCFS queue with
/// `servers` servers, calling `sink(arrival, units' service times,
/// latency_ns)` for each measured request in arrival order.
pub(crate) fn simulate(spec: &LoadSpec, units: Units, servers: usize, mut sink: impl FnMut(&Arrival, &[u64], u64)) {
    let mut queue = Fcfs::new(servers);
    let mut work = Vec::new();
    for a in arrivals(spec) {
        units.of(spec, a.id, &mut work);
        let done = work.iter().fold(a.offset_ns, |last, &s| last.max(queue.serve(a.offset_ns, s)));
        if a.measured {
            sink(&a, &work, done - a.offset_ns);
        }
    }
}

/// What the ideal scheduler would have done with the run of `w` on `rt`
/// with `opts`: the latency of each measured request, or why it is not
/// defined. The run's own validation applies (an invalid spec is the same
/// error `run` gives).
pub fn ideal(rt: &RuntimeSpec, w: &WorkloadSpec, opts: &RunOptions) -> Result<Ideal, Error> {
    let (units, load) = match plan(rt, w)?.work {
        Work::Fanout(f, load) => (Units::Fanout(f), load),
        Work::Skewed(s, _, load) => (Units::Skewed(s), load),
        Work::Timers(..) | Work::Timeouts(..) => return Ok(Ideal::Undefined(TIMERS)),
        Work::Tcp(..) | Work::Http(..) | Work::AcceptStorm(..) => return Ok(Ideal::Undefined(SOCKETS)),
        Work::Bench(_)
        | Work::Storm(_)
        | Work::PingPong(_)
        | Work::Pipeline(_)
        | Work::LifoStarvation(_)
        | Work::IdleBurst(_)
        | Work::TaskChurn(_)
        | Work::TimerChurn(_)
        | Work::Hang
        | Work::Crash => return Ok(Ideal::Undefined(CLOSED)),
    };
    let spec = load.spec(rt, opts);
    let mut h = new_histogram();
    simulate(&spec, units, rt.workers(), |_, _, ns| h.saturating_record(ns));
    Ok(Ideal::Latency(h))
}
