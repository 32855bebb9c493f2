//! The blocking pool: `spawn_blocking` runs closures on separate threads
//! that never run async tasks. Threads are started on demand up to a limit
//! (default 512) and exit after an idle keep-alive (default 10 s). The
//! closure is wrapped in a task so that its `JoinHandle` is the same type
//! as an async task's.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::runtime::{context, Handle};
use crate::task::join::JoinHandle;
use crate::task::raw::{new_task, CellAlign, Notified, RawTask, Schedule, Task};

/// Runs `f` on the current runtime's blocking pool.
///
/// # Panics
/// Outside a runtime.
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    context::with_handle(|h| h.spawn_blocking(f))
}

/// A queued job: the list reference (so shutdown can cancel it) and the
/// reference that runs it.
type Job = (Task, Notified);

struct State {
    queue: VecDeque<Job>,
    threads: usize,
    idle: usize,
    /// Notifications sent to idle threads not yet consumed.
    wakeups: usize,
    shutdown: bool,
}

struct Inner {
    state: Mutex<State>,
    work: Condvar,
    /// Signalled when the last thread exits after shutdown.
    all_exited: Condvar,
    max_threads: usize,
    keep_alive: Duration,
    thread_name: String,
    spawned: AtomicU64,
}

pub(crate) struct BlockingPool {
    inner: Arc<Inner>,
}

/// The blocking tasks' scheduler: they never yield, so `schedule` is only
/// reachable through a stray waker clone, and they are not in any owned
/// list (the pool's queue plays that role).
struct NoSchedule;

impl Schedule for NoSchedule {
    fn schedule(&self, task: Notified) {
        // A blocking closure never returns Pending; a stray wake after it
        // ran finds the task complete and never gets here.
        drop(task);
    }

    fn release(&self, _task: RawTask) -> Option<Task> {
        None
    }
}

struct BlockingTask<F>(Option<F>);

// The closure is moved out, never pinned in place.
impl<F> Unpin for BlockingTask<F> {}

impl<F: FnOnce() -> R, R> Future for BlockingTask<F> {
    type Output = R;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<R> {
        let f = self.0.take().expect("blocking task polled after it completed");
        Poll::Ready(f())
    }
}

impl BlockingPool {
    pub(crate) fn new(max_threads: usize, keep_alive: Duration, thread_name: &str) -> BlockingPool {
        let state = State { queue: VecDeque::new(), threads: 0, idle: 0, wakeups: 0, shutdown: false };
        BlockingPool {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                work: Condvar::new(),
                all_exited: Condvar::new(),
                max_threads,
                keep_alive,
                thread_name: format!("{thread_name}-blocking"),
                spawned: AtomicU64::new(0),
            }),
        }
    }

    pub(crate) fn spawn<F, R>(&self, handle: &Handle, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let (task, notified, raw) = new_task(BlockingTask(Some(f)), NoSchedule, 0, CellAlign::NATURAL);
        // SAFETY: `raw` carries the JoinHandle reference; output type R.
        let join = unsafe { JoinHandle::new(raw) };
        let mut state = self.inner.state.lock().unwrap();
        if state.shutdown {
            drop(state);
            drop(notified);
            task.shutdown();
            return join;
        }
        state.queue.push_back((task, notified));
        if state.idle > state.wakeups {
            state.wakeups += 1;
            self.inner.work.notify_one();
        } else if state.threads < self.inner.max_threads {
            state.threads += 1;
            drop(state);
            self.start_thread(handle);
        }
        join
    }

    fn start_thread(&self, handle: &Handle) {
        let inner = self.inner.clone();
        let handle = handle.clone();
        // Relaxed: a statistic.
        self.inner.spawned.fetch_add(1, Ordering::Relaxed);
        let started =
            std::thread::Builder::new().name(inner.thread_name.clone()).spawn(move || blocking_thread(inner, handle));
        if started.is_err() {
            // Could not start a thread: the queued job waits for an existing
            // one; with none at all it is cancelled at shutdown.
            let mut state = self.inner.state.lock().unwrap();
            state.threads -= 1;
        }
    }

    pub(crate) fn threads_spawned(&self) -> u64 {
        // Relaxed: a statistic.
        self.inner.spawned.load(Ordering::Relaxed)
    }

    /// Cancels queued jobs and waits up to `timeout` for running ones.
    pub(crate) fn shutdown(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut state = self.inner.state.lock().unwrap();
        state.shutdown = true;
        let queued: Vec<Job> = state.queue.drain(..).collect();
        self.inner.work.notify_all();
        drop(state);
        for (task, notified) in queued {
            drop(notified);
            task.shutdown();
        }
        let mut state = self.inner.state.lock().unwrap();
        while state.threads > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            state = self.inner.all_exited.wait_timeout(state, left).unwrap().0;
        }
    }
}

fn blocking_thread(inner: Arc<Inner>, handle: Handle) {
    let _enter = context::enter(handle);
    let mut state = inner.state.lock().unwrap();
    loop {
        while let Some((task, notified)) = state.queue.pop_front() {
            drop(state);
            drop(task);
            notified.run();
            state = inner.state.lock().unwrap();
        }
        if state.shutdown {
            break;
        }
        state.idle += 1;
        let (next, timeout) = inner.work.wait_timeout(state, inner.keep_alive).unwrap();
        state = next;
        state.idle -= 1;
        if state.wakeups > 0 {
            state.wakeups -= 1;
            continue;
        }
        if timeout.timed_out() && state.queue.is_empty() {
            break;
        }
    }
    state.threads -= 1;
    if state.threads == 0 {
        inner.all_exited.notify_all();
    }
}
