//! The third kind of range: commits of a runtime checkout (`--path
//! ../tokio --good REF --bad REF`, with `--sched` naming the reference
//! whose crate the checkout holds).
//!
//! Checked before anything is built, each a named error: `--sched` is a
//! reference that takes a version (tokio, tokio-current, smol), the path
//! is in a git repository (a bare one, such as a mirror, too), `--bad` is
//! one of its commits, and at that commit
//! the repository holds the crate: its root `Cargo.toml`, or one a
//! directory down (a workspace like tokio's: `tokio/Cargo.toml`), names
//! package `tokio` (`async-executor` for smol). The points are the
//! first-parent commits from good to bad, as for this repository's own
//! commits. Each is built by the version rows' builder from a `git
//! archive` export of the commit ([`crate::run::pinned::checkout`]).
//!
//! Uncommitted changes in the checkout are no part of any point (every
//! point is a commit, exported); the checkout is used as it is and a
//! warning names them, so that a change one meant to bisect is committed
//! first.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Result};

use super::git::{git, resolve};
use crate::run::pinned::checkout::package_field;
use crate::run::pinned::{Pinned, PINNABLE};

/// A checkout of a reference runtime's repository.
#[derive(Debug, Clone)]
pub struct Checkout {
    /// Its top directory.
    pub repo: PathBuf,
    /// The reference's `--sched` name.
    pub sched: &'static str,
    /// The crate the checkout's commits stand for.
    pub krate: &'static str,
    /// The crate's directory in the repository (`""`: its root), at the
    /// bad end.
    pub member: String,
}

impl Checkout {
    /// The pin of commit `sha` (the version rows' builder keys it by
    /// crate, commit and wsbench source).
    pub fn pinned(&self, sha: &str) -> Pinned {
        Pinned { sched: self.sched, krate: self.krate, version: sha.to_string() }
    }
}

/// The checkout at `path` for `--sched sched`, its crate found at `bad`.
pub fn open(path: &Path, sched: &str, bad: &str) -> Result<Checkout> {
    let names = PINNABLE.iter().map(|p| p.sched).collect::<Vec<_>>().join("|");
    let Some(pin) = PINNABLE.iter().find(|p| p.sched == sched) else {
        bail!(
            "--path bisects commits of a reference runtime's checkout, and --sched `{sched}` is not one; allowed: \
             --sched {names} (the checkout holds its crate: tokio, or async-executor for smol)"
        );
    };
    ensure!(
        path.is_dir(),
        "--path `{}` is not a directory; allowed: a git checkout of {}'s repository",
        path.display(),
        pin.krate
    );
    let (ok, top, err) = git(path, &["rev-parse", "--show-toplevel"])?;
    let bare = !ok && git(path, &["rev-parse", "--is-bare-repository"])?.1 == "true";
    ensure!(
        (ok && !top.is_empty()) || bare,
        "--path `{}` is not a git repository (git: {err}); allowed: a git checkout of {}'s repository",
        path.display(),
        pin.krate
    );
    let repo =
        if bare { std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()) } else { PathBuf::from(top) };
    let sha = resolve(&repo, "--bad", bad)?;
    let member = member(&repo, &sha, pin.krate).map_err(|found| {
        anyhow::anyhow!(
            "--path `{}` is not a checkout of {} (the crate of --sched {sched}): at --bad `{bad}` neither its \
             Cargo.toml nor one a directory down names package `{}` (packages there: {found}); allowed: a git \
             checkout of {}'s repository",
            path.display(),
            pin.krate,
            pin.krate,
            pin.krate
        )
    })?;
    let (_, changed, _) = git(&repo, &["status", "--porcelain", "--untracked-files=no"])?;
    if !bare && !changed.is_empty() {
        eprintln!(
            "warning: `{}` has uncommitted changes ({} files); they are in no point of this bisect: every point is \
             a commit, exported with git archive (commit them to bisect them)",
            repo.display(),
            changed.lines().count()
        );
    }
    Ok(Checkout { repo, sched: pin.sched, krate: pin.krate, member })
}

/// The directory of package `krate` at commit `sha`: the root, else the
/// first directory one down whose Cargo.toml names it. `Err` lists the
/// packages found instead.
fn member(repo: &Path, sha: &str, krate: &str) -> std::result::Result<String, String> {
    let (_, dirs, _) = git(repo, &["ls-tree", "-d", "--name-only", sha]).map_err(|e| format!("{e:#}"))?;
    let mut found = Vec::new();
    for dir in std::iter::once("").chain(dirs.lines()) {
        let manifest = if dir.is_empty() { "Cargo.toml".to_string() } else { format!("{dir}/Cargo.toml") };
        let Ok((true, text, _)) = git(repo, &["show", &format!("{sha}:{manifest}")]) else { continue };
        match package_field(&text, "name") {
            Some(name) if name == krate => return Ok(dir.to_string()),
            Some(name) => found.push(name),
            None => {}
        }
    }
    Err(if found.is_empty() { "none".to_string() } else { found.join(", ") })
}
