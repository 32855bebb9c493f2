//! Running cargo for the version rows' builds ([`super::build`],
//! [`super::checkout`]): the command, its log, and reading its messages.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

/// A cargo command in the scratch crate, building into the shared target
/// directory, with the caller's rustflags cleared.
pub fn cargo(scratch: &Path, root: &Path) -> Command {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut cmd = Command::new(program);
    cmd.current_dir(scratch)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS");
    cmd
}

/// Runs `cmd`, appending its output to `log`; returns (success, stderr).
pub fn run_logged(mut cmd: Command, log: &Path) -> Result<(bool, String)> {
    let out = cmd.output().with_context(|| format!("cannot start cargo ({cmd:?}); is it on PATH?"))?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = format!("$ {cmd:?}\n{}{stderr}\n", String::from_utf8_lossy(&out.stdout));
    let mut old = std::fs::read_to_string(log).unwrap_or_default();
    old.push_str(&text);
    std::fs::write(log, old).with_context(|| format!("cannot write `{}`", log.display()))?;
    Ok((out.status.success(), stderr))
}

/// Whether cargo's stderr says the registry could not be reached.
pub fn is_network_failure(stderr: &str) -> bool {
    let text = stderr.to_ascii_lowercase();
    [
        "failed to query replaced source registry",
        "couldn't connect",
        "could not connect",
        "failed to connect",
        "couldn't resolve host",
        "could not resolve host",
        "connection refused",
        "network failure",
        "spurious network error",
        "failed to download",
        "timed out",
        "unable to update registry",
        "failed to get successful http response",
    ]
    .iter()
    .any(|needle| text.contains(needle))
}

/// The first line starting with `prefix` (trimmed), else the first
/// non-empty line.
pub fn first_line(text: &str, prefix: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next().unwrap_or("(no output)");
    lines.find(|l| l.starts_with(prefix)).unwrap_or(first).to_string()
}
