//! The book's reference pages are what the binary prints: the CLI reference
//! (`wsbench --help` and `wsbench help <command>` for every command clap
//! lists, recursively) and the registries (`wsbench list`: schedulers,
//! workloads, parameters, knobs). A test fails when a committed page differs
//! from the binary's output; regenerate the pages with
//!
//!     WSBENCH_BLESS=1 cargo test --release -p wsbench --test docs_reference
//!
//! and commit them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src/reference")
}

/// What `wsbench ARGS` prints on stdout (stdout a pipe, as in CI).
fn wsbench(args: &[&str]) -> String {
    let out =
        Command::new(env!("CARGO_BIN_EXE_wsbench")).args(args).env_remove("COLUMNS").output().expect("run wsbench");
    assert!(out.status.success(), "wsbench {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The command names of a help text's `Commands:` section (clap's own
/// `help` left out).
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

fn section(title: &str, body: &str) -> String {
    format!("## `{title}`\n\n```text\n{}\n```\n\n", body.trim_end())
}

/// The CLI reference: the top-level help, then every command's help, depth first.
fn cli_page() -> String {
    let mut page = String::from(
        "# CLI reference\n\n<!-- Generated from the binary by harness/tests/docs_reference.rs; \
         do not edit by hand. -->\n\nEvery command's `--help`, as `wsbench` prints it.\n\n",
    );
    let top = wsbench(&["--help"]);
    page += &section("wsbench --help", &top);
    let mut stack: Vec<Vec<String>> = commands(&top).into_iter().rev().map(|c| vec![c]).collect();
    while let Some(path) = stack.pop() {
        let mut args = vec!["help"];
        args.extend(path.iter().map(String::as_str));
        let help = wsbench(&args);
        page += &section(&format!("wsbench {}", args.join(" ")), &help);
        for sub in commands(&help).into_iter().rev() {
            let mut deeper = path.clone();
            deeper.push(sub);
            stack.push(deeper);
        }
    }
    page
}

/// The registries: schedulers, workloads with their parameters, knobs.
fn list_page() -> String {
    format!(
        "# Schedulers, workloads, parameters and knobs\n\n<!-- Generated from the binary by \
         harness/tests/docs_reference.rs; do not edit by hand. -->\n\nWhat `wsbench list` prints: \
         every scheduler, workload (with its parameters, defaults and allowed values) and knob.\n\n{}",
        section("wsbench list", &wsbench(&["list"]))
    )
}

fn check(name: &str, generated: String) {
    let path = reference_dir().join(name);
    if std::env::var_os("WSBENCH_BLESS").is_some() {
        std::fs::create_dir_all(reference_dir()).unwrap();
        std::fs::write(&path, generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed.lines().zip(generated.lines()).position(|(a, b)| a != b);
        panic!(
            "docs/src/reference/{name} differs from what the binary prints (first at line {}); regenerate it: \
             WSBENCH_BLESS=1 cargo test --release -p wsbench --test docs_reference",
            line.map_or_else(|| "the end".to_string(), |n| (n + 1).to_string())
        );
    }
}

#[test]
fn the_cli_reference_is_what_the_binary_prints() {
    check("cli.md", cli_page());
}

#[test]
fn the_registry_reference_is_what_the_binary_prints() {
    check("list.md", list_page());
}

#[test]
fn commands_are_read_from_a_help_text() {
    let help = "Usage: x\n\nCommands:\n  run    Run\n  list   List\n  help   Print this\n\nOptions:\n  -h\n";
    assert_eq!(commands(help), ["run", "list"]);
}
