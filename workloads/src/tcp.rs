//! `tcp-rpc` and `mixed`: a real loopback TCP request/response server
//! running on the runtime under test, and an open-loop client made of
//! plain std threads and blocking sockets, independent of every runtime.
//!
//! Client: a pool of M connections (default 64), one plain std thread and
//! blocking socket each, sharing one arrival schedule at the offered rate.
//! A connection carries one request at a time, as HTTP/1.1 without
//! pipelining; an idle connection takes the next arrival from the shared
//! schedule, waits for its intended time and sends it. When every
//! connection is busy (the server is slow), the next request is sent late —
//! and its latency is still measured from its *intended* send time (wrk2's
//! correction); the uncorrected histogram measures from the actual send and
//! shows what a naive client would report.
//!
//! Server: an accept loop; one task per connection reads a request, runs
//! the handler inline (a panic is caught and answered with a failure
//! status, so the connection survives) and writes the response. It records
//! queue wait (intended arrival → handler start) and service time.
//!
//! Wire format, little-endian: request = id u64, intended (ns after a base
//! instant both sides share) u64, seed u64, flags u32, pad u32; response =
//! id u64, status u8, pad 7.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use futures_lite::FutureExt;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::arrivals::Arrivals;
use crate::cpu::CpuMeter;
use crate::dist::Dist;
use crate::micro::{fan_out, maybe_panic};
use crate::openloop::{
    count_left, drain_budget, mix, schedule, wait_until, GenTotals, LoadSpec, OpenReport, Outcome, Request, Window,
};
use crate::record::{nanos, Collector, Histos};
use crate::rt::{counters_delta, pin_current, read_exact, Rt, Spawner};
use crate::spin::spin_ns;
use crate::Error;

const REQUEST_LEN: usize = 32;
const RESPONSE_LEN: usize = 16;
const FLAG_MEASURED: u32 = 1;
const FLAG_PANIC: u32 = 2;
/// The unrecorded round trip each client makes before the schedule starts.
const FLAG_HELLO: u32 = 4;
const HELLO_ID: u64 = u64::MAX;
const STATUS_OK: u8 = 0;
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

fn encode_request(r: &Request, base: Instant, extra_flags: u32) -> [u8; REQUEST_LEN] {
    let mut b = [0u8; REQUEST_LEN];
    b[0..8].copy_from_slice(&r.id.to_le_bytes());
    b[8..16].copy_from_slice(&nanos(r.intended - base).to_le_bytes());
    b[16..24].copy_from_slice(&r.seed.to_le_bytes());
    let flags = extra_flags | if r.measured { FLAG_MEASURED } else { 0 } | if r.must_panic { FLAG_PANIC } else { 0 };
    b[24..28].copy_from_slice(&flags.to_le_bytes());
    b
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

async fn connection<S: Spawner>(sp: S, mut stream: S::Stream, h: Handler, base: Instant, collector: Arc<Collector>) {
    let mut buf = [0u8; REQUEST_LEN];
    // Any read error, including the client closing, ends the connection.
    while read_exact(&sp, &mut stream, &mut buf).await.is_ok() {
        let first_poll = Instant::now();
        let (req, hello) = decode_request(&buf, base, first_poll);
        let out = if hello {
            Outcome::OK
        } else {
            AssertUnwindSafe(handle(&sp, req, h)).catch_unwind().await.unwrap_or(Outcome::FAILED)
        };
        let done = Instant::now();
        if req.measured {
            collector.with_local(|hs| {
                hs.record_server(req.intended, first_poll, done);
                hs.deadline_misses += u64::from(out.deadline_miss);
            });
        }
        let mut resp = [0u8; RESPONSE_LEN];
        resp[0..8].copy_from_slice(&req.id.to_le_bytes());
        resp[8] = if out.ok { STATUS_OK } else { STATUS_FAILED };
        if sp.write_all(&mut stream, &resp).await.is_err() {
            return;
        }
    }
}

async fn accept_loop<S: Spawner>(sp: S, listener: S::Listener, h: Handler, base: Instant, collector: Arc<Collector>) {
    // An accept error (listener closed at shutdown) ends the server.
    while let Ok(stream) = sp.accept(&listener).await {
        drop(sp.spawn_inside(connection(sp.clone(), stream, h, base, Arc::clone(&collector))));
    }
}

/// One client connection's results.
struct ConnResult {
    histos: Histos,
    gen: GenTotals,
    error: Option<io::Error>,
}

fn exchange(s: &mut TcpStream, req: &Request, base: Instant, extra_flags: u32) -> io::Result<bool> {
    s.write_all(&encode_request(req, base, extra_flags))?;
    let mut resp = [0u8; RESPONSE_LEN];
    s.read_exact(&mut resp)?;
    let id = u64::from_le_bytes(resp[0..8].try_into().expect("8-byte field"));
    if id != req.id {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("response for request {id}, expected {}", req.id),
        ));
    }
    Ok(resp[8] == STATUS_OK)
}

/// Start-up handshake between the client threads and the thread that
/// owns the run: every client connects and completes one unrecorded
/// round trip (so the server has accepted it) before the schedule's window
/// is fixed and published. `None` published = abort.
struct StartGate {
    state: Mutex<(usize, Option<Option<Window>>)>,
    published: Condvar,
}

impl StartGate {
    fn new() -> StartGate {
        StartGate { state: Mutex::new((0, None)), published: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, (usize, Option<Option<Window>>)> {
        // No code panics while holding this lock.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A client is connected (or gave up); waits for the window.
    fn arrive(&self) -> Option<Window> {
        let mut st = self.lock();
        st.0 += 1;
        self.published.notify_all();
        loop {
            if let Some(w) = st.1 {
                return w;
            }
            st = self.published.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Waits until `n` clients arrived.
    fn wait_for(&self, n: usize) {
        let mut st = self.lock();
        while st.0 < n {
            st = self.published.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn publish(&self, w: Option<Window>) {
        self.lock().1 = Some(w);
        self.published.notify_all();
    }
}

fn connect(addr: SocketAddr, spec: &LoadSpec, base: Instant) -> io::Result<TcpStream> {
    let mut s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    // Generous: a response can legitimately take the whole run plus the
    // drain when the runtime is saturated.
    s.set_read_timeout(Some(2 * drain_budget(spec) + spec.warmup + spec.duration))?;
    let hello = Request { id: HELLO_ID, intended: base, sent: base, seed: 0, measured: false, must_panic: false };
    exchange(&mut s, &hello, base, FLAG_HELLO)?;
    Ok(s)
}

/// The arrival schedule every connection of the pool takes from.
struct Shared {
    arrivals: Arrivals,
    next_id: u64,
    stall_pending: bool,
    skipped: u64,
}

impl Shared {
    /// The next arrival before the window's end: (id, intended, whether
    /// this request fires the mid-run stall).
    fn take(&mut self, w: &Window) -> Option<(u64, Instant, bool)> {
        let intended = w.start + Duration::from_nanos(self.arrivals.next_offset_ns());
        if intended >= w.end {
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        let fire = self.stall_pending && intended >= w.midpoint;
        self.stall_pending &= !fire;
        Some((id, intended, fire))
    }
}

fn lock_shared(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // Nothing panics while holding it.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One connection of the pool: takes arrivals from `shared` until the
/// window ends.
fn client_conn(
    addr: SocketAddr,
    spec: &LoadSpec,
    base: Instant,
    gate: &StartGate,
    shared: &Mutex<Shared>,
    index: usize,
    stall: &(impl Fn() + Sync),
    meter: &CpuMeter,
) -> ConnResult {
    let _guest = meter.guest();
    pin_current(&spec.cores, index);
    let mut r = ConnResult { histos: Histos::new(), gen: GenTotals::new(), error: None };
    let conn = connect(addr, spec, base);
    let Some(w) = gate.arrive() else { return r };
    let mut s = match conn {
        Ok(s) => s,
        Err(e) => {
            // The other connections carry the schedule.
            r.error = Some(e);
            return r;
        }
    };
    loop {
        let Some((id, intended, fire)) = lock_shared(shared).take(&w) else {
            break;
        };
        let now = wait_until(intended);
        if now >= w.send_until {
            let mut sh = lock_shared(shared);
            sh.skipped += 1 + count_left(&mut sh.arrivals, &w);
            break;
        }
        if fire {
            stall();
        }
        let measured = intended >= w.measure_from;
        let must_panic = spec.panic_every != 0 && id % spec.panic_every == spec.panic_every - 1;
        let req = Request { id, intended, sent: now, seed: mix(spec.seed, id), measured, must_panic };
        let result = exchange(&mut s, &req, base, 0);
        let done = Instant::now();
        r.gen.record_send(&w, intended, now);
        if measured {
            r.histos.record_client(intended, now, done, matches!(result, Ok(true)));
        }
        if let Err(e) = result {
            // This connection is unusable; the others carry on.
            r.error = Some(e);
            break;
        }
    }
    r
}

/// Runs the server on `rt` and the client threads; the report's latency
/// comes from the clients, queue wait and service from the server.
pub(crate) fn run_tcp<R: Rt>(rt: &R, spec: &LoadSpec, h: Handler, meter: &CpuMeter) -> Result<OpenReport, Error> {
    let sp = rt.spawner();
    let collector = Collector::new();
    let base = Instant::now();
    let addr = start_server(rt, h, base, &collector)?;
    let stall_for = spec.stall;
    let stall = || drop(sp.spawn(async move { thread::sleep(stall_for) }));
    let at_start = || {
        meter.start();
        sp.window_start()
    };
    let (results, w, counters_start) = run_clients(addr, spec, base, &stall, at_start, meter)?;
    let mut report = merge_clients(results, &collector, spec, &w);
    report.counters = counters_delta(&counters_start, &sp.counters());
    report.cpu = meter.finish();
    Ok(report)
}

/// Binds the server and starts its accept loop: one listener bound from
/// `block_on`, or, on a runtime with several listener shards
/// (`thread-per-core`), one listener per shard, each bound (with
/// `SO_REUSEPORT`, all on the first one's port) and served by a task on
/// its own shard.
fn start_server<R: Rt>(rt: &R, h: Handler, base: Instant, collector: &Arc<Collector>) -> Result<SocketAddr, Error> {
    let sp = rt.spawner();
    let bind_err = |e| Error::io("binding the tcp-rpc server on 127.0.0.1", e);
    let shards = sp.listener_shards();
    if shards == 1 {
        let (listener, addr) = {
            let sp = sp.clone();
            rt.block_on(async move {
                let l = sp.listen(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
                let addr = sp.local_addr(&l)?;
                Ok::<_, io::Error>((l, addr))
            })
            .map_err(bind_err)?
        };
        drop(sp.spawn(accept_loop(sp.clone(), listener, h, base, Arc::clone(collector))));
        return Ok(addr);
    }
    let mut addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    for shard in 0..shards {
        let (inner, want) = (sp.clone(), addr);
        let bound = rt.block_on(async move {
            let (sp, ask) = (inner.clone(), want);
            let bind = async move {
                let l = sp.listen_shard(ask).await?;
                let addr = sp.local_addr(&l)?;
                Ok::<_, io::Error>((l, addr))
            };
            inner.spawn_on(shard, bind).await
        });
        let (listener, got) = match bound {
            Ok(r) => r.map_err(bind_err)?,
            Err(_) => return Err(bind_err(io::Error::other(format!("the bind task of shard {shard} failed")))),
        };
        addr = got;
        drop(sp.spawn_on(shard, accept_loop(sp.clone(), listener, h, base, Arc::clone(collector))));
    }
    Ok(addr)
}

fn run_clients<C: Fn() + Sync, T>(
    addr: SocketAddr,
    spec: &LoadSpec,
    base: Instant,
    stall: &C,
    at_measure_start: impl FnOnce() -> T,
    meter: &CpuMeter,
) -> Result<(Vec<ConnResult>, Window, T), Error> {
    let gate = StartGate::new();
    let shared = Mutex::new(Shared {
        arrivals: schedule(&LoadSpec { threads: 1, ..spec.clone() }, 0),
        next_id: 0,
        stall_pending: !spec.stall.is_zero(),
        skipped: 0,
    });
    let res = thread::scope(|s| {
        let mut handles = Vec::with_capacity(spec.threads);
        for index in 0..spec.threads {
            let (gate, shared) = (&gate, &shared);
            let spawned = thread::Builder::new()
                .name(format!("wsbench-client-{index}"))
                .spawn_scoped(s, move || client_conn(addr, spec, base, gate, shared, index, stall, meter));
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    gate.publish(None);
                    return Err(Error::io("starting a tcp client thread", e));
                }
            }
        }
        gate.wait_for(spec.threads);
        let w = Window::new(spec);
        gate.publish(Some(w));
        wait_until(w.measure_from);
        let snapshot = at_measure_start();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().expect("a tcp client thread panicked")).collect();
        Ok((results, w, snapshot))
    });
    let (mut results, w, snapshot) = res?;
    // The pool's skips are the schedule's, not one connection's.
    if let Some(first) = results.first_mut() {
        first.gen.skipped += lock_shared(&shared).skipped;
    }
    Ok((results, w, snapshot))
}

fn merge_clients(results: Vec<ConnResult>, server: &Collector, spec: &LoadSpec, w: &Window) -> OpenReport {
    let mut histos = Histos::new();
    let mut gen = GenTotals::new();
    let mut notes = Vec::new();
    let mut errors = 0;
    for r in &results {
        histos.merge(&r.histos);
        gen.merge(&r.gen);
        if let Some(e) = &r.error {
            errors += 1;
            if errors == 1 {
                notes.push(format!("a client connection failed: {e}"));
            }
        }
    }
    if errors > 1 {
        notes.push(format!("{errors} of {} client connections failed", spec.threads));
    }
    // The server records a request before it writes the response, and every
    // client has read its last response: nothing is still being recorded.
    let server_side = server.merged();
    histos.queue_wait = server_side.queue_wait;
    histos.service = server_side.service;
    histos.deadline_misses = server_side.deadline_misses;
    // Counted apart from failed requests: a connection that never came up
    // sends nothing, so it fails no request but takes its load away.
    let extras =
        vec![("connections".to_string(), spec.threads as f64), ("failed_connections".to_string(), f64::from(errors))];
    OpenReport { histos, gen, window: *w, counters: Vec::new(), notes, extras, cpu: None }
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
        let spec = RuntimeSpec {
            sched: "thread-per-core".into(),
            workers: 4,
            knobs: Vec::new(),
            worker_cores: Vec::new(),
            loadgen_cores: Vec::new(),
        };
        let rt = Ours::build(SchedulerKind::ThreadPerCore, &spec).unwrap();
        let sp = rt.spawner();
        assert_eq!(sp.listener_shards(), 4);
        let base = Instant::now();
        let h = Handler::Rpc(TcpRpc { service: Dist::Fixed { ns: 0.0 } });
        let addr = start_server(&rt, h, base, &Collector::new()).unwrap();
        let before = sp.polls_per_worker();
        let clients: Vec<_> = (0..32u64)
            .map(|id| {
                thread::spawn(move || {
                    let mut s = TcpStream::connect(addr).unwrap();
                    let req = Request { id, intended: base, sent: base, seed: id, measured: false, must_panic: false };
                    exchange(&mut s, &req, base, 0).unwrap()
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
        let (back, hello) = decode_request(&encode_request(&r, base, 0), base, base);
        assert!(!hello);
        let (_, hello) = decode_request(&encode_request(&r, base, FLAG_HELLO), base, base);
        assert!(hello);
        assert_eq!((back.id, back.seed, back.measured, back.must_panic), (77, 0xDEAD_BEEF, true, true));
        assert_eq!(back.intended, r.intended);
    }
}
