//! `wsbench history add|list|detect`: nightly runs kept in one SQLite file
//! and the change points of their series.

pub mod detect;
pub mod ingest;
pub mod store;

use std::process::ExitCode;

use anyhow::{bail, ensure, Context, Result};

use crate::changepoint::Settings;
use crate::cli::{HistoryAddArgs, HistoryArgs, HistoryCommand, HistoryDbArgs, HistoryDetectArgs};
use crate::exit::EXIT_FAILURE;
use crate::export::{check_outputs, marks, write_output, Kind};
use crate::parse::parse_percent;
use crate::table::Table;
use detect::{Floors, DEFAULT_METRICS};
use store::{Added, Store};

/// `wsbench history`.
pub fn main(args: &HistoryArgs) -> Result<ExitCode> {
    match &args.command {
        HistoryCommand::Add(a) => add(a),
        HistoryCommand::List(a) => list(a),
        HistoryCommand::Detect(a) => detect_main(a),
    }
}

fn add(args: &HistoryAddArgs) -> Result<ExitCode> {
    // Every input is read and checked before anything is stored: one bad
    // file adds nothing.
    let inputs: Vec<(&str, &std::path::Path)> = args.inputs.iter().map(|p| ("run", p.as_path())).collect();
    let csvs: Vec<std::path::PathBuf> = args.inputs.iter().map(|p| p.join("results.csv")).collect();
    let mut all = inputs.clone();
    all.extend(csvs.iter().map(|p| ("run's results", p.as_path())));
    check_outputs(&[("--db", &args.db.db, Kind::Sqlite)], &all)?;
    let mut runs = Vec::new();
    for input in &args.inputs {
        runs.extend(ingest::read_runs(input).with_context(|| format!("refusing `{}`", input.display()))?);
    }
    let mut store = Store::open(&args.db.db)?;
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

fn list(args: &HistoryDbArgs) -> Result<ExitCode> {
    let store = Store::open_existing(&args.db)?;
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
        header: ["run", "time", "git sha", "host", "cpu", "cells", "ok", "failed", "source"].map(String::from).to_vec(),
        right: vec![true, false, false, false, false, true, true, true, false],
        rows,
    };
    crate::out!("{}", table.render_text());
    crate::outln!("{} run(s) in `{}` (schema version {})", runs.len(), args.db.display(), store.version()?);
    Ok(ExitCode::SUCCESS)
}

fn metrics_of(arg: Option<&str>) -> Result<Vec<String>> {
    match arg.map(str::trim) {
        None => Ok(DEFAULT_METRICS.iter().map(|m| m.to_string()).collect()),
        Some("all") => Ok(Vec::new()),
        Some(list) => {
            let names: Vec<String> = list.split(',').map(|m| m.trim().to_string()).filter(|m| !m.is_empty()).collect();
            ensure!(!names.is_empty(), "--metric `{list}` names no metric; give CSV column names or `all`");
            Ok(names)
        }
    }
}

/// Checks the detection options.
pub fn settings_of(args: &HistoryDetectArgs) -> Result<(Settings, Floors)> {
    // --p-value, --permutations and --min-size are bounded by their clap parsers.
    let floors = Floors {
        threshold: parse_percent(&args.threshold).context("bad --threshold")?,
        tail_threshold: parse_percent(&args.tail_threshold).context("bad --tail-threshold")?,
    };
    let settings = Settings {
        p_value: args.p_value,
        permutations: args.permutations,
        min_size: args.min_size,
        ..Settings::default()
    };
    Ok((settings, floors))
}

fn detect_main(args: &HistoryDetectArgs) -> Result<ExitCode> {
    let (settings, floors) = settings_of(args)?;
    let metrics = metrics_of(args.metric.as_deref())?;
    if let Some(path) = &args.json {
        check_outputs(&[("the change points (--json)", path, Kind::Json)], &[("--db", args.db.db.as_path())])?;
    }
    let store = Store::open_existing(&args.db.db)?;
    let runs = store.runs()?;
    if runs.is_empty() {
        bail!("the history `{}` holds no runs; add some with `wsbench history add`", args.db.db.display());
    }
    let series = detect::load_series(&store, &runs, &metrics)?;
    let named = args.metric.is_some();
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
