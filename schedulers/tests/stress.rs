//! Stress suite: every policy under many producers (outside threads and
//! spawning tasks), the workers stealing from each other, wakes from
//! foreign threads and aborts, with
//! - exactly-once accounting: a flag per task, checked against what its
//!   `JoinHandle` (or its aborted parent) says must have happened;
//! - drop counters: every future and every output dropped exactly once,
//!   also for tasks still pending when the runtime shuts down and for tasks
//!   spawned while (and after) it shuts down;
//! - memory: resident set size sampled between rounds stays within a fixed
//!   bound after warm-up (see [`RSS_GROWTH_LIMIT_KIB`]).
//!
//! Ignored by default. Short form (a few seconds, CI):
//! `cargo test --release -p wsbench-schedulers --test stress -- --ignored`;
//! full form: `scripts/stress.sh`. Environment:
//! - `WSBENCH_STRESS_SECS`: total seconds over all configurations
//!   (default [`DEFAULT_TOTAL_SECS`]);
//! - `WSBENCH_STRESS_ROOTS`: root tasks per round (default
//!   [`DEFAULT_ROOTS`]; each spawns [`CHILDREN`] more);
//! - `WSBENCH_STRESS_WORKERS`: worker counts of the multi-worker policies
//!   (default `2,4,16`; current-thread always has 1);
//! - `WSBENCH_STRESS_RSS_CHECK=0`: skip the RSS bound (for runs under
//!   valgrind, whose shadow memory and freed-block quarantine grow RSS on
//!   their own; memcheck's leak check replaces it there).
//!
//! The tests of different policies share one process, so they take a lock
//! and run one at a time: RSS is process-wide.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use common::build_knobs;
use wsbench_schedulers::task::yield_now;
use wsbench_schedulers::{spawn, Handle, JoinHandle, Runtime, SchedulerKind};

const DEFAULT_TOTAL_SECS: f64 = 5.0;
const DEFAULT_ROOTS: usize = 1_000;
const DEFAULT_WORKERS: [usize; 3] = [2, 4, 16];
/// Outside threads spawning root tasks.
const PRODUCERS: usize = 3;
/// Threads that fire signals (foreign wakes) and abort handles sent to them.
const WAKER_THREADS: usize = 2;
/// Tasks each root spawns from inside the runtime.
const CHILDREN: usize = 3;
const TASKS_PER_ROOT: usize = 1 + CHILDREN;
/// `yield_now` calls of a yielding child.
const YIELDS: usize = 3;
/// Warm-up, whose memory is not checked: at least this many rounds and
/// [`WARMUP_FRACTION`] of the configuration's time. The allocator's arenas
/// (one per thread that allocates, up to 8 per core in glibc), the owned
/// list and the queues reach their working size here; with 16 workers and
/// 4,000 roots that takes about a hundred rounds (measured: RSS rises from
/// 17 to 45 MiB over the first ~100 rounds, then stays within a few MiB
/// for 400 more).
const WARMUP_ROUNDS: usize = 2;
const WARMUP_FRACTION: f64 = 0.25;
/// Rounds after warm-up that run even when the time budget is spent, so
/// the memory check always has something to compare.
const MIN_MEASURED_ROUNDS: usize = 2;
/// Allowed RSS above the highest sample of the warm-up, at any later round.
///
/// Why 32 MiB over the warm-up maximum: a round's peak working set is every
/// task of the round in flight at once, about `roots × 4 tasks × ~0.5 KiB`
/// = 2 MiB at the default 1,000 roots (8 MiB at 4,000), and the warm-up has
/// already seen that peak; 32 MiB leaves room for glibc keeping a few more
/// rounds' worth in other threads' arenas, so allocator noise does not
/// fail the test. A real leak grows with the task count instead: the test
/// prints the smallest per-task leak it would catch (32 MiB / tasks run
/// after warm-up: a few bytes per task for the full form, about 50-100 in
/// the short form), and memcheck (`scripts/valgrind.sh`) catches smaller
/// ones, and one-off leaks, in the short form.
const RSS_GROWTH_LIMIT_KIB: u64 = 32 * 1024;
/// Hang detector for waits, far above any expected time.
const HANG_LIMIT: Duration = Duration::from_secs(120);
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(30);
/// Root tasks still pending (or busy) when the runtime shuts down.
const PENDING_AT_SHUTDOWN: usize = 200;
/// Spawns the late producer makes before shutdown begins, and after it
/// returned (it keeps spawning while the runtime shuts down).
const SPAWNS_BEFORE_SHUTDOWN: usize = 100;
const SPAWNS_AFTER_SHUTDOWN: usize = 100;
/// At most this many spawns before shutdown returns.
const SPAWNS_DURING_SHUTDOWN_CAP: usize = 10_000;

static SERIAL: Mutex<()> = Mutex::new(());

// ---------------------------------------------------------------- settings

struct Settings {
    total_secs: f64,
    roots: usize,
    workers: Vec<usize>,
    rss_check: bool,
}

impl Settings {
    fn from_env() -> Settings {
        let total_secs = env_or("WSBENCH_STRESS_SECS", DEFAULT_TOTAL_SECS);
        let roots = env_or("WSBENCH_STRESS_ROOTS", DEFAULT_ROOTS);
        assert!(roots >= PRODUCERS, "WSBENCH_STRESS_ROOTS={roots}: need at least {PRODUCERS}");
        let workers = match std::env::var("WSBENCH_STRESS_WORKERS") {
            Ok(v) => v
                .split(',')
                .map(|w| w.trim().parse().unwrap_or_else(|e| panic!("WSBENCH_STRESS_WORKERS={v}: {e}")))
                .collect(),
            Err(_) => DEFAULT_WORKERS.to_vec(),
        };
        let rss_check = env_or("WSBENCH_STRESS_RSS_CHECK", 1u8) != 0;
        Settings { total_secs, roots, workers, rss_check }
    }

    fn configs(&self, kind: SchedulerKind) -> Vec<usize> {
        if kind == SchedulerKind::CurrentThread {
            vec![1]
        } else {
            self.workers.clone()
        }
    }

    /// The time budget of one configuration: the total split evenly over
    /// every configuration of every policy (and of [`KNOBBED`]).
    fn budget(&self) -> Duration {
        let multi = SchedulerKind::ALL.len() - 1 + KNOBBED.len();
        let configs = 1 + multi * self.workers.len();
        Duration::from_secs_f64(self.total_secs / configs as f64)
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T
where
    T::Err: std::fmt::Display,
{
    match std::env::var(name) {
        Ok(v) => v.parse().unwrap_or_else(|e| panic!("{name}={v}: {e}")),
        Err(_) => default,
    }
}

// ------------------------------------------------------------ accounting

/// Creation and drop counts of futures and outputs, for one configuration.
#[derive(Default)]
struct Tally {
    futures_created: AtomicUsize,
    futures_dropped: AtomicUsize,
    outputs_created: AtomicUsize,
    outputs_dropped: AtomicUsize,
}

impl Tally {
    fn snapshot(&self) -> [usize; 4] {
        [&self.futures_created, &self.futures_dropped, &self.outputs_created, &self.outputs_dropped]
            .map(|c| c.load(Ordering::SeqCst))
    }

    /// Waits until every future and output created so far is dropped.
    /// Sound as a quiescence test: a live future is counted as created and
    /// not dropped, and only live futures create more.
    fn wait_all_dropped(&self, what: &str) {
        let deadline = Instant::now() + HANG_LIMIT;
        loop {
            let [fc, fd, oc, od] = self.snapshot();
            assert!(fd <= fc && od <= oc, "{what}: dropped more than created: {:?}", self.snapshot());
            if fd == fc && od == oc {
                return;
            }
            assert!(Instant::now() < deadline, "{what}: not all dropped after {HANG_LIMIT:?}: {:?}", self.snapshot());
            thread::yield_now();
        }
    }
}

/// Adds one to a counter when dropped.
struct OnDrop(Arc<Tally>, fn(&Tally) -> &AtomicUsize);

impl Drop for OnDrop {
    fn drop(&mut self) {
        (self.1)(&self.0).fetch_add(1, Ordering::SeqCst);
    }
}

/// A task's output; its drop is counted.
struct Output(#[allow(dead_code)] OnDrop); // reason: held only for its drop

fn output(tally: &Arc<Tally>) -> Output {
    tally.outputs_created.fetch_add(1, Ordering::SeqCst);
    Output(OnDrop(tally.clone(), |t| &t.outputs_dropped))
}

/// Wraps a future so that the runtime's drop of the future object itself
/// is counted (not the end of the async body).
struct Tracked {
    inner: Pin<Box<dyn Future<Output = Output> + Send>>,
    _drop: OnDrop,
}

impl Future for Tracked {
    type Output = Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Output> {
        self.inner.as_mut().poll(cx)
    }
}

fn tracked(tally: &Arc<Tally>, f: impl Future<Output = Output> + Send + 'static) -> Tracked {
    tally.futures_created.fetch_add(1, Ordering::SeqCst);
    Tracked { inner: Box::pin(f), _drop: OnDrop(tally.clone(), |t| &t.futures_dropped) }
}

/// Run counts per task index of one round.
struct Flags(Vec<AtomicU32>);

impl Flags {
    fn new(n: usize) -> Arc<Flags> {
        Arc::new(Flags((0..n).map(|_| AtomicU32::new(0)).collect()))
    }

    fn hit(&self, i: usize) {
        self.0[i].fetch_add(1, Ordering::SeqCst);
    }

    fn get(&self, i: usize) -> u32 {
        self.0[i].load(Ordering::SeqCst)
    }
}

// --------------------------------------------------------- foreign wakes

/// A one-shot event set by a foreign thread: store-then-check under the
/// lock, so a concurrent `fire` cannot be missed.
#[derive(Default)]
struct Signal {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Signal {
    /// Fires and wakes twice (by reference, then by value), so a
    /// duplicate wake races the poll it caused.
    fn fire(&self) {
        self.fired.store(true, Ordering::SeqCst);
        let taken = self.waker.lock().unwrap().take();
        if let Some(w) = taken {
            w.wake_by_ref();
            w.wake();
        }
    }
}

struct Wait(Arc<Signal>);

impl Future for Wait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut slot = self.0.waker.lock().unwrap();
        if self.0.fired.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        *slot = Some(cx.waker().clone());
        Poll::Pending
    }
}

enum Job {
    Fire(Arc<Signal>),
    Abort(JoinHandle<Output>),
}

/// The foreign threads: fire signals and abort handles sent to them.
struct Foreign {
    tx: Option<mpsc::Sender<Job>>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Foreign {
    fn start() -> Foreign {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let threads = (0..WAKER_THREADS)
            .map(|_| {
                let rx = rx.clone();
                thread::spawn(move || loop {
                    let job = rx.lock().unwrap().recv();
                    match job {
                        Ok(Job::Fire(s)) => s.fire(),
                        Ok(Job::Abort(h)) => h.abort(),
                        Err(_) => return,
                    }
                })
            })
            .collect();
        Foreign { tx: Some(tx), threads }
    }

    fn sender(&self) -> mpsc::Sender<Job> {
        self.tx.clone().expect("foreign threads stopped")
    }

    fn stop(mut self) {
        drop(self.tx.take());
        for t in self.threads.drain(..) {
            t.join().expect("foreign thread panicked");
        }
    }
}

// ------------------------------------------------------------- one round

/// What a root task does with its children (by root index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// Plain children, all awaited.
    Fanout,
    /// Children detached; the root's handle is dropped by the producer.
    Detach,
    /// Children wait for a foreign thread's wake; awaited.
    Foreign,
    /// Children yield a few times; one awaited, the rest detached.
    Yield,
    /// Children wait forever; aborted by the root (two) and by a foreign
    /// thread (one).
    Abort,
    /// Plain children; the producer aborts the root right after spawning.
    AbortRace,
}

const SHAPES: [Shape; 6] = [Shape::Fanout, Shape::Detach, Shape::Foreign, Shape::Yield, Shape::Abort, Shape::AbortRace];

fn shape_of(root: usize) -> Shape {
    SHAPES[root % SHAPES.len()]
}

#[derive(Clone)]
struct RoundCx {
    tally: Arc<Tally>,
    flags: Arc<Flags>,
    foreign: mpsc::Sender<Job>,
}

fn child(cx: &RoundCx, index: usize, shape: Shape) -> Tracked {
    let (flags, tally) = (cx.flags.clone(), cx.tally.clone());
    let signal = Arc::new(Signal::default());
    if shape == Shape::Foreign {
        cx.foreign.send(Job::Fire(signal.clone())).expect("foreign threads gone");
    }
    tracked(&cx.tally, async move {
        flags.hit(index);
        match shape {
            Shape::Foreign | Shape::Abort => Wait(signal).await,
            Shape::Yield => {
                for _ in 0..YIELDS {
                    yield_now().await;
                }
            }
            _ => {}
        }
        output(&tally)
    })
}

fn root(cx: &RoundCx, r: usize) -> Tracked {
    let cx2 = cx.clone();
    tracked(&cx.tally, async move {
        let cx = cx2;
        let base = r * TASKS_PER_ROOT;
        let shape = shape_of(r);
        // Everything up to the first await runs in one poll, so an abort
        // (which takes effect when a poll returns) cannot split it: if the
        // root's flag is set, all its children were spawned.
        cx.flags.hit(base);
        let mut kids: Vec<_> = (1..=CHILDREN).map(|c| spawn(child(&cx, base + c, shape))).collect();
        match shape {
            Shape::Fanout | Shape::Foreign | Shape::AbortRace => {
                for k in kids {
                    assert!(k.await.is_ok(), "child of {shape:?} root {r} failed");
                }
            }
            Shape::Detach => drop(kids),
            Shape::Yield => {
                let first = kids.remove(0);
                drop(kids);
                assert!(first.await.is_ok(), "yielding child of root {r} failed");
            }
            Shape::Abort => {
                let foreign = kids.pop().expect("children");
                cx.foreign.send(Job::Abort(foreign)).expect("foreign threads gone");
                yield_now().await;
                for k in &kids {
                    k.abort();
                }
                for k in kids {
                    let e = k.await.err().expect("an aborted child that never wakes completed");
                    assert!(e.is_cancelled(), "aborted child of root {r}: {e}");
                }
            }
        }
        output(&cx.tally)
    })
}

/// What one root's `JoinHandle` resolved to, as seen by its producer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RootResult {
    Ok,
    Cancelled,
    Detached,
}

/// One producer: spawns its share of roots from outside, aborts the
/// `AbortRace` ones at once, then awaits the rest with `block_on`.
fn produce(rt: &Runtime, cx: &RoundCx, roots: std::ops::Range<usize>) -> Vec<(usize, RootResult)> {
    let handle = rt.handle();
    let mut held = Vec::new();
    let mut results = Vec::new();
    for r in roots {
        let h = handle.spawn(root(cx, r));
        match shape_of(r) {
            Shape::Detach => {
                drop(h);
                results.push((r, RootResult::Detached));
            }
            Shape::AbortRace => {
                h.abort();
                held.push((r, h));
            }
            _ => held.push((r, h)),
        }
    }
    for (r, h) in held {
        let res = match rt.block_on(h) {
            Ok(out) => {
                drop(out);
                RootResult::Ok
            }
            Err(e) if e.is_cancelled() => RootResult::Cancelled,
            Err(e) => panic!("root {r} ({:?}) failed: {e}", shape_of(r)),
        };
        results.push((r, res));
    }
    results
}

/// Checks every task's run count against what its root's outcome allows.
fn check_flags(what: &str, flags: &Flags, results: &[(usize, RootResult)]) {
    for &(r, res) in results {
        let base = r * TASKS_PER_ROOT;
        let root_runs = flags.get(base);
        let shape = shape_of(r);
        match (shape, res) {
            (_, RootResult::Cancelled) => {
                assert_eq!(shape, Shape::AbortRace, "{what}: root {r} ({shape:?}) cancelled but never aborted");
                assert!(root_runs <= 1, "{what}: aborted root {r} ran {root_runs} times");
            }
            _ => assert_eq!(root_runs, 1, "{what}: root {r} ({shape:?}) ran {root_runs} times"),
        }
        for c in 1..=CHILDREN {
            let runs = flags.get(base + c);
            if shape == Shape::Abort {
                // Aborted while waiting: polled at most once before the abort.
                assert!(runs <= 1, "{what}: aborted child {c} of root {r} ran {runs} times");
            } else {
                // Spawned exactly when the root ran.
                assert_eq!(
                    runs, root_runs,
                    "{what}: child {c} of {shape:?} root {r} ran {runs} times, root {root_runs}"
                );
            }
        }
    }
}

/// One round: producers spawn `roots` roots; wait for quiescence; check.
/// Returns the tasks the round spawned.
fn round(rt: &Runtime, tally: &Arc<Tally>, foreign: &Foreign, roots: usize, what: &str) -> usize {
    let cx = RoundCx { tally: tally.clone(), flags: Flags::new(roots * TASKS_PER_ROOT), foreign: foreign.sender() };
    let per = roots.div_ceil(PRODUCERS);
    let results: Vec<_> = thread::scope(|s| {
        let workers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let cx = cx.clone();
                let range = (p * per).min(roots)..((p + 1) * per).min(roots);
                s.spawn(move || produce(rt, &cx, range))
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("producer panicked")).collect()
    });
    assert_eq!(results.len(), roots, "{what}: a root went missing");
    tally.wait_all_dropped(what);
    wait_no_alive_tasks(&rt.handle(), what);
    check_flags(what, &cx.flags, &results);
    let spawned: u32 = (0..roots * TASKS_PER_ROOT).map(|i| cx.flags.get(i).min(1)).sum();
    spawned as usize
}

fn wait_no_alive_tasks(handle: &Handle, what: &str) {
    let deadline = Instant::now() + HANG_LIMIT;
    while handle.alive_tasks() != 0 {
        assert!(Instant::now() < deadline, "{what}: {} tasks still alive after every drop", handle.alive_tasks());
        thread::yield_now();
    }
}

// ---------------------------------------------------------- memory check

/// Resident set size in KiB (`VmRSS` of /proc/self/status: in kB already,
/// so no page size is needed).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("reading /proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS in /proc/self/status");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("bad VmRSS line {line:?}"))
}

/// RSS after each round; after warm-up (when `check`) no sample may exceed
/// the warm-up's highest by more than [`RSS_GROWTH_LIMIT_KIB`].
struct Memory {
    samples_kib: Vec<u64>,
    /// Highest sample of the warm-up; `None` until it ends.
    baseline_kib: Option<u64>,
    check: bool,
}

impl Memory {
    fn record(&mut self, what: &str, warming_up: bool) {
        let now = rss_kib();
        self.samples_kib.push(now);
        if warming_up {
            return;
        }
        let base = *self.baseline_kib.get_or_insert_with(|| {
            let warm = &self.samples_kib[..self.samples_kib.len() - 1];
            warm.iter().copied().max().expect("warm-up samples")
        });
        let growth = now.saturating_sub(base);
        assert!(
            !self.check || growth <= RSS_GROWTH_LIMIT_KIB,
            "{what}: RSS {now} KiB is {growth} KiB above the warm-up maximum {base} KiB (limit {RSS_GROWTH_LIMIT_KIB}); \
             samples KiB: {:?}",
            self.samples_kib
        );
    }
}

// -------------------------------------------------------------- shutdown

/// Roots that are still pending or busy at shutdown: waiting on a signal
/// that is fired only after shutdown, yielding forever, or spawning a
/// child and then yielding forever. Half their handles are kept.
fn spawn_pending(handle: &Handle, tally: &Arc<Tally>, late: &mut Vec<Arc<Signal>>) -> Vec<JoinHandle<Output>> {
    let mut kept = Vec::new();
    for i in 0..PENDING_AT_SHUTDOWN {
        let signal = Arc::new(Signal::default());
        late.push(signal.clone());
        let t = tally.clone();
        let fut = tracked(tally, async move {
            match i % 3 {
                0 => Wait(signal).await,
                1 => loop {
                    yield_now().await;
                },
                _ => {
                    let t2 = t.clone();
                    drop(spawn(tracked(&t, async move {
                        std::future::pending::<()>().await;
                        output(&t2)
                    })));
                    loop {
                        yield_now().await;
                    }
                }
            }
            output(&t)
        });
        let h = handle.spawn(fut);
        if i % 2 == 0 {
            kept.push(h);
        }
    }
    kept
}

/// Shuts the runtime down with tasks pending and a producer spawning
/// through it; then every future and output must be dropped exactly once
/// and every kept handle must report cancellation.
fn shutdown_with_pending(rt: Runtime, tally: &Arc<Tally>, what: &str) {
    let handle = rt.handle();
    let mut late = Vec::new();
    let kept = spawn_pending(&handle, tally, &mut late);
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let started = Arc::new(Barrier::new(2));
    let late_producer = {
        let (handle, tally, started) = (handle.clone(), tally.clone(), started.clone());
        thread::spawn(move || {
            let mut handles = Vec::new();
            let (mut stopped, mut after) = (false, 0);
            while after < SPAWNS_AFTER_SHUTDOWN {
                if handles.len() == SPAWNS_BEFORE_SHUTDOWN {
                    started.wait();
                }
                if !stopped {
                    // Block once the cap is reached, so a slow shutdown
                    // (under valgrind) does not turn into a spawn flood.
                    stopped = if handles.len() >= SPAWNS_DURING_SHUTDOWN_CAP {
                        stop_rx.recv().is_ok()
                    } else {
                        stop_rx.try_recv().is_ok()
                    };
                }
                after += usize::from(stopped);
                let t = tally.clone();
                handles.push(handle.spawn(tracked(&tally, async move { output(&t) })));
            }
            handles
        })
    };
    started.wait();
    assert!(rt.shutdown_timeout(SHUTDOWN_LIMIT), "{what}: workers did not stop within {SHUTDOWN_LIMIT:?}");
    stop_tx.send(()).expect("late producer gone");
    let spawned_around = late_producer.join().expect("late producer panicked");
    // Wake tasks of a runtime that is gone: must be harmless.
    for s in late {
        s.fire();
    }
    for mut h in kept {
        match poll_once(&mut h) {
            Poll::Ready(Err(e)) => {
                assert!(e.is_cancelled(), "{what}: pending task at shutdown: {e}")
            }
            Poll::Ready(Ok(_)) => panic!("{what}: a task that never completes returned a value"),
            Poll::Pending => panic!("{what}: JoinHandle still pending after shutdown"),
        }
    }
    let mut completed = 0;
    for mut h in spawned_around {
        match poll_once(&mut h) {
            Poll::Ready(Ok(_)) => completed += 1,
            Poll::Ready(Err(e)) => assert!(e.is_cancelled(), "{what}: task spawned around shutdown: {e}"),
            Poll::Pending => {
                panic!("{what}: JoinHandle of a task spawned around shutdown still pending")
            }
        }
    }
    let [fc, fd, oc, od] = tally.snapshot();
    assert_eq!(fd, fc, "{what}: futures created {fc}, dropped {fd} after shutdown");
    assert_eq!(od, oc, "{what}: outputs created {oc}, dropped {od} after shutdown");
    println!(
        "{what}: shutdown with {PENDING_AT_SHUTDOWN} pending roots; {completed} tasks spawned around it completed"
    );
}

fn poll_once<T>(h: &mut JoinHandle<T>) -> Poll<Result<T, wsbench_schedulers::JoinError>> {
    Pin::new(h).poll(&mut Context::from_waker(Waker::noop()))
}

// ------------------------------------------------------------- the tests

fn stress_config(kind: SchedulerKind, workers: usize, knobs: &[(&str, &str)], settings: &Settings) {
    let what = format!("{kind} x{workers} {knobs:?}");
    let rt = build_knobs(kind, workers, knobs);
    let tally = Arc::new(Tally::default());
    let foreign = Foreign::start();
    let mut memory = Memory { samples_kib: Vec::new(), baseline_kib: None, check: settings.rss_check };
    let start = Instant::now();
    let budget = settings.budget();
    let warmup = budget.mul_f64(WARMUP_FRACTION);
    let (mut rounds, mut tasks, mut tasks_after_warmup, mut measured) = (0usize, 0usize, 0usize, 0usize);
    while measured < MIN_MEASURED_ROUNDS || start.elapsed() < budget {
        let n = round(&rt, &tally, &foreign, settings.roots, &format!("{what} round {rounds}"));
        tasks += n;
        let warming_up = rounds < WARMUP_ROUNDS || start.elapsed() < warmup;
        if !warming_up {
            tasks_after_warmup += n;
            measured += 1;
        }
        memory.record(&format!("{what} round {rounds}"), warming_up);
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let m = rt.metrics().totals();
    let base = memory.baseline_kib.expect("warm-up ended");
    let last = *memory.samples_kib.last().expect("samples");
    println!(
        "{what}: {rounds} rounds, {tasks} tasks in {secs:.2} s ({:.0}/s); steals {} of {} attempts ({} from LIFO slots); RSS warm-up max {base} -> last {last} KiB; \
         smallest per-task leak the RSS bound catches: {} B",
        tasks as f64 / secs,
        m.steals,
        m.steal_attempts,
        m.lifo_steals,
        (RSS_GROWTH_LIMIT_KIB * 1024) / tasks_after_warmup.max(1) as u64,
    );
    shutdown_with_pending(rt, &tally, &what);
    foreign.stop();
}

fn stress(kind: SchedulerKind) {
    stress_knobs(kind, &[]);
}

fn stress_knobs(kind: SchedulerKind, knobs: &[(&str, &str)]) {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let settings = Settings::from_env();
    for workers in settings.configs(kind) {
        stress_config(kind, workers, knobs, &settings);
    }
}

/// Knob settings that change who may take a task, stressed as policies of
/// their own: the stealable LIFO slot races its owner's pushes and takes,
/// the shutdown drain, and thieves on every pass.
const KNOBBED: &[(SchedulerKind, &[(&str, &str)])] = &[
    (SchedulerKind::StealHalf, &[("lifo-steal", "on"), ("steal-passes", "4")]),
    (SchedulerKind::Bwos, &[("lifo-steal", "on"), ("steal-passes", "4")]),
];

#[test]
#[ignore = "stress: run with --ignored (scripts/stress.sh for the full form)"]
fn stress_global() {
    stress(SchedulerKind::Global);
}

#[test]
#[ignore = "stress: run with --ignored (scripts/stress.sh for the full form)"]
fn stress_per_worker() {
    stress(SchedulerKind::PerWorker);
}

#[test]
#[ignore = "stress: run with --ignored (scripts/stress.sh for the full form)"]
fn stress_steal_one() {
    stress(SchedulerKind::StealOne);
}

#[test]
#[ignore = "stress: run with --ignored (scripts/stress.sh for the full form)"]
fn stress_steal_half() {
    stress(SchedulerKind::StealHalf);
}

#[test]
#[ignore = "stress: run with --ignored (scripts/stress.sh for the full form)"]
fn stress_current_thread() {
    stress(SchedulerKind::CurrentThread);
}

#[test]
#[ignore = "stress: run with --ignored (scripts/stress.sh for the full form)"]
fn stress_thread_per_core() {
    stress(SchedulerKind::ThreadPerCore);
}

#[test]
#[ignore = "stress: run with --ignored (scripts/stress.sh for the full form)"]
fn stress_bwos() {
    stress(SchedulerKind::Bwos);
}

#[test]
#[ignore = "stress: run with --ignored (scripts/stress.sh for the full form)"]
fn stress_lifo_steal() {
    for (kind, knobs) in KNOBBED {
        stress_knobs(*kind, knobs);
    }
}
