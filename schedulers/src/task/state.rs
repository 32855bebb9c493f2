//! The task state word: lifecycle bits and a reference count in one
//! `AtomicUsize`, so that every transition is a single CAS or RMW.
//!
//! Bits:
//! - `RUNNING`: a thread is polling the future (or cancelling it) and owns
//!   the stage exclusively.
//! - `COMPLETE`: the stage holds the output (or it has been taken / dropped).
//! - `NOTIFIED`: a `Notified` reference exists (queued, or about to be), or
//!   the task was woken while running and must be rescheduled after the poll.
//! - `JOIN_INTEREST`: the `JoinHandle` is alive; after completion it owns the
//!   output.
//! - `JOIN_WAKER`: the join waker slot holds a waker the runtime may wake.
//!   While clear (and not complete) the `JoinHandle` owns the slot.
//! - `CANCELLED`: abort or shutdown asked for cancellation.
//!
//! The reference count counts: the owned-tasks list entry, the `Notified`
//! (queued or running) reference, the `JoinHandle`, and every `Waker`.
//!
//! Orderings: every transition that hands the stage from one thread to
//! another is AcqRel (the Release publishes the writes to the stage, the
//! Acquire of the next transition on the other thread sees them). Reference
//! increments are Relaxed (as `Arc::clone`: the incrementing thread already
//! holds a reference); decrements are AcqRel so the last one sees every use.

use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};

const RUNNING: usize = 0b00_0001;
const COMPLETE: usize = 0b00_0010;
const NOTIFIED: usize = 0b00_0100;
const JOIN_INTEREST: usize = 0b00_1000;
const JOIN_WAKER: usize = 0b01_0000;
const CANCELLED: usize = 0b10_0000;
const LIFECYCLE_MASK: usize = RUNNING | COMPLETE;
const REF_SHIFT: u32 = 6;
const REF_ONE: usize = 1 << REF_SHIFT;
/// Above this the count is surely a leak loop; abort as `Arc` does.
const MAX_REFS: usize = (isize::MAX as usize) >> REF_SHIFT;

/// A new task: three references (owned list, the first `Notified`, the
/// `JoinHandle`), join interest, and notified (it is about to be queued).
const INITIAL: usize = (3 * REF_ONE) | JOIN_INTEREST | NOTIFIED;

/// A copy of the state word with accessors.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snapshot(usize);

impl Snapshot {
    pub(crate) fn is_running(self) -> bool {
        self.0 & RUNNING != 0
    }
    pub(crate) fn is_complete(self) -> bool {
        self.0 & COMPLETE != 0
    }
    pub(crate) fn is_idle(self) -> bool {
        self.0 & LIFECYCLE_MASK == 0
    }
    pub(crate) fn is_notified(self) -> bool {
        self.0 & NOTIFIED != 0
    }
    pub(crate) fn is_cancelled(self) -> bool {
        self.0 & CANCELLED != 0
    }
    pub(crate) fn is_join_interested(self) -> bool {
        self.0 & JOIN_INTEREST != 0
    }
    pub(crate) fn is_join_waker_set(self) -> bool {
        self.0 & JOIN_WAKER != 0
    }
    pub(crate) fn ref_count(self) -> usize {
        self.0 >> REF_SHIFT
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("running", &self.is_running())
            .field("complete", &self.is_complete())
            .field("notified", &self.is_notified())
            .field("cancelled", &self.is_cancelled())
            .field("join_interest", &self.is_join_interested())
            .field("join_waker", &self.is_join_waker_set())
            .field("refs", &self.ref_count())
            .finish()
    }
}

pub(crate) struct State(AtomicUsize);

/// Outcome of taking a `Notified` reference to run.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToRunning {
    /// We own the stage; poll it.
    Success,
    /// We own the stage; cancellation was requested: drop the future.
    Cancelled,
    /// Someone else runs it or it completed; our reference was dropped.
    Failed,
    /// As `Failed`, and ours was the last reference: deallocate.
    Dealloc,
}

/// Outcome of leaving `RUNNING` after a `Pending` poll.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToIdle {
    /// Idle; the poll's reference was dropped (never the last one while
    /// the owned list holds its own).
    Ok,
    /// Woken during the poll: still `NOTIFIED`; the poll's reference is now
    /// the new `Notified`, to be rescheduled.
    OkNotified,
    /// Idle and the poll's reference was the last: deallocate.
    OkDealloc,
    /// Cancellation was requested during the poll; still `RUNNING`: cancel.
    Cancelled,
}

/// What a wake must do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToNotified {
    /// Nothing (running, complete, or already notified).
    DoNothing,
    /// Submit a new `Notified` to the scheduler (it owns one reference).
    Submit,
    /// By-value wake dropped the last reference: deallocate.
    Dealloc,
}

impl State {
    pub(crate) fn new() -> State {
        State(AtomicUsize::new(INITIAL))
    }

    pub(crate) fn load(&self) -> Snapshot {
        // Acquire: pairs with the AcqRel transitions, so a reader that sees
        // COMPLETE also sees the output written before it.
        Snapshot(self.0.load(Acquire))
    }

    /// CAS loop: apply `f` until it returns `None` (no change) or the CAS
    /// succeeds. Returns what `f` returned with the snapshot it saw.
    fn update<R>(&self, mut f: impl FnMut(Snapshot) -> (Option<usize>, R)) -> R {
        let mut cur = self.0.load(Acquire);
        loop {
            let (next, out) = f(Snapshot(cur));
            let Some(next) = next else { return out };
            // AcqRel: publishes our stage writes to the next transition
            // (Release) and sees the previous owner's (Acquire).
            match self.0.compare_exchange_weak(cur, next, AcqRel, Acquire) {
                Ok(_) => return out,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Consumes a `Notified` reference to start a poll.
    pub(crate) fn transition_to_running(&self) -> ToRunning {
        self.update(|s| {
            assert!(s.is_notified(), "running a task that is not notified: {s:?}");
            if !s.is_idle() {
                let next = s.0 - REF_ONE;
                let out = if Snapshot(next).ref_count() == 0 { ToRunning::Dealloc } else { ToRunning::Failed };
                return (Some(next), out);
            }
            let next = (s.0 | RUNNING) & !NOTIFIED;
            let out = if s.is_cancelled() { ToRunning::Cancelled } else { ToRunning::Success };
            (Some(next), out)
        })
    }

    /// After a `Pending` poll.
    pub(crate) fn transition_to_idle(&self) -> ToIdle {
        self.update(|s| {
            assert!(s.is_running(), "idling a task that is not running: {s:?}");
            if s.is_cancelled() {
                return (None, ToIdle::Cancelled);
            }
            if s.is_notified() {
                return (Some(s.0 & !RUNNING), ToIdle::OkNotified);
            }
            let next = (s.0 & !RUNNING) - REF_ONE;
            let out = if Snapshot(next).ref_count() == 0 { ToIdle::OkDealloc } else { ToIdle::Ok };
            (Some(next), out)
        })
    }

    /// RUNNING → idle and NOTIFIED, for a task that yielded through its own
    /// waker during this poll: what `transition_to_idle` does after a wake
    /// by reference while running, without that wake's own state change.
    /// The poll's reference becomes the `Notified`'s. `Cancelled` (RUNNING
    /// kept) when an abort came in meanwhile.
    pub(crate) fn transition_to_idle_yielded(&self) -> ToIdle {
        self.update(|s| {
            assert!(s.is_running(), "idling a task that is not running: {s:?}");
            if s.is_cancelled() {
                return (None, ToIdle::Cancelled);
            }
            (Some((s.0 & !RUNNING) | NOTIFIED), ToIdle::OkNotified)
        })
    }

    /// RUNNING → COMPLETE. Returns the state after the transition.
    pub(crate) fn transition_to_complete(&self) -> Snapshot {
        // AcqRel: Release publishes the output to the JoinHandle's Acquire
        // load (`load`/`unset_join_interest`); Acquire sees a concurrent
        // JoinHandle's waker write (it set JOIN_WAKER with Release).
        let prev = Snapshot(self.0.fetch_xor(RUNNING | COMPLETE, AcqRel));
        assert!(prev.is_running() && !prev.is_complete(), "completing from {prev:?}");
        Snapshot(prev.0 ^ (RUNNING | COMPLETE))
    }

    /// Wake by value: the caller's waker reference is consumed.
    pub(crate) fn transition_to_notified_by_val(&self) -> ToNotified {
        self.update(|s| {
            if s.is_running() {
                // The poll will reschedule; drop the waker's reference.
                let next = (s.0 | NOTIFIED) - REF_ONE;
                assert!(Snapshot(next).ref_count() > 0, "running task lost its poll reference: {s:?}");
                (Some(next), ToNotified::DoNothing)
            } else if s.is_complete() || s.is_notified() {
                let next = s.0 - REF_ONE;
                let out = if Snapshot(next).ref_count() == 0 { ToNotified::Dealloc } else { ToNotified::DoNothing };
                (Some(next), out)
            } else {
                // The waker's reference becomes the Notified's.
                (Some(s.0 | NOTIFIED), ToNotified::Submit)
            }
        })
    }

    /// Wake by reference: on `Submit` a reference was added for the new
    /// `Notified`.
    pub(crate) fn transition_to_notified_by_ref(&self) -> ToNotified {
        self.update(|s| {
            if s.is_complete() || s.is_notified() {
                (None, ToNotified::DoNothing)
            } else if s.is_running() {
                (Some(s.0 | NOTIFIED), ToNotified::DoNothing)
            } else {
                check_ref_overflow(s);
                (Some((s.0 | NOTIFIED) + REF_ONE), ToNotified::Submit)
            }
        })
    }

    /// `JoinHandle::abort`. `true`: the caller must submit a new `Notified`
    /// (a reference was added) so that a worker runs the cancellation.
    pub(crate) fn transition_to_notified_and_cancel(&self) -> bool {
        self.update(|s| {
            if s.is_complete() || s.is_cancelled() {
                (None, false)
            } else if s.is_running() || s.is_notified() {
                // The poller (or the queued run) sees CANCELLED.
                (Some(s.0 | CANCELLED), false)
            } else {
                check_ref_overflow(s);
                (Some((s.0 | CANCELLED | NOTIFIED) + REF_ONE), true)
            }
        })
    }

    /// Runtime shutdown. `true`: the task was idle or queued and the caller
    /// now owns the stage (RUNNING set) and must cancel it.
    pub(crate) fn transition_to_shutdown(&self) -> bool {
        self.update(|s| {
            if s.is_idle() {
                (Some(s.0 | RUNNING | CANCELLED), true)
            } else if s.is_cancelled() {
                (None, false)
            } else {
                (Some(s.0 | CANCELLED), false)
            }
        })
    }

    /// JoinHandle drop. `Err` when already complete: the caller (the
    /// JoinHandle) owns the output and must drop it.
    pub(crate) fn unset_join_interest(&self) -> Result<Snapshot, Snapshot> {
        self.update(|s| {
            assert!(s.is_join_interested(), "join interest already unset: {s:?}");
            if s.is_complete() {
                (None, Err(s))
            } else {
                let next = s.0 & !JOIN_INTEREST;
                (Some(next), Ok(Snapshot(next)))
            }
        })
    }

    /// JoinHandle stored a waker and publishes it. `Err` when the task
    /// completed first (the waker slot is still the JoinHandle's).
    pub(crate) fn set_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.update(|s| {
            assert!(s.is_join_interested() && !s.is_join_waker_set(), "set_join_waker from {s:?}");
            if s.is_complete() {
                (None, Err(s))
            } else {
                let next = s.0 | JOIN_WAKER;
                (Some(next), Ok(Snapshot(next)))
            }
        })
    }

    /// JoinHandle takes the waker slot back to replace the waker. `Err`
    /// when complete (then the runtime may be waking the old waker).
    pub(crate) fn unset_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.update(|s| {
            assert!(s.is_join_interested() && s.is_join_waker_set(), "unset_join_waker from {s:?}");
            if s.is_complete() {
                (None, Err(s))
            } else {
                let next = s.0 & !JOIN_WAKER;
                (Some(next), Ok(Snapshot(next)))
            }
        })
    }

    pub(crate) fn ref_inc(&self) {
        // Relaxed: the caller holds a reference, so the task cannot be freed
        // concurrently; as `Arc::clone`.
        let prev = self.0.fetch_add(REF_ONE, Relaxed);
        check_ref_overflow(Snapshot(prev));
    }

    /// Drops `n` references; `true` when they were the last.
    pub(crate) fn ref_dec(&self, n: usize) -> bool {
        // AcqRel: Release orders our uses before the decrement; the thread
        // that drops the last reference Acquires them all before freeing.
        let prev = Snapshot(self.0.fetch_sub(n * REF_ONE, AcqRel));
        assert!(prev.ref_count() >= n, "dropping {n} references from {prev:?}");
        prev.ref_count() == n
    }
}

fn check_ref_overflow(s: Snapshot) {
    if s.ref_count() >= MAX_REFS {
        std::process::abort();
    }
}

// `cfg(test)` on the line above `mod`: how `circles.py` tells test code.
#[cfg(not(loom))]
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_state_runs_then_idles_then_completes() {
        let s = State::new();
        assert_eq!(s.load().ref_count(), 3);
        assert_eq!(s.transition_to_running(), ToRunning::Success);
        assert!(s.load().is_running() && !s.load().is_notified());
        assert_eq!(s.transition_to_idle(), ToIdle::Ok);
        assert_eq!(s.load().ref_count(), 2);
        assert_eq!(s.transition_to_notified_by_ref(), ToNotified::Submit);
        assert_eq!(s.load().ref_count(), 3);
        assert_eq!(s.transition_to_running(), ToRunning::Success);
        let after = s.transition_to_complete();
        assert!(after.is_complete() && !after.is_running());
    }

    #[test]
    fn wake_while_running_reschedules_after_poll() {
        let s = State::new();
        s.transition_to_running();
        s.ref_inc(); // a waker
        assert_eq!(s.transition_to_notified_by_val(), ToNotified::DoNothing);
        assert_eq!(s.transition_to_idle(), ToIdle::OkNotified);
        assert!(s.load().is_notified() && !s.load().is_running());
        assert_eq!(s.load().ref_count(), 3);
    }

    #[test]
    fn yield_keeps_the_poll_reference_for_the_notified() {
        let s = State::new();
        s.transition_to_running();
        assert_eq!(s.transition_to_idle_yielded(), ToIdle::OkNotified);
        assert!(s.load().is_notified() && !s.load().is_running());
        assert_eq!(s.load().ref_count(), 3, "the poll's reference must pass to the Notified");
        // A wake that raced the yield changes nothing more.
        s.transition_to_running();
        s.ref_inc();
        assert_eq!(s.transition_to_notified_by_val(), ToNotified::DoNothing);
        assert_eq!(s.transition_to_idle_yielded(), ToIdle::OkNotified);
        assert_eq!(s.load().ref_count(), 3);
    }

    #[test]
    fn yield_after_an_abort_is_cancelled() {
        let s = State::new();
        s.transition_to_running();
        assert!(!s.transition_to_notified_and_cancel(), "the runner sees the abort; no submit");
        assert_eq!(s.transition_to_idle_yielded(), ToIdle::Cancelled);
        assert!(s.load().is_running(), "the runner still owns the future to cancel it");
    }

    #[test]
    fn abort_idle_task_submits_and_cancel_is_seen_by_runner() {
        let s = State::new();
        s.transition_to_running();
        assert_eq!(s.transition_to_idle(), ToIdle::Ok);
        assert!(s.transition_to_notified_and_cancel());
        assert!(!s.transition_to_notified_and_cancel(), "second abort must not submit again");
        assert_eq!(s.transition_to_running(), ToRunning::Cancelled);
    }

    #[test]
    fn join_interest_after_complete_is_refused() {
        let s = State::new();
        s.transition_to_running();
        s.transition_to_complete();
        assert!(s.unset_join_interest().is_err());
        assert!(s.set_join_waker().is_err());
    }

    #[test]
    fn last_reference_is_reported_once() {
        let s = State::new();
        assert!(!s.ref_dec(1));
        assert!(!s.ref_dec(1));
        assert!(s.ref_dec(1));
    }
}
