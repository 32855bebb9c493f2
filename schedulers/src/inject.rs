//! The inject queue: tasks scheduled from outside the workers (and overflow
//! from full local rings).
//!
//! `mutex` mode is tokio's shape: one queue behind one mutex, with an
//! atomic length so that emptiness checks take no lock. It uses a
//! `VecDeque` of task pointers rather than tokio's intrusive list; the
//! batch operations take the lock once either way. `sharded` mode splits it
//! into several such queues (the "sharded relay" some write-ups describe):
//! pushes spread round-robin, pops start at the popping worker's shard.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;

use crate::knobs::InjectMode;
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Mutex;
use crate::task::raw::Notified;

/// Workers per shard in `sharded` mode.
const WORKERS_PER_SHARD: usize = 4;

struct Shard {
    queue: Mutex<Queue>,
    /// Mirror of `queue.tasks.len()`, written under the lock.
    len: AtomicUsize,
}

struct Queue {
    tasks: VecDeque<Notified>,
    closed: bool,
}

pub(crate) struct Inject {
    shards: Box<[CachePadded<Shard>]>,
    /// Round-robin cursor for pushes in sharded mode.
    next_push: AtomicUsize,
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
                })
            })
            .collect();
        Inject { shards, next_push: AtomicUsize::new(0) }
    }

    fn push_shard(&self) -> &Shard {
        if self.shards.len() == 1 {
            return &self.shards[0];
        }
        // Relaxed: only spreads load; no data is published through it.
        let i = self.next_push.fetch_add(1, Ordering::Relaxed) % self.shards.len();
        &self.shards[i]
    }

    /// Pushes one task; `Err` when closed.
    pub(crate) fn push(&self, task: Notified) -> Result<(), Notified> {
        let shard = self.push_shard();
        let mut q = shard.queue.lock().unwrap();
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
        let mut q = shard.queue.lock().unwrap();
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
            let mut q = shard.queue.lock().unwrap();
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
            let mut q = shard.queue.lock().unwrap();
            q.closed = true;
            out.extend(q.tasks.drain(..));
            // Release: as in `push`.
            shard.len.store(0, Ordering::Release);
        }
    }

    /// Number of shards (1 in mutex mode).
    pub(crate) fn shards(&self) -> usize {
        self.shards.len()
    }
}
