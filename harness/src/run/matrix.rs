//! Runs the matrix: for each cell, N runs, each in a fresh runtime under a
//! watchdog — by default in a fresh child process ([`crate::run::isolate`]), with
//! `--in-process` on its own thread here — then hands the cell to the
//! exporters so it is on disk before the next cell starts.
//!
//! A run that returns an error, panics or crashes becomes a failed row and
//! the cell continues. A run still going at the watchdog limit becomes a
//! failed row and the matrix moves to the next cell (a cell that hung once
//! would hang again): its child process is killed, or in-process its thread
//! is abandoned (it cannot be killed safely).

use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Result;
use wsbench_workloads::api::{extra, RunOptions, RunOutput, RuntimeSpec, WorkloadSpec};
use wsbench_workloads::ideal::Ideal;

use crate::config::{interleave_key, Cell, CellList, RunConfig};
use crate::data::ideal::IdealColumns;
use crate::data::outcome::{panic_message, CellOutcome, Results, RunEnd, RunHistograms};
use crate::data::record::{
    counter_names, insufficient_samples_note, join_pairs, p99_us, quantile_ci_us, quantile_us, CellKey, Latencies,
    RunRecord, Status, P99,
};
use crate::output::export::Exporter;
use crate::run::cgroup::columns::LimitColumns;
use crate::run::cgroup::Cgroups;
use crate::run::pin::{self, CorePlan};
use crate::run::progress::Progress;
use crate::run::{ab, backend, health, interrupt};
use crate::stats::summary::CellSummary;

/// Runs one measured run on its own thread, waiting at most `limit`.
fn run_with_watchdog(runtime: RuntimeSpec, spec: WorkloadSpec, options: RunOptions, limit: Duration) -> RunEnd {
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = thread::Builder::new().name("wsbench-run".to_string()).spawn(move || {
        let result = panic::catch_unwind(AssertUnwindSafe(|| backend::run(&runtime, &spec, &options)));
        // The receiver is gone when the watchdog already gave up; nothing to do then.
        let _ = tx.send(result);
    });
    let handle = match spawned {
        Ok(h) => h,
        Err(e) => return RunEnd::Failed(format!("could not start the run thread: {e}")),
    };
    let deadline = Instant::now() + limit;
    let received = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.min(interrupt::POLL)) {
            // The run's thread is left behind; the process ends soon.
            Err(RecvTimeoutError::Timeout) if interrupt::requested() => return RunEnd::Interrupted,
            Err(RecvTimeoutError::Timeout) if left <= interrupt::POLL => return RunEnd::Hung,
            Err(RecvTimeoutError::Timeout) => {}
            other => break other,
        }
    };
    let end = match received {
        Ok(Ok(Ok(output))) => RunEnd::Done(Box::new(output)),
        Ok(Ok(Err(e))) => RunEnd::Failed(format!("{e:#}")),
        Ok(Err(payload)) => RunEnd::Failed(format!("panicked: {}", panic_message(payload.as_ref()))),
        Err(RecvTimeoutError::Timeout) => return RunEnd::Hung,
        Err(RecvTimeoutError::Disconnected) => RunEnd::Failed("the run thread ended without a result".to_string()),
    };
    // The thread has sent its result, so it is about to return.
    let _ = handle.join();
    end
}

/// The completions that throughput counts: an open-loop run's inside its
/// measured window (`completed_in_window`; the drain is not in the window),
/// else every one.
fn completed_in_window(out: &RunOutput) -> u64 {
    out.extras.iter().find(|(n, _)| n == extra::COMPLETED_IN_WINDOW).map_or(out.ops, |(_, v)| *v as u64)
}

/// The row of a run that finished.
pub fn record_from(key: &CellKey, run: usize, out: &RunOutput, cores: &CorePlan, pinned: bool) -> RunRecord {
    let elapsed_s = out.elapsed.as_secs_f64();
    let counters =
        counter_names().iter().map(|name| out.counters.iter().find(|(n, _)| n == name).and_then(|(_, v)| *v)).collect();
    let mut notes = out.notes.clone();
    if out.schedule_slipped {
        notes.push("load generator fell behind its schedule".to_string());
    }
    notes.extend(insufficient_samples_note(&out.latency_ns));
    let record = RunRecord {
        key: key.clone(),
        run,
        status: Status::Ok,
        error: String::new(),
        duration_s: Some(elapsed_s),
        ops: Some(out.ops),
        failed: out.failed,
        sent: out.sent,
        throughput_per_s: (elapsed_s > 0.0).then(|| completed_in_window(out) as f64 / elapsed_s),
        offered_per_s: out.offered_per_s,
        latency: Latencies::from_histogram_ns(&out.latency_ns),
        p99_ci_us: quantile_ci_us(&out.latency_ns, P99),
        uncorrected_p99_us: p99_us(out.uncorrected_ns.as_ref()),
        queue_wait_p99_us: p99_us(out.queue_wait_ns.as_ref()),
        service_p99_us: p99_us(out.service_ns.as_ref()),
        counters,
        schedule_slipped: out.schedule_slipped,
        oversubscribed: cores.oversubscribed,
        pinned,
        resolved_params: join_pairs(&out.params),
        extras: out.extras.clone(),
        notes: notes.join("; "),
        cpu: crate::run::cpu::CpuColumns::of(out, key.workers),
        ideal: IdealColumns::default(),
        runtime_version: String::new(),
        limits: LimitColumns::default(),
        sched_delay_p50_us: out.sched_delay_ns.as_ref().and_then(|h| quantile_us(h, P50)),
        sched_delay_p99_us: p99_us(out.sched_delay_ns.as_ref()),
    };
    without_mixed_means(record)
}

/// A run whose iterations fell into several steady modes (`modes` above 1:
/// the message-passing workloads tell them apart by cross-worker
/// hand-offs) reports each mode apart in its extras; its whole-run means —
/// throughput, latency, per-op CPU, utilisation, wake-ups per op — would
/// average the modes into one number, so they are blank in its row, and
/// every statistic, `compare` and `bisect` go without them. Its totals
/// (ops, CPU time, switches, counters) stay.
fn without_mixed_means(mut record: RunRecord) -> RunRecord {
    let modes = record.extras.iter().find(|(n, _)| n == extra::MODES).map_or(1.0, |(_, v)| *v);
    if modes > 1.0 {
        record.throughput_per_s = None;
        record.latency = None;
        record.p99_ci_us = None;
        record.cpu.cpu_us_per_op = None;
        record.cpu.cpu_util = None;
        record.cpu.wakeups_per_op = None;
    }
    record
}

/// The median quantile.
const P50: f64 = 0.5;

/// The ideal scheduler's columns of a finished run of `spec` on `runtime`
/// with `options` (the run's own seed), computed here after the run, so
/// the simulation never shares the machine with a measurement; with the
/// note that says why they are blank, where they are.
fn ideal_columns(
    runtime: &RuntimeSpec,
    spec: &WorkloadSpec,
    options: &RunOptions,
    record: &RunRecord,
) -> (IdealColumns, Option<String>) {
    let measured_p99 = record.latency.map(|l| l.p99_us).filter(|v| v.is_finite());
    match wsbench_workloads::ideal::ideal(runtime, spec, options) {
        Ok(Ideal::Latency(h)) => (IdealColumns::of(quantile_us(&h, P50), quantile_us(&h, P99), measured_p99), None),
        Ok(Ideal::Undefined(why)) => (
            IdealColumns::default(),
            Some(format!("ideal_p50_us, ideal_p99_us and p99_over_ideal are blank for `{}`: {why}", spec.name)),
        ),
        Err(e) => (IdealColumns::default(), Some(format!("the ideal columns of `{}` are blank: {e}", spec.name))),
    }
}

/// One cell being measured: its runtime (with the core plan applied) and
/// what its runs produced so far.
struct CellRun<'a> {
    cell: &'a Cell,
    /// The program whose child process makes each run (`--base-bin`);
    /// `None` = this one.
    program: Option<&'a Path>,
    cores: CorePlan,
    runtime: RuntimeSpec,
    outcome: CellOutcome,
    /// A run hung: the cell's remaining runs are skipped.
    hung: bool,
    /// Notes for the results (why the ideal columns are blank).
    notes: Vec<String>,
    /// Where each run's cgroup is made (`--cpus`/`--cpuset`).
    cgroups: Option<&'a Cgroups>,
}

impl<'a> CellRun<'a> {
    fn new(cell: &'a Cell, program: Option<&'a Path>, cores: CorePlan, cgroups: Option<&'a Cgroups>) -> CellRun<'a> {
        let mut runtime = cell.runtime.clone();
        runtime.worker_cores = cores.worker_cores.clone();
        runtime.loadgen_cores = cores.loadgen_cores.clone();
        let outcome = CellOutcome { key: cell.key.clone(), records: Vec::new(), histograms: Vec::new() };
        CellRun { cell, program, cores, runtime, outcome, hung: false, notes: Vec::new(), cgroups }
    }

    /// Run `run`, its row marked as one side of an A/B pair when
    /// `pair` = `Some((session, went first))`.
    fn run_marked(
        &mut self,
        run: usize,
        pair: Option<(f64, bool)>,
        config: &RunConfig,
        progress: &Progress,
        abandoned: &mut usize,
    ) {
        let before = self.outcome.records.len();
        self.run(run, config, progress, abandoned);
        if let (Some((session, first)), true) = (pair, self.outcome.records.len() > before) {
            if let Some(record) = self.outcome.records.last_mut() {
                ab::mark(record, session, first);
            }
        }
    }

    /// Writes the cell's `runtime_version` into every row (the
    /// `--base-bin` side's rows stay blank: that binary's versions are not
    /// known here).
    fn stamp_version(&mut self) {
        for record in &mut self.outcome.records {
            record.runtime_version.clone_from(&self.cell.runtime_version);
        }
    }

    /// Run `run` of this cell. `abandoned` counts hung runs whose threads
    /// are still alive in this process (they may still use CPU): it grows
    /// when a run hangs, and every later row says so in its notes.
    fn run(&mut self, run: usize, config: &RunConfig, progress: &Progress, abandoned: &mut usize) {
        let (cell, cores, pinned) = (self.cell, &self.cores, !self.runtime.worker_cores.is_empty());
        let options =
            RunOptions { duration: config.duration, warmup: config.warmup, seed: config.seed.wrapping_add(run as u64) };
        // The run's cgroup (`--cpus`/`--cpuset`) lives until its child was
        // reaped, however the run ended, and is removed when dropped here.
        let group = match self.cgroups.filter(|_| !cell.limits.is_none()).map(|c| c.create(&cell.limits)) {
            Some(Err(e)) => {
                let reason = format!("could not create the run's cgroup: {e:#}");
                progress.run_done();
                progress.note(&format!("run {run} of {} failed: {reason}", cell.key));
                self.outcome.records.push(failed_record(cell, run, reason, cores, pinned));
                return;
            }
            Some(Ok(group)) => Some(group),
            None => None,
        };
        let end = if config.in_process {
            run_with_watchdog(self.runtime.clone(), cell.spec.clone(), options.clone(), config.timeout)
        } else {
            let group = group.as_ref();
            crate::run::isolate::run_in_child(self.program, &self.runtime, &cell.spec, &options, config.timeout, group)
        };
        let cgroup_version = group.as_ref().map_or("", |g| g.version().as_str());
        drop(group);
        progress.run_done();
        let outcome = &mut self.outcome;
        match end {
            // Its cell is dropped with it (see `run_matrix`).
            RunEnd::Interrupted => {}
            RunEnd::Done(out) => {
                let mut record = record_from(&cell.key, run, &out, cores, pinned);
                let (ideal, note) = ideal_columns(&self.runtime, &cell.spec, &options, &record);
                record.ideal = ideal;
                if let Some(note) = note.filter(|n| !self.notes.contains(n)) {
                    self.notes.push(note);
                }
                record.limits = LimitColumns::of(&out, cgroup_version, cell.tokio_default_workers);
                if *abandoned > 0 {
                    let note = format!("measured while {abandoned} abandoned hung run(s) were still alive");
                    record.notes = if record.notes.is_empty() { note } else { format!("{}; {note}", record.notes) };
                }
                if let Some(reason) = health::judge(&mut record) {
                    progress.note(&format!("run {run} of {} failed: {reason}", cell.key));
                    outcome.records.push(record);
                    return;
                }
                outcome.records.push(record);
                let RunOutput { latency_ns, uncorrected_ns, elapsed, .. } = *out;
                outcome.histograms.push(RunHistograms { run, elapsed, latency_ns, uncorrected_ns });
            }
            RunEnd::Failed(reason) => {
                progress.note(&format!("run {run} of {} failed: {reason}", cell.key));
                outcome.records.push(failed_record(cell, run, reason, cores, pinned));
            }
            RunEnd::Hung => {
                let reason = format!(
                    "watchdog: no result after {:.1}s; the run's threads were abandoned and the cell's remaining runs skipped",
                    config.timeout.as_secs_f64()
                );
                progress.note(&format!("run {run} of {} hung: {reason}", cell.key));
                *abandoned += 1;
                outcome.records.push(failed_record(cell, run, reason, cores, pinned));
                self.hung = true;
            }
            RunEnd::Killed => {
                let reason = format!(
                    "watchdog: no result after {:.1}s; the run's child process was killed and the cell's remaining runs skipped",
                    config.timeout.as_secs_f64()
                );
                progress.note(&format!("run {run} of {} hung: {reason}", cell.key));
                outcome.records.push(failed_record(cell, run, reason, cores, pinned));
                self.hung = true;
            }
        }
    }
}

/// The cells whose runs `--interleave` alternates: consecutive cells (the
/// plan varies scheduler and knobs innermost) with the same workload,
/// workers, parameters and rate. Returns the end of the group at `start`.
fn group_end(cells: &[Cell], start: usize) -> usize {
    let first = interleave_key(&cells[start]);
    start + cells[start..].iter().take_while(|c| interleave_key(c) == first).count()
}

/// The order of the group's cells in run `run`: forward on even runs,
/// backward on odd ones (ABBA), so a steady drift in machine speed favours
/// no cell.
fn interleaved_order(len: usize, run: usize) -> Vec<usize> {
    if run.is_multiple_of(2) {
        (0..len).collect()
    } else {
        (0..len).rev().collect()
    }
}

fn failed_record(cell: &Cell, run: usize, reason: String, cores: &CorePlan, pinned: bool) -> RunRecord {
    let mut r = RunRecord::failed(cell.key.clone(), run, reason);
    r.oversubscribed = cores.oversubscribed;
    r.pinned = pinned;
    r
}

/// Notes about a cell's core plan (oversubscription, shared load generator
/// cores), recorded once in the results.
fn note_core_plan(
    cell: &Cell,
    core_plan: &CorePlan,
    cores: &[usize],
    config: &RunConfig,
    results: &mut Results,
    progress: &Progress,
) {
    if core_plan.oversubscribed && results.oversubscribed_workers.is_empty() {
        progress.note(&format!(
            "note: {} workers exceed the {} allowed cores; such cells are oversubscribed",
            cell.runtime.workers(),
            cores.len()
        ));
    }
    if core_plan.oversubscribed {
        results.oversubscribed_workers.insert(cell.runtime.workers());
        if cell.key.rate_per_s.is_none()
            && crate::config::capped_default_rate(cell.workload, cell.runtime.workers()).is_some()
        {
            results.add_note(format!(
                "open-loop default rates are capped at {} cores' worth when workers exceed cores; pass --rate to choose",
                cores.len()
            ));
        }
    }
    if core_plan.loadgen_shares_cores && config.pin {
        results
            .add_note("load generator shares cores with the workers (not enough cores to keep it apart)".to_string());
    }
}

/// Where the base side of `run --base-bin` goes: its own results (with the
/// base's commit) and exporters (its CSV).
pub struct BaseSide<'a> {
    /// The base's results.
    pub results: &'a mut Results,
    /// The base's exporters.
    pub exporters: &'a mut [Box<dyn Exporter>],
}

/// Hands a finished cell to the results and every exporter.
pub(crate) fn finish_cell(
    outcome: &CellOutcome,
    results: &mut Results,
    exporters: &mut [Box<dyn Exporter>],
) -> Result<()> {
    results.cells.push(CellSummary::of(&outcome.key, &outcome.records));
    results.records.extend(outcome.records.iter().cloned());
    for exporter in exporters.iter_mut() {
        exporter.cell(results, outcome)?;
    }
    Ok(())
}

/// Marks the results interrupted and lets every exporter say so.
fn stop_interrupted(
    results: &mut Results,
    exporters: &mut [Box<dyn Exporter>],
    base: Option<BaseSide<'_>>,
) -> Result<()> {
    results.interrupted = true;
    for exporter in exporters.iter_mut() {
        exporter.interrupted(results)?;
    }
    if let Some(base) = base {
        base.results.interrupted = true;
        for exporter in base.exporters.iter_mut() {
            exporter.interrupted(base.results)?;
        }
    }
    Ok(())
}

/// Runs the plan, feeding each finished cell to every exporter. Returns the
/// results (records and summaries, no histograms). With `base`
/// (`--base-bin`) every run is made twice, by the base program and by this
/// one, back to back in the order [`ab::base_first`] gives. A cell with
/// CPU limits runs each run in a cgroup of `cgroups`.
pub fn run_matrix(
    config: &RunConfig,
    plan: &CellList,
    results: &mut Results,
    exporters: &mut [Box<dyn Exporter>],
    mut base: Option<BaseSide<'_>>,
    cgroups: Option<&Cgroups>,
) -> Result<()> {
    let session = ab::new_session();
    let base_bin = config.ab.as_ref().map(|ab| ab.bin.as_path());
    let cores = pin::allowed_cores();
    results.allowed_cores = cores.len();
    let sides = if base_bin.is_some() { 2 } else { 1 };
    let total: usize = plan.cells.iter().map(|c| config.runs_for(c.workload)).sum();
    let progress = Progress::new((total * sides) as u64, config.quiet);
    results.planned_cells = plan.cells.len();
    if let Some(base) = base.as_mut() {
        base.results.planned_cells = plan.cells.len();
    }
    for note in &plan.skipped {
        results.add_note(note.clone());
    }
    let mut start = 0;
    while start < plan.cells.len() {
        let end = if config.interleave { group_end(&plan.cells, start) } else { start + 1 };
        let mut group: Vec<(CellRun<'_>, Option<CellRun<'_>>)> = Vec::new();
        for cell in &plan.cells[start..end] {
            // A cpuset is the cores its runs may use.
            let cores = cell.limits.cpuset.as_ref().map_or_else(|| cores.clone(), |set| set.ids().to_vec());
            let core_plan = pin::plan(&cores, cell.runtime.workers(), cell.workload.open_loop, config.pin);
            note_core_plan(cell, &core_plan, &cores, config, results, &progress);
            let base_run = base_bin.map(|bin| CellRun::new(cell, Some(bin), core_plan.clone(), cgroups));
            group.push((CellRun::new(cell, cell.program.as_deref(), core_plan, cgroups), base_run));
        }
        // Without --interleave a group is one cell: its runs back to back.
        // A group is one workload, so its cells have the same number of runs.
        let runs = config.runs_for(plan.cells[start].workload);
        'runs: for run in 0..runs {
            for i in interleaved_order(group.len(), run) {
                if interrupt::requested() {
                    break 'runs;
                }
                let (current, base_run) = &mut group[i];
                progress.cell(start + i, plan.cells.len(), &current.cell.key);
                let abandoned = &mut results.abandoned_runs;
                let Some(base_run) = base_run else {
                    if !current.hung {
                        current.run(run, config, &progress, abandoned);
                    }
                    continue;
                };
                let base_first = ab::base_first(run);
                let mut sides = [(&mut *base_run, base_first), (&mut *current, !base_first)];
                if !base_first {
                    sides.reverse();
                }
                for (side, first) in sides {
                    if !side.hung && !interrupt::requested() {
                        side.run_marked(run, Some((session, first)), config, &progress, abandoned);
                    }
                }
            }
        }
        // A group an interrupt cut short is dropped whole: its last run may
        // have died of the same signal, and its cells would be short of runs.
        if interrupt::requested() {
            progress.finish();
            return stop_interrupted(results, exporters, base);
        }
        for (mut current, base_run) in group {
            for note in current.notes.drain(..) {
                results.add_note(note);
            }
            current.stamp_version();
            results.settings.stamp(&mut current.outcome.records);
            finish_cell(&current.outcome, results, exporters)?;
            if let (Some(mut base_run), Some(base)) = (base_run, base.as_mut()) {
                base.results.settings.stamp(&mut base_run.outcome.records);
                finish_cell(&base_run.outcome, base.results, base.exporters)?;
            }
        }
        start = end;
    }
    progress.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Cli;

    fn plan(args: &[&str]) -> CellList {
        let cli = Cli::try_parse_from(std::iter::once("wsbench").chain(args.iter().copied())).unwrap();
        RunConfig::from_args(&cli.run).unwrap().plan().unwrap()
    }

    #[test]
    fn interleaved_runs_alternate_direction() {
        assert_eq!(interleaved_order(3, 0), [0, 1, 2]);
        assert_eq!(interleaved_order(3, 1), [2, 1, 0]);
        assert_eq!(interleaved_order(3, 2), [0, 1, 2]);
        assert_eq!(interleaved_order(1, 1), [0]);
    }

    #[test]
    fn a_group_is_the_schedulers_and_knob_sets_of_one_workload_workers_rate() {
        let p = plan(&[
            "--sched",
            "steal-half,steal-one",
            "--workers",
            "1,2",
            "--workload",
            "yield-many,chained-spawn",
            "--knob",
            "searching-limit=half,none",
        ]);
        // Each (workload, workers) block: both policies under both knob sets.
        let mut groups = Vec::new();
        let mut start = 0;
        while start < p.cells.len() {
            let end = group_end(&p.cells, start);
            let cells = &p.cells[start..end];
            let first = &cells[0].key;
            assert!(cells.iter().all(|c| c.key.workers == first.workers && c.key.workload == first.workload));
            groups.push(cells.len());
            start = end;
        }
        assert_eq!(groups.len(), 4, "2 workloads x 2 worker counts");
        assert_eq!(groups, [4, 4, 4, 4]);
    }

    /// A run of 4000 messages in 2 s with 300 ms of CPU and 1000 unparks,
    /// whose extras say `modes` = `modes`.
    fn run_with_modes(modes: f64) -> RunRecord {
        let mut latency_ns = hdrhistogram::Histogram::new(3).unwrap();
        latency_ns.record(1000).unwrap();
        let cpu = wsbench_workloads::api::CpuUsage {
            cpu_ns: 300_000_000,
            window: Duration::from_secs(2),
            ctx_switches_voluntary: 40,
            ctx_switches_involuntary: 2,
            throttle: None,
        };
        let out = RunOutput {
            ops: 4000,
            failed: None,
            sent: None,
            elapsed: Duration::from_secs(2),
            offered_per_s: None,
            latency_ns,
            uncorrected_ns: None,
            queue_wait_ns: None,
            service_ns: None,
            counters: vec![("unparks", Some(1000))],
            schedule_slipped: false,
            notes: Vec::new(),
            params: Vec::new(),
            extras: vec![(extra::MODES.to_string(), modes), ("mode1_iterations".to_string(), 3.0)],
            cpu: Some(cpu),
            sched_delay_ns: None,
        };
        let cores = CorePlan {
            worker_cores: Vec::new(),
            loadgen_cores: Vec::new(),
            oversubscribed: false,
            loadgen_shares_cores: false,
        };
        record_from(&CellKey::plain("tokio", 2, "pipeline"), 0, &out, &cores, false)
    }

    #[test]
    fn a_run_of_several_modes_leaves_its_whole_run_means_blank() {
        let one = run_with_modes(1.0);
        assert_eq!(one.throughput_per_s, Some(2000.0));
        assert!(one.latency.is_some());
        assert_eq!(one.cpu.cpu_us_per_op, Some(75.0));
        assert_eq!(one.cpu.wakeups_per_op, Some(0.25));
        let two = run_with_modes(2.0);
        assert_eq!(two.throughput_per_s, None);
        assert!(two.latency.is_none() && two.p99_ci_us.is_none());
        assert_eq!((two.cpu.cpu_us_per_op, two.cpu.cpu_util, two.cpu.wakeups_per_op), (None, None, None));
        // Totals and the per-mode figures stay.
        assert_eq!((two.ops, two.cpu.cpu_ms, two.cpu.ctx_switches_voluntary), (Some(4000), Some(300.0), Some(40)));
        assert!(two.extras.contains(&("mode1_iterations".to_string(), 3.0)));
    }
}
