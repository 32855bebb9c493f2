//! A fresh child process per run (the default; `--in-process` turns it
//! off).
//!
//! The harness starts its own binary again with the hidden subcommand
//! [`CHILD_SUBCOMMAND`], writes the run's spec on the child's stdin and
//! reads the run's result — its record fields and full histograms — back
//! from the child's stdout ([`wire`]). The child runs exactly one run on its
//! main thread and exits, so no thread of a run outlives it and every run
//! starts from a process in which no other run has left anything behind.
//!
//! Protocol of one run, as the parent sees it:
//! 1. spawn the child (stdin, stdout, stderr piped); a spawn error (process
//!    limit, missing binary) is a failed run; with `--cpus`/`--cpuset` move
//!    it into the run's cgroup ([`crate::run::cgroup`]) before it gets its
//!    spec (it waits for the spec, so the run starts inside the cgroup);
//! 2. write the spec, close stdin; one thread drains stdout (capped at
//!    [`wire::MAX_RESULT_BYTES`]), one keeps the last lines of stderr;
//! 3. wait for the child to exit, at most the watchdog limit; past it the
//!    child is killed (SIGKILL) and reaped: the run hung;
//! 4. exit status 0 and one valid frame: the run's output (or the error it
//!    reported); a signal or another status: a failed run naming the signal
//!    or status and the end of stderr; status 0 with anything but one valid
//!    frame: a failed run saying the result channel held garbage.

pub mod wire;

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use wsbench_workloads::api::{RunOptions, RuntimeSpec, WorkloadSpec};

use crate::data::outcome::{panic_message, RunEnd};
use crate::run::{backend, cgroup};

/// The hidden subcommand a child is started with.
pub const CHILD_SUBCOMMAND: &str = "__run-child";
/// Test hook: when set, the program started as the child instead of this
/// binary (a missing path, a script that writes garbage or kills itself).
pub const CHILD_EXE_ENV: &str = "WSBENCH_CHILD_EXE";
/// Lines of the child's stderr kept for a failed row.
pub const STDERR_TAIL_LINES: usize = 5;
/// Bytes of the child's stderr kept while reading (the tail is cut from it).
const STDERR_KEEP_BYTES: usize = 16 << 10;
/// How often the parent checks whether the child exited once its stdout
/// closed (a child closes stdout only when it exits).
const EXIT_POLL: Duration = Duration::from_millis(1);

/// The last [`STDERR_TAIL_LINES`] non-empty lines of `bytes`, `" | "`-joined.
pub fn stderr_tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..].join(" | ")
}

/// The usual name of a signal number.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => "signal",
    }
}

/// Why a child that exited without a valid result failed.
pub fn describe_exit(status: ExitStatus, stderr: &str) -> String {
    let how = match (status.signal(), status.code()) {
        (Some(9), _) => {
            "the run's child process was killed by signal 9 (SIGKILL; the kernel's OOM killer sends it when memory runs out)"
                .to_string()
        }
        (Some(s), _) => format!("the run's child process was killed by signal {s} ({})", signal_name(s)),
        (None, Some(code)) => format!("the run's child process exited with status {code}"),
        (None, None) => format!("the run's child process ended with {status}"),
    };
    if stderr.is_empty() {
        format!("{how}; its stderr was empty")
    } else {
        format!("{how}; last lines of its stderr: {stderr}")
    }
}

fn child_program() -> Result<PathBuf> {
    match std::env::var_os(CHILD_EXE_ENV) {
        Some(path) => Ok(PathBuf::from(path)),
        None => std::env::current_exe().context("cannot find this program's own path to start a child"),
    }
}

/// Reads `from` to its end, keeping at most `cap` bytes: the first ones
/// when `keep_head`, else the last ones. Returns the bytes and whether any
/// were dropped.
fn drain(mut from: impl Read, cap: usize, keep_head: bool) -> (Vec<u8>, bool) {
    let (mut kept, mut dropped, mut buf) = (Vec::new(), false, [0u8; 8192]);
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return (kept, dropped),
            Ok(n) => {
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > cap {
                    dropped = true;
                    if keep_head {
                        kept.truncate(cap);
                    } else {
                        kept.drain(..kept.len() - cap);
                    }
                }
            }
        }
    }
}

/// Why a child was killed before it exited.
enum Stopped {
    /// Past the watchdog limit.
    Watchdog,
    /// SIGINT/SIGTERM reached this process ([`crate::run::interrupt`]).
    Interrupted,
}

fn kill(child: &mut Child, why: Stopped) -> Result<ExitStatus, Stopped> {
    let _ = child.kill();
    let _ = child.wait();
    Err(why)
}

/// Waits for `child` until `deadline` (or an interrupt); kills it past that.
fn wait_or_kill(child: &mut Child, stdout_done: &mpsc::Receiver<()>, deadline: Instant) -> Result<ExitStatus, Stopped> {
    // The stdout reader ends when the child closes stdout, i.e. exits.
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match stdout_done.recv_timeout(left.min(crate::run::interrupt::POLL)) {
            Err(RecvTimeoutError::Timeout) if crate::run::interrupt::requested() => {
                return kill(child, Stopped::Interrupted)
            }
            Err(RecvTimeoutError::Timeout) if left <= crate::run::interrupt::POLL => {
                return kill(child, Stopped::Watchdog)
            }
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(EXIT_POLL),
            _ => return kill(child, Stopped::Watchdog),
        }
    }
}

/// Runs one measured run in a fresh child process under the watchdog: a
/// child of `program` (`run --base-bin`), else of this program; placed in
/// `group` (`--cpus`/`--cpuset`) before it reads its spec, so all of the
/// run happens inside the cgroup.
pub(crate) fn run_in_child(
    program: Option<&Path>,
    runtime: &RuntimeSpec,
    spec: &WorkloadSpec,
    options: &RunOptions,
    limit: Duration,
    group: Option<&cgroup::Group>,
) -> RunEnd {
    let deadline = Instant::now() + limit;
    let input = match wire::encode_spec(runtime, spec, options) {
        Ok(bytes) => bytes,
        Err(e) => return RunEnd::Failed(format!("{e:#}")),
    };
    let program = match program.map(|p| Ok(p.to_path_buf())).unwrap_or_else(child_program) {
        Ok(p) => p,
        Err(e) => return RunEnd::Failed(format!("{e:#}")),
    };
    let mut command = Command::new(&program);
    command.arg(CHILD_SUBCOMMAND).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(group) = group {
        command.env(cgroup::CPU_STAT_ENV, group.cpu_stat());
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            return RunEnd::Failed(format!("could not start the run's child process `{}`: {e}", program.display()))
        }
    };
    if let Some(Err(e)) = group.map(|g| g.place(child.id())) {
        let _ = child.kill();
        let _ = child.wait();
        return RunEnd::Failed(format!("could not put the run's child process in its cgroup: {e:#}"));
    }
    let (stdout, stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let (done_tx, done_rx) = mpsc::channel();
    let out_reader = thread::spawn(move || {
        let result = drain(stdout, wire::MAX_RESULT_BYTES, true);
        let _ = done_tx.send(());
        result
    });
    let err_reader = thread::spawn(move || drain(stderr, STDERR_KEEP_BYTES, false).0);
    if let Some(mut stdin) = child.stdin.take() {
        // A child that exits before reading its spec closes the pipe; its
        // exit status then says why.
        let _ = stdin.write_all(&input);
    }
    let status = wait_or_kill(&mut child, &done_rx, deadline);
    let (out, truncated) = out_reader.join().unwrap_or_default();
    let err = stderr_tail(&err_reader.join().unwrap_or_default());
    let status = match status {
        Ok(status) => status,
        Err(Stopped::Watchdog) => return RunEnd::Killed,
        Err(Stopped::Interrupted) => return RunEnd::Interrupted,
    };
    if !status.success() {
        return RunEnd::Failed(describe_exit(status, &err));
    }
    if truncated {
        return RunEnd::Failed(format!(
            "garbage on the result channel: the child wrote more than {} bytes",
            wire::MAX_RESULT_BYTES
        ));
    }
    match wire::decode_result(&out) {
        Ok(Ok(output)) => RunEnd::Done(Box::new(output)),
        Ok(Err(message)) => RunEnd::Failed(message),
        Err(e) => RunEnd::Failed(format!("garbage on the result channel of the run's child process: {e:#}")),
    }
}

/// The child's side: read the spec from stdin, run it on this thread,
/// write one result frame on stdout. Exits 0 whenever a frame was written
/// (a failed run is a frame too).
pub fn child_main() -> Result<ExitCode> {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).context("cannot read the run spec on stdin")?;
    // Placed in a cgroup by the parent (`--cpus`/`--cpuset`): its throttling.
    wsbench_workloads::api::set_throttle_source(std::env::var_os(cgroup::CPU_STAT_ENV).map(PathBuf::from));
    let spec = wire::decode_spec(&input)?;
    let result = panic::catch_unwind(AssertUnwindSafe(|| backend::run(&spec.runtime, &spec.workload, &spec.options)));
    let frame = match result {
        Ok(Ok(output)) => wire::encode_ok(&output).unwrap_or_else(|e| wire::encode_error(&format!("{e:#}"))),
        Ok(Err(e)) => wire::encode_error(&format!("{e:#}")),
        Err(payload) => wire::encode_error(&format!("panicked: {}", panic_message(payload.as_ref()))),
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&frame).context("cannot write the run result on stdout")?;
    stdout.flush().context("cannot write the run result on stdout")?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stderr_tail_keeps_the_last_non_empty_lines() {
        let text = b"one\ntwo\n\nthree\nfour\nfive\nsix\n\n";
        assert_eq!(stderr_tail(text), "two | three | four | five | six");
        assert_eq!(stderr_tail(b""), "");
    }

    #[test]
    fn draining_keeps_the_head_or_the_tail() {
        let data: Vec<u8> = (0..100u8).collect();
        assert_eq!(drain(data.as_slice(), 10, true), ((0..10u8).collect(), true));
        assert_eq!(drain(data.as_slice(), 10, false), ((90..100u8).collect(), true));
        assert_eq!(drain(data.as_slice(), 100, true), (data.clone(), false));
    }

    #[test]
    fn exits_are_described_with_signal_or_status() {
        let abort = describe_exit(ExitStatus::from_raw(6), "fatal runtime error");
        assert_eq!(
            abort,
            "the run's child process was killed by signal 6 (SIGABRT); last lines of its stderr: fatal runtime error"
        );
        assert!(describe_exit(ExitStatus::from_raw(9), "").contains("OOM killer"));
        // A wait status of 3 << 8 is "exited with status 3".
        assert_eq!(
            describe_exit(ExitStatus::from_raw(3 << 8), ""),
            "the run's child process exited with status 3; its stderr was empty"
        );
    }
}
