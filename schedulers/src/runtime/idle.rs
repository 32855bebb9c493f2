//! Idle-worker bookkeeping: who is searching, who is parked, whom to wake.
//!
//! This is tokio's protocol, written from its description:
//! - `state` packs the number of searching workers (low half) and of
//!   unparked workers (high half) in one atomic, so one load answers
//!   "should a push wake somebody?".
//! - A worker may start searching only while `2 * searching < workers`
//!   (`searching-limit=half`; `none` lifts it).
//! - A push wakes a parked worker only when nobody is searching (a searcher
//!   will find the work) and somebody is parked. The woken worker starts as
//!   a searcher, so pushes in a burst wake one worker at a time; the last
//!   searcher to find work wakes the next one.
//!
//! No lost wake-up (the store-buffer argument):
//! 1. Pusher: publish the task (queue Release / lock), `fence(SeqCst)`,
//!    load `state`.
//! 2. Parker: register in `sleepers` and decrement `unparked` (SeqCst RMW),
//!    `fence(SeqCst)`, re-check the queues (`Policy::has_work`).
//!
//! With SeqCst fences on both sides, either the pusher sees the decrement
//! (and wakes a sleeper) or the parker's re-check sees the task (and does
//! not sleep). A wake-up that arrives before the parker actually blocks is
//! kept by its `Parker`'s NOTIFIED token.

use crate::knobs::SearchingLimit;
use crate::loom::sync::atomic::{fence, AtomicU8, AtomicUsize, Ordering::SeqCst};
use crate::loom::sync::Mutex;

const UNPARKED_SHIFT: u32 = usize::BITS / 2;
const SEARCHING_MASK: usize = (1 << UNPARKED_SHIFT) - 1;
const ONE_SEARCHING: usize = 1;
const ONE_UNPARKED: usize = 1 << UNPARKED_SHIFT;

/// `parked[i]` values.
const NOT_PARKED: u8 = 0;
const PARKED: u8 = 1;
/// Removed from `sleepers` by `worker_to_notify`: wakes as a searcher.
const WOKEN_SEARCHING: u8 = 2;
/// Removed by `notify_worker`: wakes for its own queue, not searching.
const WOKEN_TARGETED: u8 = 3;

/// How a parked worker came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woken {
    /// Notified as a searcher (counts in `searching`).
    Searching,
    /// Notified for its own queue.
    Targeted,
    /// Not notified (spurious, driver event, shutdown, or it never slept).
    Spurious,
}

fn searching(state: usize) -> usize {
    state & SEARCHING_MASK
}

fn unparked(state: usize) -> usize {
    state >> UNPARKED_SHIFT
}

pub(crate) struct Idle {
    /// Packed counts; every access SeqCst, see the module doc.
    state: AtomicUsize,
    /// Parked workers, most recent last.
    sleepers: Mutex<Vec<usize>>,
    /// `parked[i]`: worker i's sleep state. Written under the lock,
    /// except the owner's reset to `NOT_PARKED` after it woke.
    parked: Box<[AtomicU8]>,
    workers: usize,
    limit: SearchingLimit,
}

impl Idle {
    pub(crate) fn new(workers: usize, limit: SearchingLimit) -> Idle {
        Idle {
            state: AtomicUsize::new(workers * ONE_UNPARKED),
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            parked: (0..workers).map(|_| AtomicU8::new(NOT_PARKED)).collect(),
            workers,
            limit,
        }
    }

    /// Tries to enter the searching state; `false` when throttled.
    pub(crate) fn transition_to_searching(&self) -> bool {
        if self.limit == SearchingLimit::Half {
            // SeqCst: part of the state protocol (module doc).
            let s = self.state.load(SeqCst);
            if 2 * searching(s) >= self.workers {
                return false;
            }
        }
        // SeqCst: part of the state protocol (module doc).
        self.state.fetch_add(ONE_SEARCHING, SeqCst);
        true
    }

    /// Leaves the searching state; `true` when this was the last searcher
    /// (the caller then wakes another worker if work remains).
    pub(crate) fn transition_from_searching(&self) -> bool {
        // SeqCst: part of the state protocol (module doc).
        let prev = self.state.fetch_sub(ONE_SEARCHING, SeqCst);
        assert!(searching(prev) > 0, "leaving searching with no searchers: state {prev:#x}");
        searching(prev) == 1
    }

    /// Step 1 of the protocol, after the task is published: picks a worker
    /// to wake, if any should be woken. The caller unparks it.
    pub(crate) fn worker_to_notify(&self) -> Option<usize> {
        fence(SeqCst);
        if !self.should_wake() {
            return None;
        }
        let mut sleepers = self.sleepers.lock().unwrap();
        // Re-check under the lock: another pusher may have woken one.
        if !self.should_wake() {
            return None;
        }
        let index = sleepers.pop()?;
        // The woken worker is unparked and searching. Count it before
        // publishing WOKEN_SEARCHING: the worker may read that flag on the
        // lock-free path of `transition_from_parked` and leave searching at
        // once, which must find itself counted (SeqCst RMW before SeqCst
        // store; found by the `idle_race` loom model).
        self.state.fetch_add(ONE_SEARCHING + ONE_UNPARKED, SeqCst);
        self.parked[index].store(WOKEN_SEARCHING, SeqCst);
        Some(index)
    }

    fn should_wake(&self) -> bool {
        // SeqCst: part of the state protocol (module doc).
        let s = self.state.load(SeqCst);
        searching(s) == 0 && unparked(s) < self.workers
    }

    /// Targeted wake (a worker's private queue got a task): `true` when
    /// `index` was parked and is now unparked; the caller unparks it.
    pub(crate) fn notify_worker(&self, index: usize) -> bool {
        fence(SeqCst);
        if self.parked[index].load(SeqCst) != PARKED {
            return false;
        }
        let mut sleepers = self.sleepers.lock().unwrap();
        let Some(pos) = sleepers.iter().position(|&i| i == index) else { return false };
        sleepers.swap_remove(pos);
        // Count before publishing, as in `worker_to_notify`.
        self.state.fetch_add(ONE_UNPARKED, SeqCst);
        self.parked[index].store(WOKEN_TARGETED, SeqCst);
        true
    }

    /// Step 2, first half: registers `index` as parked. Returns `true` when
    /// it was the last searcher. The caller must then `fence_before_recheck`
    /// and re-check for work before sleeping.
    pub(crate) fn transition_to_parked(&self, index: usize, is_searching: bool) -> bool {
        let mut sleepers = self.sleepers.lock().unwrap();
        let dec = ONE_UNPARKED + if is_searching { ONE_SEARCHING } else { 0 };
        // SeqCst: the parker's half of the store-buffer pattern.
        let prev = self.state.fetch_sub(dec, SeqCst);
        sleepers.push(index);
        self.parked[index].store(PARKED, SeqCst);
        is_searching && searching(prev) == 1
    }

    /// Step 2, second half: orders the registration before the re-check.
    pub(crate) fn fence_before_recheck(&self) {
        fence(SeqCst);
    }

    /// After waking (or deciding not to sleep): how we were woken. When
    /// still registered (spurious) we remove ourselves.
    pub(crate) fn transition_from_parked(&self, index: usize) -> Woken {
        let _sleepers;
        let mut state = self.parked[index].load(SeqCst);
        if state == PARKED {
            let mut sleepers = self.sleepers.lock().unwrap();
            state = self.parked[index].load(SeqCst);
            if state == PARKED {
                let pos = sleepers.iter().position(|&i| i == index);
                let pos =
                    pos.unwrap_or_else(|| panic!("worker {index} marked parked but not in sleepers {sleepers:?}"));
                sleepers.swap_remove(pos);
                self.state.fetch_add(ONE_UNPARKED, SeqCst);
            }
            _sleepers = sleepers;
        }
        // Only the owner moves its own entry out of a WOKEN state.
        self.parked[index].store(NOT_PARKED, SeqCst);
        match state {
            WOKEN_SEARCHING => Woken::Searching,
            WOKEN_TARGETED => Woken::Targeted,
            _ => Woken::Spurious,
        }
    }
}
