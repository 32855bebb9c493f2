//! Turns a run directory or results CSV into runs for the history.
//!
//! The file is checked by the same loader `compare` uses (a file that is
//! not a wsbench results CSV, or has a bad field, is refused with the
//! line and column), and must be of this wsbench's CSV schema version.
//! Then every numeric column except the identifying ones, and every
//! `extras` entry except those that name or configure the row (the A/B
//! pairing, the recorded settings), is kept by its column name: a column added to the CSV
//! later is stored without any change here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};

use super::store::{NewRun, Repetition, RunKey};
use crate::data::input::read_input;
use crate::data::load::load;
use crate::data::outcome::{SETTING_DURATION, SETTING_SEED, SETTING_WARMUP};
use crate::data::record::{Status, SCHEMA_VERSION};
use crate::output::export::csv::{parse_extras, CORE_COLUMNS};
use crate::run::ab;

/// The CSV's identity prefix, `schema_version` through `run` (the first 11
/// of [`CORE_COLUMNS`]): it names a row and holds no measurement.
const IDENTITY_COLUMNS: &[&str] = CORE_COLUMNS.split_at(11).0;
/// Columns after the counters that hold text, flags or settings.
const TEXT_COLUMNS: [&str; 8] =
    ["status", "error", "params", "rate_per_s", "resolved_params", "extras", "notes", "runtime_version"];

/// `extras` entries that name or configure a row rather than measure it:
/// the A/B pairing and the settings each row records. Stored, they would
/// be series whose every change (a new A/B session each night) looks like
/// a change point.
const NOT_MEASURED_EXTRAS: [&str; 5] = [ab::SESSION, ab::ORDER, SETTING_DURATION, SETTING_WARMUP, SETTING_SEED];

/// Whether a CSV column holds a measurement to store.
fn is_metric(name: &str) -> bool {
    !IDENTITY_COLUMNS.contains(&name) && !TEXT_COLUMNS.contains(&name)
}

/// Where a run's environment comes from, and how strictly.
struct JsonBeside {
    path: PathBuf,
    /// `results.json` of a run directory: it must be a results JSON. The
    /// `X.json` beside a CSV `X.csv` may be something else (a `compare
    /// --json` report): then it is skipped with a warning.
    strict: bool,
}

/// The results CSV (and the JSON beside it, when there is one) for an
/// argument of `history add`: a run directory holding `results.csv`, or a
/// CSV file. What is there but is not a regular file is left to the input
/// guard, which names it.
fn resolve(input: &Path) -> Result<(PathBuf, Option<JsonBeside>)> {
    if input.is_dir() {
        let csv = input.join("results.csv");
        ensure!(
            csv.exists(),
            "`{}` is a directory without a results.csv (not a wsbench run directory)",
            input.display()
        );
        let json = input.join("results.json");
        return Ok((csv, json.exists().then_some(JsonBeside { path: json, strict: true })));
    }
    ensure!(input.exists(), "`{}` does not exist; expected a run directory or a results CSV", input.display());
    let json = input.with_extension("json");
    Ok((input.to_path_buf(), json.is_file().then_some(JsonBeside { path: json, strict: false })))
}

/// The `environment` object of a results JSON, as compact JSON text. A
/// run directory's `results.json` that is not a results JSON with an
/// `environment` is an error naming it: silently dropping it would store
/// the run without the machine it ran on.
fn environment(json: Option<&JsonBeside>) -> Result<Option<String>> {
    let Some(JsonBeside { path, strict }) = json else { return Ok(None) };
    let found = read_input(path, "results JSON").and_then(|bytes| {
        let value: serde_json::Value = serde_json::from_slice(&bytes).with_context(|| {
            format!("`{}` is not valid JSON (expected the results JSON of `wsbench run --json`)", path.display())
        })?;
        match value.get("environment") {
            Some(env) if env.is_object() => Ok(env.to_string()),
            _ => bail!(
                "`{}` has no `environment` object: not a results JSON of `wsbench run --json`; move it away or \
                 replace it",
                path.display()
            ),
        }
    });
    match found {
        Ok(env) => Ok(Some(env)),
        Err(e) if !strict => {
            eprintln!("warning: {e:#}; the run is stored without its environment");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Reads `input` into one run per (git sha, start time, host, CPU, cores)
/// found in it: a CSV appended to by several invocations holds several.
pub fn read_runs(input: &Path) -> Result<Vec<NewRun>> {
    let (csv_path, json_path) = resolve(input)?;
    let file = load(&csv_path)?;
    if file.schema_version != SCHEMA_VERSION {
        bail!(
            "`{}` has schema_version {}, this wsbench stores {SCHEMA_VERSION}; add it with the wsbench that wrote it",
            csv_path.display(),
            file.schema_version
        );
    }
    if let Some(r) = file.records.iter().find(|r| !r.key.cpus.is_empty() || !r.key.cpuset.is_empty()) {
        bail!(
            "`{}` holds rows run under CPU limits (cell {}); the history keys cells without them, so it stores only \
             runs without --cpus/--cpuset",
            csv_path.display(),
            r.key
        );
    }
    let bytes = read_input(&csv_path, "results file")?;
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes.as_slice());
    let header: Vec<String> = reader.headers()?.iter().map(|h| h.trim().to_string()).collect();
    let at = |name: &str| header.iter().position(|h| h == name);
    let env = environment(json_path.as_ref())?;
    let mut runs: BTreeMap<RunKey, NewRun> = BTreeMap::new();
    for (row, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("`{}`: unreadable CSV", csv_path.display()))?;
        // `load` accepted this file, so row i is its records[i].
        let loaded = &file.records[row];
        let text = |name: &str| at(name).and_then(|i| record.get(i)).unwrap_or("").trim().to_string();
        let key = RunKey {
            git_sha: text("git_sha"),
            run_time: text("timestamp"),
            host: text("host"),
            cpu_model: text("cpu_model"),
            logical_cpus: text("logical_cpus").parse().ok().or(file.logical_cpus).with_context(|| {
                format!(
                    "`{}` row {}: logical_cpus is unknown (blank); history keys runs by it",
                    csv_path.display(),
                    row + 2
                )
            })?,
            ab_side: ab::side(loaded).unwrap_or_default().to_string(),
        };
        let mut metrics = Vec::new();
        if loaded.status == Status::Ok {
            for (name, value) in header.iter().zip(record.iter()) {
                if !is_metric(name) {
                    continue;
                }
                if let Ok(v) = value.trim().parse::<f64>() {
                    if v.is_finite() {
                        metrics.push((name.clone(), v));
                    }
                }
            }
            for (name, v) in parse_extras(&text("extras")).unwrap_or_default() {
                let measured = !NOT_MEASURED_EXTRAS.contains(&name.as_str());
                if measured && v.is_finite() && !metrics.iter().any(|(m, _)| *m == name) {
                    metrics.push((name, v));
                }
            }
        }
        let run = runs.entry(key.clone()).or_insert_with(|| NewRun {
            key,
            csv_schema: file.schema_version,
            source: csv_path.display().to_string(),
            environment: env.clone(),
            repetitions: Vec::new(),
        });
        run.repetitions.push(Repetition {
            cell: loaded.key.clone(),
            rep: loaded.run,
            status: loaded.status.as_str().to_string(),
            error: loaded.error.clone(),
            metrics,
        });
    }
    Ok(runs.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::record::APPENDED_COLUMNS;
    use crate::output::export::csv::EXTRA_COLUMNS;

    #[test]
    fn non_metric_columns_are_the_identity_prefix_and_the_text_columns() {
        assert_eq!(IDENTITY_COLUMNS.first(), Some(&"schema_version"));
        assert_eq!(IDENTITY_COLUMNS.last(), Some(&"run"));
        for c in TEXT_COLUMNS {
            assert!(EXTRA_COLUMNS.contains(&c) || APPENDED_COLUMNS.contains(&c), "{c} is not a CSV column");
        }
        for c in ["duration_s", "p99_us", "polls", "cpu_us_per_op", "p9999_us"] {
            assert!(is_metric(c), "{c}");
        }
        for c in ["host", "run", "status", "notes", "rate_per_s", "runtime_version"] {
            assert!(!is_metric(c), "{c}");
        }
    }
}
