//! An in-process `http` run: hyper on the runtime under test, the client
//! on its own threads (mio for HTTP/1.1, the h2 client for HTTP/2), over
//! loopback.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use super::{Http, HttpService, Proto, ServerSide};
use crate::client::h2::{run_h2_clients, H2Target};
use crate::client::proto::Http1;
use crate::client::{client_report, run_clients, ClientShape};
use crate::cpu_time::CpuMeter;
use crate::loadgen::{LoadSpec, OpenReport};
use crate::recorders::Collector;
use crate::rt::{accept_next, counters_delta, Rt, Spawner};
use crate::tcp::{loopback_any, start_server};
use crate::Error;

/// Accepts connections until the listener fails (closed at shutdown) and
/// serves each in its own task.
pub(crate) async fn accept_loop<S: Spawner>(sp: S, listener: S::Listener, svc: HttpService<S>) {
    while let Some(stream) = accept_next(&sp, &listener).await {
        let (sp2, svc) = (sp.clone(), svc.clone());
        // A connection's error (the client reset it, a malformed request)
        // ends that connection only; hyper already answered what it could.
        drop(sp.spawn_inside(async move { drop(sp2.serve_http(stream, svc).await) }));
    }
}

/// Runs the server on `rt` and the client against it.
pub(crate) fn run_http<R: Rt>(
    rt: &R,
    spec: &LoadSpec,
    cfg: Http,
    client: ClientShape,
    meter: &CpuMeter,
) -> Result<OpenReport, Error> {
    let sp = rt.spawner();
    let base = Instant::now();
    let side = Arc::new(ServerSide { base: Some(base), collector: Collector::new() });
    let svc = HttpService::new(sp.clone(), cfg, Arc::clone(&side));
    let addr = start_server(rt, "http", loopback_any(), |l| accept_loop(sp.clone(), l, svc.clone()))?;
    let stall_for = spec.stall;
    let stall = || drop(sp.spawn(async move { thread::sleep(stall_for) }));
    let cs = client.spec(addr, spec);
    let at_start = || {
        meter.start();
        sp.window_start()
    };
    let run = match cfg.proto {
        Proto::H1 => run_clients(&cs, &Http1::new(cfg.body_bytes, host(addr)), base, &stall, at_start, meter)?,
        Proto::H2 => run_h2_clients(&cs, &H2Target::new(cfg.body_bytes, host(addr)), base, &stall, at_start, meter)?,
    };
    let counters = counters_delta(&run.snapshot, &sp.window_end());
    let mut report = client_report(run, &side.collector, &cs, counters);
    report.cpu = meter.finish();
    Ok(report)
}

/// The `host` header for `addr`.
pub(crate) fn host(addr: SocketAddr) -> String {
    addr.to_string()
}
