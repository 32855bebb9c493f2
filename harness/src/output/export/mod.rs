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
pub mod marks;

use std::path::Path;

use anyhow::Result;

use crate::config::RunConfig;
use crate::data::outcome::{CellOutcome, Results};

pub use file::{check_output, check_outputs, parent_dir, write_output};
pub use marks::Kind;

/// A result writer.
pub trait Exporter {
    /// Called after each cell with everything measured so far and the
    /// cell that just finished (with its full histograms).
    fn cell(&mut self, results: &Results, latest: &CellOutcome) -> Result<()>;

    /// Called once when the matrix was interrupted, so a document that
    /// describes the whole result set says it is incomplete (rows already
    /// written stay as they are).
    fn interrupted(&mut self, _results: &Results) -> Result<()> {
        Ok(())
    }
}

/// Checks every destination the configuration names, creating nothing:
/// each passes the output guard ([`file::check_outputs`]: no symlink, no
/// file wsbench did not write unless `--force`, no two on one file).
pub fn check_all(config: &RunConfig) -> Result<()> {
    let mut outputs: Vec<(&str, &Path, Kind)> = Vec::new();
    if let Some(path) = &config.csv {
        csv::check(path)?;
        outputs.push(("--csv", path, Kind::Csv));
    }
    if let Some(ab) = &config.ab {
        csv::check(&ab.csv)?;
        outputs.push(("--base-csv", &ab.csv, Kind::Csv));
    }
    if let Some(path) = &config.json {
        outputs.push(("--json", path, Kind::Json));
    }
    if let Some(path) = &config.markdown {
        outputs.push(("--markdown", path, Kind::Markdown));
    }
    let mut ids: Vec<(&str, &Path)> = outputs.iter().map(|&(o, p, _)| (o, p)).collect();
    for &(option, path, kind) in &outputs {
        if kind != Kind::Csv {
            check_output(option, path, kind)?;
        }
    }
    if let Some(dir) = &config.hdr_dir {
        hdr::check(dir)?;
        if dir.exists() || parent_dir(dir).is_dir() {
            ids.push(("--hdr-dir", dir));
        }
    }
    file::check_distinct(&ids)
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
