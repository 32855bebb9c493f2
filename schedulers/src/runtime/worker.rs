//! The worker loop, written once for every policy.
//!
//! Each iteration is one tick: every `event_interval` ticks the worker polls
//! the driver without blocking and feeds the measured poll time to the
//! policy; then it asks the policy for its next task, and, for stealing
//! policies, searches other workers (subject to the searching throttle);
//! with nothing found it parks (see `idle.rs` for the no-lost-wake-up
//! protocol and `park.rs` for the driver hand-off).
//!
//! Under `timer=per-worker` the worker owns a timer wheel (see
//! `driver/local.rs`): it fires its due timers at every driver poll and
//! after every park, and parks no longer than its next timer.
//!
//! While a task is polled, and while the worker parks or polls the driver,
//! its core sits in `WorkerCx::core`, so a wake on this thread (from that
//! task, or from the driver) reaches the core (LIFO slot / local queue), as
//! in tokio. Tasks that call `yield_now` are deferred and woken, as yields
//! (back of the queue), when the worker runs out of other local work or at
//! its next driver poll.
//!
//! The same loop runs on the thread of a `block_on` (`current-thread`
//! without a driver thread, as in tokio): it then also polls the
//! `block_on` future ([`Main`]) whenever its waker fired, and returns once
//! that future completes (see `block_on.rs`).

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Instant;

use super::context::{self, Enter};
use super::core::Core;
use super::idle::Woken;
use super::park::{Parked, Parker};
use super::shared::Shared;
use crate::coop;
use crate::knobs::IdleMode;
use crate::metrics::Counters;
use crate::policy::{Origin, Policy, WorkerRef};
use crate::task::raw::{Notified, RawTask, Schedule, Task};

/// Spin rounds of `idle=backoff` before yielding the thread.
const BACKOFF_SPINS: u32 = 6;
/// `yield_now` rounds of `idle=backoff` before parking.
const BACKOFF_YIELDS: u32 = 4;

pub(crate) struct WorkerCx<P: Policy> {
    pub(crate) shared: Arc<Shared<P>>,
    pub(crate) index: usize,
    pub(crate) core: RefCell<Option<Box<Core<P>>>>,
    parker: Parker,
    /// Set while the worker parks or polls the driver (and wakes its
    /// deferred tasks): tasks pushed to this core meanwhile come in
    /// batches, so their "wake a peer" requests are collected in
    /// `notify_pending` and acted on once afterwards, as tokio does.
    pub(crate) batching: Cell<bool>,
    pub(crate) notify_pending: Cell<bool>,
    /// Tasks that yielded through their own waker (`yield_now`), held until
    /// this worker runs out of other local work or polls the driver. (Yields
    /// through other wakers wait in the thread's deferred waker list.)
    deferred: RefCell<Vec<Notified>>,
    /// Wakers of this worker's fired timers (`timer=per-worker`), kept to
    /// reuse the allocation.
    timer_wakers: RefCell<Vec<std::task::Waker>>,
}

/// What a worker loop run from `block_on` polls besides tasks: the
/// `block_on` future (see `block_on.rs`). A dedicated worker thread has
/// none (`()`).
pub(crate) trait Main {
    /// Whether its waker fired since it was last polled (a cheap load).
    fn is_woken(&self) -> bool;
    /// Polls it (consuming the wake-up); `true` once it has completed.
    fn poll(&mut self) -> bool;
}

impl Main for () {
    fn is_woken(&self) -> bool {
        false
    }

    fn poll(&mut self) -> bool {
        false
    }
}

/// Runs worker `index` until shutdown, inside `cx` (its runtime's
/// context: the handle its tasks see).
pub(crate) fn worker_main<P: Policy, H: Enter>(
    shared: Arc<Shared<P>>,
    cx: H,
    index: usize,
    policy_core: P::Core,
    parker: Parker,
) {
    cx.run_in(move || run_worker(shared, index, policy_core, parker))
}

fn run_worker<P: Policy>(shared: Arc<Shared<P>>, index: usize, policy_core: P::Core, parker: Parker) {
    let cx = WorkerCx::new(shared.clone(), index, parker);
    let addr = Arc::as_ptr(&shared) as usize;
    let _worker = context::enter_worker(addr, &cx as *const WorkerCx<P> as *const ());
    let _timers = shared.driver_handle.enter_worker_timers(index);
    let core = super::core::new_core::<P>(shared.knobs.event_interval, policy_core);
    let mut core = cx.run(core, &mut ());
    context::clear_deferred();
    drop(cx.deferred.take());
    let mut leftover = Vec::new();
    shared.policy.drain_core(&mut core.policy, &mut leftover);
    drop(leftover);
    if core.is_searching {
        shared.idle.transition_from_searching();
    }
    drop(_worker);
    shared.worker_exited();
}

impl<P: Policy> WorkerCx<P> {
    pub(crate) fn new(shared: Arc<Shared<P>>, index: usize, parker: Parker) -> WorkerCx<P> {
        WorkerCx {
            shared,
            index,
            core: RefCell::new(None),
            parker,
            batching: Cell::new(false),
            notify_pending: Cell::new(false),
            deferred: RefCell::new(Vec::new()),
            timer_wakers: RefCell::new(Vec::new()),
        }
    }

    /// The parker, back to the idle slot after a `block_on` drove it.
    pub(crate) fn into_parker(self) -> Parker {
        self.parker
    }

    fn counters(&self) -> &Counters {
        &self.shared.counters[self.index]
    }

    /// The worker loop; returns at shutdown, or when `main` (the
    /// `block_on` future, when run from `block_on`) has completed.
    pub(crate) fn run<M: Main>(&self, mut core: Box<Core<P>>, main: &mut M) -> Box<Core<P>> {
        let event_interval = self.shared.knobs.event_interval;
        while !self.shared.is_shutdown() {
            if main.is_woken() {
                let done;
                (core, done) = self.poll_main(core, main);
                if done {
                    return core;
                }
            }
            core.tick = core.tick.wrapping_add(1);
            core.maintenance_in -= 1;
            if core.maintenance_in == 0 {
                core.maintenance_in = event_interval;
                core = self.maintenance(core);
            }
            core = match self.find_task(&mut core) {
                Some(task) => self.run_task(core, task),
                // Tasks that yielded come back before we consider parking.
                None if self.has_deferred() => self.poll_driver_and_wake_deferred(core),
                // The `block_on` future is polled at the top of the loop.
                None if main.is_woken() => core,
                None => self.park(core),
            };
        }
        core
    }

    /// Polls the `block_on` future with the core in place, so that its
    /// spawns and wakes on this thread are local pushes.
    fn poll_main<M: Main>(&self, core: Box<Core<P>>, main: &mut M) -> (Box<Core<P>>, bool) {
        *self.core.borrow_mut() = Some(core);
        let done = coop::with_budget(self.shared.knobs.budget, || main.poll());
        let core = self.core.borrow_mut().take().expect("worker core missing after polling the block_on future");
        (core, done)
    }

    /// A `block_on` takes the core up: its busy period and poll-time
    /// window start now.
    pub(crate) fn resume(&self, core: &mut Core<P>) {
        core.busy_since = Instant::now();
        core.window_start = core.busy_since;
    }

    /// A `block_on` puts the core down: tasks that yielded go back to the
    /// queue (they would be lost in this thread's deferred list), and the
    /// busy time so far is counted.
    pub(crate) fn suspend(&self, mut core: Box<Core<P>>) -> Box<Core<P>> {
        if self.has_deferred() {
            core = self.poll_driver_and_wake_deferred(core);
        }
        self.end_window(&mut core);
        self.account_busy(&mut core, Instant::now());
        core
    }

    /// A task polled on this worker yielded; see `deferred`.
    pub(crate) fn defer_yield(&self, task: Notified) {
        self.deferred.borrow_mut().push(task);
    }

    fn has_deferred(&self) -> bool {
        !self.deferred.borrow().is_empty() || context::has_deferred()
    }

    fn worker_ref<'a>(&'a self, core: &Core<P>) -> WorkerRef<'a> {
        WorkerRef { index: self.index, counters: self.counters(), tick: core.tick, is_searching: core.is_searching }
    }

    fn find_task(&self, core: &mut Core<P>) -> Option<Notified> {
        let w = self.worker_ref(core);
        if let Some(task) = self.shared.policy.next_task(&mut core.policy, &w) {
            return Some(task);
        }
        // Out of local work: the window of scheduled tasks ends here.
        self.end_window(core);
        if !P::STEALS {
            return None;
        }
        if !core.is_searching {
            core.is_searching = self.shared.idle.transition_to_searching();
            if !core.is_searching {
                return None;
            }
        }
        let w = self.worker_ref(core);
        let stolen = self.shared.policy.steal(&mut core.policy, &w);
        if stolen.is_some() {
            core.window_start = Instant::now();
        }
        stolen
    }

    fn run_task(&self, mut core: Box<Core<P>>, task: Notified) -> Box<Core<P>> {
        if core.is_searching {
            core.is_searching = false;
            // The last searcher to find work wakes another worker.
            if self.shared.idle.transition_from_searching() {
                self.shared.notify_parked();
            }
        }
        core.woken = false;
        core.window_batches += 1;
        self.count_poll(&task);
        *self.core.borrow_mut() = Some(core);
        coop::with_budget(self.shared.knobs.budget, || {
            task.run();
            // Tasks this one woke into the LIFO slot run next, in the same
            // tick and on the same budget (tokio's run_task loop).
            while let Some(next) = self.next_lifo() {
                self.count_poll(&next);
                next.run();
            }
        });
        self.core.borrow_mut().take().expect("worker core missing after a poll: a task took it")
    }

    /// Every task poll is counted here: `polls`, and its schedule delay
    /// when measured (`delay.rs`, step 2), so the two counts agree.
    #[inline(always)]
    fn count_poll(&self, task: &Notified) {
        Counters::bump(&self.counters().polls, 1);
        if let Some(d) = &self.shared.sched_delay {
            d.record(self.index, task);
        }
    }

    fn next_lifo(&self) -> Option<Notified> {
        let mut slot = self.core.borrow_mut();
        let core = slot.as_mut()?;
        let w = WorkerRef {
            index: self.index,
            counters: self.counters(),
            tick: core.tick,
            is_searching: core.is_searching,
        };
        self.shared.policy.next_lifo(&mut core.policy, &w, coop::has_budget_remaining())
    }

    /// Every `event_interval` ticks: end the poll-time window (feeding
    /// its mean to the policy), poll the driver without blocking, wake
    /// yielded tasks, and start a new window.
    fn maintenance(&self, mut core: Box<Core<P>>) -> Box<Core<P>> {
        self.end_window(&mut core);
        let mut core = self.poll_driver_and_wake_deferred(core);
        let now = core.window_start;
        self.account_busy(&mut core, now);
        core
    }

    /// Feeds the window's mean poll time to the policy (tokio's
    /// `end_processing_scheduled_tasks`).
    fn end_window(&self, core: &mut Core<P>) {
        let batches = core.window_batches;
        if batches == 0 {
            return;
        }
        core.window_batches = 0;
        let ns = core.window_start.elapsed().as_nanos() as f64;
        self.shared.policy.maintenance(&mut core.policy, ns / batches as f64, batches);
    }

    /// Non-blocking driver poll, then the deferred (yielded) wakes, with the
    /// core in place so that those tasks return to this worker's queue;
    /// then a new poll-time window starts.
    fn poll_driver_and_wake_deferred(&self, core: Box<Core<P>>) -> Box<Core<P>> {
        *self.core.borrow_mut() = Some(core);
        self.batching.set(true);
        if self.parker.poll_driver(&self.shared.driver) {
            Counters::bump(&self.counters().driver_polls, 1);
        }
        self.fire_own_timers();
        context::wake_deferred();
        self.batching.set(false);
        let mut core = self.core.borrow_mut().take().expect("worker core missing after the driver poll");
        self.requeue_deferred(&mut core);
        self.notify_batched();
        // Scheduled tasks are processed from here on: a new poll-time window.
        core.window_start = Instant::now();
        core
    }

    /// `timer=per-worker`: fires this worker's due timers; call with the
    /// core in place and `batching` set, so that their tasks come back to
    /// this worker's queue with one "wake a peer" afterwards.
    fn fire_own_timers(&self) {
        let mut wakers = self.timer_wakers.take();
        self.shared.driver_handle.fire_worker_timers(self.index, &mut wakers);
        wakers.drain(..).for_each(std::task::Waker::wake);
        *self.timer_wakers.borrow_mut() = wakers;
    }

    /// Puts the tasks that yielded back at the end of the local queue; as
    /// for the deferred wakes, one "wake a peer" check afterwards.
    fn requeue_deferred(&self, core: &mut Core<P>) {
        let mut deferred = self.deferred.borrow_mut();
        if deferred.is_empty() {
            return;
        }
        let w = self.worker_ref(core);
        let mut notify = false;
        // The batch is queued at one moment: one clock read stamps it all.
        let delay = self.shared.sched_delay.as_ref().map(|d| (d, d.now_ticks()));
        for task in deferred.drain(..) {
            if let Some((d, now)) = delay {
                d.stamp_at(&task, now);
            }
            notify |= self.shared.policy.push_local(&mut core.policy, &w, task, Origin::Yield);
        }
        if notify {
            self.notify_pending.set(true);
        }
    }

    /// One "wake a peer" for everything pushed while `batching`.
    fn notify_batched(&self) {
        if self.notify_pending.replace(false) {
            self.shared.notify_parked();
        }
    }

    fn account_busy(&self, core: &mut Core<P>, now: Instant) {
        let ns = now.saturating_duration_since(core.busy_since).as_nanos() as u64;
        Counters::bump(&self.counters().busy_ns, ns);
        core.busy_since = now;
    }

    /// `idle=backoff`: spin, then yield, re-checking for work. `true` when
    /// work appeared.
    fn backoff(&self, core: &Core<P>) -> bool {
        for round in 0..BACKOFF_SPINS + BACKOFF_YIELDS {
            if round < BACKOFF_SPINS {
                for _ in 0..(1u32 << round) {
                    std::hint::spin_loop();
                }
            } else {
                std::thread::yield_now();
            }
            if self.shared.policy.has_work(&core.policy, self.index, true) {
                return true;
            }
        }
        false
    }

    fn park(&self, mut core: Box<Core<P>>) -> Box<Core<P>> {
        if self.shared.knobs.idle == IdleMode::Backoff && self.backoff(&core) {
            return core;
        }
        self.account_busy(&mut core, Instant::now());
        if core.woken {
            Counters::bump(&self.counters().spurious_unparks, 1);
        }
        let idle = &self.shared.idle;
        let last_searcher = idle.transition_to_parked(self.index, core.is_searching);
        core.is_searching = false;
        idle.fence_before_recheck();
        let work = self.shared.policy.has_work(&core.policy, self.index, last_searcher);
        if !work && !self.shared.is_shutdown() {
            Counters::bump(&self.counters().parks, 1);
            // The core sits in the context while parked, as in tokio: tasks
            // the driver wakes on this thread go to this worker's queue.
            *self.core.borrow_mut() = Some(core);
            self.batching.set(true);
            let timeout = self.shared.driver_handle.worker_park_timeout(self.index);
            let parked = self.parker.park(&self.shared.driver, timeout);
            self.fire_own_timers();
            self.batching.set(false);
            core = self.core.borrow_mut().take().expect("worker core missing after parking");
            if parked == Parked::Driver {
                Counters::bump(&self.counters().driver_polls, 1);
            }
        }
        let woken = idle.transition_from_parked(self.index);
        // After leaving the sleepers, so that we do not pick ourselves.
        self.notify_batched();
        core.is_searching = woken == Woken::Searching;
        core.woken = woken != Woken::Spurious;
        if core.woken {
            Counters::bump(&self.counters().unparks, 1);
        }
        core.busy_since = Instant::now();
        core.window_start = core.busy_since;
        core
    }
}

// ---- scheduling from a task: beside the worker whose core it reaches ----

impl<P: Policy> Shared<P> {
    /// Routes a task: to this worker's core when called on one of our
    /// workers with its core in place, else to the shared queues.
    pub(crate) fn schedule_task(&self, task: Notified, origin: Origin) {
        // Every route below ends in a push to the policy: stamp once here.
        self.stamp_scheduled(&task);
        let origin = if origin == Origin::Wake && context::waking_deferred() { Origin::Yield } else { origin };
        let Some(ptr) = context::worker_of(self.addr()) else {
            return self.push_remote(task, origin);
        };
        // SAFETY: `worker_of` matched our address, so `ptr` was registered
        // by `worker_main` of this runtime as a `WorkerCx<P>` that outlives
        // the registration (it lives on the worker thread's stack).
        let cx = unsafe { &*(ptr as *const WorkerCx<P>) };
        let Ok(mut slot) = cx.core.try_borrow_mut() else {
            return self.push_remote(task, origin);
        };
        let Some(core) = slot.as_mut() else {
            drop(slot);
            return self.push_remote(task, origin);
        };
        let counters = &self.counters[cx.index];
        if origin == Origin::Spawn {
            crate::metrics::Counters::bump(&counters.spawns_local, 1);
        }
        let w = WorkerRef { index: cx.index, counters, tick: core.tick, is_searching: core.is_searching };
        let notify = self.policy.push_local(&mut core.policy, &w, task, origin);
        drop(slot);
        if notify {
            if cx.batching.get() {
                // Parking or polling the driver: one wake afterwards.
                cx.notify_pending.set(true);
            } else {
                self.notify_parked();
            }
        }
    }
}

impl<P: Policy> Shared<P> {
    /// A yield through the task's own waker: to the polling worker's
    /// deferred list when that is one of ours, else queued at once.
    pub(crate) fn defer_yield(&self, task: Notified) {
        match context::worker_of(self.addr()) {
            Some(ptr) => {
                // SAFETY: as in `schedule_task`: registered by this
                // runtime's `worker_main` as a live `WorkerCx<P>`.
                let cx = unsafe { &*(ptr as *const WorkerCx<P>) };
                cx.defer_yield(task);
            }
            // Not polled by one of our workers: nothing will come back
            // for a deferred list here, so queue it now.
            None => self.schedule_task(task, Origin::Yield),
        }
    }
}

impl<P: Policy> Schedule for Arc<Shared<P>> {
    fn schedule(&self, task: Notified) {
        self.schedule_task(task, Origin::Wake);
    }

    fn yield_now(&self, task: Notified) {
        self.schedule_task(task, Origin::Yield);
    }

    fn defer_yield(&self, task: Notified) {
        Shared::defer_yield(self, task);
    }

    fn release(&self, task: RawTask) -> Option<Task> {
        self.owned.remove(task)
    }
}
