//! The raw task: header, scheduler, future-or-output and join waker in one
//! allocation, driven through a per-`(Future, Scheduler)` static vtable.
//!
//! References (counted in the state word, see `state.rs`) are held by:
//! [`Task`] (the owned-tasks list entry), [`Notified`] (queued, or the
//! reference a running poll consumed), the `JoinHandle`, and each `Waker`.
//!
//! Poll protocol:
//! 1. A worker pops a `Notified` and calls [`Notified::run`]; the poll
//!    consumes that reference (`transition_to_running`).
//! 2. On `Pending`, `transition_to_idle` either drops it, or (woken during
//!    the poll) turns it into a new `Notified` given to `Schedule::yield_now`.
//! 3. On `Ready`, a panic, or cancellation, `complete` stores the result,
//!    wakes the join waker, releases the task from the owned list and drops
//!    the poll's reference and the list's.

use std::alloc;
use std::future::Future;
use std::mem::{self, ManuallyDrop};
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use super::cell::{cell_alloc_layout, Cell, Stage, Vtable};
pub(crate) use super::cell::{CellAlign, Header};
use super::error::JoinError;
use super::state::{ToIdle, ToNotified, ToRunning};
use crate::loom::cell::UnsafeCell;

/// What a task needs from the runtime that owns it.
pub(crate) trait Schedule: Send + Sync + Sized + 'static {
    /// The task was woken (from any thread).
    fn schedule(&self, task: Notified);
    /// The task was woken while it ran; it goes to the back of the queue.
    fn yield_now(&self, task: Notified) {
        self.schedule(task)
    }
    /// The task yielded through its own waker (`yield_now` on the thread
    /// that polls it): hold it until the worker runs out of other local
    /// work or polls the driver, then back of the queue. Schedulers with no
    /// such point queue it at once.
    fn defer_yield(&self, task: Notified) {
        self.yield_now(task)
    }
    /// The task completed: unlink it from the owned list, returning the
    /// list's reference if it was still linked.
    fn release(&self, task: RawTask) -> Option<Task>;
}

/// A copyable task pointer that owns no reference.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct RawTask(NonNull<Header>);

/// The owned-tasks list's reference.
pub(crate) struct Task(RawTask);

/// A task scheduled to run: the one thing a scheduling policy stores in
/// its queues (see [`crate::policy::Policy`]). It owns a reference to the
/// task; a policy can only move it, hand it back to the runtime core, or
/// drop it (at shutdown; dropping releases the reference, it does not run
/// the task). Part of the extension API.
pub struct Notified(RawTask);

// SAFETY: a task is built only from `F: Send + 'static` and `S: Schedule`
// (Send + Sync), and every access to its non-atomic parts is serialised by
// the state machine (RUNNING / COMPLETE / JOIN_WAKER ownership rules).
unsafe impl Send for Task {}
// SAFETY: as for `Task`.
unsafe impl Send for Notified {}
// SAFETY: `Task` only exposes operations that are safe from any thread.
unsafe impl Sync for Task {}

/// Allocates a task. Returns the owned-list reference, the first
/// `Notified`, and the raw pointer for the `JoinHandle` (which owns the
/// third reference).
pub(crate) fn new_task<F, S>(future: F, scheduler: S, id: u64, align: CellAlign) -> (Task, Notified, RawTask)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    let layout = cell_alloc_layout::<F, S>(align);
    // SAFETY: the layout is non-zero-sized (a cell holds at least a header).
    let base = unsafe { alloc::alloc(layout) };
    if base.is_null() {
        alloc::handle_alloc_error(layout);
    }
    // Bytes up to the next boundary: at most the boundary minus the base
    // alignment, which is the slack the layout added (0 when the base is
    // already aligned to the boundary).
    let alloc_offset = (base as usize).wrapping_neg() & (align.bytes() - 1);
    debug_assert!(alloc_offset + mem::size_of::<Cell<F, S>>() <= layout.size());
    // SAFETY: `alloc_offset` stays inside the allocation (above), so the
    // cell pointer is in bounds, and valid for writing a whole `Cell<F, S>`;
    // it is aligned for the cell: `base` is, and the offset is a multiple of
    // the base alignment (both are powers of two, the boundary the larger).
    let cell = unsafe {
        let cell = base.add(alloc_offset).cast::<Cell<F, S>>();
        cell.write(Cell {
            // Truncation intended: the id only spreads tasks over shards.
            header: Header::new(vtable::<F, S>(), id as u16, alloc_offset as u8, align.0),
            scheduler,
            stage: UnsafeCell::new(Stage::Running(future)),
            join_waker: UnsafeCell::new(None),
        });
        NonNull::new_unchecked(cell)
    };
    let ptr = cell.cast::<Header>();
    let raw = RawTask(ptr);
    (Task(raw), Notified(raw), raw)
}

fn vtable<F, S>() -> &'static Vtable
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    &Vtable {
        poll: poll::<F, S>,
        schedule: schedule::<F, S>,
        dealloc: dealloc::<F, S>,
        try_read_output: try_read_output::<F, S>,
        drop_join_handle: drop_join_handle::<F, S>,
        shutdown: shutdown::<F, S>,
    }
}

impl RawTask {
    pub(crate) fn header(&self) -> &Header {
        // SAFETY: callers hold a reference (Task, Notified, JoinHandle or
        // waker), so the cell is alive.
        unsafe { self.0.as_ref() }
    }

    pub(crate) fn header_ptr(&self) -> NonNull<Header> {
        self.0
    }

    pub(crate) fn from_header(ptr: NonNull<Header>) -> RawTask {
        RawTask(ptr)
    }

    fn vtable(&self) -> &'static Vtable {
        self.header().vtable
    }

    /// # Safety
    /// `dst` must point to a `Poll<Result<T, JoinError>>` of the task's
    /// output type, and the caller must be the JoinHandle.
    pub(crate) unsafe fn try_read_output(&self, dst: *mut (), waker: &Waker) {
        // SAFETY: forwarded contract.
        unsafe { (self.vtable().try_read_output)(self.0, dst, waker) }
    }

    /// # Safety
    /// Called once, by the JoinHandle's drop; consumes its reference.
    pub(crate) unsafe fn drop_join_handle(&self) {
        // SAFETY: forwarded contract.
        unsafe { (self.vtable().drop_join_handle)(self.0) }
    }

    /// Requests cancellation; schedules the task if it was idle.
    pub(crate) fn remote_abort(&self) {
        if self.header().state.transition_to_notified_and_cancel() {
            // SAFETY: the transition added the reference `schedule` consumes.
            unsafe { (self.vtable().schedule)(self.0) }
        }
    }
}

impl Task {
    pub(crate) fn raw(&self) -> RawTask {
        self.0
    }

    /// Takes over a list reference previously leaked with `into_raw`.
    ///
    /// # Safety
    /// `raw` must carry a list reference that nothing else will drop.
    pub(crate) unsafe fn from_raw(raw: RawTask) -> Task {
        Task(raw)
    }

    /// Gives up ownership of the reference without dropping it.
    pub(crate) fn into_raw(self) -> RawTask {
        ManuallyDrop::new(self).0
    }

    /// Runtime shutdown: cancels the task if nobody is running it; consumes
    /// the list reference.
    pub(crate) fn shutdown(self) {
        let raw = self.into_raw();
        // SAFETY: we pass on the list reference we owned.
        unsafe { (raw.vtable().shutdown)(raw.0) }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        drop_reference(self.0);
    }
}

impl Notified {
    /// The task's header (its schedule stamp: `Header::set_scheduled_at`).
    pub(crate) fn header(&self) -> &Header {
        self.0.header()
    }

    /// Polls the task (or finishes cancelling it); consumes the reference.
    pub(crate) fn run(self) {
        let raw = ManuallyDrop::new(self).0;
        // SAFETY: the reference we own is handed to `poll`.
        unsafe { (raw.vtable().poll)(raw.0) }
    }

    /// Gives up the reference as its header pointer, without dropping it
    /// (for a queue that stores one pointer per task, e.g. the stealable
    /// LIFO slot); [`Notified::from_header`] takes it back.
    pub(crate) fn into_header(self) -> NonNull<Header> {
        ManuallyDrop::new(self).0 .0
    }

    /// Takes back a reference given up with [`Notified::into_header`].
    ///
    /// # Safety
    /// `ptr` came from `into_header` and is turned back into a `Notified`
    /// at most once (the reference it carries is then owned again).
    pub(crate) unsafe fn from_header(ptr: NonNull<Header>) -> Notified {
        Notified(RawTask(ptr))
    }
}

impl Drop for Notified {
    fn drop(&mut self) {
        drop_reference(self.0);
    }
}

impl std::fmt::Debug for Notified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Notified({:?})", self.0 .0)
    }
}

fn drop_reference(raw: RawTask) {
    if raw.header().state.ref_dec(1) {
        // SAFETY: that was the last reference.
        unsafe { (raw.vtable().dealloc)(raw.0) }
    }
}

/// # Safety
/// `ptr` must point to a live `Cell<F, S>`.
unsafe fn cell<'a, F: Future, S>(ptr: NonNull<Header>) -> &'a Cell<F, S> {
    // SAFETY: `Cell` is repr(C) with the header first, and the vtable that
    // brought us here was built for exactly this `F, S`.
    unsafe { ptr.cast::<Cell<F, S>>().as_ref() }
}

/// Polls the task (vtable `poll`).
///
/// # Safety
/// `ptr` is a live `Cell<F, S>` and the caller hands over one reference
/// (a `Notified`'s), which the poll consumes.
unsafe fn poll<F: Future + Send + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: the caller passes the reference of a live task.
    let cell = unsafe { cell::<F, S>(ptr) };
    match cell.header.state.transition_to_running() {
        ToRunning::Success => {}
        ToRunning::Cancelled => {
            cancel_future(cell);
            return complete(cell);
        }
        ToRunning::Failed => return,
        // SAFETY: the transition dropped the last reference.
        ToRunning::Dealloc => return unsafe { dealloc::<F, S>(ptr) },
    }
    let polling = super::polling::enter_poll(ptr);
    let ready = poll_future(cell).is_ready();
    let yielded = super::polling::leave_poll(polling, ptr);
    if ready {
        return complete(cell);
    }
    let idle = if yielded {
        // `yield_now` marked the task instead of cloning and waking its
        // waker: one state change instead of three (see `yield_now.rs`).
        cell.header.state.transition_to_idle_yielded()
    } else {
        cell.header.state.transition_to_idle()
    };
    match idle {
        ToIdle::OkNotified if yielded => cell.scheduler.defer_yield(Notified(RawTask(ptr))),
        ToIdle::Ok => {}
        ToIdle::OkNotified => cell.scheduler.yield_now(Notified(RawTask(ptr))),
        // SAFETY: the transition dropped the last reference.
        ToIdle::OkDealloc => unsafe { dealloc::<F, S>(ptr) },
        ToIdle::Cancelled => {
            cancel_future(cell);
            complete(cell)
        }
    }
}

/// Polls the future with RUNNING held; stores the output or the panic.
fn poll_future<F: Future, S: Schedule>(cell: &Cell<F, S>) -> Poll<()> {
    let ptr = NonNull::from(&cell.header);
    // The waker borrows the poll's reference: no count change.
    let waker = ManuallyDrop::new(waker_from(ptr));
    let mut cx = Context::from_waker(&waker);
    let res = panic::catch_unwind(AssertUnwindSafe(|| {
        cell.stage.with_mut(|stage| {
            // SAFETY: RUNNING gives this thread exclusive access to the stage.
            let stage = unsafe { &mut *stage };
            let Stage::Running(fut) = stage else { unreachable!("polling a task whose stage is not Running") };
            // SAFETY: the future lives in a heap cell that never moves
            // until it is dropped in place.
            unsafe { Pin::new_unchecked(fut) }.poll(&mut cx)
        })
    }));
    let out = match res {
        Ok(Poll::Pending) => return Poll::Pending,
        Ok(Poll::Ready(v)) => Ok(v),
        Err(payload) => Err(JoinError::panic(payload)),
    };
    set_stage(cell, Stage::Finished(out));
    Poll::Ready(())
}

/// Drops the future (RUNNING held) and stores the cancellation result.
fn cancel_future<F: Future, S>(cell: &Cell<F, S>) {
    let res = panic::catch_unwind(AssertUnwindSafe(|| set_stage(cell, Stage::Consumed)));
    let err = match res {
        Ok(()) => JoinError::cancelled(),
        Err(payload) => JoinError::panic(payload),
    };
    set_stage(cell, Stage::Finished(Err(err)));
}

fn set_stage<F: Future, S>(cell: &Cell<F, S>, new: Stage<F>) {
    // SAFETY: only called with RUNNING held (or by the output's owner after
    // COMPLETE), which gives exclusive access to the stage.
    cell.stage.with_mut(|stage| unsafe { *stage = new });
}

/// RUNNING → COMPLETE, notify the JoinHandle, release, drop references.
fn complete<F: Future, S: Schedule>(cell: &Cell<F, S>) {
    let snapshot = cell.header.state.transition_to_complete();
    // A panic in an output destructor or a waker must not unwind into the
    // worker; the task is finished either way.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| {
        if !snapshot.is_join_interested() {
            // Nobody will read the output: it is ours to drop.
            set_stage(cell, Stage::Consumed);
        } else if snapshot.is_join_waker_set() {
            cell.join_waker.with(|w| {
                // SAFETY: JOIN_WAKER set and COMPLETE: the JoinHandle no
                // longer writes the slot (its unset_join_waker fails).
                if let Some(w) = unsafe { &*w } {
                    w.wake_by_ref();
                }
            });
        }
    }));
    let raw = RawTask(NonNull::from(&cell.header));
    let released = cell.scheduler.release(raw).map(Task::into_raw).is_some();
    let refs = 1 + usize::from(released);
    if cell.header.state.ref_dec(refs) {
        // SAFETY: those were the last references.
        unsafe { dealloc::<F, S>(raw.0) }
    }
}

/// Hands the task to its scheduler (vtable `schedule`).
///
/// # Safety
/// `ptr` is a live `Cell<F, S>` and the caller owns one reference, which
/// becomes the `Notified` given to the scheduler.
unsafe fn schedule<F: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: the caller owns a reference, passed on as the Notified.
    let cell = unsafe { cell::<F, S>(ptr) };
    cell.scheduler.schedule(Notified(RawTask(ptr)));
}

/// Frees the cell (vtable `dealloc`).
///
/// # Safety
/// `ptr` is a `Cell<F, S>` allocated by `new_task` whose last reference
/// is gone: nothing else can reach it.
unsafe fn dealloc<F: Future, S>(ptr: NonNull<Header>) {
    let cell = ptr.cast::<Cell<F, S>>().as_ptr();
    // SAFETY: the last reference is gone, so nothing else touches the cell;
    // `new_task` wrote a `Cell<F, S>` (this exact type) `alloc_offset` bytes
    // into an allocation of `cell_alloc_layout::<F, S>(align)`, which is what
    // we hand back after dropping the cell in place.
    unsafe {
        let offset = usize::from((*cell).header.alloc_offset);
        let align = CellAlign((*cell).header.align_log2);
        std::ptr::drop_in_place(cell);
        alloc::dealloc(cell.cast::<u8>().sub(offset), cell_alloc_layout::<F, S>(align));
    }
}

/// Cancels the task at runtime shutdown (vtable `shutdown`).
///
/// # Safety
/// `ptr` is a live `Cell<F, S>` and the caller hands over one reference
/// (the owned list's), which this consumes.
unsafe fn shutdown<F: Future, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: the caller passes the list reference of a live task.
    let cell = unsafe { cell::<F, S>(ptr) };
    if cell.header.state.transition_to_shutdown() {
        // We own the stage; the list reference stands in for a poll's.
        cancel_future(cell);
        complete(cell);
    } else {
        drop_reference(RawTask(ptr));
    }
}

/// Moves the output into `dst` if the task finished (vtable
/// `try_read_output`), else registers `waker`.
///
/// # Safety
/// `ptr` is a live `Cell<F, S>`, the caller is its `JoinHandle` (the only
/// reader of the output), and `dst` points to a valid
/// `Poll<Result<F::Output, JoinError>>`.
unsafe fn try_read_output<F: Future, S>(ptr: NonNull<Header>, dst: *mut (), waker: &Waker) {
    // SAFETY: the JoinHandle holds a reference.
    let cell = unsafe { cell::<F, S>(ptr) };
    if !can_read_output(cell, waker) {
        return;
    }
    let out = cell.stage.with_mut(|stage| {
        // SAFETY: COMPLETE with join interest: the JoinHandle owns the stage.
        match mem::replace(unsafe { &mut *stage }, Stage::Consumed) {
            Stage::Finished(out) => out,
            _ => panic!("JoinHandle polled after it returned the output"),
        }
    });
    // SAFETY: the caller guarantees `dst` has this type.
    unsafe { *dst.cast::<Poll<Result<F::Output, JoinError>>>() = Poll::Ready(out) };
}

/// JoinHandle side of the join-waker hand-off. `true` when complete.
fn can_read_output<F: Future, S>(cell: &Cell<F, S>, waker: &Waker) -> bool {
    let state = &cell.header.state;
    let snapshot = state.load();
    if snapshot.is_complete() {
        return true;
    }
    if snapshot.is_join_waker_set() {
        // SAFETY: JOIN_WAKER set: the slot holds a waker and nobody writes
        // it; the runtime may only read it concurrently.
        let same = cell.join_waker.with(|w| unsafe { &*w }.as_ref().is_some_and(|w| w.will_wake(waker)));
        if same {
            return false;
        }
        if state.unset_join_waker().is_err() {
            return true;
        }
    }
    store_join_waker(cell, Some(waker.clone()));
    if state.set_join_waker().is_err() {
        // Completed first: the runtime never saw this waker; take it back.
        store_join_waker(cell, None);
        return true;
    }
    false
}

fn store_join_waker<F: Future, S>(cell: &Cell<F, S>, waker: Option<Waker>) {
    // SAFETY: JOIN_WAKER clear and not COMPLETE (or the set just failed):
    // the JoinHandle owns the slot.
    cell.join_waker.with_mut(|w| unsafe { *w = waker });
}

/// Releases the `JoinHandle`'s interest and reference (vtable
/// `drop_join_handle`).
///
/// # Safety
/// `ptr` is a live `Cell<F, S>` and the caller is its `JoinHandle`, giving
/// up its reference.
unsafe fn drop_join_handle<F: Future, S>(ptr: NonNull<Header>) {
    // SAFETY: the JoinHandle's reference keeps the cell alive.
    let cell = unsafe { cell::<F, S>(ptr) };
    if cell.header.state.unset_join_interest().is_err() {
        // Complete: the output is ours to drop. A panic in its destructor
        // is contained, as in `complete`.
        let _ = panic::catch_unwind(AssertUnwindSafe(|| set_stage(cell, Stage::Consumed)));
    }
    drop_reference(RawTask(ptr));
}

// ---- waker ----

pub(super) static WAKER_VTABLE: RawWakerVTable =
    RawWakerVTable::new(waker_clone, waker_wake, waker_wake_by_ref, waker_drop);

fn waker_from(ptr: NonNull<Header>) -> Waker {
    // SAFETY: the vtable functions below uphold the RawWaker contract: the
    // data pointer is a task header and each clone owns one reference.
    unsafe { Waker::from_raw(RawWaker::new(ptr.as_ptr() as *const (), &WAKER_VTABLE)) }
}

fn header_of(data: *const ()) -> RawTask {
    // SAFETY: wakers are only built by `waker_from` from a non-null header.
    RawTask(unsafe { NonNull::new_unchecked(data as *mut Header) })
}

/// `RawWakerVTable::clone`.
///
/// # Safety
/// `data` is a task header from `waker_from` whose waker holds a reference.
unsafe fn waker_clone(data: *const ()) -> RawWaker {
    header_of(data).header().state.ref_inc();
    RawWaker::new(data, &WAKER_VTABLE)
}

/// `RawWakerVTable::wake`: consumes the waker's reference.
///
/// # Safety
/// `data` is a task header from `waker_from` whose waker holds a reference.
unsafe fn waker_wake(data: *const ()) {
    let raw = header_of(data);
    match raw.header().state.transition_to_notified_by_val() {
        ToNotified::DoNothing => {}
        // SAFETY: the waker's reference becomes the Notified's.
        ToNotified::Submit => unsafe { (raw.vtable().schedule)(raw.0) },
        // SAFETY: the transition dropped the last reference.
        ToNotified::Dealloc => unsafe { (raw.vtable().dealloc)(raw.0) },
    }
}

/// `RawWakerVTable::wake_by_ref`.
///
/// # Safety
/// `data` is a task header from `waker_from` whose waker holds a reference.
unsafe fn waker_wake_by_ref(data: *const ()) {
    let raw = header_of(data);
    if raw.header().state.transition_to_notified_by_ref() == ToNotified::Submit {
        // SAFETY: the transition added the reference `schedule` consumes.
        unsafe { (raw.vtable().schedule)(raw.0) }
    }
}

/// `RawWakerVTable::drop`: releases the waker's reference.
///
/// # Safety
/// `data` is a task header from `waker_from` whose waker holds a reference.
unsafe fn waker_drop(data: *const ()) {
    drop_reference(header_of(data));
}

#[cfg(all(test, not(loom)))]
mod tests;
