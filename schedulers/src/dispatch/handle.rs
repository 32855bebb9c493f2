//! `Runtime`, its cloneable `Handle`, the thread's current handle, and the
//! free `spawn` and `spawn_blocking`.
//!
//! `Handle` is an enum over `Arc<Shared<P>>` for each policy: a `match`
//! picks the monomorphised code once per call, so spawning and scheduling
//! are statically dispatched within each variant. `thread-per-core` is the
//! one variant made of other runtimes (its cores, each a `current-thread`
//! runtime); its `Runtime` owns them as parts.
//!
//! The current handle is this layer's part of the thread-local context
//! (the core keeps the driver and worker parts, `runtime/context.rs`): the
//! core's threads run inside it through [`Enter`].

use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::driver;
use crate::kind::SchedulerKind;
use crate::metrics::RuntimeMetrics;
use crate::policies::thread_per_core::ThreadPerCore;
use crate::policy::Policy;
use crate::runtime::block_on;
use crate::runtime::context::{self, DriverGuard, Enter};
use crate::runtime::custom::DynSched;
use crate::runtime::shared::Shared;
use crate::runtime::start::{join_workers, DROP_SHUTDOWN_TIMEOUT};
use crate::task::JoinHandle;

thread_local! {
    static HANDLE: RefCell<Option<Handle>> = const { RefCell::new(None) };
}

/// Restores the previous runtime context on drop.
struct EnterGuard {
    prev: Option<Handle>,
    _driver: DriverGuard,
}

/// Enters `handle`'s runtime on this thread (spawn, time, net all work).
fn enter(handle: Handle) -> EnterGuard {
    let driver = context::enter_driver(handle.driver_handle());
    let prev = HANDLE.with(|h| h.borrow_mut().replace(handle));
    EnterGuard { prev, _driver: driver }
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        let prev = self.prev.take();
        HANDLE.with(|h| *h.borrow_mut() = prev);
    }
}

/// Runs `f` with the current runtime's handle.
///
/// # Panics
/// When the thread is not in a runtime.
fn with_handle<R>(f: impl FnOnce(&Handle) -> R) -> R {
    HANDLE.with(|h| {
        let h = h.borrow();
        f(h.as_ref().expect(context::NO_RUNTIME))
    })
}

/// The core's worker and blocking-pool threads run inside the handle of
/// their runtime.
impl Enter for Handle {
    fn run_in<R>(self, body: impl FnOnce() -> R) -> R {
        let _enter = enter(self);
        body()
    }
}

/// `Inner` (one statically dispatched variant per built-in policy, from
/// `builtins.rs`), its `From` impls, `kind()`, and the `with_shared!`
/// dispatch over it.
macro_rules! declare_inner {
    ([] $($variant:ident => $module:ident :: $policy:ident,)*) => {
        #[derive(Clone)]
        enum Inner {
            $($variant(Arc<Shared<crate::policies::$module::$policy>>),)*
            ThreadPerCore(Arc<ThreadPerCore<Handle>>),
            /// A registered policy (`crate::register`), through a `dyn` core.
            Custom(DynSched, SchedulerKind),
        }

        $(
            impl From<Arc<Shared<crate::policies::$module::$policy>>> for Handle {
                fn from(shared: Arc<Shared<crate::policies::$module::$policy>>) -> Handle {
                    Handle { inner: Inner::$variant(shared) }
                }
            }
        )*

        impl Inner {
            fn kind(&self) -> SchedulerKind {
                match self {
                    $(Inner::$variant(_) => SchedulerKind::$variant,)*
                    Inner::ThreadPerCore(_) => SchedulerKind::ThreadPerCore,
                    Inner::Custom(_, kind) => *kind,
                }
            }
        }
    };
}
crate::builtins::builtin_policies!(declare_inner, []);

/// `$body` with `$s` bound to the runtime's `Arc<Shared<P>>`, `$tpc` with
/// `$t` bound to the `thread-per-core` cores, or `$custom` with `$c` bound
/// to a registered policy's `DynSched`.
macro_rules! with_shared {
    ($handle:expr, $s:ident => $body:expr, $t:ident => $tpc:expr, $c:ident => $custom:expr) => {
        crate::builtins::builtin_policies!(with_shared_arms, [$handle, $s, $body, $t, $tpc, $c, $custom])
    };
}

/// The `match` of `with_shared!`, one arm per built-in policy.
macro_rules! with_shared_arms {
    ([$handle:expr, $s:ident, $body:expr, $t:ident, $tpc:expr, $c:ident, $custom:expr]
     $($variant:ident => $module:ident :: $policy:ident,)*) => {
        match &$handle.inner {
            $(Inner::$variant($s) => $body,)*
            Inner::ThreadPerCore($t) => $tpc,
            Inner::Custom($c, _) => $custom,
        }
    };
}

impl Handle {
    /// The handle of a registered policy's runtime.
    pub(crate) fn custom<P: Policy>(shared: Arc<Shared<P>>, kind: SchedulerKind) -> Handle {
        Handle { inner: Inner::Custom(DynSched(shared), kind) }
    }
}

impl From<Arc<ThreadPerCore<Handle>>> for Handle {
    fn from(t: Arc<ThreadPerCore<Handle>>) -> Handle {
        Handle { inner: Inner::ThreadPerCore(t) }
    }
}

/// A cheap, cloneable reference to a runtime: spawn onto it from any
/// thread. Clone + Send + Sync.
#[derive(Clone)]
pub struct Handle {
    inner: Inner,
}

impl Handle {
    /// The handle of the runtime this thread is in.
    ///
    /// # Panics
    /// Outside a runtime.
    pub fn current() -> Handle {
        with_handle(Handle::clone)
    }

    /// The handle of the runtime this thread is in, if any.
    pub fn try_current() -> Option<Handle> {
        HANDLE.with(|h| h.borrow().clone())
    }

    /// Spawns a task.
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        with_shared!(self, s => s.spawn(future), t => t.pick().spawn(future), c => c.spawn(future))
    }

    /// Spawns a task on worker `index` (modulo the worker count) of a
    /// `thread-per-core` runtime; on every other policy, the same as
    /// [`Handle::spawn`] (their workers share or steal work).
    pub fn spawn_on<F>(&self, index: usize, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match &self.inner {
            Inner::ThreadPerCore(t) => t.core(index).spawn(future),
            _ => self.spawn(future),
        }
    }

    /// Runs `f` on the blocking pool.
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        with_shared!(self, s => s.blocking.spawn(self, f), t => t.pick().spawn_blocking(f), c => c.0.blocking().spawn(self, f))
    }

    /// A snapshot of the per-worker and driver counters.
    pub fn metrics(&self) -> RuntimeMetrics {
        with_shared!(self, s => s.metrics(), t => t.metrics(Handle::metrics), c => c.0.metrics())
    }

    /// Starts a new measurement window for the peak counters (the `_max`
    /// ones, e.g. `timer_lateness_us_max`): they restart from 0, so a later
    /// [`Handle::metrics`] reports the largest value since this call, not
    /// since the runtime was built. Cumulative counters are unaffected.
    pub fn reset_peak_metrics(&self) {
        with_shared!(self, s => s.driver_handle.reset_peaks(), t => t.cores().iter().for_each(Handle::reset_peak_metrics), c => c.0.driver_handle().reset_peaks())
    }

    /// The scheduling policy.
    pub fn kind(&self) -> SchedulerKind {
        self.inner.kind()
    }

    /// Worker threads.
    pub fn workers(&self) -> usize {
        with_shared!(self, s => s.workers, t => t.workers(), c => c.0.workers())
    }

    /// Tasks alive (spawned and not yet completed).
    pub fn alive_tasks(&self) -> usize {
        with_shared!(self, s => s.owned.len(), t => t.cores().iter().map(Handle::alive_tasks).sum(), c => c.0.owned().len())
    }

    pub(crate) fn driver_handle(&self) -> driver::Handle {
        with_shared!(self, s => s.driver_handle.clone(), t => t.core(0).driver_handle(), c => c.0.driver_handle().clone())
    }

    /// Shuts the runtime's own workers down; `thread-per-core` has none
    /// (its parts shut down their own).
    fn shutdown(&self, timeout: Duration) -> bool {
        with_shared!(self, s => s.shutdown(timeout), _t => true, c => c.0.shutdown(timeout))
    }
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle").field("kind", &self.kind()).field("workers", &self.workers()).finish()
    }
}

/// Spawns a task onto the runtime this thread is in.
///
/// # Panics
/// Outside a runtime (not a task, `block_on`, or blocking-pool thread).
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    with_handle(|h| h.spawn(future))
}

/// Runs `f` on the current runtime's blocking pool.
///
/// # Panics
/// Outside a runtime.
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    with_handle(|h| h.spawn_blocking(f))
}

/// A running runtime: its worker threads, driver and blocking pool.
/// Dropping it shuts it down (waiting up to 10 s for the workers).
pub struct Runtime {
    handle: Handle,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// Runtimes this one is made of (`thread-per-core`'s cores); empty
    /// otherwise.
    parts: Vec<Runtime>,
    done: bool,
}

impl Runtime {
    pub(crate) fn new(handle: Handle, threads: Vec<std::thread::JoinHandle<()>>) -> Runtime {
        Runtime { handle, threads, parts: Vec::new(), done: false }
    }

    /// A runtime made of `parts`, reached through `handle`.
    pub(crate) fn from_parts(handle: Handle, parts: Vec<Runtime>) -> Runtime {
        Runtime { handle, threads: Vec::new(), parts, done: false }
    }

    /// Runs `future` to completion on the calling thread, in the runtime's
    /// context (so it can `spawn`, sleep and do I/O).
    ///
    /// On a `current-thread` runtime built without a driver thread (the
    /// default, see [`Builder::driver_thread`](super::Builder::driver_thread))
    /// the scheduler itself runs here, as in tokio's current_thread: tasks,
    /// I/O and timers run on this thread while it waits, and only then (a
    /// second concurrent `block_on` polls its future on its own thread
    /// until the first one returns, then takes over). Elsewhere tasks run
    /// on the workers.
    ///
    /// # Panics
    /// When called from a worker thread of any wsbench runtime (including
    /// from inside a task of a `current-thread` runtime driven by
    /// `block_on`), or when `future` panics.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        assert!(
            !context::is_worker(),
            "Runtime::block_on called from inside a worker thread of a wsbench runtime: a worker must never block; spawn the future and .await its JoinHandle instead"
        );
        let _enter = enter(self.handle.clone());
        match &self.handle.inner {
            Inner::CurrentThread(s) if s.is_driven_by_block_on() => block_on::block_on_driving(s, future),
            _ => block_on::block_on(future),
        }
    }

    /// Spawns a task from outside.
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Runs `f` on the blocking pool.
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle.spawn_blocking(f)
    }

    /// A cloneable handle.
    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }

    /// A snapshot of the counters.
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }

    /// The scheduling policy.
    pub fn kind(&self) -> SchedulerKind {
        self.handle.kind()
    }

    /// Worker threads.
    pub fn workers(&self) -> usize {
        self.handle.workers()
    }

    /// Shuts down: stops the workers, cancels (drops) every pending task
    /// exactly once, closes sockets and timers, and waits up to `timeout`
    /// for workers and blocking threads. Returns whether everything stopped
    /// in time (threads still running are detached).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> bool {
        self.shutdown_inner(timeout)
    }

    fn shutdown_inner(&mut self, timeout: Duration) -> bool {
        if self.done {
            return true;
        }
        self.done = true;
        let deadline = std::time::Instant::now() + timeout;
        let mut clean = true;
        for part in &mut self.parts {
            clean &= part.shutdown_inner(deadline.saturating_duration_since(std::time::Instant::now()));
        }
        clean &= self.handle.shutdown(timeout);
        let threads = std::mem::take(&mut self.threads);
        if clean {
            join_workers(threads);
        }
        clean
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown_inner(DROP_SHUTDOWN_TIMEOUT);
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.handle.fmt(f)
    }
}
