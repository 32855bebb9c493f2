//! The owned-tasks list: every live task of a runtime, so that shutdown can
//! cancel each exactly once, including tasks parked on a waker (in no queue).
//!
//! An intrusive doubly linked list through `Header::owned`, split into
//! shards by task id so that concurrent spawns and completions on different
//! workers rarely share a lock. Shards are cache-padded for the same reason.
//!
//! Every shard lock acquisition first tries the lock; one that finds it
//! held counts one contended acquisition on its shard before it blocks
//! (`contended`, the `task_registry_contended` figure of `RuntimeMetrics`),
//! so the uncontended path costs the same single atomic as a plain `lock`.
//!
//! Shutdown protocol:
//! 1. `close` marks every shard closed under its lock; a later `bind`
//!    sees it and shuts the new task down at once.
//! 2. `shutdown_all` pops one task at a time (lock held only for the pop)
//!    and calls `Task::shutdown` without the lock, because dropping a future
//!    runs user code that may spawn or complete other tasks.

use std::ptr::NonNull;

use crossbeam_utils::CachePadded;

use super::raw::{Header, Notified, RawTask, Task};
use crate::loom::sync::atomic::{AtomicU64, Ordering};
use crate::loom::sync::{Mutex, MutexGuard};

/// Upper bound on shards; beyond it more shards buy nothing.
const MAX_SHARDS: usize = 256;
// A task's shard comes from its 16-bit header id.
const _: () = assert!(MAX_SHARDS <= 1 << 16, "Header::id is 16 bits");
/// Shards per worker, so that spawns on different workers rarely collide.
const SHARDS_PER_WORKER: usize = 4;

struct Shard {
    head: Option<NonNull<Header>>,
    len: usize,
    closed: bool,
}

// SAFETY: the raw pointers are task headers, only dereferenced with the
// shard lock held; tasks are Send.
unsafe impl Send for Shard {}

/// One shard's lock and its count of contended acquisitions.
struct Slot {
    shard: Mutex<Shard>,
    /// Acquisitions of `shard` that found it held (a statistic).
    contended: AtomicU64,
}

impl Slot {
    /// Locks the shard, counting the acquisition as contended when the
    /// lock is already held.
    fn lock(&self) -> MutexGuard<'_, Shard> {
        match self.shard.try_lock() {
            Ok(s) => s,
            Err(std::sync::TryLockError::WouldBlock) => {
                // Relaxed: a statistic; nothing is published through it.
                self.contended.fetch_add(1, Ordering::Relaxed);
                self.shard.lock().unwrap()
            }
            Err(std::sync::TryLockError::Poisoned(e)) => panic!("owned-tasks shard lock poisoned: {e}"),
        }
    }
}

pub(crate) struct OwnedTasks {
    shards: Box<[CachePadded<Slot>]>,
    mask: usize,
    next_id: AtomicU64,
}

impl OwnedTasks {
    pub(crate) fn new(workers: usize) -> OwnedTasks {
        let n = (workers * SHARDS_PER_WORKER).next_power_of_two().min(MAX_SHARDS);
        let shards = (0..n)
            .map(|_| {
                let shard = Mutex::new(Shard { head: None, len: 0, closed: false });
                CachePadded::new(Slot { shard, contended: AtomicU64::new(0) })
            })
            .collect();
        OwnedTasks { shards, mask: n - 1, next_id: AtomicU64::new(0) }
    }

    /// A fresh task id (spreads tasks over shards).
    pub(crate) fn next_id(&self) -> u64 {
        // Relaxed: only uniqueness matters, no data is published.
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn shard(&self, id: u64) -> &Slot {
        &self.shards[id as usize & self.mask]
    }

    /// Links a new task. When the list is closed, the task is shut down
    /// instead and `None` returned (its JoinHandle sees cancellation).
    pub(crate) fn bind(&self, task: Task, notified: Notified) -> Option<Notified> {
        let ptr = task.raw().header_ptr();
        let mut shard = self.shard(u64::from(task.raw().header().id)).lock();
        if shard.closed {
            drop(shard);
            drop(notified);
            task.shutdown();
            return None;
        }
        let old_head = shard.head;
        task.raw().header().owned.with_mut(|links| {
            // SAFETY: shard lock held; the task is not yet shared.
            let links = unsafe { &mut *links };
            links.prev = None;
            links.next = old_head;
            links.linked = true;
        });
        if let Some(old) = old_head {
            set_prev(old, Some(ptr));
        }
        shard.head = Some(ptr);
        shard.len += 1;
        // The list keeps the Task's reference.
        let _ = task.into_raw();
        Some(notified)
    }

    /// Unlinks a completed task; returns the list's reference if it was
    /// still linked (it is not after `shutdown_all` popped it).
    pub(crate) fn remove(&self, raw: RawTask) -> Option<Task> {
        let mut shard = self.shard(u64::from(raw.header().id)).lock();
        // SAFETY: shard lock held.
        let (linked, prev, next) = raw.header().owned.with(|l| unsafe { ((*l).linked, (*l).prev, (*l).next) });
        if !linked {
            return None;
        }
        match prev {
            Some(p) => set_next(p, next),
            None => shard.head = next,
        }
        if let Some(n) = next {
            set_prev(n, prev);
        }
        // SAFETY: shard lock held.
        raw.header().owned.with_mut(|l| unsafe { *l = Default::default() });
        shard.len -= 1;
        // SAFETY: the list's reference, now unlinked, passes to the caller.
        Some(unsafe { Task::from_raw(raw) })
    }

    /// Step 1: no more binds.
    pub(crate) fn close(&self) {
        for shard in self.shards.iter() {
            shard.lock().closed = true;
        }
    }

    /// Step 2: shut every remaining task down, one at a time.
    pub(crate) fn shutdown_all(&self) {
        for shard in self.shards.iter() {
            while let Some(task) = pop_front(shard) {
                task.shutdown();
            }
        }
    }

    /// Tasks currently linked.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len).sum()
    }

    /// Shard lock acquisitions (spawn, completion, shutdown) that found
    /// the lock held, summed over shards since the list was built.
    pub(crate) fn lock_contended(&self) -> u64 {
        // Relaxed: a statistic (see `Slot::lock`).
        self.shards.iter().map(|s| s.contended.load(Ordering::Relaxed)).sum()
    }
}

fn pop_front(slot: &Slot) -> Option<Task> {
    let mut shard = slot.lock();
    let head = shard.head?;
    let raw = RawTask::from_header(head);
    // SAFETY: shard lock held.
    let next = raw.header().owned.with(|l| unsafe { (*l).next });
    if let Some(n) = next {
        set_prev(n, None);
    }
    shard.head = next;
    shard.len -= 1;
    // SAFETY: shard lock held.
    raw.header().owned.with_mut(|l| unsafe { *l = Default::default() });
    // SAFETY: the list's reference passes to the caller.
    Some(unsafe { Task::from_raw(raw) })
}

fn set_prev(node: NonNull<Header>, prev: Option<NonNull<Header>>) {
    // SAFETY: `node` is linked, so the list's reference keeps it alive, and
    // the caller holds the shard lock that guards its links.
    unsafe { node.as_ref() }.owned.with_mut(|l| unsafe { (*l).prev = prev });
}

fn set_next(node: NonNull<Header>, next: Option<NonNull<Header>>) {
    // SAFETY: as in `set_prev`.
    unsafe { node.as_ref() }.owned.with_mut(|l| unsafe { (*l).next = next });
}
