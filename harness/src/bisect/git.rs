//! git, as the bisect reads repositories: this one's and a runtime
//! checkout's.

use std::path::Path;
use std::process::Command;

use anyhow::{ensure, Context, Result};

/// Runs git in `dir`: (success, stdout, stderr), trimmed.
pub fn git(dir: &Path, args: &[&str]) -> Result<(bool, String, String)> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().context("cannot start git; is it on PATH?")?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
    Ok((out.status.success(), text(&out.stdout), text(&out.stderr)))
}

/// The full sha of commit `reference` of `repo`; a named error else.
pub fn resolve(repo: &Path, flag: &str, reference: &str) -> Result<String> {
    let (ok, sha, _) = git(repo, &["rev-parse", "--verify", "--quiet", &format!("{reference}^{{commit}}")])?;
    ensure!(
        ok && !sha.is_empty(),
        "{flag} `{reference}` is not a commit of `{}`; allowed: a SHA, tag or branch that `git rev-parse` knows",
        repo.display()
    );
    Ok(sha)
}
