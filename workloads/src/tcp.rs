//! `tcp-rpc` and `mixed`: a real loopback TCP request/response server
//! running on the runtime under test, loaded by the open-loop mio client
//! of [`crate::client`] (independent of every runtime; many connections
//! per thread, one request in flight per connection, latency from each
//! request's intended send time).
//!
//! Server: an accept loop; one task per connection reads a request, runs
//! the handler inline (a panic is caught and answered with a failure
//! status, so the connection survives) and writes the response. It records
//! queue wait (intended arrival → handler start) and service time.
//!
//! Wire format, little-endian: request = id u64, intended (ns after a base
//! instant both sides share) u64, seed u64, flags u32, pad u32; response =
//! id u64, status u8, pad 7.

use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use futures_lite::FutureExt;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::client::proto::{Parsed, Protocol};
use crate::client::{client_report, run_clients, ClientShape};
use crate::cpu_time::CpuMeter;
use crate::dist::Dist;
use crate::loadgen::{LoadSpec, OpenReport, Request};
use crate::micro::{fan_out, maybe_panic};
use crate::openloop::Outcome;
use crate::recorders::{nanos, Collector};
use crate::rt::{accept_next, counters_delta, read_exact, Rt, Spawner};
use crate::spin::spin_ns;
use crate::Error;

pub(crate) const REQUEST_LEN: usize = 32;
pub(crate) const RESPONSE_LEN: usize = 16;
const FLAG_MEASURED: u32 = 1;
const FLAG_PANIC: u32 = 2;
/// The unrecorded round trip each client makes before the schedule starts.
const FLAG_HELLO: u32 = 4;
pub(crate) const STATUS_OK: u8 = 0;
const STATUS_FAILED: u8 = 1;

/// `tcp-rpc`: the handler spins for a drawn service time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TcpRpc {
    pub service: Dist,
}

/// `mixed`: the handler fans out to `fanout` subtasks that each spin and
/// then await a downstream sleep; the fan-in has a deadline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mixed {
    pub fanout: u64,
    pub service: Dist,
    pub downstream: Dist,
    pub deadline: Duration,
}

/// Which handler the server runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Handler {
    Rpc(TcpRpc),
    Mixed(Mixed),
}

/// The wire form of `r` (`hello`: the client's unrecorded start-up request).
pub(crate) fn encode_request(r: &Request, base: Instant, hello: bool) -> [u8; REQUEST_LEN] {
    let extra_flags = if hello { FLAG_HELLO } else { 0 };
    let mut b = [0u8; REQUEST_LEN];
    b[0..8].copy_from_slice(&r.id.to_le_bytes());
    b[8..16].copy_from_slice(&nanos(r.intended - base).to_le_bytes());
    b[16..24].copy_from_slice(&r.seed.to_le_bytes());
    let flags = extra_flags | if r.measured { FLAG_MEASURED } else { 0 } | if r.must_panic { FLAG_PANIC } else { 0 };
    b[24..28].copy_from_slice(&flags.to_le_bytes());
    b
}

/// The wire form of the response to request `id`: its id, then the status.
pub(crate) fn encode_response(id: u64, ok: bool) -> [u8; RESPONSE_LEN] {
    let mut resp = [0u8; RESPONSE_LEN];
    resp[0..8].copy_from_slice(&id.to_le_bytes());
    resp[8] = if ok { STATUS_OK } else { STATUS_FAILED };
    resp
}

/// The response to request `id` at the start of `buf`.
pub(crate) fn parse_response(buf: &[u8], id: u64) -> Parsed {
    let Some(resp) = buf.get(..RESPONSE_LEN) else {
        return Parsed::Partial;
    };
    let got = u64::from_le_bytes(resp[0..8].try_into().expect("8-byte field"));
    if got != id {
        return Parsed::Invalid(format!("response for request {got}, expected {id}"));
    }
    match resp[8] {
        STATUS_OK | STATUS_FAILED => Parsed::Response { len: RESPONSE_LEN, ok: resp[8] == STATUS_OK, close: false },
        other => Parsed::Invalid(format!("status byte {other} (expected {STATUS_OK} or {STATUS_FAILED})")),
    }
}

/// `tcp-rpc` / `mixed`: this module's binary format, for the mio client.
pub(crate) struct TcpRpcWire;

impl Protocol for TcpRpcWire {
    fn name(&self) -> &'static str {
        "tcp-rpc"
    }

    fn encode(&self, r: &Request, base: Instant, hello: bool, out: &mut Vec<u8>) {
        out.extend_from_slice(&encode_request(r, base, hello));
    }

    fn parse(&self, buf: &[u8], id: u64) -> Parsed {
        parse_response(buf, id)
    }
}

/// The request, and whether it is the start-up hello.
fn decode_request(b: &[u8; REQUEST_LEN], base: Instant, first_poll: Instant) -> (Request, bool) {
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8-byte field"));
    let flags = u32::from_le_bytes(b[24..28].try_into().expect("4-byte field"));
    let req = Request {
        id: u64_at(0),
        intended: base + Duration::from_nanos(u64_at(8)),
        // The server never sees the client's send time; it is not used here.
        sent: first_poll,
        seed: u64_at(16),
        measured: flags & FLAG_MEASURED != 0,
        must_panic: flags & FLAG_PANIC != 0,
    };
    (req, flags & FLAG_HELLO != 0)
}

async fn handle<S: Spawner>(sp: &S, req: Request, h: Handler) -> Outcome {
    maybe_panic_outside_fanout(&req, h);
    let mut rng = SmallRng::seed_from_u64(req.seed);
    match h {
        Handler::Rpc(cfg) => {
            spin_ns(cfg.service.sample(&mut rng));
            Outcome::OK
        }
        Handler::Mixed(cfg) => {
            let work = async {
                let ok = fan_out(sp, &req, cfg.fanout, cfg.service, &mut rng).await;
                sp.sleep(Duration::from_nanos(cfg.downstream.sample(&mut rng))).await;
                ok
            };
            match sp.timeout(cfg.deadline, work).await {
                Some(true) => Outcome::OK,
                Some(false) => Outcome::FAILED,
                None => Outcome::MISSED,
            }
        }
    }
}

/// `mixed` panics inside its first subtask (through `fan_out`); `tcp-rpc`
/// in the handler itself.
fn maybe_panic_outside_fanout(req: &Request, h: Handler) {
    if matches!(h, Handler::Rpc(_)) || matches!(h, Handler::Mixed(m) if m.fanout == 0) {
        maybe_panic(req);
    }
}

async fn connection<S: Spawner>(
    sp: S,
    mut stream: S::Stream,
    h: Handler,
    base: Option<Instant>,
    collector: Arc<Collector>,
) {
    let mut buf = [0u8; REQUEST_LEN];
    // Any read error, including the client closing, ends the connection.
    while read_exact(&sp, &mut stream, &mut buf).await.is_ok() {
        let first_poll = Instant::now();
        let (req, hello) = decode_request(&buf, base.unwrap_or(first_poll), first_poll);
        let out = if hello {
            Outcome::OK
        } else {
            AssertUnwindSafe(handle(&sp, req, h)).catch_unwind().await.unwrap_or(Outcome::FAILED)
        };
        let done = Instant::now();
        collector.with_local(|hs| {
            if req.measured {
                match base {
                    Some(_) => hs.record_server(req.intended, first_poll, done),
                    // `wsbench serve`: no clock shared with the client.
                    None => {
                        hs.service.saturating_record(nanos(done - first_poll));
                    }
                }
                hs.deadline_misses += u64::from(out.deadline_miss);
                hs.served_measured += u64::from(!hello);
            }
            // What the server answered (`wsbench serve` reports it; an
            // in-process run takes its counts from the client).
            if !hello {
                if out.ok {
                    hs.completed += 1;
                } else {
                    hs.failed += 1;
                }
            }
        });
        if sp.write_all(&mut stream, &encode_response(req.id, out.ok)).await.is_err() {
            return;
        }
    }
}

/// Accepts until the listener fails (closed at shutdown), one task per
/// connection; `base` = the client's clock base (in-process), `None` for
/// `wsbench serve`.
pub(crate) async fn accept_loop<S: Spawner>(
    sp: S,
    listener: S::Listener,
    h: Handler,
    base: Option<Instant>,
    collector: Arc<Collector>,
) {
    while let Some(stream) = accept_next(&sp, &listener).await {
        drop(sp.spawn_inside(connection(sp.clone(), stream, h, base, Arc::clone(&collector))));
    }
}

/// Runs the server on `rt` and the mio client ([`crate::client`]); the
/// report's latency comes from the client, queue wait and service from the
/// server.
pub(crate) fn run_tcp<R: Rt>(
    rt: &R,
    spec: &LoadSpec,
    h: Handler,
    client: ClientShape,
    meter: &CpuMeter,
) -> Result<OpenReport, Error> {
    run_tcp_served(rt, spec, h, client, meter).map(|(report, _)| report)
}

/// [`run_tcp`], also returning the server's recordings, one [`Histos`]
/// per thread that ran handlers (`accept-storm` reads who served what).
///
/// [`Histos`]: crate::recorders::Histos
pub(crate) fn run_tcp_served<R: Rt>(
    rt: &R,
    spec: &LoadSpec,
    h: Handler,
    client: ClientShape,
    meter: &CpuMeter,
) -> Result<(OpenReport, Arc<Collector>), Error> {
    let sp = rt.spawner();
    let collector = Collector::new();
    let base = Instant::now();
    let serve = |l| accept_loop(sp.clone(), l, h, Some(base), Arc::clone(&collector));
    let addr = start_server(rt, "tcp-rpc", loopback_any(), serve)?;
    let stall_for = spec.stall;
    let stall = || drop(sp.spawn(async move { thread::sleep(stall_for) }));
    let cs = client.spec(addr, spec);
    let at_start = || {
        meter.start();
        sp.window_start()
    };
    let run = run_clients(&cs, &TcpRpcWire, base, &stall, at_start, meter)?;
    let counters = counters_delta(&run.snapshot, &sp.window_end());
    let mut report = client_report(run, &collector, &cs, counters);
    report.cpu = meter.finish();
    Ok((report, collector))
}

/// Binds the `what` server on `addr` and starts `serve` (an accept loop)
/// on each listener: one listener bound from `block_on`, or, on a runtime
/// with several listener shards (`thread-per-core`), one listener per
/// shard, each bound (with `SO_REUSEPORT`, all on the first one's port)
/// and served by a task on its own shard. Returns the bound address.
pub(crate) fn start_server<R, F, Fut>(rt: &R, what: &str, addr: SocketAddr, serve: F) -> Result<SocketAddr, Error>
where
    R: Rt,
    F: Fn(<R::Spawner as Spawner>::Listener) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let sp = rt.spawner();
    let bind_err = |e| Error::io(format!("binding the {what} server on {addr}"), e);
    let shards = sp.listener_shards();
    if shards == 1 {
        let (listener, bound) = {
            let sp = sp.clone();
            rt.block_on(async move {
                let l = sp.listen(addr).await?;
                let bound = sp.local_addr(&l)?;
                Ok::<_, io::Error>((l, bound))
            })
            .map_err(bind_err)?
        };
        drop(sp.spawn(serve(listener)));
        return Ok(bound);
    }
    let mut want = addr;
    for shard in 0..shards {
        let (inner, ask) = (sp.clone(), want);
        let bound = rt.block_on(async move {
            let sp = inner.clone();
            let bind = async move {
                let l = sp.listen_shard(ask).await?;
                let bound = sp.local_addr(&l)?;
                Ok::<_, io::Error>((l, bound))
            };
            inner.spawn_on(shard, bind).await
        });
        let (listener, got) = match bound {
            Ok(r) => r.map_err(bind_err)?,
            Err(_) => return Err(bind_err(io::Error::other(format!("the bind task of shard {shard} failed")))),
        };
        want = got;
        drop(sp.spawn_on(shard, serve(listener)));
    }
    Ok(want)
}

/// 127.0.0.1 on a free port: where an in-process run's server listens.
pub(crate) fn loopback_any() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On `thread-per-core` the server binds a listener per core: 32
    /// connections, each making one round trip, are served by tasks on
    /// more than one core (the kernel spreads them over the SO_REUSEPORT
    /// group; all on one of 4 has probability 4 x 4^-32), and each is
    /// answered.
    #[test]
    fn thread_per_core_serves_connections_on_several_cores() {
        use crate::api::RuntimeSpec;
        use crate::rt::ours::Ours;
        use wsbench_schedulers::SchedulerKind;
        let spec = RuntimeSpec::parse("thread-per-core", 4).unwrap();
        let rt = Ours::build(SchedulerKind::ThreadPerCore, &spec).unwrap();
        let sp = rt.spawner();
        assert_eq!(sp.listener_shards(), 4);
        let base = Instant::now();
        let h = Handler::Rpc(TcpRpc { service: Dist::Fixed { ns: 0.0 } });
        let collector = Collector::new();
        let serve = |l| accept_loop(sp.clone(), l, h, Some(base), Arc::clone(&collector));
        let addr = start_server(&rt, "tcp-rpc", loopback_any(), serve).unwrap();
        let before = sp.polls_per_worker();
        let clients: Vec<_> = (0..32u64)
            .map(|id| {
                thread::spawn(move || {
                    use std::io::{Read, Write};
                    let mut s = std::net::TcpStream::connect(addr).unwrap();
                    let req = Request { id, intended: base, sent: base, seed: id, measured: false, must_panic: false };
                    s.write_all(&encode_request(&req, base, false)).unwrap();
                    let mut resp = [0u8; RESPONSE_LEN];
                    s.read_exact(&mut resp).unwrap();
                    matches!(parse_response(&resp, id), Parsed::Response { ok: true, .. })
                })
            })
            .collect();
        for c in clients {
            assert!(c.join().unwrap(), "request failed");
        }
        let after = sp.polls_per_worker();
        let busy = before.iter().zip(&after).filter(|(b, a)| a > b).count();
        assert!(busy >= 2, "connections served on {busy} core(s): polls {before:?} -> {after:?}");
        rt.shutdown(Duration::from_secs(5));
    }

    #[test]
    fn requests_round_trip_through_the_wire_format() {
        let base = Instant::now();
        let r = Request {
            id: 77,
            intended: base + Duration::from_micros(1234),
            sent: base,
            seed: 0xDEAD_BEEF,
            measured: true,
            must_panic: true,
        };
        let (back, hello) = decode_request(&encode_request(&r, base, false), base, base);
        assert!(!hello);
        let (_, hello) = decode_request(&encode_request(&r, base, true), base, base);
        assert!(hello);
        assert_eq!((back.id, back.seed, back.measured, back.must_panic), (77, 0xDEAD_BEEF, true, true));
        assert_eq!(back.intended, r.intended);
    }
}
