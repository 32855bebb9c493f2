//! smol as a reference: one `async-executor` run by N threads, with
//! `async-io` for timers and sockets (each runner drives the async-io
//! reactor while it waits, as `smol` does). No counters: smol keeps none.
//!
//! async-executor re-raises a task's panic in whoever awaits its `Task`;
//! every future is wrapped in `catch_unwind` so a panic becomes
//! [`TaskFailed::Panicked`] as on the other runtimes. Dropping an
//! async-executor `Task` cancels it; [`SmolJoin`] detaches instead, so
//! dropping a join handle means the same thing on every runtime.

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use async_executor::{Executor, Task};
use async_io::{Async, Timer};
use futures_lite::{AsyncReadExt, AsyncWriteExt, FutureExt};
use tokio::sync::oneshot;

use super::hyper_io::{SmolExec, SmolIo, SmolTimerGlue};
use super::listen::bind_listener;
use super::{no_counters, serve_connection, CounterValues, Rt, ServeHttp, Spawner, TaskFailed};
use crate::affinity::pin_current;
use crate::api::RuntimeSpec;
use crate::Error;

/// An async-executor run by `spec.workers()` dedicated threads.
pub(crate) struct Smol {
    executor: Arc<Executor<'static>>,
    stops: Vec<oneshot::Sender<()>>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Smol {
    pub(crate) fn build(spec: &RuntimeSpec) -> Result<Self, Error> {
        let executor = Arc::new(Executor::new());
        let mut smol = Smol { executor, stops: Vec::new(), threads: Vec::new() };
        for index in 0..spec.workers() {
            let (stop_tx, stop_rx) = oneshot::channel::<()>();
            let ex = Arc::clone(&smol.executor);
            let cores = spec.worker_cores.clone();
            let thread = thread::Builder::new()
                .name(format!("smol-worker-{index}"))
                .spawn(move || {
                    pin_current(&cores, index);
                    // Err only means the sender was dropped: also a stop.
                    let _stopped = async_io::block_on(ex.run(stop_rx));
                })
                .map_err(|e| Error::io("starting a smol worker thread", e))?;
            smol.stops.push(stop_tx);
            smol.threads.push(thread);
        }
        Ok(smol)
    }

    fn stop_now(&mut self) {
        for stop in self.stops.drain(..) {
            // Err: that runner already returned.
            let _ = stop.send(());
        }
        for t in self.threads.drain(..) {
            // A panic on a runner thread was already reported by the hook.
            let _ = t.join();
        }
    }
}

impl Drop for Smol {
    fn drop(&mut self) {
        self.stop_now();
    }
}

impl Rt for Smol {
    type Spawner = SmolSpawner;

    fn spawner(&self) -> SmolSpawner {
        SmolSpawner { executor: Arc::clone(&self.executor) }
    }

    fn block_on<F>(&self, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // The caller is not a runner: `f` runs here, its spawns go to the
        // executor, and its timers and sockets are driven by async-io.
        async_io::block_on(f)
    }

    fn shutdown(mut self, _grace: Duration) {
        self.stop_now();
    }
}

/// Handle to the shared executor.
#[derive(Clone)]
pub(crate) struct SmolSpawner {
    executor: Arc<Executor<'static>>,
}

/// An async-executor `Task` that detaches on drop and reports panics as
/// [`TaskFailed::Panicked`].
pub(crate) struct SmolJoin<T> {
    task: Option<Task<thread::Result<T>>>,
}

impl<T> Future for SmolJoin<T> {
    type Output = Result<T, TaskFailed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let task = self.task.as_mut().expect("SmolJoin polled after it completed");
        let out = Pin::new(task).poll(cx);
        if out.is_ready() {
            self.task = None;
        }
        out.map(|r| r.map_err(|_panic| TaskFailed::Panicked))
    }
}

impl<T> Drop for SmolJoin<T> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.detach();
        }
    }
}

impl SmolSpawner {
    fn spawn_caught<F>(&self, f: F) -> SmolJoin<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        SmolJoin { task: Some(self.executor.spawn(AssertUnwindSafe(f).catch_unwind())) }
    }
}

impl Spawner for SmolSpawner {
    type Join<T: Send + 'static> = SmolJoin<T>;
    type Listener = Async<TcpListener>;
    type Stream = Async<TcpStream>;

    fn spawn<F>(&self, f: F) -> SmolJoin<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_caught(f)
    }

    fn spawn_inside<F>(&self, f: F) -> SmolJoin<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // async-executor has one spawn path; it picks the queue itself.
        self.spawn_caught(f)
    }

    fn spawn_blocking<F, T>(&self, f: F) -> SmolJoin<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        // smol's own `unblock`: the `blocking` crate's pool, one per
        // process (not per executor), as in every smol program.
        SmolJoin { task: Some(blocking::unblock(move || std::panic::catch_unwind(AssertUnwindSafe(f)))) }
    }

    fn yield_now(&self) -> impl Future<Output = ()> + Send {
        futures_lite::future::yield_now()
    }

    async fn sleep(&self, d: Duration) {
        Timer::after(d).await;
    }

    async fn timeout<F>(&self, d: Duration, f: F) -> Option<F::Output>
    where
        F: Future + Send,
    {
        let deadline = async {
            Timer::after(d).await;
            None
        };
        async { Some(f.await) }.or(deadline).await
    }

    async fn listen(&self, addr: SocketAddr) -> io::Result<Self::Listener> {
        Async::new(bind_listener(addr, false)?)
    }

    fn local_addr(&self, listener: &Self::Listener) -> io::Result<SocketAddr> {
        listener.get_ref().local_addr()
    }

    async fn accept<'a>(&'a self, listener: &'a Self::Listener) -> io::Result<Self::Stream> {
        let (stream, _peer) = listener.accept().await?;
        stream.get_ref().set_nodelay(true)?;
        Ok(stream)
    }

    async fn connect(&self, addr: SocketAddr) -> io::Result<Self::Stream> {
        let stream = Async::<TcpStream>::connect(addr).await?;
        stream.get_ref().set_nodelay(true)?;
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
        let exec = SmolExec(Arc::clone(&self.executor));
        serve_connection(SmolIo::new(stream), exec, SmolTimerGlue, svc).await.map_err(|e| e.to_string())
    }

    fn counters(&self) -> CounterValues {
        no_counters()
    }
}
