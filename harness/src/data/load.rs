//! Reads a results CSV back (for `compare` and `plot`), checking it on the
//! way: every error names the file, the line and the column.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{bail, ensure, Context, Result};

use crate::data::ideal::IdealColumns;
use crate::data::record::{counter_names, CellKey, Latencies, LatencyMetric, RunRecord, Status};
use crate::output::export::csv::{parse_extras, CORE_COLUMNS};
use crate::run::cgroup::columns::LimitColumns;
use crate::run::cpu::CpuColumns;
use crate::run::env::parse_rfc3339_utc;

/// A results file read back.
#[derive(Debug, Clone)]
pub struct ResultsFile {
    /// Where it came from.
    pub path: PathBuf,
    /// Its `schema_version` (the same on every row).
    pub schema_version: u32,
    /// `timestamp` of the first row (the start of its invocation).
    pub timestamp: String,
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
    /// Where the row is, for messages: `line N` (CSV), `cells[i].runs[j]` (JSON).
    at: String,
    record: &'a csv::StringRecord,
    columns: &'a Columns,
}

impl Row<'_> {
    fn text(&self, column: &str) -> Option<&str> {
        self.columns.index.get(column).and_then(|&i| self.record.get(i)).map(str::trim)
    }

    fn required<T: FromStr>(&self, column: &str) -> Result<T> {
        self.optional(column)?.with_context(|| {
            format!("`{}` {}, column `{column}`: empty, a value is required", self.path.display(), self.at)
        })
    }

    fn optional<T: FromStr>(&self, column: &str) -> Result<Option<T>> {
        match self.text(column) {
            None | Some("") => Ok(None),
            Some(v) => v.parse().map(Some).ok().with_context(|| {
                format!(
                    "`{}` {}, column `{column}`: `{v}` is not a valid {}",
                    self.path.display(),
                    self.at,
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
                "`{}` {}, column `{column}`: `{}` is not a measurement (allowed: a finite number, 0 or more)",
                self.path.display(),
                self.at,
                self.text(column).unwrap_or_default()
            );
        }
        Ok(value)
    }

    /// A required [`Row::measure`].
    fn required_measure(&self, column: &str) -> Result<f64> {
        self.measure(column)?.with_context(|| {
            format!("`{}` {}, column `{column}`: empty, a value is required", self.path.display(), self.at)
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
    // An empty field stays blank (NaN), never 0.
    let mut out = Latencies::BLANK;
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
        other => bail!("`{}` {}, column `status`: `{other}` is not ok or failed", row.path.display(), row.at),
    };
    let key = CellKey {
        scheduler: row.string("scheduler"),
        workers: row.required("workers")?,
        workload: row.string("workload"),
        knobs: row.string("knobs"),
        params: row.string("params"),
        rate_per_s: row.optional("rate_per_s")?,
        cpus: row.string("cpus"),
        cpuset: row.string("cpuset"),
    };
    ensure!(
        key.workers >= 1,
        "`{}` {}, column `workers`: `{}` is not a worker count (allowed: a whole number, 1 or more)",
        row.path.display(),
        row.at,
        key.workers
    );
    let timestamp = row.string("timestamp");
    ensure!(
        parse_rfc3339_utc(&timestamp).is_some(),
        "`{}` {}, column `timestamp`: `{timestamp}` is not a time (allowed: RFC 3339 in UTC, e.g. \
         2026-01-31T12:00:00.000Z, as wsbench writes it)",
        row.path.display(),
        row.at
    );
    ensure!(!key.scheduler.is_empty(), "`{}` {}, column `scheduler`: empty", row.path.display(), row.at);
    ensure!(!key.workload.is_empty(), "`{}` {}, column `workload`: empty", row.path.display(), row.at);
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
        format!("`{}` {}, column `extras`: `{extras}` is not name=number;...", row.path.display(), row.at)
    })?;
    r.notes = row.string("notes");
    r.cpu = CpuColumns {
        cpu_ms: row.measure("cpu_ms")?,
        cpu_us_per_op: row.measure("cpu_us_per_op")?,
        cpu_util: row.measure("cpu_util")?,
        ctx_switches_voluntary: row.optional("ctx_switches_voluntary")?,
        ctx_switches_involuntary: row.optional("ctx_switches_involuntary")?,
        wakeups_per_op: row.measure("wakeups_per_op")?,
    };
    // Blank in files before schema 6, which have no such columns.
    r.ideal = IdealColumns {
        ideal_p50_us: row.measure("ideal_p50_us")?,
        ideal_p99_us: row.measure("ideal_p99_us")?,
        p99_over_ideal: row.measure("p99_over_ideal")?,
    };
    r.runtime_version = row.string("runtime_version");
    r.limits = LimitColumns {
        cgroup: row.string("cgroup"),
        nr_periods: row.optional("nr_periods")?,
        nr_throttled: row.optional("nr_throttled")?,
        throttled_ms: row.measure("throttled_ms")?,
        tokio_default_workers: row.optional("tokio_default_workers")?,
    };
    // Blank in files before schema 9, which have no such columns.
    r.sched_delay_p50_us = row.measure("sched_delay_p50_us")?;
    r.sched_delay_p99_us = row.measure("sched_delay_p99_us")?;
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
    let bytes = crate::data::input::read_input(path, "results file")?;
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
        let row = Row { path, at: format!("line {line}"), record: &record, columns: &columns };
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
                row.string("timestamp"),
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
    let (Some(schema_version), Some((timestamp, host, cpu_model, logical_cpus, git_sha))) = (schema, first_env) else {
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
    Ok(ResultsFile {
        path: path.to_path_buf(),
        schema_version,
        timestamp,
        host,
        cpu_model,
        logical_cpus,
        git_sha,
        records,
    })
}

/// The parts of a results JSON (`run --json`, `load --json`) that its CSV
/// rows do not hold, as written.
#[derive(Debug, Clone)]
pub struct JsonParts {
    /// Its `environment` object.
    pub environment: serde_json::Value,
    /// Its `settings` object.
    pub settings: serde_json::Value,
}

/// Reads and checks a results JSON of this wsbench's schema: every run of
/// every cell goes through the same checks as a CSV row (each error names
/// the file and `cells[i].runs[j]` with the field).
pub fn load_json(path: &Path) -> Result<(ResultsFile, JsonParts)> {
    use serde_json::Value;
    let bytes = crate::data::input::read_input(path, "results file")?;
    let doc: Value =
        serde_json::from_slice(&bytes).with_context(|| format!("`{}` is not valid JSON", path.display()))?;
    let field = |name: &str| {
        doc.get(name).with_context(|| {
            format!("`{}` has no `{name}`: not a results JSON of `wsbench run --json` or `load --json`", path.display())
        })
    };
    let version = field("schema_version")?;
    let schema_version = version
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .with_context(|| format!("`{}`: schema_version `{version}` is not a whole number", path.display()))?;
    ensure!(
        schema_version == crate::data::record::SCHEMA_VERSION,
        "`{}` has schema_version {schema_version}, this wsbench reads results JSON of schema {}; use the wsbench \
         that wrote it, or its CSV",
        path.display(),
        crate::data::record::SCHEMA_VERSION
    );
    let environment = field("environment")?.clone();
    let settings = field("settings")?.clone();
    ensure!(environment.is_object(), "`{}`: `environment` is not an object", path.display());
    ensure!(settings.is_object(), "`{}`: `settings` is not an object", path.display());
    let cells = field("cells")?.as_array().with_context(|| format!("`{}`: `cells` is not a list", path.display()))?;
    let header = crate::output::export::csv::header();
    let columns = Columns { index: header.iter().enumerate().map(|(i, h)| (h.clone(), i)).collect() };
    let mut records = Vec::new();
    let mut seen: HashMap<(CellKey, usize), String> = HashMap::new();
    for (i, cell) in cells.iter().enumerate() {
        let runs = cell
            .get("runs")
            .and_then(Value::as_array)
            .with_context(|| format!("`{}` cells[{i}]: no `runs` list", path.display()))?;
        for (j, run) in runs.iter().enumerate() {
            let at = format!("cells[{i}].runs[{j}]");
            ensure!(run.is_object(), "`{}` {at}: not an object", path.display());
            let fields: Vec<String> =
                header.iter().map(|column| json_field(column, run, &environment, schema_version)).collect();
            let record = csv::StringRecord::from(fields);
            let row = Row { path, at: at.clone(), record: &record, columns: &columns };
            let (_, r) = parse_row(&row)?;
            if let Some(earlier) = seen.insert((r.key.clone(), r.run), at.clone()) {
                bail!("`{}` {at}: duplicate cell {} run {} (first at {earlier})", path.display(), r.key, r.run);
            }
            records.push(r);
        }
    }
    ensure!(!records.is_empty(), "`{}` holds no runs", path.display());
    let env = |k: &str| json_text(environment.get(k));
    let logical_cpus = environment.get("logical_cpus").and_then(Value::as_u64).map(|v| v as usize);
    let file = ResultsFile {
        path: path.to_path_buf(),
        schema_version,
        timestamp: env("timestamp"),
        host: env("host"),
        cpu_model: env("cpu_model"),
        logical_cpus,
        git_sha: env("git_sha"),
        records,
    };
    Ok((file, JsonParts { environment, settings }))
}

/// The CSV field `column` of a JSON run (see `export::json`: the cell key
/// and the CPU columns are flattened into the run, the latencies, counters
/// and extras are objects, the machine columns are the environment's).
fn json_field(column: &str, run: &serde_json::Value, env: &serde_json::Value, schema_version: u32) -> String {
    match column {
        "schema_version" => schema_version.to_string(),
        "timestamp" | "git_sha" | "host" | "cpu_model" | "logical_cpus" => json_text(env.get(column)),
        "extras" => run
            .get("extras")
            .and_then(serde_json::Value::as_object)
            .map(|m| {
                // serde_json writes a non-finite f64 as null.
                let value = |v: &serde_json::Value| if v.is_null() { "NaN".to_string() } else { json_text(Some(v)) };
                m.iter().map(|(k, v)| format!("{k}={}", value(v))).collect::<Vec<_>>().join(";")
            })
            .unwrap_or_default(),
        c if LatencyMetric::ALL.iter().any(|m| m.column() == c) => json_text(run.get("latency").and_then(|l| l.get(c))),
        c if counter_names().contains(&c) => json_text(run.get("counters").and_then(|m| m.get(c))),
        c => json_text(run.get(c)),
    }
}

/// A JSON value as CSV text: null or missing is blank.
fn json_text(value: Option<&serde_json::Value>) -> String {
    match value {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}
