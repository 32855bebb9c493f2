//! The reference runtimes' role in a verdict, which depends on how the two
//! files relate.
//!
//! - **Independent files** (two invocations, perhaps minutes or machines
//!   apart): the machine drifts between them by more than most code
//!   changes do. tokio in the same cell runs the same workload on the same
//!   machine but none of our scheduler code, so it is the *control*: a
//!   change of ours that tokio shows alike is judged on what is left
//!   beyond it, and a reference's own change is reported as the machine,
//!   not as a verdict ([`hold_against_control`]).
//! - **Paired files** (the two sides of one A/B invocation, `run
//!   --base-bin`): every pair shares the machine, so the pairs already
//!   cancel the drift and a significant change is the code's. A change
//!   every runtime of a cell group shows alike, the references included,
//!   is a change in the code they share — the workloads — and stands as
//!   `regressed (all runtimes)` (or `improved (all runtimes)`); a gate
//!   fails on it ([`mark_all_runtimes`]). The control cancels nothing
//!   here: cancelling would hide exactly the shared-code regression the
//!   pairs can see.

use super::{Comparison, Floors, Verdict, METRICS};

/// The reference runtimes (`wsbench_schedulers::REFERENCE_NAMES`, the one
/// list of their names): code this repository does not change, so in a
/// comparison of two of our commits they measure the machine.
const REFERENCES: &[&str] = wsbench_schedulers::REFERENCE_NAMES;
/// The reference whose cells serve as the control of ours.
pub(super) const CONTROL: &str = "tokio";

/// Whether a row's scheduler is a reference runtime: a reference's name,
/// or one pinned to a published version (`tokio@1.50.0`).
pub(super) fn is_reference(scheduler: &str) -> bool {
    let name = scheduler.split_once('@').map_or(scheduler, |(name, _)| name);
    REFERENCES.contains(&name)
}

/// Applies the references' role to the verdicts: [`mark_all_runtimes`]
/// for paired files, [`hold_against_control`] otherwise. Returns the
/// references' own changes that were set aside as the machine's.
pub(super) fn hold(comparisons: &mut [Comparison], floors: &Floors, paired: bool) -> Vec<String> {
    if paired {
        mark_all_runtimes(comparisons);
        Vec::new()
    } else {
        hold_against_control(comparisons, floors)
    }
}

/// Paired files: marks every verdict of a (cell group, metric) in which
/// every runtime, at least one reference and one of ours among them, has
/// the same verdict (all regressed or all improved). A reference's verdict
/// stands either way, with a note saying what it measures.
fn mark_all_runtimes(comparisons: &mut [Comparison]) {
    type Group<'a> = (usize, &'a str, &'a str, &'a str, Option<u64>, &'a str, &'a str);
    fn group(c: &Comparison) -> (Group<'_>, &'static str) {
        (c.cell.without_scheduler(), c.metric)
    }
    let alike: Vec<bool> = comparisons
        .iter()
        .map(|c| {
            if c.verdict == Verdict::Unchanged || c.metric == "ok_runs" {
                return false;
            }
            let members: Vec<&Comparison> = comparisons.iter().filter(|o| group(o) == group(c)).collect();
            let reference = members.iter().any(|o| is_reference(&o.cell.scheduler));
            let ours = members.iter().any(|o| !is_reference(&o.cell.scheduler));
            reference && ours && members.iter().all(|o| o.verdict == c.verdict)
        })
        .collect();
    for (c, alike) in comparisons.iter_mut().zip(alike) {
        c.all_runtimes = alike;
        if c.verdict != Verdict::Unchanged && is_reference(&c.cell.scheduler) && !alike {
            c.note = "reference runtime, paired: the workloads' code or its version changed, not the machine".into();
        }
    }
}

/// Independent files: holds the verdicts up against the control, tokio in
/// the same cell (same workers, workload, parameters and rate).
///
/// - A change of ours that tokio's same metric shows too (rank test
///   significant, same direction, beyond the floor) is judged on what is
///   left of it:
///   `(1 + ours) / (1 + tokio) - 1` must still pass the floor.
/// - A reference runtime's own change is the machine (or the workload, or
///   a tokio upgrade) and is reported as a warning, not as a verdict.
fn hold_against_control(comparisons: &mut [Comparison], floors: &Floors) -> Vec<String> {
    // The control only has to show that the machine moved: its rank test
    // and the floor, without the correction for many comparisons.
    let moved = |o: &Comparison| {
        let Some(metric) = METRICS.iter().find(|m| m.name == o.metric) else { return false };
        let floor = if metric.tail { floors.tail_threshold } else { floors.threshold };
        o.p_value.is_some_and(|p| p < floors.alpha) && o.change.abs() >= floor
    };
    let control_change = |c: &Comparison, all: &[Comparison]| {
        all.iter()
            .find(|o| {
                o.cell.scheduler == CONTROL
                    && o.metric == c.metric
                    && o.cell.without_scheduler() == c.cell.without_scheduler()
                    && moved(o)
            })
            .map(|o| o.change)
    };
    let mut machine = Vec::new();
    let adjusted: Vec<Option<f64>> = comparisons
        .iter()
        .map(|c| {
            if c.verdict == Verdict::Unchanged || c.metric == "ok_runs" || is_reference(&c.cell.scheduler) {
                return None;
            }
            let control = control_change(c, comparisons)?;
            (control.signum() == c.change.signum()).then(|| (1.0 + c.change) / (1.0 + control) - 1.0)
        })
        .collect();
    for (c, adjusted) in comparisons.iter_mut().zip(adjusted) {
        let Some(metric) = METRICS.iter().find(|m| m.name == c.metric) else { continue };
        if c.verdict == Verdict::Unchanged {
            continue;
        }
        if is_reference(&c.cell.scheduler) {
            machine.push(format!("{} {} {:+.1}%", c.cell, c.metric, c.change * 100.0));
            c.note = format!(
                "reference runtime: a {} here is the machine or the workload, not our code",
                c.verdict.as_str()
            );
            c.verdict = Verdict::Unchanged;
            continue;
        }
        let Some(left) = adjusted else { continue };
        let floor = if metric.tail { floors.tail_threshold } else { floors.threshold };
        let worse = if metric.higher_is_better { -left } else { left };
        if worse.abs() < floor
            || worse.signum() != (if metric.higher_is_better { -c.change } else { c.change }).signum()
        {
            c.note = format!("{CONTROL} in this cell moved alike; {:+.1}% is left beyond it", left * 100.0);
            c.verdict = Verdict::Unchanged;
        }
    }
    machine
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_references_are_references() {
        for name in ["tokio", "tokio-current", "smol", "tokio@1.50.0", "smol@1.13.1"] {
            assert!(is_reference(name), "{name}");
        }
        for name in ["steal-half", "global", "steal-half@1.0"] {
            assert!(!is_reference(name), "{name}");
        }
    }
}
