//! Dispatch of the subcommands (exit statuses: `exit.rs`).

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use crate::cli::{Cli, Command, RunArgs};
use crate::config::RunConfig;
use crate::doctor::{self, Machine};
use crate::env::Environment;
use crate::exit::negative;
use crate::export;
use crate::outcome::{Results, Settings};
use crate::{compare, config, history, isolate, listing, matrix, merge, plot, remote, report, table};

/// Parses the command line and runs the chosen subcommand.
pub fn run() -> Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        None => run_matrix(&cli.run),
        Some(Command::Run(args)) => run_matrix(&args),
        Some(Command::List) => {
            print!("{}", listing::render());
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Compare(args)) => compare::main(&args),
        Some(Command::Plot(args)) => plot::main(&args),
        Some(Command::History(args)) => history::main(&args),
        Some(Command::Report(args)) => report::main(&args),
        Some(Command::RunChild) => isolate::child_main(),
        Some(Command::Serve(args)) => remote::serve_main(&args),
        Some(Command::Load(args)) => remote::load_main(&args),
        Some(Command::Merge(args)) => merge::main(&args),
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

fn run_matrix(args: &RunArgs) -> Result<ExitCode> {
    let config = RunConfig::from_args(args)?;
    let plan = config.plan()?;
    let mut exporters = export::open_all(&config)?;
    let mut env = Environment::capture();
    let planned = config.workers.iter().copied().max().unwrap_or(1);
    env.findings = doctor::inspect(&Machine::this(), config::allowed_cpus(), planned, doctor::BUSY_SAMPLE);
    let mut results = Results::new(env, Settings::of(&config));
    matrix::run_matrix(&config, &plan, &mut results, &mut exporters)?;
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
