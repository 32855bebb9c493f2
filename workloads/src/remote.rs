//! The two halves of a TCP workload apart, for load from other machines:
//! [`serve`] runs only the server of `tcp-rpc`, `mixed` or `http` on the
//! runtime under test; [`load`] runs only the client against a server
//! elsewhere.
//!
//! The client and a remote server share no clock: the server records
//! service time only (no queue wait), and the client records latency
//! from each request's intended send time on its own clock, as in-process.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::api::{RunOptions, RunOutput, RuntimeSpec, WorkloadSpec};
use crate::catalog::{CLIENT_ONLY_PARAMS, WORKLOADS};
use crate::client::h2::{run_h2_clients, H2Target};
use crate::client::proto::Http1;
use crate::client::{client_report, run_clients};
use crate::cpu_time::CpuMeter;
use crate::http::{host, serve_accept_loop, HttpService, Proto, ServerSide};
use crate::plan::{plan, Plan, Work};
use crate::recorders::Collector;
use crate::rt::listen::{listen_overflows, listen_report};
use crate::rt::{counters_delta, no_counters, Rt, Spawner, SHUTDOWN_GRACE};
use crate::runner::{which, with_runtime, WithRuntime};
use crate::sched::REFERENCES;
use crate::tcp::TcpRpcWire;
use crate::tcp::{accept_loop, start_server};
use crate::Error;

/// How often `serve` checks whether it should stop.
const STOP_POLL: Duration = Duration::from_millis(20);

/// The workloads that have a separate server and client, from the
/// catalog's [`crate::api::WorkloadInfo::servable`].
pub fn servable_workloads() -> Vec<&'static str> {
    WORKLOADS.iter().filter(|w| w.servable).map(|w| w.name).collect()
}

/// The parameters of a servable workload that only `load`, the client,
/// reads: given to `serve` they would change nothing.
pub fn client_only_params() -> Vec<&'static str> {
    CLIENT_ONLY_PARAMS.iter().map(|p| p.name).collect()
}

fn servable(name: &str) -> Result<(), Error> {
    if WORKLOADS.iter().any(|w| w.name == name && w.servable) {
        Ok(())
    } else {
        Err(Error::NotServable { name: name.to_string(), allowed: servable_workloads().join(", ") })
    }
}

/// When [`serve`] stops, and whom it tells the bound address.
pub struct Until<'a> {
    /// Polled every 20 ms; `true` stops the server (SIGINT/SIGTERM).
    pub stop: &'a dyn Fn() -> bool,
    /// Stop after this long (`--duration`); `None` = only `stop`.
    pub limit: Option<Duration>,
    /// Called once with the bound address before serving starts.
    pub on_bound: &'a mut dyn FnMut(SocketAddr),
}

/// Runs the server of `w` on a fresh runtime listening on `listen` until
/// `until` says stop. The output covers the server's life from bound to
/// stopped: `ops`/`failed` = requests answered well / with a failure,
/// `service_ns` = handler start → answer of measured requests, counters
/// and CPU of the runtime; no client latency (`latency_ns` empty).
pub fn serve(rt: &RuntimeSpec, w: &WorkloadSpec, listen: SocketAddr, until: Until<'_>) -> Result<RunOutput, Error> {
    let which = which(rt)?;
    let plan = plan(rt, w)?;
    servable(&w.name)?;
    crate::spin::iters_per_ns();
    // Before the runtime exists: every thread alive now is not its own.
    let meter = CpuMeter::new();
    let job = ServeOn { plan: &plan, listen, until, meter: &meter };
    // Not native: the server runs on a driver thread while nobody is in
    // `block_on`.
    let mut out = with_runtime(which, rt, false, job, |_| {
        Err(Error::NotServable {
            name: format!("{} on the registered reference `{}`", w.name, rt.sched()),
            allowed: format!(
                "the built-in schedulers, {}",
                REFERENCES.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
            ),
        })
    })?;
    out.record_spin_drift();
    Ok(out)
}

/// `serve`'s job: the workload's server on the runtime.
struct ServeOn<'a, 'u> {
    plan: &'a Plan,
    listen: SocketAddr,
    until: Until<'u>,
    meter: &'a CpuMeter,
}

impl WithRuntime for ServeOn<'_, '_> {
    type Out = RunOutput;
    fn on<R: Rt>(self, runtime: R) -> Result<RunOutput, Error> {
        serve_on(runtime, self.plan, self.listen, self.until, self.meter)
    }
}

fn serve_on<R: Rt>(
    runtime: R,
    plan: &Plan,
    listen: SocketAddr,
    until: Until<'_>,
    meter: &CpuMeter,
) -> Result<RunOutput, Error> {
    let sp = runtime.spawner();
    let collector = Collector::new();
    let bound = match plan.work {
        Work::Tcp(h, ..) => {
            let serve = |l| accept_loop(sp.clone(), l, h, None, Arc::clone(&collector));
            start_server(&runtime, "tcp-rpc", listen, serve)
        }
        Work::Http(cfg, ..) => {
            let side = Arc::new(ServerSide { base: None, collector: Arc::clone(&collector) });
            let svc = HttpService::new(sp.clone(), cfg, side);
            start_server(&runtime, "http", listen, |l| serve_accept_loop(sp.clone(), l, svc.clone()))
        }
        _ => unreachable!("checked by servable(); a test ties the catalog's flag to the plans"),
    };
    let addr = match bound {
        Ok(a) => a,
        Err(e) => {
            runtime.shutdown(SHUTDOWN_GRACE);
            return Err(e);
        }
    };
    let counters_start = sp.window_start();
    let overflows_start = listen_overflows();
    meter.start();
    let start = Instant::now();
    (until.on_bound)(addr);
    while !(until.stop)() && until.limit.is_none_or(|l| start.elapsed() < l) {
        thread::sleep(STOP_POLL);
    }
    let elapsed = start.elapsed();
    let cpu = meter.finish();
    let counters = counters_delta(&counters_start, &sp.window_end());
    let sched_delay_ns = sp.sched_delay_window();
    runtime.shutdown(SHUTDOWN_GRACE);
    let h = collector.merged();
    let (listen_note, extras) = listen_report(overflows_start);
    Ok(RunOutput {
        ops: h.completed,
        failed: Some(h.failed),
        sent: Some(h.completed + h.failed),
        elapsed,
        offered_per_s: None,
        latency_ns: Histogram::new(3).expect("3 significant digits is valid"),
        uncorrected_ns: None,
        queue_wait_ns: None,
        service_ns: Some(h.service),
        sched_delay_ns,
        counters,
        schedule_slipped: false,
        notes: vec![
            format!("server side only (wsbench serve on {addr}): latency is measured by the load processes"),
            listen_note,
        ],
        params: plan.params.clone(),
        extras,
        cpu,
    })
}

/// Runs the client of `w` against a server at `target` (`wsbench serve`
/// or anything speaking the protocol). `rt.workers()` only sizes the default
/// rate (per worker of the server). Fails when no connection can be made.
pub fn load(target: SocketAddr, rt: &RuntimeSpec, w: &WorkloadSpec, opts: &RunOptions) -> Result<RunOutput, Error> {
    let plan = plan(rt, w)?;
    servable(&w.name)?;
    let (load, shape) = match plan.work {
        Work::Tcp(_, load, shape) | Work::Http(_, load, shape) => (load, shape),
        _ => unreachable!("checked by servable(); a test ties the catalog's flag to the plans"),
    };
    if !load.stall.is_zero() {
        return Err(Error::BadParam {
            workload: w.name.clone(),
            name: "stall-ms".into(),
            value: load.stall.as_millis().to_string(),
            allowed: "0 with `load` (a stall is injected into the runtime under test, which is elsewhere)".into(),
        });
    }
    let spec = load.spec(rt, opts);
    let cs = shape.spec(target, &spec);
    let base = Instant::now();
    // No runtime under test in this process: nothing to meter.
    let meter = CpuMeter::new();
    let run = match plan.work {
        Work::Http(cfg, ..) if cfg.proto == Proto::H2 => {
            run_h2_clients(&cs, &H2Target::new(cfg.body_bytes, host(target)), base, &|| {}, || (), &meter)?
        }
        Work::Http(cfg, ..) => {
            run_clients(&cs, &Http1::new(cfg.body_bytes, host(target)), base, &|| {}, || (), &meter)?
        }
        _ => run_clients(&cs, &TcpRpcWire, base, &|| {}, || (), &meter)?,
    };
    // No server side here: queue wait and service time stay blank.
    let mut out = client_report(run, &Collector::new(), &cs, no_counters()).into_output(&spec, plan.params);
    out.queue_wait_ns = None;
    out.service_ns = None;
    out.cpu = None;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Sched;

    /// The catalog's `servable` flag and the plans `serve_on` can serve
    /// say the same thing, for every workload.
    #[test]
    fn the_servable_flag_is_the_plans_with_a_server() {
        let rt = RuntimeSpec::new(Sched::parse("steal-half").unwrap(), 2, Default::default()).unwrap();
        for info in WORKLOADS.iter().filter(|w| !w.test_only) {
            let w = WorkloadSpec { name: info.name.to_string(), params: Vec::new(), rate_per_s: None };
            let p = plan(&rt, &w).unwrap_or_else(|e| panic!("{}: {e}", info.name));
            let has_server = matches!(p.work, Work::Tcp(..) | Work::Http(..));
            assert_eq!(info.servable, has_server, "{}", info.name);
        }
        assert_eq!(servable_workloads(), ["tcp-rpc", "mixed", "http"]);
        for info in WORKLOADS.iter().filter(|w| w.servable) {
            for name in client_only_params() {
                assert!(info.params.iter().any(|p| p.name == name), "{} has no client parameter {name}", info.name);
            }
        }
        let err = servable("yield-many").unwrap_err().to_string();
        assert!(err.contains("yield-many") && err.contains("tcp-rpc, mixed, http"), "{err}");
    }
}
