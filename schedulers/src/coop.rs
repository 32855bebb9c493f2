//! Cooperative budget, as tokio does it: each scheduled poll of a task gets
//! [`BUDGET_UNITS`] units, spent by runtime resources (timers, sockets,
//! JoinHandles), not by polls. When the budget is spent, a resource returns
//! `Pending` after waking the task, so the task goes to the back of the queue
//! and a task that is always ready cannot starve its neighbours.
//!
//! The budget is thread-local and owner-only: it costs a `Cell` read and
//! write, no atomics.

use std::cell::Cell;
use std::task::{Context, Poll};

/// Units per scheduled poll (tokio uses 128).
pub(crate) const BUDGET_UNITS: u32 = 128;

thread_local! {
    /// `None` = unconstrained (outside a task, or `budget=off`).
    static BUDGET: Cell<Option<u32>> = const { Cell::new(None) };
}

/// Runs `f` with a fresh budget (`Some(units)`) or unconstrained (`None`),
/// restoring the previous budget afterwards (polls can nest via `block_on`
/// of the current-thread kind, never on a worker, but restoring is cheap).
pub(crate) fn with_budget<R>(units: Option<u32>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<u32>);
    impl Drop for Restore {
        fn drop(&mut self) {
            BUDGET.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(BUDGET.with(|b| b.replace(units)));
    f()
}

/// Spends one unit. `Pending` (after waking the task so that it is
/// rescheduled) when the budget is exhausted.
pub(crate) fn poll_proceed(cx: &mut Context<'_>) -> Poll<()> {
    let ok = BUDGET.with(|b| match b.get() {
        None => true,
        Some(0) => false,
        Some(n) => {
            b.set(Some(n - 1));
            true
        }
    });
    if ok {
        Poll::Ready(())
    } else {
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Whether the current task still has budget (does not spend any).
pub(crate) fn has_budget_remaining() -> bool {
    BUDGET.with(|b| b.get() != Some(0))
}
