//! `block_on`, two ways.
//!
//! - [`block_on`]: on a runtime whose workers are threads of their own,
//!   poll the future on the calling thread and park the thread until its
//!   waker fires; tasks run on the workers.
//! - [`block_on_driving`]: `current-thread` without a driver thread, as
//!   tokio's current_thread: the calling thread takes the runtime's one
//!   core and runs the worker loop itself, polling the future whenever its
//!   waker fired. A spawn or wake on this thread is a local push (no other
//!   thread, no wake-up); one from another thread goes to the inject queue
//!   and unparks this thread, wherever it waits (its parker's condvar or
//!   the driver's epoll). Between `block_on` calls nothing runs tasks: they
//!   wait in the core's queue and the inject queue for the next `block_on`.
//!
//! # Who drives the core
//! The core sits in `Shared::dormant` while no `block_on` drives it.
//! 1. `block_on` takes it under that lock, or, when another `block_on`
//!    has it, registers its waker there (under the same lock) and polls its
//!    future on its own thread meanwhile, like [`block_on`].
//! 2. The driving thread runs the worker loop until its future completes,
//!    then puts the core back (flushing yielded tasks into the queue) and
//!    wakes every waiter of step 1, which retries. A waker registered in
//!    step 1 is woken by the put-back of step 2 or finds the core there:
//!    both happen under the one lock, so none is missed.

use std::any::Any;
use std::cell::Cell;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use super::context;
use super::core::Dormant;
use super::park::Unparker;
use super::shared::Shared;
use super::worker::{Main, WorkerCx};
// The flag of `MainFlag` is model-checked; `ThreadWaker`'s is plain std.
use crate::loom::sync::atomic::AtomicBool as ModelAtomicBool;
use crate::policy::Policy;

thread_local! {
    /// The `MainWaker` of the `block_on` this thread is driving, if any: a
    /// wake from this thread then needs no unpark (the loop checks the
    /// flag before it parks).
    static DRIVING: Cell<*const MainWaker> = const { Cell::new(std::ptr::null()) };
}

struct ThreadWaker {
    thread: Thread,
    notified: AtomicBool,
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Release: pairs with the Acquire swap in `block_on`, so what the
        // waker's caller wrote is visible to the next poll.
        if !self.notified.swap(true, Ordering::Release) {
            self.thread.unpark();
        }
    }
}

/// Polls `future` to completion on this thread.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    assert!(
        !super::context::is_worker(),
        "Runtime::block_on called from inside a worker thread of a wsbench runtime: a worker must never block; spawn the future and .await its JoinHandle instead"
    );
    let waker_arc = Arc::new(ThreadWaker { thread: thread::current(), notified: AtomicBool::new(false) });
    let waker = Waker::from(waker_arc.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(v) = crate::coop::with_budget(None, || future.as_mut().poll(&mut cx)) {
            return v;
        }
        // Acquire: pairs with the Release in `wake_by_ref`.
        while !waker_arc.notified.swap(false, Ordering::Acquire) {
            thread::park();
        }
    }
}

/// The wake-up flag of a `block_on` future, and the protocol that keeps a
/// wake from another thread from being lost while the driving thread goes
/// to sleep (modelled by `loom_tests/block_on_wake.rs`):
/// 1. waker: set the flag (Release swap); if it was clear, unpark the core's
///    parker (a token if the thread is not parked yet);
/// 2. driving thread, each loop turn: if the flag is set, clear it
///    (Acquire swap) and poll; with no task to run, park only if the flag
///    is still clear. A wake between that check and the park left a token,
///    so the park returns at once.
pub(crate) struct MainFlag {
    notified: ModelAtomicBool,
}

impl MainFlag {
    pub(crate) fn new(woken: bool) -> MainFlag {
        MainFlag { notified: ModelAtomicBool::new(woken) }
    }

    /// Step 1: `true` when this call set the flag (the caller then unparks).
    pub(crate) fn set(&self) -> bool {
        // Release: pairs with the Acquire swap in `take_wake`, so what the
        // waker's caller wrote is visible to the next poll.
        !self.notified.swap(true, Ordering::Release)
    }

    pub(crate) fn is_woken(&self) -> bool {
        // Relaxed: a hint; `take_wake` is the synchronising read, and a
        // stale `false` before a park is covered by the parker's token.
        self.notified.load(Ordering::Relaxed)
    }

    /// Step 2: clears the flag; `true` when it was set.
    pub(crate) fn take_wake(&self) -> bool {
        // Acquire: pairs with the Release swap in `set`.
        self.notified.swap(false, Ordering::Acquire)
    }
}

/// The waker of a `block_on` future that may be driving the core: it wakes
/// the calling thread wherever it waits (parked on the core's parker while
/// driving, on its thread while waiting for the core).
struct MainWaker {
    flag: MainFlag,
    thread: Thread,
    /// The core's parker (worker 0's).
    unparker: Unparker,
}

impl Wake for MainWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.flag.set() {
            return;
        }
        if DRIVING.with(Cell::get) == Arc::as_ptr(self) {
            // Woken by a task or the driver on the driving thread itself:
            // its loop sees the flag before it parks again.
            return;
        }
        // One of the two is where the thread waits; a token left in the
        // other only makes one later wait return early.
        self.unparker.unpark();
        self.thread.unpark();
    }
}

impl MainWaker {
    fn is_woken(&self) -> bool {
        self.flag.is_woken()
    }

    fn take_wake(&self) -> bool {
        self.flag.take_wake()
    }
}

/// `block_on` on a `current-thread` runtime driven by `block_on` (module
/// doc).
pub(crate) fn block_on_driving<P: Policy, F: Future>(shared: &Arc<Shared<P>>, future: F) -> F::Output {
    let main = Arc::new(MainWaker {
        flag: MainFlag::new(true),
        thread: thread::current(),
        unparker: shared.unparkers[0].clone(),
    });
    let waker = Waker::from(main.clone());
    let mut future = pin!(future);
    loop {
        if let Some(dormant) = shared.take_dormant(&waker) {
            return drive(shared, dormant, &main, &waker, future);
        }
        // Another `block_on` drives the core: poll here until it puts the
        // core back (which wakes us) or the future completes.
        if main.take_wake() {
            let mut cx = Context::from_waker(&waker);
            if let Poll::Ready(v) = crate::coop::with_budget(None, || future.as_mut().poll(&mut cx)) {
                return v;
            }
        }
        while !main.is_woken() {
            thread::park();
        }
    }
}

/// The `block_on` future as the worker loop's [`Main`].
struct Driven<'a, F: Future> {
    main: &'a MainWaker,
    cx: Context<'a>,
    future: Pin<&'a mut F>,
    output: Option<F::Output>,
    panic: Option<Box<dyn Any + Send>>,
}

impl<F: Future> Main for Driven<'_, F> {
    fn is_woken(&self) -> bool {
        self.main.is_woken()
    }

    fn poll(&mut self) -> bool {
        if !self.main.take_wake() {
            return false;
        }
        // A panic in the future must not unwind through the worker loop
        // with the core still out of its slot: it is re-raised after the
        // core is put back.
        match catch_unwind(AssertUnwindSafe(|| self.future.as_mut().poll(&mut self.cx))) {
            Ok(Poll::Ready(v)) => self.output = Some(v),
            Ok(Poll::Pending) => return false,
            Err(payload) => self.panic = Some(payload),
        }
        true
    }
}

/// Clears `DRIVING` when the drive ends, however it ends.
struct DrivingGuard;

impl Drop for DrivingGuard {
    fn drop(&mut self) {
        DRIVING.with(|d| d.set(std::ptr::null()));
    }
}

/// Runs the worker loop on this thread with `dormant` until `future`
/// completes, then puts the core back.
fn drive<P: Policy, F: Future>(
    shared: &Arc<Shared<P>>,
    dormant: Dormant<P>,
    main: &Arc<MainWaker>,
    waker: &Waker,
    future: Pin<&mut F>,
) -> F::Output {
    let Dormant { mut core, parker } = dormant;
    let cx = WorkerCx::new(shared.clone(), 0, parker);
    let core = {
        let addr = Arc::as_ptr(shared) as usize;
        // Dropped before `cx`: no wake on this thread reaches it after.
        let _worker = context::enter_worker(addr, &cx as *const WorkerCx<P> as *const ());
        DRIVING.with(|d| d.set(Arc::as_ptr(main)));
        let _driving = DrivingGuard;
        let mut driven = Driven { main, cx: Context::from_waker(waker), future, output: None, panic: None };
        cx.resume(&mut core);
        let core = cx.run(core, &mut driven);
        let core = cx.suspend(core);
        (core, driven.output, driven.panic)
    };
    let (core, output, panic) = core;
    shared.put_dormant(Dormant { core, parker: cx.into_parker() });
    if let Some(payload) = panic {
        resume_unwind(payload);
    }
    output.expect("the worker loop of block_on returned before its future completed (runtime shut down meanwhile)")
}
