//! Published runtime versions as rows: `--sched tokio@1.50.0`,
//! `tokio-current@1.50.0`, `smol@1.13.1` beside every other row of one
//! interleaved invocation.
//!
//! A versioned row runs in a binary of its own: this wsbench's whole CLI
//! (`wsbench::main`, so the child-process protocol is the same code) built
//! against exactly that version ([`build`]). It is built once per
//! (crate, version, wsbench source), cached under `target/wsbench-refs/`,
//! and each run of the row is a child process of it, like every run of
//! every row.
//!
//! - `tokio@V` and `tokio-current@V` pin tokio to V; the binary is built
//!   with `--cfg tokio_unstable`, so its rows carry tokio's unstable
//!   counters (`polls`, `steals`, `tasks_stolen`, `overflows`) too, as the
//!   plain `tokio` rows do (the workspace's `.cargo/config.toml`).
//! - `smol@V` pins async-executor to V (the smol row's executor); async-io
//!   (its reactor and timers) is what cargo resolves beside it.
//!
//! Every row records the versions it ran in the `runtime_version` column
//! ([`own_versions`] for this binary's rows, the cached build's lockfile
//! for versioned ones).

pub mod build;
pub mod cargo;
pub mod checkout;

use std::path::PathBuf;

use anyhow::{bail, ensure, Result};
use wsbench_workloads::api::Sched;

/// A reference whose version can be pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pinnable {
    /// Its `--sched` name.
    pub sched: &'static str,
    /// The crate `@VERSION` pins.
    pub krate: &'static str,
    /// What the version means, for `list`.
    pub about: &'static str,
}

/// Every reference that takes `@VERSION`.
pub const PINNABLE: [Pinnable; 3] = [
    Pinnable { sched: "tokio", krate: "tokio", about: "tokio's version; built with --cfg tokio_unstable" },
    Pinnable { sched: "tokio-current", krate: "tokio", about: "tokio's version; built with --cfg tokio_unstable" },
    Pinnable {
        sched: "smol",
        krate: "async-executor",
        about: "async-executor's version (the executor); async-io as cargo resolves it",
    },
];

/// The oldest version of each pinnable crate known to build and run the
/// workloads here, and what is known below it.
pub const OLDEST_SUPPORTED: [(&str, &str, &str); 2] = [
    (
        "tokio",
        "1.50.0",
        "built and run here; before 1.39.0 tokio lacks the worker park/unpark metrics every tokio row reads, \
         1.39.0 to 1.49.x are untried",
    ),
    ("async-executor", "1.14.1", "the locked version; older ones are untried"),
];

/// The oldest supported version of `krate`.
pub fn oldest_supported(krate: &str) -> &'static str {
    OLDEST_SUPPORTED.iter().find(|(k, ..)| *k == krate).map_or("(unknown)", |(_, v, _)| v)
}

fn oldest_note(krate: &str) -> &'static str {
    OLDEST_SUPPORTED.iter().find(|(k, ..)| *k == krate).map_or("", |(.., note)| note)
}

/// A versioned reference row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// The reference's `--sched` name (`tokio`, `tokio-current`, `smol`).
    pub sched: &'static str,
    /// The crate pinned.
    pub krate: &'static str,
    /// The exact version.
    pub version: String,
}

impl Pinned {
    /// The row's name in results: `tokio@1.50.0`.
    pub fn row_name(&self) -> String {
        format!("{}@{}", self.sched, self.version)
    }
}

/// One `--sched` entry: a runtime, pinned to a published version or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedRow {
    /// The runtime the row runs (a versioned row runs this name inside its
    /// own binary).
    pub sched: Sched,
    /// `Some` for `NAME@VERSION`.
    pub pinned: Option<Pinned>,
}

impl SchedRow {
    /// The row's name in results (`tokio@1.50.0`, `steal-half`).
    pub fn name(&self) -> String {
        self.pinned.as_ref().map_or_else(|| self.sched.name().to_string(), Pinned::row_name)
    }
}

fn allowed_names() -> String {
    PINNABLE.iter().map(|p| format!("{}@VERSION", p.sched)).collect::<Vec<_>>().join(", ")
}

/// Whether `text` is an exact version: `MAJOR.MINOR.PATCH`, whole numbers
/// without leading zeros, optionally `-PRERELEASE` (letters, digits, `.`,
/// `-`).
pub fn is_exact_version(text: &str) -> bool {
    let (core, pre) = match text.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (text, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    let number =
        |n: &&str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n.len() == 1 || !n.starts_with('0'));
    let pre_ok =
        pre.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-'));
    numbers.len() == 3 && numbers.iter().all(number) && pre_ok
}

/// Splits a `--sched` entry `NAME@VERSION`; `None` for a name without `@`.
/// Every malformed entry is an error naming it and what is allowed.
pub fn split(entry: &str) -> Result<Option<Pinned>> {
    let Some((name, version)) = entry.split_once('@') else { return Ok(None) };
    let Some(pinnable) = PINNABLE.iter().find(|p| p.sched == name) else {
        bail!(
            "bad --sched `{entry}`: `{name}` takes no version (only published reference runtimes do); \
             allowed: {} (see `wsbench list`)",
            allowed_names()
        );
    };
    ensure!(
        !version.is_empty(),
        "bad --sched `{entry}`: no version after `@`; allowed: {name}@MAJOR.MINOR.PATCH, a published {} version \
         such as {name}@{} (see `wsbench list`)",
        pinnable.krate,
        oldest_supported(pinnable.krate)
    );
    ensure!(
        is_exact_version(version),
        "bad --sched `{entry}`: `{version}` is not an exact version (a row is built from one published release, not \
         a range); allowed: {name}@MAJOR.MINOR.PATCH, e.g. {name}@{}",
        oldest_supported(pinnable.krate)
    );
    Ok(Some(Pinned { sched: pinnable.sched, krate: pinnable.krate, version: version.to_string() }))
}

/// The versions of the reference runtimes this binary was built with, as
/// the `runtime_version` column writes them for `sched`'s rows
/// (`tokio=1.54.1`, `tokio=1.50.0;cfg=tokio_unstable`,
/// `async-executor=1.14.1;async-io=2.6.0`); blank for ours (their version
/// is the commit) and registered references.
pub fn own_versions(sched: Sched) -> String {
    let versions = Versions {
        tokio: env!("WSBENCH_TOKIO_VERSION"),
        async_executor: env!("WSBENCH_ASYNC_EXECUTOR_VERSION"),
        async_io: env!("WSBENCH_ASYNC_IO_VERSION"),
    };
    versions.column(sched.name(), cfg!(tokio_unstable))
}

/// Resolved versions of the reference crates in one build.
#[derive(Debug, Clone, Copy)]
pub struct Versions<'a> {
    /// tokio.
    pub tokio: &'a str,
    /// async-executor.
    pub async_executor: &'a str,
    /// async-io.
    pub async_io: &'a str,
}

impl Versions<'_> {
    /// The `runtime_version` text of a row of reference `sched` (a name
    /// without `@`); a version that is not known is left out, not guessed.
    pub fn column(&self, sched: &str, tokio_unstable: bool) -> String {
        let mut parts = Vec::new();
        let mut add = |name: &str, v: &str| {
            if !v.is_empty() {
                parts.push(format!("{name}={v}"));
            }
        };
        match sched {
            "tokio" | "tokio-current" => {
                add("tokio", self.tokio);
                if tokio_unstable && !parts.is_empty() {
                    parts.push("cfg=tokio_unstable".to_string());
                }
            }
            "smol" => {
                add("async-executor", self.async_executor);
                add("async-io", self.async_io);
            }
            _ => {}
        }
        parts.join(";")
    }
}

/// A versioned row, built: the binary its runs start and the versions it
/// was built with.
#[derive(Debug, Clone)]
pub struct Built {
    /// The cached binary.
    pub bin: PathBuf,
    /// Its lockfile's text (for [`Versions`]).
    pub lock: String,
}

impl Built {
    /// The `runtime_version` text of `pinned`'s rows.
    pub fn column(&self, pinned: &Pinned) -> String {
        let (tokio, executor, io) = (
            crate::run::lockfile::version_of(&self.lock, "tokio").unwrap_or_default(),
            crate::run::lockfile::version_of(&self.lock, "async-executor").unwrap_or_default(),
            crate::run::lockfile::version_of(&self.lock, "async-io").unwrap_or_default(),
        );
        let versions = Versions { tokio: &tokio, async_executor: &executor, async_io: &io };
        versions.column(pinned.sched, build::TOKIO_UNSTABLE)
    }
}

/// The `list` section on versioned rows.
pub fn listing() -> String {
    let mut out = String::from(
        "\nPublished versions as rows (--sched NAME@VERSION, e.g. tokio@1.50.0,tokio,steal-half):\n  \
         a reference pinned to one published release, built on first use against this wsbench's workloads\n  \
         (a few minutes; needs the crates.io registry or cargo's local cache), cached by (crate, version,\n  \
         wsbench source) under target/wsbench-refs/, and run in the same invocation as every other row.\n  \
         Each row's runtime_version column records the versions it ran (plain tokio/smol rows too).\n",
    );
    for p in PINNABLE {
        let width = crate::output::term::LIST_WIDTH;
        let name = format!("  {:<24} ", format!("{}@VERSION", p.sched));
        let indent = name.chars().count();
        out.push_str(&crate::output::term::hang(&name, &format!("pins {}: {}", p.krate, p.about), indent, width));
        out.push('\n');
        let oldest = format!("oldest supported {} ({})", oldest_supported(p.krate), oldest_note(p.krate));
        out.push_str(&crate::output::term::hang(&" ".repeat(indent), &oldest, indent, width));
        out.push('\n');
    }
    let own = |name: &str| {
        let s = crate::run::backend::sched(name).map(own_versions).unwrap_or_default();
        if s.is_empty() {
            "(not recorded)".to_string()
        } else {
            s
        }
    };
    // One line per runtime: with `;cfg=tokio_unstable` both on one line
    // passed `list`'s 100 columns.
    out.push_str(&format!("  built in: tokio, tokio-current {}\n", own("tokio")));
    out.push_str(&format!("            smol {}\n", own("smol")));
    out.push_str("  published versions: `cargo info tokio` / `cargo info async-executor`, or crates.io\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(entry: &str) -> String {
        format!("{:#}", split(entry).unwrap_err())
    }

    #[test]
    fn names_with_a_version_split_into_the_crate_they_pin() {
        let p = split("tokio@1.50.0").unwrap().unwrap();
        assert_eq!((p.sched, p.krate, p.version.as_str()), ("tokio", "tokio", "1.50.0"));
        assert_eq!(p.row_name(), "tokio@1.50.0");
        let p = split("tokio-current@1.51.2").unwrap().unwrap();
        assert_eq!((p.sched, p.krate), ("tokio-current", "tokio"));
        let p = split("smol@1.13.1").unwrap().unwrap();
        assert_eq!((p.sched, p.krate), ("smol", "async-executor"));
        assert_eq!(split("tokio@1.0.0-alpha.1").unwrap().unwrap().version, "1.0.0-alpha.1");
        assert_eq!(split("steal-half").unwrap(), None);
    }

    #[test]
    fn each_malformed_entry_is_named_with_what_is_allowed() {
        let e = err("tokio@");
        assert!(e.contains("`tokio@`") && e.contains("no version after `@`") && e.contains("MAJOR.MINOR.PATCH"), "{e}");
        for bad in ["1.x", "1", "1.50", "1.50.0.1", "^1.50", "=1.50.0", "1.050.0", "1.50.0-", "v1.50.0", "1.50.*"] {
            let e = err(&format!("tokio@{bad}"));
            assert!(e.contains(&format!("`{bad}` is not an exact version")) && e.contains("MAJOR.MINOR.PATCH"), "{e}");
        }
        for name in ["foo", "steal-half", "all", ""] {
            let e = err(&format!("{name}@1.0"));
            assert!(e.contains(&format!("`{name}` takes no version")), "{e}");
            assert!(e.contains("tokio@VERSION, tokio-current@VERSION, smol@VERSION"), "{e}");
        }
    }

    #[test]
    fn the_version_column_names_each_crate_and_the_cfg() {
        let v = Versions { tokio: "1.50.0", async_executor: "1.13.1", async_io: "2.6.0" };
        assert_eq!(v.column("tokio", true), "tokio=1.50.0;cfg=tokio_unstable");
        assert_eq!(v.column("tokio-current", false), "tokio=1.50.0");
        assert_eq!(v.column("smol", true), "async-executor=1.13.1;async-io=2.6.0");
        assert_eq!(v.column("steal-half", true), "");
        let unknown = Versions { tokio: "", async_executor: "", async_io: "" };
        assert_eq!(unknown.column("tokio", true), "", "nothing known: blank, no lone cfg");
    }

    #[test]
    fn this_binary_records_the_versions_of_its_own_lockfile() {
        let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock")).unwrap();
        let tokio = crate::run::lockfile::version_of(&lock, "tokio").unwrap();
        let got = own_versions(Sched::parse("tokio").unwrap());
        assert!(got.starts_with(&format!("tokio={tokio}")), "{got}");
        assert_eq!(own_versions(Sched::parse("steal-half").unwrap()), "");
    }
}
