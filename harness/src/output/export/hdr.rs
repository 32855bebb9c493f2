//! HdrHistogram interval logs, one file per cell: each run is one interval
//! tagged `run<i>` holding the corrected latency histogram (nanoseconds),
//! plus `uncorrected-run<i>` when the workload kept one. The cell's identity
//! is written as `#wsbench.<field>: <value>` comment lines, which standard
//! log readers skip. Files are written whole through a rename.

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{anyhow, bail, ensure, Context, Result};
use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, LogIteratorError, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use super::{file_safe, write_output, Exporter};
use crate::data::outcome::CellOutcome;
use crate::data::outcome::Results;
use crate::data::record::CellKey;

/// File extension of the logs.
pub const EXTENSION: &str = "hlog";
/// Prefix of the metadata comments.
const META_PREFIX: &str = "#wsbench.";
/// With `run --base-bin`, the subdirectory of `--hdr-dir` the base side's
/// logs go to (same file names as the current side's).
pub const BASE_SUBDIR: &str = "base";
/// Tag of a run's corrected histogram.
pub const RUN_TAG: &str = "run";
/// Tag prefix of a run's uncorrected histogram.
pub const UNCORRECTED_TAG: &str = "uncorrected-run";
/// The legend line of the standard log format.
const LEGEND: &str = "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// The file name of a cell's log.
pub fn file_name(key: &CellKey) -> String {
    let mut name = format!("{}_w{}_{}", key.scheduler, key.workers, key.workload);
    if !key.knobs.is_empty() {
        name.push_str(&format!("_k-{}", key.knobs));
    }
    if !key.params.is_empty() {
        name.push_str(&format!("_p-{}", key.params));
    }
    if let Some(rate) = key.rate_per_s {
        name.push_str(&format!("_r{rate}"));
    }
    if !key.cpus.is_empty() {
        name.push_str(&format!("_c{}", key.cpus));
    }
    if !key.cpuset.is_empty() {
        name.push_str(&format!("_s{}", key.cpuset));
    }
    format!("{}.{EXTENSION}", file_safe(&name))
}

fn meta(key: &CellKey) -> Vec<(&'static str, String)> {
    vec![
        ("scheduler", key.scheduler.clone()),
        ("workers", key.workers.to_string()),
        ("workload", key.workload.clone()),
        ("knobs", key.knobs.clone()),
        ("params", key.params.clone()),
        ("rate_per_s", key.rate_per_s.map(|r| r.to_string()).unwrap_or_default()),
        ("cpus", key.cpus.clone()),
        ("cpuset", key.cpuset.clone()),
        ("unit", "nanoseconds".to_string()),
    ]
}

/// Encodes one cell's log.
pub fn encode(key: &CellKey, outcome: &CellOutcome, results: &Results) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    {
        let mut builder = IntervalLogWriterBuilder::new();
        builder.add_comment(&format!("wsbench interval log: one interval per run; {}", results.env.describe()));
        for (k, v) in meta(key) {
            builder.add_comment(&format!("{}{k}: {v}", &META_PREFIX[1..]));
        }
        // Interval timestamps are offsets from this base: run 0 starts at 0.
        let now = SystemTime::now();
        builder.with_start_time(now).with_base_time(now);
        builder.begin_log_with(&mut buf, &mut serializer).context("cannot start an HDR log")?;
    }
    buf.extend_from_slice(LEGEND.as_bytes());
    let mut writer =
        IntervalLogWriterBuilder::new().begin_log_with(&mut buf, &mut serializer).context("cannot write an HDR log")?;
    let mut start = Duration::ZERO;
    for h in &outcome.histograms {
        let tag = format!("{RUN_TAG}{}", h.run);
        writer
            .write_histogram(&h.latency_ns, start, h.elapsed, Tag::new(&tag))
            .map_err(|e| anyhow!("cannot encode histogram of run {}: {e:?}", h.run))?;
        if let Some(u) = &h.uncorrected_ns {
            let tag = format!("{UNCORRECTED_TAG}{}", h.run);
            writer
                .write_histogram(u, start, h.elapsed, Tag::new(&tag))
                .map_err(|e| anyhow!("cannot encode histogram: {e:?}"))?;
        }
        start += h.elapsed;
    }
    Ok(buf)
}

/// A log read back.
#[derive(Debug)]
pub struct HdrLog {
    /// `#wsbench.<field>` metadata.
    pub meta: BTreeMap<String, String>,
    /// `(tag, histogram)` per interval, in file order.
    pub intervals: Vec<(Option<String>, Histogram<u64>)>,
    /// Each interval's length, in the order of `intervals`.
    pub lengths: Vec<Duration>,
    /// When the log was written (its `StartTime`), when it says.
    pub start: Option<SystemTime>,
}

impl HdrLog {
    /// The corrected histograms of every run merged.
    pub fn merged_runs(&self) -> Result<Histogram<u64>> {
        let mut merged: Option<Histogram<u64>> = None;
        for (tag, h) in &self.intervals {
            if tag.as_deref().is_some_and(|t| t.starts_with(RUN_TAG)) {
                match &mut merged {
                    Some(m) => m.add(h).map_err(|e| anyhow!("cannot merge histograms: {e:?}"))?,
                    None => merged = Some(h.clone()),
                }
            }
        }
        merged.context("the log holds no run histograms")
    }
}

/// Reads a log written by [`encode`] (or any standard interval log).
pub fn read(path: &Path) -> Result<HdrLog> {
    let bytes = crate::data::input::read_input(path, "HDR log")?;
    let text = String::from_utf8_lossy(&bytes);
    let meta = text
        .lines()
        .filter_map(|l| l.strip_prefix(META_PREFIX))
        .filter_map(|l| l.split_once(": ").or_else(|| l.strip_suffix(':').map(|k| (k, ""))))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut intervals = Vec::new();
    let mut lengths = Vec::new();
    let mut start = None;
    let mut deserializer = Deserializer::new();
    for (line, entry) in IntervalLogIterator::new(&bytes).enumerate() {
        let entry = entry.map_err(|e| {
            let LogIteratorError::ParseError { offset } = e;
            anyhow!(
                "`{}`: interval log entry {} cannot be parsed (at byte {offset}); allowed: the HdrHistogram interval log \
                 format `wsbench run --hdr-dir` writes",
                path.display(),
                line + 1
            )
        })?;
        if let LogEntry::StartTime(since_epoch) = entry {
            start = std::time::UNIX_EPOCH.checked_add(since_epoch);
        }
        if let LogEntry::Interval(ilh) = entry {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(ilh.encoded_histogram())
                .with_context(|| format!("`{}`: bad base64 in an interval", path.display()))?;
            let h: Histogram<u64> = deserializer
                .deserialize(&mut Cursor::new(raw))
                .map_err(|e| anyhow!("`{}`: cannot decode a histogram: {e}", path.display()))?;
            intervals.push((ilh.tag().map(|t| t.as_str().to_string()), h));
            lengths.push(ilh.duration());
        }
    }
    if intervals.is_empty() {
        bail!("`{}` holds no interval histograms", path.display());
    }
    Ok(HdrLog { meta, intervals, lengths, start })
}

/// Writes one log per cell into a directory.
pub struct HdrExporter {
    dir: PathBuf,
}

/// Checks that `dir` is a writable directory, or can be created: its
/// nearest existing ancestor is a writable directory. Creates nothing.
pub fn check(dir: &Path) -> Result<()> {
    if dir.exists() {
        ensure!(dir.is_dir(), "--hdr-dir `{}` exists and is not a directory", dir.display());
        return super::check_output("HDR logs into", &dir.join("probe"), super::Kind::Hlog);
    }
    let mut ancestor = dir;
    while !ancestor.exists() {
        ancestor = match ancestor.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
    ensure!(
        ancestor.is_dir(),
        "cannot create --hdr-dir `{}`: `{}` is not a directory",
        dir.display(),
        ancestor.display()
    );
    super::check_output(&format!("--hdr-dir `{}` into", dir.display()), &ancestor.join("probe"), super::Kind::Hlog)
}

impl HdrExporter {
    /// Creates `dir` when missing and checks it is writable.
    pub fn open(dir: &Path) -> Result<HdrExporter> {
        check(dir)?;
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create --hdr-dir `{}`", dir.display()))?;
        super::check_output("HDR logs into", &dir.join("probe"), super::Kind::Hlog)?;
        Ok(HdrExporter { dir: dir.to_path_buf() })
    }
}

impl Exporter for HdrExporter {
    fn cell(&mut self, results: &Results, latest: &CellOutcome) -> Result<()> {
        if latest.histograms.is_empty() {
            return Ok(());
        }
        let bytes = encode(&latest.key, latest, results)?;
        write_output(&self.dir.join(file_name(&latest.key)), &bytes)
    }
}
