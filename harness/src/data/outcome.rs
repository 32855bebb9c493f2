//! What a run of the matrix produces and the exporters, the table and the
//! summaries consume: each run's histograms, each finished cell
//! ([`CellOutcome`]), everything measured so far ([`Results`]) and the
//! settings it was measured with. The runner writes these; nobody else
//! does, and this module imports neither of them.

use std::collections::BTreeSet;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;
use wsbench_workloads::api::RunOutput;

use crate::config::RunConfig;
use crate::data::record::{CellKey, RunRecord};
use crate::run::env::Environment;
use crate::stats::slo::Slo;
use crate::stats::summary::CellSummary;

/// The full histograms of one run, kept only until the exporters have seen
/// the cell.
pub struct RunHistograms {
    /// Run index.
    pub run: usize,
    /// Measured wall time.
    pub elapsed: Duration,
    /// Corrected latency (ns).
    pub latency_ns: Histogram<u64>,
    /// Uncorrected latency (ns), when kept.
    pub uncorrected_ns: Option<Histogram<u64>>,
}

/// One finished cell with its histograms.
pub struct CellOutcome {
    /// The cell.
    pub key: CellKey,
    /// One row per attempted run.
    pub records: Vec<RunRecord>,
    /// Histograms of the ok runs.
    pub histograms: Vec<RunHistograms>,
}

/// How one run ended.
pub(crate) enum RunEnd {
    Done(Box<RunOutput>),
    Failed(String),
    /// In-process run past the watchdog: its threads were abandoned.
    Hung,
    /// Child process past the watchdog: it was killed.
    Killed,
    /// SIGINT/SIGTERM came while it ran ([`crate::run::interrupt`]): it was
    /// stopped and leaves no row.
    Interrupted,
}

pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_string())
}

/// The settings a result was produced with, as recorded in JSON and
/// markdown.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// Measured seconds per run.
    pub duration_s: f64,
    /// Discarded warm-up seconds per run.
    pub warmup_s: f64,
    /// Runs per cell.
    pub runs: usize,
    /// `--runs-open-loop`: runs per cell of an open-loop workload, in place
    /// of `runs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_open_loop: Option<usize>,
    /// Seed of run 0 (run i uses seed + i).
    pub seed: u64,
    /// Threads pinned.
    pub pin: bool,
    /// Watchdog limit per run in seconds.
    pub timeout_s: f64,
    /// Reference of the ratio column.
    pub baseline_sched: String,
    /// SLO for capacity.
    pub slo: Option<Slo>,
    /// `--wide`: how the table is shown, not how anything was measured.
    #[serde(skip)]
    pub wide: bool,
    /// Whether each workload of the plan is open-loop, by name, as the
    /// Runner knows it from the workloads crate: the table's legend says
    /// from it what a row's latency is, so Reports need not ask the
    /// workloads. Empty where results come from files (merge).
    #[serde(skip)]
    pub open_loop: std::collections::BTreeMap<String, bool>,
    /// A workload's own meaning of one latency sample
    /// (`WorkloadInfo::latency_sample`), by name, for the same legend.
    #[serde(skip)]
    pub latency_sample: std::collections::BTreeMap<String, &'static str>,
}

impl Settings {
    /// `N run(s) per cell`, with `--runs-open-loop` beside it when it gave
    /// some workload of the plan another number.
    pub fn runs_per_cell(&self) -> String {
        match self.runs_open_loop {
            Some(n) if n != self.runs && self.open_loop.values().any(|&open| open) => {
                format!("{} run(s) per cell ({n} per open-loop cell)", self.runs)
            }
            _ => format!("{} run(s) per cell", self.runs),
        }
    }

    /// From a validated configuration.
    pub fn of(config: &RunConfig) -> Settings {
        Settings {
            duration_s: config.duration.as_secs_f64(),
            warmup_s: config.warmup.as_secs_f64(),
            runs: config.runs,
            runs_open_loop: config.runs_open_loop,
            seed: config.seed,
            pin: config.pin,
            timeout_s: config.timeout.as_secs_f64(),
            baseline_sched: config.baseline_sched.clone(),
            slo: config.slo,
            wide: config.wide,
            open_loop: config.workloads.iter().map(|w| (w.name.to_string(), w.open_loop)).collect(),
            latency_sample: config
                .workloads
                .iter()
                .filter_map(|w| Some((w.name.to_string(), w.latency_sample?)))
                .collect(),
        }
    }
}

/// `extras` keys that record the settings a row was measured with, so that
/// a CSV alone says them (`merge` checks that shards of one matrix agree):
/// `--duration` and `--warmup` in seconds, and `--seed` (the seed of run 0;
/// run i used seed + i). The seed is recorded only when an `f64` holds it
/// exactly (up to 2^53); a larger one is left out rather than rounded.
pub const SETTING_DURATION: &str = "setting_duration_s";
/// See [`SETTING_DURATION`].
pub const SETTING_WARMUP: &str = "setting_warmup_s";
/// See [`SETTING_DURATION`].
pub const SETTING_SEED: &str = "setting_seed";

/// The largest integer every smaller one of which an `f64` holds exactly.
const F64_EXACT_INTEGERS: u64 = 1 << 53;

impl Settings {
    /// Records `--duration`, `--warmup` and `--seed` in each row's `extras`
    /// (replacing earlier values of those keys).
    pub fn stamp(&self, records: &mut [RunRecord]) {
        let keys = [SETTING_DURATION, SETTING_WARMUP, SETTING_SEED];
        for r in records {
            r.extras.retain(|(k, _)| !keys.contains(&k.as_str()));
            r.extras.push((SETTING_DURATION.to_string(), self.duration_s));
            r.extras.push((SETTING_WARMUP.to_string(), self.warmup_s));
            if self.seed <= F64_EXACT_INTEGERS {
                r.extras.push((SETTING_SEED.to_string(), self.seed as f64));
            }
        }
    }
}

/// The settings one row recorded with [`Settings::stamp`]; `None` where it
/// recorded none (a CSV of an older wsbench, `serve`'s rows, a seed above
/// 2^53).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordedSettings {
    /// `--duration` in seconds.
    pub duration_s: Option<f64>,
    /// `--warmup` in seconds.
    pub warmup_s: Option<f64>,
    /// `--seed`.
    pub seed: Option<u64>,
}

impl RecordedSettings {
    /// What `r` recorded.
    pub fn of(r: &RunRecord) -> RecordedSettings {
        let get = |key: &str| r.extras.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
        RecordedSettings {
            duration_s: get(SETTING_DURATION),
            warmup_s: get(SETTING_WARMUP),
            seed: get(SETTING_SEED).filter(|v| v.fract() == 0.0 && *v >= 0.0).map(|v| v as u64),
        }
    }
}

/// Everything measured so far in this invocation.
#[derive(Debug, Clone)]
pub struct Results {
    /// The machine.
    pub env: Environment,
    /// The settings.
    pub settings: Settings,
    /// One summary per finished cell, in run order.
    pub cells: Vec<CellSummary>,
    /// Every row.
    pub records: Vec<RunRecord>,
    /// Notes (skipped cells, pinning), without repeats.
    notes: Vec<String>,
    /// Worker counts that exceeded the allowed cores.
    pub oversubscribed_workers: BTreeSet<usize>,
    /// Cores this process may use.
    pub allowed_cores: usize,
    /// Hung runs whose threads were abandoned (still alive in the process).
    pub abandoned_runs: usize,
    /// Cells the matrix planned (0 where there is no plan: serve, load,
    /// merge); fewer finished cells mean the results are incomplete.
    pub planned_cells: usize,
    /// SIGINT/SIGTERM stopped the matrix ([`crate::run::interrupt`]).
    pub interrupted: bool,
}

impl Results {
    /// Empty results.
    pub fn new(env: Environment, settings: Settings) -> Results {
        // Replaced by the core plan's count when the matrix runs.
        let allowed_cores = env.allowed_cpus.unwrap_or(0);
        Results {
            env,
            settings,
            cells: Vec::new(),
            records: Vec::new(),
            notes: Vec::new(),
            oversubscribed_workers: BTreeSet::new(),
            allowed_cores,
            abandoned_runs: 0,
            planned_cells: 0,
            interrupted: false,
        }
    }

    /// Whether every planned cell finished.
    pub fn complete(&self) -> bool {
        !self.interrupted && self.cells.len() >= self.planned_cells
    }

    /// `interrupted after N of M cells` (or `N of M cells so far` while the
    /// matrix runs); `None` when complete.
    pub fn incomplete(&self) -> Option<String> {
        let (done, planned) = (self.cells.len(), self.planned_cells);
        match (self.complete(), self.interrupted) {
            (true, _) => None,
            (false, true) => Some(format!("interrupted after {done} of {planned} cells (SIGINT or SIGTERM)")),
            (false, false) => Some(format!("{done} of {planned} cells so far (the matrix is still running)")),
        }
    }

    /// Adds a note unless it is already there.
    pub fn add_note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// Every note, with one line about oversubscription when it happened.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        if !self.oversubscribed_workers.is_empty() {
            let list: Vec<String> = self.oversubscribed_workers.iter().map(|w| w.to_string()).collect();
            notes.push(format!(
                "oversubscribed: {} workers on {} allowed cores; workers share cores, so those cells measure the policy under time-slicing",
                list.join(", "),
                self.allowed_cores
            ));
        }
        if self.abandoned_runs > 0 {
            notes.push(format!(
                "{} run(s) hung and their threads were abandoned; they stay alive until wsbench exits and may use CPU, \
                 so rows measured after them say so in `notes` (rerun those cells apart to be sure)",
                self.abandoned_runs
            ));
        }
        let failed: usize = self.cells.iter().filter(|c| c.failed_runs > 0).count();
        if failed > 0 {
            let first =
                self.records.iter().find(|r| r.status == crate::data::record::Status::Failed).map(|r| r.error.as_str());
            notes.push(format!(
                "{failed} cell(s) had failed runs (the `failed` column; each run's reason is in the error column of --csv \
                 or --json); the first: {}",
                first.unwrap_or("-")
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(seed: u64) -> Settings {
        Settings {
            duration_s: 2.5,
            warmup_s: 0.5,
            runs: 3,
            runs_open_loop: None,
            seed,
            pin: false,
            timeout_s: 10.0,
            baseline_sched: "tokio".into(),
            slo: None,
            wide: false,
            open_loop: Default::default(),
            latency_sample: Default::default(),
        }
    }

    #[test]
    fn a_stamped_row_says_its_settings_and_a_restamp_replaces_them() {
        let key = CellKey::plain("steal-half", 2, "yield-many");
        let mut rows = vec![RunRecord::failed(key, 0, "x".into())];
        rows[0].extras.push(("ns_per_task".into(), 7.0));
        settings(42).stamp(&mut rows);
        settings(43).stamp(&mut rows);
        let got = RecordedSettings::of(&rows[0]);
        assert_eq!(got, RecordedSettings { duration_s: Some(2.5), warmup_s: Some(0.5), seed: Some(43) });
        assert_eq!(rows[0].extras.len(), 4, "the workload's own extra kept, the settings once: {:?}", rows[0].extras);
        // 2^53 + 1 is the first integer an f64 cannot hold: left out, not rounded.
        settings((1 << 53) + 1).stamp(&mut rows);
        assert_eq!(RecordedSettings::of(&rows[0]).seed, None);
        settings(1 << 53).stamp(&mut rows);
        assert_eq!(RecordedSettings::of(&rows[0]).seed, Some(1 << 53));
    }
}
