//! Your own scheduler next to ours, from your own crate, with the whole
//! `wsbench` CLI: copy this file into a binary of yours.
//!
//!     cargo run --release -p wsbench --example custom_policy -- \
//!         --sched stack,steal-half --workers 2 --workload chained-spawn,rpc-fanout
//!
//! `stack` is a deliberately small policy: every worker shares one LIFO
//! stack behind a mutex (newest task first, no per-worker queues, no
//! stealing). It uses only the public extension API of
//! `wsbench_schedulers` (`policy::*`, `PolicyInfo`, `register`) and runs
//! on the same runtime core as the built-in policies: the same tasks,
//! wakers, epoll reactor, timer wheel, blocking pool, counters and core
//! knobs (`idle`, `budget`, `event-interval`, `task-align`).
//!
//! It also adds a reference row, `tokio-gqi31`: tokio's multi-thread
//! runtime with a fixed `global_queue_interval` of 31 (tokio's default is
//! adaptive), through `wsbench_workloads::register_reference`. Any runtime
//! that implements the workloads' `rt::Rt` trait can be added this way.

use std::process::ExitCode;
use std::sync::Mutex;

use wsbench_schedulers::knobs::{Knobs, CORE_KNOBS};
use wsbench_schedulers::policy::{Event, Notified, Origin, Policy, Wake, WorkerRef};
use wsbench_schedulers::{register, PolicyInfo, WorkerRule};

/// One stack shared by every worker.
struct Stack {
    inner: Mutex<Shared>,
}

struct Shared {
    tasks: Vec<Notified>,
    /// Set by `close_shared` at shutdown; later pushes are refused.
    closed: bool,
}

impl Stack {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        // A panic while holding this lock cannot leave the stack half
        // updated (push and pop are single Vec calls), so poisoning is
        // ignored.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Policy for Stack {
    /// Nothing per worker.
    type Core = ();
    /// Workers share one stack: nothing to steal.
    const STEALS: bool = false;

    fn new(workers: usize, _knobs: &Knobs) -> (Self, Vec<()>) {
        (Stack { inner: Mutex::new(Shared { tasks: Vec::new(), closed: false }) }, vec![(); workers])
    }

    fn push_local(&self, _core: &mut (), _w: &WorkerRef<'_>, task: Notified, _origin: Origin) -> bool {
        let mut s = self.lock();
        if !s.closed {
            s.tasks.push(task);
        }
        // Shared work: another worker may take it.
        true
    }

    fn push_remote(&self, task: Notified) -> Result<Wake, Notified> {
        let mut s = self.lock();
        if s.closed {
            return Err(task);
        }
        s.tasks.push(task);
        Ok(Wake::Any)
    }

    fn next_task(&self, _core: &mut (), w: &WorkerRef<'_>) -> Option<Notified> {
        let task = self.lock().tasks.pop()?;
        w.count(Event::InjectPop, 1);
        Some(task)
    }

    fn steal(&self, _core: &mut (), _w: &WorkerRef<'_>) -> Option<Notified> {
        None
    }

    fn has_work(&self, _core: &(), _index: usize, _peers: bool) -> bool {
        // The mutex orders this read after any push that released it.
        !self.lock().tasks.is_empty()
    }

    fn drain_core(&self, _core: &mut (), _out: &mut Vec<Notified>) {}

    fn close_shared(&self, out: &mut Vec<Notified>) {
        let mut s = self.lock();
        s.closed = true;
        out.append(&mut s.tasks);
    }
}

/// tokio, with one setting changed: a reference row of your own.
fn register_tokio_gqi31() -> Result<(), wsbench_workloads::RegisterReferenceError> {
    wsbench_workloads::register_reference(
        "tokio-gqi31",
        "example: tokio multi-thread runtime with global_queue_interval fixed at 31 (examples/custom_policy.rs)",
        false,
        |spec| {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.global_queue_interval(31);
            wsbench_workloads::rt::TokioMulti::with_builder(builder, spec)
        },
    )
}

fn main() -> ExitCode {
    if let Err(e) = register_tokio_gqi31() {
        eprintln!("Error: {e}");
        return ExitCode::from(2);
    }
    let info = PolicyInfo {
        name: "stack",
        about: "example: one LIFO stack behind a mutex, shared by every worker (examples/custom_policy.rs)",
        workers: WorkerRule::Any,
        knobs: CORE_KNOBS,
    };
    if let Err(e) = register::<Stack>(info) {
        eprintln!("Error: {e}");
        return ExitCode::from(2);
    }
    wsbench::main()
}
