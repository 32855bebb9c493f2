//! `wsbench serve` and `wsbench load`: the server and the client of a TCP
//! workload (`tcp-rpc`, `mixed`, `http`) in separate processes, on
//! separate machines if wanted.
//!
//! Both reuse the run pipeline: their options become a one-workload
//! [`RunConfig`] through `run`'s own parser (so every value is checked as
//! for `run`), and their results are ordinary [`RunRecord`]s fed to the
//! same exporters (CSV, JSON, markdown, HDR logs) and table. A `load` row
//! carries `--label` in the scheduler column (default `remote`: the load
//! process cannot see the server's runtime).

use std::io::Write as _;
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{ensure, Context, Result};
use clap::Parser;
use wsbench_workloads::api::{RunOptions, RunOutput};
use wsbench_workloads::remote::{servable_workloads, Until};

use crate::cli::{Cli, LoadArgs, ServeArgs};
use crate::config::{Cell, RunConfig};
use crate::env::Environment;
use crate::exit::negative;
use crate::export::{self, Exporter};
use crate::health;
use crate::matrix::{finish_cell, record_from};
use crate::outcome::{CellOutcome, Results, RunHistograms, Settings};
use crate::parse::{check_label, parse_duration};
use crate::pin::CorePlan;
use crate::record::{RunRecord, Status};
use crate::table;

/// Set by SIGINT / SIGTERM while `serve` runs.
static STOP: AtomicBool = AtomicBool::new(false);

/// Builds a [`RunConfig`] from `run`'s own parser; `args` are `run` options.
fn config_of(args: &[String]) -> Result<RunConfig> {
    // Only clap's first line: its usage and `--help` hint are `run`'s.
    let cli = Cli::try_parse_from(std::iter::once("wsbench".to_string()).chain(args.iter().cloned()))
        .map_err(|e| anyhow::anyhow!("{}", e.to_string().lines().next().unwrap_or_default()))?;
    RunConfig::from_args(&cli.run)
}

fn push_opt(args: &mut Vec<String>, flag: &str, value: Option<String>) {
    if let Some(v) = value {
        args.push(flag.to_string());
        args.push(v);
    }
}

fn check_servable(workload: &str) -> Result<()> {
    let servable = servable_workloads();
    ensure!(
        servable.contains(&workload),
        "--workload `{workload}` has no separate server and client; allowed: {}",
        servable.join(", ")
    );
    Ok(())
}

fn resolve(addr: &str, flag: &str) -> Result<SocketAddr> {
    addr.to_socket_addrs()
        .with_context(|| format!("bad {flag} `{addr}`; allowed: HOST:PORT or IP:PORT"))?
        .next()
        .with_context(|| format!("{flag} `{addr}` resolves to no address"))
}

/// Parameters of the client side only: `serve` has no client, so they would
/// change nothing there (give them to `load`).
const CLIENT_ONLY_PARAMS: &[&str] = &["arrival", "connections", "client-threads", "stall-ms", "panic-every"];

/// Refuses a `serve --param` that only the client reads.
fn check_server_params(params: &[String]) -> Result<()> {
    for text in params {
        let name = text.split_once('=').map_or(text.as_str(), |(n, _)| n).trim();
        ensure!(
            !CLIENT_ONLY_PARAMS.contains(&name),
            "serve --param `{text}` has no effect on a server: {name} is read by the load generator (give it to \
             `wsbench load`); the client-only parameters are {}",
            CLIENT_ONLY_PARAMS.join(", ")
        );
    }
    Ok(())
}

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

/// `wsbench serve`.
pub fn serve_main(a: &ServeArgs) -> Result<ExitCode> {
    check_servable(&a.workload)?;
    check_server_params(&a.params)?;
    let listen = resolve(&a.listen, "--listen")?;
    let mut args: Vec<String> =
        ["--sched", &a.sched, "--workload", &a.workload, "--runs", "1"].map(String::from).to_vec();
    push_opt(&mut args, "--workers", a.workers.clone());
    push_opt(&mut args, "--csv", a.csv.as_ref().map(|p| p.display().to_string()));
    push_opt(&mut args, "--json", a.json.as_ref().map(|p| p.display().to_string()));
    for p in &a.params {
        args.extend(["--param".to_string(), p.clone()]);
    }
    for k in &a.knobs {
        args.extend(["--knob".to_string(), k.clone()]);
    }
    let limit = a.duration.as_deref().map(parse_duration).transpose().context("bad --duration")?;
    if let (Some(text), Some(limit)) = (&a.duration, limit) {
        ensure!(
            !limit.is_zero(),
            "--duration `{text}` must be longer than zero (without it, serve until SIGINT/SIGTERM)"
        );
    }
    let config = config_of(&args)?;
    ensure!(
        config.scheds.len() == 1 && config.workers.len() == 1 && config.knob_sets.len() == 1,
        "serve runs one scheduler, one worker count and one value per knob"
    );
    let cell = config.plan()?.cells.into_iter().next().context("nothing to serve")?;
    export::check_all(&config)?;
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
    // The listen backlog and the machine's listen-queue overflows among them.
    crate::outln!("{}: {}", cell.key, record.notes);
    let failed = health::judge(&mut record);
    let outcome = CellOutcome { key: cell.key.clone(), records: vec![record], histograms: Vec::new() };
    report(&config, &[outcome])?;
    match failed {
        Some(reason) => Err(negative(format!("the server's run failed: {reason}"))),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// `wsbench load`.
pub fn load_main(a: &LoadArgs) -> Result<ExitCode> {
    check_servable(&a.workload)?;
    check_label("--label", &a.label)?;
    let target = resolve(&a.target, "--target")?;
    ensure!(
        target.port() != 0,
        "--target `{}` has port 0, which no server listens on; allowed: HOST:PORT with the port `serve` printed",
        a.target
    );
    let mut args: Vec<String> = ["--sched", "tokio", "--workload", &a.workload].map(String::from).to_vec();
    args.extend(["--workers".into(), a.server_workers.to_string(), "--runs".into(), a.runs.to_string()]);
    args.extend(["--duration".into(), a.duration.clone(), "--warmup".into(), a.warmup.clone()]);
    args.extend(["--seed".into(), a.seed.to_string()]);
    push_opt(&mut args, "--rate", a.rate.clone());
    push_opt(&mut args, "--csv", a.csv.as_ref().map(|p| p.display().to_string()));
    push_opt(&mut args, "--json", a.json.as_ref().map(|p| p.display().to_string()));
    push_opt(&mut args, "--markdown", a.markdown.as_ref().map(|p| p.display().to_string()));
    push_opt(&mut args, "--hdr-dir", a.hdr_dir.as_ref().map(|p| p.display().to_string()));
    push_opt(&mut args, "--slo", a.slo.clone());
    for p in &a.params {
        args.extend(["--param".to_string(), p.clone()]);
    }
    let mut config = config_of(&args)?;
    config.wide = a.wide;
    // The ratio columns compare rows with this label to themselves only.
    config.baseline_sched = a.label.clone();
    let plan = config.plan()?;
    export::check_all(&config)?;
    let calibration = Environment::capture().calibration;
    crate::calibrate::warn_pacing(&plan.cells, calibration.as_ref());
    let mut outcomes = Vec::new();
    for mut cell in plan.cells {
        cell.key.scheduler = a.label.clone();
        let mut outcome = load_cell(&cell, target, &config, a.quiet);
        Settings::of(&config).stamp(&mut outcome.records);
        outcomes.push(outcome);
    }
    let results = report(&config, &outcomes)?;
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
fn load_cell(cell: &Cell, target: SocketAddr, config: &RunConfig, quiet: bool) -> CellOutcome {
    let mut outcome = CellOutcome { key: cell.key.clone(), records: Vec::new(), histograms: Vec::new() };
    for run in 0..config.runs {
        let options =
            RunOptions { duration: config.duration, warmup: config.warmup, seed: config.seed.wrapping_add(run as u64) };
        match wsbench_workloads::remote::load(target, &cell.runtime, &cell.spec, &options) {
            Ok(out) => {
                let mut record = record_from(&cell.key, run, &out, &no_cores(), false);
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
