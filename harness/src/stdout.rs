//! Standard output for every subcommand, through [`out!`](crate::out) and
//! [`outln!`](crate::outln) (never `print!`, which panics when stdout is
//! a closed pipe: `wsbench list | true`, `wsbench compare A B | head -1`).
//!
//! A write that fails with a broken pipe (the reader went away) stops all
//! later output to stdout quietly: the command goes on, so every file named
//! by a flag (`merge --out`, `compare --json`, `run --csv`) is still
//! written, and it exits with its own status. Any other failure (a full
//! disk behind `> file`) is remembered, the rest of stdout is dropped, and
//! [`finish`] turns it into an error (exit 2), since the output the user
//! asked for is incomplete.
//!
//! Why not restore the default SIGPIPE action: the process would die at the
//! first write to the closed pipe, before the files named by flags are
//! written. Why not catch the panic of `print!`: the panic message and a
//! backtrace would already be on stderr, and the rest of the command would
//! not run.

use std::fmt;
use std::io::{ErrorKind, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Set once a write to stdout failed: later output is dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// The first failure that was not a broken pipe, for [`finish`].
static FAILURE: Mutex<Option<String>> = Mutex::new(None);

/// Writes `args` to stdout, then a line break when `newline`; after a
/// failed write, nothing.
pub fn write(args: fmt::Arguments<'_>, newline: bool) {
    // Relaxed: a flag that only ever goes from false to true; it publishes
    // no data (FAILURE has its own lock).
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| if newline { stdout.write_all(b"\n") } else { Ok(()) });
    if let Err(e) = written {
        closed_by(&e);
    }
}

fn closed_by(e: &std::io::Error) {
    // Relaxed: see `write`.
    CLOSED.store(true, Ordering::Relaxed);
    if e.kind() != ErrorKind::BrokenPipe {
        let mut failure = FAILURE.lock().unwrap_or_else(|p| p.into_inner());
        failure.get_or_insert_with(|| e.to_string());
    }
}

/// Flushes stdout, and returns the exit status: `code`, or 2 (with a
/// message) when the command succeeded but a write to stdout failed for a
/// reason other than a broken pipe.
pub fn finish(code: ExitCode) -> ExitCode {
    // Relaxed: see `write`.
    if !CLOSED.load(Ordering::Relaxed) {
        if let Err(e) = std::io::stdout().lock().flush() {
            closed_by(&e);
        }
    }
    let failure = FAILURE.lock().unwrap_or_else(|p| p.into_inner()).take();
    match failure {
        Some(reason) if code == ExitCode::SUCCESS => {
            eprintln!("Error: cannot write to stdout ({reason}); the output is incomplete");
            ExitCode::from(crate::exit::EXIT_UNUSABLE)
        }
        _ => code,
    }
}

/// `print!` that never panics (see the module doc).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*), false)
    };
}

/// `println!` that never panics (see the module doc).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*), true)
    };
}
