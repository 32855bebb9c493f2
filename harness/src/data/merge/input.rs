//! The results files `merge` reads (`.csv`, or `.json` with its
//! environment and settings) and the settings each recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Result};
use serde_json::{json, Map, Value};

use crate::data::load::{load, load_json, JsonParts, ResultsFile};
use crate::data::outcome::RecordedSettings;
use crate::data::record::CellKey;
use crate::run::env::parse_rfc3339_utc;

/// Added to a load process's span: connecting, the drain after the
/// window, and clock skew between machines.
const SPAN_SLACK: Duration = Duration::from_secs(10);

/// One results input.
pub(super) struct Input {
    /// Its rows.
    pub file: ResultsFile,
    /// A JSON's environment and settings; `None` for a CSV.
    pub json: Option<JsonParts>,
    /// `--duration`, `--warmup`, `--seed` as it recorded them.
    pub recorded: RecordedSettings,
}

impl Input {
    /// Reads a `.csv` or `.json` results file.
    pub fn read(path: &Path) -> Result<Input> {
        let (file, json) = match super::kind(path) {
            "json" => {
                let (file, parts) = load_json(path)?;
                (file, Some(parts))
            }
            _ => (load(path)?, None),
        };
        let recorded = match &json {
            Some(parts) => from_settings(&parts.settings),
            None => from_rows(&file)?,
        };
        Ok(Input { file, json, recorded })
    }

    /// The most runs of one cell (a hung run skips the rest of its cell, so
    /// the largest shows `--runs`, or `--runs-open-loop` when larger).
    pub fn runs_per_cell(&self) -> usize {
        self.runs_per_workload().into_values().max().unwrap_or(0)
    }

    /// The most runs of any one cell, by workload (`--runs-open-loop` gives
    /// open-loop workloads their own number).
    pub fn runs_per_workload(&self) -> BTreeMap<&str, usize> {
        let mut runs: BTreeMap<&CellKey, BTreeSet<usize>> = BTreeMap::new();
        for r in &self.file.records {
            runs.entry(&r.key).or_default().insert(r.run);
        }
        let mut out: BTreeMap<&str, usize> = BTreeMap::new();
        for (key, set) in runs {
            let n = out.entry(key.workload.as_str()).or_default();
            *n = (*n).max(set.len());
        }
        out
    }

    /// When it measured, roughly: from its invocation's start (`timestamp`)
    /// for its runs' warm-ups and windows (the recorded settings, else the
    /// longest measured window), plus [`SPAN_SLACK`]. `None` when the
    /// timestamp cannot be read.
    pub fn span(&self) -> Option<(SystemTime, SystemTime)> {
        let start = parse_rfc3339_utc(&self.file.timestamp)?;
        let per_run = match (self.recorded.warmup_s, self.recorded.duration_s) {
            (Some(w), Some(d)) => w + d,
            _ => self.file.records.iter().filter_map(|r| r.duration_s).fold(0.0, f64::max),
        };
        let length = Duration::try_from_secs_f64(per_run * self.runs_per_cell() as f64).ok()? + SPAN_SLACK;
        Some((start, start + length))
    }

    /// Its machine: a JSON's `environment`; a CSV's machine columns of its
    /// first row.
    pub fn environment(&self) -> Value {
        match &self.json {
            Some(parts) => parts.environment.clone(),
            None => {
                let f = &self.file;
                json!({
                    "timestamp": f.timestamp,
                    "host": f.host,
                    "cpu_model": f.cpu_model,
                    "logical_cpus": f.logical_cpus,
                    "git_sha": f.git_sha,
                })
            }
        }
    }

    /// Its settings: a JSON's `settings`; for a CSV what its rows recorded
    /// (null where they recorded nothing) and its runs per cell.
    pub fn settings(&self) -> Value {
        match &self.json {
            Some(parts) => parts.settings.clone(),
            None => json!({
                "duration_s": self.recorded.duration_s,
                "warmup_s": self.recorded.warmup_s,
                "runs": self.runs_per_cell(),
                "seed": self.recorded.seed,
            }),
        }
    }

    /// `{file, environment, settings}` for the merged JSON's `merged_from`.
    pub fn part(&self) -> Value {
        json!({
            "file": self.file.path.display().to_string(),
            "environment": self.environment(),
            "settings": self.settings(),
        })
    }
}

fn from_settings(settings: &Value) -> RecordedSettings {
    RecordedSettings {
        duration_s: settings.get("duration_s").and_then(Value::as_f64),
        warmup_s: settings.get("warmup_s").and_then(Value::as_f64),
        seed: settings.get("seed").and_then(Value::as_u64),
    }
}

/// What a CSV's rows recorded; every row must agree (one invocation's
/// settings), rows that recorded nothing (an older wsbench) aside.
fn from_rows(file: &ResultsFile) -> Result<RecordedSettings> {
    let mut out = RecordedSettings { duration_s: None, warmup_s: None, seed: None };
    for r in &file.records {
        let this = RecordedSettings::of(r);
        out.duration_s = same(file, "--duration", out.duration_s, this.duration_s)?;
        out.warmup_s = same(file, "--warmup", out.warmup_s, this.warmup_s)?;
        out.seed = same(file, "--seed", out.seed, this.seed)?;
    }
    Ok(out)
}

fn same<T: PartialEq + Display + Copy>(
    file: &ResultsFile,
    flag: &str,
    so_far: Option<T>,
    this: Option<T>,
) -> Result<Option<T>> {
    match (so_far, this) {
        (Some(a), Some(b)) if a != b => bail!(
            "`{}` holds rows measured with {flag} {a} and {b}: the rows of several invocations; merge one \
             invocation's results per file",
            file.path.display()
        ),
        (a, b) => Ok(a.or(b)),
    }
}

/// The settings the parts share: each key with the parts' common value,
/// or null where a part lacks it or they differ; and the keys whose values
/// differ.
pub(super) fn common_settings(inputs: &[Input]) -> (Value, Vec<String>) {
    let all: Vec<Value> = inputs.iter().map(Input::settings).collect();
    let keys: BTreeSet<&String> = all.iter().filter_map(Value::as_object).flat_map(Map::keys).collect();
    let mut common = Map::new();
    let mut differ = Vec::new();
    for key in keys {
        let values: Vec<&Value> = all.iter().map(|s| s.get(key.as_str()).unwrap_or(&Value::Null)).collect();
        let known: BTreeSet<String> = values.iter().filter(|v| !v.is_null()).map(|v| v.to_string()).collect();
        if known.len() > 1 {
            differ.push(key.clone());
        }
        let same = known.len() == 1 && values.iter().all(|v| !v.is_null());
        common.insert(key.clone(), if same { values[0].clone() } else { Value::Null });
    }
    (Value::Object(common), differ)
}
