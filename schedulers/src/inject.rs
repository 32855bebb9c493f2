//! The inject queue: tasks scheduled from outside the workers (and overflow
//! from full local rings).
//!
//! `mutex` mode is tokio's shape: one queue behind one mutex, with an
//! atomic length so that emptiness checks take no lock. It uses a
//! `VecDeque` of task pointers rather than tokio's intrusive list; the
//! batch operations take the lock once either way. `sharded` mode splits it
//! into several such queues (the "sharded relay" some write-ups describe,
//! tokio PR 8483): each pushing thread has a home shard — threads are
//! numbered in the order they first push, and thread `t` pushes to shard
//! `t % shards` — so spawners do not share a lock unless there are more
//! of them than shards, and a worker pops its own shard (`worker %
//! shards`) first, then the others in order.
//!
//! Every lock acquisition first tries the lock; one that finds it held
//! counts one contended acquisition on its shard (`lock_contended`, the
//! `inject_lock_contended` figure of `RuntimeMetrics`) before it blocks.
//! The uncontended path costs the same single atomic as a plain `lock`.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;

use crate::knobs::InjectMode;
use crate::loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::{Mutex, MutexGuard};
use crate::task::raw::Notified;

/// Workers per shard in `sharded` mode.
const WORKERS_PER_SHARD: usize = 4;

struct Shard {
    queue: Mutex<Queue>,
    /// Mirror of `queue.tasks.len()`, written under the lock.
    len: AtomicUsize,
    /// Acquisitions of `queue` that found it held (a statistic).
    lock_contended: AtomicU64,
}

impl Shard {
    /// Locks the queue, counting the acquisition as contended when the
    /// lock is already held.
    fn lock(&self) -> MutexGuard<'_, Queue> {
        match self.queue.try_lock() {
            Ok(q) => q,
            Err(std::sync::TryLockError::WouldBlock) => {
                // Relaxed: a statistic; nothing is published through it.
                self.lock_contended.fetch_add(1, Ordering::Relaxed);
                self.queue.lock().unwrap()
            }
            Err(std::sync::TryLockError::Poisoned(e)) => panic!("inject shard lock poisoned: {e}"),
        }
    }
}

struct Queue {
    tasks: VecDeque<Notified>,
    closed: bool,
}

pub(crate) struct Inject {
    shards: Box<[CachePadded<Shard>]>,
}

/// Numbers threads in the order they first push to any sharded inject
/// queue (process-wide: a thread keeps its number across runtimes).
static NEXT_THREAD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

std::thread_local! {
    /// This thread's number, taken from [`NEXT_THREAD`] at its first push.
    static THREAD_NUMBER: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// This thread's number (see [`NEXT_THREAD`]).
fn thread_number() -> usize {
    THREAD_NUMBER.with(|number| {
        number.get().unwrap_or_else(|| {
            // Relaxed: only hands out distinct numbers; nothing is published.
            let fresh = NEXT_THREAD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            number.set(Some(fresh));
            fresh
        })
    })
}

impl Inject {
    pub(crate) fn new(mode: InjectMode, workers: usize) -> Inject {
        let n = match mode {
            InjectMode::Mutex => 1,
            InjectMode::Sharded => workers.div_ceil(WORKERS_PER_SHARD).max(1),
        };
        let shards = (0..n)
            .map(|_| {
                CachePadded::new(Shard {
                    queue: Mutex::new(Queue { tasks: VecDeque::new(), closed: false }),
                    len: AtomicUsize::new(0),
                    lock_contended: AtomicU64::new(0),
                })
            })
            .collect();
        Inject { shards }
    }

    /// The pushing thread's home shard.
    fn push_shard(&self) -> &Shard {
        if self.shards.len() == 1 {
            return &self.shards[0];
        }
        &self.shards[thread_number() % self.shards.len()]
    }

    /// The home shard of the calling thread (tests).
    #[cfg(test)]
    pub(crate) fn home_shard(&self) -> usize {
        thread_number() % self.shards.len()
    }

    /// Pushes one task; `Err` when closed.
    pub(crate) fn push(&self, task: Notified) -> Result<(), Notified> {
        let shard = self.push_shard();
        let mut q = shard.lock();
        if q.closed {
            return Err(task);
        }
        q.tasks.push_back(task);
        // Release: pairs with the Acquire in `len`, so a worker that sees a
        // non-zero length and then locks finds the task (the lock alone
        // orders the task itself).
        shard.len.store(q.tasks.len(), Ordering::Release);
        Ok(())
    }

    /// Pushes a batch under one lock; tasks are dropped when closed.
    pub(crate) fn push_batch(&self, tasks: impl Iterator<Item = Notified>) {
        let shard = self.push_shard();
        let mut q = shard.lock();
        if q.closed {
            drop(q);
            tasks.for_each(drop);
            return;
        }
        q.tasks.extend(tasks);
        // Release: as in `push`.
        shard.len.store(q.tasks.len(), Ordering::Release);
    }

    /// Total queued (sum over shards; a snapshot).
    pub(crate) fn len(&self) -> usize {
        // Acquire: pairs with the Release stores in push/pop.
        self.shards.iter().map(|s| s.len.load(Ordering::Acquire)).sum()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pops up to `max` tasks under one lock per shard, starting at
    /// `start`'s shard; the first is returned, the rest handed to `rest`.
    pub(crate) fn pop_batch(&self, start: usize, max: usize, mut rest: impl FnMut(Notified)) -> Option<Notified> {
        let n = self.shards.len();
        for k in 0..n {
            let shard = &self.shards[(start + k) % n];
            // Acquire: pairs with the Release in push; skip empty shards
            // without locking.
            if shard.len.load(Ordering::Acquire) == 0 {
                continue;
            }
            let mut q = shard.lock();
            let Some(first) = q.tasks.pop_front() else { continue };
            let take = max.saturating_sub(1).min(q.tasks.len());
            for t in q.tasks.drain(..take) {
                rest(t);
            }
            // Release: as in `push`.
            shard.len.store(q.tasks.len(), Ordering::Release);
            return Some(first);
        }
        None
    }

    /// Pops one task.
    pub(crate) fn pop(&self, start: usize) -> Option<Notified> {
        self.pop_batch(start, 1, |_| unreachable!("pop_batch(max = 1) handed out a second task"))
    }

    /// Closes every shard (later pushes fail) and drains it into `out`.
    pub(crate) fn close(&self, out: &mut Vec<Notified>) {
        for shard in self.shards.iter() {
            let mut q = shard.lock();
            q.closed = true;
            out.extend(q.tasks.drain(..));
            // Release: as in `push`.
            shard.len.store(0, Ordering::Release);
        }
    }

    /// Lock acquisitions (push, pop, close) that found a shard's lock held,
    /// summed over shards since the queue was built.
    pub(crate) fn lock_contended(&self) -> u64 {
        // Relaxed: a statistic (see `Shard::lock`).
        self.shards.iter().map(|s| s.lock_contended.load(Ordering::Relaxed)).sum()
    }

    /// Number of shards (1 in mutex mode).
    pub(crate) fn shards(&self) -> usize {
        self.shards.len()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn each_thread_keeps_one_home_and_threads_get_distinct_numbers() {
        let numbers: Vec<(usize, usize)> = (0..8)
            .map(|_| std::thread::spawn(|| (thread_number(), thread_number())))
            .map(|t| t.join().unwrap())
            .collect();
        assert!(numbers.iter().all(|(a, b)| a == b), "a thread's number changed: {numbers:?}");
        let mut distinct: Vec<usize> = numbers.iter().map(|&(a, _)| a).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 8, "{numbers:?}");
        // Sharded with 8 workers: 2 shards; mutex: always shard 0.
        let inject = Inject::new(InjectMode::Sharded, 8);
        assert_eq!(inject.shards(), 2);
        assert_eq!(inject.home_shard(), thread_number() % 2);
    }

    /// `lock_contended` counts acquisitions that found a shard's lock held:
    /// a close that runs uncontended counts nothing; one that runs while
    /// the test holds the lock counts exactly one (its `try_lock` fails
    /// once, then it waits), on that shard only.
    #[test]
    fn an_acquisition_that_finds_the_lock_held_counts_one_contention() {
        let inject = Inject::new(InjectMode::Sharded, 8);
        let mut out = Vec::new();
        inject.close(&mut out);
        assert_eq!(inject.lock_contended(), 0, "uncontended");
        std::thread::scope(|s| {
            let guard = inject.shards[1].queue.lock().unwrap();
            let closer = s.spawn(|| inject.close(&mut Vec::new()));
            let start = std::time::Instant::now();
            while inject.lock_contended() == 0 {
                assert!(start.elapsed() < std::time::Duration::from_secs(20), "the blocked close was not counted");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            drop(guard);
            closer.join().unwrap();
        });
        assert_eq!(inject.lock_contended(), 1);
        assert_eq!(inject.shards[1].lock_contended.load(Ordering::Relaxed), 1, "counted on the held shard");
        assert!(out.is_empty());
    }
}
