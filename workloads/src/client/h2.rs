//! The HTTP/2 client of `http` with `proto=h2`: many streams per
//! connection, on the `h2` crate (the HTTP/2 implementation hyper's own
//! `http2` is built on).
//!
//! Each client thread runs its own tokio current-thread runtime (a
//! separate instance on the client's own threads: it never shares the
//! runtime under test, even when that is tokio) with `connections /
//! threads` HTTP/2 connections; the thread paces its own arrivals (`rate /
//! threads`) as the HTTP/1.1 client's loop does ([`super::pace`]): the
//! driver task waits on the thread's timerfd (through tokio's reactor)
//! until a lead (a tenth of the wait, 50–500 µs: [`super::pace`]) before each intended time, then yields (the
//! runtime polls its sockets without blocking) until it is due; no other
//! thread is on the send path. Each arrival becomes a stream on the next live connection
//! (round robin): it waits for a free stream slot (the server's
//! `max_concurrent_streams`) — that wait is the h2 counterpart of the
//! HTTP/1.1 client's backlog — then its request is sent (the *send* time),
//! and its latency counts from the intended time as for HTTP/1.1
//! (coordinated-omission correction). Every response is checked: status
//! 200, `content-length` when present, and every body byte; a wrong one
//! is a failed request. A connection that fails ends with a reason (the
//! run's notes), its in-flight streams fail, and later arrivals use the
//! other connections or fail at once when none is left. A stream still
//! waiting for a slot when the drain ends was never sent, and is counted
//! so (`scheduled = sent + never_sent`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2::client::SendRequest;
use hyper::{Request as HttpRequest, StatusCode};
use tokio::io::unix::AsyncFd;
use tokio::net::TcpStream;
use tokio::task::LocalSet;

use super::pace::Pacer;
use super::proto::{body, Meta, FLAG_HELLO, FLAG_MEASURED, FLAG_PANIC, META_HEADER};
use super::{run_client_threads, ClientRun, ClientSpec, Pending, StartGate, ThreadResult, CONNECT_TIMEOUT};
use crate::affinity::pin_current;
use crate::cpu_time::CpuMeter;
use crate::loadgen::{drain_budget, schedule, Window};
use crate::recorders::nanos;
use crate::Error;

/// How often the drain checks whether every stream finished.
const DRAIN_TICK: Duration = Duration::from_millis(1);

/// What the h2 client asks for and expects.
pub(crate) struct H2Target {
    uri: String,
    expected: Vec<u8>,
}

impl H2Target {
    /// `GET http://{authority}/`, answered by `200` with
    /// [`body`]`(body_bytes)`.
    pub(crate) fn new(body_bytes: usize, authority: String) -> H2Target {
        H2Target { uri: format!("http://{authority}/"), expected: body(body_bytes) }
    }

    fn request(&self, meta: Meta) -> HttpRequest<()> {
        HttpRequest::get(self.uri.as_str())
            .header(META_HEADER, meta.encode())
            .body(())
            .expect("a GET of a valid URI with an ASCII header is a valid request")
    }
}

/// Runs the h2 client threads (see the module doc); as
/// [`super::run_clients`] otherwise.
pub(crate) fn run_h2_clients<C: Fn() + Sync, T>(
    spec: &ClientSpec,
    target: &H2Target,
    base: Instant,
    stall: &C,
    at_measure_start: impl FnOnce() -> T,
    meter: &CpuMeter,
) -> Result<ClientRun<T>, Error> {
    run_client_threads(spec, at_measure_start, |index, gate| {
        // The client's CPU is not the runtime's.
        let _guest = meter.guest();
        h2_thread(spec, target, base, gate, index, stall)
    })
}

/// One connection: its stream opener and whether it is still usable.
#[derive(Clone)]
struct H2Conn {
    send: SendRequest<Bytes>,
    dead: Rc<Cell<bool>>,
    /// Streams in flight on it now.
    streams: Rc<Cell<usize>>,
    /// Its hello was answered: from then on, its end is a failure of its own.
    up: Rc<Cell<bool>>,
}

/// What the thread's tasks share (one thread: no locks).
struct Shared {
    r: RefCell<ThreadResult>,
    /// Streams started and not yet finished.
    inflight: Cell<usize>,
    /// Of those, the measured ones still waiting for a stream slot (not
    /// sent): at the end of the drain they were never sent.
    waiting: RefCell<Vec<Instant>>,
    /// The run is over: connections closing now are not failures.
    over: Cell<bool>,
}

fn h2_thread(
    spec: &ClientSpec,
    target: &H2Target,
    base: Instant,
    gate: &StartGate,
    index: usize,
    stall: &(impl Fn() + Sync),
) -> ThreadResult {
    pin_current(&spec.load.cores, index);
    let shared = Rc::new(Shared {
        r: RefCell::new(ThreadResult::new(spec.conns_of(index))),
        inflight: Cell::new(0),
        waiting: RefCell::new(Vec::new()),
        over: Cell::new(false),
    });
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            shared.r.borrow_mut().first_error = Some(format!("creating the h2 client's runtime: {e}"));
            gate.arrive(0);
            return unwrap_shared(shared);
        }
    };
    let local = LocalSet::new();
    let conns = local.block_on(&rt, connect_all(spec, target, &shared));
    let Some(w) = gate.arrive(conns.len()) else { return finish(local, shared) };
    let driver = Driver { spec, target, base, w, shared: Rc::clone(&shared), conns, next: 0 };
    local.block_on(&rt, driver.run(index, stall));
    let mut r = shared.r.borrow_mut();
    for t in shared.waiting.borrow_mut().drain(..) {
        r.gen.never_sent(&w, t);
    }
    drop(r);
    finish(local, shared)
}

/// Ends the thread's tasks (streams still in flight were counted
/// unfinished) and returns its result.
fn finish(local: LocalSet, shared: Rc<Shared>) -> ThreadResult {
    shared.over.set(true);
    drop(local);
    unwrap_shared(shared)
}

fn unwrap_shared(shared: Rc<Shared>) -> ThreadResult {
    match Rc::try_unwrap(shared) {
        Ok(s) => s.r.into_inner(),
        Err(_) => unreachable!("every task holding the shared state was dropped with the LocalSet"),
    }
}

/// Opens the thread's connections (at most `MAX_PENDING_CONNECTS` at a
/// time), each proven by one unrecorded hello stream; returns the live
/// ones.
async fn connect_all(spec: &ClientSpec, target: &H2Target, shared: &Rc<Shared>) -> Vec<H2Conn> {
    let wanted = shared.r.borrow().conns;
    let mut conns = Vec::with_capacity(wanted);
    for batch_start in (0..wanted).step_by(super::MAX_PENDING_CONNECTS) {
        let batch = (wanted - batch_start).min(super::MAX_PENDING_CONNECTS);
        let mut handles = Vec::with_capacity(batch);
        for _ in 0..batch {
            let (addr, shared) = (spec.addr, Rc::clone(shared));
            let hello = target.request(Meta { id: u64::MAX, seed: 0, flags: FLAG_HELLO, intended_ns: 0 });
            let expected = target.expected.clone();
            handles.push(tokio::task::spawn_local(async move {
                let setup = async {
                    let conn = open(addr, &shared).await?;
                    let not_h2 = |e: String| {
                        format!("no HTTP/2 answer from {addr} to the hello ({e}): not serving proto=h2, or the connection failed")
                    };
                    let ready = conn.send.clone().ready().await;
                    let mut send = ready.map_err(|e| not_h2(format!("{e}{}", reset_hint(&e))))?;
                    exchange(&mut send, hello, &expected).await.map_err(not_h2)?;
                    conn.up.set(true);
                    Ok::<_, String>(conn)
                };
                match tokio::time::timeout(CONNECT_TIMEOUT, setup).await {
                    Ok(r) => r,
                    Err(_) => Err(format!("no HTTP/2 hello answer from {addr} within {CONNECT_TIMEOUT:?}")),
                }
            }));
        }
        for h in handles {
            match h.await {
                Ok(Ok(c)) => conns.push(c),
                Ok(Err(why)) => shared.r.borrow_mut().conn_ended(why),
                Err(e) => shared.r.borrow_mut().conn_ended(format!("connection task: {e}")),
            }
        }
    }
    conns
}

/// Connects, shakes hands and starts the connection's driver task.
async fn open(addr: std::net::SocketAddr, shared: &Rc<Shared>) -> Result<H2Conn, String> {
    let tcp = TcpStream::connect(addr).await.map_err(|e| format!("connecting to {addr}: {e}"))?;
    tcp.set_nodelay(true).map_err(|e| format!("TCP_NODELAY on {addr}: {e}"))?;
    let (send, connection) = h2::client::handshake(tcp)
        .await
        .map_err(|e| format!("{addr} does not speak HTTP/2 (handshake: {e}); serve with --param proto=h2"))?;
    let (dead, up) = (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
    let (flag, proven, shared) = (Rc::clone(&dead), Rc::clone(&up), Rc::clone(shared));
    tokio::task::spawn_local(async move {
        let end = connection.await;
        flag.set(true);
        // Before its hello was answered, the hello's own error says why.
        if proven.get() && !shared.over.get() {
            let why = match end {
                Ok(()) => format!("{addr} closed the HTTP/2 connection"),
                Err(e) => format!("HTTP/2 connection to {addr}: {e}"),
            };
            shared.r.borrow_mut().conn_ended(why);
        }
    });
    Ok(H2Conn { send, dead, up, streams: Rc::new(Cell::new(0)) })
}

/// What else a reset connection may mean: a server whose listen queue
/// overflowed resets SYN-cookie connections (see `rt::listen`).
fn reset_hint(e: &h2::Error) -> &'static str {
    if e.get_io().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionReset) {
        "; a server whose listen queue overflows resets connections too: see its `listen_overflows`"
    } else {
        ""
    }
}

/// Sends `req` on `send` and checks the answer against `expected`.
async fn exchange(send: &mut SendRequest<Bytes>, req: HttpRequest<()>, expected: &[u8]) -> Result<(), String> {
    let (response, _) = send.send_request(req, true).map_err(|e| format!("sending: {e}"))?;
    let response = response.await.map_err(|e| format!("response: {e}{}", reset_hint(&e)))?;
    if response.status() != StatusCode::OK {
        return Err(format!("status {}", response.status().as_u16()));
    }
    if let Some(len) = response.headers().get(hyper::header::CONTENT_LENGTH) {
        let len = len.to_str().ok().and_then(|l| l.parse::<usize>().ok());
        if len != Some(expected.len()) {
            return Err(format!("content-length {len:?}, expected {}", expected.len()));
        }
    }
    let mut body = response.into_body();
    let mut got = 0;
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(|e| format!("body: {e}"))?;
        let n = chunk.len();
        if expected.get(got..got + n) != Some(&chunk[..]) {
            return Err(format!("body bytes {got}..{} differ from the expected body", got + n));
        }
        got += n;
        // Flow control: give the window back, or the server stalls.
        let _ = body.flow_control().release_capacity(n);
    }
    if got != expected.len() {
        return Err(format!("body of {got} bytes, expected {}", expected.len()));
    }
    Ok(())
}

/// Steps 3 and 4 on the thread's runtime: each arrival a stream, then the
/// drain.
struct Driver<'a> {
    spec: &'a ClientSpec,
    target: &'a H2Target,
    base: Instant,
    w: Window,
    shared: Rc<Shared>,
    conns: Vec<H2Conn>,
    /// Round-robin position.
    next: usize,
}

impl Driver<'_> {
    /// Paces and dispatches thread `index`'s arrivals, then drains.
    async fn run(mut self, index: usize, stall: &(impl Fn() + Sync)) {
        let hard_deadline = self.w.send_until + drain_budget(&self.spec.load);
        match Pacer::new().and_then(register) {
            Ok(mut pacer) => self.pace(&mut pacer, index, stall).await,
            Err(e) => {
                let mut r = self.shared.r.borrow_mut();
                r.first_error.get_or_insert(format!("creating the h2 client's timer: {e}"));
                let w = self.w;
                r.gen.skip_rest(&mut schedule(&self.spec.schedule_spec(), index), &w);
            }
        }
        while self.shared.inflight.get() > 0 && Instant::now() < hard_deadline {
            tokio::time::sleep(DRAIN_TICK).await;
        }
    }

    async fn pace(&mut self, pacer: &mut AsyncFd<Pacer>, index: usize, stall: &(impl Fn() + Sync)) {
        let w = self.w;
        let mut arrivals = schedule(&self.spec.schedule_spec(), index);
        let (mut id, step) = (index as u64, self.spec.threads as u64);
        let mut stall_pending = index == 0 && !self.spec.load.stall.is_zero();
        loop {
            let intended = arrivals.next_at(w.start);
            if intended >= w.end {
                return;
            }
            self.shared.r.borrow_mut().gen.schedule(&w, intended);
            if wait(pacer, intended).await >= w.send_until {
                let mut r = self.shared.r.borrow_mut();
                r.gen.never_sent(&w, intended);
                r.gen.skip_rest(&mut arrivals, &w);
                return;
            }
            if stall_pending && intended >= w.midpoint {
                stall_pending = false;
                stall();
            }
            self.dispatch(Pending { id, intended });
            id += step;
        }
    }

    /// The next live connection, round robin.
    fn pick(&mut self) -> Option<H2Conn> {
        for _ in 0..self.conns.len() {
            let c = &self.conns[self.next % self.conns.len()];
            self.next = self.next.wrapping_add(1);
            if !c.dead.get() {
                return Some(c.clone());
            }
        }
        None
    }

    fn dispatch(&mut self, p: Pending) {
        let measured = p.intended >= self.w.measure_from;
        let Some(conn) = self.pick() else {
            // No live connection left: the request fails at once.
            if measured {
                let mut r = self.shared.r.borrow_mut();
                r.gen.sent += 1;
                r.histos.failed += 1;
            }
            return;
        };
        let load = &self.spec.load;
        let must_panic = load.must_panic(p.id);
        let mut flags = if measured { FLAG_MEASURED } else { 0 };
        if must_panic {
            flags |= FLAG_PANIC;
        }
        let meta = Meta {
            id: p.id,
            seed: load.request_seed(p.id),
            flags,
            intended_ns: nanos(p.intended.saturating_duration_since(self.base)),
        };
        let req = self.target.request(meta);
        let expected = self.target.expected.clone();
        let (shared, w) = (Rc::clone(&self.shared), self.w);
        shared.inflight.set(shared.inflight.get() + 1);
        if measured {
            shared.waiting.borrow_mut().push(p.intended);
        }
        tokio::task::spawn_local(async move {
            // Waiting for a free stream slot is the h2 backlog: not sent yet.
            let ready = conn.send.ready().await;
            let sent = Instant::now();
            if measured {
                let mut waiting = shared.waiting.borrow_mut();
                if let Some(i) = waiting.iter().position(|&t| t == p.intended) {
                    waiting.swap_remove(i);
                }
            }
            {
                let mut r = shared.r.borrow_mut();
                r.gen.record_send(&w, p.intended, sent);
                conn.streams.set(conn.streams.get() + 1);
                r.max_streams = r.max_streams.max(conn.streams.get());
            }
            let ok = match ready {
                Ok(mut send) => exchange(&mut send, req, &expected).await.is_ok(),
                Err(_) => false,
            };
            conn.streams.set(conn.streams.get() - 1);
            if measured {
                shared.r.borrow_mut().histos.record_answer(w.end, p.intended, sent, Instant::now(), ok);
            }
            shared.inflight.set(shared.inflight.get() - 1);
        });
    }
}

/// The pacer's timerfd in this thread's tokio reactor.
// Reason: `AsyncFd::register`, the replacement, is `unsafe` (this crate
// forbids unsafe code); the I/O-safety hole `new` is deprecated for (the fd
// closed while registered) cannot open here: the `AsyncFd` owns the pacer,
// which owns the fd, and deregisters it before dropping it.
#[allow(deprecated)]
fn register(pacer: Pacer) -> std::io::Result<AsyncFd<Pacer>> {
    AsyncFd::new(pacer)
}

/// Waits on the thread's timer until `t` (polling without blocking for the
/// lead, see [`Pacer`]); returns the time it got there.
async fn wait(pacer: &mut AsyncFd<Pacer>, t: Instant) -> Instant {
    /// Longest wait on the timer alone: the reactor is polled meanwhile.
    const TICK: Duration = Duration::from_millis(5);
    loop {
        let now = Instant::now();
        if now >= t {
            return now;
        }
        match pacer.get_mut().timeout(Some(t), now, TICK) {
            Ok(d) if d.is_zero() => tokio::task::yield_now().await,
            Ok(_) => match pacer.readable_mut().await {
                Ok(mut ready) => {
                    ready.get_inner_mut().fired();
                    ready.clear_ready();
                }
                Err(_) => tokio::task::yield_now().await,
            },
            // The timer cannot be armed: yield until due (late sends show
            // in the lag).
            Err(_) => tokio::task::yield_now().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written h2 server (the `h2` crate's server half) answering
    /// every request with `status`, `body` and optionally a
    /// `content-length`.
    async fn answer(listener: tokio::net::TcpListener, status: u16, body: &'static [u8], length: Option<&'static str>) {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut conn = h2::server::handshake(tcp).await.unwrap();
        while let Some(Ok((_req, mut respond))) = conn.accept().await {
            let mut head = hyper::Response::builder().status(status);
            if let Some(l) = length {
                head = head.header(hyper::header::CONTENT_LENGTH, l);
            }
            let mut stream = respond.send_response(head.body(()).unwrap(), body.is_empty()).unwrap();
            if !body.is_empty() {
                stream.send_data(Bytes::from_static(body), true).unwrap();
            }
        }
    }

    /// What the client makes of that answer when it expects `abc`.
    fn check(status: u16, body: &'static [u8], length: Option<&'static str>) -> Result<(), String> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(answer(listener, status, body, length));
            let (send, conn) = h2::client::handshake(TcpStream::connect(addr).await.unwrap()).await.unwrap();
            tokio::spawn(async move { drop(conn.await) });
            let target = H2Target::new(3, addr.to_string());
            let mut send = send.ready().await.unwrap();
            exchange(&mut send, target.request(Meta::default()), &target.expected).await
        })
    }

    #[test]
    fn every_answer_is_checked() {
        assert_eq!(check(200, b"abc", None), Ok(()));
        assert_eq!(check(200, b"abc", Some("3")), Ok(()));
        let err = |status, body, length| check(status, body, length).unwrap_err();
        assert_eq!(err(500, b"abc", None), "status 500");
        assert_eq!(err(200, b"abd", None), "body bytes 0..3 differ from the expected body");
        assert_eq!(err(200, b"abcd", None), "body bytes 0..4 differ from the expected body");
        assert_eq!(err(200, b"ab", None), "body of 2 bytes, expected 3");
        assert_eq!(err(200, b"abc", Some("4")), "content-length Some(4), expected 3");
    }
}
