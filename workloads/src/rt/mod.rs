//! The runtime-facing trait every workload is written against, once.
//!
//! [`Rt`] is a built runtime (owned by the run); [`Spawner`] is its cheap,
//! cloneable handle that tasks capture. Both are used generically — one
//! monomorphised copy of each workload per runtime type, no `dyn` on any
//! path a request takes.
//!
//! Implementations:
//! - [`ours::Ours`]: every policy of `wsbench_schedulers` (knobs pass through);
//! - [`tokio_rt::TokioMulti`]: tokio's multi-thread runtime, same worker count;
//! - [`tokio_rt::TokioCurrent`]: tokio's current-thread runtime, driven by
//!   `block_on` on the calling thread for tokio's benchmarks and by one
//!   dedicated thread for the workloads that spawn from load-generator
//!   threads (ours, `current-thread`, is built the same way in each case);
//! - [`smol_rt::Smol`]: an `async-executor` run by N threads, `async-io` for
//!   timers and sockets;
//! - outside this crate, any reference a binary registers with
//!   [`crate::register_reference`].
//!
//! The references use their own reactors and timers: that is the point of a
//! reference.

pub(crate) mod hyper_io;
pub(crate) mod listen;
pub(crate) mod ours;
mod serve;
pub(crate) mod smol_rt;
pub(crate) mod tokio_rt;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

pub(crate) use serve::serve_connection;
pub use serve::{HttpResponse, ServeHttp, ServiceFuture};
pub use tokio_rt::{TokioJoin, TokioMulti, TokioSpawner};

/// Why a spawned task produced no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskFailed {
    /// Its future panicked.
    Panicked,
    /// It was cancelled (runtime shut down or aborted).
    Cancelled,
}

/// How long [`Rt::shutdown`] waits for a task that is blocking a worker,
/// for every runtime the workloads build (runs and `serve`).
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// A built runtime of one kind.
pub trait Rt: Sized + 'static {
    /// The handle tasks capture.
    type Spawner: Spawner;

    /// A cloneable handle to this runtime.
    fn spawner(&self) -> Self::Spawner;

    /// Runs `f` to completion on the calling thread (which is never one of
    /// the runtime's workers) with the runtime as context, so that
    /// [`Spawner::spawn_inside`] works in it.
    fn block_on<F>(&self, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;

    /// Stops the workers; tasks still pending are dropped. Waits at most
    /// `grace` for a task that is blocking a worker.
    fn shutdown(self, grace: Duration);
}

pub use crate::api::CounterValues;

/// What workloads do with a runtime: spawn, join, yield, sleep, time out,
/// TCP, counters. `Clone + Send + Sync` so that tasks can carry it.
pub trait Spawner: Clone + Send + Sync + 'static {
    /// Awaits a task's output. Dropping it detaches the task.
    type Join<T: Send + 'static>: Future<Output = Result<T, TaskFailed>> + Send + Unpin + 'static;
    /// A bound TCP listener.
    type Listener: Send + Sync + 'static;
    /// A connected TCP stream.
    type Stream: Send + 'static;

    /// Spawns from outside the runtime (a load-generator or bench thread):
    /// the runtime's remote-spawn path.
    fn spawn<F>(&self, f: F) -> Self::Join<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;

    /// Spawns from inside the runtime (a task or `block_on`): the runtime's
    /// local-spawn path.
    fn spawn_inside<F>(&self, f: F) -> Self::Join<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;

    /// Runs the closure `f` on the runtime's blocking pool (threads apart
    /// from the workers), from any thread: ours and tokio's own pools;
    /// smol's is the `blocking` crate's process-wide pool (`smol::unblock`).
    fn spawn_blocking<F, T>(&self, f: F) -> Self::Join<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static;

    /// Yields to the scheduler once.
    fn yield_now(&self) -> impl Future<Output = ()> + Send;

    /// Sleeps on the runtime's own timer.
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send;

    /// Runs `f` under a deadline on the runtime's own timer; `None` when the
    /// deadline passed first.
    fn timeout<F>(&self, d: Duration, f: F) -> impl Future<Output = Option<F::Output>> + Send
    where
        F: Future + Send;

    /// Binds a listener on the runtime's own reactor, with the backlog
    /// every runtime gets ([`listen::bind_listener`]).
    fn listen(&self, addr: SocketAddr) -> impl Future<Output = io::Result<Self::Listener>> + Send;

    /// How many listeners (and accept loops) a server runs: one per core on
    /// `thread-per-core`, where each core has its own reactor; 1 elsewhere.
    fn listener_shards(&self) -> usize {
        1
    }

    /// Spawns on listener shard `shard` (`thread-per-core`: that core);
    /// elsewhere the same as [`Spawner::spawn`].
    fn spawn_on<F>(&self, shard: usize, f: F) -> Self::Join<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let _ = shard;
        self.spawn(f)
    }

    /// Binds one listener of a group that shares a port (`SO_REUSEPORT`, the
    /// same backlog),
    /// on the reactor of the calling task's shard; elsewhere the same as
    /// [`Spawner::listen`].
    fn listen_shard(&self, addr: SocketAddr) -> impl Future<Output = io::Result<Self::Listener>> + Send {
        self.listen(addr)
    }

    /// The address a listener is bound to.
    fn local_addr(&self, listener: &Self::Listener) -> io::Result<SocketAddr>;

    /// Accepts one connection (with `TCP_NODELAY` set).
    fn accept<'a>(&'a self, listener: &'a Self::Listener)
        -> impl Future<Output = io::Result<Self::Stream>> + Send + 'a;

    /// Connects (with `TCP_NODELAY` set).
    fn connect(&self, addr: SocketAddr) -> impl Future<Output = io::Result<Self::Stream>> + Send;

    /// Reads at most `buf.len()` bytes; `Ok(0)` at end of stream.
    fn read<'a>(
        &'a self,
        stream: &'a mut Self::Stream,
        buf: &'a mut [u8],
    ) -> impl Future<Output = io::Result<usize>> + Send + 'a;

    /// Writes all of `buf`.
    fn write_all<'a>(
        &'a self,
        stream: &'a mut Self::Stream,
        buf: &'a [u8],
    ) -> impl Future<Output = io::Result<()>> + Send + 'a;

    /// The runtime's counters now (cumulative since it was built; maxima
    /// since the last [`Spawner::window_start`]).
    fn counters(&self) -> CounterValues;

    /// Starts the measured window: restarts the peak (`_max`) counters
    /// where the runtime can, and returns the counters now, to be
    /// differenced by [`counters_delta`] at the window's end. A runtime
    /// that reports a maximum must be able to restart it.
    fn window_start(&self) -> CounterValues {
        self.counters()
    }

    /// Ends the measured window [`Spawner::window_start`] began: returns
    /// the counters now, to be differenced by [`counters_delta`], and marks
    /// the window's end for [`Spawner::sched_delay_window`]. Every workload
    /// reads its window's counters through here.
    fn window_end(&self) -> CounterValues {
        self.counters()
    }

    /// The schedule delays (a task scheduled → its next poll, in ns)
    /// recorded between the last [`Spawner::window_start`] and
    /// [`Spawner::window_end`], one per task poll, for runtimes that
    /// measure them (ours with `--knob sched-delay=on`); `None` otherwise
    /// (tokio and smol: see `docs/src/measuring.md`).
    fn sched_delay_window(&self) -> Option<hdrhistogram::Histogram<u64>> {
        None
    }

    /// Serves one accepted connection with hyper (the `http` workload)
    /// until the client closes it; `Err` carries hyper's error. The default
    /// refuses, for a runtime that has no hyper glue yet.
    fn serve_http<S: ServeHttp>(
        &self,
        stream: Self::Stream,
        svc: S,
    ) -> impl Future<Output = Result<(), String>> + Send {
        drop((stream, svc));
        async { Err("this runtime has no hyper glue (hyper's Read/Write, Executor, Timer)".to_string()) }
    }

    /// Per worker, the global-queue interval in force now, for runtimes
    /// that report one (ours with such a policy); empty otherwise.
    fn global_queue_intervals(&self) -> Vec<u32> {
        Vec::new()
    }

    /// Inject-queue lock acquisitions that found the lock held, since the
    /// runtime was built, for runtimes that count them (ours with a locked
    /// inject queue); `None` otherwise.
    fn inject_lock_contended(&self) -> Option<u64> {
        None
    }

    /// Blocking-pool lock acquisitions that found the lock held, since the
    /// runtime was built, for runtimes that count them (ours: every
    /// policy's pool); `None` otherwise.
    fn blocking_lock_contended(&self) -> Option<u64> {
        None
    }

    /// Task-registry lock acquisitions (spawn, completion) that found the
    /// lock held, since the runtime was built, for runtimes that count
    /// them (ours: the owned-tasks list's shard locks); `None` otherwise.
    fn task_registry_contended(&self) -> Option<u64> {
        None
    }
}

/// Fills `buf` completely; `UnexpectedEof` when the stream ends first.
pub(crate) async fn read_exact<S: Spawner>(s: &S, stream: &mut S::Stream, buf: &mut [u8]) -> io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = s.read(stream, &mut buf[filled..]).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        filled += n;
    }
    Ok(())
}

/// Pause before accepting again after running out of descriptors.
const ACCEPT_RETRY: Duration = Duration::from_millis(10);

/// The next accepted connection; `None` once the listener fails for good
/// (closed at shutdown). Running out of descriptors (`EMFILE`, `ENFILE`)
/// or a connection aborted before it was accepted is waited out, not the
/// end of the server: the connection stays queued for a later try.
pub(crate) async fn accept_next<S: Spawner>(sp: &S, listener: &S::Listener) -> Option<S::Stream> {
    const EMFILE: i32 = 24;
    const ENFILE: i32 = 23;
    loop {
        match sp.accept(listener).await {
            Ok(stream) => return Some(stream),
            Err(e) if matches!(e.raw_os_error(), Some(EMFILE | ENFILE)) => sp.sleep(ACCEPT_RETRY).await,
            Err(e) if matches!(e.kind(), io::ErrorKind::ConnectionAborted | io::ErrorKind::Interrupted) => {}
            Err(_) => return None,
        }
    }
}

/// Counter names: `COUNTER_NAMES` then `DRIVER_COUNTER_NAMES`.
pub(crate) fn counter_names() -> impl Iterator<Item = &'static str> {
    use wsbench_schedulers::metrics::{COUNTER_NAMES, DRIVER_COUNTER_NAMES};
    COUNTER_NAMES.iter().chain(DRIVER_COUNTER_NAMES.iter()).copied()
}

/// Every counter name with no value (for runtimes that report none).
pub(crate) fn no_counters() -> CounterValues {
    counter_names().map(|n| (n, None)).collect()
}

/// `end - start` per counter, except for maxima (which are not additive
/// and are taken from `end`: [`Spawner::window_start`] restarted them, so
/// they cover the window only). Names and order come from `end`.
pub(crate) fn counters_delta(start: &CounterValues, end: &CounterValues) -> CounterValues {
    end.iter()
        .zip(start)
        .map(|(&(name, e), &(_, s))| {
            let v = match (e, s) {
                (Some(e), _) if name.ends_with("_max") => Some(e),
                (Some(e), Some(s)) => Some(e.saturating_sub(s)),
                (e, _) => e,
            };
            (name, v)
        })
        .collect()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn delta_subtracts_sums_and_keeps_maxima() {
        // The maximum was restarted at the window's start (0) and reached 5.
        let start = vec![("polls", Some(10)), ("timer_lateness_us_max", Some(0)), ("parks", None)];
        let end = vec![("polls", Some(25)), ("timer_lateness_us_max", Some(5)), ("parks", None)];
        let d = counters_delta(&start, &end);
        assert_eq!(d, vec![("polls", Some(15)), ("timer_lateness_us_max", Some(5)), ("parks", None)]);
    }

    #[test]
    fn names_cover_both_lists_in_order() {
        let names: Vec<_> = counter_names().collect();
        assert_eq!(names.first(), Some(&"polls"));
        assert_eq!(names.last(), Some(&"timer_remote_cancels"));
        assert_eq!(no_counters().len(), names.len());
    }
}
