//! The command line, as clap sees it. Only shapes and help text live here;
//! `config.rs` turns [`RunArgs`] into a validated, typed configuration.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Long description shown by `wsbench --help`.
const LONG_ABOUT: &str = "\
Runs async workloads over task schedulers and reports throughput and tail latency.

With no subcommand, `run` is assumed, so `wsbench --sched steal-half --workers 128` runs a matrix.
Each cell of scheduler x workers x workload x knobs x rate is run --runs times, each time in a fresh
runtime after a discarded warm-up, with the same seed for every scheduler. Results are printed as a
table and, on request, appended to CSV / written as JSON, markdown and HdrHistogram logs as each cell
finishes.

List syntax (--workers, --rate): `1,2,4`, `1..=8`, `1..8`, `1..=128:pow2`, `1000..=8000:x2`,
`10k..=50k:+10k`.

Exit status: 0 success; 1 the answer is no (every run failed, `compare` found a regression, `plot`
found nothing to plot); 2 an error (bad input, an unreadable input file, an unwritable output).";

/// wsbench: scheduling-policy benchmark harness.
#[derive(Debug, Parser)]
#[command(name = "wsbench", version, about, long_about = LONG_ABOUT, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do; `run` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of the default `run` subcommand.
    #[command(flatten)]
    pub run: RunArgs,
    /// Replace existing output files wsbench did not write (without it they are refused; a symlink,
    /// another user's file or a read-only one is refused even with it).
    #[arg(long, global = true)]
    pub force: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a benchmark matrix (the default when no subcommand is given).
    Run(Box<RunArgs>),
    /// List every scheduler, workload, workload parameter and knob with its meaning and default.
    List,
    /// Compare two result CSVs and decide, per cell and metric, regressed / improved / unchanged.
    Compare(CompareArgs),
    /// Draw scaling, load and percentile-spectrum charts (SVG and PNG) from a result CSV.
    Plot(PlotArgs),
    /// Keep runs in an SQLite history (`add`, `list`) and find change points in it (`detect`).
    History(HistoryArgs),
    /// Write one self-contained HTML report from the history (and optionally a run directory).
    Report(ReportArgs),
    /// Check this machine for what makes results unstable (governor, turbo, SMT, load, isolation,
    /// cgroup limits, clock source, DAMON, perf counters, cores vs workers); each finding with its
    /// fix.
    /// Always exits 0.
    Doctor(DoctorArgs),
    /// Run only the server of tcp-rpc, mixed or http, until SIGINT/SIGTERM or --duration; then
    /// print (and with --csv/--json write) its requests, service time, counters and CPU.
    Serve(ServeArgs),
    /// Run only the client of tcp-rpc, mixed or http against --target (load from other machines);
    /// says per run whether it kept its schedule.
    Load(LoadArgs),
    /// Combine the files of several load processes (HDR logs, with their CSVs or JSON files: one
    /// latency distribution, summed throughput) or of the shards of one matrix (CSV or JSON
    /// results side by side, their settings checked).
    Merge(MergeArgs),
    /// Find the first bad point between a good and a bad one, for one cell: published versions of a
    /// reference runtime (`--sched tokio --good 1.49.0 --bad 1.52.1`), commits of the git
    /// repository around the current directory (`--good SHA --bad SHA`), or commits of a reference
    /// runtime's checkout (`--path ../tokio --good REF --bad REF`). Each step is a paired,
    /// interleaved A/B (`run --base-bin`) of the midpoint against the good end; builds and results
    /// are cached under target/. Exit status: 0 found; 1 not reproduced or undecidable; 2 bad input.
    Bisect(Box<BisectArgs>),
    /// Internal: run one measured run whose spec arrives on stdin and write its result on stdout
    /// (how `run` isolates each run in a fresh process).
    #[command(name = "__run-child", hide = true)]
    RunChild,
    /// Internal: print the CPUs `available_parallelism` reads and tokio's default worker count,
    /// once stdin closes (how `--workers auto` and `tokio_default_workers` see a cgroup).
    #[command(name = "__cgroup-probe", hide = true)]
    CgroupProbe,
}

/// Options of `wsbench run`.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Schedulers: a comma-separated list of names, or `all` (see `wsbench list`).
    #[arg(long, value_name = "LIST|all", default_value = "all")]
    pub sched: String,

    /// Worker-thread counts: a list or range, e.g. `1,2,4` or `1..=128:pow2`, or `auto`: the CPUs
    /// `std::thread::available_parallelism` reads under each --cpus/--cpuset [default: logical CPUs].
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub workers: Option<String>,

    /// Workloads: a comma-separated list, `default` (the representative suite), `zoo` (the
    /// pathology zoo: workloads from public incidents; also inside a list) or `all`.
    #[arg(long, value_name = "LIST|default|zoo|all", default_value = "default")]
    pub workload: String,

    /// Offered load of open-loop workloads in requests/s: one value, a list or a range
    /// (`10k,20k`, `10k..=80k:x2`); one cell per rate. Default: each workload's own rate.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub rate: Option<String>,

    /// A workload parameter `name=value` (repeatable); applies to the selected workloads that
    /// have it (see `wsbench list`).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,

    /// A scheduler knob `name=value` (repeatable); `name=v1,v2` sweeps the values, one cell each (each value once).
    #[arg(long = "knob", value_name = "NAME=VALUE[,VALUE..]")]
    pub knobs: Vec<String>,

    /// Measured time per run (`2s`, `500ms`; a bare number is seconds). Fixed-size benchmarks
    /// repeat until it is reached.
    #[arg(long, value_name = "DURATION", default_value = "500ms", allow_hyphen_values = true)]
    pub duration: String,

    /// Warm-up before each run's measurement; discarded.
    #[arg(long, value_name = "DURATION", default_value = "100ms", allow_hyphen_values = true)]
    pub warmup: String,

    /// Measured runs per cell, each in a fresh runtime (1..=1000).
    #[arg(long, value_name = "N", default_value_t = 3, allow_hyphen_values = true, value_parser = runs_value)]
    pub runs: usize,

    /// Measured runs per cell of an open-loop workload (rpc-fanout, skewed, tcp-rpc, ...), in
    /// place of --runs (1..=1000); closed-loop cells keep --runs. Their latency percentiles need
    /// more pairs than throughput does (the nightly runs 64 here, 40 elsewhere).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = runs_value)]
    pub runs_open_loop: Option<usize>,

    /// Seed of every random choice; the same for every scheduler (run i uses seed + i).
    #[arg(long, value_name = "N", default_value_t = 42, allow_hyphen_values = true, value_parser = seed_value)]
    pub seed: u64,

    /// Pin workers round-robin to the allowed cores (load generator on separate cores when there
    /// are enough).
    #[arg(long, conflicts_with = "no_pin")]
    pub pin: bool,

    /// Do not pin threads (the default).
    #[arg(long = "no-pin")]
    pub no_pin: bool,

    /// Impose a grouping of workers as GROUPSxSIZE (e.g. `8x16`: 8 groups of 16 consecutive
    /// workers, one NUMA node) in place of the machine's L3 topology, for `--knob victim=topology`
    /// and the steals_local_group / steals_remote_group counters; GROUPS x SIZE must equal every
    /// --workers value. Without it, pinned workers (--pin) take their cores' L3 groups and NUMA
    /// nodes from sysfs, and unpinned ones have no topology.
    #[arg(long, value_name = "GROUPSxSIZE")]
    pub topology: Option<String>,

    /// Interleave the runs of cells that differ only in scheduler or knobs (same workload,
    /// workers, parameters and rate): run 0 of each, then run 1 of each in reverse order, and so
    /// on, so that drifting machine load hits every scheduler alike; such cells are written when
    /// the last of them finishes
    #[arg(long)]
    pub interleave: bool,

    /// Run every run inside this process (the old mode) instead of a fresh child process per
    /// run; a hung run's threads then live on and a crash ends the whole matrix.
    #[arg(long)]
    pub in_process: bool,

    /// CPU quota per run in CPUs, a CFS quota over 100 ms periods (`0.5`, `1.5`), or a list
    /// (`1,2`; one cell each). Each run's child process goes into a cgroup of its own (v2 or v1,
    /// whichever has the cpu controller; needs root or a delegated cgroup subtree); rows record
    /// the quota and the throttling over the measured window.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub cpus: Option<String>,

    /// CPUs each run may use, as a cgroup cpuset in the kernel's list form (`0`, `0-3,8`); repeat
    /// the flag to sweep (one cell per value). Combines with --cpus.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub cpuset: Vec<String>,

    /// A/B in one invocation: run every run twice, back to back, once in a child process of
    /// this program and once in a child process of BIN (the base: e.g. a build of the previous
    /// commit), alternating which goes first; the base's rows go to --base-csv. `wsbench compare
    /// BASE_CSV CSV` then judges each cell on the pairs, so machine drift between the two files
    /// cancels. BIN must speak this program's child protocol (the hidden `__run-child`).
    #[arg(long, value_name = "BIN", requires = "base_csv", conflicts_with = "in_process")]
    pub base_bin: Option<PathBuf>,

    /// With --base-bin: the CSV the base's rows are appended to (same rules as --csv).
    #[arg(long, value_name = "PATH", requires = "base_bin")]
    pub base_csv: Option<PathBuf>,

    /// With --base-bin: the base's commit, written to its CSV's git_sha column [default:
    /// unknown].
    #[arg(long, value_name = "SHA", requires = "base_bin")]
    pub base_sha: Option<String>,

    /// Per-run watchdog limit: a run still going after it becomes a failed row and the matrix
    /// moves on [default: 3 x (warm-up + duration) + 10s].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub timeout: Option<String>,

    /// Append one row per run to this CSV (created with a header when new; an existing file
    /// must have the same header).
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,

    /// Write the results and the environment as JSON (rewritten after each cell).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Write a markdown summary (rewritten after each cell).
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    /// Write each cell's full latency histograms as HdrHistogram interval logs into this
    /// directory (created if missing). With --base-bin the base side's logs go to its
    /// subdirectory `base/`.
    #[arg(long, value_name = "DIR")]
    pub hdr_dir: Option<PathBuf>,

    /// Reference scheduler for the table's ratio column.
    #[arg(long, value_name = "NAME", default_value = "tokio")]
    pub baseline_sched: String,

    /// Service-level objective for capacity with a rate sweep, e.g. `p99<1ms`; the table then
    /// reports, per scheduler, the highest offered rate up to which it holds.
    #[arg(long, value_name = "pXX<DURATION")]
    pub slo: Option<String>,

    /// No progress bar and no per-cell messages on stderr (the table is still printed).
    #[arg(long, short)]
    pub quiet: bool,

    /// Every column: without it the run table keeps to 120 columns, leaving out p99.9, max,
    /// spread, ideal p99, steals, ... in that order as needed (a footnote names them); with it,
    /// also the uncorrected p99 (from each request's actual send, as wrk2 prints it) beside the
    /// corrected p99 (from its scheduled arrival). The markdown report always has every column.
    #[arg(long)]
    pub wide: bool,

    /// Run only shard I of N (1 <= I <= N) of the matrix: its cells (with --interleave, its
    /// interleaved groups) are dealt round-robin in plan order, so N machines given the same
    /// options and I = 1..=N run disjoint parts whose union is the matrix (`wsbench merge`
    /// puts their CSVs together). Needs an explicit --workers.
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    pub shard: Option<String>,

    /// Run only the cells of the matrix that FILE, an A/B compare's `--json` report, found
    /// regressed: the gate's second stage, fresh pairs for `compare --confirms FILE` (give the
    /// options of the run that FILE judged).
    #[arg(long, value_name = "FILE")]
    pub regressed_in: Option<PathBuf>,
}

/// Options of `wsbench bisect`: the range, the search, and one cell given as for `run`.
#[derive(Debug, Args)]
pub struct BisectArgs {
    /// The good end: a published version (with --sched tokio, tokio-current or smol) or a commit (a
    /// SHA, tag or branch of the repository around the current directory; with --path, of that
    /// checkout).
    #[arg(long, value_name = "VERSION|REF")]
    pub good: String,
    /// The bad end, of the same kind, after the good one.
    #[arg(long, value_name = "VERSION|REF")]
    pub bad: String,
    /// The figure judged: `time` (p50_us, the median time of one operation), `throughput`
    /// (throughput_per_s), `cpu` (cpu_us_per_op) or `p99` (p99_us) [default: the workload's main
    /// figure: p99 for open-loop workloads, throughput for the others]. A step is bad when the
    /// gate's test (--threshold, --tail-threshold, --alpha, as for `compare`) says the midpoint
    /// changed against the good end as the bad end did.
    #[arg(long, value_name = "METRIC", value_parser = ["time", "throughput", "cpu", "p99"])]
    pub metric: Option<String>,
    /// Most pairs of runs per step: a step runs 5, then 10, then 20, ... pairs (up to this) until it
    /// is decisive; still undecided at this cap, the point is skipped (2..=1000).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = max_runs_value)]
    pub max_runs: usize,
    /// Bisect commits of this checkout of the reference runtime's repository (with --sched tokio,
    /// tokio-current or smol; its crate: tokio, or async-executor for smol, at the root or one
    /// directory down): each commit is exported with `git archive` under target/ and built against
    /// this wsbench through [patch.crates-io]. The checkout is only read; its uncommitted changes
    /// are in no point (a warning says so: commit them to bisect them).
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// List the points between the ends, the first midpoint and the estimate; build and run
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Measure every step again and replace its cached result (builds stay cached). Without it, a
    /// step already measured with the same ends, cell, metric, settings and wsbench source is
    /// taken from target/wsbench-bisect/results/ and marked `(cached)`.
    #[arg(long)]
    pub remeasure: bool,
    /// Also write the steps and the result as JSON to this path.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// The scheduler: one name (for published versions, the reference without `@`: tokio,
    /// tokio-current or smol).
    #[arg(long, value_name = "NAME")]
    pub sched: String,
    /// One worker-thread count [default: logical CPUs].
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub workers: Option<String>,
    /// One workload (see `wsbench list`).
    #[arg(long, value_name = "NAME")]
    pub workload: String,
    /// Offered load of an open-loop workload in requests/s: one value [default: the workload's].
    #[arg(long, value_name = "RATE", allow_hyphen_values = true)]
    pub rate: Option<String>,
    /// A workload parameter `name=value` (repeatable), as for `run`.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// A scheduler knob `name=value` (repeatable, one value each), as for `run`.
    #[arg(long = "knob", value_name = "NAME=VALUE")]
    pub knobs: Vec<String>,
    /// Measured time per run, as for `run`.
    #[arg(long, value_name = "DURATION", default_value = "500ms", allow_hyphen_values = true)]
    pub duration: String,
    /// Warm-up before each run's measurement, as for `run`.
    #[arg(long, value_name = "DURATION", default_value = "100ms", allow_hyphen_values = true)]
    pub warmup: String,
    /// Seed of the first pair; each later pair of a step takes the next one.
    #[arg(long, value_name = "N", default_value_t = 42, allow_hyphen_values = true, value_parser = seed_value)]
    pub seed: u64,
    /// Per-run watchdog limit, as for `run`.
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub timeout: Option<String>,
    /// Pin workers, as for `run`.
    #[arg(long)]
    pub pin: bool,
    /// The gate's floors and significance level, as for `compare` (see --metric).
    #[command(flatten)]
    pub gate: GateArgs,
}

/// Options of `wsbench merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The inputs: `.csv` or `.json` results of the shards of one matrix; or the `.hlog` logs of
    /// several load processes of one cell (`load --hdr-dir`), with their `.csv` or `.json` results
    /// when --out is a `.csv` or `.json`.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The merged file to write: `.csv`, `.json` or `.hlog` (an existing file only when wsbench
    /// wrote it as the same kind, or with --force).
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,
}

/// Options of `wsbench doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The worker counts you plan to run (same syntax as `run --workers`) [default: logical CPUs].
    #[arg(long, value_name = "LIST")]
    pub workers: Option<String>,
    /// Check the instruments on this machine (spin drift, the CPU meter, park/unpark, timers,
    /// the loopback floor, steal time, governor/cpuidle/SMT/clocksource), each with its figures
    /// and a verdict: ok, warn or unfit. Takes about 15 s; the figures are saved for later runs.
    #[arg(long)]
    pub calibrate: bool,
    /// With --calibrate: how long the spin calibration is watched (redone every second).
    #[arg(long, value_name = "DURATION", default_value = "10s", requires = "calibrate")]
    pub calibrate_span: String,
    /// With --calibrate: also write the checks as JSON to this path.
    #[arg(long, value_name = "PATH", requires = "calibrate")]
    pub json: Option<PathBuf>,
}

/// The gate's effect-size floors and significance level: one definition
/// for `compare` and `bisect`, which judge with the same test.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// Effect-size floor for throughput, p50 and p90, a percentage (`5%`; a bare `5` is five
    /// percent too, a bare number below 1 is refused as ambiguous): smaller changes are
    /// `unchanged`.
    #[arg(long, value_name = "PERCENT", default_value = "5%", allow_hyphen_values = true)]
    pub threshold: String,
    /// Effect-size floor for the tail (p99, p99.9) and CPU per op, which are noisier; a
    /// percentage, as --threshold.
    #[arg(long, value_name = "PERCENT", default_value = "10%", allow_hyphen_values = true)]
    pub tail_threshold: String,
    /// Significance level, a fraction in (0, 1) (`0.05`, or `5%`): a metric changes only when
    /// both its Mann-Whitney U p-value and its Benjamini-Hochberg q-value (Welch's t-test on the
    /// log runs, corrected for every comparison) are below it; paired runs (one A/B invocation)
    /// are judged by the paired t-test on their log ratios.
    #[arg(long, value_name = "FRACTION", default_value = "0.05", allow_hyphen_values = true, value_parser = fraction_value)]
    pub alpha: f64,
}

/// Options of `wsbench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline results CSV.
    pub base: PathBuf,
    /// The results CSV to judge against the baseline.
    pub current: PathBuf,
    /// The gate's floors and significance level.
    #[command(flatten)]
    pub gate: GateArgs,
    /// Also write the verdicts as JSON to this path.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Also write the markdown report to this path (it is always printed on stdout).
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// The HDR logs of the A/B invocation that wrote the two files (`run --base-bin ... --hdr-dir
    /// DIR`: the current side's in DIR, the base's in DIR/base/). With them a latency percentile
    /// that some runs are too short to have (blank per run, e.g. p99.9 of a short run) is judged
    /// on each side's runs added into one histogram, by a sign-flip permutation test over the
    /// pairs. Percentiles every run has are judged by the shift test on the per-run values,
    /// with or without logs.
    #[arg(long, value_name = "DIR")]
    pub hdr_dir: Option<PathBuf>,
    /// Measure the gate's power instead of judging: plant METRIC=CHANGE (e.g. `p99_us=+20%`)
    /// into one cell of the current file at a time, and print for each cell whether the gate
    /// flags it, the fraction flagged, and the unplanted files' false alarms. Repeatable.
    #[arg(long, value_name = "METRIC=CHANGE")]
    pub plant: Vec<String>,
    /// Judge these two files as the second stage of FILE, the first A/B compare's `--json`
    /// report: the cells FILE found regressed, measured again with fresh pairs (`run
    /// --regressed-in FILE`). Only a metric regressed in both stages is `regressed` (exit 1); a
    /// regression of FILE that these files cannot judge stands (exit 1).
    #[arg(long, value_name = "FILE", conflicts_with = "plant")]
    pub confirms: Option<PathBuf>,
}

/// Options of `wsbench plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A results CSV written by `wsbench run --csv`.
    pub results: PathBuf,
    /// Directory for the charts (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// HdrHistogram logs written by `wsbench run --hdr-dir`, for percentile-spectrum charts.
    #[arg(long, value_name = "DIR")]
    pub hdr_dir: Option<PathBuf>,
    /// Chart width in pixels (320..=4096).
    #[arg(long, value_name = "PX", default_value_t = 960, allow_hyphen_values = true, value_parser = chart_px)]
    pub width: u32,
    /// Chart height in pixels (320..=4096).
    #[arg(long, value_name = "PX", default_value_t = 600, allow_hyphen_values = true, value_parser = chart_px)]
    pub height: u32,
}

/// More measured runs per cell than this is taken for a typo.
pub const MAX_RUNS: u64 = 1000;
/// The smallest chart side plotters lays out legibly.
pub const MIN_CHART_PX: u64 = 320;
/// The largest chart side (a 4096 x 4096 bitmap is 48 MiB).
pub const MAX_CHART_PX: u64 = 4096;

/// A whole number in `lo..=hi`, the error naming the value and the range
/// (clap adds the option's name).
fn whole_in(text: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let v: u64 = text.trim().parse().map_err(|_| format!("`{text}` is not a whole number; allowed: {lo}..={hi}"))?;
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is out of range; allowed: {lo}..={hi}"))
    }
}

fn max_runs_value(text: &str) -> Result<usize, String> {
    whole_in(text, 2, MAX_RUNS).map(|v| v as usize)
}

fn runs_value(text: &str) -> Result<usize, String> {
    whole_in(text, 1, MAX_RUNS).map(|v| v as usize)
}

fn seed_value(text: &str) -> Result<u64, String> {
    whole_in(text, 0, u64::MAX)
}

fn chart_px(text: &str) -> Result<u32, String> {
    whole_in(text, MIN_CHART_PX, MAX_CHART_PX).map(|v| v as u32)
}

fn workers_value(text: &str) -> Result<usize, String> {
    whole_in(text, 1, wsbench_schedulers::MAX_WORKERS as u64).map(|v| v as usize)
}

/// The most shuffles `history detect --permutations` takes.
pub const MAX_PERMUTATIONS: u64 = 100_000;

fn permutations_value(text: &str) -> Result<usize, String> {
    whole_in(text, 1, MAX_PERMUTATIONS).map(|v| v as usize)
}

fn min_size_value(text: &str) -> Result<usize, String> {
    whole_in(text, 2, MAX_RUNS).map(|v| v as usize)
}

/// A fraction in (0, 1), the error naming the value and the forms
/// (clap adds the option's name).
fn fraction_value(text: &str) -> Result<f64, String> {
    crate::parse::parse_fraction(text).map_err(|e| format!("{e:#}"))
}

/// Where the history lives unless `--db` says otherwise.
pub const DEFAULT_HISTORY_DB: &str = "results/history.sqlite";

/// Options of `wsbench history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// What to do with the history.
    #[command(subcommand)]
    pub command: HistoryCommand,
}

/// The `history` subcommands.
#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Store runs: run directories (their results.csv, and results.json for the environment) or
    /// results CSVs. Adding a run that is already held changes nothing.
    Add(HistoryAddArgs),
    /// Show the runs the history holds, one line per run, oldest first.
    List(HistoryDbArgs),
    /// Find change points per (host, cell, metric) series; exit 1 when the newest change point of
    /// a series is a regression beyond the floors, 0 otherwise, 2 on unusable input.
    Detect(HistoryDetectArgs),
}

/// `--db`, shared by every history command.
#[derive(Debug, Args, Clone)]
pub struct HistoryDbArgs {
    /// The history database (SQLite; created by `history add` when missing).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_HISTORY_DB)]
    pub db: PathBuf,
}

/// Options of `wsbench history add`.
#[derive(Debug, Args)]
pub struct HistoryAddArgs {
    /// Run directories (holding results.csv) or results CSVs.
    #[arg(required = true, value_name = "RUN_DIR|CSV")]
    pub inputs: Vec<PathBuf>,
    /// The database.
    #[command(flatten)]
    pub db: HistoryDbArgs,
}

/// Options of `wsbench history detect`.
#[derive(Debug, Args)]
pub struct HistoryDetectArgs {
    /// The database.
    #[command(flatten)]
    pub db: HistoryDbArgs,
    /// Metrics (CSV column names, comma-separated) or `all` [default: throughput_per_s, p50_us,
    /// p90_us, p99_us, p999_us].
    #[arg(long, value_name = "LIST|all")]
    pub metric: Option<String>,
    /// The split statistic: `mean-shift` (largest two-sample t, tested against Gaussian noise) or
    /// `e-divisive` (energy distance, tested by shuffling; needs longer series).
    #[arg(long, value_name = "METHOD", default_value = "mean-shift", value_parser = ["mean-shift", "e-divisive"])]
    pub method: String,
    /// A split is a change point when its p-value is below this: a fraction in (0, 1) (`0.001`, or
    /// `0.1%`) [default: 0.001 for mean-shift, 0.01 for e-divisive].
    #[arg(long, value_name = "FRACTION", value_parser = fraction_value)]
    pub p_value: Option<f64>,
    /// Most draws of the Monte Carlo test, which stops once 20 draws reach the split (1..=100000)
    /// [default: 19999 for mean-shift, 4999 for e-divisive].
    #[arg(long, value_name = "N", value_parser = permutations_value)]
    pub permutations: Option<usize>,
    /// Fewest runs on each side of a change point (2..=1000).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = min_size_value)]
    pub min_size: usize,
    /// Floor for throughput, p50, p90, a percentage as in compare (`5%`; a bare number below 1 is
    /// refused as ambiguous): smaller changes are `shift`, not regressions.
    #[arg(long, value_name = "PERCENT", default_value = "5%", allow_hyphen_values = true)]
    pub threshold: String,
    /// Floor for p99, p99.9 and max, a percentage as --threshold.
    #[arg(long, value_name = "PERCENT", default_value = "10%", allow_hyphen_values = true)]
    pub tail_threshold: String,
    /// Also write the change points as JSON to this path.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}

/// Options of `wsbench report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The HTML file to write.
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,
    /// A run directory (results.csv, compare.json) whose comparison and scaling curves to show;
    /// default: the newest run in the history.
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// The database.
    #[command(flatten)]
    pub db: HistoryDbArgs,
}

/// Options of `wsbench serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on, e.g. `0.0.0.0:8080` (port 0 picks a free port; the bound address is
    /// printed first, as `listening on ADDR`).
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// The scheduler serving (see `wsbench list`).
    #[arg(long, value_name = "NAME", default_value = "steal-half")]
    pub sched: String,
    /// Worker threads [default: logical CPUs].
    #[arg(long, value_name = "N")]
    pub workers: Option<String>,
    /// The workload whose server runs: tcp-rpc, mixed or http.
    #[arg(long, value_name = "NAME", default_value = "http")]
    pub workload: String,
    /// A workload parameter `name=value` (repeatable): the server's (service time, fanout, ...).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// A scheduler knob `name=value` (repeatable, one value each).
    #[arg(long = "knob", value_name = "NAME=VALUE")]
    pub knobs: Vec<String>,
    /// CPU quota of this process in CPUs (`0.5`, `2`): it moves into a cgroup of its own for its
    /// life (see `run --cpus`).
    #[arg(long, value_name = "Q", allow_hyphen_values = true)]
    pub cpus: Option<String>,
    /// CPUs this process may use, a cgroup cpuset (`0-1`; see `run --cpuset`).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub cpuset: Option<String>,
    /// Stop after this long (`30s`); without it, serve until SIGINT or SIGTERM.
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<String>,
    /// Append the server's row (requests, service time, counters, CPU over its life) to this CSV.
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write the server's row and the environment as JSON.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}

/// Options of `wsbench load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The server, `HOST:PORT` (a `wsbench serve`, or anything speaking the workload's protocol).
    #[arg(long, value_name = "ADDR")]
    pub target: String,
    /// The workload whose client runs: tcp-rpc, mixed or http.
    #[arg(long, value_name = "NAME", default_value = "http")]
    pub workload: String,
    /// Offered load of this process in requests/s: one value, a list or a range (one cell each)
    /// [default: the workload's rate per worker x --server-workers].
    #[arg(long, value_name = "LIST")]
    pub rate: Option<String>,
    /// A workload parameter `name=value` (repeatable): connections, client-threads, arrival, ...
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Measured time per run.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub duration: String,
    /// Warm-up before each run's measurement; discarded.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub warmup: String,
    /// CPU quota of this process in CPUs (`0.5`, `2`): it moves into a cgroup of its own for its
    /// life (see `run --cpus`).
    #[arg(long, value_name = "Q", allow_hyphen_values = true)]
    pub cpus: Option<String>,
    /// CPUs this process may use, a cgroup cpuset (`0-1`; see `run --cpuset`).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub cpuset: Option<String>,
    /// Measured runs per rate (1..=1000).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = runs_value)]
    pub runs: usize,
    /// Seed of the arrival schedule and the handlers' draws (run i uses seed + i); give each load
    /// process its own.
    #[arg(long, value_name = "N", default_value_t = 42, value_parser = seed_value)]
    pub seed: u64,
    /// The scheduler column of the rows (the load process cannot see the server's runtime); no
    /// commas, quotes or line breaks.
    #[arg(long, value_name = "NAME", default_value = "remote")]
    pub label: String,
    /// The server's worker count (1..=4096): recorded in the workers column, and sizes the
    /// default rate.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = workers_value)]
    pub server_workers: usize,
    /// Append one row per run to this CSV.
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write the results and the environment as JSON.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a markdown summary.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Write full latency histograms as HdrHistogram interval logs into this directory.
    #[arg(long, value_name = "DIR")]
    pub hdr_dir: Option<PathBuf>,
    /// With a rate sweep: the highest rate at which this objective holds, e.g. `p99<1ms`.
    #[arg(long, value_name = "pXX<DURATION")]
    pub slo: Option<String>,
    /// No per-run messages on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Every column: without it the table keeps to 120 columns, leaving out p99.9, max, spread,
    /// ideal p99, steals, ... in that order as needed (a footnote names them); with it, also the
    /// uncorrected p99 beside the corrected one. The markdown report always has every column.
    #[arg(long)]
    pub wide: bool,
}
