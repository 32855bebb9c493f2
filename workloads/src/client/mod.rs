//! The open-loop client of the TCP workloads (`tcp-rpc`, `mixed`, `http`)
//! and of `wsbench load`: many non-blocking connections per thread on mio,
//! independent of every runtime under test (it is the load generator).
//!
//! Each client thread owns `connections / threads` connections and an
//! arrival schedule at `rate / threads`. A connection carries up to
//! `pipeline` requests at a time (1 by default: HTTP/1.1 without
//! pipelining); an arrival takes a connection with room, or waits in the
//! thread's backlog until one has room — and its latency is still
//! measured from its *intended* time (wrk2's coordinated-omission
//! correction; the uncorrected histogram measures from the actual send).
//!
//! Pipelining (`pipeline` > 1): the arrivals released in one pass of the
//! loop fill one connection's room before the next one's, are encoded
//! behind each other and written with one write per connection at the end
//! of the pass; one read takes every response that is there, parsed in
//! order against the connection's FIFO of requests in flight (a tcp-rpc
//! response names its request: one out of order ends the connection). A
//! request may so wait for the rest of its batch: that wait is in its
//! latency, which runs from its intended time.
//!
//! Steps of a thread:
//! 1. connect every connection (non-blocking) and complete one unrecorded
//!    hello request on each, so that the server has accepted them and is
//!    known to speak the protocol; a connection that fails is dead;
//! 2. wait at the start gate until every thread got there; the owner
//!    fixes the window (none when no connection anywhere is up: an error);
//! 3. run the loop: release due arrivals into the backlog, hand the
//!    backlog to connections with room and write them, wait on epoll. The thread paces itself
//!    ([`pace`]): a timerfd in its own epoll wakes it shortly before each
//!    arrival and it polls without blocking for the last tenth of the wait
//!    ([`pace::MIN_LEAD`]..[`pace::MAX_LEAD`]), so a request is sent within microseconds of its intended time, with
//!    no other thread on the send path (epoll's own timeout has
//!    millisecond resolution). While no connection has room the timer is
//!    not armed: the loop waits for answers alone. While requests are in
//!    flight it polls without blocking for up to [`ANSWER_SPIN`] before
//!    it sleeps;
//! 4. after the window, drain in-flight requests for the drain budget;
//!    what is still in flight then is unfinished (a failed request).
//!
//! Every measured arrival is counted once: sent (then answered, failed or
//! unfinished) or never sent (still waiting at `send_until`, for want of a
//! connection or of time): `scheduled = sent + never_sent` in every run.
//!
//! Faults are counted, never hung on: a refused connection, a peer that
//! closes mid-run (its in-flight requests fail; later arrivals use the
//! other connections, or fail at once when none is left) and a peer that
//! does not speak the protocol all end a connection with a reason, and the
//! run's notes say how many connections ended and why.

mod backlog;
mod conn;
pub(crate) mod h2;
pub(crate) mod pace;
pub(crate) mod proto;
mod reference;

pub use self::reference::{latency_floor, Floor};

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use self::backlog::Backlog;
pub(crate) use self::backlog::Pending;
use self::conn::{Conn, ReadOutcome, State};
use self::pace::Pacer;
use self::proto::Protocol;
use crate::affinity::pin_current;
use crate::api::{extra, CounterValues};
use crate::cpu_time::CpuMeter;
use crate::loadgen::{drain_budget, schedule, wait_until, GenTotals, LoadSpec, OpenReport, Request, Window};
use crate::recorders::{Collector, Histos};
use crate::Error;

/// Longest epoll wait: bounds how late the loop notices the end of the
/// window or the drain deadline.
const POLL_TICK: Duration = Duration::from_millis(5);
/// While requests are in flight, nothing else is due and answers have
/// been coming faster than one per this long (a moving average of the
/// gap between answers), the loop polls epoll without blocking for up to
/// this long before it sleeps. Near capacity that keeps the thread awake
/// between answers, so that the server's send does not pay for waking it
/// (on the 2-vCPU VM one client thread went from 0.94 of wrk's
/// throughput to above it); at low rates, where an answer is rarely that
/// close, it never spins and costs nothing.
const ANSWER_SPIN: Duration = Duration::from_micros(30);
/// Weight of the newest gap in the moving average of the answer gap.
const GAP_WEIGHT: f64 = 0.125;
/// Connecting and the hello round trip must finish within this.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Connects and hellos under way at once, per client thread.
const MAX_PENDING_CONNECTS: usize = 64;
/// One read syscall takes at most this many bytes.
const READ_CHUNK: usize = 64 * 1024;
/// Readiness events handled per epoll wait.
const EVENTS: usize = 1024;
const TIMER: Token = Token(usize::MAX);

/// How to load one server.
#[derive(Debug, Clone)]
pub(crate) struct ClientSpec {
    pub addr: SocketAddr,
    pub connections: usize,
    pub threads: usize,
    /// Requests in flight per connection, at most (1: no pipelining).
    pub pipeline: usize,
    /// Rate, arrivals, seed, window; `load.threads` is ignored.
    pub load: LoadSpec,
}

impl ClientSpec {
    /// The schedule settings of client thread `index`: `rate / threads`.
    fn schedule_spec(&self) -> LoadSpec {
        LoadSpec { threads: self.threads, ..self.load.clone() }
    }

    /// Connections of thread `index` (the first ones get the remainder).
    fn conns_of(&self, index: usize) -> usize {
        self.connections / self.threads + usize::from(index < self.connections % self.threads)
    }
}

/// How many connections over how many client threads, with how many
/// requests in flight on each (workload params `connections`,
/// `client-threads`, `pipeline`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientShape {
    pub connections: usize,
    pub threads: usize,
    pub pipeline: usize,
}

impl ClientShape {
    /// The client spec of a run against `addr`.
    pub(crate) fn spec(&self, addr: SocketAddr, load: &LoadSpec) -> ClientSpec {
        ClientSpec {
            addr,
            connections: self.connections,
            threads: self.threads,
            pipeline: self.pipeline,
            load: load.clone(),
        }
    }
}

/// One report from the client's threads and the server's recordings
/// (queue wait, service time, deadline misses).
pub(crate) fn client_report<T>(
    run: ClientRun<T>,
    server: &Collector,
    spec: &ClientSpec,
    counters: CounterValues,
) -> OpenReport {
    let mut histos = Histos::new();
    let mut gen = GenTotals::new();
    let mut notes = Vec::new();
    let (mut ended, mut first, mut max_streams) = (0, None, 0);
    for t in &run.threads {
        histos.merge(&t.histos);
        gen.merge(&t.gen);
        ended += t.ended;
        max_streams = max_streams.max(t.max_streams);
        first = first.or(t.first_error.as_deref());
    }
    if let Some(first) = first {
        notes.push(format!("{ended} of {} client connections ended early; first: {first}", spec.connections));
    }
    // The server records a request before it answers it, and every client
    // thread has read its last answer: nothing is still being recorded.
    let server_side = server.merged();
    histos.queue_wait = server_side.queue_wait;
    histos.service = server_side.service;
    histos.deadline_misses = server_side.deadline_misses;
    // Counted apart from failed requests: a connection that never came up
    // (or ended early) fails at most its requests in flight, but takes its
    // share of the load away.
    let mut extras = vec![
        (extra::CONNECTIONS.to_string(), spec.connections as f64),
        (extra::FAILED_CONNECTIONS.to_string(), ended as f64),
        (extra::CLIENT_THREADS.to_string(), spec.threads as f64),
    ];
    if max_streams > 0 {
        extras.push((extra::MAX_STREAMS_PER_CONNECTION.to_string(), max_streams as f64));
    }
    OpenReport { histos, gen, window: run.window, counters, notes, extras, cpu: None }
}

/// What one client thread measured.
pub(crate) struct ThreadResult {
    pub histos: Histos,
    pub gen: GenTotals,
    /// Connections this thread opened.
    pub conns: usize,
    /// Connections that ended before the run did, and the first reason.
    pub ended: usize,
    pub first_error: Option<String>,
    /// HTTP/2: the most streams one connection had in flight at once;
    /// with `pipeline` > 1, the most requests (0 for one request per
    /// connection).
    pub max_streams: usize,
}

impl ThreadResult {
    fn new(conns: usize) -> ThreadResult {
        ThreadResult {
            histos: Histos::new(),
            gen: GenTotals::new(),
            conns,
            ended: 0,
            first_error: None,
            max_streams: 0,
        }
    }

    fn conn_ended(&mut self, why: String) {
        self.ended += 1;
        self.first_error.get_or_insert(why);
    }
}

/// Every thread's result, the window and what `at_measure_start` returned.
pub(crate) struct ClientRun<T> {
    pub threads: Vec<ThreadResult>,
    pub window: Window,
    pub snapshot: T,
}

/// Start-up handshake between the client threads and the thread that owns
/// the run: each thread reports how many of its connections are up; the
/// owner then fixes the window (or `None` = abort) and publishes it.
struct StartGate {
    state: Mutex<(usize, usize, Option<Option<Window>>)>,
    changed: Condvar,
}

impl StartGate {
    fn new() -> StartGate {
        StartGate { state: Mutex::new((0, 0, None)), changed: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, (usize, usize, Option<Option<Window>>)> {
        // No code panics while holding this lock.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A thread is ready with `up` live connections; waits for the window.
    fn arrive(&self, up: usize) -> Option<Window> {
        let mut st = self.lock();
        st.0 += 1;
        st.1 += up;
        self.changed.notify_all();
        loop {
            if let Some(w) = st.2 {
                return w;
            }
            st = self.changed.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Waits until `n` threads arrived; returns the live connections.
    fn wait_for(&self, n: usize) -> usize {
        let mut st = self.lock();
        while st.0 < n {
            st = self.changed.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        st.1
    }

    fn publish(&self, w: Option<Window>) {
        self.lock().2 = Some(w);
        self.changed.notify_all();
    }
}

/// Runs the client threads against `spec.addr`; calls `at_measure_start`
/// on this thread when measuring begins. Fails when no connection could be
/// made at all (refused, unreachable, not the protocol).
pub(crate) fn run_clients<P: Protocol, C: Fn() + Sync, T>(
    spec: &ClientSpec,
    proto: &P,
    base: Instant,
    stall: &C,
    at_measure_start: impl FnOnce() -> T,
    meter: &CpuMeter,
) -> Result<ClientRun<T>, Error> {
    run_client_threads(spec, at_measure_start, |index, gate| {
        // The client's CPU is not the runtime's.
        let _guest = meter.guest();
        client_thread(spec, proto, base, gate, index, stall)
    })
}

/// Starts `spec.threads` threads running `thread(index, gate)`, fixes the
/// window once each arrived at the gate (none when no connection anywhere
/// is up: an error naming the first reason), and collects their results.
fn run_client_threads<T>(
    spec: &ClientSpec,
    at_measure_start: impl FnOnce() -> T,
    thread: impl Fn(usize, &StartGate) -> ThreadResult + Sync,
) -> Result<ClientRun<T>, Error> {
    let gate = StartGate::new();
    thread::scope(|s| {
        let mut handles = Vec::with_capacity(spec.threads);
        for index in 0..spec.threads {
            let (gate, thread) = (&gate, &thread);
            let spawned = thread::Builder::new()
                .name(format!("wsbench-client-{index}"))
                .spawn_scoped(s, move || thread(index, gate));
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    gate.publish(None);
                    return Err(Error::io("starting a client thread", e));
                }
            }
        }
        let up = gate.wait_for(spec.threads);
        if up == 0 {
            gate.publish(None);
            let results: Vec<_> = handles.into_iter().map(|h| h.join().expect("a client thread panicked")).collect();
            let why = results.iter().find_map(|r| r.first_error.clone()).unwrap_or_else(|| "no reason".into());
            let n = spec.connections;
            let context = format!("connecting to {} ({n} of {n} client connections failed, none usable)", spec.addr);
            return Err(Error::io(context, io::Error::other(why)));
        }
        let w = Window::new(&spec.load);
        gate.publish(Some(w));
        wait_until(w.measure_from);
        let snapshot = at_measure_start();
        let threads = handles.into_iter().map(|h| h.join().expect("a client thread panicked")).collect();
        Ok(ClientRun { threads, window: w, snapshot })
    })
}

/// One client thread (steps 1–4 of the module doc).
fn client_thread<P: Protocol>(
    spec: &ClientSpec,
    proto: &P,
    base: Instant,
    gate: &StartGate,
    index: usize,
    stall: &(impl Fn() + Sync),
) -> ThreadResult {
    pin_current(&spec.load.cores, index);
    let mut r = ThreadResult::new(spec.conns_of(index));
    let setup = Poll::new().and_then(|poll| {
        let pacer = Pacer::new()?;
        poll.registry().register(&mut SourceFd(&pacer.as_raw_fd()), TIMER, Interest::READABLE)?;
        Ok((poll, pacer))
    });
    let (mut poll, mut pacer) = match setup {
        Ok(pw) => pw,
        Err(e) => {
            r.first_error = Some(format!("creating the client's epoll instance and timer: {e}"));
            gate.arrive(0);
            return r;
        }
    };
    let mut conns = Vec::with_capacity(r.conns);
    handshake(spec, proto, base, &mut poll, &mut conns, &mut r);
    let up = conns.iter().filter(|c| c.state == State::Open).count();
    let Some(w) = gate.arrive(up) else { return r };
    let mut lp = Loop {
        spec,
        proto,
        base,
        w: &w,
        index,
        conns: &mut conns,
        r: &mut r,
        poll: &mut poll,
        answers: 0,
        inflight: 0,
        answered: Vec::new(),
    };
    lp.run(&mut pacer, stall);
    r
}

/// Step 1: connect and say hello on every connection of this thread.
fn handshake<P: Protocol>(
    spec: &ClientSpec,
    proto: &P,
    base: Instant,
    poll: &mut Poll,
    conns: &mut Vec<Conn>,
    r: &mut ThreadResult,
) {
    // Connections are opened a batch at a time, more as hellos complete, so
    // that the server accepts (and its descriptors keep pace) while the
    // client opens.
    let mut opened = 0;
    let mut open_more = |conns: &mut Vec<Conn>, r: &mut ThreadResult, poll: &Poll| {
        let pending = conns.iter().filter(|c| matches!(c.state, State::Connecting | State::Hello)).count();
        let want = (r.conns - opened).min(MAX_PENDING_CONNECTS.saturating_sub(pending));
        for _ in 0..want {
            match Conn::connect(spec.addr, poll.registry(), Token(opened)) {
                Ok(c) => {
                    conns.push(c);
                    opened += 1;
                }
                Err(e) => {
                    // This one and every later one: the same error would
                    // repeat (out of descriptors, no route).
                    r.conn_ended(format!("connecting to {}: {e}", spec.addr));
                    r.ended += r.conns - opened - 1;
                    opened = r.conns;
                    return;
                }
            }
        }
    };
    open_more(conns, r, poll);
    let deadline = Instant::now() + CONNECT_TIMEOUT;
    let mut events = Events::with_capacity(EVENTS);
    let mut scratch = vec![0; READ_CHUNK];
    let mut answered = Vec::new();
    let hello = Request { id: u64::MAX, intended: base, sent: base, seed: 0, measured: false, must_panic: false };
    let pending = |conns: &[Conn]| conns.iter().any(|c| matches!(c.state, State::Connecting | State::Hello));
    while pending(conns) {
        let now = Instant::now();
        if now >= deadline {
            for c in conns.iter_mut().filter(|c| matches!(c.state, State::Connecting | State::Hello)) {
                c.kill(poll.registry());
                r.conn_ended(format!("no hello answer from {} within {CONNECT_TIMEOUT:?}", spec.addr));
            }
            break;
        }
        if let Err(e) = poll.poll(&mut events, Some((deadline - now).min(POLL_TICK))) {
            if e.kind() != io::ErrorKind::Interrupted {
                r.first_error.get_or_insert(format!("epoll: {e}"));
            }
            continue;
        }
        for ev in events.iter() {
            let Some(c) = conns.get_mut(ev.token().0) else { continue };
            let mut step = match c.state {
                State::Connecting => match c.finish_connect() {
                    Ok(true) => {
                        c.queue(proto, hello, base, true);
                        c.flush().map_err(|e| format!("sending hello: {e}"))
                    }
                    Ok(false) => Ok(()),
                    Err(e) => Err(format!("connecting to {}: {e}", spec.addr)),
                },
                _ => Ok(()),
            };
            // Edge-triggered: bytes that arrived with the connect's event
            // raise no new one, so a fresh Hello reads at once.
            step = step.and_then(|()| match c.state {
                State::Hello => {
                    answered.clear();
                    match c.read(proto, &mut scratch, true, &mut answered) {
                        ReadOutcome::Closed(why) => Err(why),
                        ReadOutcome::Open => match answered.first() {
                            None => c.flush().map_err(|e| format!("sending hello: {e}")),
                            Some((_, true)) => {
                                c.state = State::Open;
                                Ok(())
                            }
                            Some((_, false)) => Err(format!("bad answer to the hello request from {}", spec.addr)),
                        },
                    }
                }
                _ => Ok(()),
            });
            if let Err(why) = step {
                c.kill(poll.registry());
                r.conn_ended(why);
            }
        }
        open_more(conns, r, poll);
    }
}

/// The moving average of the gap between answers, which decides whether
/// the loop spins for the next one ([`ANSWER_SPIN`]).
#[derive(Debug, Default)]
struct AnswerGap {
    /// When the last answers were seen, and how many there were by then.
    last: Option<(Instant, u64)>,
    /// The average gap in ns; `None` until two readings.
    avg_ns: Option<f64>,
}

impl AnswerGap {
    /// Notes the answer count after a poll's events were handled.
    fn saw(&mut self, answers: u64) {
        if self.last.is_some_and(|(_, n)| n == answers) {
            return;
        }
        let now = Instant::now();
        if let Some((at, n)) = self.last {
            let gap = now.saturating_duration_since(at).as_nanos() as f64 / (answers - n) as f64;
            self.avg_ns = Some(self.avg_ns.map_or(gap, |a| a + GAP_WEIGHT * (gap - a)));
        }
        self.last = Some((now, answers));
    }

    /// Whether answers have been coming closer together than ANSWER_SPIN.
    fn close(&self) -> bool {
        self.avg_ns.is_some_and(|a| a < ANSWER_SPIN.as_nanos() as f64)
    }
}

/// Step 3 and 4: the thread's event loop.
struct Loop<'a, P> {
    spec: &'a ClientSpec,
    proto: &'a P,
    base: Instant,
    w: &'a Window,
    index: usize,
    conns: &'a mut Vec<Conn>,
    r: &'a mut ThreadResult,
    poll: &'a mut Poll,
    /// Answers read so far (for the answer gap, see [`ANSWER_SPIN`]).
    answers: u64,
    /// Requests in flight on every connection together.
    inflight: usize,
    /// The answers of the latest read (reused).
    answered: Vec<(Request, bool)>,
}

impl<P: Protocol> Loop<'_, P> {
    fn run(&mut self, pacer: &mut Pacer, stall: &(impl Fn() + Sync)) {
        let w = self.w;
        let mut arrivals = schedule(&self.spec.schedule_spec(), self.index);
        let mut backlog = Backlog::new(arrivals.clone(), w.start, self.index as u64, self.spec.threads as u64);
        // The next arrival intended before `end`, counted as scheduled.
        let mut take = |gen: &mut GenTotals| {
            let t = arrivals.next_at(w.start);
            (t < w.end).then(|| {
                gen.schedule(w, t);
                t
            })
        };
        let mut next = take(&mut self.r.gen);
        let mut stall_pending = self.index == 0 && !self.spec.load.stall.is_zero();
        // Connections with room for another request (all of them, empty,
        // at the start).
        let mut room: Vec<usize> = (0..self.conns.len()).filter(|&i| self.conns[i].state == State::Open).collect();
        let mut live = room.len();
        let hard_deadline = w.send_until + drain_budget(&self.spec.load);
        let mut events = Events::with_capacity(EVENTS);
        let mut scratch = vec![0; READ_CHUNK];
        // End of the current non-blocking wait for answers, and the answer
        // gap's moving average in ns (ANSWER_SPIN).
        let mut spin_until: Option<Instant> = None;
        let mut gap = AnswerGap::default();
        loop {
            let now = Instant::now();
            if now >= w.send_until && (next.is_some() || !backlog.is_empty()) {
                // Too far behind: what is still waiting or scheduled will
                // never be sent (counted, not dropped).
                while let Some(p) = backlog.pop() {
                    self.r.gen.never_sent(w, p.intended);
                }
                while let Some(t) = next {
                    self.r.gen.never_sent(w, t);
                    next = take(&mut self.r.gen);
                }
            }
            while let Some(t) = next.filter(|&t| t <= now) {
                if stall_pending && t >= w.midpoint {
                    stall_pending = false;
                    stall();
                }
                backlog.release();
                next = take(&mut self.r.gen);
            }
            self.dispatch(&mut backlog, &mut room, &mut live);
            // In-flight requests at the hard deadline stay unanswered:
            // `into_output` counts them as unfinished (failed). Nothing can
            // be waiting then (`send_until` came first).
            if (next.is_none() && backlog.is_empty() && self.inflight == 0) || now >= hard_deadline {
                return;
            }
            // An arrival with no connection to take it waits in the
            // backlog whenever it is released (its latency counts from its
            // intended time either way), so the timer is armed only while a
            // connection has room: a saturated loop blocks for answers
            // alone and pays no timer syscall per request.
            let pace = next.filter(|_| !room.is_empty());
            let timeout = match pacer.timeout(pace, now, POLL_TICK) {
                Ok(t) => t,
                Err(e) => {
                    // Paced by epoll's millisecond timeout instead: late
                    // sends show in the lag, never hidden.
                    self.r.first_error.get_or_insert(format!("arming the client's timer: {e}"));
                    pace.map_or(POLL_TICK, |t| t.saturating_duration_since(now).min(POLL_TICK))
                }
            };
            let timeout = if self.inflight > 0 && !timeout.is_zero() && gap.close() {
                let until = *spin_until.get_or_insert(now + ANSWER_SPIN);
                if now < until {
                    Duration::ZERO
                } else {
                    timeout
                }
            } else {
                timeout
            };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    self.r.first_error.get_or_insert(format!("epoll: {e}"));
                }
                continue;
            }
            if !events.is_empty() || !timeout.is_zero() {
                spin_until = None;
            }
            for ev in events.iter() {
                if ev.token() == TIMER {
                    pacer.fired();
                } else {
                    let dry = ev.is_read_closed() || ev.is_error();
                    self.on_ready(ev.token().0, dry, &mut room, &mut live, &mut scratch);
                }
            }
            gap.saw(self.answers);
        }
    }

    /// Hands waiting requests to connections with room, filling one before
    /// the next, and writes each connection's new requests at once: as
    /// soon as it is full (with `pipeline=1`, at every request), or at the
    /// end for the one left with room. With no live connection left,
    /// requests fail at once.
    fn dispatch(&mut self, backlog: &mut Backlog, room: &mut Vec<usize>, live: &mut usize) {
        // The connection with requests queued and not written yet.
        let mut filling = None;
        while let Some(p) = backlog.front() {
            let measured = p.intended >= self.w.measure_from;
            if *live == 0 {
                backlog.pop();
                if measured {
                    self.r.gen.sent += 1;
                    self.r.histos.failed += 1;
                }
                continue;
            }
            let Some(&i) = room.last() else { break };
            backlog.pop();
            let must_panic = self.spec.load.must_panic(p.id);
            let now = Instant::now();
            let req = Request {
                id: p.id,
                intended: p.intended,
                sent: now,
                seed: self.spec.load.request_seed(p.id),
                measured,
                must_panic,
            };
            self.r.gen.record_send(self.w, p.intended, now);
            let c = &mut self.conns[i];
            c.queue(self.proto, req, self.base, false);
            self.inflight += 1;
            filling = Some(i);
            if self.spec.pipeline > 1 {
                self.r.max_streams = self.r.max_streams.max(c.inflight.len());
            }
            if c.inflight.len() >= self.spec.pipeline {
                room.pop();
                filling = None;
                self.write(i, room, live);
            }
        }
        if let Some(i) = filling {
            self.write(i, room, live);
        }
    }

    /// Writes connection `i`'s queued requests; a failed write ends it.
    fn write(&mut self, i: usize, room: &mut Vec<usize>, live: &mut usize) {
        if let Err(e) = self.conns[i].flush() {
            self.fail(i, format!("sending: {e}"), room, live);
        }
    }

    /// Ends connection `i`; every request it had in flight failed.
    fn fail(&mut self, i: usize, why: String, room: &mut Vec<usize>, live: &mut usize) {
        let c = &mut self.conns[i];
        let now = Instant::now();
        self.inflight -= c.inflight.len();
        for req in c.inflight.drain(..) {
            if req.measured {
                self.r.histos.record_answer(self.w.end, req.intended, req.sent, now, false);
            }
        }
        c.kill(self.poll.registry());
        room.retain(|&j| j != i);
        *live -= 1;
        self.r.conn_ended(why);
    }

    /// Connection `i` is ready: writes what waits for the socket and reads
    /// every answer there is; `dry`: read it to the end (see
    /// [`Conn::read`]). A connection with nothing in flight that becomes
    /// readable was closed (or sent garbage): found out now rather than at
    /// the next send.
    fn on_ready(&mut self, i: usize, dry: bool, room: &mut Vec<usize>, live: &mut usize, scratch: &mut [u8]) {
        let Some(c) = self.conns.get_mut(i) else { return };
        if c.state != State::Open {
            return;
        }
        if c.unwritten() {
            if let Err(e) = c.flush() {
                self.fail(i, format!("sending: {e}"), room, live);
                return;
            }
        }
        let had_room = c.inflight.len() < self.spec.pipeline;
        let dry = dry || c.inflight.is_empty();
        self.answered.clear();
        let outcome = c.read(self.proto, scratch, dry, &mut self.answered);
        let has_room = c.inflight.len() < self.spec.pipeline;
        if !self.answered.is_empty() {
            let now = Instant::now();
            for &(req, ok) in &self.answered {
                if req.measured {
                    self.r.histos.record_answer(self.w.end, req.intended, req.sent, now, ok);
                }
            }
            self.answers += self.answered.len() as u64;
            self.inflight -= self.answered.len();
        }
        match outcome {
            ReadOutcome::Open => {
                if has_room && !had_room {
                    room.push(i);
                }
            }
            ReadOutcome::Closed(why) => self.fail(i, why, room, live),
        }
    }
}

#[cfg(test)]
mod tests;
