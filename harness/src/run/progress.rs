//! Progress on stderr: a bar when stderr is a terminal and `--quiet` is not
//! given, plain lines when it is not a terminal, nothing with `--quiet`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::data::record::CellKey;

/// How often the bar redraws by itself, so elapsed time moves during a
/// long run.
const TICK: Duration = Duration::from_millis(250);
/// Bar layout: cell i of n, elapsed, runs done, estimate, current cell.
const TEMPLATE: &str = "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} runs, eta {eta} | {msg}";

/// Progress reporting for one matrix.
pub struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
}

impl Progress {
    /// A reporter for `total_runs` runs.
    pub fn new(total_runs: u64, quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let style = ProgressStyle::with_template(TEMPLATE).expect("the progress template is valid");
            let bar = ProgressBar::with_draw_target(Some(total_runs), ProgressDrawTarget::stderr()).with_style(style);
            bar.enable_steady_tick(TICK);
            bar
        });
        Progress { bar, quiet }
    }

    /// A cell starts.
    pub fn cell(&self, index: usize, total: usize, key: &CellKey) {
        if let Some(bar) = &self.bar {
            bar.set_prefix(format!("cell {}/{total}", index + 1));
            bar.set_message(key.to_string());
        }
    }

    /// A run ended.
    pub fn run_done(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// A line for the user (failures, notes); above the bar when there is one.
    pub fn note(&self, message: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(bar) => bar.println(message),
            None => eprintln!("{message}"),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
