//! Published runtime versions as rows (`--sched tokio@1.50.0`): the
//! malformed forms and the combinations refused, the registry that cannot
//! be reached, the `runtime_version` column of the built-in references
//! and `list`. A real build of a pinned version takes minutes of CPU, so
//! the one test that makes one runs only when `WSBENCH_TEST_PINNED_BUILD`
//! is set (see [`a_pinned_tokio_row_runs_beside_the_built_in_one`]); the
//! unreachable-registry test runs real cargo against a dead registry and
//! stops before anything compiles.

mod common;

use std::path::Path;

use common::{col, quick, read_csv, scratch, wsbench_env, wsbench_in};

/// The version of `package` in the workspace's `Cargo.lock`, read here by
/// hand (not by the harness's parser).
fn locked_version(package: &str) -> String {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock")).unwrap();
    let needle = format!("name = \"{package}\"\nversion = \"");
    let at = lock.find(&needle).unwrap_or_else(|| panic!("{package} not in Cargo.lock")) + needle.len();
    lock[at..].split('"').next().unwrap().to_string()
}

/// [`quick`] with `--sched sched`, then `extra`.
fn with_sched<'a>(sched: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = quick(extra);
    assert_eq!(args[0], "--sched");
    args[1] = sched;
    args
}

fn rejected(name: &str, args: &[&str], needles: &[&str]) {
    let dir = scratch(name);
    let run = wsbench_in(&dir, args);
    run.code(2).stderr_has(needles);
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "{name}: files left behind: {left:?}");
}

#[test]
fn malformed_versioned_rows_are_named_errors() {
    let args = |sched: &'static str| with_sched(sched, &["--csv", "x.csv"]);
    rejected("at-empty", &args("tokio@"), &["`tokio@`", "no version after `@`", "tokio@MAJOR.MINOR.PATCH"]);
    rejected("at-range", &args("tokio@1.x"), &["`tokio@1.x`", "`1.x` is not an exact version"]);
    rejected(
        "at-foo",
        &args("foo@1.0"),
        &["`foo@1.0`", "`foo` takes no version", "tokio@VERSION, tokio-current@VERSION, smol@VERSION"],
    );
    rejected("at-ours", &args("steal-half,steal-half@1.0.0"), &["`steal-half` takes no version"]);
    rejected(
        "at-in-process",
        &with_sched("tokio@1.50.0", &["--in-process", "--csv", "x.csv"]),
        &["`tokio@1.50.0`", "drop --in-process"],
    );
    let me = env!("CARGO_BIN_EXE_wsbench");
    rejected(
        "at-base-bin",
        &with_sched("tokio@1.50.0", &["--base-bin", me, "--base-csv", "b.csv", "--csv", "x.csv"]),
        &["`tokio@1.50.0` with --base-bin"],
    );
}

#[test]
fn list_explains_the_version_syntax_and_names_the_built_in_versions() {
    let run = wsbench_in(&scratch("list-versions"), &["list"]);
    run.ok();
    // `list` wraps at 100 columns: read it with its line breaks undone.
    let flat = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "--sched NAME@VERSION",
        "tokio@VERSION",
        "smol@VERSION",
        "pins async-executor",
        "async-io as cargo resolves it",
        "oldest supported",
        &format!("tokio={}", locked_version("tokio")),
        &format!("async-executor={};async-io={}", locked_version("async-executor"), locked_version("async-io")),
    ] {
        assert!(flat.contains(needle), "list lacks `{needle}`:\n{}", run.stdout);
    }
}

#[test]
fn every_row_records_its_runtime_version() {
    let dir = scratch("runtime-version");
    wsbench_in(&dir, &with_sched("steal-half,tokio,smol", &["--csv", "r.csv"])).ok();
    let (header, rows) = read_csv(&dir.join("r.csv"));
    // Schema 7's column, followed only by schema 8's limit columns.
    let at = header.iter().position(|h| h == "runtime_version").expect("a runtime_version column");
    assert_eq!(header.get(at + 1).map(String::as_str), Some("cpus"), "followed by schema 8's columns");
    let version = |sched: &str| {
        let row = rows.iter().find(|r| col(&header, r, "scheduler") == sched).expect("row");
        col(&header, row, "runtime_version").to_string()
    };
    assert_eq!(version("steal-half"), "", "ours: its version is the commit");
    // The plain tokio row is this binary's tokio, with the cfg it was built
    // with (the test and the binary are built with the same flags).
    let cfg = if cfg!(tokio_unstable) { ";cfg=tokio_unstable" } else { "" };
    assert_eq!(version("tokio"), format!("tokio={}{cfg}", locked_version("tokio")));
    let smol = format!("async-executor={};async-io={}", locked_version("async-executor"), locked_version("async-io"));
    assert_eq!(version("smol"), smol);
}

/// The workspace builds tokio with its unstable metrics, so the plain
/// `tokio` rows carry the counters the `tokio@VERSION` builds do: cargo
/// reads `.cargo/config.toml` in every command run in the workspace.
#[test]
fn the_workspace_builds_tokio_with_its_unstable_metrics() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../.cargo/config.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let build = text.split("\n[").find(|t| t.starts_with("build]")).expect("a [build] table");
    let flags = build.lines().find(|l| l.trim_start().starts_with("rustflags")).expect("build.rustflags");
    assert!(flags.contains(r#""--cfg", "tokio_unstable""#), "{flags}");
}

/// Writes a cargo home whose crates.io is replaced by a registry nobody
/// listens on, and with no local cache.
fn dead_cargo_home(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "[source.crates-io]\nreplace-with = \"dead\"\n\n[source.dead]\nregistry = \"sparse+http://127.0.0.1:9/index/\"\n\n\
         [net]\nretry = 0\n\n[http]\ntimeout = 5\n",
    )
    .unwrap();
}

#[test]
fn no_registry_and_nothing_cached_is_a_named_error() {
    let dir = scratch("no-registry");
    let (home, refs) = (scratch("no-registry-home"), scratch("no-registry-refs"));
    dead_cargo_home(&home);
    let env = [("CARGO_HOME", home.to_str().unwrap()), ("WSBENCH_REFS_DIR", refs.to_str().unwrap())];
    let mut args = with_sched("tokio@1.50.0,tokio", &["--csv", "x.csv"]);
    args.retain(|a| *a != "-q");
    let run = wsbench_env(&dir, &args, &env);
    run.code(2).stderr_has(&[
        "building tokio 1.50.0 reference, first use",
        "tokio@1.50.0: no registry reachable and nothing cached",
        "no cached build for this wsbench source",
    ]);
    assert!(!dir.join("x.csv").exists(), "nothing ran, nothing written");
    assert!(!refs.join("bin").exists(), "nothing cached");
}

/// The one real build: `tokio@1.50.0` beside the built-in `tokio`,
/// interleaved, through the child-process protocol. It takes minutes of
/// CPU on first use (then the cached binary is reused), so it runs only
/// with `WSBENCH_TEST_PINNED_BUILD=1`.
#[test]
fn a_pinned_tokio_row_runs_beside_the_built_in_one() {
    if std::env::var_os("WSBENCH_TEST_PINNED_BUILD").is_none() {
        eprintln!("skipped: set WSBENCH_TEST_PINNED_BUILD=1 to build tokio 1.50.0 and run it as a row (minutes)");
        return;
    }
    let dir = scratch("pinned-build");
    let run_args = [
        "--sched",
        "tokio@1.50.0,tokio",
        "--workers",
        "2",
        "--workload",
        "channel-ping-pong",
        "--param",
        "rounds=200",
        "--duration",
        "50ms",
        "--warmup",
        "0",
        "--runs",
        "2",
        "--interleave",
        "--csv",
        "r.csv",
    ];
    wsbench_in(&dir, &run_args).ok();
    let (header, rows) = read_csv(&dir.join("r.csv"));
    assert_eq!(rows.len(), 4);
    for row in &rows {
        assert_eq!(col(&header, row, "status"), "ok", "{row:?}");
        let version = col(&header, row, "runtime_version");
        if col(&header, row, "scheduler") == "tokio@1.50.0" {
            assert_eq!(version, "tokio=1.50.0;cfg=tokio_unstable");
            // tokio_unstable: the poll counter is reported.
            assert!(col(&header, row, "polls").parse::<u64>().unwrap() > 0, "{row:?}");
        } else {
            assert!(version.starts_with(&format!("tokio={}", locked_version("tokio"))), "{version}");
        }
    }
    // Second use: the cached binary, no build.
    let again = wsbench_in(&scratch("pinned-build-again"), &run_args);
    again.ok();
    assert!(!again.stderr.contains("building tokio"), "{}", again.stderr);
}
