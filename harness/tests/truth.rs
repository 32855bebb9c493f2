//! A run that mostly failed is never shown as healthy, and an injected
//! fault costs what it models, whatever the environment.

mod common;

use std::process::Command;

use common::{col, read_csv, scratch, wsbench_in};

const SHORT: &[&str] = &["--workers", "1", "--duration", "100ms", "--warmup", "20ms", "--runs", "1", "-q"];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    extra.iter().chain(SHORT).copied().collect()
}

/// The table row of `sched` as columns, and the header.
fn table_row(stdout: &str, sched: &str) -> (Vec<String>, Vec<String>) {
    let split = |l: &str| l.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(String::from).collect();
    let header = stdout.lines().find(|l| l.starts_with("scheduler")).expect("table header");
    let row = stdout.lines().find(|l| l.starts_with(sched)).expect("table row");
    (split(header), split(row))
}

#[test]
fn a_run_whose_requests_all_fail_is_failed_and_shows_no_latency() {
    let dir = scratch("all-fail");
    let run = wsbench_in(
        &dir,
        &args(&["--sched", "steal-half", "--workload", "rpc-fanout", "--param", "panic-every=1", "--csv", "r.csv"]),
    );
    run.code(1).stderr_has(&["every run failed"]);
    let (header, rows) = read_csv(&dir.join("r.csv"));
    assert_eq!(col(&header, &rows[0], "status"), "failed");
    let error = col(&header, &rows[0], "error");
    assert!(error.contains("too many failures") && error.contains("requests failed (100.0%)"), "{error}");
    let (names, cells) = table_row(&run.stdout, "steal-half");
    let at = |name: &str| &cells[names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no {name}"))];
    assert_eq!(at("p99"), "-", "no percentile from a failed run:\n{}", run.stdout);
    assert_eq!(at("failed req"), "100.00%");
    assert_eq!(at("failed"), "1/1");
}

#[test]
fn a_few_failed_requests_stay_ok_and_are_shown_next_to_the_latency() {
    let dir = scratch("few-fail");
    let run = wsbench_in(
        &dir,
        &args(&["--sched", "steal-half", "--workload", "rpc-fanout", "--param", "panic-every=100", "--csv", "r.csv"]),
    );
    run.ok();
    let (header, rows) = read_csv(&dir.join("r.csv"));
    let num = |c: &str| col(&header, &rows[0], c).parse::<u64>().unwrap();
    let (ops, failed) = (num("ops"), num("failed"));
    assert_eq!(col(&header, &rows[0], "status"), "ok");
    // One request in 100 panics: among n consecutive request ids that is
    // n / 100 rounded down or up, which may be a little over 1%.
    let answered = ops + failed;
    assert!(failed == answered / 100 || failed == answered.div_ceil(100), "{failed} of {answered}");
    let (names, cells) = table_row(&run.stdout, "steal-half");
    // After the latencies (p99.9 and max may be left out to fit 120 columns).
    let p99 = names.iter().position(|n| n == "p99").unwrap();
    let at = names.iter().position(|n| n == "failed req").expect("a failed req column");
    assert!(at > p99 && at <= p99 + 3, "right after the latencies: {names:?}");
    let shown = format!("{:.2}%", failed as f64 / answered as f64 * 100.0);
    assert_eq!(cells[at], shown);
    assert!(run.stdout.contains("more than 5% failed requests"), "the legend states the threshold");
}

#[test]
fn lost_client_connections_fail_the_run() {
    let dir = scratch("lost-conns");
    // 64 file descriptors cannot hold 100 client and 100 server sockets.
    let out = Command::new("bash")
        .arg("-c")
        .arg("ulimit -n 64; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_wsbench"))
        .args(args(&["--sched", "steal-half", "--workload", "tcp-rpc", "--param", "connections=100", "--csv", "r.csv"]))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let (header, rows) = read_csv(&dir.join("r.csv"));
    assert_eq!(col(&header, &rows[0], "status"), "failed");
    let extras = col(&header, &rows[0], "extras");
    let error = col(&header, &rows[0], "error");
    // Which side runs out of descriptors first is a race: when no client
    // connection came up at all the run ends before measuring, with no
    // extras but the settings, and its error says all 100 failed.
    let lost: u64 = match extras.split(';').find_map(|kv| kv.strip_prefix("failed_connections=")) {
        Some(v) => v.parse().unwrap_or_else(|_| panic!("{extras}")),
        None => {
            assert!(error.contains("none usable") && error.contains("Too many open files"), "{extras}\n{error}");
            100
        }
    };
    assert!(lost >= 100 - 64 / 2, "at most 32 of 100 connections fit in 64 descriptors, {lost} failed");
    assert!(error.contains(&format!("{lost} of 100 client connections failed")), "{error}");
}

#[test]
fn injected_panics_print_nothing_even_with_backtraces_on() {
    let dir = scratch("quiet-panics");
    let out = Command::new(env!("CARGO_BIN_EXE_wsbench"))
        .args(args(&["--sched", "steal-half,tokio", "--workload", "rpc-fanout", "--param", "panic-every=100"]))
        .env("RUST_BACKTRACE", "1")
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stderr.is_empty(), "--quiet prints nothing on stderr; got {} lines:\n{stderr}", stderr.lines().count());
    // 1% of the requests fail: the runs stay ok.
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("failed req"), "{stdout}");
}
