//! SIGINT / SIGTERM (and SIGHUP) while `run` measures: the first one asks
//! the matrix to stop. The run in progress is abandoned (its child process
//! killed; in-process, its thread left behind), its cell is dropped, and
//! the cells that finished are kept: printed as a partial table with
//! "interrupted after N of M cells", their CSV rows already on disk, the
//! JSON (`"complete": false`, `"interrupted"`) and markdown (an
//! "Incomplete" heading) rewritten to say so. The exit status is then
//! [`EXIT_INTERRUPTED`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};

/// Exit status of an interrupted `run`: 128 + SIGINT, the shell's
/// convention (`wsbench run ... || echo stopped` sees a failure).
pub const EXIT_INTERRUPTED: u8 = 130;
/// How often a wait for a run checks whether an interrupt came.
pub const POLL: Duration = Duration::from_millis(50);

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler (once per process).
pub fn install() -> Result<()> {
    // Relaxed: a flag polled by the waits; nothing is published through it.
    ctrlc::set_handler(|| REQUESTED.store(true, Ordering::Relaxed)).context("installing the SIGINT/SIGTERM handler")
}

/// Whether SIGINT or SIGTERM arrived.
pub fn requested() -> bool {
    // Relaxed: see `install`.
    REQUESTED.load(Ordering::Relaxed)
}
