//! wsbench: the benchmark harness.
//!
//! Top down, with no import circles: `app` (dispatch) → `cli` (clap only)
//! → `config` (validated, typed; `parse` reads list/duration values) →
//! `matrix` (runs every cell under a watchdog; `isolate` gives each run a
//! fresh child process) → `outcome` (what a run produced: cell outcomes,
//! histograms, results, settings) → `stats` / `summary` (pure statistics)
//! → `export` (CSV, JSON, markdown, HDR logs) and `table`; `compare`,
//! `plot`, `history` and `report` read CSVs back via `load`. Units are
//! written by `units`, exit statuses decided in `exit`, `record` is the
//! row model everything above speaks. The harness calls the workloads
//! crate through `backend` (runs, validation, the lists), `remote`
//! (`serve`, `load`) and `calibrate` (doctor's instruments); the
//! contract's types (`api`: specs, outputs, the extras' names) are
//! imported where they are used.
//!
//! # As a library
//!
//! A binary of your own gets the whole CLI (`list`, `run`, `compare`,
//! `plot`, ...) with extra schedulers in it: register them with
//! `wsbench_schedulers::register` first, then hand over to [`main`] (see
//! `examples/custom_policy.rs` and the README, "Adding your own
//! scheduler"). [`main`] also serves the child processes the harness
//! starts for each run (they re-run the same binary), so register in
//! `main` before anything else.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod ab;
pub mod app;
pub mod backend;
pub mod calibrate;
pub mod changepoint;
pub mod cli;
pub mod compare;
pub mod config;
pub mod cpu;
pub mod doctor;
pub mod env;
pub mod exit;
pub mod export;
pub mod health;
pub mod history;
pub mod input;
pub mod interrupt;
pub mod isolate;
pub mod listing;
pub mod load;
pub mod matrix;
pub mod merge;
pub mod outcome;
pub mod parse;
pub mod pin;
pub mod plot;
pub mod progress;
pub mod record;
pub mod remote;
pub mod report;
pub mod slo;
pub mod stats;
pub mod stdout;
pub mod summary;
pub mod table;
pub mod ttest;
pub mod units;

/// The whole `wsbench` command line: parses `std::env::args`, runs the
/// command, prints an error (`Error: ...`, written by [`exit::render`]) and
/// returns the exit status (0 success, 1 a negative answer, 2 an error; see
/// the README). Standard output goes through [`stdout`], so a closed pipe
/// never panics.
pub fn main() -> std::process::ExitCode {
    let code = match app::run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("Error: {}", exit::render(&err));
            exit::exit_code_for(&err)
        }
    };
    stdout::finish(code)
}
