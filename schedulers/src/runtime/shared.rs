//! State shared by all workers of one runtime, generic over the policy, and
//! the `Schedule` implementation that routes every wake.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use super::core::Dormant;
use super::delay::SchedDelay;
use super::idle::Idle;
use super::park::Unparker;
use crate::blocking::BlockingPool;
use crate::driver::{self, Driver};
use crate::knobs::Knobs;
use crate::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use crate::loom::sync::{Condvar, Mutex};
use crate::metrics::{CounterBlocks, RuntimeMetrics};
use crate::policy::{Origin, Policy, Wake};
use crate::task::owned::OwnedTasks;
use crate::task::raw::{new_task, CellAlign, Notified, Schedule};
use crate::task::JoinHandle;

pub(crate) struct Shared<P: Policy> {
    pub(crate) policy: P,
    pub(crate) idle: Idle,
    pub(crate) owned: OwnedTasks,
    pub(crate) unparkers: Box<[Unparker]>,
    /// Held by the worker blocked in it (try_lock; see `park.rs`).
    pub(crate) driver: Mutex<Driver>,
    pub(crate) driver_handle: driver::Handle,
    pub(crate) counters: CounterBlocks,
    /// `sched-delay=on`: the schedule-delay clock and buckets (`delay.rs`);
    /// `None` when off.
    pub(crate) sched_delay: Option<SchedDelay>,
    /// Spawns from outside the workers (any thread, so an RMW counter).
    remote_spawns: CachePadded<AtomicU64>,
    shutdown: AtomicBool,
    pub(crate) knobs: Knobs,
    /// `knobs.task_align`, in the form `new_task` takes.
    cell_align: CellAlign,
    pub(crate) blocking: BlockingPool,
    pub(crate) workers: usize,
    /// Workers that have left their loop; guarded count + condvar.
    exited: Mutex<usize>,
    exited_cv: Condvar,
    /// `current-thread` driven by `block_on`: the core while no `block_on`
    /// runs it, and the `block_on`s waiting for it (see `block_on.rs`).
    dormant: Mutex<DormantSlot<P>>,
}

/// The one core of a runtime driven by `block_on`, and who waits for it.
pub(crate) struct DormantSlot<P: Policy> {
    /// `Some` while no thread drives the core; always `None` on runtimes
    /// with worker threads.
    core: Option<Dormant<P>>,
    /// Whether this runtime is driven by `block_on` at all.
    driven_by_block_on: bool,
    /// `block_on` callers waiting for the core (woken when it is put back).
    waiters: Vec<std::task::Waker>,
}

impl<P: Policy> Shared<P> {
    pub(crate) fn new(
        policy: P,
        knobs: Knobs,
        workers: usize,
        unparkers: Box<[Unparker]>,
        driver: Driver,
        driver_handle: driver::Handle,
        blocking: BlockingPool,
    ) -> Shared<P> {
        Shared {
            policy,
            idle: Idle::new(workers, knobs.searching_limit),
            owned: OwnedTasks::new(workers),
            unparkers,
            driver: Mutex::new(driver),
            driver_handle,
            counters: crate::metrics::counter_blocks(workers),
            sched_delay: knobs.sched_delay.then(|| SchedDelay::new(workers)),
            remote_spawns: CachePadded::new(AtomicU64::new(0)),
            shutdown: AtomicBool::new(false),
            cell_align: CellAlign::new(knobs.task_align.bytes()),
            knobs,
            blocking,
            workers,
            exited: Mutex::new(0),
            exited_cv: Condvar::new(),
            dormant: Mutex::new(DormantSlot { core: None, driven_by_block_on: false, waiters: Vec::new() }),
        }
    }

    /// Makes this a runtime driven by `block_on`: `dormant` is its core,
    /// and no worker thread runs it (it counts as exited for shutdown).
    pub(crate) fn park_dormant(&self, dormant: Dormant<P>) {
        let mut slot = self.dormant.lock().unwrap();
        slot.core = Some(dormant);
        slot.driven_by_block_on = true;
        drop(slot);
        self.worker_exited();
    }

    /// Whether `block_on` drives this runtime's core.
    pub(crate) fn is_driven_by_block_on(&self) -> bool {
        self.dormant.lock().unwrap().driven_by_block_on
    }

    /// Takes the core to drive it from `block_on`; when another `block_on`
    /// has it, registers `waker` to be woken when it is put back (under
    /// the same lock, so that a put-back cannot slip in between).
    pub(crate) fn take_dormant(&self, waker: &std::task::Waker) -> Option<Dormant<P>> {
        let mut slot = self.dormant.lock().unwrap();
        let core = slot.core.take();
        if core.is_none() && !slot.waiters.iter().any(|w| w.will_wake(waker)) {
            slot.waiters.push(waker.clone());
        }
        core
    }

    /// Puts the core back after a `block_on` and wakes the `block_on`s
    /// waiting for it.
    pub(crate) fn put_dormant(&self, dormant: Dormant<P>) {
        let mut slot = self.dormant.lock().unwrap();
        assert!(slot.core.is_none(), "two block_on calls drove one current-thread core");
        slot.core = Some(dormant);
        let waiters = std::mem::take(&mut slot.waiters);
        drop(slot);
        waiters.into_iter().for_each(std::task::Waker::wake);
    }

    pub(crate) fn addr(&self) -> usize {
        self as *const Shared<P> as usize
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        // Acquire: pairs with the Release in `begin_shutdown`.
        self.shutdown.load(Ordering::Acquire)
    }

    pub(crate) fn spawn<F>(self: &Arc<Self>, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        spawn_task(&self.owned, self.cell_align, self.clone(), future, |n| self.schedule_task(n, Origin::Spawn))
    }

    pub(crate) fn cell_align(&self) -> CellAlign {
        self.cell_align
    }

    /// Stamps `task` as scheduled now, when schedule delay is measured
    /// (`delay.rs`, step 1); call just before handing it to the policy.
    #[inline(always)]
    pub(crate) fn stamp_scheduled(&self, task: &Notified) {
        if let Some(d) = &self.sched_delay {
            d.stamp(task);
        }
    }

    pub(crate) fn push_remote(&self, task: Notified, origin: Origin) {
        if origin == Origin::Spawn {
            // Relaxed: a statistic.
            self.remote_spawns.fetch_add(1, Ordering::Relaxed);
        }
        match self.policy.push_remote(task) {
            Ok(Wake::Any) => self.notify_parked(),
            Ok(Wake::Worker(i)) => {
                if self.idle.notify_worker(i) {
                    self.unparkers[i].unpark();
                }
            }
            // Closed by shutdown: the task was (or will be) cancelled.
            Err(task) => drop(task),
        }
    }

    pub(crate) fn notify_parked(&self) {
        if let Some(i) = self.idle.worker_to_notify() {
            self.unparkers[i].unpark();
        }
    }

    pub(crate) fn metrics(&self) -> RuntimeMetrics {
        let mut workers: Vec<_> = self.counters.iter().map(|c| c.snapshot()).collect();
        // Remote spawns are counted per runtime; reported on worker 0.
        // Relaxed: a statistic.
        workers[0].spawns_remote += self.remote_spawns.load(Ordering::Relaxed);
        let mut driver = self.driver_handle.metrics();
        driver.blocking_threads_spawned = self.blocking.threads_spawned();
        let global_queue_intervals = self
            .counters
            .iter()
            // Relaxed: a statistic (see `metrics.rs`).
            .map(|c| match c.global_interval.load(Ordering::Relaxed) {
                0 => None,
                n => Some(u32::try_from(n).unwrap_or(u32::MAX)),
            })
            .collect();
        let inject_lock_contended = self.policy.inject_lock_contended();
        let steal_groups_counted = self.policy.counts_steal_groups();
        let task_registry_contended = self.owned.lock_contended();
        let blocking_lock_contended = self.blocking.lock_contended();
        RuntimeMetrics {
            workers,
            driver,
            global_queue_intervals,
            inject_lock_contended,
            task_registry_contended,
            blocking_lock_contended,
            steal_groups_counted,
            sched_delay: self.sched_delay.as_ref().map(SchedDelay::snapshot),
        }
    }

    pub(crate) fn worker_exited(&self) {
        *self.exited.lock().unwrap() += 1;
        self.exited_cv.notify_all();
    }

    /// Shutdown, in order:
    /// 1. set the flag and wake every worker; wait (up to `timeout`) for
    ///    them to leave their loops (each drains its own core);
    /// 2. close the owned list and cancel every remaining task;
    /// 3. close and drain the shared queues;
    /// 4. shut the driver and the blocking pool down.
    ///
    /// Returns whether every worker exited in time.
    pub(crate) fn shutdown(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        // Release: pairs with the Acquire in `is_shutdown`.
        self.shutdown.store(true, Ordering::Release);
        for u in self.unparkers.iter() {
            u.unpark();
        }
        let all_exited = self.wait_workers(deadline);
        // The core of a runtime driven by `block_on` holds tasks too (no
        // `block_on` runs during shutdown: it borrows the `Runtime`).
        if let Some(mut dormant) = self.dormant.lock().unwrap().core.take() {
            let mut leftover = Vec::new();
            self.policy.drain_core(&mut dormant.core.policy, &mut leftover);
            drop(leftover);
        }
        self.owned.close();
        self.owned.shutdown_all();
        let mut queued = Vec::new();
        self.policy.close_shared(&mut queued);
        drop(queued);
        // A worker that missed the deadline may still be parked on the
        // driver: interrupt it, then wait for the lock.
        self.driver_handle.unpark();
        self.driver.lock().unwrap().shutdown();
        self.blocking.shutdown(deadline.saturating_duration_since(Instant::now()));
        all_exited
    }

    fn wait_workers(&self, deadline: Instant) -> bool {
        let mut exited = self.exited.lock().unwrap();
        while *exited < self.workers {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            exited = self.exited_cv.wait_timeout(exited, left).unwrap().0;
        }
        true
    }
}

/// Allocates a task whose scheduler is `scheduler`, binds it to `owned`
/// and hands its first `Notified` to `schedule` (unless the list is
/// closed: then the task is cancelled and the handle reports that).
pub(crate) fn spawn_task<F, S>(
    owned: &OwnedTasks,
    align: CellAlign,
    scheduler: S,
    future: F,
    schedule: impl FnOnce(Notified),
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    let id = owned.next_id();
    let (task, notified, raw) = new_task(future, scheduler, id, align);
    // SAFETY: `raw` carries the JoinHandle reference of a task whose
    // output type is `F::Output`.
    let join = unsafe { JoinHandle::new(raw) };
    if let Some(notified) = owned.bind(task, notified) {
        schedule(notified);
    }
    join
}
