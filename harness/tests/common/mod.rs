//! Helpers shared by the integration tests: run the real binary with a
//! safety deadline (a hang fails the test instead of stalling it), fresh scratch directories, CSV reading.
#![allow(dead_code)] // each test file uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// A test whose binary has not exited by then is a hang, not a slow run.
/// One invocation may hold a whole matrix (timer_knob.rs: 210 cells, a
/// child process each); on 2 cores beside other work that took tens of
/// seconds, so the deadline is 10 minutes, not 2 (each run inside has the
/// harness's own watchdog, which catches a hung run much sooner).
const DEADLINE: Duration = Duration::from_secs(600);

/// The result of one invocation.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn ok(&self) -> &Self {
        assert_eq!(self.code, Some(0), "expected success\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }

    pub fn code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "expected exit {code}\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }

    pub fn failed(&self) -> &Self {
        assert!(
            self.code.is_some_and(|c| c != 0),
            "expected failure\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    /// Asserts stderr mentions every needle.
    pub fn stderr_has(&self, needles: &[&str]) -> &Self {
        for n in needles {
            assert!(self.stderr.contains(n), "stderr lacks `{n}`:\n{}", self.stderr);
        }
        self
    }

    pub fn stdout_has(&self, needles: &[&str]) -> &Self {
        for n in needles {
            assert!(self.stdout.contains(n), "stdout lacks `{n}`:\n{}", self.stdout);
        }
        self
    }
}

/// Runs `wsbench args...` in `dir`, failing the test if it outlives the
/// deadline (the process is killed first).
pub fn wsbench_in(dir: &Path, args: &[&str]) -> Run {
    wsbench_env(dir, args, &[])
}

/// [`wsbench_in`] with extra environment variables.
pub fn wsbench_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    program_env(Path::new(env!("CARGO_BIN_EXE_wsbench")), dir, args, env)
}

/// Runs `program` (the `wsbench` binary or another binary built on its
/// library) with the same deadline.
pub fn program_env(program: &Path, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wsbench");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Output { status, stdout, stderr } = match rx.recv_timeout(DEADLINE) {
        Ok(out) => out.expect("collect wsbench"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("wsbench {args:?} still running after {DEADLINE:?}; killed");
        }
    };
    Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// A fresh, empty scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "wsbench-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Reads a CSV: header and rows.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let header = r.headers().expect("header").iter().map(str::to_string).collect();
    let rows = r.records().map(|rec| rec.expect("row").iter().map(str::to_string).collect()).collect();
    (header, rows)
}

/// The value of `column` in `row`.
pub fn col<'a>(header: &[String], row: &'a [String], column: &str) -> &'a str {
    let i = header.iter().position(|h| h == column).unwrap_or_else(|| panic!("no column `{column}` in {header:?}"));
    &row[i]
}

/// A watchdog limit for tests whose cells are many threads on a tiny run
/// (128 workers oversubscribed): the default (3 x the run + 10 s) is a few
/// hundred times a 20 ms run, which two CPU hogs and a parallel test
/// binary have exceeded (`per-worker x128 spawn-many-remote-busy1`, 10.1 s,
/// load 16). These tests assert that every run is healthy, not how fast:
/// 300 s is 15,000 times the run, and the watchdog still catches a hang.
pub const GENEROUS_TIMEOUT: [&str; 2] = ["--timeout", "300s"];

/// One quick cell: steal-half, 1 worker, a small yield-many, 1 run, quiet.
pub const QUICK: &[&str] = &[
    "--sched",
    "steal-half",
    "--workers",
    "1",
    "--workload",
    "yield-many",
    "--param",
    "tasks=10",
    "--param",
    "yields=20",
    "--duration",
    "20ms",
    "--warmup",
    "0",
    "--runs",
    "1",
    "-q",
];

/// [`QUICK`] followed by `extra`.
pub fn quick<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    QUICK.iter().chain(extra).copied().collect()
}
