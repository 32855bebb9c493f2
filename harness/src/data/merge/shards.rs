//! Shards of one matrix (`run --shard I/N`): their rows side by side, once
//! they are shown to fit (see the parent module's doc).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{anyhow, bail, ensure, Context, Result};

use super::input::Input;
use super::{check_same_code, write_json, Output};
use crate::data::load::ResultsFile;
use crate::data::outcome::RecordedSettings;
use crate::data::record::{CellKey, RunRecord};
use crate::output::export::write_output;
use crate::run::env::Environment;

/// Puts the rows of the shards of one matrix side by side (see the module
/// doc for what must fit).
pub(super) fn merge_shards(inputs: &[Input], out: &Path, kind: Output) -> Result<ExitCode> {
    let files: Vec<&ResultsFile> = inputs.iter().map(|i| &i.file).collect();
    check_same_code(&files)?;
    let cells = check_disjoint(&files)?;
    // By workload: --runs-open-loop gives open-loop workloads their own
    // number, and a shard may hold only closed-loop cells.
    let mut seen: BTreeMap<&str, (&Path, usize)> = BTreeMap::new();
    for input in inputs {
        let path = input.file.path.as_path();
        for (workload, n) in input.runs_per_workload() {
            let (first, m) = *seen.entry(workload).or_insert((path, n));
            ensure!(
                m == n,
                "the shards do not fit: runs per cell of {workload} differ (`{}` {m}, `{}` {n}); shards of one matrix \
                 use the same --runs and --runs-open-loop",
                first.display(),
                path.display()
            );
        }
    }
    let mut notes: Vec<String> = check_shard_settings(inputs)?.into_iter().collect();
    let models: BTreeSet<&str> = files.iter().map(|f| f.cpu_model.as_str()).collect();
    let hosts: BTreeSet<&str> = files.iter().map(|f| f.host.as_str()).collect();
    if models.len() > 1 {
        let list: Vec<&str> = models.into_iter().collect();
        notes.push(format!(
            "the shards ran on different CPU models ({}); compare cells across them with care",
            list.join(", ")
        ));
    } else if hosts.len() > 1 {
        notes.push(format!("the shards ran on {} hosts of one CPU model", hosts.len()));
    }
    let rows = match kind {
        Output::Csv => write_shard_csv(inputs, out)?,
        Output::Json => {
            let records: Vec<RunRecord> = files.iter().flat_map(|f| f.records.iter().cloned()).collect();
            write_json(out, inputs, "shards", &records, notes.clone())?;
            records.len()
        }
    };
    crate::outln!("merged {} shards: {cells} cells, {rows} rows into {}", inputs.len(), out.display());
    for note in notes {
        crate::outln!("note: {note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Shards of one matrix give every cell of a workload the same `--param`
/// values and hold no cell twice. Returns the number of cells.
fn check_disjoint(files: &[&ResultsFile]) -> Result<usize> {
    let mut owner: BTreeMap<&CellKey, &Path> = BTreeMap::new();
    let mut params: BTreeMap<&str, (&str, &Path)> = BTreeMap::new();
    for f in files {
        let mut mine: BTreeSet<&CellKey> = BTreeSet::new();
        for r in &f.records {
            let (p, first) = *params.entry(&r.key.workload).or_insert((&r.key.params, &f.path));
            ensure!(
                p == r.key.params,
                "`{}` does not fit `{}`: different settings: workload {} with params `{}` vs `{p}` (shards of one \
                 matrix are run with the same options)",
                f.path.display(),
                first.display(),
                r.key.workload,
                r.key.params
            );
            mine.insert(&r.key);
        }
        for key in mine {
            if let Some(p) = owner.get(key) {
                bail!(
                    "`{}` does not fit `{}`: both hold cell {key}; shards of one matrix are disjoint (to combine load \
                     processes that loaded one server, give their HDR logs too: their histograms add up)",
                    f.path.display(),
                    p.display()
                );
            }
            owner.insert(key, &f.path);
        }
    }
    Ok(owner.len())
}

/// Shards of one matrix ran with one command line: the `--duration`,
/// `--warmup` and `--seed` the inputs recorded must agree, and so must
/// every setting of the JSON inputs. Returns a note naming the inputs that
/// recorded none of the three (CSVs of an older wsbench).
fn check_shard_settings(inputs: &[Input]) -> Result<Option<String>> {
    type Get = fn(&Input) -> Option<String>;
    let recorded: [(&str, Get); 3] = [
        ("--duration", |i| i.recorded.duration_s.map(|v| format!("{v}s"))),
        ("--warmup", |i| i.recorded.warmup_s.map(|v| format!("{v}s"))),
        ("--seed", |i| i.recorded.seed.map(|v| v.to_string())),
    ];
    for (flag, get) in recorded {
        let mut first: Option<(String, &Path)> = None;
        for i in inputs {
            let Some(value) = get(i) else { continue };
            match &first {
                Some((seen, path)) if *seen != value => bail!(
                    "`{}` does not fit `{}`: different settings: {flag} {value} vs {seen} (shards of one matrix are \
                     run with the same options)",
                    i.file.path.display(),
                    path.display()
                ),
                Some(_) => {}
                None => first = Some((value, &i.file.path)),
            }
        }
    }
    let jsons: Vec<(&Input, &serde_json::Value)> =
        inputs.iter().filter_map(|i| i.json.as_ref().map(|j| (i, &j.settings))).collect();
    if let Some(((first, a), rest)) = jsons.split_first().map(|(f, r)| (*f, r)) {
        for (other, b) in rest {
            let keys: BTreeSet<&String> = [a, *b].iter().filter_map(|s| s.as_object()).flat_map(|m| m.keys()).collect();
            if let Some(key) = keys.into_iter().find(|k| a.get(k.as_str()) != b.get(k.as_str())) {
                let show =
                    |s: &serde_json::Value| s.get(key.as_str()).map(|v| v.to_string()).unwrap_or("nothing".into());
                bail!(
                    "`{}` does not fit `{}`: different settings: {key} {} vs {} (shards of one matrix are run with \
                     the same options)",
                    other.file.path.display(),
                    first.file.path.display(),
                    show(b),
                    show(a)
                );
            }
        }
    }
    let blind: Vec<String> = inputs
        .iter()
        .filter(|i| i.recorded == RecordedSettings { duration_s: None, warmup_s: None, seed: None })
        .map(|i| format!("`{}`", i.file.path.display()))
        .collect();
    Ok((!blind.is_empty()).then(|| {
        format!(
            "{} recorded no --duration, --warmup or --seed (a CSV of an older wsbench): those settings were not \
             checked; give every shard the same command line",
            blind.join(", ")
        )
    }))
}

/// The shards' rows side by side: a CSV's rows unchanged, a JSON's rows as
/// its `run --csv` would have written them. Returns the number of rows.
fn write_shard_csv(inputs: &[Input], out: &Path) -> Result<usize> {
    let first_csv = inputs.iter().find(|i| i.json.is_none());
    let header = match first_csv {
        Some(i) => csv_header(&i.file.path)?,
        None => csv::StringRecord::from(crate::output::export::csv::header()),
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header)?;
    let mut rows = 0;
    let mut capture: Option<Environment> = None;
    for input in inputs {
        let path = &input.file.path;
        match &input.json {
            None => {
                let mut reader =
                    csv::Reader::from_path(path).with_context(|| format!("cannot open `{}`", path.display()))?;
                let h = reader.headers().with_context(|| format!("`{}`: no header", path.display()))?.clone();
                ensure!(h == header, "`{}` does not fit the other shards: different columns (schema)", path.display());
                for rec in reader.records() {
                    w.write_record(&rec.with_context(|| format!("`{}`: unreadable row", path.display()))?)?;
                    rows += 1;
                }
            }
            Some(parts) => {
                ensure!(
                    header == crate::output::export::csv::header(),
                    "`{}` does not fit the other shards: its rows have this wsbench's columns, the CSVs' differ",
                    path.display()
                );
                let env = machine_of(capture.get_or_insert_with(Environment::capture), &parts.environment);
                for r in &input.file.records {
                    w.write_record(crate::output::export::csv::row(&env, r))?;
                    rows += 1;
                }
            }
        }
    }
    let bytes = w.into_inner().map_err(|e| anyhow!("cannot encode the merged CSV: {e}"))?;
    write_output(out, &bytes)?;
    Ok(rows)
}

fn csv_header(path: &Path) -> Result<csv::StringRecord> {
    let mut reader = csv::Reader::from_path(path).with_context(|| format!("cannot open `{}`", path.display()))?;
    Ok(reader.headers().with_context(|| format!("`{}`: no header", path.display()))?.clone())
}

/// `base` with the machine columns a CSV row holds (timestamp, host, CPU
/// model, logical CPUs, git sha) taken from a JSON's `environment`.
fn machine_of(base: &Environment, env: &serde_json::Value) -> Environment {
    let text = |k: &str| env.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
    Environment {
        timestamp: text("timestamp"),
        host: text("host"),
        cpu_model: text("cpu_model"),
        logical_cpus: env.get("logical_cpus").and_then(|v| v.as_u64()).map(|v| v as usize),
        git_sha: text("git_sha"),
        ..base.clone()
    }
}
