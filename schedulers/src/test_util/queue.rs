//! What the local queues' tests hold in common: a sink that records what
//! an owner spills, and, for the many-thread stress runs, a ledger of what
//! happened to each task, an inject queue behind a lock and a seeded
//! generator of push/pop patterns.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU8, Ordering::SeqCst};
use std::sync::Mutex;

use crate::policies::steal_half::queue::Overflow;

/// Records what the owner spills, single tasks and batches apart.
pub(crate) struct Sink<T> {
    pub(crate) singles: RefCell<Vec<T>>,
    pub(crate) batches: RefCell<Vec<Vec<T>>>,
}

impl<T> Default for Sink<T> {
    fn default() -> Self {
        Sink { singles: RefCell::default(), batches: RefCell::default() }
    }
}

impl<T> Overflow<T> for Sink<T> {
    fn push(&self, task: T) {
        self.singles.borrow_mut().push(task);
    }

    fn push_batch<I: Iterator<Item = T>>(&self, tasks: I) {
        self.batches.borrow_mut().push(tasks.collect());
    }
}

/// What happened to each task: how often it ran and how often it was
/// dropped.
pub(crate) struct Ledger {
    ran: Vec<AtomicU8>,
    dropped: Vec<AtomicU8>,
}

impl Ledger {
    pub(crate) fn new(tasks: usize) -> Ledger {
        let counters = || (0..tasks).map(|_| AtomicU8::new(0)).collect();
        Ledger { ran: counters(), dropped: counters() }
    }

    /// Task `id`, accounted for in this ledger.
    pub(crate) fn task(&self, id: usize) -> Task<'_> {
        Task { id, ledger: self }
    }

    /// Every task was dropped exactly once and ran at most once; with
    /// `every_task_ran`, exactly once.
    pub(crate) fn check(&self, every_task_ran: bool) {
        for id in 0..self.ran.len() {
            let (ran, dropped) = (self.ran[id].load(SeqCst), self.dropped[id].load(SeqCst));
            assert_eq!(dropped, 1, "task {id} dropped {dropped} times");
            assert!(ran <= 1, "task {id} ran {ran} times");
            assert!(!every_task_ran || ran == 1, "task {id} never ran");
        }
    }
}

/// A task that records its run and its drop in the ledger.
pub(crate) struct Task<'a> {
    id: usize,
    ledger: &'a Ledger,
}

impl Task<'_> {
    pub(crate) fn run(self) {
        assert_eq!(self.ledger.ran[self.id].fetch_add(1, SeqCst), 0, "task {} ran twice", self.id);
    }
}

impl Drop for Task<'_> {
    fn drop(&mut self) {
        self.ledger.dropped[self.id].fetch_add(1, SeqCst);
    }
}

/// An inject queue: a vector behind a lock.
pub(crate) struct Inject<T>(Mutex<Vec<T>>);

impl<T> Default for Inject<T> {
    fn default() -> Self {
        Inject(Mutex::default())
    }
}

impl<T> Inject<T> {
    /// What was spilled into it.
    pub(crate) fn into_tasks(self) -> Vec<T> {
        self.0.into_inner().unwrap()
    }
}

impl<T> Overflow<T> for Inject<T> {
    fn push(&self, task: T) {
        self.0.lock().unwrap().push(task);
    }

    fn push_batch<I: Iterator<Item = T>>(&self, tasks: I) {
        self.0.lock().unwrap().extend(tasks);
    }
}

/// xorshift64: a fixed seed gives the same push/pop pattern every run.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }
}
