//! `accept-storm`: N connections arrive at once on loopback, then an
//! open-loop load runs over them.
//!
//! Origin: proxies have reported accept imbalance (a few threads ending up
//! with most connections, hence most requests), and static
//! `SO_REUSEPORT` sharding losing to designs that steal. Signature: the
//! per-worker share of requests, as an imbalance index, max / mean over
//! the runtime's workers (1 = even; W = one worker of W served everything).
//! It separates the shapes: a policy that neither steals nor rebalances
//! keeps every connection where it was accepted; `thread-per-core` keeps
//! the kernel's hash split; the stealing designs spread the work.
//!
//! The server and client are `tcp-rpc`'s ([`crate::tcp`]): an accept loop
//! spawning one task per connection, each request a fixed spin of
//! `service-us`. What differs is the arrival of the connections: the
//! client's threads default to one per 64 connections (each connects 64 at
//! once), so up to 1,024 connections (16 threads) arrive in one wave and
//! queue in the listener's backlog for the accept loop.
//!
//! Attribution is exact: each handler records on the thread that ran it
//! (one recorder per thread, [`crate::recorders::Collector`]), and every
//! runtime here runs its tasks on its worker threads only, so a thread is
//! a worker. Where more threads served requests than the runtime has
//! workers (a registered runtime running tasks elsewhere), the index is
//! absent rather than guessed.
//!
//! Reported (extras, measured requests only): `requests_attributed` (the
//! server's count: every request it answered, equal to `ops` when none
//! failed), `workers_serving`, `busiest_worker_requests`, and
//! `imbalance_index` = busiest / (attributed / workers), absent when no
//! request was attributed or attribution is impossible.

use crate::api::RunOutput;
use crate::client::ClientShape;
use crate::cpu_time::CpuMeter;
use crate::loadgen::LoadSpec;
use crate::rt::Rt;
use crate::tcp::{run_tcp_served, Handler, TcpRpc};
use crate::Error;

/// `client-threads=auto`: one client thread per this many connections,
/// which is how many one thread connects at once.
pub(crate) const CONNECTIONS_PER_STORM_THREAD: u64 = 64;

/// Who served the measured requests: per recording thread, the count.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shares {
    pub attributed: u64,
    pub serving: u64,
    pub busiest: u64,
    pub imbalance: Option<f64>,
}

impl Shares {
    /// The shares of `per_thread` counts over a runtime of `workers`.
    pub(crate) fn of(per_thread: &[u64], workers: usize) -> Shares {
        let attributed: u64 = per_thread.iter().sum();
        let serving = per_thread.iter().filter(|&&n| n > 0).count();
        let busiest = per_thread.iter().copied().max().unwrap_or(0);
        let imbalance =
            (attributed > 0 && serving <= workers).then(|| busiest as f64 * workers as f64 / attributed as f64);
        Shares { attributed, serving: serving as u64, busiest, imbalance }
    }
}

/// Runs `accept-storm`: `tcp-rpc`'s server and client, then the shares.
pub(crate) fn run_accept_storm<R: Rt>(
    rt: &R,
    spec: &LoadSpec,
    cfg: TcpRpc,
    client: ClientShape,
    workers: usize,
    params: Vec<(String, String)>,
    meter: &CpuMeter,
) -> Result<RunOutput, Error> {
    let (report, served) = run_tcp_served(rt, spec, Handler::Rpc(cfg), client, meter)?;
    let shares = Shares::of(&served.per_thread(|h| h.served_measured), workers);
    let mut out = report.into_output(spec, params);
    out.extras.extend([
        ("requests_attributed".to_string(), shares.attributed as f64),
        ("workers_serving".to_string(), shares.serving as f64),
        ("busiest_worker_requests".to_string(), shares.busiest as f64),
    ]);
    if let Some(index) = shares.imbalance {
        out.extras.push(("imbalance_index".to_string(), index));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: 30 requests over 2 workers, 20 on the busier: mean 15,
    /// index 20 / 15; all on one of 4: index 4; none: absent; more
    /// serving threads than workers: absent.
    #[test]
    fn the_index_is_the_busiest_over_the_mean_per_worker() {
        let s = Shares::of(&[10, 20], 2);
        assert_eq!((s.attributed, s.serving, s.busiest), (30, 2, 20));
        assert_eq!(s.imbalance, Some(40.0 / 30.0));
        assert_eq!(Shares::of(&[0, 12], 4).imbalance, Some(4.0));
        assert_eq!(Shares::of(&[0, 0], 2).imbalance, None);
        assert_eq!(Shares::of(&[], 2).imbalance, None);
        assert_eq!(Shares::of(&[1, 1, 1], 2).imbalance, None);
        assert_eq!(Shares::of(&[5], 1).imbalance, Some(1.0));
    }
}
