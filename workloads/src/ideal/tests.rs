//! Known answers for the ideal scheduler: closed-form queueing results on
//! the run's own arrival and service streams (fixed seeds, so each outcome
//! is determined).
//!
//! Tolerances come from the samples themselves: waiting times in a queue
//! are correlated, so the i.i.d. standard error would be too small. Each
//! check splits the measured requests into [`BATCHES`] consecutive batches
//! (batch means), takes the statistic per batch, and allows
//! [`Z_TOLERANCE`] standard errors of their mean; it also requires that
//! standard error to be under [`MAX_RELATIVE_SE`] of the true value, so a
//! pass means something.

use std::time::Duration;

use super::*;
use crate::arrivals::ArrivalKind;
use crate::dist::Dist;

const SEED: u64 = 2026;
/// Batches of the batch-means standard error.
const BATCHES: usize = 20;
/// Allowed distance from the closed form, in standard errors.
const Z_TOLERANCE: f64 = 4.0;
/// The standard error must be below this fraction of the true value.
const MAX_RELATIVE_SE: f64 = 0.03;
/// Mean service time of every check: 10 µs (μ = 100,000/s per server).
const SERVICE_NS: f64 = 10_000.0;
const NS_PER_S: f64 = 1e9;
/// Measured requests per check (a warm-up of 1 % is served first).
const REQUESTS: f64 = 1_000_000.0;

/// A single-thread Poisson load at `rate` per second with `REQUESTS`
/// measured arrivals.
fn poisson(rate: f64) -> LoadSpec {
    let duration = Duration::from_secs_f64(REQUESTS / rate);
    LoadSpec {
        rate_per_s: rate,
        arrival: ArrivalKind::Poisson,
        threads: 1,
        cores: Vec::new(),
        seed: SEED,
        warmup: duration / 100,
        duration,
        stall: Duration::ZERO,
        panic_every: 0,
        side: crate::side::SidePool::OFF,
    }
}

fn one_unit(service: Dist) -> Units {
    Units::Skewed(Skewed { service, straggler_p: 0.0, straggler_factor: 1.0 })
}

/// (latency, wait) of every measured request, ns.
fn run(spec: &LoadSpec, units: Units, servers: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    simulate(spec, units, servers, |_, work, latency| {
        let service: u64 = work.iter().sum();
        out.push((latency as f64, latency.saturating_sub(service) as f64));
    });
    out
}

fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1]
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Checks `stat` over `samples` against `truth` with a batch-means
/// tolerance (see the module doc).
fn check(name: &str, samples: &[f64], stat: impl Fn(Vec<f64>) -> f64, truth: f64) {
    let per_batch = samples.len() / BATCHES;
    let batches: Vec<f64> = samples.chunks_exact(per_batch).take(BATCHES).map(|b| stat(b.to_vec())).collect();
    let m = mean(&batches);
    let var = batches.iter().map(|b| (b - m).powi(2)).sum::<f64>() / (BATCHES - 1) as f64;
    let se = (var / BATCHES as f64).sqrt();
    let all = stat(samples.to_vec());
    assert!(se < MAX_RELATIVE_SE * truth, "{name}: standard error {se:.1} too large against {truth:.1} to test");
    assert!(
        (all - truth).abs() < Z_TOLERANCE * se,
        "{name}: {all:.1} ns vs closed form {truth:.1} ns (tolerance {Z_TOLERANCE} x SE {se:.1} = {:.1}, {} samples)",
        Z_TOLERANCE * se,
        samples.len()
    );
}

/// M/M/1: the sojourn time is exponential with rate μ − λ, so its p99 is
/// ln(100) / (μ − λ).
#[test]
fn m_m_1_sojourn_p99_is_ln100_over_mu_minus_lambda() {
    let mu = NS_PER_S / SERVICE_NS;
    let lambda = 0.5 * mu;
    let out = run(&poisson(lambda), one_unit(Dist::Exp { mean_ns: SERVICE_NS }), 1);
    let truth = 100f64.ln() / (mu - lambda) * NS_PER_S;
    let latency: Vec<f64> = out.iter().map(|s| s.0).collect();
    check("M/M/1 p99 sojourn", &latency, |v| quantile(v, 0.99), truth);
}

/// Erlang's C formula: the probability that an arrival waits in M/M/k at
/// offered load `a` = λ/μ erlangs.
fn erlang_c(k: usize, a: f64) -> f64 {
    let mut term = 1.0; // a^i / i!
    let mut below = 0.0;
    for i in 0..k {
        below += term;
        term *= a / (i + 1) as f64;
    }
    let top = term * k as f64 / (k as f64 - a);
    top / (below + top)
}

/// M/M/k: the mean wait is C(k, a) / (kμ − λ).
#[test]
fn m_m_k_mean_wait_follows_erlang_c() {
    let k = 4;
    let mu = NS_PER_S / SERVICE_NS;
    let lambda = 0.8 * k as f64 * mu;
    let out = run(&poisson(lambda), one_unit(Dist::Exp { mean_ns: SERVICE_NS }), k);
    let truth = erlang_c(k, lambda / mu) / (k as f64 * mu - lambda) * NS_PER_S;
    let wait: Vec<f64> = out.iter().map(|s| s.1).collect();
    check("M/M/4 mean wait", &wait, |v| mean(&v), truth);
}

/// M/D/1: the mean wait is ρ / (2μ(1 − ρ)) (Pollaczek–Khinchine).
#[test]
fn m_d_1_mean_wait_is_pollaczek_khinchine() {
    let mu = NS_PER_S / SERVICE_NS;
    let rho = 0.6;
    let out = run(&poisson(rho * mu), one_unit(Dist::Fixed { ns: SERVICE_NS }), 1);
    let truth = rho / (2.0 * mu * (1.0 - rho)) * NS_PER_S;
    let wait: Vec<f64> = out.iter().map(|s| s.1).collect();
    check("M/D/1 mean wait", &wait, |v| mean(&v), truth);
}

#[test]
fn erlang_c_of_one_server_is_the_utilisation() {
    assert!((erlang_c(1, 0.3) - 0.3).abs() < 1e-12);
    // A textbook value: 2 servers at 1 erlang wait with probability 1/3.
    assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
}

#[test]
fn fcfs_takes_the_server_that_frees_first() {
    let mut q = Fcfs::new(2);
    assert_eq!(q.serve(0, 10), 10);
    assert_eq!(q.serve(1, 5), 6);
    // Both busy: waits for the one free at 6, not the one free at 10.
    assert_eq!(q.serve(2, 1), 7);
    // Arrives after both are free: no wait.
    assert_eq!(q.serve(20, 3), 23);
}

/// A fan-out request completes when its last subtask does: with two
/// servers and three fixed 10 µs subtasks, an isolated request takes 20 µs.
#[test]
fn a_fan_out_request_ends_with_its_last_subtask() {
    let mut spec = poisson(1.0);
    spec.arrival = ArrivalKind::Uniform;
    spec.duration = Duration::from_secs(5);
    spec.warmup = Duration::ZERO;
    let units = Units::Fanout(Fanout { fanout: 3, service: Dist::Fixed { ns: SERVICE_NS } });
    let out = run(&spec, units, 2);
    assert_eq!(out.len(), 5);
    assert!(out.iter().all(|s| s.0 == 2.0 * SERVICE_NS), "{out:?}");
    // fanout=0: no work, done at arrival.
    let zero = run(&spec, Units::Fanout(Fanout { fanout: 0, service: Dist::Fixed { ns: SERVICE_NS } }), 1);
    assert!(zero.iter().all(|s| s.0 == 0.0), "{zero:?}");
}

/// The merged stream is every generator thread's own schedule, with the
/// ids that thread gives: thread i sends ids i, i + n, i + 2n, ...
#[test]
fn arrivals_are_the_generator_threads_schedules_merged() {
    let mut spec = poisson(10_000.0);
    spec.threads = 3;
    spec.duration = Duration::from_millis(50);
    spec.warmup = Duration::from_millis(10);
    let merged: Vec<Arrival> = arrivals(&spec).collect();
    assert!(merged.windows(2).all(|w| w[0].offset_ns <= w[1].offset_ns), "time order");
    let end = nanos(spec.warmup + spec.duration);
    for i in 0..3u64 {
        let mut s = schedule(&spec, i as usize);
        let own: Vec<(u64, u64)> = merged.iter().filter(|a| a.id % 3 == i).map(|a| (a.offset_ns, a.id)).collect();
        let want: Vec<(u64, u64)> =
            (0..).map(|k| (s.next_offset_ns(), i + 3 * k)).take_while(|(at, _)| *at < end).collect();
        assert_eq!(own, want, "thread {i}");
    }
    let warmup = nanos(spec.warmup);
    assert!(merged.iter().all(|a| a.measured == (a.offset_ns >= warmup)));
    assert!(merged.iter().any(|a| !a.measured) && merged.iter().any(|a| a.measured));
}

/// A request that must panic loses the work its panic skips.
#[test]
fn injected_panics_skip_their_work() {
    let mut spec = poisson(1_000.0);
    spec.panic_every = 2;
    let skewed = one_unit(Dist::Fixed { ns: SERVICE_NS });
    let mut work = Vec::new();
    skewed.of(&spec, 1, &mut work);
    assert_eq!(work, [0]);
    skewed.of(&spec, 2, &mut work);
    assert_eq!(work, [SERVICE_NS as u64]);
    let fanout = Units::Fanout(Fanout { fanout: 2, service: Dist::Fixed { ns: SERVICE_NS } });
    fanout.of(&spec, 3, &mut work);
    assert_eq!(work, [0, SERVICE_NS as u64]);
}
