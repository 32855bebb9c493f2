//! `wsbench serve` and `wsbench load`: the server and the client of a TCP
//! workload (`tcp-rpc`, `mixed`, `http`) in separate processes, on
//! separate machines if wanted.
//!
//! Both reuse the run pipeline: their options arrive as a one-workload
//! [`RunConfig`], built by `run`'s own parser (`crate::options`, so every
//! value is checked as for `run`), and their results are ordinary [`RunRecord`]s fed to the
//! same exporters (CSV, JSON, markdown, HDR logs) and table. A `load` row
//! carries `--label` in the scheduler column (default `remote`: the load
//! process cannot see the server's runtime). With `--cpus`/`--cpuset` the
//! process moves into a cgroup of its own for its life
//! ([`crate::run::cgroup::enter`]).

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use wsbench_workloads::api::{RunOptions, RunOutput};
use wsbench_workloads::remote::Until;

use crate::config::{Cell, RunConfig};
use crate::data::outcome::{CellOutcome, Results, RunHistograms, Settings};
use crate::data::record::{RunRecord, Status};
use crate::exit::negative;
use crate::output::export::{self, Exporter};
use crate::output::table;
use crate::run::cgroup::columns::LimitColumns;
use crate::run::env::Environment;
use crate::run::matrix::{finish_cell, record_from};
use crate::run::pin::CorePlan;
use crate::run::{cgroup, health};

/// Set by SIGINT / SIGTERM while `serve` runs.
static STOP: AtomicBool = AtomicBool::new(false);

fn no_cores() -> CorePlan {
    CorePlan { worker_cores: Vec::new(), loadgen_cores: Vec::new(), oversubscribed: false, loadgen_shares_cores: false }
}

/// Feeds finished cells to the exporters, prints the table and notes.
fn report(config: &RunConfig, outcomes: &[CellOutcome]) -> Result<Results> {
    let mut exporters: Vec<Box<dyn Exporter>> = export::open_all(config)?;
    let mut results = Results::new(Environment::capture(), Settings::of(config));
    for outcome in outcomes {
        finish_cell(outcome, &mut results, &mut exporters)?;
    }
    table::print_results(&results);
    Ok(results)
}

/// `wsbench serve`'s options, checked (`crate::options`).
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// One scheduler, worker count and knob set, and one servable workload.
    pub config: RunConfig,
    /// Where to listen.
    pub listen: SocketAddr,
    /// Stop after this long; `None`: at SIGINT/SIGTERM.
    pub limit: Option<Duration>,
}

/// `wsbench load`'s options, checked (`crate::options`).
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The cells: one servable workload, each rate one cell.
    pub config: RunConfig,
    /// The server.
    pub target: SocketAddr,
    /// The scheduler column of the rows.
    pub label: String,
    /// No per-run messages.
    pub quiet: bool,
}

/// Moves this process into a cgroup with `config`'s limits (`--cpus`,
/// `--cpuset`) for as long as the returned guard lives, and probes what it
/// sees there (`--workers auto`, `tokio_default_workers`).
fn enter_limits(config: &RunConfig) -> Result<(RunConfig, Option<cgroup::Entered>)> {
    let limits = config.limits.first().cloned().unwrap_or_default();
    let entered = cgroup::enter(&limits)?;
    wsbench_workloads::api::set_throttle_source(entered.as_ref().map(|e| e.group().cpu_stat()));
    let mut config = config.clone();
    // Inside the cgroup already: the probe runs here.
    config.probes = vec![cgroup::probe(None, &cgroup::Limits::NONE)?];
    Ok((config, entered))
}

/// The row's limit columns of a run made inside `entered`.
fn limit_columns(out: &RunOutput, cell: &Cell, entered: Option<&cgroup::Entered>) -> LimitColumns {
    LimitColumns::of(out, entered.map_or("", |e| e.group().version().as_str()), cell.tokio_default_workers)
}

/// `wsbench serve`.
pub fn serve_main(a: &ServeOptions) -> Result<ExitCode> {
    let (config, entered) = enter_limits(&a.config)?;
    let (config, listen, limit) = (&config, a.listen, a.limit);
    let cell = config.plan()?.cells.into_iter().next().context("nothing to serve")?;
    export::check_all(config)?;
    ctrlc::set_handler(|| STOP.store(true, Ordering::Relaxed)).context("installing the SIGINT/SIGTERM handler")?;
    let mut on_bound = |addr: SocketAddr| {
        crate::outln!("listening on {addr} ({} x{} {})", cell.key.scheduler, cell.key.workers, cell.key.workload);
        // Flushed so that a script or test waiting for the line sees it.
        let _ = std::io::stdout().flush();
    };
    // Relaxed: a flag polled in a loop; nothing is published through it.
    let stop = || STOP.load(Ordering::Relaxed);
    let until = Until { stop: &stop, limit, on_bound: &mut on_bound };
    let out = wsbench_workloads::remote::serve(&cell.runtime, &cell.spec, listen, until)
        .with_context(|| format!("serving {} on {listen}", cell.key))?;
    let mut record = record_from(&cell.key, 0, &out, &no_cores(), false);
    record.limits = limit_columns(&out, &cell, entered.as_ref());
    // The listen backlog and the machine's listen-queue overflows among them.
    crate::outln!("{}: {}", cell.key, record.notes);
    let failed = health::judge(&mut record);
    let outcome = CellOutcome { key: cell.key.clone(), records: vec![record], histograms: Vec::new() };
    report(config, &[outcome])?;
    match failed {
        Some(reason) => Err(negative(format!("the server's run failed: {reason}"))),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// `wsbench load`.
pub fn load_main(a: &LoadOptions) -> Result<ExitCode> {
    let (config, entered) = enter_limits(&a.config)?;
    let (config, target) = (&config, a.target);
    let plan = config.plan()?;
    export::check_all(config)?;
    let calibration = Environment::capture().calibration;
    crate::doctor::calibrate::warn_pacing(&plan.cells, calibration.as_ref());
    let mut outcomes = Vec::new();
    for mut cell in plan.cells {
        cell.key.scheduler = a.label.clone();
        let mut outcome = load_cell(&cell, target, config, a.quiet, entered.as_ref());
        Settings::of(config).stamp(&mut outcome.records);
        outcomes.push(outcome);
    }
    let results = report(config, &outcomes)?;
    for o in &outcomes {
        for r in &o.records {
            match r.status {
                Status::Ok if r.schedule_slipped => {
                    crate::outln!("{} run {}: did NOT keep its schedule; {}", o.key, r.run, r.notes)
                }
                Status::Ok => crate::outln!("{} run {}: kept its schedule", o.key, r.run),
                Status::Failed => crate::outln!("{} run {}: failed: {}", o.key, r.run, r.error),
            }
        }
    }
    if results.cells.iter().all(|c| c.ok_runs == 0) {
        return Err(negative("every run failed; each run's error is printed above".to_string()));
    }
    Ok(ExitCode::SUCCESS)
}

/// Every run of one cell against `target`; a run that fails (refused,
/// unreachable, not the protocol) is a failed row, and the next one runs.
fn load_cell(
    cell: &Cell,
    target: SocketAddr,
    config: &RunConfig,
    quiet: bool,
    entered: Option<&cgroup::Entered>,
) -> CellOutcome {
    let mut outcome = CellOutcome { key: cell.key.clone(), records: Vec::new(), histograms: Vec::new() };
    for run in 0..config.runs_for(cell.workload) {
        let options =
            RunOptions { duration: config.duration, warmup: config.warmup, seed: config.seed.wrapping_add(run as u64) };
        match wsbench_workloads::remote::load(target, &cell.runtime, &cell.spec, &options) {
            Ok(out) => {
                let mut record = record_from(&cell.key, run, &out, &no_cores(), false);
                record.limits = limit_columns(&out, cell, entered);
                if let Some(reason) = health::judge(&mut record) {
                    if !quiet {
                        eprintln!("run {run} of {} against {target} failed: {reason}", cell.key);
                    }
                    outcome.records.push(record);
                    continue;
                }
                outcome.records.push(record);
                let RunOutput { latency_ns, uncorrected_ns, elapsed, .. } = out;
                outcome.histograms.push(RunHistograms { run, elapsed, latency_ns, uncorrected_ns });
            }
            Err(e) => {
                if !quiet {
                    eprintln!("run {run} of {} against {target} failed: {e:#}", cell.key);
                }
                outcome.records.push(RunRecord::failed(cell.key.clone(), run, format!("{e:#}")));
            }
        }
    }
    outcome
}
