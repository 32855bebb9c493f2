//! In-process open-loop microservice workloads: `rpc-fanout`, `skewed`,
//! `timers`, `timeouts`. Each is a request handler, written once against
//! [`Spawner`]; the load generator in [`crate::openloop`] drives it.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::dist::Dist;
use crate::loadgen::Request;
use crate::openloop::{Outcome, INJECTED_PANIC};
use crate::recorders::nanos;
use crate::rt::Spawner;
use crate::spin::spin_ns;

/// `rpc-fanout`: the handler spawns `fanout` subtasks, each spinning for a
/// drawn service time, and waits for all of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fanout {
    pub fanout: u64,
    pub service: Dist,
}

/// `skewed`: one task per request; in `stragglers` mode a fraction of the
/// requests is `straggler_factor` times the service time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Skewed {
    pub service: Dist,
    pub straggler_p: f64,
    pub straggler_factor: f64,
}

/// `timers`: the handler awaits a simulated downstream call (a sleep of a
/// drawn length) under a deadline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timers {
    pub downstream: Dist,
    pub deadline: Duration,
}

/// `timeouts`: each request is a call to a backend subtask (spinning a
/// drawn service time) awaited under a timeout that almost never fires, so
/// that arming and cancelling a timer is on every request's path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub service: Dist,
    pub timeout: Duration,
}

/// Panics with the injected-fault message when `req` says so.
pub(crate) fn maybe_panic(req: &Request) {
    if req.must_panic {
        inject_panic();
    }
}

/// Unwinds with the injected-fault message without running the panic hook
/// (`resume_unwind`): an injected fault models a failed request and costs
/// an unwind, never a message or a backtrace on stderr, whatever
/// `RUST_BACKTRACE` says.
pub(crate) fn inject_panic() -> ! {
    std::panic::resume_unwind(Box::new(INJECTED_PANIC))
}

/// Spawns one subtask per draw of `service` (each spinning that long), the
/// first one panicking when the request must; `true` when all succeeded.
pub(crate) async fn fan_out<S: Spawner>(sp: &S, req: &Request, n: u64, service: Dist, rng: &mut SmallRng) -> bool {
    let joins: Vec<_> = subtask_draws(n, service, rng)
        .enumerate()
        .map(|(i, ns)| {
            let panic_here = req.must_panic && i == 0;
            sp.spawn_inside(async move {
                if panic_here {
                    inject_panic();
                }
                spin_ns(ns);
            })
        })
        .collect();
    let mut ok = true;
    for j in joins {
        ok &= j.await.is_ok();
    }
    ok
}

/// The service times of `n` subtasks, in spawn order: what [`fan_out`]
/// spins and what the ideal scheduler ([`crate::ideal`]) serves.
pub(crate) fn subtask_draws(n: u64, service: Dist, rng: &mut SmallRng) -> impl Iterator<Item = u64> + '_ {
    (0..n).map(move |_| service.sample(rng))
}

impl Fanout {
    /// The subtask service times of the request seeded `seed`
    /// ([`fanout_request`]'s draws), in spawn order, appended to `out`.
    pub(crate) fn draws_into(&self, seed: u64, out: &mut Vec<u64>) {
        let mut rng = SmallRng::seed_from_u64(seed);
        out.extend(subtask_draws(self.fanout, self.service, &mut rng));
    }
}

impl Skewed {
    /// The service time of the request seeded `seed`: one draw, times
    /// `straggler_factor` for a straggler ([`skewed_request`] spins it).
    pub(crate) fn draw(&self, seed: u64) -> u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let ns = self.service.sample(&mut rng);
        if self.straggler_p > 0.0 && rng.random::<f64>() < self.straggler_p {
            (ns as f64 * self.straggler_factor) as u64
        } else {
            ns
        }
    }
}

/// One `rpc-fanout` request.
pub(crate) async fn fanout_request<S: Spawner>(sp: S, req: Request, cfg: Fanout) -> Outcome {
    if cfg.fanout == 0 {
        // A no-op handler: what is left is the cost of getting a request
        // in and out (used to find the load generator's ceiling).
        maybe_panic(&req);
        return Outcome::OK;
    }
    let mut rng = SmallRng::seed_from_u64(req.seed);
    if fan_out(&sp, &req, cfg.fanout, cfg.service, &mut rng).await {
        Outcome::OK
    } else {
        Outcome::FAILED
    }
}

/// One `skewed` request.
pub(crate) async fn skewed_request(req: Request, cfg: Skewed) -> Outcome {
    maybe_panic(&req);
    spin_ns(cfg.draw(req.seed));
    Outcome::OK
}

/// One `timers` request; the aux value is the timer's lateness (wake-up
/// time − requested time, as seen by the task).
pub(crate) async fn timers_request<S: Spawner>(sp: S, req: Request, cfg: Timers) -> Outcome {
    maybe_panic(&req);
    let mut rng = SmallRng::seed_from_u64(req.seed);
    let wait = Duration::from_nanos(cfg.downstream.sample(&mut rng));
    let downstream = async {
        let t0 = Instant::now();
        sp.sleep(wait).await;
        nanos(t0.elapsed().saturating_sub(wait))
    };
    match sp.timeout(cfg.deadline, downstream).await {
        Some(late_ns) => Outcome { aux_ns: Some(late_ns), ..Outcome::OK },
        None => Outcome::MISSED,
    }
}

/// One `timeouts` request. The backend call is a spawned subtask, so the
/// first poll of the timeout finds it pending and files the timer (a call
/// that completed inline would never arm one); its completion then cancels
/// the timer. A fired timeout is a failed request (a deadline miss) whose
/// aux value is the timeout's lateness: time from arming to the handler
/// resuming, minus the timeout.
pub(crate) async fn timeouts_request<S: Spawner>(sp: S, req: Request, cfg: Timeouts) -> Outcome {
    maybe_panic(&req);
    let mut rng = SmallRng::seed_from_u64(req.seed);
    let ns = cfg.service.sample(&mut rng);
    let call = sp.spawn_inside(async move { spin_ns(ns) });
    let armed = Instant::now();
    match sp.timeout(cfg.timeout, call).await {
        Some(Ok(())) => Outcome::OK,
        Some(Err(_)) => Outcome::FAILED,
        None => Outcome { aux_ns: Some(nanos(armed.elapsed().saturating_sub(cfg.timeout))), ..Outcome::MISSED },
    }
}
