//! Reads a results CSV back (for `compare` and `plot`), checking it on the
//! way: every error names the file, the line and the column.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{bail, ensure, Context, Result};

use crate::cpu::CpuColumns;
use crate::export::csv::{parse_extras, CORE_COLUMNS};
use crate::record::{counter_names, CellKey, Latencies, LatencyMetric, RunRecord, Status};

/// A results file read back.
#[derive(Debug, Clone)]
pub struct ResultsFile {
    /// Where it came from.
    pub path: PathBuf,
    /// Its `schema_version` (the same on every row).
    pub schema_version: u32,
    /// Host of the first row.
    pub host: String,
    /// CPU model of the first row.
    pub cpu_model: String,
    /// Logical CPUs of the first row; `None` when its machine could not be
    /// read (blank).
    pub logical_cpus: Option<usize>,
    /// Git sha of the first row.
    pub git_sha: String,
    /// Every row.
    pub records: Vec<RunRecord>,
}

/// Column positions by name.
struct Columns {
    index: HashMap<String, usize>,
}

/// One row with its file position, for error messages.
struct Row<'a> {
    path: &'a Path,
    line: u64,
    record: &'a csv::StringRecord,
    columns: &'a Columns,
}

impl Row<'_> {
    fn text(&self, column: &str) -> Option<&str> {
        self.columns.index.get(column).and_then(|&i| self.record.get(i)).map(str::trim)
    }

    fn required<T: FromStr>(&self, column: &str) -> Result<T> {
        self.optional(column)?.with_context(|| {
            format!("`{}` line {}, column `{column}`: empty, a value is required", self.path.display(), self.line)
        })
    }

    fn optional<T: FromStr>(&self, column: &str) -> Result<Option<T>> {
        match self.text(column) {
            None | Some("") => Ok(None),
            Some(v) => v.parse().map(Some).ok().with_context(|| {
                format!(
                    "`{}` line {}, column `{column}`: `{v}` is not a valid {}",
                    self.path.display(),
                    self.line,
                    kind_of::<T>()
                )
            }),
        }
    }

    /// A measured quantity: a finite number, not negative.
    fn measure(&self, column: &str) -> Result<Option<f64>> {
        let value = self.optional::<f64>(column)?;
        if let Some(v) = value {
            ensure!(
                v.is_finite() && v >= 0.0,
                "`{}` line {}, column `{column}`: `{}` is not a measurement (allowed: a finite number, 0 or more)",
                self.path.display(),
                self.line,
                self.text(column).unwrap_or_default()
            );
        }
        Ok(value)
    }

    /// A required [`Row::measure`].
    fn required_measure(&self, column: &str) -> Result<f64> {
        self.measure(column)?.with_context(|| {
            format!("`{}` line {}, column `{column}`: empty, a value is required", self.path.display(), self.line)
        })
    }

    fn string(&self, column: &str) -> String {
        self.text(column).unwrap_or_default().to_string()
    }
}

fn kind_of<T>() -> &'static str {
    let name = std::any::type_name::<T>();
    if name.contains("f64") {
        "number"
    } else if name.contains("bool") {
        "true/false"
    } else {
        "whole number"
    }
}

fn latencies(row: &Row<'_>) -> Result<Option<Latencies>> {
    let mut out = Latencies {
        p50_us: 0.0,
        p90_us: 0.0,
        p99_us: 0.0,
        p999_us: 0.0,
        p9999_us: f64::NAN,
        max_us: 0.0,
        mean_us: 0.0,
    };
    let mut present = 0;
    for metric in LatencyMetric::ALL {
        if let Some(v) = row.measure(metric.column())? {
            out.set(metric, v);
            present += 1;
        }
    }
    Ok((present > 0).then_some(out))
}

fn parse_row(row: &Row<'_>) -> Result<(u32, RunRecord)> {
    let status = match row.text("status").unwrap_or("ok") {
        "ok" | "" => Status::Ok,
        "failed" => Status::Failed,
        other => bail!("`{}` line {}, column `status`: `{other}` is not ok or failed", row.path.display(), row.line),
    };
    let key = CellKey {
        scheduler: row.string("scheduler"),
        workers: row.required("workers")?,
        workload: row.string("workload"),
        knobs: row.string("knobs"),
        params: row.string("params"),
        rate_per_s: row.optional("rate_per_s")?,
    };
    ensure!(!key.scheduler.is_empty(), "`{}` line {}, column `scheduler`: empty", row.path.display(), row.line);
    ensure!(!key.workload.is_empty(), "`{}` line {}, column `workload`: empty", row.path.display(), row.line);
    let mut r = RunRecord::failed(key, row.required("run")?, row.string("error"));
    r.status = status;
    if status == Status::Ok {
        r.duration_s = Some(row.required_measure("duration_s")?);
        r.ops = Some(row.required("ops")?);
        r.throughput_per_s = Some(row.required_measure("throughput_per_s")?);
    }
    r.offered_per_s = row.measure("offered_per_s")?;
    r.latency = latencies(row)?;
    r.failed = row.optional("failed")?;
    r.sent = row.optional("sent")?;
    r.uncorrected_p99_us = row.measure("uncorrected_p99_us")?;
    r.queue_wait_p99_us = row.measure("queue_wait_p99_us")?;
    r.service_p99_us = row.measure("service_p99_us")?;
    r.counters = counter_names().iter().map(|n| row.optional(n)).collect::<Result<_>>()?;
    r.schedule_slipped = row.optional("schedule_slipped")?.unwrap_or(false);
    r.oversubscribed = row.optional("oversubscribed")?.unwrap_or(false);
    r.pinned = row.optional("pinned")?.unwrap_or(false);
    r.resolved_params = row.string("resolved_params");
    let extras = row.string("extras");
    r.extras = parse_extras(&extras).with_context(|| {
        format!("`{}` line {}, column `extras`: `{extras}` is not name=number;...", row.path.display(), row.line)
    })?;
    r.notes = row.string("notes");
    r.cpu = CpuColumns {
        cpu_ms: row.optional("cpu_ms")?,
        cpu_us_per_op: row.optional("cpu_us_per_op")?,
        cpu_util: row.optional("cpu_util")?,
        ctx_switches_voluntary: row.optional("ctx_switches_voluntary")?,
        ctx_switches_involuntary: row.optional("ctx_switches_involuntary")?,
        wakeups_per_op: row.optional("wakeups_per_op")?,
    };
    Ok((row.required("schema_version")?, r))
}

fn read_header<R: std::io::Read>(path: &Path, reader: &mut csv::Reader<R>) -> Result<Columns> {
    let header =
        reader.headers().with_context(|| format!("`{}` line 1: cannot read the header", path.display()))?.clone();
    ensure!(
        !(header.is_empty() || header.len() == 1 && header[0].trim().is_empty()),
        "`{}` is empty; expected a wsbench results CSV starting with `{}`",
        path.display(),
        CORE_COLUMNS.join(",")
    );
    let index: HashMap<String, usize> = header.iter().enumerate().map(|(i, h)| (h.trim().to_string(), i)).collect();
    for column in CORE_COLUMNS {
        ensure!(
            index.contains_key(column),
            "`{}` line 1: missing column `{column}` (is it a wsbench results CSV? it needs {})",
            path.display(),
            CORE_COLUMNS.join(",")
        );
    }
    Ok(Columns { index })
}

/// Reads and checks a results CSV.
pub fn load(path: &Path) -> Result<ResultsFile> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot open `{}`", path.display()))?;
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes.as_slice());
    let columns = read_header(path, &mut reader)?;
    let width = columns.index.len();
    let mut records = Vec::new();
    // A row is one run of one cell in one invocation (its `timestamp`): a
    // rerun appended to the file adds runs, the same row twice is an error.
    let mut first_seen: HashMap<(CellKey, String, usize), u64> = HashMap::new();
    let mut schema: Option<u32> = None;
    let mut first_env = None;
    for result in reader.records() {
        let record = result.with_context(|| format!("`{}`: unreadable CSV", path.display()))?;
        let line = record.position().map(|p| p.line()).unwrap_or(0);
        ensure!(
            record.len() == width,
            "`{}` line {line}: {} fields, the header has {width} (truncated or foreign row?)",
            path.display(),
            record.len()
        );
        let row = Row { path, line, record: &record, columns: &columns };
        let (version, r) = parse_row(&row)?;
        match schema {
            None => schema = Some(version),
            Some(v) => ensure!(
                v == version,
                "`{}` line {line}, column `schema_version`: {version} differs from {v} on earlier rows",
                path.display()
            ),
        }
        if first_env.is_none() {
            first_env = Some((
                row.string("host"),
                row.string("cpu_model"),
                row.optional::<usize>("logical_cpus")?,
                row.string("git_sha"),
            ));
        }
        if let Some(earlier) = first_seen.insert((r.key.clone(), row.string("timestamp"), r.run), line) {
            bail!(
                "`{}` line {line}: duplicate cell {} run {} of the invocation started {} (first at line {earlier})",
                path.display(),
                r.key,
                r.run,
                row.string("timestamp")
            );
        }
        records.push(r);
    }
    let (Some(schema_version), Some((host, cpu_model, logical_cpus, git_sha))) = (schema, first_env) else {
        bail!("`{}` has a header but no rows", path.display());
    };
    // wsbench ends every row with a newline: without one the last row may
    // be cut inside its last field and still parse.
    ensure!(
        bytes.last() == Some(&b'\n'),
        "`{}` line {}: the last line does not end with a newline (a truncated file?)",
        path.display(),
        bytes.iter().filter(|b| **b == b'\n').count() + 1
    );
    Ok(ResultsFile { path: path.to_path_buf(), schema_version, host, cpu_model, logical_cpus, git_sha, records })
}
