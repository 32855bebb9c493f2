//! Our runtimes: every policy of `wsbench_schedulers`, through its public
//! API only. Knobs pass through `Builder::knob`; workers are pinned from
//! `Builder::on_thread_start`. Counters: every name of `COUNTER_NAMES`
//! (summed over workers) then `DRIVER_COUNTER_NAMES`, all reported; with
//! `sched-delay=on`, the schedule delays of the measured window.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use hdrhistogram::Histogram;
use wsbench_schedulers::metrics::DelayHistogram;
use wsbench_schedulers::net::{TcpListener, TcpStream};
use wsbench_schedulers::topology::{CpuTopology, WorkerTopology};
use wsbench_schedulers::{Builder, Handle, JoinHandle, Runtime, SchedulerKind};

use super::hyper_io::{OursExec, OursIo, OursTimer};
use super::listen::bind_listener;
use super::{serve_connection, CounterValues, Rt, ServeHttp, Spawner, TaskFailed};
use crate::affinity::pin_current;
use crate::api::RuntimeSpec;
use crate::Error;

/// The counters of steals within and across L3 groups.
const GROUP_COUNTERS: [&str; 2] = ["steals_local_group", "steals_remote_group"];

/// One of our runtimes.
pub(crate) struct Ours {
    rt: Runtime,
    marks: Arc<Mutex<DelayMarks>>,
}

/// The runtime's schedule-delay histogram at the measured window's start
/// and end (`Spawner::window_start`, `Spawner::window_end`), shared by
/// every spawner of the runtime; `None` before the mark, and always with
/// `sched-delay=off`.
#[derive(Default)]
struct DelayMarks {
    start: Option<DelayHistogram>,
    end: Option<DelayHistogram>,
}

impl Ours {
    /// `current-thread` with a driver thread (tasks run while nobody is in
    /// `block_on`, as the open-loop workloads need); see [`Ours::build_with`].
    #[cfg(test)]
    pub(crate) fn build(kind: SchedulerKind, spec: &RuntimeSpec) -> Result<Self, Error> {
        Ours::build_with(kind, spec, false)
    }

    /// `native`: `current-thread` driven by `block_on` on the calling
    /// thread, as tokio's current_thread (no thread of its own, so no
    /// pinning either); otherwise with a driver thread (pinned like a
    /// worker). The other policies ignore it.
    pub(crate) fn build_with(kind: SchedulerKind, spec: &RuntimeSpec, native: bool) -> Result<Self, Error> {
        let cores = Arc::new(spec.worker_cores.clone());
        let mut builder = Builder::new(kind)
            .workers(spec.workers())
            .knobs(spec.knobs().clone())
            .driver_thread(!native)
            .on_thread_start(move |worker_index: usize| pin_current(&cores, worker_index));
        if let Some(topology) = worker_topology(spec) {
            builder = builder.topology(topology);
        }
        let rt =
            builder.build().map_err(|e| Error::Build { sched: spec.sched().to_string(), message: e.to_string() })?;
        Ok(Ours { rt, marks: Arc::default() })
    }
}

/// Where each worker sits: the imposed grouping (`--topology`), else,
/// with pinned workers, their cores' L3 groups and NUMA nodes from sysfs;
/// `None` when unpinned (no stable place to read).
fn worker_topology(spec: &RuntimeSpec) -> Option<WorkerTopology> {
    match spec.topology {
        Some(imposed) => Some(WorkerTopology::imposed(imposed)),
        None => WorkerTopology::from_pinning(&CpuTopology::read_sysfs(), &spec.worker_cores, spec.workers()),
    }
}

impl Rt for Ours {
    type Spawner = OursSpawner;

    fn spawner(&self) -> OursSpawner {
        OursSpawner { handle: self.rt.handle(), marks: Arc::clone(&self.marks) }
    }

    fn block_on<F>(&self, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.rt.block_on(f)
    }

    fn shutdown(self, grace: Duration) {
        self.rt.shutdown_timeout(grace);
    }
}

/// Handle to one of our runtimes.
#[derive(Clone)]
pub(crate) struct OursSpawner {
    handle: Handle,
    marks: Arc<Mutex<DelayMarks>>,
}

/// Our `JoinHandle` with the error mapped to [`TaskFailed`].
pub(crate) struct OursJoin<T>(JoinHandle<T>);

impl<T> Future for OursJoin<T> {
    type Output = Result<T, TaskFailed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|r| r.map_err(|e| if e.is_panic() { TaskFailed::Panicked } else { TaskFailed::Cancelled }))
    }
}

impl Spawner for OursSpawner {
    type Join<T: Send + 'static> = OursJoin<T>;
    type Listener = TcpListener;
    type Stream = TcpStream;

    fn spawn<F>(&self, f: F) -> OursJoin<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        OursJoin(self.handle.spawn(f))
    }

    fn spawn_inside<F>(&self, f: F) -> OursJoin<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        OursJoin(wsbench_schedulers::spawn(f))
    }

    fn spawn_blocking<F, T>(&self, f: F) -> OursJoin<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        OursJoin(self.handle.spawn_blocking(f))
    }

    fn yield_now(&self) -> impl Future<Output = ()> + Send {
        wsbench_schedulers::task::yield_now()
    }

    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send {
        wsbench_schedulers::time::sleep(d)
    }

    async fn timeout<F>(&self, d: Duration, f: F) -> Option<F::Output>
    where
        F: Future + Send,
    {
        wsbench_schedulers::time::timeout(d, f).await.ok()
    }

    async fn listen(&self, addr: SocketAddr) -> io::Result<Self::Listener> {
        TcpListener::from_std(bind_listener(addr, false)?)
    }

    fn listener_shards(&self) -> usize {
        if self.handle.kind() == SchedulerKind::ThreadPerCore {
            self.handle.workers()
        } else {
            1
        }
    }

    fn spawn_on<F>(&self, shard: usize, f: F) -> OursJoin<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        OursJoin(self.handle.spawn_on(shard, f))
    }

    async fn listen_shard(&self, addr: SocketAddr) -> io::Result<Self::Listener> {
        TcpListener::from_std(bind_listener(addr, true)?)
    }

    fn local_addr(&self, listener: &Self::Listener) -> io::Result<SocketAddr> {
        listener.local_addr()
    }

    async fn accept<'a>(&'a self, listener: &'a Self::Listener) -> io::Result<Self::Stream> {
        let (stream, _peer) = listener.accept().await?;
        stream.set_nodelay(true)?;
        Ok(stream)
    }

    async fn connect(&self, addr: SocketAddr) -> io::Result<Self::Stream> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(stream)
    }

    fn read<'a>(
        &'a self,
        stream: &'a mut Self::Stream,
        buf: &'a mut [u8],
    ) -> impl Future<Output = io::Result<usize>> + Send + 'a {
        stream.read(buf)
    }

    fn write_all<'a>(
        &'a self,
        stream: &'a mut Self::Stream,
        buf: &'a [u8],
    ) -> impl Future<Output = io::Result<()>> + Send + 'a {
        stream.write_all(buf)
    }

    /// Every counter, except the steals by L3 group where the runtime
    /// does not count them (no worker topology, or a policy that does not
    /// steal): blank rather than a zero that was never counted.
    fn counters(&self) -> CounterValues {
        let m = self.handle.metrics();
        let counted = |name: &str| m.steal_groups_counted || !GROUP_COUNTERS.contains(&name);
        m.totals()
            .fields()
            .into_iter()
            .chain(m.driver.fields())
            .map(|(name, v)| (name, counted(name).then_some(v)))
            .collect()
    }

    fn window_start(&self) -> CounterValues {
        self.handle.reset_peak_metrics();
        let start = self.handle.metrics().sched_delay;
        *self.marks.lock().unwrap_or_else(|e| e.into_inner()) = DelayMarks { start, end: None };
        self.counters()
    }

    fn window_end(&self) -> CounterValues {
        let counters = self.counters();
        self.marks.lock().unwrap_or_else(|e| e.into_inner()).end = self.handle.metrics().sched_delay;
        counters
    }

    fn sched_delay_window(&self) -> Option<Histogram<u64>> {
        let marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        let (start, end) = (marks.start.as_ref()?, marks.end.as_ref()?);
        Some(delay_ns(&end.since(start)))
    }

    async fn serve_http<S: ServeHttp>(&self, stream: TcpStream, svc: S) -> Result<(), String> {
        serve_connection(OursIo::new(stream), OursExec, OursTimer, svc).await.map_err(|e| e.to_string())
    }

    fn global_queue_intervals(&self) -> Vec<u32> {
        self.handle.metrics().global_queue_intervals.into_iter().flatten().collect()
    }

    fn inject_lock_contended(&self) -> Option<u64> {
        self.handle.metrics().inject_lock_contended
    }

    fn blocking_lock_contended(&self) -> Option<u64> {
        Some(self.handle.metrics().blocking_lock_contended)
    }

    fn task_registry_contended(&self) -> Option<u64> {
        Some(self.handle.metrics().task_registry_contended)
    }
}

/// A schedule-delay histogram as an HdrHistogram of nanoseconds (3
/// significant digits, as every latency histogram here): each bucket's
/// count at the bucket's midpoint, within 1.6 % of every delay in it
/// (`wsbench_schedulers::metrics::DelayHistogram`).
pub(crate) fn delay_ns(d: &DelayHistogram) -> Histogram<u64> {
    let mut h = Histogram::new(3).expect("3 significant digits is valid");
    for (low, high, count) in d.buckets() {
        h.record_n(low + (high - low) / 2, count).expect("an auto-resizing histogram takes any value");
    }
    h
}

impl OursSpawner {
    /// Task polls per worker (per core on `thread-per-core`).
    #[cfg(test)]
    pub(crate) fn polls_per_worker(&self) -> Vec<u64> {
        self.handle.metrics().workers.iter().map(|w| w.polls).collect()
    }
}
