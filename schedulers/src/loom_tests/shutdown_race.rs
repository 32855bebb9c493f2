//! A focused model of a shutdown race in the `global` and `steal-one`
//! policies, found by memcheck on the stress suite (`scripts/valgrind.sh`:
//! 1 run in about 5 reports the whole `Shared<StealOne>` "definitely lost").
//!
//! `push_remote` checks `closed`, then pushes onto the crossbeam
//! `Injector`; `close_shared` sets `closed`, then drains the injector. The
//! check and the push are not atomic with respect to the close:
//! 1. a remote push (an outside `spawn` whose task was bound to the owned
//!    list before it closed, or a foreign wake of a task that shutdown had
//!    not completed yet) loads `closed == false`;
//! 2. shutdown runs `owned.shutdown_all()` (cancels the task: its future is
//!    dropped) and `close_shared` (sets `closed`, drains: nothing there);
//! 3. the push lands in the injector, which nobody pops again.
//!
//! The stranded `Notified` keeps the task cell alive, the cell holds the
//! `Arc<Shared<P>>`, and `Shared` owns the injector: a reference cycle, so
//! the runtime (threads' queues, driver, counters) and the task leak. The
//! doc of `Global::closed` assumes racing pushes come only from wakes of
//! completed tasks; spawns and wakes of pending tasks also race.
//!
//! Fixed in the runtime (`global::push_closable`): after pushing, re-check `closed` and, if set,
//! drain the injector and drop what it held (with SeqCst on the flag's
//! store and load, or a SeqCst fence after the push and after the store:
//! either the closer's drain sees the task or the pusher sees the flag);
//! or guard the check-and-push with a lock shared with `close_shared`, as
//! the mutex-based `Inject` of the other policies does.
//!
//! Bound: 1 preemption (the pusher between its check and its push). The
//! crossbeam queue is not loom-instrumented; each of its operations runs
//! as one step here, which is enough: the race is on the `closed` flag.

use std::sync::Arc;

use loom::thread;

use super::support::Sched;
use crate::knobs::Knobs;
use crate::policies::global::Global;
use crate::policy::Policy;

#[test]
fn remote_push_racing_close_is_never_stranded() {
    loom::model(|| {
        let (policy, cores) = Global::new(1, &Knobs::default());
        let policy = Arc::new(policy);
        let sched = Sched::new();
        drop(sched.spawn(async {}));
        let task = sched.take_queued().pop().expect("one task");
        let pusher = {
            let policy = policy.clone();
            // Refused after close: the caller drops it (as Shared does).
            thread::spawn(move || drop(policy.push_remote(task).err()))
        };
        let mut drained = Vec::new();
        policy.close_shared(&mut drained);
        pusher.join().unwrap();
        drop(drained);
        assert!(!policy.has_work(&cores[0], 0, false), "a remote push landed after close_shared drained the queue");
        drop(policy);
        sched.finish();
    });
}
