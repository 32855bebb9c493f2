//! Dispatch of the subcommands and the exit status.

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use crate::cli::{Cli, Command, RunArgs};
use crate::compare::Unusable;
use crate::config::RunConfig;
use crate::env::Environment;
use crate::export::{self, Results, Settings};
use crate::{compare, list, plot, runner, table};

/// Exit status of `compare` when something regressed, and of any error.
pub const EXIT_FAILURE: u8 = 1;
/// Exit status of `compare` on unusable input.
pub const EXIT_UNUSABLE: u8 = 2;

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
    }
}

/// The exit status for an error: 2 for unusable `compare` input, else 1.
pub fn exit_code_for(err: &anyhow::Error) -> ExitCode {
    if err.downcast_ref::<Unusable>().is_some() {
        ExitCode::from(EXIT_UNUSABLE)
    } else {
        ExitCode::from(EXIT_FAILURE)
    }
}

fn run_matrix(args: &RunArgs) -> Result<ExitCode> {
    let config = RunConfig::from_args(args)?;
    let plan = config.plan()?;
    let mut exporters = export::open_all(&config)?;
    let mut results = Results::new(Environment::capture(), Settings::of(&config));
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
        anyhow::bail!("every run failed; see the error column");
    }
    Ok(ExitCode::SUCCESS)
}
