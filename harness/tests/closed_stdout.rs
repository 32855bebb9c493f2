//! Every subcommand with stdout a closed pipe (`wsbench list | true`):
//! no panic (exit 101, "panicked" on stderr), and the files named by
//! flags are still written.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{scratch, wsbench_in};

/// A run still going after this is a hang (the commands take well under a
/// second each).
const DEADLINE: Duration = Duration::from_secs(120);

const TINY: &[&str] = &["--sched", "tokio", "--workload", "yield-many", "--duration", "20ms", "--warmup", "0"];

/// Runs `wsbench args` in `dir` with stdout a pipe whose read end is
/// closed before the program starts; returns (exit code, stderr).
fn closed_stdout(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let child = Command::new(env!("CARGO_BIN_EXE_wsbench"))
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wsbench");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(DEADLINE) {
        Ok(out) => out.expect("collect wsbench"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("wsbench {args:?} still running after {DEADLINE:?}; killed");
        }
    };
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn every_subcommand_survives_a_closed_stdout() {
    let dir = scratch("closed-stdout");
    let tiny = |extra: &[&'static str]| TINY.iter().chain(extra).copied().collect::<Vec<_>>();
    // Inputs, made with stdout open.
    wsbench_in(&dir, &tiny(&["--workers", "1,2", "--runs", "2", "--csv", "a.csv", "--hdr-dir", "hdr"])).ok();
    wsbench_in(&dir, &tiny(&["--workers", "1,2", "--runs", "2", "--csv", "b.csv"])).ok();
    wsbench_in(&dir, &tiny(&["--workers", "1,2", "--runs", "1", "--shard", "1/2", "--csv", "s1.csv"])).ok();
    wsbench_in(&dir, &tiny(&["--workers", "1,2", "--runs", "1", "--shard", "2/2", "--csv", "s2.csv"])).ok();
    let commands: Vec<(Vec<&str>, &[i32], Option<&str>)> = vec![
        (vec!["list"], &[0], None),
        (vec!["doctor", "--workers", "1"], &[0], None),
        (tiny(&["--workers", "1", "--runs", "1", "--csv", "c.csv", "--json", "c.json"]), &[0], Some("c.json")),
        (vec!["compare", "a.csv", "b.csv", "--json", "cmp.json"], &[0, 1], Some("cmp.json")),
        (vec!["plot", "a.csv", "--out", "plots", "--hdr-dir", "hdr"], &[0], Some("plots")),
        (vec!["history", "add", "a.csv", "--db", "h.sqlite"], &[0], Some("h.sqlite")),
        (vec!["history", "list", "--db", "h.sqlite"], &[0], None),
        (vec!["history", "detect", "--db", "h.sqlite", "--min-size", "2"], &[0, 2], None),
        (vec!["report", "--db", "h.sqlite", "--out", "report.html"], &[0], Some("report.html")),
        (vec!["merge", "s1.csv", "s2.csv", "--out", "merged.csv"], &[0], Some("merged.csv")),
        (
            // Nobody sends it a request: its row measured nothing and
            // fails (one health rule for run, load and serve), exit 1.
            vec!["serve", "--listen", "127.0.0.1:0", "--workload", "tcp-rpc", "--workers", "1", "--duration", "200ms"],
            &[1],
            None,
        ),
        (
            vec!["load", "--target", "127.0.0.1:9", "--workload", "tcp-rpc", "--duration", "50ms", "--warmup", "0"],
            &[0, 1],
            None,
        ),
    ];
    for (args, codes, file) in commands {
        let (code, stderr) = closed_stdout(&dir, &args);
        assert!(!stderr.contains("panicked") && !stderr.contains("stack backtrace"), "{args:?}: {stderr}");
        assert!(code.is_some_and(|c| codes.contains(&c)), "{args:?} exited {code:?}, allowed {codes:?}: {stderr}");
        if let Some(file) = file {
            assert!(dir.join(file).exists(), "{args:?} did not write {file}: {stderr}");
        }
    }
}

#[test]
fn help_and_usage_errors_survive_a_closed_stdout() {
    let dir = scratch("closed-stdout-help");
    let (code, stderr) = closed_stdout(&dir, &["--help"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stderr) = closed_stdout(&dir, &["compare"]);
    assert_eq!(code, Some(2), "{stderr}");
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_source_writes_stdout_around_the_guard() {
    // A new subcommand that used print! would panic on a closed pipe again.
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() > 20, "{files:?}");
    for file in files.iter().filter(|f| !f.ends_with("stdout.rs")) {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for bad in ["print!(", "println!("] {
                let hit = code.match_indices(bad).any(|(i, _)| !code[..i].ends_with('e'));
                assert!(!hit, "{}:{}: {bad} bypasses crate::out!/outln! (stdout.rs): {line}", file.display(), n + 1);
            }
        }
    }
}
