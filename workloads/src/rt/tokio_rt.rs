//! tokio as a reference: `tokio` (multi-thread, same worker count) and
//! `tokio-current` (current-thread, driven by `block_on` on the calling
//! thread for tokio's benchmarks, by one dedicated thread otherwise).
//!
//! Both use tokio's own reactor and timer (`enable_all`). Counters: only
//! what tokio's *stable* `RuntimeMetrics` reports and what means the same
//! thing as ours — parks (`worker_park_count`), unparks
//! (`worker_park_unpark_count - worker_park_count`, tokio counts both
//! transitions in one counter) and busy time (`worker_total_busy_duration`).
//! Everything else is `None`, never invented.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;

use super::listen::bind_listener;
use super::{counter_names, serve_connection, CounterValues, Rt, ServeHttp, Spawner, TaskFailed, SHUTDOWN_GRACE};
use crate::affinity::pin_current;
use crate::api::RuntimeSpec;
use crate::Error;

/// tokio's multi-thread runtime with `spec.workers()` workers.
/// tokio's multi-thread runtime as a row (`tokio`, or a registered
/// variant built with [`TokioMulti::with_builder`]).
pub struct TokioMulti {
    rt: tokio::runtime::Runtime,
}

impl TokioMulti {
    pub(crate) fn build(spec: &RuntimeSpec) -> Result<Self, Error> {
        TokioMulti::with_builder(tokio::runtime::Builder::new_multi_thread(), spec)
    }

    /// A multi-thread runtime from `builder` (a registered reference row
    /// with tokio's own settings, e.g. `global_queue_interval`): this sets
    /// the worker count, enables I/O and time, and pins threads as the
    /// `tokio` row does.
    pub fn with_builder(mut builder: tokio::runtime::Builder, spec: &RuntimeSpec) -> Result<Self, Error> {
        let cores = Arc::new(spec.worker_cores.clone());
        // Counts started threads to pick cores round-robin. tokio starts
        // its workers first, so they take the first ids; blocking-pool
        // threads continue the rotation. Relaxed: a unique ticket is all
        // that is needed, no data is published through it.
        let next = Arc::new(AtomicUsize::new(0));
        let rt = builder
            .worker_threads(spec.workers())
            .enable_all()
            .on_thread_start(move || pin_current(&cores, next.fetch_add(1, Ordering::Relaxed)))
            .build()
            .map_err(|e| Error::Build { sched: spec.sched().to_string(), message: e.to_string() })?;
        Ok(TokioMulti { rt })
    }
}

impl Rt for TokioMulti {
    type Spawner = TokioSpawner;

    fn spawner(&self) -> TokioSpawner {
        TokioSpawner { handle: self.rt.handle().clone() }
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

/// tokio's current-thread runtime, either driven natively — its scheduler
/// runs inside [`Rt::block_on`] on the calling thread ([`TokioCurrent::native`])
/// — or run by one dedicated thread sitting in `block_on`, so that tasks
/// spawned from outside make progress while nobody else calls `block_on`
/// ([`TokioCurrent::build`]). Ours (`current-thread`) is built the same
/// way in each case.
pub(crate) struct TokioCurrent {
    handle: tokio::runtime::Handle,
    /// The runtime, when driven natively.
    native: Option<tokio::runtime::Runtime>,
    stop: Option<oneshot::Sender<Duration>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl TokioCurrent {
    /// Driven by `block_on` on the calling thread, as tokio's own
    /// benchmarks and single-threaded programs use it; nothing runs
    /// between `block_on` calls.
    pub(crate) fn native(spec: &RuntimeSpec) -> Result<Self, Error> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Build { sched: spec.sched().to_string(), message: e.to_string() })?;
        Ok(TokioCurrent { handle: rt.handle().clone(), native: Some(rt), stop: None, thread: None })
    }

    pub(crate) fn build(spec: &RuntimeSpec) -> Result<Self, Error> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Build { sched: spec.sched().to_string(), message: e.to_string() })?;
        let handle = rt.handle().clone();
        let (stop_tx, stop_rx) = oneshot::channel::<Duration>();
        let cores = spec.worker_cores.clone();
        let thread = thread::Builder::new()
            .name("tokio-current-worker".into())
            .spawn(move || {
                pin_current(&cores, 0);
                // Drives tasks, I/O and timers until told to stop, with the
                // grace to shut down in; an error only means the sender was
                // dropped, which also means stop.
                let grace = rt.block_on(stop_rx).unwrap_or(SHUTDOWN_GRACE);
                rt.shutdown_timeout(grace);
            })
            .map_err(|e| Error::io("starting the tokio-current worker thread", e))?;
        Ok(TokioCurrent { handle, native: None, stop: Some(stop_tx), thread: Some(thread) })
    }
}

impl Rt for TokioCurrent {
    type Spawner = TokioSpawner;

    fn spawner(&self) -> TokioSpawner {
        TokioSpawner { handle: self.handle.clone() }
    }

    fn block_on<F>(&self, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match &self.native {
            // The scheduler runs here, on the calling thread.
            Some(rt) => rt.block_on(f),
            // Runs `f` on the calling thread in the runtime's context; the
            // dedicated thread keeps driving tasks, I/O and timers meanwhile.
            None => self.handle.block_on(f),
        }
    }

    fn shutdown(mut self, grace: Duration) {
        if let Some(rt) = self.native.take() {
            rt.shutdown_timeout(grace);
        }
        self.stop_now(grace);
    }
}

impl TokioCurrent {
    /// Stops the dedicated thread (if any), which shuts the runtime down
    /// with `grace`, and waits for it.
    fn stop_now(&mut self, grace: Duration) {
        if let Some(stop) = self.stop.take() {
            // Err means the worker already returned; nothing to stop.
            let _ = stop.send(grace);
        }
        if let Some(t) = self.thread.take() {
            // A panic on the worker thread was already reported by the hook.
            let _ = t.join();
        }
    }
}

impl Drop for TokioCurrent {
    fn drop(&mut self) {
        self.stop_now(SHUTDOWN_GRACE);
    }
}

/// Handle shared by both tokio flavours.
#[derive(Clone)]
pub struct TokioSpawner {
    handle: tokio::runtime::Handle,
}

/// A tokio `JoinHandle` with the error mapped to [`TaskFailed`].
pub struct TokioJoin<T>(tokio::task::JoinHandle<T>);

impl<T> Future for TokioJoin<T> {
    type Output = Result<T, TaskFailed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|r| r.map_err(|e| if e.is_panic() { TaskFailed::Panicked } else { TaskFailed::Cancelled }))
    }
}

impl Spawner for TokioSpawner {
    type Join<T: Send + 'static> = TokioJoin<T>;
    type Listener = tokio::net::TcpListener;
    type Stream = tokio::net::TcpStream;

    fn spawn<F>(&self, f: F) -> TokioJoin<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        TokioJoin(self.handle.spawn(f))
    }

    fn spawn_inside<F>(&self, f: F) -> TokioJoin<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        TokioJoin(tokio::spawn(f))
    }

    fn spawn_blocking<F, T>(&self, f: F) -> TokioJoin<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        TokioJoin(self.handle.spawn_blocking(f))
    }

    fn yield_now(&self) -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }

    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(d)
    }

    async fn timeout<F>(&self, d: Duration, f: F) -> Option<F::Output>
    where
        F: Future + Send,
    {
        tokio::time::timeout(d, f).await.ok()
    }

    async fn listen(&self, addr: SocketAddr) -> io::Result<Self::Listener> {
        tokio::net::TcpListener::from_std(bind_listener(addr, false)?)
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
        let stream = tokio::net::TcpStream::connect(addr).await?;
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

    async fn serve_http<S: ServeHttp>(&self, stream: Self::Stream, svc: S) -> Result<(), String> {
        let io = hyper_util::rt::TokioIo::new(stream);
        let (exec, timer) = (hyper_util::rt::TokioExecutor::new(), hyper_util::rt::TokioTimer::new());
        serve_connection(io, exec, timer, svc).await.map_err(|e| e.to_string())
    }

    fn counters(&self) -> CounterValues {
        let m = self.handle.metrics();
        let workers = m.num_workers();
        let parks: u64 = (0..workers).map(|w| m.worker_park_count(w)).sum();
        let transitions: u64 = (0..workers).map(|w| m.worker_park_unpark_count(w)).sum();
        let busy_ns: u64 = (0..workers).map(|w| duration_ns(m.worker_total_busy_duration(w))).sum();
        counter_names()
            .map(|name| {
                let v = match name {
                    "parks" => Some(parks),
                    "unparks" => Some(transitions.saturating_sub(parks)),
                    "busy_ns" => Some(busy_ns),
                    _ => unstable_counter(&m, name),
                };
                (name, v)
            })
            .collect()
    }
}

/// The counters tokio keeps only when built with `--cfg tokio_unstable`
/// (`RUSTFLAGS="--cfg tokio_unstable" cargo build ...`); blank otherwise.
#[cfg(tokio_unstable)]
fn unstable_counter(m: &tokio::runtime::RuntimeMetrics, name: &str) -> Option<u64> {
    let sum = |f: &dyn Fn(usize) -> u64| (0..m.num_workers()).map(f).sum::<u64>();
    match name {
        "polls" => Some(sum(&|w| m.worker_poll_count(w))),
        "steals" => Some(sum(&|w| m.worker_steal_operations(w))),
        "tasks_stolen" => Some(sum(&|w| m.worker_steal_count(w))),
        "overflows" => Some(sum(&|w| m.worker_overflow_count(w))),
        _ => None,
    }
}

#[cfg(not(tokio_unstable))]
fn unstable_counter(_m: &tokio::runtime::RuntimeMetrics, _name: &str) -> Option<u64> {
    None
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
