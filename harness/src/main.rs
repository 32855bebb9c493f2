//! The `wsbench` binary: parse, run, report errors.
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    match wsbench::app::run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("Error: {err:#}");
            wsbench::app::exit_code_for(&err)
        }
    }
}
