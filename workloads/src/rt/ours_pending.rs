//! Stand-in for `ours.rs` until the runtime core's public API is on main.

use wsbench_schedulers::SchedulerKind;

use crate::api::{RunOptions, RunOutput, RuntimeSpec};
use crate::plan::Plan;
use crate::Error;

/// Our runtimes are not built yet: an error that says so.
pub(crate) fn run_ours(
    _kind: SchedulerKind,
    rt: &RuntimeSpec,
    _plan: &Plan,
    _opts: &RunOptions,
) -> Result<RunOutput, Error> {
    Err(Error::Unavailable {
        sched: rt.sched.clone(),
        reason: "the wsbench_schedulers runtime core is not on main yet",
    })
}
