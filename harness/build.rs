//! Records the compiler version so every result names the rustc that built
//! the binary (not whichever rustc is on PATH when it runs), and the
//! versions of the reference runtimes it was built with, read from the
//! lockfile of the build (`WSBENCH_LOCKFILE` when a versioned reference
//! row builds its own binary, else the workspace's `Cargo.lock`), and warns
//! when tokio's unstable metrics are off.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::Command;

#[path = "src/run/lockfile.rs"]
#[allow(dead_code)] // Reason: its tests run with the crate's, not here.
mod lockfile;

/// Environment variable naming the lockfile of this build.
const LOCKFILE_ENV: &str = "WSBENCH_LOCKFILE";
/// The packages whose versions the binary records, and the variables it
/// reads them from (`run::pinned`).
const RECORDED: [(&str, &str); 3] = [
    ("tokio", "WSBENCH_TOKIO_VERSION"),
    ("async-executor", "WSBENCH_ASYNC_EXECUTOR_VERSION"),
    ("async-io", "WSBENCH_ASYNC_IO_VERSION"),
];

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=WSBENCH_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
    let lock = std::env::var_os(LOCKFILE_ENV).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join("../Cargo.lock")
    });
    println!("cargo:rerun-if-env-changed={LOCKFILE_ENV}");
    println!("cargo:rerun-if-changed={}", lock.display());
    // No lockfile (a packaged crate): the versions are blank, not guessed.
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    for (package, var) in RECORDED {
        println!("cargo:rustc-env={var}={}", lockfile::version_of(&text, package).unwrap_or_default());
    }
    // The workspace's `.cargo/config.toml` sets `--cfg tokio_unstable`; an
    // environment RUSTFLAGS replaces it (cargo does not merge the two).
    if std::env::var_os("CARGO_CFG_TOKIO_UNSTABLE").is_none() {
        println!(
            "cargo:warning=built without `--cfg tokio_unstable` (an environment RUSTFLAGS replaces \
             .cargo/config.toml's): the tokio rows leave polls, steals, tasks_stolen and overflows blank"
        );
    }
}
