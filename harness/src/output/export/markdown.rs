//! Markdown: the environment, the settings, the results table with the
//! order-statistic interval of each cell's median throughput (labelled with
//! its true confidence), capacity and notes.
//! Rewritten whole (temporary file + rename) after every cell.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{check_output, marks, write_output, Exporter, Kind};
use crate::data::outcome::CellOutcome;
use crate::data::outcome::Results;
use crate::output::table::{capacity_table, cells_table, format_count, legend, Table};
use crate::stats::{min_runs_for, Summary, CONFIDENCE};

const PERCENT: f64 = 100.0;

/// Renders the whole document.
pub fn render(results: &Results) -> String {
    let s = &results.settings;
    let mut out = String::from("# wsbench results\n\n");
    if let Some(why) = results.incomplete() {
        let _ = writeln!(out, "## Incomplete: {why}\n");
    }
    let _ = writeln!(out, "- machine: {}", results.env.describe());
    let _ = writeln!(out, "- host: {}, started {}", results.env.host, results.env.timestamp);
    let _ = writeln!(out, "- command: `{}`", results.env.command_line);
    let _ = writeln!(
        out,
        "- {}, {:.3}s measured after {:.3}s warm-up, seed {}, pinning {}\n",
        s.runs_per_cell(),
        s.duration_s,
        s.warmup_s,
        s.seed,
        if s.pin { "on" } else { "off" }
    );
    out.push_str(&cells_table(results, true).render_markdown());
    out.push('\n');
    for line in legend(results) {
        let _ = writeln!(out, "{line}.  ");
    }
    out.push('\n');
    out.push_str(&intervals_table(results).render_markdown());
    if let Some(t) = capacity_table(results) {
        out.push('\n');
        out.push_str(&t.render_markdown());
    }
    let notes = results.notes();
    if !notes.is_empty() {
        out.push_str("\n## Notes\n\n");
        for n in notes {
            let _ = writeln!(out, "- {n}");
        }
    }
    out
}

/// `lo .. hi (c%)`: the interval of the median with its true confidence,
/// and a warning when the runs are too few for [`CONFIDENCE`].
fn interval_text(s: &Summary) -> String {
    let mut text =
        format!("{} .. {} ({:.1}%)", format_count(s.ci_lo), format_count(s.ci_hi), s.ci_confidence * PERCENT);
    if !s.ci_meets_level {
        let _ = write!(text, ", too few runs for {:.0}% (needs {})", CONFIDENCE * PERCENT, min_runs_for(CONFIDENCE));
    }
    text
}

/// Median throughput with the interval of the median, per cell.
fn intervals_table(results: &Results) -> Table {
    let ci = format!("interval of median (confidence; {:.0}% asked)", CONFIDENCE * PERCENT);
    let rows = results
        .cells
        .iter()
        .map(|c| {
            let t = c.throughput_per_s;
            vec![
                c.key.to_string(),
                t.map(|s| format_count(s.median)).unwrap_or_default(),
                t.as_ref().map(interval_text).unwrap_or_default(),
                t.map(|s| format!("{} .. {}", format_count(s.min), format_count(s.max))).unwrap_or_default(),
                c.ok_runs.to_string(),
            ]
        })
        .collect();
    Table {
        header: vec!["cell".into(), "throughput/s".into(), ci, "min .. max".into(), "ok runs".into()],
        right: vec![false, true, true, true, true],
        rows,
    }
}

/// Writes the markdown document.
pub struct MarkdownExporter {
    path: PathBuf,
}

impl MarkdownExporter {
    /// Checks that `path` is writable.
    pub fn open(path: &Path) -> Result<MarkdownExporter> {
        check_output("--markdown", path, Kind::Markdown)?;
        Ok(MarkdownExporter { path: path.to_path_buf() })
    }
}

impl Exporter for MarkdownExporter {
    fn cell(&mut self, results: &Results, _latest: &CellOutcome) -> Result<()> {
        write_output(&self.path, marks::with_comment(Kind::Markdown, &render(results)).as_bytes())
    }

    fn interrupted(&mut self, results: &Results) -> Result<()> {
        write_output(&self.path, marks::with_comment(Kind::Markdown, &render(results)).as_bytes())
    }
}
