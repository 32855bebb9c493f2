//! Turns [`RunArgs`] into a validated, typed [`RunConfig`] and expands it
//! into the [`Cell`]s of the matrix. Every error names the bad value and
//! lists what is allowed; nothing here touches the disk.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use wsbench_schedulers::knobs::{KnobSet, Knobs, Victim};
use wsbench_schedulers::topology::Imposed;
use wsbench_schedulers::WorkerRule;
use wsbench_workloads::api::{RuntimeSpec, Sched, WorkloadInfo, WorkloadSpec};

use crate::cli::RunArgs;
use crate::data::record::{join_pairs, CellKey};
use crate::parse::{check_label, parse_duration, parse_pair, parse_u64_list};
use crate::run::backend;
use crate::run::cgroup::limits::{self, CpuList, Limits};
use crate::run::cgroup::Probe;
use crate::run::pinned::{self, Pinned, SchedRow};
use crate::stats::slo::Slo;

/// Most workers a runtime accepts (the schedulers crate's limit).
pub const MAX_WORKERS: u64 = wsbench_schedulers::MAX_WORKERS as u64;
/// A `--duration` or `--warmup` longer than a day is taken for a typo.
pub const MAX_RUN_PHASE: Duration = Duration::from_secs(24 * 60 * 60);
/// The longest `--timeout`: above the default for the longest run phases.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// Watchdog: the limit is this many times (warm-up + duration) ...
const WATCHDOG_FACTOR: u32 = 3;
/// ... plus this slack for runtime start-up and shutdown.
const WATCHDOG_SLACK: Duration = Duration::from_secs(10);

/// The cores this process may run on.
pub fn allowed_cpus() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Without `--rate`, an open-loop workload offers its per-worker default
/// times the workers. With more workers than cores that is more load than
/// the machine can serve, and the cell would measure only queueing in an
/// overloaded system; so the default is capped at the allowed cores' worth.
/// `None` = leave the workload's own default (workers fit the cores).
pub fn capped_default_rate(workload: &WorkloadInfo, workers: usize) -> Option<f64> {
    let per_worker = workload.default_rate_per_worker?;
    let cores = allowed_cpus();
    (workers > cores).then_some(per_worker * cores as f64)
}

/// `run --base-bin`: the base program every run is repeated in, and where
/// its rows go.
#[derive(Debug, Clone)]
pub struct AbConfig {
    /// The base program.
    pub bin: PathBuf,
    /// Its results CSV.
    pub csv: PathBuf,
    /// Its commit, for the CSV's git_sha column.
    pub sha: String,
}

fn parse_ab(args: &RunArgs) -> Result<Option<AbConfig>> {
    let (Some(bin), Some(csv)) = (&args.base_bin, &args.base_csv) else { return Ok(None) };
    ensure!(!args.in_process, "--base-bin runs each run in a child process of the base; drop --in-process");
    let meta = std::fs::metadata(bin).with_context(|| format!("--base-bin `{}` cannot be read", bin.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        ensure!(
            meta.is_file() && meta.permissions().mode() & 0o111 != 0,
            "--base-bin `{}` is not an executable file; allowed: a built wsbench (or a program with its run-child protocol)",
            bin.display()
        );
    }
    let sha = args.base_sha.clone().unwrap_or_else(|| "unknown".to_string());
    check_label("--base-sha", &sha)?;
    Ok(Some(AbConfig { bin: bin.clone(), csv: csv.clone(), sha }))
}

/// The validated options of one `wsbench run`.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Schedulers, in the order given, resolved once (a versioned
    /// reference, `tokio@1.50.0`, is a row of its own).
    pub scheds: Vec<SchedRow>,
    /// Worker counts, in the order given.
    pub workers: Vec<usize>,
    /// Workloads, in the order given.
    pub workloads: Vec<&'static WorkloadInfo>,
    /// `--rate` values (requests/s) for open-loop workloads.
    pub rates: Option<Vec<u64>>,
    /// `--param` pairs.
    pub params: Vec<(String, String)>,
    /// Knob settings to sweep (the cartesian product of every `--knob`);
    /// one empty set when no knob is given.
    pub knob_sets: Vec<KnobSet>,
    /// Measured time per run.
    pub duration: Duration,
    /// Discarded warm-up per run.
    pub warmup: Duration,
    /// Runs per cell.
    pub runs: usize,
    /// `--runs-open-loop`: runs per cell of an open-loop workload, in place
    /// of `runs`. Read through [`RunConfig::runs_for`].
    pub runs_open_loop: Option<usize>,
    /// Seed of run 0; run i uses seed + i.
    pub seed: u64,
    /// Pin threads.
    pub pin: bool,
    /// `--topology`: a worker grouping imposed on every cell.
    pub topology: Option<Imposed>,
    /// Interleave the runs of cells that differ only in scheduler / knobs.
    pub interleave: bool,
    /// Run in this process rather than a fresh child process per run.
    pub in_process: bool,
    /// `--base-bin`: A/B in one invocation.
    pub ab: Option<AbConfig>,
    /// Watchdog limit per run.
    pub timeout: Duration,
    /// CSV output.
    pub csv: Option<PathBuf>,
    /// JSON output.
    pub json: Option<PathBuf>,
    /// Markdown output.
    pub markdown: Option<PathBuf>,
    /// HDR log directory.
    pub hdr_dir: Option<PathBuf>,
    /// Reference scheduler of the ratio column.
    pub baseline_sched: String,
    /// SLO for capacity.
    pub slo: Option<Slo>,
    /// No progress or per-cell stderr output.
    pub quiet: bool,
    /// `--wide`: the table also shows the uncorrected p99.
    pub wide: bool,
    /// `--shard I/N`: run only shard I (1-based) of N.
    pub shard: Option<Shard>,
    /// `--regressed-in`: only these cells run, and the file they came from
    /// (read by the caller, like `probes`: nothing here touches the disk).
    pub only: Option<(BTreeSet<CellKey>, PathBuf)>,
    /// `--cpus` x `--cpuset`: the limits each cell runs under, swept like
    /// `--workers` (outside it); one [`Limits::NONE`] without either flag.
    pub limits: Vec<Limits>,
    /// `--workers auto`: each cell runs the CPUs a process under its limits
    /// sees ([`RunConfig::probes`]).
    pub workers_auto: bool,
    /// What a process sees under each of `limits` (same order), filled by
    /// the runner before planning ([`crate::run::cgroup::probe`]); empty =
    /// not probed (then `auto` is this process's CPUs, and no row records
    /// tokio's default).
    pub probes: Vec<Probe>,
}

/// `--shard I/N`: shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// I, in 1..=count.
    pub index: usize,
    /// N, at least 1.
    pub count: usize,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parses `--shard I/N` (1 <= I <= N).
pub fn parse_shard(text: &str) -> Result<Shard> {
    let bad = || anyhow::anyhow!("bad --shard `{text}`; allowed: I/N with whole numbers 1 <= I <= N, e.g. 1/4");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let index: usize = i.trim().parse().map_err(|_| bad())?;
    let count: usize = n.trim().parse().map_err(|_| bad())?;
    ensure!(count >= 1 && (1..=count).contains(&index), bad());
    Ok(Shard { index, count })
}

/// The cells `--interleave` runs together: consecutive cells (the plan
/// varies scheduler and knobs innermost) with the same workload, workers,
/// parameters and rate.
pub fn interleave_key(cell: &Cell) -> (usize, String, String, Option<u64>, String, String) {
    let k = &cell.key;
    (k.workers, k.workload.clone(), k.params.clone(), k.rate_per_s, k.cpus.clone(), k.cpuset.clone())
}

/// Shard `shard` of `units` (cells, or interleaved groups): unit k goes to
/// shard k mod N + 1, in plan order. Deterministic, so the N shards of one
/// plan are disjoint and together hold every unit once.
pub fn deal<T>(units: Vec<T>, shard: Shard) -> Vec<T> {
    units.into_iter().enumerate().filter(|(k, _)| k % shard.count == shard.index - 1).map(|(_, u)| u).collect()
}

/// Keeps shard `shard` of `cells`, dealing whole interleaved groups when
/// `interleave` (so the cells compared within a group stay on one machine).
fn shard_cells(cells: Vec<Cell>, shard: Shard, interleave: bool) -> Vec<Cell> {
    if !interleave {
        return deal(cells, shard);
    }
    let mut groups: Vec<Vec<Cell>> = Vec::new();
    for cell in cells {
        match groups.last_mut() {
            Some(g) if interleave_key(&g[0]) == interleave_key(&cell) => g.push(cell),
            _ => groups.push(vec![cell]),
        }
    }
    deal(groups, shard).into_iter().flatten().collect()
}

/// One cell of the matrix.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Workload.
    pub workload: &'static WorkloadInfo,
    /// What the workloads crate needs to build the runtime.
    pub runtime: RuntimeSpec,
    /// What the workloads crate needs to run the workload.
    pub spec: WorkloadSpec,
    /// Identity in results.
    pub key: CellKey,
    /// A versioned reference row (`tokio@1.50.0`): the version it pins.
    pub pinned: Option<Pinned>,
    /// The program whose child processes make the runs; `None` = this one.
    /// Set for a versioned row once its binary is built
    /// ([`crate::run::pinned::prepare`]).
    pub program: Option<PathBuf>,
    /// The `runtime_version` column of the cell's rows.
    pub runtime_version: String,
    /// `--cpus`/`--cpuset`: the cgroup each run's child goes into.
    pub limits: Limits,
    /// The worker count tokio picks by default under `limits` (probed).
    pub tokio_default_workers: Option<usize>,
}

/// The cells to run and the notes about cells left out (the harness's
/// matrix; a workload's own validated `Plan` is the workloads crate's).
#[derive(Debug, Clone)]
pub struct CellList {
    /// Cells in run order.
    pub cells: Vec<Cell>,
    /// One line per left-out cell.
    pub skipped: Vec<String>,
}

fn names<T>(items: &[T], name: impl Fn(&T) -> &str) -> String {
    items.iter().map(name).collect::<Vec<_>>().join(", ")
}

/// Resolves `--sched` (a list, or `all`) once into typed rows; an entry
/// `NAME@VERSION` is a versioned reference ([`pinned::split`]).
fn parse_scheds(text: &str) -> Result<Vec<SchedRow>> {
    let names: Vec<&str> = if text.trim() == "all" {
        backend::schedulers().iter().map(|s| s.name).collect()
    } else {
        text.split(',').map(str::trim).collect()
    };
    let mut out: Vec<SchedRow> = Vec::new();
    for entry in names {
        let pinned = pinned::split(entry)?;
        let name = pinned.as_ref().map_or(entry, |p| p.sched);
        let sched = backend::sched(name).map_err(|e| match e {
            wsbench_workloads::Error::UnknownScheduler { allowed, .. } => anyhow::anyhow!(
                "unknown scheduler `{name}` in --sched; allowed: {allowed}, or all, or a versioned reference \
                 ({})",
                pinned::PINNABLE.map(|p| format!("{}@VERSION", p.sched)).join(", ")
            ),
            other => anyhow::Error::from(other).context(format!("bad --sched `{name}`")),
        })?;
        let row = SchedRow { sched, pinned };
        if !out.contains(&row) {
            out.push(row);
        }
    }
    Ok(out)
}

/// A versioned row runs in its own binary's child processes: not in this
/// process, and not as one side of an A/B pair of two other binaries.
fn check_pinned_rows(scheds: &[SchedRow], in_process: bool, base_bin: bool) -> Result<()> {
    let Some(row) = scheds.iter().find(|r| r.pinned.is_some()) else { return Ok(()) };
    ensure!(
        !in_process,
        "--sched `{}` runs in a binary built against that version, in its child processes; drop --in-process",
        row.name()
    );
    ensure!(
        !base_bin,
        "--sched `{}` with --base-bin: a versioned row is its own binary, not a side of the A/B pair; run it \
         without --base-bin (its rows interleave with the others' in one invocation)",
        row.name()
    );
    Ok(())
}

fn parse_workloads(text: &str) -> Result<Vec<&'static WorkloadInfo>> {
    let runnable = || backend::workloads().iter().filter(|w| !w.test_only);
    match text.trim() {
        "all" => return Ok(runnable().collect()),
        "default" => return Ok(runnable().filter(|w| w.in_default_suite).collect()),
        _ => {}
    }
    let mut out: Vec<&'static WorkloadInfo> = Vec::new();
    for name in text.split(',').map(str::trim) {
        // `zoo` is a group that a list may name beside single workloads.
        let infos: Vec<&'static WorkloadInfo> = if name == "zoo" {
            runnable().filter(|w| w.zoo).collect()
        } else {
            vec![backend::workload(name).with_context(|| {
                format!(
                    "unknown workload `{name}` in --workload; allowed: {}, or zoo (also in a list), or default, or all",
                    names(&runnable().collect::<Vec<_>>(), |w| w.name)
                )
            })?]
        };
        for info in infos {
            if !out.iter().any(|w| w.name == info.name) {
                out.push(info);
            }
        }
    }
    Ok(out)
}

/// Parses a `--workers` list; the logical CPUs when absent (and for
/// `auto`, until the limits' probes say otherwise).
pub fn parse_workers(text: Option<&str>) -> Result<Vec<usize>> {
    let Some(text) = text.filter(|t| t.trim() != "auto") else {
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        return Ok(vec![cpus]);
    };
    let list = parse_u64_list(text).with_context(|| format!("bad --workers `{text}`"))?;
    for &w in &list {
        ensure!(
            w >= 1,
            "--workers `{text}` contains 0; a runtime needs at least 1 worker (allowed: 1..={MAX_WORKERS})"
        );
        ensure!(w <= MAX_WORKERS, "--workers `{text}` contains {w}; allowed: 1..={MAX_WORKERS}");
    }
    Ok(list.into_iter().map(|w| w as usize).collect())
}

fn parse_rates(text: Option<&str>, workloads: &[&WorkloadInfo]) -> Result<Option<Vec<u64>>> {
    let Some(text) = text else { return Ok(None) };
    let rates = parse_u64_list(text).with_context(|| format!("bad --rate `{text}` (requests/s)"))?;
    ensure!(!rates.contains(&0), "--rate `{text}` contains 0; an offered rate must be at least 1 request/s");
    if !workloads.iter().any(|w| w.open_loop) {
        let open: Vec<_> = backend::workloads().iter().filter(|w| w.open_loop).map(|w| w.name).collect();
        bail!("--rate applies to open-loop workloads ({}), and none is selected", open.join(", "));
    }
    Ok(Some(rates))
}

fn parse_params(args: &[String], workloads: &[&WorkloadInfo]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for text in args {
        let (name, value) = parse_pair(text, "--param")?;
        if !workloads.iter().any(|w| w.params.iter().any(|p| p.name == name)) {
            let known: Vec<String> =
                workloads.iter().flat_map(|w| w.params.iter().map(move |p| format!("{}:{}", w.name, p.name))).collect();
            let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            bail!("unknown parameter `{name}` for the selected workloads; allowed (workload:param): {known}");
        }
        ensure!(!out.iter().any(|(n, _)| *n == name), "--param `{name}` given twice");
        out.push((name, value));
    }
    Ok(out)
}

/// Parses every `--knob name=v1,v2` once into typed knob sets (one per
/// combination of values) and checks that each knob applies to every
/// selected scheduler.
fn parse_knobs(args: &[String], scheds: &[Sched]) -> Result<Vec<KnobSet>> {
    let mut sets: Vec<KnobSet> = vec![KnobSet::new()];
    let mut seen = Vec::new();
    for text in args {
        let (name, values) = parse_pair(text, "--knob")?;
        ensure!(!seen.contains(&name), "--knob `{name}` given twice; give its values as a list: {name}=v1,v2");
        seen.push(name.clone());
        let values: Vec<&str> = values.split(',').map(str::trim).collect();
        for (i, value) in values.iter().enumerate() {
            ensure!(
                !values[..i].contains(value),
                "--knob `{text}` lists `{value}` twice; each value is one cell, so give each value once"
            );
        }
        let mut next = Vec::with_capacity(sets.len() * values.len());
        for set in &sets {
            for value in &values {
                let mut s = set.clone();
                s.push(&name, value).with_context(|| format!("bad --knob `{text}`"))?;
                next.push(s);
            }
        }
        for &sched in scheds {
            check_knob_applies(&name, sched)?;
        }
        sets = next;
    }
    for set in &sets {
        set.values()
            .check_combination()
            .context("bad --knob combination (every combination of the given values is a cell)")?;
    }
    Ok(sets)
}

fn check_knob_applies(name: &str, sched: Sched) -> Result<()> {
    let Some(kind) = sched.kind() else {
        bail!(
            "knob `{name}` cannot be set on reference scheduler `{sched}` (references take no knobs); \
             choose ours with --sched, e.g. --sched steal-half"
        );
    };
    Knobs::check_applies(name, kind).with_context(|| format!("drop `{sched}` from --sched or drop --knob {name}"))?;
    Ok(())
}

/// Parses a duration option and bounds it by `max`.
fn bounded_duration(option: &str, text: &str, max: Duration) -> Result<Duration> {
    let d = parse_duration(text).with_context(|| format!("bad {option}"))?;
    ensure!(d <= max, "{option} `{text}` is too long; allowed: up to {}s", max.as_secs());
    Ok(d)
}

/// `--timeout`, or its default: it must leave every run time to finish, so
/// it must be longer than warm-up + duration (`run_s`).
fn watchdog_limit(text: Option<&str>, run: Duration) -> Result<Duration> {
    let Some(text) = text else {
        return Ok(run * WATCHDOG_FACTOR + WATCHDOG_SLACK);
    };
    let timeout = bounded_duration("--timeout", text, MAX_TIMEOUT)?;
    ensure!(
        timeout > run,
        "--timeout `{text}` is not longer than warm-up + duration ({:.3}s): every run would be cut off as hung; \
         allowed: more than {:.3}s, up to {}s (default: {WATCHDOG_FACTOR} x (warm-up + duration) + {}s)",
        run.as_secs_f64(),
        run.as_secs_f64(),
        MAX_TIMEOUT.as_secs(),
        WATCHDOG_SLACK.as_secs()
    );
    Ok(timeout)
}

/// `--topology GROUPSxSIZE`: well formed, and grouping every `--workers`
/// value exactly.
fn parse_topology(text: Option<&str>, workers: &[usize]) -> Result<Option<Imposed>> {
    let Some(text) = text else { return Ok(None) };
    let imposed: Imposed = text.parse().context("--topology")?;
    if let Some(&w) = workers.iter().find(|&&w| w != imposed.workers()) {
        bail!(
            "--topology `{imposed}` groups {} workers but --workers includes {w}; allowed: GROUPSxSIZE with GROUPS x SIZE equal to every --workers value (run other worker counts with their own --topology)",
            imposed.workers()
        );
    }
    Ok(Some(imposed))
}

/// `--cpus` and every `--cpuset`, checked against this machine, as the
/// limits to sweep; either flag with `--in-process` is refused (a cgroup
/// holds a process, and in-process runs share this one).
fn parse_limits(args: &RunArgs) -> Result<Vec<Limits>> {
    let given = match (&args.cpus, args.cpuset.first()) {
        (Some(c), _) => Some(format!("--cpus {c}")),
        (None, Some(s)) => Some(format!("--cpuset {s}")),
        (None, None) => None,
    };
    if let (Some(flag), true) = (&given, args.in_process) {
        bail!(
            "{flag} puts each run's child process in a cgroup of its own, and --in-process runs every run in this \
             process; allowed: drop --in-process (or the limit)"
        );
    }
    let online = limits::online_cpus();
    let cpus = args.cpus.as_deref().map(|t| limits::parse_cpus(t, online.ids().len())).transpose()?.unwrap_or_default();
    let mut sets: Vec<CpuList> = Vec::new();
    for text in &args.cpuset {
        let set = limits::parse_cpuset(text, &online)?;
        if !sets.contains(&set) {
            sets.push(set);
        }
    }
    Ok(limits::combinations(&cpus, &sets))
}

/// `--knob victim=topology` needs a worker topology: `--topology`, or the
/// sysfs groups of pinned workers (`--pin`). Without either it would run as
/// `random` while its rows say `topology`.
fn check_topology_known(knob_sets: &[KnobSet], imposed: bool, pin: bool) -> Result<()> {
    let wants = knob_sets.iter().any(|s| s.values().victim == Victim::Topology);
    ensure!(
        !wants || imposed || pin,
        "--knob victim=topology needs a worker topology, and unpinned workers have none (it would run as `random`); \
         allowed: add --topology GROUPSxSIZE, or --pin (pinned workers take their cores' L3 groups from sysfs)"
    );
    Ok(())
}

impl RunConfig {
    /// Validates `args`.
    pub fn from_args(args: &RunArgs) -> Result<RunConfig> {
        let scheds = parse_scheds(&args.sched)?;
        check_pinned_rows(&scheds, args.in_process, args.base_bin.is_some())?;
        let workloads = parse_workloads(&args.workload)?;
        let workers = parse_workers(args.workers.as_deref())?;
        let rates = parse_rates(args.rate.as_deref(), &workloads)?;
        let params = parse_params(&args.params, &workloads)?;
        let knob_sets = parse_knobs(&args.knobs, &scheds.iter().map(|r| r.sched).collect::<Vec<_>>())?;
        let duration = bounded_duration("--duration", &args.duration, MAX_RUN_PHASE)?;
        ensure!(!duration.is_zero(), "--duration `{}` must be longer than zero", args.duration);
        let warmup = bounded_duration("--warmup", &args.warmup, MAX_RUN_PHASE)?;
        ensure!(args.runs >= 1, "--runs 0: at least 1 measured run per cell is needed");
        let timeout = watchdog_limit(args.timeout.as_deref(), warmup + duration)?;
        ensure!(
            backend::scheduler(&args.baseline_sched).is_some(),
            "unknown --baseline-sched `{}`; allowed: {}",
            args.baseline_sched,
            names(backend::schedulers(), |s| s.name)
        );
        if args.in_process {
            if let Some(w) = workloads.iter().find(|w| w.aborts_process) {
                bail!("--workload `{}` aborts the process it runs in; it runs only in a child process (drop --in-process)", w.name);
            }
        }
        let topology = parse_topology(args.topology.as_deref(), &workers)?;
        check_topology_known(&knob_sets, topology.is_some(), args.pin)?;
        let slo = args.slo.as_deref().map(str::parse::<Slo>).transpose()?;
        let shard = args.shard.as_deref().map(parse_shard).transpose()?;
        if let Some(shard) = shard {
            ensure!(
                args.workers.is_some(),
                "--shard {shard} needs an explicit --workers: the default (this machine's logical CPUs) may differ \
                 between the machines, and then their shards would not be parts of one matrix"
            );
        }
        let ab = parse_ab(args)?;
        let limits = parse_limits(args)?;
        if slo.is_some() {
            ensure!(
                workloads.iter().any(|w| w.open_loop),
                "--slo needs an open-loop workload (it reports capacity at offered rates)"
            );
        }
        Ok(RunConfig {
            scheds,
            workers,
            workloads,
            rates,
            params,
            knob_sets,
            duration,
            warmup,
            runs: args.runs,
            runs_open_loop: args.runs_open_loop,
            seed: args.seed,
            pin: args.pin && !args.no_pin,
            topology,
            interleave: args.interleave,
            in_process: args.in_process,
            ab,
            timeout,
            csv: args.csv.clone(),
            json: args.json.clone(),
            markdown: args.markdown.clone(),
            hdr_dir: args.hdr_dir.clone(),
            baseline_sched: args.baseline_sched.clone(),
            slo,
            quiet: args.quiet,
            wide: args.wide,
            shard,
            only: None,
            limits,
            workers_auto: args.workers.as_deref().is_some_and(|w| w.trim() == "auto"),
            probes: Vec::new(),
        })
    }

    /// Measured runs per cell of `workload`: `--runs-open-loop` for an
    /// open-loop workload when given, else `--runs`.
    pub fn runs_for(&self, workload: &WorkloadInfo) -> usize {
        match self.runs_open_loop {
            Some(runs) if workload.open_loop => runs,
            _ => self.runs,
        }
    }

    /// Expands the matrix. Cells a scheduler cannot run (a single-worker
    /// scheduler with more workers) are skipped with a note; it is an error
    /// when nothing is left. Every cell is validated by the workloads crate
    /// before anything runs.
    pub fn plan(&self) -> Result<CellList> {
        let mut cells = Vec::new();
        let mut skipped = Vec::new();
        for workload in &self.workloads {
            let params: Vec<_> =
                self.params.iter().filter(|(n, _)| workload.params.iter().any(|p| p.name == *n)).cloned().collect();
            let rates: Vec<Option<u64>> = match (&self.rates, workload.open_loop) {
                (Some(rates), true) => rates.iter().copied().map(Some).collect(),
                _ => vec![None],
            };
            for rate in rates {
                for (li, limits) in self.limits.iter().enumerate() {
                    let probe = self.probes.get(li).copied();
                    let workers = match (self.workers_auto, probe) {
                        (true, Some(p)) => vec![p.available],
                        _ => self.workers.clone(),
                    };
                    for workers in workers {
                        for knobs in &self.knob_sets {
                            for row in &self.scheds {
                                if row.sched.worker_rule() == WorkerRule::ExactlyOne && workers > 1 {
                                    let name = row.name();
                                    skipped.push(format!(
                                        "skipped {name} with {workers} workers: it runs exactly 1 worker"
                                    ));
                                    continue;
                                }
                                let mut cell = self.cell(row, workload, workers, knobs, &params, rate)?;
                                cell.key.cpus = limits.cpus_text();
                                cell.key.cpuset = limits.cpuset_text();
                                cell.limits = limits.clone();
                                cell.tokio_default_workers = probe.map(|p| p.tokio_default);
                                cells.push(cell);
                            }
                        }
                    }
                }
            }
        }
        skipped.dedup();
        if cells.is_empty() {
            bail!("nothing to run: {}", skipped.join("; "));
        }
        if let Some((only, path)) = &self.only {
            let total = cells.len();
            cells.retain(|c| only.contains(&c.key));
            let missing: Vec<String> =
                only.iter().filter(|k| !cells.iter().any(|c| c.key == **k)).map(|k| k.to_string()).collect();
            ensure!(
                missing.is_empty(),
                "--regressed-in `{}`: its regressed cell(s) {} are not in this matrix of {total} cells; allowed: the \
                 options of the run that the report judged",
                path.display(),
                missing.join(", ")
            );
            skipped.push(format!(
                "--regressed-in `{}`: the {} regressed cell(s) of the matrix's {total}",
                path.display(),
                cells.len()
            ));
        }
        if let Some(shard) = self.shard {
            let total = cells.len();
            cells = shard_cells(cells, shard, self.interleave);
            let unit = if self.interleave { "interleaved groups of cells" } else { "cells" };
            ensure!(
                !cells.is_empty(),
                "--shard {shard} has nothing to run: the matrix has only {total} cell(s), dealt as {unit} to {} shards; \
                 allowed: at most as many shards as {unit}",
                shard.count
            );
            skipped.push(format!("--shard {shard}: {} of the matrix's {total} cells (dealt as {unit})", cells.len()));
        }
        for cell in &cells {
            backend::validate(&cell.runtime, &cell.spec)
                .with_context(|| format!("cell {} is not runnable", cell.key))?;
        }
        Ok(CellList { cells, skipped })
    }

    fn cell(
        &self,
        row: &SchedRow,
        workload: &'static WorkloadInfo,
        workers: usize,
        knobs: &KnobSet,
        params: &[(String, String)],
        rate: Option<u64>,
    ) -> Result<Cell> {
        let sched = row.sched;
        let mut runtime = RuntimeSpec::new(sched, workers, knobs.clone())
            .with_context(|| format!("{sched} with {workers} workers and knobs `{knobs}`"))?;
        runtime.topology = self.topology;
        let spec = WorkloadSpec {
            name: workload.name.to_string(),
            params: params.to_vec(),
            rate_per_s: rate.map(|r| r as f64).or_else(|| capped_default_rate(workload, workers)),
        };
        let key = CellKey {
            scheduler: row.name(),
            workers,
            workload: workload.name.to_string(),
            knobs: join_pairs(&knobs.pairs().map(|(n, v)| (n.to_string(), v.to_string())).collect::<Vec<_>>()),
            params: join_pairs(params),
            rate_per_s: rate,
            cpus: String::new(),
            cpuset: String::new(),
        };
        // A versioned row's versions are its build's (`pinned::prepare`).
        let runtime_version = if row.pinned.is_some() { String::new() } else { pinned::own_versions(sched) };
        Ok(Cell {
            workload,
            runtime,
            spec,
            key,
            pinned: row.pinned.clone(),
            program: None,
            runtime_version,
            limits: Limits::NONE,
            tokio_default_workers: None,
        })
    }
}

#[cfg(test)]
mod shard_tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Cli;

    fn plan(args: &[&str]) -> Result<CellList> {
        let cli = Cli::try_parse_from(std::iter::once("wsbench").chain(args.iter().copied())).unwrap();
        RunConfig::from_args(&cli.run)?.plan()
    }

    #[test]
    fn dealing_is_round_robin_disjoint_and_covers_every_unit() {
        for n in 1..=7 {
            let mut seen = Vec::new();
            for i in 1..=n {
                let part = deal((0..20).collect(), Shard { index: i, count: n });
                // Written out independently: shard i holds i-1, i-1+n, ...
                let expected: Vec<usize> = (0..20).filter(|k| k % n + 1 == i).collect();
                assert_eq!(part, expected, "shard {i}/{n}");
                seen.extend(part);
            }
            seen.sort_unstable();
            assert_eq!(seen, (0..20).collect::<Vec<_>>(), "{n} shards: each unit exactly once");
        }
    }

    #[test]
    fn shard_syntax_is_checked_naming_the_value() {
        assert_eq!(parse_shard("2/3").unwrap(), Shard { index: 2, count: 3 });
        assert_eq!(parse_shard("1/1").unwrap(), Shard { index: 1, count: 1 });
        for bad in ["0/3", "4/3", "1/0", "x/2", "1", "1/2/3", "-1/2", ""] {
            let e = parse_shard(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("`{bad}`")) && e.contains("1 <= I <= N"), "{e}");
        }
    }

    const BASE: &[&str] = &["--sched", "steal-half,steal-one,tokio", "--workers", "1,2", "--workload", "yield-many"];

    fn keys(list: &CellList) -> Vec<String> {
        list.cells.iter().map(|c| c.key.to_string()).collect()
    }

    #[test]
    fn the_shards_of_a_plan_partition_it_in_both_modes() {
        for interleave in [false, true] {
            let mut whole_args = BASE.to_vec();
            if interleave {
                whole_args.push("--interleave");
            }
            let whole = keys(&plan(&whole_args).unwrap());
            assert_eq!(whole.len(), 6);
            let mut union = Vec::new();
            let shards: Vec<String> = (1..=2).map(|i| format!("{i}/2")).collect();
            for s in &shards {
                let mut args = whole_args.clone();
                args.extend(["--shard", s]);
                let part = keys(&plan(&args).unwrap());
                assert!(part.iter().all(|k| !union.contains(k)), "{s} overlaps an earlier shard");
                union.extend(part);
            }
            union.sort();
            let mut sorted = whole.clone();
            sorted.sort();
            assert_eq!(union, sorted, "interleave {interleave}");
        }
    }

    #[test]
    fn interleaved_groups_stay_whole() {
        // Groups: (x1: 3 scheds), (x2: 3 scheds); shard 1/2 is the first.
        let mut args = BASE.to_vec();
        args.extend(["--interleave", "--shard", "1/2"]);
        let part = plan(&args).unwrap();
        assert_eq!(part.cells.len(), 3);
        assert!(part.cells.iter().all(|c| c.key.workers == 1));
        // Without --interleave cells 0, 2, 4 of the plan: steal-half x1, tokio x1, steal-one x2.
        let mut args = BASE.to_vec();
        args.extend(["--shard", "1/2"]);
        let names: Vec<_> =
            plan(&args).unwrap().cells.iter().map(|c| format!("{} x{}", c.key.scheduler, c.key.workers)).collect();
        assert_eq!(names, ["steal-half x1", "tokio x1", "steal-one x2"]);
    }

    #[test]
    fn misfit_shards_are_refused() {
        let mut args = BASE.to_vec();
        args.extend(["--shard", "7/7"]);
        let e = plan(&args).unwrap_err().to_string();
        assert!(e.contains("--shard 7/7") && e.contains("only 6 cell"), "{e}");
        let e = plan(&["--workload", "yield-many", "--shard", "1/2"]).unwrap_err().to_string();
        assert!(e.contains("explicit --workers"), "{e}");
    }
}

#[cfg(test)]
mod workload_group_tests {
    use super::*;

    /// `zoo` is the pathology zoo, written out here by hand: in `all`,
    /// never in the default suite.
    #[test]
    fn zoo_names_the_pathology_zoo() {
        const ZOO: [&str; 6] =
            ["lifo-starvation", "idle-burst", "task-churn", "timer-churn", "blocking-storm", "accept-storm"];
        let zoo: Vec<_> = parse_workloads("zoo").unwrap().iter().map(|w| w.name).collect();
        assert_eq!(zoo, ZOO);
        let all: Vec<_> = parse_workloads("all").unwrap().iter().map(|w| w.name).collect();
        let default: Vec<_> = parse_workloads("default").unwrap().iter().map(|w| w.name).collect();
        for name in zoo {
            assert!(all.contains(&name) && !default.contains(&name), "{name}");
        }
        let e = parse_workloads("zo").unwrap_err().to_string();
        assert!(e.contains("or zoo"), "{e}");
        // In a list, once each, in order.
        let listed: Vec<_> = parse_workloads("pipeline,zoo,task-churn").unwrap().iter().map(|w| w.name).collect();
        let want: Vec<_> = std::iter::once("pipeline").chain(ZOO).collect();
        assert_eq!(listed, want);
    }
}
