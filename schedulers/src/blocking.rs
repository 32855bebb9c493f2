//! The blocking pool: `spawn_blocking` runs closures on separate threads
//! that never run async tasks. Threads are started on demand up to a limit
//! (default 512) and exit after an idle keep-alive (default 10 s). The
//! closure is wrapped in a task so that its `JoinHandle` is the same type
//! as an async task's.
//!
//! Every acquisition of the pool's one lock first tries it and counts one
//! that finds it held (`lock_contended`, the `blocking_lock_contended`
//! figure of `RuntimeMetrics`): the blocking pool's lock contention,
//! measured, which `blocking-storm` reads.
//!
//! The protocol, all under the pool's one lock:
//! 1. `spawn` refuses (cancels) after shutdown; otherwise it queues the job
//!    and, when an idle thread has no pending wake-up yet
//!    (`idle > wakeups`), counts one and notifies `work`; else it starts a
//!    thread while under `max_threads`.
//! 2. A thread runs queued jobs (without the lock), then exits if the pool
//!    is shut down, else counts itself idle and waits on `work` for at most
//!    the keep-alive.
//! 3. Woken, it consumes a pending wake-up if there is one (a job was
//!    queued for an idle thread: it may have been this one, or one whose
//!    own notify went to a thread that had already timed out); otherwise,
//!    timed out with nothing queued, it exits. The exit and the
//!    `threads -= 1` happen under the same lock as step 1's check, so a
//!    spawn either sees the thread idle (and its wake-up is consumed by
//!    some idle thread) or sees it gone (and starts another).
//! 4. `shutdown` sets the flag, cancels what is queued, wakes every idle
//!    thread and waits (bounded) until the last one signals `all_exited`.
//!
//! Synchronisation goes through the crate's `loom` facade; the loom model
//! is `loom_tests/blocking.rs`. loom's `Condvar::wait_timeout` never times
//! out, so under `cfg(loom)` the keep-alive expiry is an explicit step
//! (`expire_keep_alive`) that the model runs at any point.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::loom::lock_counted;
use crate::loom::sync::atomic::{AtomicU64, Ordering};
use crate::loom::sync::{Arc, Condvar, Mutex, MutexGuard};
use crate::loom::thread;

use crate::runtime::context::Enter;
use crate::task::join::JoinHandle;
use crate::task::raw::{new_task, CellAlign, Notified, RawTask, Schedule, Task};

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
    /// Model only: the keep-alive has run out for every wait from now on.
    #[cfg(loom)]
    keep_alive_expired: bool,
}

struct Inner {
    state: Mutex<State>,
    work: Condvar,
    /// Signalled when the last thread exits after shutdown.
    all_exited: Condvar,
    max_threads: usize,
    #[cfg_attr(loom, allow(dead_code))] // reason: the model's expiry is an explicit step
    keep_alive: Duration,
    thread_name: String,
    spawned: AtomicU64,
    /// Acquisitions of `state` that found it held (a statistic; see
    /// [`BlockingPool::lock_contended`]).
    contended: AtomicU64,
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
        let state = State {
            queue: VecDeque::new(),
            threads: 0,
            idle: 0,
            wakeups: 0,
            shutdown: false,
            #[cfg(loom)]
            keep_alive_expired: false,
        };
        BlockingPool {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                work: Condvar::new(),
                all_exited: Condvar::new(),
                max_threads,
                keep_alive,
                thread_name: format!("{thread_name}-blocking"),
                spawned: AtomicU64::new(0),
                contended: AtomicU64::new(0),
            }),
        }
    }

    /// Runs `f` on a pool thread; a thread it starts runs inside `cx` (the
    /// runtime's context: its handle, so that `spawn` works there).
    pub(crate) fn spawn<H: Enter, F, R>(&self, cx: &H, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.spawn_in(Some(cx), f)
    }

    /// `spawn` for the loom model, which has no runtime to enter.
    #[cfg(loom)]
    pub(crate) fn spawn_without_runtime<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.spawn_in(None::<&()>, f)
    }

    /// Step 1 of the module doc; a thread it starts enters `cx`.
    fn spawn_in<H: Enter, F, R>(&self, cx: Option<&H>, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let (task, notified, raw) = new_task(BlockingTask(Some(f)), NoSchedule, 0, CellAlign::NATURAL);
        // SAFETY: `raw` carries the JoinHandle reference; output type R.
        let join = unsafe { JoinHandle::new(raw) };
        let mut state = self.inner.lock_state();
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
            self.start_thread(cx);
        }
        join
    }

    fn start_thread<H: Enter>(&self, cx: Option<&H>) {
        let inner = self.inner.clone();
        let cx = cx.cloned();
        // Relaxed: a statistic.
        self.inner.spawned.fetch_add(1, Ordering::Relaxed);
        let started = thread::Builder::new().name(inner.thread_name.clone()).spawn(move || blocking_thread(inner, cx));
        if started.is_err() {
            // Could not start a thread: the queued job waits for an existing
            // one; with none at all it is cancelled at shutdown.
            let mut state = self.inner.lock_state();
            state.threads -= 1;
        }
    }

    pub(crate) fn threads_spawned(&self) -> u64 {
        // Relaxed: a statistic.
        self.inner.spawned.load(Ordering::Relaxed)
    }

    /// Acquisitions of the pool's lock that found it held, since the pool
    /// was made: every `lock` of the protocol above (spawn, a thread
    /// taking its next job or going idle, exit, shutdown) first tries the
    /// lock ([`lock_counted`]); the re-acquisition inside a condition
    /// variable's wait is not counted.
    pub(crate) fn lock_contended(&self) -> u64 {
        // Relaxed: a statistic.
        self.inner.contended.load(Ordering::Relaxed)
    }

    /// Model only: the keep-alive runs out now for every idle thread and
    /// every later wait (a timed-out wait releases the lock and takes it
    /// again, as a real one does after the keep-alive).
    #[cfg(loom)]
    pub(crate) fn expire_keep_alive(&self) {
        let mut state = self.inner.lock_state();
        state.keep_alive_expired = true;
        self.inner.work.notify_all();
    }

    /// Model only: threads started and not yet exited.
    #[cfg(loom)]
    pub(crate) fn threads(&self) -> usize {
        self.inner.lock_state().threads
    }

    /// Holds the pool's lock (without counting) until the result drops:
    /// lets a test make another thread's acquisition contended.
    #[cfg(all(test, not(loom)))]
    fn hold_lock(&self) -> impl Sized + '_ {
        self.inner.state.lock().unwrap()
    }

    /// Cancels queued jobs and waits up to `timeout` for running ones.
    pub(crate) fn shutdown(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut state = self.inner.lock_state();
        state.shutdown = true;
        let queued: Vec<Job> = state.queue.drain(..).collect();
        self.inner.work.notify_all();
        drop(state);
        for (task, notified) in queued {
            drop(notified);
            task.shutdown();
        }
        let mut state = self.inner.lock_state();
        while state.threads > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            state = self.inner.all_exited.wait_timeout(state, left).unwrap().0;
        }
    }
}

impl Inner {
    /// The pool's lock, counted when contended.
    fn lock_state(&self) -> MutexGuard<'_, State> {
        lock_counted(&self.state, &self.contended)
    }

    /// Waits on `work` for at most the keep-alive; `true` when it timed out.
    #[cfg(not(loom))]
    fn wait_for_work<'a>(&'a self, state: MutexGuard<'a, State>) -> (MutexGuard<'a, State>, bool) {
        let (state, timeout) = self.work.wait_timeout(state, self.keep_alive).unwrap();
        (state, timeout.timed_out())
    }

    /// loom's `wait_timeout` never times out: a wait times out once the
    /// model has run `expire_keep_alive` (before the wait: the lock is
    /// released and taken again; during it: its `notify_all` ends it).
    #[cfg(loom)]
    fn wait_for_work<'a>(&'a self, state: MutexGuard<'a, State>) -> (MutexGuard<'a, State>, bool) {
        if state.keep_alive_expired {
            drop(state);
            return (self.lock_state(), true);
        }
        let state = self.work.wait(state).unwrap();
        let timed_out = state.keep_alive_expired;
        (state, timed_out)
    }
}

/// A pool thread, inside its runtime's context (`cx` is `None` only in the
/// model).
fn blocking_thread<H: Enter>(inner: Arc<Inner>, cx: Option<H>) {
    match cx {
        Some(cx) => cx.run_in(|| run_jobs(&inner)),
        None => run_jobs(&inner),
    }
}

/// Steps 2 and 3 of the module doc.
fn run_jobs(inner: &Inner) {
    let mut state = inner.lock_state();
    loop {
        while let Some((task, notified)) = state.queue.pop_front() {
            drop(state);
            drop(task);
            notified.run();
            state = inner.lock_state();
        }
        if state.shutdown {
            break;
        }
        state.idle += 1;
        let (next, timed_out) = inner.wait_for_work(state);
        state = next;
        state.idle -= 1;
        if state.wakeups > 0 {
            state.wakeups -= 1;
            continue;
        }
        if timed_out && state.queue.is_empty() {
            break;
        }
    }
    state.threads -= 1;
    if state.threads == 0 {
        inner.all_exited.notify_all();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// `lock_contended` counts acquisitions that found the pool's lock
    /// held. A pool allowed no thread queues every job and nothing else
    /// takes its lock: spawns count nothing; one spawn from a thread while
    /// the test holds the lock counts exactly one (its `try_lock` fails
    /// once, then it waits); shutdown (uncontended) adds nothing.
    #[test]
    fn a_spawn_while_the_pool_is_locked_counts_one_contention() {
        let pool = BlockingPool::new(0, Duration::from_secs(10), "test");
        drop(pool.spawn(&(), || 1));
        drop(pool.spawn(&(), || 2));
        assert_eq!(pool.lock_contended(), 0, "uncontended");
        std::thread::scope(|s| {
            let guard = pool.hold_lock();
            let spawner = s.spawn(|| drop(pool.spawn(&(), || 3)));
            let start = Instant::now();
            while pool.lock_contended() == 0 {
                assert!(start.elapsed() < Duration::from_secs(20), "the blocked spawn was not counted");
                std::thread::sleep(Duration::from_millis(1));
            }
            drop(guard);
            spawner.join().unwrap();
        });
        assert_eq!(pool.lock_contended(), 1);
        assert_eq!(pool.inner.lock_state().queue.len(), 3);
        pool.shutdown(Duration::from_secs(1));
        assert_eq!(pool.lock_contended(), 1, "shutdown locks uncontended");
    }
}
