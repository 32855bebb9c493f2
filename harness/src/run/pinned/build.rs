//! Building the binary of a versioned row, once.
//!
//! Steps, for `tokio@1.50.0` (`smol@V` pins `async-executor` the same way):
//! 1. the cache key is (crate, version, this wsbench's source: a hash of
//!    the files it is compiled from, so a commit and the same tree before
//!    it was committed share one build); a binary cached under
//!    `target/wsbench-refs/bin/` for it is used as it is;
//! 2. else a scratch crate under `target/wsbench-refs/src/KEY/`: a `main`
//!    that calls `wsbench::main` (the whole CLI, so the same child-process
//!    protocol), depending on this source tree's harness by path, with
//!    this workspace's `Cargo.lock` copied in;
//! 3. `cargo update -p tokio --precise 1.50.0` pins the one crate, every
//!    other dependency stays as locked; with no registry reachable it is
//!    retried `--offline` (cargo's local cache);
//! 4. `cargo build --release --locked` with `--cfg tokio_unstable`, into
//!    `target/wsbench-refs/target` (shared by every versioned build, so
//!    only what depends on the pinned crate is rebuilt), `WSBENCH_LOCKFILE`
//!    naming the scratch lockfile so the binary records its own versions;
//! 5. the binary is copied into the cache (write, then rename), with the
//!    seconds the build took (`KEY.secs`, for bisect's estimate).
//!
//! A commit of a local checkout (`bisect --path`) takes the same steps,
//! with step 3 patching the crate from an export of the commit instead
//! ([`super::checkout`]). A build that fails with a compiler error leaves
//! `KEY.failed` (the error) beside the cache, and the same key is not built
//! again: delete the file to retry.
//!
//! Each failure is named: a version that was never published, one the
//! rest of the dependency graph cannot take, one the workloads do not
//! compile against (with the first compiler error), no registry and
//! nothing cached. Cargo's full output is kept in `KEY.log` beside the
//! scratch crate.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::cargo::{cargo, first_line, is_network_failure, run_logged};
use super::{oldest_supported, Built, Pinned};

/// Whether versioned binaries are built with `--cfg tokio_unstable`.
pub const TOKIO_UNSTABLE: bool = true;
/// Overrides where versioned builds are cached (tests).
pub const REFS_DIR_ENV: &str = "WSBENCH_REFS_DIR";
/// The harness's source directory, compiled in.
const HARNESS_DIR: &str = env!("CARGO_MANIFEST_DIR");
/// Lines of the first compiler error shown.
const ERROR_LINES: usize = 12;

/// Where versioned builds live: `$WSBENCH_REFS_DIR`, else
/// `target/wsbench-refs` of this source tree.
pub fn refs_root() -> PathBuf {
    match std::env::var_os(REFS_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_dir().join("target").join("wsbench-refs"),
    }
}

/// The workspace around the harness's source.
fn workspace_dir() -> PathBuf {
    let harness = Path::new(HARNESS_DIR);
    harness.parent().unwrap_or(harness).to_path_buf()
}

/// The crates a versioned binary is compiled from.
const SOURCE_CRATES: [&str; 3] = ["harness", "workloads", "schedulers"];

/// The source's identity in the cache key: a hash of what the binary is
/// compiled from (each crate's `src/`, `build.rs` and `Cargo.toml`, the
/// workspace's `Cargo.toml` and `Cargo.lock`), so a commit and the same
/// tree uncommitted share a build, and any edit makes a new one.
pub fn source_id() -> Result<String> {
    let root = workspace_dir();
    let mut files = vec![root.join("Cargo.toml"), root.join("Cargo.lock")];
    for krate in SOURCE_CRATES {
        let dir = root.join(krate);
        files.extend([dir.join("Cargo.toml"), dir.join("build.rs")]);
        collect_files(&dir.join("src"), &mut files)?;
    }
    files.sort();
    let mut hasher = std::hash::DefaultHasher::new();
    for file in files.iter().filter(|f| f.is_file()) {
        file.strip_prefix(&root).unwrap_or(file).hash(&mut hasher);
        std::fs::read(file).with_context(|| format!("cannot read `{}`", file.display()))?.hash(&mut hasher);
    }
    Ok(format!("src{:016x}", hasher.finish()))
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read wsbench's source `{}`", dir.display()))?;
    for entry in entries {
        let path = entry.with_context(|| format!("cannot read `{}`", dir.display()))?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// A file-name-safe cache key.
fn cache_key(p: &Pinned, source: &str) -> String {
    let raw = format!("{}-{}-{source}", p.krate, p.version);
    raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect()
}

/// Whether `p` has a cached binary for this wsbench source, or a
/// recorded compiler error (then it is not built again either).
pub fn is_cached(p: &Pinned) -> Result<bool> {
    let bin = refs_root().join("bin").join(cache_key(p, &source_id()?));
    Ok(bin.is_file() || bin.with_extension("failed").is_file())
}

/// Where the pinned crate's source comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The registry: the pin's version is a published one.
    Registry,
    /// A commit of a local git checkout: the pin's version is the commit's
    /// full sha, the crate the package in directory `member` of `repo`
    /// (`""`: its root). See [`super::checkout`].
    Checkout {
        /// The checkout's top directory (only read: `git archive`).
        repo: PathBuf,
        /// The crate's directory in it.
        member: String,
    },
}

/// The cached binary of `p`, built first when there is none.
pub fn ensure_built(p: &Pinned, quiet: bool) -> Result<Built> {
    ensure_built_from(p, &Origin::Registry, quiet)
}

/// The cached binary of `p` from `origin`, built first when there is
/// none. A compiler error is recorded beside the cache (`KEY.failed`) and
/// given again without building; the seconds a build took are recorded
/// too (`KEY.secs`, for bisect's estimate).
pub fn ensure_built_from(p: &Pinned, origin: &Origin, quiet: bool) -> Result<Built> {
    let root = refs_root();
    let key = cache_key(p, &source_id()?);
    let (bin, lock) = (root.join("bin").join(&key), root.join("bin").join(format!("{key}.lock")));
    if bin.is_file() && lock.is_file() {
        let text = std::fs::read_to_string(&lock).with_context(|| format!("cannot read `{}`", lock.display()))?;
        return Ok(Built { bin, lock: text });
    }
    let failed = bin.with_extension("failed");
    if let Ok(why) = std::fs::read_to_string(&failed) {
        bail!("{why}\n(recorded: delete `{}` to build it again)", failed.display());
    }
    let scratch = root.join("src").join(&key);
    let log = root.join("src").join(format!("{key}.log"));
    if !quiet {
        eprintln!(
            "building {} {} reference, first use (a few minutes; cargo's log: {})",
            p.krate,
            p.version,
            log.display()
        );
    }
    let started = std::time::Instant::now();
    write_scratch(&scratch, &key)?;
    let export = root.join("checkouts").join(&key);
    let offline = match origin {
        Origin::Registry => pin_version(p, &scratch, &root, &log, &bin)?,
        Origin::Checkout { repo, member } => super::checkout::patch(p, (repo, member), &export, &scratch, &root, &log)?,
    };
    report_moved(p, &scratch, quiet);
    std::fs::create_dir_all(root.join("bin")).with_context(|| format!("cannot create `{}`", root.display()))?;
    compile(p, &scratch, &root, &log, offline, &failed)?;
    let built = root.join("target").join("release").join(bin_name(&key));
    let tmp = root.join("bin").join(format!("{key}.tmp"));
    std::fs::copy(&built, &tmp).with_context(|| format!("cannot copy `{}` into the cache", built.display()))?;
    let lock_text = std::fs::read_to_string(scratch.join("Cargo.lock")).context("cannot read the pinned lockfile")?;
    std::fs::write(&lock, &lock_text).with_context(|| format!("cannot write `{}`", lock.display()))?;
    std::fs::rename(&tmp, &bin).with_context(|| format!("cannot move the build to `{}`", bin.display()))?;
    let secs = format!("{:.1}\n", started.elapsed().as_secs_f64());
    std::fs::write(bin.with_extension("secs"), secs).context("cannot record the build time")?;
    super::checkout::remove_export(&export);
    Ok(Built { bin, lock: lock_text })
}

/// Seconds every build recorded so far took (`KEY.secs`).
pub fn recorded_build_s() -> Vec<f64> {
    let Ok(entries) = std::fs::read_dir(refs_root().join("bin")) else { return Vec::new() };
    let secs = entries.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "secs"));
    secs.filter_map(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok()).collect()
}

/// Names the packages the pin moved from wsbench's lockfile.
fn report_moved(p: &Pinned, scratch: &Path, quiet: bool) {
    let workspace_lock = std::fs::read_to_string(workspace_dir().join("Cargo.lock")).unwrap_or_default();
    let pinned_lock = std::fs::read_to_string(scratch.join("Cargo.lock")).unwrap_or_default();
    let moved = crate::run::lockfile::moved(&workspace_lock, &pinned_lock);
    if !quiet && !moved.is_empty() {
        eprintln!(
            "pinned {} {} with these packages moved from wsbench's lockfile: {}",
            p.krate,
            p.version,
            moved.join(", ")
        );
    }
}

fn bin_name(key: &str) -> String {
    format!("wsbench-ref-{key}")
}

/// Step 2: the scratch crate.
fn write_scratch(scratch: &Path, key: &str) -> Result<()> {
    let harness = Path::new(HARNESS_DIR);
    let workspace_lock = workspace_dir().join("Cargo.lock");
    if !workspace_lock.is_file() {
        bail!(
            "a versioned row is built from wsbench's source tree, and `{}` is not there (this binary was built \
             elsewhere); run it from a checkout, or drop the @VERSION rows",
            workspace_lock.display()
        );
    }
    std::fs::create_dir_all(scratch).with_context(|| format!("cannot create `{}`", scratch.display()))?;
    let manifest = format!(
        "# Written by wsbench: the binary of a versioned reference row.\n\
         [package]\nname = \"wsbench-ref\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [[bin]]\nname = \"{}\"\npath = \"main.rs\"\n\n\
         [dependencies]\nwsbench = {{ path = {:?} }}\n\n\
         # Not part of the workspace around it.\n[workspace]\n\n\
         # As the workspace's own release profile.\n[profile.release]\ndebug = 1\n",
        bin_name(key),
        harness.display().to_string()
    );
    let main = "//! Written by wsbench: the whole CLI, built against a pinned runtime.\n\
                fn main() -> std::process::ExitCode {\n    wsbench::main()\n}\n";
    let write = |name: &str, text: &str| {
        let path = scratch.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write `{}`", path.display()))
    };
    write("Cargo.toml", &manifest)?;
    write("main.rs", main)?;
    std::fs::copy(&workspace_lock, scratch.join("Cargo.lock"))
        .with_context(|| format!("cannot copy `{}`", workspace_lock.display()))?;
    Ok(())
}

/// At most this many packages that depend on the pinned crate are moved
/// to fit it (step 3b) before the version counts as excluded.
const MAX_MOVED: usize = 8;

/// Step 3. Returns whether the registry was out of reach (then the build
/// runs `--offline` too).
fn pin_version(p: &Pinned, scratch: &Path, root: &Path, log: &Path, bin: &Path) -> Result<bool> {
    let _ = std::fs::remove_file(log);
    let precise = |offline: bool| {
        let mut cmd = cargo(scratch, root);
        cmd.args(["update", "-p", p.krate, "--precise", &p.version]);
        if offline {
            cmd.arg("--offline");
        }
        run_logged(cmd, log)
    };
    let (ok, online_err) = precise(false)?;
    if ok {
        return Ok(false);
    }
    if !is_network_failure(&online_err) {
        move_dependents(p, scratch, root, log, &online_err, false)?;
        return Ok(false);
    }
    let (ok, offline_err) = precise(true)?;
    if ok {
        return Ok(true);
    }
    if blocker(&offline_err).is_some() && !is_unpublished(&offline_err) {
        move_dependents(p, scratch, root, log, &offline_err, true)?;
        return Ok(true);
    }
    bail!(
        "{}: no registry reachable and nothing cached: cargo could not reach the crates.io registry ({}), there \
         is no cached build for this wsbench source (`{}`), and cargo's local cache cannot supply it offline ({}); \
         connect to the registry once, or drop the row (cargo's log: {})",
        p.row_name(),
        first_line(&online_err, "error"),
        bin.display(),
        first_line(&offline_err, "error"),
        log.display()
    )
}

/// The package whose requirement excluded the version: the first
/// `required by package `NAME vX`` line of cargo's error.
fn blocker(stderr: &str) -> Option<String> {
    let line = stderr.lines().map(str::trim).find(|l| l.starts_with("required by package `"))?;
    let name = line.strip_prefix("required by package `")?.split(' ').next()?;
    Some(name.to_string())
}

/// Step 3b, when a package that depends on the pinned crate requires a
/// newer one (tokio-util 0.7.20 needs tokio ^1.51): the pinned crate
/// becomes an exact requirement of the scratch crate, and cargo moves the
/// packages its errors name (and only those) to versions that fit it,
/// each found in turn.
fn move_dependents(p: &Pinned, scratch: &Path, root: &Path, log: &Path, first: &str, offline: bool) -> Result<()> {
    if is_unpublished(first) || blocker(first).is_none() {
        return Err(version_error(p, first, log));
    }
    let manifest = scratch.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).with_context(|| format!("cannot read `{}`", manifest.display()))?;
    let exact = format!("{} = {{ version = \"={}\", default-features = false }}\n", p.krate, p.version);
    let text = text.replacen("[dependencies]\n", &format!("[dependencies]\n{exact}"), 1);
    std::fs::write(&manifest, text).with_context(|| format!("cannot write `{}`", manifest.display()))?;
    let mut unlocked = vec![p.krate.to_string()];
    let mut err = first.to_string();
    while let Some(next) = blocker(&err).filter(|b| !unlocked.contains(b) && unlocked.len() <= MAX_MOVED) {
        unlocked.push(next);
        let mut cmd = cargo(scratch, root);
        cmd.arg("update");
        for name in &unlocked {
            cmd.args(["-p", name]);
        }
        if offline {
            cmd.arg("--offline");
        }
        let (ok, stderr) = run_logged(cmd, log)?;
        if ok {
            return Ok(());
        }
        err = stderr;
    }
    Err(version_error(p, &err, log))
}

/// Step 4. A compiler error is recorded in `failed` (a build killed or out
/// of disk has none, and is tried again next time).
fn compile(p: &Pinned, scratch: &Path, root: &Path, log: &Path, offline: bool, failed: &Path) -> Result<()> {
    let mut cmd = cargo(scratch, root);
    cmd.args(["build", "--release", "--locked"]).env("WSBENCH_LOCKFILE", scratch.join("Cargo.lock"));
    if TOKIO_UNSTABLE {
        cmd.env("RUSTFLAGS", "--cfg tokio_unstable");
    }
    if offline {
        cmd.arg("--offline");
    }
    let (ok, stderr) = run_logged(cmd, log)?;
    if ok {
        return Ok(());
    }
    if is_network_failure(&stderr) {
        bail!(
            "{}: no registry reachable and nothing cached: cargo could not download its crates ({}); connect to \
             the registry once (cargo's log: {})",
            p.row_name(),
            first_line(&stderr, "error"),
            log.display()
        );
    }
    let why = format!(
        "{}: the workloads do not compile against {} {}{}; the first compiler error:\n{}\n(cargo's log: {})",
        p.row_name(),
        p.krate,
        p.version,
        if super::is_exact_version(&p.version) {
            format!(" (the oldest supported is {}, see `wsbench list`)", oldest_supported(p.krate))
        } else {
            String::new()
        },
        first_compiler_error(&stderr),
        log.display()
    );
    if has_compiler_error(&stderr) {
        std::fs::write(failed, &why).with_context(|| format!("cannot write `{}`", failed.display()))?;
    }
    bail!("{why}")
}

/// Why `cargo update --precise` refused a version it could query.
fn version_error(p: &Pinned, stderr: &str, log: &Path) -> anyhow::Error {
    let mut cause = first_line(stderr, "error");
    if let Some(by) = stderr.lines().map(str::trim).find(|l| l.starts_with("required by package")) {
        cause = format!("{cause}, {by}");
    }
    if is_unpublished(stderr) {
        anyhow::anyhow!(
            "{}: {} {} is not a published version (cargo: {}); see the versions that exist with `cargo info {}` or \
             https://crates.io/crates/{}/versions",
            p.row_name(),
            p.krate,
            p.version,
            first_line(stderr, "error"),
            p.krate,
            p.krate
        )
    } else {
        anyhow::anyhow!(
            "{}: {} {} cannot be resolved with wsbench's other dependencies (the oldest supported is {}); cargo \
             said: {cause} (cargo's log: {})",
            p.row_name(),
            p.krate,
            p.version,
            oldest_supported(p.krate),
            log.display()
        )
    }
}

/// Whether cargo's stderr says the version was never published (`cargo
/// update --precise` of a version the index does not hold), rather than
/// that another requirement excludes it ("failed to select a version for
/// the requirement ..., candidate versions found which didn't match").
pub fn is_unpublished(stderr: &str) -> bool {
    let text = stderr.to_ascii_lowercase();
    text.contains("no matching package named") && !text.contains("candidate versions found")
}

/// Whether `line` starts a compiler error (`error[E...]` or `error:`,
/// not cargo's closing `error: could not compile`).
fn is_compiler_error(line: &str) -> bool {
    line.starts_with("error[") || (line.starts_with("error:") && !line.starts_with("error: could not compile"))
}

/// Whether cargo's stderr holds a compiler error.
pub fn has_compiler_error(stderr: &str) -> bool {
    stderr.lines().any(is_compiler_error)
}

/// The first compiler error: its `error[...]`/`error:` line and the lines
/// after it up to the next blank line, at most [`ERROR_LINES`].
pub fn first_compiler_error(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let Some(start) = lines.iter().position(|l| is_compiler_error(l)) else { return first_line(stderr, "error") };
    let block: Vec<&str> =
        lines[start..].iter().take_while(|l| !l.trim().is_empty()).take(ERROR_LINES).copied().collect();
    block.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_key_names_crate_version_and_source() {
        let p = Pinned { sched: "tokio", krate: "tokio", version: "1.0.0-alpha.1".into() };
        assert_eq!(cache_key(&p, "src0123456789abcdef"), "tokio-1-0-0-alpha-1-src0123456789abcdef");
        let id = source_id().unwrap();
        assert_eq!(id, source_id().unwrap(), "the same tree, the same key");
        assert!(id.len() == 19 && id.starts_with("src"), "{id}");
    }

    #[test]
    fn the_first_compiler_error_is_its_block() {
        let stderr = "   Compiling tokio v1.30.0\nwarning: unused\n\nerror[E0599]: no method named `worker_park_unpark_count`\n  --> workloads/src/rt/tokio_rt.rs:287:60\n   |\n\nerror[E0599]: another\n\nerror: could not compile `wsbench-workloads`\n";
        assert_eq!(
            first_compiler_error(stderr),
            "error[E0599]: no method named `worker_park_unpark_count`\n  --> workloads/src/rt/tokio_rt.rs:287:60\n   |"
        );
        assert_eq!(first_compiler_error("error: could not compile `x`\n"), "error: could not compile `x`");
    }

    #[test]
    fn cargo_messages_are_told_apart() {
        // cargo 1.95's words, from `cargo update -p tokio --precise V` in
        // the scratch crate (dead registry; 1.99.0; 1.0.0).
        let dead = "error: failed to get `wsbench` as a dependency of package `wsbench-ref`\n\nCaused by:\n  failed to query replaced source registry `crates-io`\n\nCaused by:\n  [7] Couldn't connect to server";
        assert!(is_network_failure(dead) && !is_unpublished(dead));
        let missing = "    Updating crates.io index\nerror: no matching package named `tokio` found\nlocation searched: crates.io index\nrequired by package `wsbench-workloads v0.1.0 (/w/workloads)`";
        assert!(is_unpublished(missing) && !is_network_failure(missing));
        let excluded = "error: failed to select a version for the requirement `tokio = \"^1.13\"`\ncandidate versions found which didn't match: 1.0.0\nlocation searched: crates.io index\nrequired by package `hyper-util v0.1.21`";
        assert!(!is_unpublished(excluded) && !is_network_failure(excluded));
        assert_eq!(first_line("\n  warning: x\nerror: boom\n", "error"), "error: boom");
        assert_eq!(first_line("\n  just this\n", "error"), "just this");
    }
}
