//! A reference built from one commit of a local checkout (`wsbench bisect
//! --path ../tokio`): the version rows' build ([`super::build`]) with its
//! step 3 replaced. The pin's version is the commit's full sha, so the
//! cache key is (crate, commit, wsbench source).
//!
//! Steps:
//! 1. the commit is exported with `git archive` into
//!    `target/wsbench-refs/checkouts/KEY/`: the checkout (its working tree,
//!    index and git directory) is only read, never checked out or changed;
//! 2. the scratch crate gets `[patch.crates-io] KRATE = { path =
//!    EXPORT/MEMBER }` (path dependencies of the crate inside the checkout,
//!    as tokio's on tokio-macros, come from the export too);
//! 3. `cargo update -p KRATE` unlocks the registry's copy so the patch takes
//!    its place; every other package stays as wsbench's lockfile has it,
//!    unless the patched crate needs another (retried `--offline` when no
//!    registry is reachable);
//! 4. the lockfile must now hold KRATE from that path: cargo leaves a patch
//!    unused (and builds the registry's copy) when its version is not one
//!    wsbench's requirement accepts, and that is an error naming the
//!    version, not a silent build of the wrong source.
//!
//! The build itself (step 4 of [`super::build`]) is the same: one shared
//! target directory, so only the patched crate and what depends on it are
//! compiled again. The export is removed once the binary is cached, and
//! kept after a failure (the compiler's messages point into it).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, ensure, Context, Result};

use super::cargo::{cargo, first_line, is_network_failure, run_logged};
use super::Pinned;

/// Steps 1 to 4 for `p` (version: a commit of the checkout `repo`, the
/// crate in its directory `member`). Returns whether the registry was out
/// of reach (the build then runs `--offline` too).
pub fn patch(
    p: &Pinned,
    (repo, member): (&Path, &str),
    export: &Path,
    scratch: &Path,
    root: &Path,
    log: &Path,
) -> Result<bool> {
    let _ = std::fs::remove_file(log);
    export_commit(repo, &p.version, export)?;
    let krate_dir = if member.is_empty() { export.to_path_buf() } else { export.join(member) };
    let manifest = scratch.join("Cargo.toml");
    let mut text =
        std::fs::read_to_string(&manifest).with_context(|| format!("cannot read `{}`", manifest.display()))?;
    text.push_str(&format!(
        "\n# The crate from a commit of a checkout.\n[patch.crates-io]\n{} = {{ path = {:?} }}\n",
        p.krate,
        krate_dir.display().to_string()
    ));
    std::fs::write(&manifest, text).with_context(|| format!("cannot write `{}`", manifest.display()))?;
    let update = |offline: bool| {
        let mut cmd = cargo(scratch, root);
        cmd.args(["update", "-p", p.krate]);
        if offline {
            cmd.arg("--offline");
        }
        run_logged(cmd, log)
    };
    let (mut ok, mut stderr) = update(false)?;
    let offline = !ok && is_network_failure(&stderr);
    if offline {
        (ok, stderr) = update(true)?;
    }
    if !ok {
        bail!(
            "{}: {} at this commit cannot be resolved with wsbench's other dependencies{}; cargo said: {} (cargo's \
             log: {})",
            p.row_name(),
            p.krate,
            if offline { " offline (no registry reachable)" } else { "" },
            first_line(&stderr, "error"),
            log.display()
        );
    }
    let lock = std::fs::read_to_string(scratch.join("Cargo.lock")).context("cannot read the patched lockfile")?;
    if !patched_from_path(&lock, p.krate) {
        let krate_manifest = std::fs::read_to_string(krate_dir.join("Cargo.toml")).unwrap_or_default();
        let version = package_field(&krate_manifest, "version").unwrap_or_else(|| "(not read)".to_string());
        bail!(
            "{}: {} at this commit is version {version}, which wsbench's requirement on {} (its workspace \
             Cargo.toml) does not accept, so cargo would build the registry's copy instead (cargo's log: {})",
            p.row_name(),
            p.krate,
            p.krate,
            log.display()
        );
    }
    Ok(offline)
}

/// Removes the export of a commit once its binary is cached.
pub fn remove_export(export: &Path) {
    let _ = std::fs::remove_dir_all(export);
}

/// Step 1: `git archive` of `commit` unpacked into `export` (made afresh).
fn export_commit(repo: &Path, commit: &str, export: &Path) -> Result<()> {
    if export.exists() {
        std::fs::remove_dir_all(export).with_context(|| format!("cannot remove `{}`", export.display()))?;
    }
    std::fs::create_dir_all(export).with_context(|| format!("cannot create `{}`", export.display()))?;
    let tar = export.with_extension("tar");
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["archive", "--format=tar", "-o"])
        .arg(&tar)
        .arg(commit)
        .output()
        .context("cannot start git; is it on PATH?")?;
    ensure!(
        out.status.success(),
        "cannot export commit {commit} of `{}`: git archive: {}",
        repo.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    let out = Command::new("tar").arg("-xf").arg(&tar).arg("-C").arg(export).output().context("cannot start tar")?;
    let _ = std::fs::remove_file(&tar);
    ensure!(
        out.status.success(),
        "cannot unpack commit {commit} into `{}`: tar: {}",
        export.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(())
}

/// Whether the lockfile text holds package `krate` from a path (a
/// `[[package]]` of that name without a `source`).
pub fn patched_from_path(lock: &str, krate: &str) -> bool {
    lock.split("[[package]]").skip(1).any(|block| {
        let block = block.split("\n[").next().unwrap_or(block);
        let keys: Vec<(&str, &str)> = block
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim().trim_matches('"')))
            .collect();
        keys.contains(&("name", krate)) && !keys.iter().any(|(k, _)| *k == "source")
    })
}

/// The string value of `key` in the `[package]` table of a Cargo.toml
/// (`name = "tokio"`); `None` when absent or not a plain string (e.g.
/// `version.workspace = true`).
pub fn package_field(manifest: &str, key: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        let Some((k, v)) = line.split_once('=') else { continue };
        if in_package && k.trim() == key {
            let v = v.trim();
            let quoted = v.strip_prefix('"')?;
            return Some(quoted[..quoted.find('"')?].to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_package_table_names_the_crate() {
        let tokio = "[package]\nname = \"tokio\"\n# comment\nversion = \"1.54.1\" # when released\nedition = \"2021\"\n\n[dependencies]\nname = \"not this\"\n";
        assert_eq!(package_field(tokio, "name").as_deref(), Some("tokio"));
        assert_eq!(package_field(tokio, "version").as_deref(), Some("1.54.1"));
        let workspace =
            "[workspace]\nmembers = [\"tokio\", \"tokio-util\"]\n\n[package]\nname= \"x\"\nversion.workspace = true\n";
        assert_eq!(package_field(workspace, "name").as_deref(), Some("x"));
        assert_eq!(package_field(workspace, "version"), None);
        assert_eq!(package_field("[workspace]\nmembers = [\"tokio\"]\n", "name"), None);
    }

    #[test]
    fn a_patch_is_used_when_the_package_has_no_source() {
        let registry = "version = 4\n\n[[package]]\nname = \"tokio\"\nversion = \"1.54.1\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\ndependencies = [\n \"mio\",\n]\n\n[[package]]\nname = \"tokio-macros\"\nversion = \"2.7.2\"\n";
        assert!(!patched_from_path(registry, "tokio"));
        assert!(patched_from_path(registry, "tokio-macros"), "no source: a path");
        let patched = "[[package]]\nname = \"tokio\"\nversion = \"1.54.1\"\ndependencies = [\n \"mio\",\n]\n\n[[patch.unused]]\nname = \"x\"\n";
        assert!(patched_from_path(patched, "tokio"));
        assert!(!patched_from_path(patched, "mio"));
    }
}
