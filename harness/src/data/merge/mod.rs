//! `wsbench merge FILE… --out FILE`: puts together what several processes
//! measured.
//!
//! - **Load processes** that loaded one server (`wsbench load` on several
//!   machines): their HDR logs (`--hdr-dir`, `.hlog`) hold every latency,
//!   so each run's histograms are *added* into one distribution (never
//!   averaged percentiles). `--out X.hlog` writes the added log; `--out
//!   X.csv` or `X.json` with the processes' results (CSV or JSON) given too
//!   writes one row per run: latencies from the added histograms, and ops,
//!   sent, failed, throughput and offered load summed over the processes,
//!   which must have run at the same time.
//! - **Shards** of one matrix (`run --shard I/N`): their rows side by side,
//!   unchanged. The shards must fit: the same columns and schema version,
//!   the same code (`git_sha`), the same runs per cell of each workload,
//!   the same parameters per workload, the same `--duration`, `--warmup`
//!   and `--seed` (which every row records in `extras`), every setting of
//!   the JSON inputs, and no cell in two shards.
//!
//! A merged JSON has no single environment: `merged_from` keeps each
//! part's file, environment and settings, `settings` those they share.
//! Inputs are only read; `--out` goes through the output guard
//! (`export::file`: never an input, never a file wsbench did not write
//! unless `--force`).

mod input;
mod shards;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{anyhow, bail, ensure, Context, Result};
use hdrhistogram::Histogram;

use crate::data::load::ResultsFile;
use crate::data::outcome::{CellOutcome, Results, RunHistograms, Settings};
use crate::data::record::{
    insufficient_samples_note, p99_us, quantile_ci_us, quantile_us, CellKey, Latencies, LatencyMetric, RunRecord,
    Status, P99, US_PER_NS,
};
use crate::output::export::hdr::{self, HdrLog, RUN_TAG, UNCORRECTED_TAG};
use crate::output::export::{check_outputs, write_output, Kind};
use crate::output::table::{Table, BLANK};
use crate::output::units::{format_count, format_us};
use crate::run::env::Environment;
use crate::run::health;
use crate::stats::slo::Slo;
use crate::stats::summary::CellSummary;
use input::{common_settings, Input};

/// `wsbench merge`'s options.
#[derive(Debug, Clone)]
pub struct Options {
    /// The inputs.
    pub files: Vec<PathBuf>,
    /// The merged file to write.
    pub out: PathBuf,
}

/// `wsbench merge`.
pub fn main(a: &Options) -> Result<ExitCode> {
    ensure!(a.files.len() >= 2, "merge needs at least 2 input files, got {}", a.files.len());
    let mut seen: BTreeMap<PathBuf, &Path> = BTreeMap::new();
    for f in &a.files {
        let real = std::fs::canonicalize(f).with_context(|| format!("cannot read input `{}`", f.display()))?;
        if let Some(first) = seen.insert(real, f) {
            bail!(
                "`{}` and `{}` are the same file: each input counts once (merging a file with itself would add its \
                 requests twice)",
                first.display(),
                f.display()
            );
        }
    }
    let out_kind = match kind(&a.out) {
        "hlog" => Kind::Hlog,
        "json" => Kind::Json,
        _ => Kind::Csv,
    };
    let inputs: Vec<(&str, &Path)> = a.files.iter().map(|f| ("file", f.as_path())).collect();
    check_outputs(&[("--out", &a.out, out_kind)], &inputs)?;
    let (mut results, mut logs) = (Vec::new(), Vec::new());
    for f in &a.files {
        match kind(f) {
            "csv" | "json" => results.push(f.clone()),
            "hlog" => logs.push(f.clone()),
            other => bail!(
                "input `{}`: unknown kind `.{other}`; allowed: .csv or .json (results of `run`/`load`) and .hlog (HDR \
                 logs of `load --hdr-dir`)",
                f.display()
            ),
        }
    }
    let out = match kind(&a.out) {
        "hlog" => {
            ensure!(
                results.is_empty(),
                "--out `{}` is an HDR log: give only .hlog inputs (`{}` is a results file; for merged results use \
                 --out X.csv or X.json)",
                a.out.display(),
                results[0].display()
            );
            return merge_logs_only(&logs, &a.out);
        }
        "csv" => Output::Csv,
        "json" => Output::Json,
        other => bail!(
            "--out `{}`: unknown kind `.{other}`; allowed: .csv or .json (shards, or load processes with their logs) \
             or .hlog (load processes' HDR logs)",
            a.out.display()
        ),
    };
    let inputs: Vec<Input> = results.iter().map(|f| Input::read(f)).collect::<Result<_>>()?;
    if logs.is_empty() {
        shards::merge_shards(&inputs, &a.out, out)
    } else {
        merge_load(&inputs, &logs, &a.out, out)
    }
}

/// The kind of merged results to write.
#[derive(Clone, Copy, PartialEq)]
enum Output {
    Csv,
    Json,
}

fn kind(path: &Path) -> &str {
    path.extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// The cell fields every load process of one cell shares (each may offer
/// its own rate; the rates add up).
fn same_cell(a: &CellKey, b: &CellKey) -> Option<&'static str> {
    [
        ("scheduler (--label)", a.scheduler == b.scheduler),
        ("workers (--server-workers)", a.workers == b.workers),
        ("workload", a.workload == b.workload),
        ("knobs", a.knobs == b.knobs),
        ("params", a.params == b.params),
    ]
    .into_iter()
    .find(|(_, same)| !same)
    .map(|(field, _)| field)
}

/// A load process's HDR log: its cell and its histograms by tag, with each
/// interval's length.
struct Log {
    path: PathBuf,
    key: CellKey,
    log: HdrLog,
}

impl Log {
    fn read(path: &Path) -> Result<Log> {
        let log = hdr::read(path)?;
        let meta = |k: &str| log.meta.get(k).cloned().unwrap_or_default();
        ensure!(
            !meta("workload").is_empty(),
            "`{}` has no `#wsbench.workload` line: not a log written by `wsbench load --hdr-dir`",
            path.display()
        );
        let workers = meta("workers");
        let rate = meta("rate_per_s");
        let key = CellKey {
            scheduler: meta("scheduler"),
            workers: workers.parse().with_context(|| format!("`{}`: workers `{workers}`", path.display()))?,
            workload: meta("workload"),
            knobs: meta("knobs"),
            params: meta("params"),
            rate_per_s: if rate.is_empty() {
                None
            } else {
                Some(rate.parse().with_context(|| format!("`{}`: rate_per_s `{rate}`", path.display()))?)
            },
            cpus: meta("cpus"),
            cpuset: meta("cpuset"),
        };
        Ok(Log { path: path.to_path_buf(), key, log })
    }

    fn tags(&self) -> BTreeSet<String> {
        self.log.intervals.iter().filter_map(|(t, _)| t.clone()).collect()
    }

    fn interval(&self, tag: &str) -> Option<(&Histogram<u64>, Duration)> {
        let i = self.log.intervals.iter().position(|(t, _)| t.as_deref() == Some(tag))?;
        Some((&self.log.intervals[i].1, self.log.lengths[i]))
    }
}

/// The runs that the merged logs hold: per run its added corrected and
/// uncorrected histograms, the longest interval, and the processes' own
/// rates (latencies / interval) summed.
struct MergedRun {
    run: usize,
    /// The logs that hold the run.
    processes: usize,
    latency_ns: Histogram<u64>,
    uncorrected_ns: Option<Histogram<u64>>,
    elapsed: Duration,
    throughput_per_s: f64,
}

/// Reads and checks the logs (one cell) and adds them up run by run.
/// With `same_runs`, every log must hold the same runs (a log alone
/// cannot tell a failed run from a missing one); without, a run is added
/// over the logs that hold it and [`MergedRun::processes`] says how many.
fn add_logs(files: &[PathBuf], same_runs: bool) -> Result<(CellKey, Vec<MergedRun>)> {
    ensure!(files.len() >= 2, "merging load processes needs at least 2 HDR logs, got {}", files.len());
    let logs: Vec<Log> = files.iter().map(|f| Log::read(f)).collect::<Result<_>>()?;
    let first = &logs[0];
    for log in &logs[1..] {
        if let Some(field) = same_cell(&first.key, &log.key) {
            bail!(
                "`{}` does not fit `{}`: different {field} ({} vs {}); only the logs of one cell merge (the rate may differ)",
                log.path.display(),
                first.path.display(),
                log.key,
                first.key
            );
        }
        ensure!(
            !same_runs || log.tags() == first.tags(),
            "`{}` does not fit `{}`: runs {:?} vs {:?} (every process must have the same successful runs; give the \
             processes' CSVs too and --out X.csv to merge around a failed run)",
            log.path.display(),
            first.path.display(),
            log.tags(),
            first.tags()
        );
    }
    let rates: Option<u64> = logs.iter().map(|l| l.key.rate_per_s).sum();
    let key = CellKey { rate_per_s: rates, ..first.key.clone() };
    let run_of = |tag: &String| tag.strip_prefix(RUN_TAG).and_then(|r| r.parse::<usize>().ok());
    let all: BTreeSet<usize> = logs.iter().flat_map(|l| l.tags()).filter_map(|t| run_of(&t)).collect();
    let mut runs = Vec::new();
    for run in all {
        runs.push(add_run(&logs, run)?);
    }
    ensure!(!runs.is_empty(), "`{}` holds no `{RUN_TAG}<i>` interval (no successful run)", first.path.display());
    Ok((key, runs))
}

/// Run `run` added over the logs that hold it.
fn add_run(logs: &[Log], run: usize) -> Result<MergedRun> {
    let tag = format!("{RUN_TAG}{run}");
    let mut latency_ns: Option<Histogram<u64>> = None;
    let mut uncorrected: Vec<Option<&Histogram<u64>>> = Vec::new();
    let (mut elapsed, mut throughput_per_s, mut processes) = (Duration::ZERO, 0.0, 0);
    for log in logs {
        let Some((h, length)) = log.interval(&tag) else { continue };
        processes += 1;
        add_into(&mut latency_ns, h, &tag)?;
        elapsed = elapsed.max(length);
        if !length.is_zero() {
            throughput_per_s += h.len() as f64 / length.as_secs_f64();
        }
        uncorrected.push(log.interval(&format!("{UNCORRECTED_TAG}{run}")).map(|(u, _)| u));
    }
    // The uncorrected distribution only when every process kept one.
    let mut uncorrected_ns = None;
    if uncorrected.iter().all(Option::is_some) {
        for u in uncorrected.into_iter().flatten() {
            add_into(&mut uncorrected_ns, u, &format!("{UNCORRECTED_TAG}{run}"))?;
        }
    }
    let latency_ns = latency_ns.expect("the run's tag came from one of the logs");
    Ok(MergedRun { run, processes, latency_ns, uncorrected_ns, elapsed, throughput_per_s })
}

fn add_into(sum: &mut Option<Histogram<u64>>, h: &Histogram<u64>, tag: &str) -> Result<()> {
    match sum {
        Some(s) => s.add(h).map_err(|e| anyhow!("cannot add the histograms of {tag}: {e:?}")),
        None => {
            *sum = Some(h.clone());
            Ok(())
        }
    }
}

/// Per run: processes, requests, summed throughput, merged percentiles.
fn runs_table(runs: &[MergedRun]) -> Table {
    let header = ["run", "processes", "requests", "throughput/s", "p50", "p99", "p99.9", "max"];
    let q = |h: &Histogram<u64>, q: f64| quantile_us(h, q).map_or_else(|| BLANK.to_string(), format_us);
    Table {
        header: header.map(String::from).to_vec(),
        right: vec![false, true, true, true, true, true, true, true],
        rows: runs
            .iter()
            .map(|r| {
                vec![
                    format!("{RUN_TAG}{}", r.run),
                    r.processes.to_string(),
                    r.latency_ns.len().to_string(),
                    format_count(r.throughput_per_s),
                    q(&r.latency_ns, 0.5),
                    q(&r.latency_ns, 0.99),
                    q(&r.latency_ns, 0.999),
                    format_us(r.latency_ns.max() as f64 * US_PER_NS),
                ]
            })
            .collect(),
    }
}

const ADDED: &str =
    "latencies from the added histograms (never averaged percentiles); throughput = the processes' own \
                     rates summed";

/// `.hlog` inputs, `--out X.hlog`.
fn merge_logs_only(files: &[PathBuf], out: &Path) -> Result<ExitCode> {
    let (key, runs) = add_logs(files, true)?;
    crate::out!("{}", runs_table(&runs).render_text());
    let histograms = runs
        .into_iter()
        .map(|r| RunHistograms {
            run: r.run,
            elapsed: r.elapsed,
            latency_ns: r.latency_ns,
            uncorrected_ns: r.uncorrected_ns,
        })
        .collect();
    let outcome = CellOutcome { key: key.clone(), records: Vec::new(), histograms };
    let results = Results::new(Environment::capture(), unknown_settings());
    write_output(out, &hdr::encode(&key, &outcome, &results)?)?;
    crate::outln!("merged {} logs of {key} into {}", files.len(), out.display());
    crate::outln!("{ADDED}");
    Ok(ExitCode::SUCCESS)
}

/// Settings of a merged result: each process's own are in its own files,
/// so none is claimed here (only the table's reference label is used).
fn unknown_settings() -> Settings {
    Settings {
        duration_s: f64::NAN,
        warmup_s: f64::NAN,
        runs: 0,
        runs_open_loop: None,
        seed: 0,
        pin: false,
        timeout_s: f64::NAN,
        baseline_sched: String::new(),
        slo: None,
        wide: false,
        open_loop: Default::default(),
        latency_sample: Default::default(),
    }
}

/// Sum of `f` over `rows` when every row has it.
fn sum<T: std::iter::Sum<T>>(rows: &[&RunRecord], f: impl Fn(&RunRecord) -> Option<T>) -> Option<T> {
    rows.iter().map(|r| f(r)).sum()
}

/// The results of the load processes (one cell each) and their logs.
fn merge_load(inputs: &[Input], logs: &[PathBuf], out: &Path, kind: Output) -> Result<ExitCode> {
    ensure!(
        inputs.len() == logs.len(),
        "{} results files and {} HDR logs: give each load process's CSV (or JSON) and its log of the same cell",
        inputs.len(),
        logs.len()
    );
    let files: Vec<&ResultsFile> = inputs.iter().map(|i| &i.file).collect();
    let mut keys = Vec::new();
    for f in &files {
        let cells: BTreeSet<&CellKey> = f.records.iter().map(|r| &r.key).collect();
        ensure!(
            cells.len() == 1,
            "`{}` holds {} cells; merge load processes one cell at a time (one --rate per load process, or give the \
             files of one rate)",
            f.path.display(),
            cells.len()
        );
        keys.push(f.records[0].key.clone());
    }
    check_same_code(&files)?;
    check_concurrent(inputs)?;
    let (key, runs) = add_logs(logs, false)?;
    for (f, k) in files.iter().zip(&keys) {
        if let Some(field) = same_cell(&key, k) {
            bail!("`{}` does not fit the logs: different {field} ({k} vs {key})", f.path.display());
        }
    }
    let csv_rates: Option<u64> = keys.iter().map(|k| k.rate_per_s).sum();
    ensure!(
        csv_rates == key.rate_per_s,
        "the CSVs' rates add up to {csv_rates:?}/s, the logs' to {:?}/s: they are not the same processes' files",
        key.rate_per_s
    );
    let mut records = Vec::new();
    let all_runs: BTreeSet<usize> = files.iter().flat_map(|f| f.records.iter().map(|r| r.run)).collect();
    for run in all_runs {
        let mut rows = Vec::new();
        for f in &files {
            let row = f.records.iter().find(|r| r.run == run).with_context(|| {
                format!(
                    "`{}` has no run {run} that the other CSVs have (every process must run the same --runs)",
                    f.path.display()
                )
            })?;
            rows.push((f.path.as_path(), row));
        }
        records.push(merged_record(&key, run, &rows, runs.iter().find(|r| r.run == run))?);
    }
    let seeds: BTreeSet<u64> = inputs.iter().filter_map(|i| i.recorded.seed).collect();
    let mut notes = Vec::new();
    if seeds.len() < inputs.iter().filter(|i| i.recorded.seed.is_some()).count() {
        notes.push(
            "two or more load processes ran with the same --seed: their arrival schedules were the same, so their \
             bursts coincided (give each process its own --seed)"
                .to_string(),
        );
    }
    match kind {
        Output::Csv => write_rows(out, &files, &records)?,
        Output::Json => write_json(out, inputs, "load processes", &records, notes.clone())?,
    }
    crate::out!("{}", runs_table(&runs).render_text());
    crate::outln!("merged {} load processes of {key} into {}", files.len(), out.display());
    crate::outln!("{ADDED}");
    for note in notes {
        crate::outln!("note: {note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// One run of the load processes as one row: failed when any process's run
/// failed (its distribution would be partial), else the sums and the
/// added histogram's latencies.
fn merged_record(
    key: &CellKey,
    run: usize,
    rows: &[(&Path, &RunRecord)],
    merged: Option<&MergedRun>,
) -> Result<RunRecord> {
    let names: Vec<String> = rows.iter().map(|(p, _)| p.display().to_string()).collect();
    let failed: Vec<String> = rows
        .iter()
        .filter(|(_, r)| r.status == Status::Failed)
        .map(|(p, r)| format!("`{}`: {}", p.display(), r.error))
        .collect();
    if !failed.is_empty() {
        let mut r = RunRecord::failed(key.clone(), run, format!("failed in a load process: {}", failed.join("; ")));
        r.notes = format!("merged from {} load processes: {}", rows.len(), names.join(", "));
        return Ok(r);
    }
    let m = merged.with_context(|| format!("run {run} succeeded in every CSV but no log holds its histogram"))?;
    ensure!(
        m.processes == rows.len(),
        "run {run} succeeded in all {} CSVs but only {} of the logs hold its histogram: they are not the same \
         processes' files",
        rows.len(),
        m.processes
    );
    let only: Vec<&RunRecord> = rows.iter().map(|(_, r)| *r).collect();
    let ops: u64 = sum(&only, |r| r.ops).unwrap_or(0);
    // A log holds a latency per completed request and per failed one that
    // got an answer (or an error) in time; never fewer than the completed.
    let failed = sum(&only, |r| r.failed).unwrap_or(0);
    ensure!(
        (ops..=ops + failed).contains(&m.latency_ns.len()),
        "run {run}: the CSVs count {ops} completed and {failed} failed requests, the logs hold {} latencies: they are \
         not the same processes' files",
        m.latency_ns.len()
    );
    let mut r = RunRecord::failed(key.clone(), run, String::new());
    r.status = Status::Ok;
    r.duration_s = only.iter().filter_map(|r| r.duration_s).reduce(f64::max);
    r.ops = Some(ops);
    r.failed = sum(&only, |r| r.failed);
    r.sent = sum(&only, |r| r.sent);
    r.throughput_per_s = sum(&only, |r| r.throughput_per_s);
    r.offered_per_s = sum(&only, |r| r.offered_per_s);
    r.latency = Latencies::from_histogram_ns(&m.latency_ns);
    r.p99_ci_us = quantile_ci_us(&m.latency_ns, P99);
    r.uncorrected_p99_us = p99_us(m.uncorrected_ns.as_ref());
    r.schedule_slipped = only.iter().any(|r| r.schedule_slipped);
    let params: BTreeSet<&str> = only.iter().map(|r| r.resolved_params.as_str()).collect();
    r.resolved_params = if params.len() == 1 { only[0].resolved_params.clone() } else { String::new() };
    let mut notes = vec![format!("merged from {} load processes: {}", rows.len(), names.join(", "))];
    for (p, _) in rows.iter().filter(|(_, r)| r.schedule_slipped) {
        notes.push(format!("`{}` did not keep its schedule", p.display()));
    }
    notes.extend(insufficient_samples_note(&m.latency_ns));
    r.notes = notes.join("; ");
    if let Some(reason) = health::too_many_failures(&r) {
        (r.status, r.error) = (Status::Failed, reason);
    }
    Ok(r)
}

/// Load processes add up only if they loaded the server together: their
/// spans (see [`Input::span`]) must overlap. An input whose timestamp
/// cannot be read is not checked.
fn check_concurrent(inputs: &[Input]) -> Result<()> {
    let spans: Vec<(&Input, (SystemTime, SystemTime))> =
        inputs.iter().filter_map(|i| i.span().map(|s| (i, s))).collect();
    let (Some(latest), Some(earliest)) =
        (spans.iter().max_by_key(|(_, (start, _))| *start), spans.iter().min_by_key(|(_, (_, end))| *end))
    else {
        return Ok(());
    };
    if latest.1 .0 > earliest.1 .1 {
        bail!(
            "the load processes did not run at the same time: `{}` started at {} and `{}`, started at {}, was done \
             by {} (its runs' warm-ups and windows, plus 10 s); their throughputs add up only if they loaded the \
             server together",
            latest.0.file.path.display(),
            latest.0.file.timestamp,
            earliest.0.file.path.display(),
            earliest.0.file.timestamp,
            crate::run::env::rfc3339_utc(earliest.1 .1)
        );
    }
    Ok(())
}

/// Shards and load processes of one result run the same code.
fn check_same_code(files: &[&ResultsFile]) -> Result<()> {
    let first = &files[0];
    for f in &files[1..] {
        ensure!(
            f.schema_version == first.schema_version,
            "`{}` does not fit `{}`: schema_version {} vs {} (CSVs of different wsbench versions)",
            f.path.display(),
            first.path.display(),
            f.schema_version,
            first.schema_version
        );
        ensure!(
            f.git_sha == first.git_sha,
            "`{}` does not fit `{}`: git_sha {} vs {} (the parts of one result run the same code)",
            f.path.display(),
            first.path.display(),
            f.git_sha,
            first.git_sha
        );
    }
    Ok(())
}

/// Writes merged load rows. The row's machine columns name the load
/// processes' hosts (joined with `+`); the CPU columns stay blank (each
/// process measured its own client, not the server).
fn write_rows(out: &Path, files: &[&ResultsFile], records: &[RunRecord]) -> Result<()> {
    let mut env = Environment::capture();
    let hosts: BTreeSet<&str> = files.iter().map(|f| f.host.as_str()).collect();
    let models: BTreeSet<&str> = files.iter().map(|f| f.cpu_model.as_str()).collect();
    let cpus: BTreeSet<Option<usize>> = files.iter().map(|f| f.logical_cpus).collect();
    env.host = hosts.into_iter().collect::<Vec<_>>().join("+");
    env.cpu_model = models.into_iter().collect::<Vec<_>>().join("+");
    env.logical_cpus = if cpus.len() == 1 { files[0].logical_cpus } else { None };
    env.git_sha = files[0].git_sha.clone();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(crate::output::export::csv::header())?;
    for r in records {
        w.write_record(crate::output::export::csv::row(&env, r))?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow!("cannot encode the merged CSV: {e}"))?;
    write_output(out, &bytes)
}

/// A merged JSON: the parts' files, environments and settings in
/// `merged_from`, the settings they share, and the cells summarised again
/// from the merged rows.
fn write_json(out: &Path, inputs: &[Input], what: &str, records: &[RunRecord], mut notes: Vec<String>) -> Result<()> {
    let (settings, differ) = common_settings(inputs);
    if !differ.is_empty() {
        notes.push(format!(
            "settings that differ between the {what}: {} (each part's own are in merged_from)",
            differ.join(", ")
        ));
    }
    let parts: Vec<serde_json::Value> = inputs.iter().map(Input::part).collect();
    let mut results = Results::new(Environment::capture(), summary_settings(&settings));
    let mut order: Vec<&CellKey> = Vec::new();
    for r in records {
        if !order.contains(&&r.key) {
            order.push(&r.key);
        }
    }
    for key in order {
        let rows: Vec<RunRecord> = records.iter().filter(|r| r.key == *key).cloned().collect();
        results.cells.push(CellSummary::of(key, &rows));
    }
    results.records = records.to_vec();
    for note in notes {
        results.add_note(note);
    }
    write_output(out, &crate::output::export::json::render_merged(&results, what, &parts, &settings)?)
}

/// What the summaries of a merged JSON need from the shared settings: the
/// ratio column's reference and the SLO (the rest is written as shared).
fn summary_settings(shared: &serde_json::Value) -> Settings {
    let slo = shared.get("slo").and_then(|s| {
        let metric =
            LatencyMetric::ALL.into_iter().find(|m| serde_json::to_value(m).ok().as_ref() == s.get("metric"))?;
        Some(Slo { metric, threshold_us: s.get("threshold_us")?.as_f64()? })
    });
    let baseline = shared.get("baseline_sched").and_then(|b| b.as_str()).unwrap_or_default();
    Settings { baseline_sched: baseline.to_string(), slo, ..unknown_settings() }
}
