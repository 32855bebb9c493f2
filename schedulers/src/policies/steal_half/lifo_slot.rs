//! The stealable LIFO slot (`lifo-steal=on`): one task pointer per worker
//! that its owner fills and empties and a thief may empty too (Go's
//! `runnext`). With `lifo-steal=off` the policy keeps a plain
//! `Option<Notified>` in the worker's core instead and this type is unused.
//!
//! Protocol: the slot is one `AtomicPtr` holding a task reference or null.
//! Only the owner stores a task (`put`: a swap that hands back the task it
//! displaced, or nothing when a thief emptied the slot meanwhile); owner
//! and thieves empty it with a swap to null (`take`). Every move is one
//! atomic read-modify-write on one location, so the swaps are totally
//! ordered and each stored reference is handed out by exactly one of them:
//! a task leaves the slot once, whoever wins.
//!
//! How the owner learns that a thief took its task: it finds the slot
//! empty at its next `take` (or gets nothing back from `put`) and goes on
//! with its ring. Nobody is woken for a slot task: a push into the slot
//! notifies peers by the same rule as with `lifo-steal=off`, so the slot is
//! taken only by workers that are searching anyway (see the book,
//! `docs/src/schedulers.md`, "Stealable LIFO slot", for why: tokio 1.51's CPU regression).

use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use crate::loom::sync::atomic::{AtomicPtr, Ordering};
use crate::task::raw::Notified;

/// A value that travels through the slot as one non-null pointer.
pub(crate) trait SlotValue: Send + Sized {
    /// Gives up ownership as a pointer.
    fn into_ptr(self) -> NonNull<()>;

    /// Takes back ownership.
    ///
    /// # Safety
    /// `ptr` came from [`SlotValue::into_ptr`] of a value of this type and
    /// is turned back into a value at most once.
    unsafe fn from_ptr(ptr: NonNull<()>) -> Self;
}

impl SlotValue for Notified {
    fn into_ptr(self) -> NonNull<()> {
        self.into_header().cast()
    }

    unsafe fn from_ptr(ptr: NonNull<()>) -> Notified {
        // SAFETY: the caller's contract: `ptr` is the header of a task whose
        // `Notified` reference `into_ptr` gave up, reclaimed once.
        unsafe { Notified::from_header(ptr.cast()) }
    }
}

impl<T: Send> SlotValue for Box<T> {
    fn into_ptr(self) -> NonNull<()> {
        NonNull::from(Box::leak(self)).cast()
    }

    unsafe fn from_ptr(ptr: NonNull<()>) -> Box<T> {
        // SAFETY: the caller's contract: `ptr` came from `Box::leak` of a
        // `Box<T>` in `into_ptr` and is reclaimed once.
        unsafe { Box::from_raw(ptr.cast::<T>().as_ptr()) }
    }
}

/// One worker's stealable LIFO slot; owns the value it holds.
pub(crate) struct LifoSlot<T: SlotValue> {
    ptr: AtomicPtr<()>,
    _owns: PhantomData<T>,
}

// SAFETY: the slot moves `T: Send` values between threads only through
// atomic swaps that hand each stored value to exactly one caller, so no
// two threads ever hold the same `T` (which need not be `Sync`).
unsafe impl<T: SlotValue> Sync for LifoSlot<T> {}

impl<T: SlotValue> LifoSlot<T> {
    pub(crate) fn new() -> LifoSlot<T> {
        LifoSlot { ptr: AtomicPtr::new(ptr::null_mut()), _owns: PhantomData }
    }

    /// Owner only: puts `value` in the slot and returns the value it
    /// displaced (`None` when the slot was empty or a thief emptied it).
    pub(crate) fn put(&self, value: T) -> Option<T> {
        // Release: publishes the value (and all the owner did before, e.g.
        // the spawn that made the task) to the Acquire swap in a thief's
        // `take` that reads it. No Acquire half: a non-null pointer read
        // here was stored by this same thread (only the owner stores
        // tasks), and a null one carries nothing to read.
        let prev = self.ptr.swap(value.into_ptr().as_ptr(), Ordering::Release);
        // SAFETY: a non-null pointer in the slot came from `into_ptr` of a
        // `T` (only `put` stores one), and this swap took it out of the
        // slot, so this is its only reclaim.
        NonNull::new(prev).map(|p| unsafe { T::from_ptr(p) })
    }

    /// Owner or thief: empties the slot, returning what it held.
    pub(crate) fn take(&self) -> Option<T> {
        // Relaxed: a hint to skip the swap when the slot looks empty; a
        // stale non-null costs only the swap below, a stale null makes a
        // thief miss a task the owner will run anyway (the owner always
        // sees its own stores).
        if self.ptr.load(Ordering::Relaxed).is_null() {
            return None;
        }
        // Acquire: pairs with the Release swap of the owner's `put` that
        // stored the pointer read here, so the task's contents are visible
        // to the thread that gets it.
        let p = self.ptr.swap(ptr::null_mut(), Ordering::Acquire);
        // SAFETY: as in `put`: the pointer came from `into_ptr` of a `T`
        // and this swap took it out of the slot.
        NonNull::new(p).map(|p| unsafe { T::from_ptr(p) })
    }

    /// Whether the slot holds a value: a snapshot for heuristics (the
    /// owner's notify rule, a parking worker's re-check); whoever acts on
    /// it re-checks with `take`.
    pub(crate) fn is_occupied(&self) -> bool {
        // Relaxed: a snapshot; the owner always sees its own stores, and a
        // peer's stale answer only changes whether it searches once more.
        !self.ptr.load(Ordering::Relaxed).is_null()
    }
}

impl<T: SlotValue> Drop for LifoSlot<T> {
    fn drop(&mut self) {
        // The backstop: the policy empties every slot at shutdown
        // (`drain_core`, `close_shared`), so normally this finds null. A
        // value still here is owned by the slot alone and released once.
        drop(self.take());
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn put_returns_the_displaced_value_and_take_empties() {
        let slot = LifoSlot::<Box<u32>>::new();
        assert!(!slot.is_occupied());
        assert_eq!(slot.put(Box::new(1)), None);
        assert!(slot.is_occupied());
        assert_eq!(slot.put(Box::new(2)).as_deref(), Some(&1));
        assert_eq!(slot.take().as_deref(), Some(&2));
        assert_eq!(slot.take(), None);
        assert!(!slot.is_occupied());
        assert_eq!(slot.put(Box::new(3)), None, "an emptied slot displaces nothing");
    }

    #[test]
    fn a_value_left_in_the_slot_is_released_once_with_it() {
        let value = std::sync::Arc::new(());
        let slot = LifoSlot::<Box<std::sync::Arc<()>>>::new();
        assert!(slot.put(Box::new(value.clone())).is_none());
        assert_eq!(std::sync::Arc::strong_count(&value), 2);
        drop(slot);
        assert_eq!(std::sync::Arc::strong_count(&value), 1);
    }

    /// A thief races `take` against an owner that keeps `put`ting
    /// numbered values: every number comes out exactly once, from a take,
    /// a displacement, or the owner's final take.
    #[test]
    fn racing_takes_hand_out_every_value_once() {
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
        const N: u32 = 20_000;
        let slot = LifoSlot::<Box<u32>>::new();
        let done = AtomicBool::new(false);
        let mut seen = vec![0u8; N as usize];
        let stolen: Vec<u32> = std::thread::scope(|s| {
            let thief = s.spawn(|| {
                let mut got = Vec::new();
                while !done.load(SeqCst) {
                    got.extend(slot.take().map(|v| *v));
                }
                got
            });
            for i in 0..N {
                if let Some(v) = slot.put(Box::new(i)) {
                    seen[*v as usize] += 1;
                }
            }
            if let Some(v) = slot.take() {
                seen[*v as usize] += 1;
            }
            done.store(true, SeqCst);
            thief.join().unwrap()
        });
        for v in stolen {
            seen[v as usize] += 1;
        }
        let wrong: Vec<usize> = (0..N as usize).filter(|&i| seen[i] != 1).collect();
        assert!(wrong.is_empty(), "values not handed out exactly once: {wrong:?}");
    }
}
