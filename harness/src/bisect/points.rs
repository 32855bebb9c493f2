//! The points of a range and their binaries.
//!
//! - **Published versions** (`--sched tokio --good 1.49.0 --bad 1.52.1`):
//!   the crate's versions from the registry's sparse index
//!   (`https://index.crates.io`, through `curl`; without it, cargo's own
//!   cached copy of that index file), between the ends in semver order,
//!   without pre-releases and yanked versions. Each is built once by the
//!   version rows' cache ([`crate::run::pinned::build`]): the whole CLI
//!   against that version, so the point's binary runs `--sched tokio`.
//! - **Commits** of the git repository around the current directory: the
//!   first-parent commits from good to bad. Each is built in its own
//!   `git worktree` under `target/wsbench-bisect/worktrees/` (the working
//!   tree is never touched) with `cargo build --release --locked -p
//!   wsbench`, one shared target directory, and the binary cached by
//!   commit under `target/wsbench-bisect/bin/SHA` (a commit that does not
//!   build leaves `SHA.failed` with its first compiler error, so it is not
//!   rebuilt either). A second bisect over the same commits builds nothing.
//! - **Commits of a runtime checkout** (`--path ../tokio`): the same
//!   first-parent commits, of that repository ([`super::checkout`]); each
//!   is built by the version rows' builder against a `git archive` export
//!   of the commit, cached under `target/wsbench-refs/` by (crate, commit,
//!   wsbench source).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};

use super::checkout::{self, Checkout};
use super::git::{git, resolve};
use crate::run::pinned::build::{
    self, ensure_built, ensure_built_from, first_compiler_error, is_cached, refs_root, Origin,
};
use crate::run::pinned::{is_exact_version, Pinned, PINNABLE};

/// The registry's sparse index.
const SPARSE_INDEX: &str = "https://index.crates.io";
/// Seconds `curl` may take for one index file.
const INDEX_TIMEOUT_S: &str = "30";

/// One point of a range.
#[derive(Debug, Clone)]
pub struct Point {
    /// The version, or the commit's full sha.
    pub id: String,
    /// How messages name it: the version, or the sha's first 10 digits.
    pub label: String,
    /// The commit's subject; blank for a version.
    pub about: String,
}

/// A range: what its points are and how they are built.
#[derive(Debug)]
pub enum Range {
    /// Published versions of `pin.krate`.
    Versions {
        /// The reference (its `--sched` name and crate).
        sched: &'static str,
        /// The crate pinned.
        krate: &'static str,
    },
    /// Commits of the repository at `repo`.
    Commits {
        /// The repository's top directory.
        repo: PathBuf,
    },
    /// Commits of a reference runtime's checkout (`--path`).
    Checkout(Checkout),
}

/// Which kind of range `--good`/`--bad` name for `--sched sched` (and
/// `--path`, when given).
pub fn kind(sched: &str, good: &str, bad: &str, path: Option<&Path>) -> Result<Range> {
    if let Some(path) = path {
        return Ok(Range::Checkout(checkout::open(path, sched, bad)?));
    }
    let pinnable = PINNABLE.iter().find(|p| p.sched == sched);
    match pinnable {
        Some(p) if is_exact_version(good) || is_exact_version(bad) => {
            for (flag, v) in [("--good", good), ("--bad", bad)] {
                ensure!(
                    is_exact_version(v),
                    "{flag} `{v}` is not an exact version, and the other end is one; allowed: two published {} \
                     versions (MAJOR.MINOR.PATCH) or two commits",
                    p.krate
                );
            }
            Ok(Range::Versions { sched: p.sched, krate: p.krate })
        }
        _ => Ok(Range::Commits { repo: repo_around(Path::new("."))? }),
    }
}

impl Range {
    /// `versions`, `commits` or `checkout` (the JSON report's kind).
    pub fn name(&self) -> &'static str {
        match self {
            Range::Versions { .. } => "versions",
            Range::Commits { .. } => "commits",
            Range::Checkout(_) => "checkout",
        }
    }

    /// What the points are, for the headline.
    pub fn title(&self) -> String {
        match self {
            Range::Versions { krate, .. } => format!("versions of {krate}"),
            Range::Commits { .. } => "commits".to_string(),
            Range::Checkout(c) => format!("commits of {} in `{}`", c.krate, c.repo.display()),
        }
    }

    /// Every point, the good end first and the bad end last.
    pub fn points(&self, good: &str, bad: &str) -> Result<Vec<Point>> {
        match self {
            Range::Versions { krate, .. } => versions(krate, good, bad),
            Range::Commits { repo } => commits(repo, good, bad),
            Range::Checkout(c) => commits(&c.repo, good, bad),
        }
    }

    /// Where the bisect keeps its runs and results (and, for commits of
    /// this repository, its builds).
    pub fn work_dir(&self) -> PathBuf {
        match self {
            Range::Versions { .. } | Range::Checkout(_) => refs_root().with_file_name("wsbench-bisect"),
            Range::Commits { repo } => repo.join("target").join("wsbench-bisect"),
        }
    }

    /// Whether `point` is built already.
    pub fn is_built(&self, point: &Point) -> bool {
        match self {
            Range::Versions { sched, krate } => is_cached(&pinned(*sched, *krate, point)).unwrap_or(false),
            Range::Checkout(c) => is_cached(&c.pinned(&point.id)).unwrap_or(false),
            Range::Commits { .. } => {
                let bin = self.work_dir().join("bin").join(&point.id);
                bin.is_file() || bin.with_extension("failed").is_file()
            }
        }
    }

    /// The binary of `point`, built first when there is none; an error
    /// says why it does not build.
    pub fn build(&self, point: &Point) -> Result<PathBuf> {
        match self {
            Range::Versions { sched, krate } => Ok(ensure_built(&pinned(*sched, *krate, point), false)?.bin),
            Range::Commits { repo } => build_commit(repo, &self.work_dir(), point),
            Range::Checkout(c) => {
                let origin = Origin::Checkout { repo: c.repo.clone(), member: c.member.clone() };
                Ok(ensure_built_from(&c.pinned(&point.id), &origin, false)?.bin)
            }
        }
    }

    /// Seconds the builds of this kind recorded so far took.
    pub fn recorded_build_s(&self) -> Vec<f64> {
        let Range::Commits { .. } = self else { return build::recorded_build_s() };
        let Ok(entries) = std::fs::read_dir(self.work_dir().join("bin")) else { return Vec::new() };
        let secs = entries.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "secs"));
        secs.filter_map(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok()).collect()
    }
}

// ---- published versions ----

fn pinned(sched: &'static str, krate: &'static str, point: &Point) -> Pinned {
    Pinned { sched, krate, version: point.id.clone() }
}

/// The index file's path for `krate` (cargo's layout: `1/a`, `2/ab`,
/// `3/a/abc`, `to/ki/tokio`).
fn index_path(krate: &str) -> String {
    match krate.len() {
        1 => format!("1/{krate}"),
        2 => format!("2/{krate}"),
        3 => format!("3/{}/{krate}", &krate[..1]),
        _ => format!("{}/{}/{krate}", &krate[..2], &krate[2..4]),
    }
}

/// The index file of `krate`: from the registry, else cargo's cached copy.
fn index_file(krate: &str) -> Result<String> {
    let url = format!("{SPARSE_INDEX}/{}", index_path(krate));
    let curl = Command::new("curl").args(["-sSfL", "--max-time", INDEX_TIMEOUT_S, &url]).output();
    let online_err = match curl {
        Ok(out) if out.status.success() => return Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
        Err(e) => format!("cannot start curl: {e}"),
    };
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let cached = home.and_then(|h| std::fs::read_dir(h.join("registry").join("index")).ok()).and_then(|dirs| {
        dirs.flatten().find_map(|d| std::fs::read(d.path().join(".cache").join(index_path(krate))).ok())
    });
    match cached {
        Some(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        None => bail!(
            "no registry reachable: the versions of {krate} come from {url} ({online_err}), and cargo's local index \
             cache has no copy; connect to the registry once"
        ),
    }
}

/// (version, yanked) of every entry of an index file (JSON lines; cargo's
/// cache separates them with NUL bytes).
fn published(text: &str) -> Vec<(String, bool)> {
    let entries = text.split(['\n', '\0']).filter(|l| l.trim_start().starts_with('{'));
    entries
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| Some((v.get("vers")?.as_str()?.to_string(), v.get("yanked").and_then(|y| y.as_bool())?)))
        .collect()
}

/// A release version's order: (major, minor, patch); `None` for a
/// pre-release or a malformed one.
fn release_key(version: &str) -> Option<(u64, u64, u64)> {
    let core = version.split('+').next()?;
    if core.contains('-') {
        return None;
    }
    let mut parts = core.split('.').map(|n| n.parse::<u64>().ok());
    let key = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(key)
}

fn versions(krate: &str, good: &str, bad: &str) -> Result<Vec<Point>> {
    let all = published(&index_file(krate)?);
    between_versions(krate, &all, good, bad)
}

/// The points of a version range from the registry's entries.
pub fn between_versions(krate: &str, all: &[(String, bool)], good: &str, bad: &str) -> Result<Vec<Point>> {
    let mut releases: Vec<((u64, u64, u64), &str)> =
        all.iter().filter(|(_, yanked)| !yanked).filter_map(|(v, _)| Some((release_key(v)?, v.as_str()))).collect();
    releases.sort();
    let span = match (releases.first(), releases.last()) {
        (Some(a), Some(b)) => format!("{} .. {}", a.1, b.1),
        _ => "none".to_string(),
    };
    let mut ends = Vec::new();
    for (flag, v) in [("--good", good), ("--bad", bad)] {
        let listed = all.iter().find(|(x, _)| x == v);
        ensure!(
            listed.is_some(),
            "{flag} `{v}` is not a published version of {krate} (the registry has {span}, without pre-releases and \
             yanked versions)"
        );
        ensure!(
            listed.is_some_and(|(_, yanked)| !yanked) && release_key(v).is_some(),
            "{flag} `{v}` is a yanked or pre-release version of {krate}; allowed: a release ({span})"
        );
        ends.push(release_key(v).expect("checked above"));
    }
    ensure!(ends[0] != ends[1], "--good and --bad are the same version `{good}`: there is nothing to bisect");
    ensure!(
        ends[0] < ends[1],
        "--good `{good}` comes after --bad `{bad}`; allowed: a good version older than the bad one"
    );
    let inside: Vec<&str> = releases.iter().filter(|(k, _)| *k > ends[0] && *k < ends[1]).map(|(_, v)| *v).collect();
    ensure!(
        !inside.is_empty(),
        "no published {krate} release lies between {good} and {bad}: the first bad version is {bad}, nothing to bisect"
    );
    let point = |v: &str| Point { id: v.to_string(), label: v.to_string(), about: String::new() };
    Ok(std::iter::once(good).chain(inside).chain(std::iter::once(bad)).map(point).collect())
}

// ---- commits ----

/// The top directory of the git repository around `dir`.
fn repo_around(dir: &Path) -> Result<PathBuf> {
    let here = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let (ok, top, err) = git(&here, &["rev-parse", "--show-toplevel"])?;
    ensure!(
        ok && !top.is_empty(),
        "`{}` is not in a git repository (git: {err}); commits are bisected in the repository around the current \
         directory, and published versions need --sched {} with versions as --good/--bad",
        here.display(),
        PINNABLE.iter().map(|p| p.sched).collect::<Vec<_>>().join("|")
    );
    Ok(PathBuf::from(top))
}

fn is_ancestor(repo: &Path, a: &str, b: &str) -> Result<bool> {
    Ok(git(repo, &["merge-base", "--is-ancestor", a, b])?.0)
}

fn commits(repo: &Path, good: &str, bad: &str) -> Result<Vec<Point>> {
    let (g, b) = (resolve(repo, "--good", good)?, resolve(repo, "--bad", bad)?);
    ensure!(g != b, "--good `{good}` and --bad `{bad}` are the same commit {g}: there is nothing to bisect");
    if !is_ancestor(repo, &g, &b)? {
        if is_ancestor(repo, &b, &g)? {
            bail!(
                "--good `{good}` comes after --bad `{bad}`; allowed: a good commit that is an ancestor of the bad one"
            );
        }
        bail!("--good `{good}` is not an ancestor of --bad `{bad}`; allowed: a good commit that is an ancestor of the bad one");
    }
    let range = format!("{g}..{b}");
    let (ok, log, err) =
        git(repo, &["log", "--reverse", "--first-parent", "--ancestry-path", "--format=%H %s", &range])?;
    ensure!(ok, "git log {range} failed: {err}");
    let mut points: Vec<Point> = log.lines().filter_map(commit_point).collect();
    let good_point = git(repo, &["log", "-1", "--format=%H %s", &g])?.1;
    points.insert(0, commit_point(&good_point).context("git log printed no commit")?);
    ensure!(
        points.len() > 2,
        "no commit lies between --good `{good}` and --bad `{bad}`: the first bad commit is {b}, nothing to bisect"
    );
    Ok(points)
}

fn commit_point(line: &str) -> Option<Point> {
    let (sha, subject) = line.split_once(' ').unwrap_or((line, ""));
    (sha.len() >= 40).then(|| Point { id: sha.to_string(), label: sha[..10].to_string(), about: subject.to_string() })
}

/// Builds `point` in a worktree of its own; the binary is cached by commit.
fn build_commit(repo: &Path, work: &Path, point: &Point) -> Result<PathBuf> {
    let bins = work.join("bin");
    let bin = bins.join(&point.id);
    let failed = bin.with_extension("failed");
    if bin.is_file() {
        return Ok(bin);
    }
    if let Ok(why) = std::fs::read_to_string(&failed) {
        bail!("{why} (cached: delete `{}` to try again)", failed.display());
    }
    std::fs::create_dir_all(&bins).with_context(|| format!("cannot create `{}`", bins.display()))?;
    let tree = work.join("worktrees").join(&point.id);
    let tree_text = tree.display().to_string();
    if tree.exists() {
        git(repo, &["worktree", "remove", "--force", &tree_text])?;
    }
    let (ok, _, err) = git(repo, &["worktree", "add", "--force", "--detach", &tree_text, &point.id])?;
    ensure!(ok, "cannot make a worktree of {} at `{tree_text}`: {err}", point.label);
    eprintln!("building {} {} (cargo build --release in {tree_text})", point.label, point.about);
    let started = Instant::now();
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(program)
        .current_dir(&tree)
        .args(["build", "--release", "--locked", "-p", "wsbench", "--bin", "wsbench"])
        .env("CARGO_TARGET_DIR", work.join("target"))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .context("cannot start cargo; is it on PATH?")?;
    let secs = started.elapsed().as_secs_f64();
    let _ = git(repo, &["worktree", "remove", "--force", &tree_text]);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = format!("{} does not build: {}", point.label, first_compiler_error(&stderr));
        std::fs::write(&failed, &why).with_context(|| format!("cannot write `{}`", failed.display()))?;
        bail!("{why}");
    }
    let built = work.join("target").join("release").join("wsbench");
    let tmp = bin.with_extension("tmp");
    std::fs::copy(&built, &tmp).with_context(|| format!("cannot copy `{}`", built.display()))?;
    std::fs::rename(&tmp, &bin).with_context(|| format!("cannot move the build to `{}`", bin.display()))?;
    std::fs::write(bin.with_extension("secs"), format!("{secs:.1}\n")).context("cannot record the build time")?;
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[(&str, bool)]) -> Vec<(String, bool)> {
        list.iter().map(|&(v, y)| (v.to_string(), y)).collect()
    }

    #[test]
    fn index_paths_follow_cargos_layout() {
        assert_eq!(index_path("tokio"), "to/ki/tokio");
        assert_eq!(index_path("async-executor"), "as/yn/async-executor");
        assert_eq!(index_path("abc"), "3/a/abc");
        assert_eq!((index_path("ab"), index_path("a")), ("2/ab".to_string(), "1/a".to_string()));
    }

    #[test]
    fn index_lines_and_cargos_cache_both_read() {
        let text = "{\"name\":\"tokio\",\"vers\":\"1.49.0\",\"yanked\":false}\n{\"name\":\"tokio\",\"vers\":\"1.50.0\",\"yanked\":true}\n";
        let cache = "\u{3}\0etag\01.49.0\0{\"name\":\"tokio\",\"vers\":\"1.49.0\",\"yanked\":false}\0";
        assert_eq!(published(text), entries(&[("1.49.0", false), ("1.50.0", true)]));
        assert_eq!(published(cache), entries(&[("1.49.0", false)]));
    }

    #[test]
    fn the_versions_between_are_releases_in_semver_order() {
        let all = entries(&[
            ("1.52.1", false),
            ("1.10.0", false),
            ("1.9.0", false),
            ("1.50.0-rc.1", false),
            ("1.50.0", true),
            ("1.51.0", false),
            ("1.49.0", false),
            ("1.52.0", false),
        ]);
        let ids = |v: Vec<Point>| v.into_iter().map(|p| p.id).collect::<Vec<_>>();
        assert_eq!(
            ids(between_versions("tokio", &all, "1.49.0", "1.52.1").unwrap()),
            ["1.49.0", "1.51.0", "1.52.0", "1.52.1"]
        );
        assert_eq!(ids(between_versions("tokio", &all, "1.9.0", "1.49.0").unwrap()), ["1.9.0", "1.10.0", "1.49.0"]);
        let err = |g: &str, b: &str| format!("{:#}", between_versions("tokio", &all, g, b).unwrap_err());
        assert!(err("1.99.0", "1.52.1")
            .contains("--good `1.99.0` is not a published version of tokio (the registry has 1.9.0 .. 1.52.1"));
        assert!(err("1.49.0", "1.50.0").contains("--bad `1.50.0` is a yanked or pre-release version"));
        assert!(err("1.51.0", "1.51.0").contains("same version"));
        assert!(err("1.52.1", "1.49.0").contains("--good `1.52.1` comes after --bad `1.49.0`"));
        assert!(err("1.51.0", "1.52.0").contains("no published tokio release lies between 1.51.0 and 1.52.0"));
    }
}
