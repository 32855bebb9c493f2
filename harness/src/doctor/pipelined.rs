//! The pipelined TCP client's ceiling, a figure of `doctor --calibrate`'s
//! `loadgen-ceiling` check: one client thread of `wsbench load`
//! (`tcp-rpc`) on [`CONNECTIONS`] connections with [`DEPTH`] requests in
//! flight on each, asked [`ASKED_PER_S`] of the trivial server
//! ([`wsbench_workloads::trivial`]: one plain mio thread that answers
//! every request with no handler), so that what it sends is its own
//! ceiling, not a runtime's.

use anyhow::{Context, Result};

use super::{workload_spec, CEILING_RUN};

/// The figure (sent per second of the window).
pub const FIGURE: &str = "offered_per_s_per_client_thread_pipelined";
/// Requests in flight per connection.
pub const DEPTH: &str = "64";
/// Connections of the one client thread.
const CONNECTIONS: &str = "16";
/// Far beyond one thread (4.2M/s at depth 64 on the 2-vCPU VM,
/// `results/tcp-client-ceiling`).
const ASKED_PER_S: f64 = 20_000_000.0;

/// The rate one pipelined client thread sent to the trivial server.
pub(super) fn ceiling() -> Result<f64> {
    let server = wsbench_workloads::trivial::TrivialServer::start().context("starting the trivial tcp-rpc server")?;
    // The runtime only sizes a default rate; the rate is given.
    let rt = wsbench_workloads::api::RuntimeSpec::parse("steal-half", 1).context("the runtime")?;
    let params = [("connections", CONNECTIONS), ("client-threads", "1"), ("pipeline", DEPTH), ("arrival", "uniform")];
    let spec = workload_spec("tcp-rpc", &params, Some(ASKED_PER_S));
    let out =
        wsbench_workloads::remote::load(server.addr(), &rt, &spec, &CEILING_RUN).context("wsbench load tcp-rpc")?;
    out.offered_per_s.context("the load generator measured no offered rate")
}

/// The check's words for the figure, or why it is missing.
pub(super) fn detail(measured: &Result<f64>) -> String {
    match measured {
        Ok(sent) => format!(
            "asked {ASKED_PER_S:.0}/s of one pipelined client thread (tcp-rpc, {CONNECTIONS} connections, \
             pipeline {DEPTH}) to the trivial server (one mio thread, no handler): it sent {sent:.0}/s"
        ),
        Err(e) => format!("the pipelined client's ceiling could not be measured: {e:#}"),
    }
}

/// The figure and the words a cell's client threads are held to before a
/// sweep: the pipelined figure for a cell whose resolved `pipeline` is
/// above 1 (measured at depth [`DEPTH`]: a shallower pipeline reaches
/// less, so its warning may come late), else `unpipelined`.
pub(super) fn client_pacer(
    params: &[(String, String)],
    unpipelined: (&'static str, &'static str),
) -> (&'static str, &'static str) {
    let depth = params.iter().find(|(k, _)| k == "pipeline").and_then(|(_, v)| v.parse::<u64>().ok());
    if depth.is_some_and(|d| d > 1) {
        (FIGURE, "pipelined client thread (pipeline 64)")
    } else {
        unpipelined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelined_cells_are_held_to_the_pipelined_figure() {
        let unpipelined = ("offered_per_s_per_client_thread", "client thread");
        let params = |depth: &str| vec![("pipeline".to_string(), depth.to_string())];
        assert_eq!(client_pacer(&params("8"), unpipelined).0, FIGURE);
        assert_eq!(client_pacer(&params("1"), unpipelined), unpipelined);
        assert_eq!(client_pacer(&[], unpipelined), unpipelined, "a workload without the parameter");
        assert!(client_pacer(&params("8"), unpipelined).1.contains(DEPTH));
    }
}
