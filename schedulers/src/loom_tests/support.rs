//! A minimal scheduler for task-level models: a run queue and an owned
//! list, driven by the model's threads.

use std::collections::VecDeque;
use std::future::Future;

use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Mutex;
use crate::task::owned::OwnedTasks;
use crate::task::raw::{new_task, CellAlign, Notified, RawTask, Schedule, Task};
use crate::task::JoinHandle;

pub(super) struct TestSched {
    queue: Mutex<VecDeque<Notified>>,
    pub(super) owned: OwnedTasks,
}

/// std Arc on purpose: loom's Arc reports the task→scheduler cycle, which
/// the model breaks explicitly with `finish`.
#[derive(Clone)]
pub(super) struct Sched(pub(super) std::sync::Arc<TestSched>);

impl Schedule for Sched {
    fn schedule(&self, task: Notified) {
        self.0.queue.lock().unwrap().push_back(task);
    }

    fn release(&self, task: RawTask) -> Option<Task> {
        self.0.owned.remove(task)
    }
}

impl Sched {
    pub(super) fn new() -> Sched {
        Sched(std::sync::Arc::new(TestSched { queue: Mutex::new(VecDeque::new()), owned: OwnedTasks::new(1) }))
    }

    pub(super) fn spawn<F>(&self, f: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (task, notified, raw) = new_task(f, self.clone(), self.0.owned.next_id(), CellAlign::new(128));
        // SAFETY: `raw` carries the JoinHandle reference; output F::Output.
        let join = unsafe { JoinHandle::new(raw) };
        if let Some(n) = self.0.owned.bind(task, notified) {
            self.schedule(n);
        }
        join
    }

    /// Runs queued tasks until the queue is empty.
    pub(super) fn run_all(&self) {
        loop {
            let next = self.0.queue.lock().unwrap().pop_front();
            match next {
                Some(t) => t.run(),
                None => return,
            }
        }
    }

    /// Takes every queued `Notified` (to hand to a policy under test).
    pub(super) fn take_queued(&self) -> Vec<Notified> {
        self.0.queue.lock().unwrap().drain(..).collect()
    }

    /// Ends the model: cancels what is left, drops queued references.
    pub(super) fn finish(&self) {
        self.0.owned.close();
        self.0.owned.shutdown_all();
        let left: Vec<_> = self.0.queue.lock().unwrap().drain(..).collect();
        drop(left);
        assert_eq!(std::sync::Arc::strong_count(&self.0), 1, "a task still holds the scheduler: leaked reference");
    }
}

/// Counts drops.
pub(super) struct DropCount(pub(super) std::sync::Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

pub(super) fn counter() -> std::sync::Arc<AtomicUsize> {
    std::sync::Arc::new(AtomicUsize::new(0))
}
