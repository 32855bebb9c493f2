//! CSV: one row per run, stable versioned columns. The first 21 columns are
//! exactly DESIGN.md's, then every counter (blank where the runtime cannot
//! report it), then the harness's extra columns, the CPU columns, the
//! counters added since (`APPENDED_COUNTERS`), the ideal scheduler's
//! columns (`IDEAL_COLUMNS`), and the CPU limits (the key's `cpus`,
//! `cpuset`, then `LIMIT_COLUMNS`), then the schedule delay
//! (`SCHED_DELAY_COLUMNS`).
//!
//! The file is checked before anything runs and opened for appending; a
//! new or empty file gets the header, an existing one must already have
//! exactly this header, rows of this schema version only, and end with a
//! complete line. Each cell's rows go out in one write, whole or not at all
//! (a failed write is cut back), so an interrupt or a full disk keeps every
//! finished cell and leaves a file `compare`, `plot` and the next run read.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};

use super::file::check_append;
use super::Exporter;
use crate::data::ideal::IDEAL_COLUMNS;
use crate::data::outcome::CellOutcome;
use crate::data::outcome::Results;
use crate::data::record::{
    counter_names, LatencyMetric, RunRecord, APPENDED_COLUMNS, APPENDED_COUNTERS, SCHED_DELAY_COLUMNS, SCHEMA_VERSION,
};
use crate::run::cgroup::columns::LIMIT_COLUMNS;
use crate::run::cpu::CPU_COLUMNS;
use crate::run::env::Environment;

/// DESIGN.md's columns, in order.
pub const CORE_COLUMNS: [&str; 21] = [
    "schema_version",
    "timestamp",
    "git_sha",
    "host",
    "cpu_model",
    "logical_cpus",
    "scheduler",
    "workers",
    "workload",
    "knobs",
    "run",
    "duration_s",
    "ops",
    "throughput_per_s",
    "offered_per_s",
    "p50_us",
    "p90_us",
    "p99_us",
    "p999_us",
    "max_us",
    "mean_us",
];

/// Columns after the counters.
pub const EXTRA_COLUMNS: [&str; 16] = [
    "status",
    "error",
    "p9999_us",
    "failed",
    "sent",
    "params",
    "rate_per_s",
    "uncorrected_p99_us",
    "queue_wait_p99_us",
    "service_p99_us",
    "schedule_slipped",
    "oversubscribed",
    "pinned",
    "resolved_params",
    "extras",
    "notes",
];

/// The full header.
pub fn header() -> Vec<String> {
    CORE_COLUMNS
        .iter()
        .copied()
        .chain(counter_names().into_iter().filter(|n| !APPENDED_COUNTERS.contains(n)))
        .chain(EXTRA_COLUMNS)
        .chain(CPU_COLUMNS)
        .chain(APPENDED_COUNTERS.iter().copied())
        .chain(IDEAL_COLUMNS)
        .chain(APPENDED_COLUMNS)
        .chain(["cpus", "cpuset"])
        .chain(LIMIT_COLUMNS)
        .chain(SCHED_DELAY_COLUMNS)
        .map(str::to_string)
        .collect()
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn num(v: f64) -> String {
    format!("{v:.3}")
}

/// `name=value;...` with values at full precision.
pub fn format_extras(extras: &[(String, f64)]) -> String {
    extras.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(";")
}

/// Parses [`format_extras`]' form back.
pub fn parse_extras(text: &str) -> Option<Vec<(String, f64)>> {
    if text.trim().is_empty() {
        return Some(Vec::new());
    }
    text.split(';').map(|kv| kv.split_once('=').and_then(|(k, v)| Some((k.to_string(), v.parse().ok()?)))).collect()
}

/// The fields of one row, in [`header`] order.
pub fn row(env: &Environment, r: &RunRecord) -> Vec<String> {
    // A blank statistic (NaN: too few samples) is an empty field.
    let lat = |m: LatencyMetric| opt(r.latency.map(|l| l.get(m)).filter(|v| v.is_finite()).map(num));
    let mut out = vec![
        SCHEMA_VERSION.to_string(),
        env.timestamp.clone(),
        env.git_sha.clone(),
        env.host.clone(),
        env.cpu_model.clone(),
        opt(env.logical_cpus),
        r.key.scheduler.clone(),
        r.key.workers.to_string(),
        r.key.workload.clone(),
        r.key.knobs.clone(),
        r.run.to_string(),
        opt(r.duration_s.map(|d| format!("{d:.6}"))),
        opt(r.ops),
        opt(r.throughput_per_s.map(num)),
        opt(r.offered_per_s.map(num)),
        lat(LatencyMetric::P50),
        lat(LatencyMetric::P90),
        lat(LatencyMetric::P99),
        lat(LatencyMetric::P999),
        lat(LatencyMetric::Max),
        lat(LatencyMetric::Mean),
    ];
    let names = counter_names();
    let counters = names.iter().zip(&r.counters);
    out.extend(counters.filter(|(n, _)| !APPENDED_COUNTERS.contains(n)).map(|(_, c)| opt(*c)));
    out.extend([
        r.status.as_str().to_string(),
        r.error.clone(),
        lat(LatencyMetric::P9999),
        opt(r.failed),
        opt(r.sent),
        r.key.params.clone(),
        opt(r.key.rate_per_s),
        opt(r.uncorrected_p99_us.map(num)),
        opt(r.queue_wait_p99_us.map(num)),
        opt(r.service_p99_us.map(num)),
        r.schedule_slipped.to_string(),
        r.oversubscribed.to_string(),
        r.pinned.to_string(),
        r.resolved_params.clone(),
        format_extras(&r.extras),
        r.notes.clone(),
    ]);
    out.extend(r.cpu.fields());
    out.extend(APPENDED_COUNTERS.iter().map(|n| opt(r.counter(n))));
    out.extend(r.ideal.fields());
    out.push(r.runtime_version.clone());
    out.extend([r.key.cpus.clone(), r.key.cpuset.clone()]);
    out.extend(r.limits.fields());
    out.extend([opt(r.sched_delay_p50_us.map(num)), opt(r.sched_delay_p99_us.map(num))]);
    out
}

/// Encodes rows (no header) as CSV bytes.
pub fn encode<I: IntoIterator<Item = Vec<String>>>(rows: I) -> Result<Vec<u8>> {
    let mut w = ::csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    for row in rows {
        w.write_record(&row).context("cannot encode a CSV row")?;
    }
    w.into_inner().context("cannot finish CSV encoding")
}

/// Appends rows to a CSV file.
pub struct CsvExporter {
    path: PathBuf,
    file: File,
}

/// Checks that `path` can take this wsbench's rows, creating nothing: it
/// passes the output guard for appending ([`check_append`]: no symlink, a
/// regular file of this user's, an existing directory); when it has
/// content, the same header, only rows of this schema version, and a
/// complete last line.
pub fn check(path: &Path) -> Result<()> {
    check_append("--csv", path)?;
    match fs::metadata(path) {
        Ok(meta) if meta.len() > 0 => {
            check_existing(path)?;
            OpenOptions::new()
                .append(true)
                .open(path)
                .map(drop)
                .with_context(|| format!("cannot open CSV `{}` for appending", path.display()))
        }
        _ => Ok(()),
    }
}

impl CsvExporter {
    /// Opens `path` for appending after [`check`], writing the header when
    /// it is new or empty.
    pub fn open(path: &Path) -> Result<CsvExporter> {
        check(path)?;
        let existed = path.exists();
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open CSV `{}` for appending", path.display()))?;
        lock(&file, path)?;
        if file.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
            if let Err(err) = append_whole(&mut file, &encode([header()])?) {
                if !existed {
                    let _ = fs::remove_file(path);
                }
                return Err(err.context(format!("cannot write the header of `{}`", path.display())));
            }
        }
        Ok(CsvExporter { path: path.to_path_buf(), file })
    }
}

/// Takes an advisory exclusive lock (`flock`) on the CSV for as long as
/// the exporter lives (the whole run): a second wsbench appending to the
/// same file is refused instead of writing a second header between rows.
fn lock(file: &File, path: &Path) -> Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(fs::TryLockError::WouldBlock) => bail!(
            "CSV `{}` is being written by another wsbench (it holds the file's lock); wait for it to finish or \
             write to another file",
            path.display()
        ),
        Err(fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock CSV `{}` for appending", path.display()))
        }
    }
}

/// Appends `bytes` whole or not at all: when the write fails part way (a
/// full disk, a file-size limit), the file is cut back to its length before
/// it, so it still ends with a complete row.
fn append_whole(file: &mut File, bytes: &[u8]) -> Result<()> {
    let before = file.metadata().context("cannot read the file's length")?.len();
    let Err(err) = file.write_all(bytes).and_then(|()| file.flush()) else {
        return Ok(());
    };
    match file.set_len(before) {
        Ok(()) => Err(anyhow::Error::new(err).context(format!(
            "the write failed, so the file was cut back to its last complete row ({before} bytes); \
             it stays readable by compare and plot and can be appended to"
        ))),
        Err(cut) => Err(anyhow::Error::new(err).context(format!(
            "the write failed and cutting the file back to its last complete row ({before} bytes) failed too ({cut}); \
             remove its incomplete last line before reading or appending to it"
        ))),
    }
}

/// Refuses to append to a file whose header differs, that holds rows of
/// another schema version, or whose last line is incomplete.
fn check_existing(path: &Path) -> Result<()> {
    let mut f = File::open(path).with_context(|| format!("cannot read existing CSV `{}`", path.display()))?;
    let mut reader = ::csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(&mut f);
    let mut first = ::csv::StringRecord::new();
    reader
        .read_record(&mut first)
        .with_context(|| format!("cannot read the header of existing CSV `{}`", path.display()))?;
    let found: Vec<&str> = first.iter().collect();
    let expected = header();
    if found != expected {
        let why = match found.iter().zip(&expected).position(|(a, b)| a != b) {
            Some(i) => format!("column {} is `{}`, expected `{}`", i + 1, found[i], expected[i]),
            None => format!("it has {} columns, expected {}", found.len(), expected.len()),
        };
        bail!(
            "refusing to append to `{}`: its header differs from this wsbench's (schema_version {SCHEMA_VERSION}): {why}; \
             write to a new file or move the old one away",
            path.display()
        );
    }
    check_row_versions(path, &mut reader)?;
    drop(reader);
    let mut last = [0u8; 1];
    f.seek(SeekFrom::End(-1))
        .and_then(|_| f.read_exact(&mut last))
        .with_context(|| format!("cannot read `{}`", path.display()))?;
    ensure!(
        last[0] == b'\n',
        "refusing to append to `{}`: its last line is incomplete (an interrupted write?); repair or move it away",
        path.display()
    );
    Ok(())
}

/// The header does not change with every schema version, so each row's
/// `schema_version` must be this wsbench's too.
fn check_row_versions<R: Read>(path: &Path, reader: &mut ::csv::Reader<R>) -> Result<()> {
    let ours = SCHEMA_VERSION.to_string();
    let mut row = ::csv::StringRecord::new();
    loop {
        match reader.read_record(&mut row) {
            Ok(false) => return Ok(()),
            Ok(true) => {
                let line = row.position().map(|p| p.line()).unwrap_or(0);
                let version = row.get(0).unwrap_or("").trim();
                ensure!(
                    version == ours,
                    "refusing to append to `{}`: line {line} has schema_version `{version}`, this wsbench writes {ours}; \
                     rows of two versions in one file cannot be compared: write to a new file",
                    path.display()
                );
            }
            // A malformed last line is reported by the completeness check, with its cause.
            Err(_) => return Ok(()),
        }
    }
}

impl Exporter for CsvExporter {
    fn cell(&mut self, results: &Results, latest: &CellOutcome) -> Result<()> {
        let bytes = encode(latest.records.iter().map(|r| row(&results.env, r)))?;
        append_whole(&mut self.file, &bytes).with_context(|| {
            format!(
                "cannot append the {} row(s) of cell {} to `{}`",
                latest.records.len(),
                latest.key,
                self.path.display()
            )
        })
    }
}
