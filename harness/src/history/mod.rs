//! `wsbench history add|list|detect`: nightly runs kept in one SQLite file
//! and the change points of their series.

pub mod detect;
pub mod ingest;
pub mod store;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, ensure, Context, Result};

use crate::exit::EXIT_FAILURE;
use crate::output::export::{check_outputs, marks, write_output, Kind};
use crate::output::table::Table;
use crate::stats::changepoint::Search;
use detect::{Floors, DEFAULT_METRICS};
use store::{Added, Store};

/// What `wsbench history` was asked to do, checked (`crate::options`).
#[derive(Debug, Clone)]
pub enum Command {
    /// Store runs (run directories or results CSVs) in the database `db`.
    Add {
        /// The inputs.
        inputs: Vec<PathBuf>,
        /// The database.
        db: PathBuf,
    },
    /// List the runs the database holds.
    List {
        /// The database.
        db: PathBuf,
    },
    /// Find change points.
    Detect(DetectOptions),
}

/// `wsbench history detect`'s options.
#[derive(Debug, Clone)]
pub struct DetectOptions {
    /// The database.
    pub db: PathBuf,
    /// The metrics named with `--metric`; `None`: the defaults; empty: all.
    pub metrics: Option<Vec<String>>,
    /// The change-point test's settings.
    pub search: Search,
    /// The floors below which a change is a `shift`.
    pub floors: Floors,
    /// Also write the change points as JSON here.
    pub json: Option<PathBuf>,
}

/// `wsbench history`.
pub fn main(command: &Command) -> Result<ExitCode> {
    match command {
        Command::Add { inputs, db } => add(inputs, db),
        Command::List { db } => list(db),
        Command::Detect(a) => detect_main(a),
    }
}

fn add(inputs: &[PathBuf], db: &Path) -> Result<ExitCode> {
    // Every input is read and checked before anything is stored: one bad
    // file adds nothing.
    let named: Vec<(&str, &Path)> = inputs.iter().map(|p| ("run", p.as_path())).collect();
    let csvs: Vec<PathBuf> = inputs.iter().map(|p| p.join("results.csv")).collect();
    let mut all = named.clone();
    all.extend(csvs.iter().map(|p| ("run's results", p.as_path())));
    check_outputs(&[("--db", db, Kind::Sqlite)], &all)?;
    let mut runs = Vec::new();
    for input in inputs {
        runs.extend(ingest::read_runs(input).with_context(|| format!("refusing `{}`", input.display()))?);
    }
    let mut store = Store::open(db)?;
    for run in &runs {
        let cells: std::collections::BTreeSet<_> = run.repetitions.iter().map(|r| &r.cell).collect();
        let what = format!(
            "{} {} {} ({} cells, {} runs) from `{}`",
            run.key.run_time,
            run.key.git_sha,
            run.key.host,
            cells.len(),
            run.repetitions.len(),
            run.source
        );
        match store.add(run).with_context(|| format!("cannot store {what}"))? {
            Added::New(id) => crate::outln!("added run {id}: {what}"),
            Added::AlreadyHeld(id) => crate::outln!("already held as run {id}: {what}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(db: &Path) -> Result<ExitCode> {
    let store = Store::open_existing(db)?;
    let runs = store.runs()?;
    let rows = runs
        .iter()
        .map(|r| {
            vec![
                r.id.to_string(),
                r.key.run_time.clone(),
                r.key.git_sha.get(..12).unwrap_or(&r.key.git_sha).to_string(),
                r.key.host.clone(),
                format!("{} ({} CPUs)", r.key.cpu_model, r.key.logical_cpus),
                r.csv_schema.to_string(),
                r.cells.to_string(),
                r.ok.to_string(),
                r.failed.to_string(),
                if r.key.ab_side.is_empty() {
                    r.source.clone()
                } else {
                    format!("{} (A/B {} side)", r.source, r.key.ab_side)
                },
            ]
        })
        .collect();
    let table = Table {
        header: ["run", "time", "git sha", "host", "cpu", "schema", "cells", "ok", "failed", "source"]
            .map(String::from)
            .to_vec(),
        right: vec![true, false, false, false, false, true, true, true, true, false],
        rows,
    };
    crate::out!("{}", table.render_text());
    crate::outln!("{} run(s) in `{}` (schema version {})", runs.len(), db.display(), store.version()?);
    Ok(ExitCode::SUCCESS)
}

/// The metrics `--metric` names: `None` when not given, empty for `all`.
pub fn metrics_of(arg: Option<&str>) -> Result<Option<Vec<String>>> {
    match arg.map(str::trim) {
        None => Ok(None),
        Some("all") => Ok(Some(Vec::new())),
        Some(list) => {
            let names: Vec<String> = list.split(',').map(|m| m.trim().to_string()).filter(|m| !m.is_empty()).collect();
            ensure!(!names.is_empty(), "--metric `{list}` names no metric; give CSV column names or `all`");
            Ok(Some(names))
        }
    }
}

fn detect_main(args: &DetectOptions) -> Result<ExitCode> {
    let (settings, floors) = (args.search, args.floors);
    let metrics = args.metrics.clone().unwrap_or_else(|| DEFAULT_METRICS.iter().map(|m| m.to_string()).collect());
    if let Some(path) = &args.json {
        check_outputs(&[("the change points (--json)", path, Kind::Json)], &[("--db", args.db.as_path())])?;
    }
    let store = Store::open_existing(&args.db)?;
    let runs = store.runs()?;
    if runs.is_empty() {
        bail!("the history `{}` holds no runs; add some with `wsbench history add`", args.db.display());
    }
    let series = detect::load_series(&store, &runs, &metrics)?;
    let named = args.metrics.is_some();
    if let Some(unknown) = metrics.iter().find(|m| named && !series.iter().any(|s| s.metric == **m)) {
        let held: std::collections::BTreeSet<String> = store.samples(&[])?.into_iter().map(|s| s.metric).collect();
        bail!(
            "the history holds no values of {unknown} (--metric `{unknown}`); allowed: {}, or all",
            held.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    if series.is_empty() {
        bail!(
            "the history holds no values of {}",
            if metrics.is_empty() { "any metric".into() } else { metrics.join(", ") }
        );
    }
    let detection = detect::detect_all(&series, &settings, &floors);
    crate::out!("{}", detect::render_markdown(&detection));
    if let Some(path) = &args.json {
        let bytes = marks::json(&detection).context("cannot encode the change points")?;
        write_output(path, &bytes).context("the change points are on stdout, but --json could not be written")?;
    }
    let open = detection.open_regressions().count();
    if open > 0 {
        eprintln!("history detect: {open} series end in a regression");
        return Ok(ExitCode::from(EXIT_FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}
