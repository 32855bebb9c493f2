//! Dispatch of the subcommands (exit statuses: `exit.rs`).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;

use crate::bisect;
use crate::cli::{Cli, Command, DoctorArgs, RunArgs};
use crate::compare;
use crate::config::{Cell, RunConfig};
use crate::data::merge;
use crate::data::outcome::{Results, Settings};
use crate::data::record::{RunRecord, Status};
use crate::doctor::calibrate;
use crate::doctor::{self, Machine};
use crate::exit::negative;
use crate::output::export::csv::CsvExporter;
use crate::output::export::{self, Exporter};
use crate::output::{plot, report, table};
use crate::run::env::Environment;
use crate::run::{cgroup, isolate, matrix, pinned};
use crate::{config, history, listing, options, remote};

/// What a bare `wsbench` prints.
const USAGE: &str = "\
wsbench: benchmarks of async task schedulers (seven of ours, tokio and smol) on one set of workloads.

The main job (one scheduler, the default suite, 128 workers; runs on any machine, measures where the cores exist):
    wsbench --sched steal-half --workers 128

More:
    wsbench --sched steal-half,tokio --workers 1,2 --workload rpc-fanout --rate 2k,4k --slo 'p99<1ms'
    wsbench list        every scheduler, workload, parameter and knob
    wsbench doctor      whether this machine is fit to measure on
    wsbench --help      every command and option (run is the default command)
";

/// Parses the command line and runs the chosen subcommand.
pub fn run() -> Result<ExitCode> {
    // A bare `wsbench` asks what to do rather than starting a matrix.
    if std::env::args_os().len() <= 1 {
        crate::out!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `--help` and `--version`: clap prints them and exits 0.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // Usage errors in clap's own words, with long values cut short.
            eprint!("{}", crate::exit::shorten_values(&e.render().to_string()));
            return Ok(ExitCode::from(crate::exit::EXIT_UNUSABLE));
        }
    };
    export::file::set_force(cli.force);
    match cli.command {
        None => run_matrix(&cli.run),
        Some(Command::Run(args)) => run_matrix(&args),
        Some(Command::List) => {
            crate::out!("{}", listing::render());
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Compare(args)) => compare::main(&options::compare(&args)?),
        Some(Command::Plot(args)) => plot::main(&options::plot(&args)),
        Some(Command::History(args)) => history::main(&options::history(&args)?),
        Some(Command::Report(args)) => report::main(&options::report(&args)),
        Some(Command::RunChild) => isolate::child_main(),
        Some(Command::CgroupProbe) => cgroup::probe_main(),
        Some(Command::Serve(args)) => remote::serve_main(&options::serve(&args)?),
        Some(Command::Load(args)) => remote::load_main(&options::load(&args)?),
        Some(Command::Merge(args)) => merge::main(&options::merge(&args)),
        Some(Command::Bisect(args)) => bisect::main(&options::bisect(&args)?),
        Some(Command::Doctor(args)) if args.calibrate => calibrate_main(&args),
        Some(Command::Doctor(args)) => {
            let workers = config::parse_workers(args.workers.as_deref())?;
            let planned = workers.iter().copied().max().unwrap_or(1);
            crate::out!(
                "{}",
                doctor::render(&doctor::inspect(
                    &Machine::this(),
                    config::allowed_cpus(),
                    planned,
                    doctor::BUSY_SAMPLE
                ))
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn calibrate_main(args: &DoctorArgs) -> Result<ExitCode> {
    let span = crate::parse::parse_duration(&args.calibrate_span)
        .with_context(|| format!("--calibrate-span `{}`", args.calibrate_span))?;
    anyhow::ensure!(
        span >= calibrate::SPIN_EVERY && span <= Duration::from_secs(600),
        "--calibrate-span `{}`: must be from 1s to 10m (the calibration is redone every second)",
        args.calibrate_span
    );
    if let Some(json) = &args.json {
        crate::output::export::check_output("--json", json, crate::output::export::Kind::Json)?;
    }
    let env = Environment::capture();
    let c = calibrate::measure(span, calibrate::Taken { at: env.timestamp, host: env.host, cpu_model: env.cpu_model });
    crate::out!("{}", calibrate::render(&c));
    if let Some(json) = &args.json {
        crate::output::export::write_output(json, &calibrate::to_json(&c)?)
            .context("the checks are on stdout, but --json could not be written")?;
    }
    match calibrate::state_path() {
        Some(path) => match calibrate::save(&c, &path) {
            Ok(()) => crate::outln!("saved for later runs' JSON environment: {}", path.display()),
            Err(e) => eprintln!("warning: the calibration could not be saved for later runs: {e:#}"),
        },
        None => eprintln!("warning: no state directory (set WSBENCH_STATE_DIR or HOME): not saved for later runs"),
    }
    Ok(ExitCode::SUCCESS)
}

fn run_matrix(args: &RunArgs) -> Result<ExitCode> {
    let mut config = RunConfig::from_args(args)?;
    let cgroups = open_cgroups(&config.limits)?;
    config.probes = config.limits.iter().map(|l| cgroup::probe(cgroups.as_ref(), l)).collect::<Result<Vec<_>>>()?;
    if let Some(path) = &args.regressed_in {
        config.only = Some((compare::confirm::cells(&compare::confirm::regressed_in(path)?), path.clone()));
    }
    let mut plan = config.plan()?;
    prepare_pinned(&mut plan.cells, config.quiet)?;
    let mut exporters = export::open_all(&config)?;
    let mut env = Environment::capture();
    crate::doctor::calibrate::warn_pacing(&plan.cells, env.calibration.as_ref());
    let planned = config.workers.iter().copied().max().unwrap_or(1);
    env.findings = doctor::inspect(&Machine::this(), config::allowed_cpus(), planned, doctor::BUSY_SAMPLE);
    let mut base_results = config.ab.as_ref().map(|ab| {
        let mut base_env = env.clone();
        base_env.git_sha = ab.sha.clone();
        Results::new(base_env, Settings::of(&config))
    });
    let mut base_exporters: Vec<Box<dyn Exporter>> = match &config.ab {
        Some(ab) => {
            let mut base: Vec<Box<dyn Exporter>> = vec![Box::new(CsvExporter::open(&ab.csv)?)];
            // The base's full histograms beside the current side's, so a
            // pooled-histogram statistic can be computed on both sides.
            if let Some(dir) = &config.hdr_dir {
                base.push(Box::new(export::hdr::HdrExporter::open(&dir.join(export::hdr::BASE_SUBDIR))?));
            }
            base
        }
        None => Vec::new(),
    };
    let mut results = Results::new(env, Settings::of(&config));
    let base = base_results.as_mut().map(|r| matrix::BaseSide { results: r, exporters: &mut base_exporters });
    crate::run::interrupt::install()?;
    matrix::run_matrix(&config, &plan, &mut results, &mut exporters, base, cgroups.as_ref())?;
    if results.interrupted {
        return print_interrupted(&results);
    }
    if let (Some(ab), Some(base)) = (&config.ab, &base_results) {
        let ok = base.cells.iter().map(|c| c.ok_runs).sum::<usize>();
        let all = base.records.len();
        crate::outln!(
            "A/B: the base `{}` ran every run too ({ok} of {all} ok), its rows in {}; judge the pairs with: wsbench compare {} {}",
            ab.bin.display(),
            ab.csv.display(),
            ab.csv.display(),
            config.csv.as_ref().map_or_else(|| "CURRENT.csv".to_string(), |p| p.display().to_string()),
        );
    }
    crate::outln!("{}", crate::output::term::footnote(&results.env.describe()));
    table::print_results(&results);
    if let (Some(ab), Some(base)) = (&config.ab, &base_results) {
        if base.cells.iter().all(|c| c.ok_runs == 0) {
            return Err(negative(format!(
                "every run of the base `{}` failed, so there are no pairs to judge; see the error column of {}",
                ab.bin.display(),
                ab.csv.display()
            )));
        }
    }
    if results.cells.iter().all(|c| c.ok_runs == 0) {
        return Err(negative(every_run_failed(&results.records, config.csv.as_deref())));
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds (or finds cached) the binary of every versioned row of `cells`,
/// once per (crate, version), and points the cells at it.
fn prepare_pinned(cells: &mut [Cell], quiet: bool) -> Result<()> {
    let mut built: Vec<(pinned::Pinned, pinned::Built)> = Vec::new();
    for cell in cells.iter_mut() {
        let Some(pin) = cell.pinned.clone() else { continue };
        let known = built.iter().find(|(p, _)| p.krate == pin.krate && p.version == pin.version);
        let build = match known {
            Some((_, b)) => b.clone(),
            None => {
                let b = pinned::build::ensure_built(&pin, quiet)?;
                built.push((pin.clone(), b.clone()));
                b
            }
        };
        cell.runtime_version = build.column(&pin);
        cell.program = Some(build.bin);
    }
    Ok(())
}

/// The parent cgroup of the runs when any cell has CPU limits (saying
/// which cgroup version holds them), else `None`.
fn open_cgroups(limits: &[cgroup::Limits]) -> Result<Option<cgroup::Cgroups>> {
    if limits.iter().all(cgroup::Limits::is_none) {
        return Ok(None);
    }
    let cgroups = cgroup::Cgroups::open(limits.iter().any(|l| l.cpuset.is_some()))?;
    eprintln!("{}", cgroups.describe());
    Ok(Some(cgroups))
}

/// What an interrupted matrix prints: the machine, the finished cells as a
/// partial table, and how far it got (on stdout and stderr).
fn print_interrupted(results: &Results) -> Result<ExitCode> {
    let why = results.incomplete().unwrap_or_default();
    crate::outln!("{}", crate::output::term::footnote(&results.env.describe()));
    if !results.cells.is_empty() {
        table::print_results(results);
    }
    crate::outln!("{why}; the finished cells' rows are kept, the cell that was running is dropped");
    eprintln!("wsbench: {why}");
    Ok(ExitCode::from(crate::run::interrupt::EXIT_INTERRUPTED))
}

/// "every run failed", with the first reason: with `-q` the per-run
/// failures are printed nowhere else, and the table has no error column.
fn every_run_failed(records: &[RunRecord], csv: Option<&Path>) -> String {
    let mut reasons: Vec<&str> = Vec::new();
    for r in records.iter().filter(|r| r.status == Status::Failed) {
        if !reasons.contains(&r.error.as_str()) {
            reasons.push(&r.error);
        }
    }
    let mut text = format!("every run failed ({} run(s))", records.len());
    match reasons.as_slice() {
        [] => {}
        [only] => text.push_str(&format!("; the error: {only}")),
        [first, rest @ ..] => text.push_str(&format!("; the first error: {first} ({} other error(s))", rest.len())),
    }
    if let Some(csv) = csv {
        text.push_str(&format!("; each run's error is in the error column of {}", csv.display()));
    }
    text
}
