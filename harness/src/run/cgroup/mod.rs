//! CPU quotas and cpusets per run (`--cpus`, `--cpuset`): the one place
//! wsbench creates, fills, reads and removes cgroups. `run` (each run's
//! child process), `serve` and `load` (this process, for its life) and the
//! probe behind `--workers auto` all go through it.
//!
//! Layout: a parent cgroup wsbench owns, `wsbench` under each hierarchy's
//! root ([`PARENT_ENV`] names another, e.g. a subtree delegated to a user),
//! and under it one cgroup per run, `run-<pid>-<n>` (`pid` = the wsbench
//! that made it). Versions:
//! - **v2** (`cgroup2`), used when its root offers the cpu controller (and
//!   cpuset, for `--cpuset`): the controllers are enabled in the root's and
//!   the parent's `cgroup.subtree_control`; a run's cgroup gets `cpu.max`
//!   (`QUOTA PERIOD`, or `max PERIOD`) and `cpuset.cpus`;
//! - **v1**, otherwise, when the `cpu` (and `cpuset`) hierarchies are
//!   mounted: `cpu.cfs_period_us` / `cpu.cfs_quota_us` (-1 = none) in the
//!   cpu hierarchy; `cpuset.cpus` / `cpuset.mems` in the cpuset hierarchy
//!   (the parent copies the root's, as v1 requires before any task joins).
//!
//! Every run's cgroup is in the cpu hierarchy (with no quota when only
//! `--cpuset` is given), so its `cpu.stat` always gives the throttling
//! columns. A run's cgroup is removed when its [`Group`] drops: after the
//! child was reaped, whether it exited, crashed or was killed by the
//! watchdog. A `run-<pid>-*` cgroup whose wsbench is gone (killed before it
//! could remove it) is removed by the next wsbench that opens the parent.

pub mod columns;
pub mod limits;

use std::fs;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{bail, Context, Result};
pub use limits::Limits;

/// The CFS period every quota is set over, in µs (the kernel's default).
pub const PERIOD_US: u64 = 100_000;
/// The parent cgroup's path below each hierarchy's root [default: `wsbench`].
pub const PARENT_ENV: &str = "WSBENCH_CGROUP_PARENT";
/// Test hook: read this file instead of `/proc/self/mountinfo`.
pub const MOUNTINFO_ENV: &str = "WSBENCH_CGROUP_MOUNTINFO";
/// Set for a run's child: its cgroup's `cpu.stat`, for the throttling columns.
pub const CPU_STAT_ENV: &str = "WSBENCH_CGROUP_CPU_STAT";
/// The hidden subcommand of the probe ([`probe`]).
pub const PROBE_SUBCOMMAND: &str = "__cgroup-probe";
/// How long removing a just-emptied cgroup is retried (the kernel may
/// report it busy for a moment after its last task was reaped).
const REMOVE_RETRY: Duration = Duration::from_millis(500);

/// Which cgroup version holds the runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The legacy per-controller hierarchies.
    V1,
    /// The unified hierarchy.
    V2,
}

impl Version {
    /// The `cgroup` column: `v1` or `v2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "v1",
            Version::V2 => "v2",
        }
    }
}

/// Where the hierarchies are mounted.
#[derive(Debug, Default, PartialEq)]
struct Mounts {
    v2: Option<PathBuf>,
    v1_cpu: Option<PathBuf>,
    v1_cpuset: Option<PathBuf>,
}

/// Reads the cgroup mounts out of `/proc/self/mountinfo`'s form.
fn parse_mountinfo(text: &str) -> Mounts {
    let mut m = Mounts::default();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else { continue };
        let (Some(point), mut rest) = (left.split(' ').nth(4), right.split(' ')) else { continue };
        let (fstype, _source, options) = (rest.next(), rest.next(), rest.next().unwrap_or(""));
        let point = PathBuf::from(point);
        match fstype {
            Some("cgroup2") if m.v2.is_none() => m.v2 = Some(point),
            Some("cgroup") => {
                let has = |c: &str| options.split(',').any(|o| o == c);
                if has("cpu") && m.v1_cpu.is_none() {
                    m.v1_cpu = Some(point.clone());
                }
                if has("cpuset") && m.v1_cpuset.is_none() {
                    m.v1_cpuset = Some(point);
                }
            }
            _ => {}
        }
    }
    m
}

fn read_mounts() -> Result<Mounts> {
    let path = std::env::var_os(MOUNTINFO_ENV).map_or_else(|| PathBuf::from("/proc/self/mountinfo"), PathBuf::from);
    let text = fs::read_to_string(&path).with_context(|| format!("cannot read `{}`", path.display()))?;
    Ok(parse_mountinfo(&text))
}

fn parent_name() -> String {
    std::env::var(PARENT_ENV).ok().filter(|p| !p.trim().is_empty()).unwrap_or_else(|| "wsbench".to_string())
}

/// Is `e` the kernel refusing this user?
fn denied(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem) || e.raw_os_error() == Some(1)
}

/// The error for a cgroup file or directory this process may not write.
fn no_permission(path: &Path, e: &std::io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "no permission to write the cgroup `{}` ({e}): --cpus and --cpuset need root, or a cgroup subtree delegated to \
         this user (v2: a directory whose cgroup.procs and cgroup.subtree_control this user owns; v1: directories this \
         user owns in the cpu and cpuset hierarchies), named relative to the hierarchy's root with {PARENT_ENV}",
        path.display()
    )
}

/// Writes `value` to a cgroup file, naming the file and value on failure.
fn write(path: &Path, value: &str) -> Result<()> {
    fs::write(path, value).map_err(|e| match denied(&e) {
        true => no_permission(path, &e),
        false => anyhow::anyhow!("cannot write `{value}` to `{}`: {e}", path.display()),
    })
}

fn mkdir(path: &Path) -> Result<()> {
    match fs::create_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if denied(&e) => Err(no_permission(path, &e)),
        Err(e) => Err(anyhow::anyhow!("cannot create the cgroup `{}`: {e}", path.display())),
    }
}

fn read_trim(path: &Path) -> Result<String> {
    Ok(fs::read_to_string(path).with_context(|| format!("cannot read `{}`", path.display()))?.trim().to_string())
}

/// The parent cgroup wsbench owns, in the hierarchies its runs need.
#[derive(Debug)]
pub struct Cgroups {
    version: Version,
    /// The parent in the cpu hierarchy (v2: the unified one).
    cpu: PathBuf,
    /// v1 only, with `--cpuset`: the parent in the cpuset hierarchy.
    cpuset: Option<PathBuf>,
    /// v1 cpuset: the memory nodes each run's cpuset gets.
    mems: String,
    /// The roots of the hierarchies of `cpu` and `cpuset`, in that order.
    roots: Vec<PathBuf>,
}

/// Runs made by this process, for unique names.
static NEXT: AtomicU64 = AtomicU64::new(0);

impl Cgroups {
    /// Finds the hierarchies (v2 when it has the controllers, else v1),
    /// creates the parent, and removes the stale cgroups of wsbench
    /// processes that are gone. Errors: no cpu (or cpuset) controller, no
    /// permission.
    pub fn open(need_cpuset: bool) -> Result<Cgroups> {
        let mounts = read_mounts()?;
        let name = parent_name();
        let v2_controllers = mounts
            .v2
            .as_ref()
            .map(|root| fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default())
            .unwrap_or_default();
        let v2_has = |c: &str| v2_controllers.split_whitespace().any(|x| x == c);
        let cgroups = match (&mounts.v2, &mounts.v1_cpu) {
            (Some(root), _) if v2_has("cpu") && (!need_cpuset || v2_has("cpuset")) => {
                let parent = root.join(&name);
                let enable = if need_cpuset { "+cpu +cpuset" } else { "+cpu" };
                write(&root.join("cgroup.subtree_control"), enable)?;
                mkdir(&parent)?;
                write(&parent.join("cgroup.subtree_control"), enable)?;
                Cgroups {
                    version: Version::V2,
                    cpu: parent,
                    cpuset: None,
                    mems: String::new(),
                    roots: vec![root.clone()],
                }
            }
            (_, Some(cpu_root)) if !need_cpuset || mounts.v1_cpuset.is_some() => {
                let cpu = cpu_root.join(&name);
                mkdir(&cpu)?;
                let (mut cpuset, mut mems, mut roots) = (None, String::new(), vec![cpu_root.clone()]);
                if let (true, Some(cs_root)) = (need_cpuset, &mounts.v1_cpuset) {
                    let parent = cs_root.join(&name);
                    mkdir(&parent)?;
                    for file in ["cpuset.cpus", "cpuset.mems"] {
                        if read_trim(&parent.join(file))?.is_empty() {
                            write(&parent.join(file), &read_trim(&cs_root.join(file))?)?;
                        }
                    }
                    mems = read_trim(&parent.join("cpuset.mems"))?;
                    cpuset = Some(parent);
                    roots.push(cs_root.clone());
                }
                Cgroups { version: Version::V1, cpu, cpuset, mems, roots }
            }
            _ => bail!("{}", no_controller(&mounts, &v2_controllers, need_cpuset)),
        };
        cgroups.clean_stale();
        Ok(cgroups)
    }

    /// One line saying which version is in use and where.
    pub fn describe(&self) -> String {
        match &self.cpuset {
            Some(cs) => format!(
                "cgroup {}: runs under {} (cpu) and {} (cpuset)",
                self.version.as_str(),
                self.cpu.display(),
                cs.display()
            ),
            None => format!("cgroup {}: runs under {}", self.version.as_str(), self.cpu.display()),
        }
    }

    /// A new cgroup for one run, with `limits` set.
    pub fn create(&self, limits: &Limits) -> Result<Group> {
        let name = format!("run-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let mut group = Group { dirs: vec![self.cpu.join(&name)], version: self.version };
        mkdir(&group.dirs[0])?;
        let period = PERIOD_US.to_string();
        let quota = limits.quota_us();
        match self.version {
            Version::V2 => {
                let quota = quota.map_or_else(|| "max".to_string(), |q| q.to_string());
                write(&group.dirs[0].join("cpu.max"), &format!("{quota} {period}"))?;
                if let Some(set) = &limits.cpuset {
                    write(&group.dirs[0].join("cpuset.cpus"), &set.to_string())?;
                }
            }
            Version::V1 => {
                write(&group.dirs[0].join("cpu.cfs_period_us"), &period)?;
                write(&group.dirs[0].join("cpu.cfs_quota_us"), &quota.map_or_else(|| "-1".into(), |q| q.to_string()))?;
                if let (Some(set), Some(parent)) = (&limits.cpuset, &self.cpuset) {
                    let dir = parent.join(&name);
                    mkdir(&dir)?;
                    group.dirs.push(dir.clone());
                    write(&dir.join("cpuset.cpus"), &set.to_string())?;
                    write(&dir.join("cpuset.mems"), &self.mems)?;
                }
            }
        }
        Ok(group)
    }

    /// Removes the `run-<pid>-*` cgroups of wsbench processes that are gone.
    fn clean_stale(&self) {
        for parent in std::iter::once(&self.cpu).chain(&self.cpuset) {
            let Ok(entries) = fs::read_dir(parent) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                let Some(pid) = name.strip_prefix("run-").and_then(|r| r.split('-').next()) else { continue };
                let alive = Path::new("/proc").join(pid).exists();
                if !alive && pid.parse::<u32>().is_ok() {
                    if let Err(e) = remove_dir(&entry.path()) {
                        eprintln!("warning: the stale cgroup `{}` could not be removed: {e:#}", entry.path().display());
                    }
                }
            }
        }
    }
}

/// Why no hierarchy fits.
fn no_controller(mounts: &Mounts, v2_controllers: &str, need_cpuset: bool) -> String {
    let wanted = if need_cpuset { "the cpu and cpuset controllers" } else { "the cpu controller" };
    let v2 = match &mounts.v2 {
        Some(root) => format!("cgroup v2 at {} offers `{}`", root.display(), v2_controllers.trim()),
        None => "no cgroup v2 is mounted".to_string(),
    };
    let v1 = match (&mounts.v1_cpu, &mounts.v1_cpuset) {
        (Some(_), None) if need_cpuset => "cgroup v1 has cpu but no cpuset hierarchy mounted",
        (None, _) => "no cgroup v1 cpu hierarchy is mounted",
        _ => "cgroup v1 is incomplete",
    };
    format!(
        "no cpu controller for --cpus/--cpuset: they need {wanted}, and {v2}; {v1}; allowed: a machine whose cgroup v2 \
         root lists them in cgroup.controllers, or with cgroup v1's cpu (and cpuset) hierarchies mounted"
    )
}

/// Removes an empty cgroup, retrying for a moment while the kernel still
/// counts a just-reaped task in it.
fn remove_dir(dir: &Path) -> Result<()> {
    let deadline = std::time::Instant::now() + REMOVE_RETRY;
    loop {
        match fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) if std::time::Instant::now() < deadline && e.raw_os_error() == Some(16) => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(anyhow::anyhow!("cannot remove the cgroup `{}`: {e}", dir.display())),
        }
    }
}

/// One run's cgroup (one directory per hierarchy it is in); removed when
/// dropped, which must come after its tasks have exited and been reaped.
#[derive(Debug)]
pub struct Group {
    dirs: Vec<PathBuf>,
    version: Version,
}

impl Group {
    /// Moves process `pid` (every thread of it) into the cgroup.
    pub fn place(&self, pid: u32) -> Result<()> {
        for dir in &self.dirs {
            write(&dir.join("cgroup.procs"), &pid.to_string())?;
        }
        Ok(())
    }

    /// Its `cpu.stat` (throttling).
    pub fn cpu_stat(&self) -> PathBuf {
        self.dirs[0].join("cpu.stat")
    }

    /// The cgroup version it is in.
    pub fn version(&self) -> Version {
        self.version
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        for dir in &self.dirs {
            if let Err(e) = remove_dir(dir) {
                eprintln!("warning: {e:#}; the next wsbench removes it");
            }
        }
    }
}

/// This process inside a cgroup of its own (`serve`, `load`): moved in by
/// [`enter`], moved back to where it was and the cgroup removed on drop.
#[derive(Debug)]
pub struct Entered {
    group: Group,
    /// The `cgroup.procs` files of the cgroups it came from.
    back: Vec<PathBuf>,
}

impl Entered {
    /// The cgroup.
    pub fn group(&self) -> &Group {
        &self.group
    }
}

/// The cgroup path of this process in the hierarchy holding `controller`
/// (`None` for v2's `0::` line), from `/proc/self/cgroup`.
fn own_path(controller: Option<&str>) -> Option<String> {
    let text = fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, list, path) = (f.next()?, f.next()?, f.next()?);
        let hit = match controller {
            Some(c) => list.split(',').any(|x| x == c),
            None => list.is_empty(),
        };
        hit.then(|| path.to_string())
    })
}

/// Moves this whole process into a new cgroup with `limits` (for its
/// life): `None` when there are no limits.
pub fn enter(limits: &Limits) -> Result<Option<Entered>> {
    if limits.is_none() {
        return Ok(None);
    }
    let cgroups = Cgroups::open(limits.cpuset.is_some())?;
    eprintln!("{}", cgroups.describe());
    let mut back = Vec::new();
    for (i, root) in cgroups.roots.iter().enumerate() {
        let controller = match (cgroups.version, i) {
            (Version::V2, _) => None,
            (Version::V1, 0) => Some("cpu"),
            (Version::V1, _) => Some("cpuset"),
        };
        let own = own_path(controller).context("cannot read this process's cgroup in /proc/self/cgroup")?;
        back.push(root.join(own.trim_start_matches('/')).join("cgroup.procs"));
    }
    let group = cgroups.create(limits)?;
    group.place(std::process::id())?;
    Ok(Some(Entered { group, back }))
}

impl Drop for Entered {
    fn drop(&mut self) {
        for procs in &self.back {
            if let Err(e) = write(procs, &std::process::id().to_string()) {
                eprintln!("warning: could not leave the run's cgroup: {e:#}");
            }
        }
    }
}

/// What a process sees under some limits: the CPUs
/// `std::thread::available_parallelism` reads (what `--workers auto`
/// runs), and the worker count tokio's multi-thread runtime picks by
/// default (read from a runtime tokio built there, not computed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// `std::thread::available_parallelism`.
    pub available: usize,
    /// tokio's default worker count.
    pub tokio_default: usize,
}

fn probe_here() -> Result<Probe> {
    let available = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    Ok(Probe { available, tokio_default: crate::run::backend::tokio_default_workers()? })
}

/// The probe's child: waits until its parent placed it (stdin closes),
/// then prints `AVAILABLE TOKIO_DEFAULT`.
pub fn probe_main() -> Result<ExitCode> {
    let mut sink = Vec::new();
    std::io::stdin().read_to_end(&mut sink).context("reading the probe's stdin")?;
    let p = probe_here()?;
    crate::outln!("{} {}", p.available, p.tokio_default);
    Ok(ExitCode::SUCCESS)
}

/// What a process under `limits` sees: here when there are none, else in a
/// child process placed in a cgroup of `cgroups` (removed after).
pub fn probe(cgroups: Option<&Cgroups>, limits: &Limits) -> Result<Probe> {
    let Some(cgroups) = cgroups.filter(|_| !limits.is_none()) else { return probe_here() };
    let group = cgroups.create(limits)?;
    let exe = std::env::current_exe().context("cannot find this program's own path to start the probe")?;
    let mut child = Command::new(exe)
        .arg(PROBE_SUBCOMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting the cgroup probe")?;
    let placed = group.place(child.id());
    if placed.is_err() {
        let _ = child.kill();
    }
    // Closing stdin lets the probe look (inside the cgroup once placed).
    drop(child.stdin.take());
    let out = child.wait_with_output().context("waiting for the cgroup probe")?;
    placed?;
    let text = String::from_utf8_lossy(&out.stdout);
    let nums: Vec<usize> = text.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    match (out.status.success(), nums.as_slice()) {
        (true, [available, tokio_default]) => Ok(Probe { available: *available, tokio_default: *tokio_default }),
        _ => bail!("the cgroup probe under {limits:?} failed ({}): `{}`", out.status, text.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_names_both_versions() {
        let text = "\
30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu
31 25 0:27 / /sys/fs/cgroup/cpuacct rw,relatime shared:10 - cgroup cgroup rw,cpuacct
32 25 0:28 / /sys/fs/cgroup/cpuset rw,relatime shared:11 - cgroup cgroup rw,cpuset
40 25 0:36 / /sys/fs/cgroup/unified rw,relatime shared:19 - cgroup2 cgroup2 rw
22 1 8:1 / / rw - ext4 /dev/root rw";
        let m = parse_mountinfo(text);
        assert_eq!(m.v2.as_deref(), Some(Path::new("/sys/fs/cgroup/unified")));
        assert_eq!(m.v1_cpu.as_deref(), Some(Path::new("/sys/fs/cgroup/cpu")));
        assert_eq!(m.v1_cpuset.as_deref(), Some(Path::new("/sys/fs/cgroup/cpuset")));
        // cpu and cpuacct co-mounted is the cpu hierarchy; cpuacct alone is not.
        let m = parse_mountinfo(
            "30 25 0:26 / /c rw - cgroup cgroup rw,cpu,cpuacct\n31 25 0:2 / /a rw - cgroup c rw,cpuacct",
        );
        assert_eq!((m.v1_cpu.as_deref(), m.v1_cpuset), (Some(Path::new("/c")), None));
        assert_eq!(parse_mountinfo(""), Mounts::default());
    }

    #[test]
    fn no_controller_says_what_is_there() {
        let m = Mounts { v2: Some("/sys/fs/cgroup".into()), ..Mounts::default() };
        let text = no_controller(&m, "memory pids\n", false);
        assert!(text.starts_with("no cpu controller"), "{text}");
        assert!(text.contains("offers `memory pids`") && text.contains("no cgroup v1 cpu hierarchy"), "{text}");
    }
}
