//! Result writers. Each implements [`Exporter`] and is fed every finished
//! cell, so what was measured is on disk before the next cell starts:
//! CSV appends the cell's rows; JSON and markdown rewrite their whole
//! document through a temporary file and a rename (never half-written);
//! HDR writes one interval log per cell the same way.

pub mod csv;
pub mod file;
pub mod hdr;
pub mod json;
pub mod markdown;

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use crate::config::RunConfig;
use crate::env::Environment;
use crate::record::RunRecord;
use crate::runner::CellOutcome;
use crate::slo::Slo;
use crate::summary::CellSummary;

pub use file::{check_writable, parent_dir, write_atomically};

/// A result writer.
pub trait Exporter {
    /// Called after each cell with everything measured so far and the
    /// cell that just finished (with its full histograms).
    fn cell(&mut self, results: &Results, latest: &CellOutcome) -> Result<()>;
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

/// Checks every destination the configuration names, creating nothing:
/// each is writable and no two name the same file.
pub fn check_all(config: &RunConfig) -> Result<()> {
    let mut outputs: Vec<(&str, &Path)> = Vec::new();
    if let Some(path) = &config.csv {
        csv::check(path)?;
        outputs.push(("--csv", path));
    }
    if let Some(path) = &config.json {
        check_writable(path, "JSON")?;
        outputs.push(("--json", path));
    }
    if let Some(path) = &config.markdown {
        check_writable(path, "markdown")?;
        outputs.push(("--markdown", path));
    }
    if let Some(dir) = &config.hdr_dir {
        hdr::check(dir)?;
        if dir.exists() || parent_dir(dir).is_dir() {
            outputs.push(("--hdr-dir", dir));
        }
    }
    file::check_distinct(&outputs)
}

/// Opens every exporter the configuration asks for. Every destination is
/// checked first ([`check_all`]), so a bad one leaves nothing behind; the
/// CSV, which gets its header on opening, is opened last.
pub fn open_all(config: &RunConfig) -> Result<Vec<Box<dyn Exporter>>> {
    check_all(config)?;
    let mut out: Vec<Box<dyn Exporter>> = Vec::new();
    if let Some(dir) = &config.hdr_dir {
        out.push(Box::new(hdr::HdrExporter::open(dir)?));
    }
    if let Some(path) = &config.json {
        out.push(Box::new(json::JsonExporter::open(path)?));
    }
    if let Some(path) = &config.markdown {
        out.push(Box::new(markdown::MarkdownExporter::open(path)?));
    }
    if let Some(path) = &config.csv {
        out.push(Box::new(csv::CsvExporter::open(path)?));
    }
    Ok(out)
}

/// Replaces every character outside `[A-Za-z0-9._-]` by `-`, for file names.
pub fn file_safe(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' }).collect()
}
