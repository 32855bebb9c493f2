//! JSON: the same rows as the CSV, grouped by cell with their summaries,
//! plus the environment, the settings, notes and capacity at the SLO.
//! Rewritten whole (temporary file + rename) after every cell.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;

use super::{check_output, marks, write_output, Exporter, Kind};
use crate::data::outcome::CellOutcome;
use crate::data::outcome::{Results, Settings};
use crate::data::record::{RunRecord, SCHEMA_VERSION};
use crate::run::env::Environment;
use crate::stats::summary::{capacities, ratios_to, Capacity, CellSummary, Ratios};

#[derive(Serialize)]
struct JsonCell<'a> {
    #[serde(flatten)]
    summary: &'a CellSummary,
    ratio_to_baseline: Ratios,
    runs: Vec<&'a RunRecord>,
}

/// How far an incomplete matrix got.
#[derive(Serialize)]
struct Progress {
    finished_cells: usize,
    planned_cells: usize,
    interrupted: bool,
    why: String,
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    schema_version: u32,
    /// False while the matrix runs and when it was interrupted.
    complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    incomplete: Option<Progress>,
    environment: &'a Environment,
    settings: &'a Settings,
    notes: Vec<String>,
    cells: Vec<JsonCell<'a>>,
    capacity: Vec<Capacity>,
}

fn cells(results: &Results) -> Vec<JsonCell<'_>> {
    results
        .cells
        .iter()
        .map(|c| JsonCell {
            summary: c,
            ratio_to_baseline: ratios_to(&results.cells, c, &results.settings.baseline_sched),
            runs: results.records.iter().filter(|r| r.key == c.key).collect(),
        })
        .collect()
}

fn capacity(results: &Results) -> Vec<Capacity> {
    results.settings.slo.map(|slo| capacities(&results.cells, &slo)).unwrap_or_default()
}

fn finish<T: Serialize>(doc: &T) -> Result<Vec<u8>> {
    marks::json(doc)
}

/// Renders the whole document.
pub fn render(results: &Results) -> Result<Vec<u8>> {
    finish(&JsonDoc {
        schema_version: SCHEMA_VERSION,
        complete: results.complete(),
        incomplete: results.incomplete().map(|why| Progress {
            finished_cells: results.cells.len(),
            planned_cells: results.planned_cells,
            interrupted: results.interrupted,
            why,
        }),
        environment: &results.env,
        settings: &results.settings,
        notes: results.notes(),
        cells: cells(results),
        capacity: capacity(results),
    })
}

#[derive(Serialize)]
struct MergedDoc<'a> {
    schema_version: u32,
    merged: &'a str,
    merged_from: &'a [serde_json::Value],
    settings: &'a serde_json::Value,
    notes: Vec<String>,
    cells: Vec<JsonCell<'a>>,
    capacity: Vec<Capacity>,
}

/// A merged document (`wsbench merge --out X.json`): as [`render`]'s, but
/// `merged` says what was merged (`shards`, `load processes`),
/// `merged_from` holds each part's `file`, `environment` and `settings`
/// instead of one environment, and `settings` the settings the parts
/// share (null where they differ or a part did not record it).
pub fn render_merged(
    results: &Results,
    merged: &str,
    parts: &[serde_json::Value],
    settings: &serde_json::Value,
) -> Result<Vec<u8>> {
    finish(&MergedDoc {
        schema_version: SCHEMA_VERSION,
        merged,
        merged_from: parts,
        settings,
        notes: results.notes(),
        cells: cells(results),
        capacity: capacity(results),
    })
}

/// Writes the JSON document.
pub struct JsonExporter {
    path: PathBuf,
}

impl JsonExporter {
    /// Checks that `path` is writable.
    pub fn open(path: &Path) -> Result<JsonExporter> {
        check_output("--json", path, Kind::Json)?;
        Ok(JsonExporter { path: path.to_path_buf() })
    }
}

impl Exporter for JsonExporter {
    fn cell(&mut self, results: &Results, _latest: &CellOutcome) -> Result<()> {
        write_output(&self.path, &render(results)?)
    }

    fn interrupted(&mut self, results: &Results) -> Result<()> {
        write_output(&self.path, &render(results)?)
    }
}
