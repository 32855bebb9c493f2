//! wsbench: the benchmark harness.
//!
//! Top down, with no import circles. The front: `app` dispatches the
//! subcommands, `cli` holds clap's shapes and nothing else, `config` turns
//! `run`'s into a validated, typed matrix and `options` every other
//! subcommand's into the typed options its module takes (`parse` reads
//! the list, duration and percentage forms), `exit` decides every exit status and `stdout`
//! writes standard output. Below it, grouped by role:
//! - `run`: the matrix of cells, a child process per run, A/B pairs, the
//!   CPU columns and the environment; `run::backend` is the door into the
//!   workloads crate for runs, validation and the two lists;
//! - `remote`: `serve` and `load`, the two halves of a TCP workload;
//! - `doctor`: the machine's findings and the instruments' calibration;
//! - `data`: the row model, a run's outcome, files read back, `merge`;
//! - `stats`: pure statistics (medians, tests, summaries, SLO capacity,
//!   change points);
//! - `output`: result files, the table, charts, the HTML report, units;
//! - `bisect`: the first bad version or commit of a range, each step an
//!   A/B run of `run --base-bin` judged by `compare`;
//! - `compare` (the regression gate), `history` (the nightly store and its
//!   change points) and `listing` (`wsbench list`), which read results.
//!
//! The contract's types (`wsbench_workloads::api`: specs, outputs, the
//! extras' names) are imported where they are used, and so is the rest of
//! the workloads crate's face: `remote`'s `serve`/`load`, the instruments,
//! reference client and `resolved_params` that `doctor` calibrates with,
//! `options`' lists of servable workloads and client-only parameters, and
//! the spin-drift threshold `compare` and `doctor` print.
//!
//! # As a library
//!
//! A binary of your own gets the whole CLI (`list`, `run`, `compare`,
//! `plot`, ...) with extra schedulers in it: register them with
//! `wsbench_schedulers::register` first, then hand over to [`main`] (see
//! `examples/custom_policy.rs` and the book, `docs/src/extending.md`). [`main`] also serves the child processes the harness
//! starts for each run (they re-run the same binary), so register in
//! `main` before anything else.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod app;
mod bisect;
mod cli;
mod compare;
mod config;
mod data;
mod doctor;
mod exit;
mod history;
mod listing;
mod options;
mod output;
mod parse;
mod remote;
mod run;
mod stats;
mod stdout;

/// The harness's internals, for its own integration tests and benches
/// only: not an API, and free to change in any release. A binary of your
/// own needs [`main`] alone.
#[doc(hidden)]
pub mod internals {
    pub use crate::data::{load, record};
    pub use crate::output::{export, plot, units};
    pub use crate::run::{env, isolate};

    /// `wsbench compare`.
    pub mod compare {
        pub use crate::compare::*;
    }
    /// Exit statuses.
    pub mod exit {
        pub use crate::exit::*;
    }
}

/// The whole `wsbench` command line: parses `std::env::args`, runs the
/// command, prints an error (`Error: ...`, written by [`exit::render`]) and
/// returns the exit status (0 success, 1 a negative answer, 2 an error; see
/// `docs/src/output.md`). Standard output goes through [`stdout`], so a closed pipe
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
