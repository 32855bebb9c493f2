//! SIGINT / SIGTERM during `run` (issue 27, item 10): the finished cells
//! are printed as a partial table with "interrupted after N of M cells",
//! the cell that was running is dropped, JSON and markdown say the results
//! are incomplete, and the exit status is 130.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{read_csv, scratch};

/// Far beyond the few hundred milliseconds each step takes.
const DEADLINE: Duration = Duration::from_secs(60);
/// How often the test looks for the first cell's row.
const POLL: Duration = Duration::from_millis(20);

/// Whether `csv` holds a header and at least one row.
fn has_a_row(csv: &Path) -> bool {
    std::fs::read_to_string(csv).is_ok_and(|t| t.lines().count() >= 2)
}

fn interrupted_by(signal: &str) {
    let dir = scratch(&format!("interrupt-{signal}"));
    // Cell 1 finishes at once; cell 2 (`hang`) runs until the signal.
    let args = [
        "run",
        "--sched",
        "tokio",
        "--workers",
        "1",
        "--workload",
        "yield-many,hang",
        "--duration",
        "50ms",
        "--warmup",
        "0",
        "--runs",
        "1",
        "--timeout",
        "600s",
        "--csv",
        "r.csv",
        "--json",
        "r.json",
        "--markdown",
        "r.md",
    ];
    let child = Command::new(env!("CARGO_BIN_EXE_wsbench"))
        .args(args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wsbench");
    let pid = child.id().to_string();
    let kill = |sig: &str| {
        let _ = Command::new("kill").args([sig, &pid]).status();
    };
    let start = Instant::now();
    while !has_a_row(&dir.join("r.csv")) {
        if start.elapsed() > DEADLINE {
            kill("-9");
            panic!("the first cell wrote no row within {DEADLINE:?}");
        }
        std::thread::sleep(POLL);
    }
    kill(&format!("-{signal}"));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(DEADLINE) else {
        kill("-9");
        panic!("wsbench still running {DEADLINE:?} after SIG{signal}; killed");
    };
    let out = out.expect("collect wsbench");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("interrupted after 1 of 2 cells"), "{stdout}");
    assert!(stderr.contains("interrupted after 1 of 2 cells"), "{stderr}");
    let table_row = stdout.lines().find(|l| l.starts_with("tokio") && l.contains("yield-many"));
    assert!(table_row.is_some(), "no partial table:\n{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("tokio") && l.contains("hang")), "{stdout}");
    // The finished cell's row is kept; the running cell left none.
    let (header, rows) = read_csv(&dir.join("r.csv"));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(common::col(&header, &rows[0], "workload"), "yield-many");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(json["complete"], false, "{json:#}");
    assert_eq!(json["incomplete"]["finished_cells"], 1);
    assert_eq!(json["incomplete"]["planned_cells"], 2);
    assert_eq!(json["incomplete"]["interrupted"], true);
    assert_eq!(json["cells"].as_array().map(Vec::len), Some(1));
    let md = std::fs::read_to_string(dir.join("r.md")).unwrap();
    assert!(md.contains("## Incomplete: interrupted after 1 of 2 cells"), "{md}");
}

#[test]
fn sigint_keeps_the_finished_cells_and_says_so() {
    interrupted_by("INT");
}

#[test]
fn sigterm_keeps_the_finished_cells_and_says_so() {
    interrupted_by("TERM");
}

#[test]
fn a_complete_run_says_it_is_complete() {
    let dir = scratch("complete");
    let args = [
        "run",
        "--sched",
        "tokio",
        "--workers",
        "1",
        "--workload",
        "yield-many",
        "--duration",
        "20ms",
        "--warmup",
        "0",
        "--runs",
        "1",
        "--json",
        "r.json",
        "--markdown",
        "r.md",
    ];
    common::wsbench_in(&dir, &args).ok();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(json["complete"], true, "{json:#}");
    assert!(json.get("incomplete").is_none());
    assert!(!std::fs::read_to_string(dir.join("r.md")).unwrap().contains("Incomplete"));
}
