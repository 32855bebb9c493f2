//! The I/O and timer driver shared by every scheduling policy.
//!
//! One [`Driver`] per runtime owns the epoll instance (mio `Poll`); whichever
//! worker has nothing to run holds it and blocks in [`Driver::park`]. The
//! [`Handle`] (cheap clone, `Send + Sync`) is what resources and other
//! threads use: it registers sockets, files timers, reads counters and
//! interrupts a blocked park ([`Handle::unpark`], one mio `Waker`).
//!
//! # Park
//! 1. Timers: compute how long the park may block — the caller's timeout,
//!    bounded by the wheel's next expiration — and record that wake-up tick
//!    so an earlier timer filed meanwhile unparks us (`timer.rs`).
//! 2. Block in epoll for that long, or until an event or `unpark`.
//! 3. Dispatch every event to its source's readiness and waiters (`io.rs`):
//!    look the tokens up under the slot lock, then set readiness and collect
//!    wakers outside it.
//! 4. Advance the wheel to now, collecting the due timers' wakers.
//! 5. Wake everything collected, in that order, after every lock is
//!    released.
//!
//! # Timers
//! `timer=shared` (the default): every timer is in the shared wheel of
//! `timer.rs`, fired by whichever worker holds the driver. `timer=per-worker`
//! adds one wheel per worker (`local.rs`): a worker's thread, once it has
//! called [`Handle::enter_worker_timers`], arms its timers in its own wheel
//! and fires them itself ([`Handle::fire_worker_timers`], bounded parks via
//! [`Handle::worker_park_timeout`]); other threads still use the shared
//! wheel. A [`Timer`] remembers which wheel holds it, so polls and cancels
//! from any thread reach it.
//!
//! # Shutdown
//! [`Driver::shutdown`] marks the driver shut down, fails every registered
//! source's pending and later operations with an error, fires every timer,
//! and wakes all their waiters; later registrations fail and later sleeps
//! complete at once, so no task waits on the driver forever.

mod io;
mod local;
mod registration;
mod timer;
pub(crate) mod wheel;

use std::cell::Cell;
use std::task::Waker;
use std::time::{Duration, Instant};

use crate::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use crate::loom::sync::{Arc, Mutex, MutexGuard};
use crate::metrics::DriverMetrics;

pub(crate) use self::io::Direction;
pub(crate) use self::local::LocalTimer;
#[cfg(loom)]
pub(crate) use self::local::WorkerWheels;
pub(crate) use self::registration::PollEvented;
#[cfg(any(loom, all(test, not(loom))))]
pub(crate) use self::timer::Registered;
#[cfg(loom)]
pub(crate) use self::timer::TimeShared;
pub(crate) use self::wheel::TimerKey;

/// The token of the driver's own mio waker (no source token can equal it:
/// `io.rs` keeps the top bit of source tokens clear).
const WAKER_TOKEN: mio::Token = mio::Token(usize::MAX);

/// Default capacity of the epoll event buffer.
const DEFAULT_EVENT_CAPACITY: usize = 1024;

/// Driver settings.
#[derive(Debug, Clone)]
pub(crate) struct DriverConfig {
    /// Events fetched per epoll call.
    pub(crate) event_capacity: usize,
    /// `timer=per-worker`: one wheel per worker, this many; 0 = shared only.
    pub(crate) worker_wheels: usize,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig { event_capacity: DEFAULT_EVENT_CAPACITY, worker_wheels: 0 }
    }
}

thread_local! {
    /// (address of the driver's `Shared`, worker index) on a worker thread
    /// of a `timer=per-worker` runtime: whose wheel this thread owns.
    static OWNER: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// A filed timer: which wheel holds it.
#[derive(Debug)]
pub(crate) enum Timer {
    /// In the shared wheel.
    Shared(TimerKey),
    /// In a worker's wheel (`timer=per-worker`).
    Local(LocalTimer),
}

/// State shared by the driver and every handle.
#[derive(Debug)]
struct Shared {
    registry: mio::Registry,
    waker: mio::Waker,
    slots: Mutex<io::Slots>,
    time: timer::TimeShared,
    /// `timer=per-worker`'s wheels; `None` under `timer=shared`.
    local: Option<local::WorkerWheels>,
    /// I/O events dispatched (written by the parked driver only).
    io_events: AtomicU64,
    shutdown: AtomicBool,
}

/// The epoll instance and the buffers of one park; owned by whichever
/// worker is parked on it.
#[derive(Debug)]
pub(crate) struct Driver {
    poll: mio::Poll,
    events: mio::Events,
    handle: Handle,
    /// Sources that got an event in this park, with their bits.
    ready: Vec<(Arc<io::ScheduledIo>, usize)>,
    /// Wakers to wake at the end of this park.
    wakers: Vec<Waker>,
}

/// A cheap, `Send + Sync` reference to a runtime's driver.
#[derive(Debug, Clone)]
pub(crate) struct Handle {
    shared: Arc<Shared>,
}

impl Driver {
    /// Opens the epoll instance and its waker.
    pub(crate) fn new(cfg: DriverConfig) -> std::io::Result<(Driver, Handle)> {
        let poll = mio::Poll::new()?;
        let registry = poll.registry().try_clone()?;
        let waker = mio::Waker::new(&registry, WAKER_TOKEN)?;
        let shared = Arc::new(Shared {
            registry,
            waker,
            slots: Mutex::new(io::Slots::default()),
            time: timer::TimeShared::new(),
            local: (cfg.worker_wheels > 0).then(|| local::WorkerWheels::new(cfg.worker_wheels)),
            io_events: AtomicU64::new(0),
            shutdown: AtomicBool::new(false),
        });
        let handle = Handle { shared };
        let driver = Driver {
            poll,
            events: mio::Events::with_capacity(cfg.event_capacity.max(1)),
            handle: handle.clone(),
            ready: Vec::new(),
            wakers: Vec::new(),
        };
        Ok((driver, handle))
    }

    /// Polls I/O and fires due timers (module doc, steps 1–5). `None` blocks
    /// until an I/O event, the next timer deadline or [`Handle::unpark`];
    /// `Some(Duration::ZERO)` does not block.
    pub(crate) fn park(&mut self, timeout: Option<Duration>) {
        let wait = if timeout == Some(Duration::ZERO) { timeout } else { self.handle.shared.time.before_park(timeout) };
        self.poll_io(wait);
        let blocked = wait != Some(Duration::ZERO);
        self.handle.shared.time.after_park(&mut self.wakers, blocked);
        self.wakers.drain(..).for_each(Waker::wake);
    }

    /// Steps 2 and 3.
    fn poll_io(&mut self, wait: Option<Duration>) {
        match self.poll.poll(&mut self.events, wait) {
            Ok(()) => {}
            // A signal: return as if woken; the caller parks again.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return,
            Err(e) => panic!("epoll_wait failed on the wsbench driver: {e}"),
        }
        let shared = &*self.handle.shared;
        {
            let slots = lock(&shared.slots);
            for event in self.events.iter() {
                if event.token() == WAKER_TOKEN {
                    continue;
                }
                if let Some(sio) = slots.get(event.token()) {
                    self.ready.push((sio.clone(), io::ready_from_event(event)));
                }
            }
        }
        let dispatched = self.ready.len() as u64;
        for (sio, ready) in self.ready.drain(..) {
            sio.set_readiness(ready);
            sio.take_wakers(ready, &mut self.wakers);
        }
        if dispatched > 0 {
            // Relaxed: a statistic with one writer at a time (the parked
            // driver, handed between workers through the caller's mutex).
            let n = shared.io_events.load(Ordering::Relaxed);
            shared.io_events.store(n + dispatched, Ordering::Relaxed);
        }
    }

    /// Runtime shutdown (module doc): wakes every registered source and
    /// timer, fails later registrations, completes later sleeps, and drops
    /// every stored waker.
    pub(crate) fn shutdown(&mut self) {
        let shared = &*self.handle.shared;
        // Release: pairs with the Acquire in `Handle::is_shutdown`.
        shared.shutdown.store(true, Ordering::Release);
        let sources = lock(&shared.slots).shutdown();
        for sio in &sources {
            sio.shutdown(&mut self.wakers);
        }
        drop(sources);
        shared.time.shutdown(&mut self.wakers);
        if let Some(local) = &shared.local {
            local.shutdown(&mut self.wakers);
        }
        self.wakers.drain(..).for_each(Waker::wake);
    }

    /// A handle to this driver.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No code that can panic runs under the driver's locks (no waker code,
    // no user code), so a poisoned lock still holds consistent data.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Handle {
    /// Interrupts a blocked [`Driver::park`] (or makes the next one return
    /// at once).
    pub(crate) fn unpark(&self) {
        // An eventfd write; it fails only if the counter would overflow,
        // which mio handles by resetting it, so nothing to do on error.
        let _ = self.shared.waker.wake();
    }

    /// Driver counters. `blocking_threads_spawned` is left 0: the blocking
    /// pool owns that counter.
    /// Timer counters cover the shared wheel and every worker wheel
    /// (sums; the lateness maximum is the largest).
    pub(crate) fn metrics(&self) -> DriverMetrics {
        // Relaxed: statistics; a snapshot need not be consistent.
        let mut m = DriverMetrics { io_events: self.shared.io_events.load(Ordering::Relaxed), ..Default::default() };
        let mut add = |t: &timer::TimerCounters| {
            m.timers_fired += t.fired.load(Ordering::Relaxed);
            m.timer_lateness_us_total += t.lateness_us_total.load(Ordering::Relaxed);
            m.timer_lateness_us_max = m.timer_lateness_us_max.max(t.lateness_us_max.load(Ordering::Relaxed));
            m.timer_lock_contended += t.lock_contended.load(Ordering::Relaxed);
            m.timer_remote_cancels += t.remote_cancels.load(Ordering::Relaxed);
        };
        add(&self.shared.time.counters);
        if let Some(local) = &self.shared.local {
            local.for_each_counters(add);
        }
        m
    }

    /// Starts a new window for the peak counters: `timer_lateness_us_max`
    /// restarts from 0, so the next snapshot's maximum covers only timers
    /// fired after this call (sums need no reset: callers difference them).
    pub(crate) fn reset_peaks(&self) {
        // Relaxed: a statistic; a timer firing concurrently lands either in
        // the old window or the new one.
        self.shared.time.counters.lateness_us_max.store(0, Ordering::Relaxed);
        if let Some(local) = &self.shared.local {
            // Relaxed: as above.
            local.for_each_counters(|t| t.lateness_us_max.store(0, Ordering::Relaxed));
        }
    }

    /// Whether [`Driver::shutdown`] has run.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_shutdown(&self) -> bool {
        // Acquire: pairs with the Release store in `Driver::shutdown`.
        self.shared.shutdown.load(Ordering::Acquire)
    }

    /// Files a timer for `deadline` waking `waker`: in this thread's own
    /// wheel on a worker of a `timer=per-worker` runtime, else in the
    /// shared wheel (unparking a driver that is blocked past it). `None`:
    /// due already (or shut down), complete now.
    pub(crate) fn register_timer(&self, deadline: Instant, waker: &Waker) -> Option<Timer> {
        if let (Some(local), Some(worker)) = (&self.shared.local, self.owned_wheel()) {
            return local.arm(&self.shared.time.clock, worker, deadline, waker).map(Timer::Local);
        }
        match self.shared.time.register(deadline, waker) {
            timer::Registered::Pending { key, unpark } => {
                if unpark {
                    self.unpark();
                }
                Some(Timer::Shared(key))
            }
            timer::Registered::Elapsed => None,
        }
    }

    /// `Ready` once the timer fired; otherwise stores `waker` and returns
    /// `Pending`. Any thread.
    pub(crate) fn poll_timer(&self, timer: &Timer, waker: &Waker) -> std::task::Poll<()> {
        match timer {
            Timer::Shared(key) => self.shared.time.poll_fired(*key, waker),
            Timer::Local(t) => local::WorkerWheels::poll(t, waker),
        }
    }

    /// Cancels (or frees, if fired) a timer: directly on the thread that
    /// owns its wheel, as a message to the owner from any other thread.
    pub(crate) fn cancel_timer(&self, timer: Timer) {
        match timer {
            Timer::Shared(key) => self.shared.time.cancel(key),
            Timer::Local(t) => {
                let local = self.shared.local.as_ref().expect("a worker-wheel timer on a driver without them");
                if self.owned_wheel() == Some(t.worker()) {
                    local.cancel_owned(t);
                } else {
                    // `false`: it had fired; the fire's wake is the only one.
                    local.cancel_remote(t);
                }
            }
        }
    }

    /// Makes this thread the owner of worker `index`'s wheel until the
    /// guard drops (nothing under `timer=shared`).
    pub(crate) fn enter_worker_timers(&self, index: usize) -> WorkerTimersGuard {
        let Some(local) = &self.shared.local else { return WorkerTimersGuard { set: false } };
        assert!(index < local.len(), "worker {index} of a driver with {} worker wheels", local.len());
        OWNER.with(|o| {
            assert_eq!(o.get().0, 0, "a thread can own one worker wheel only");
            o.set((self.addr(), index));
        });
        WorkerTimersGuard { set: true }
    }

    /// How long worker `index` may park before its own next timer is due
    /// (`None`: no timer, or `timer=shared`). Call on the owner thread.
    pub(crate) fn worker_park_timeout(&self, index: usize) -> Option<Duration> {
        let local = self.shared.local.as_ref()?;
        local.park_timeout(&self.shared.time.clock, index, Instant::now())
    }

    /// Worker `index` fires its own due timers (and removes the ones other
    /// threads cancelled); wakers to `out`. Call on the owner thread.
    pub(crate) fn fire_worker_timers(&self, index: usize, out: &mut Vec<Waker>) {
        if let Some(local) = &self.shared.local {
            local.fire_due(&self.shared.time.clock, index, Instant::now(), out);
        }
    }

    /// This thread's wheel of this driver, if it owns one.
    fn owned_wheel(&self) -> Option<usize> {
        let (addr, index) = OWNER.with(Cell::get);
        (addr == self.addr()).then_some(index)
    }

    fn addr(&self) -> usize {
        &*self.shared as *const Shared as usize
    }

    fn io_slots(&self) -> MutexGuard<'_, io::Slots> {
        lock(&self.shared.slots)
    }

    fn registry(&self) -> &mio::Registry {
        &self.shared.registry
    }
}

/// Ends a thread's ownership of a worker wheel
/// ([`Handle::enter_worker_timers`]).
pub(crate) struct WorkerTimersGuard {
    set: bool,
}

impl Drop for WorkerTimersGuard {
    fn drop(&mut self) {
        if self.set {
            OWNER.with(|o| o.set((0, 0)));
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
