//! Dispatch of the subcommands and the exit status.

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use crate::cli::{Cli, Command, RunArgs};
use crate::config::RunConfig;
use crate::doctor::{self, Machine};
use crate::env::Environment;
use crate::export::{self, Results, Settings};
use crate::{compare, config, history, isolate, list, plot, report, runner, table};

/// Exit status when wsbench worked and the answer is no: `compare` found a
/// regression, every run of `run` failed, `plot` found nothing to draw.
pub const EXIT_FAILURE: u8 = 1;
/// Exit status of every error: bad input (an option, a value, a file that
/// cannot be read or written; clap's usage errors exit 2 as well) and a
/// result file that could not be written. Never a regression.
pub const EXIT_UNUSABLE: u8 = 2;

/// An answer of "no" reported as an error message: exits
/// [`EXIT_FAILURE`] rather than [`EXIT_UNUSABLE`].
#[derive(Debug)]
pub struct Negative(pub String);

impl std::fmt::Display for Negative {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Negative {}

/// A [`Negative`] outcome as an error.
pub fn negative(message: String) -> anyhow::Error {
    anyhow::Error::new(Negative(message))
}

/// Parses the command line and runs the chosen subcommand.
pub fn run() -> Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        None => run_matrix(&cli.run),
        Some(Command::Run(args)) => run_matrix(&args),
        Some(Command::List) => {
            print!("{}", list::render());
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Compare(args)) => compare::main(&args),
        Some(Command::Plot(args)) => plot::main(&args),
        Some(Command::History(args)) => history::main(&args),
        Some(Command::Report(args)) => report::main(&args),
        Some(Command::RunChild) => isolate::child_main(),
        Some(Command::Doctor(args)) => {
            let workers = config::parse_workers(args.workers.as_deref())?;
            let planned = workers.iter().copied().max().unwrap_or(1);
            print!(
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

/// The exit status for an error: 1 for a [`Negative`] outcome, else 2.
pub fn exit_code_for(err: &anyhow::Error) -> ExitCode {
    if err.downcast_ref::<Negative>().is_some() {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::from(EXIT_UNUSABLE)
    }
}

fn run_matrix(args: &RunArgs) -> Result<ExitCode> {
    let config = RunConfig::from_args(args)?;
    let plan = config.plan()?;
    let mut exporters = export::open_all(&config)?;
    let mut env = Environment::capture();
    let planned = config.workers.iter().copied().max().unwrap_or(1);
    env.findings = doctor::inspect(&Machine::this(), config::allowed_cpus(), planned, doctor::BUSY_SAMPLE);
    let mut results = Results::new(env, Settings::of(&config));
    runner::run_matrix(&config, &plan, &mut results, &mut exporters)?;
    println!("{}", results.env.describe());
    print!("{}", table::cells_table(&results).render_text());
    if let Some(capacity) = table::capacity_table(&results) {
        println!();
        print!("{}", capacity.render_text());
    }
    for line in table::legend(&results).into_iter().chain(results.notes().into_iter().map(|n| format!("note: {n}"))) {
        println!("{line}");
    }
    if results.cells.iter().all(|c| c.ok_runs == 0) {
        return Err(negative("every run failed; see the error column".to_string()));
    }
    Ok(ExitCode::SUCCESS)
}
