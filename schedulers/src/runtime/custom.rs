//! The runtime core for a policy registered from another crate
//! (`crate::register`).
//!
//! The built-in policies are variants of `Handle`'s enum, so every spawn and
//! wake is statically dispatched. A registered policy cannot be a variant:
//! its `Shared<P>` is reached through [`DynShared`], a trait object, and its
//! tasks carry a [`DynSched`] as their scheduler. That costs one virtual call
//! per spawn and per wake; the worker loop (`worker_main::<P>`) and every
//! call into the policy stay monomorphised.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::shared::Shared;
use crate::blocking::BlockingPool;
use crate::driver;
use crate::metrics::RuntimeMetrics;
use crate::policy::{Origin, Policy};
use crate::task::owned::OwnedTasks;
use crate::task::raw::{CellAlign, Notified, RawTask, Schedule, Task};
use crate::task::JoinHandle;

/// What the handle and the tasks of a registered policy's runtime need from
/// its `Shared<P>`, without naming `P`.
pub(crate) trait DynShared: Send + Sync + 'static {
    fn owned(&self) -> &OwnedTasks;
    fn cell_align(&self) -> CellAlign;
    fn schedule_task(&self, task: Notified, origin: Origin);
    fn defer_yield(&self, task: Notified);
    fn blocking(&self) -> &BlockingPool;
    fn metrics(&self) -> RuntimeMetrics;
    fn driver_handle(&self) -> &driver::Handle;
    fn workers(&self) -> usize;
    fn shutdown(&self, timeout: Duration) -> bool;
}

impl<P: Policy> DynShared for Shared<P> {
    fn owned(&self) -> &OwnedTasks {
        &self.owned
    }

    fn cell_align(&self) -> CellAlign {
        self.cell_align()
    }

    fn schedule_task(&self, task: Notified, origin: Origin) {
        Shared::schedule_task(self, task, origin);
    }

    fn defer_yield(&self, task: Notified) {
        self.defer_yield(task);
    }

    fn blocking(&self) -> &BlockingPool {
        &self.blocking
    }

    fn metrics(&self) -> RuntimeMetrics {
        Shared::metrics(self)
    }

    fn driver_handle(&self) -> &driver::Handle {
        &self.driver_handle
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn shutdown(&self, timeout: Duration) -> bool {
        Shared::shutdown(self, timeout)
    }
}

/// The scheduler a registered policy's tasks carry.
#[derive(Clone)]
pub(crate) struct DynSched(pub(crate) Arc<dyn DynShared>);

impl Schedule for DynSched {
    fn schedule(&self, task: Notified) {
        self.0.schedule_task(task, Origin::Wake);
    }

    fn yield_now(&self, task: Notified) {
        self.0.schedule_task(task, Origin::Yield);
    }

    fn defer_yield(&self, task: Notified) {
        self.0.defer_yield(task);
    }

    fn release(&self, task: RawTask) -> Option<Task> {
        self.0.owned().remove(task)
    }
}

impl DynSched {
    pub(crate) fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let shared = &self.0;
        super::shared::spawn_task(shared.owned(), shared.cell_align(), self.clone(), future, |n| {
            shared.schedule_task(n, Origin::Spawn)
        })
    }
}
