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
use crate::env::Environment;
use crate::record::{CellKey, RunRecord};
use crate::slo::Slo;
use crate::summary::CellSummary;

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
}

impl Settings {
    /// From a validated configuration.
    pub fn of(config: &RunConfig) -> Settings {
        Settings {
            duration_s: config.duration.as_secs_f64(),
            warmup_s: config.warmup.as_secs_f64(),
            runs: config.runs,
            seed: config.seed,
            pin: config.pin,
            timeout_s: config.timeout.as_secs_f64(),
            baseline_sched: config.baseline_sched.clone(),
            slo: config.slo,
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
            notes.push(format!("{failed} cell(s) had failed runs; see the error column"));
        }
        notes
    }
}
