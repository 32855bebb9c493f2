//! Turns each subcommand's clap arguments (`cli`) into the typed, checked
//! options its module takes, so that no module below the front depends on
//! clap. `run`'s own options go through `config` (the matrix has most to
//! check); `serve` and `load` reuse `run`'s parser for their shared flags,
//! so that every value is checked as for `run`.

use std::net::{SocketAddr, ToSocketAddrs};

use anyhow::{ensure, Context, Result};
use clap::Parser;
use wsbench_workloads::remote::{client_only_params, servable_workloads};

use crate::bisect;
use crate::cli::{
    BisectArgs, Cli, CompareArgs, GateArgs, HistoryArgs, HistoryCommand, HistoryDetectArgs, LoadArgs, MergeArgs,
    PlotArgs, ReportArgs, ServeArgs,
};
use crate::compare;
use crate::config::RunConfig;
use crate::data::merge;
use crate::history::{self, detect::Floors as HistoryFloors, DetectOptions};
use crate::output::{plot, report};
use crate::parse::{check_label, parse_duration, parse_percent};
use crate::remote::{LoadOptions, ServeOptions};
use crate::stats::changepoint::{Method, Search};

/// The gate's floors of `compare` and `bisect`, checked.
fn floors(g: &GateArgs) -> Result<compare::Floors> {
    compare::floors_of(&g.threshold, &g.tail_threshold, g.alpha)
}

/// `wsbench compare`.
pub fn compare(a: &CompareArgs) -> Result<compare::Options> {
    Ok(compare::Options {
        base: a.base.clone(),
        current: a.current.clone(),
        floors: floors(&a.gate)?,
        json: a.json.clone(),
        out: a.out.clone(),
        hdr_dir: a.hdr_dir.clone(),
        plant: a.plant.iter().map(|p| compare::plant::parse(p).map_err(compare::unusable)).collect::<Result<_>>()?,
        confirms: a.confirms.clone(),
    })
}

/// `wsbench plot` (the pixel bounds are checked by clap's value parser).
pub fn plot(a: &PlotArgs) -> plot::Options {
    plot::Options {
        results: a.results.clone(),
        out: a.out.clone(),
        hdr_dir: a.hdr_dir.clone(),
        width: a.width,
        height: a.height,
    }
}

/// `wsbench merge`.
pub fn merge(a: &MergeArgs) -> merge::Options {
    merge::Options { files: a.files.clone(), out: a.out.clone() }
}

/// `wsbench report`.
pub fn report(a: &ReportArgs) -> report::Options {
    report::Options { out: a.out.clone(), run: a.run.clone(), db: a.db.db.clone() }
}

/// `wsbench history`.
pub fn history(a: &HistoryArgs) -> Result<history::Command> {
    Ok(match &a.command {
        HistoryCommand::Add(add) => history::Command::Add { inputs: add.inputs.clone(), db: add.db.db.clone() },
        HistoryCommand::List(db) => history::Command::List { db: db.db.clone() },
        HistoryCommand::Detect(d) => history::Command::Detect(detect(d)?),
    })
}

/// `wsbench history detect` (`--method`, `--p-value`, `--permutations`
/// and `--min-size` are bounded by their clap parsers; the method sets the
/// defaults of the other two).
pub fn detect(a: &HistoryDetectArgs) -> Result<DetectOptions> {
    let floors = HistoryFloors {
        threshold: parse_percent(&a.threshold).context("bad --threshold")?,
        tail_threshold: parse_percent(&a.tail_threshold).context("bad --tail-threshold")?,
    };
    let method = if a.method == Method::EDivisive.name() { Method::EDivisive } else { Method::MeanShift };
    let defaults = Search::of(method);
    let search = Search {
        p_value: a.p_value.unwrap_or(defaults.p_value),
        permutations: a.permutations.unwrap_or(defaults.permutations),
        min_size: a.min_size,
        ..defaults
    };
    Ok(DetectOptions {
        db: a.db.db.clone(),
        metrics: history::metrics_of(a.metric.as_deref())?,
        search,
        floors,
        json: a.json.clone(),
    })
}

/// Workload selections that name more than one workload.
const WORKLOAD_GROUPS: [&str; 3] = ["all", "default", "zoo"];

/// `wsbench bisect`: the cell is checked by `run`'s own parser, and must
/// be exactly one cell.
pub fn bisect(a: &BisectArgs) -> Result<bisect::Options> {
    ensure!(
        !a.sched.contains(',') && a.sched != "all",
        "--sched `{}` names several schedulers; bisect judges one cell: give one name (see `wsbench list`)",
        a.sched
    );
    ensure!(
        !a.sched.contains('@'),
        "--sched `{}`: a bisect over published versions takes the reference without `@` and the versions as \
         --good/--bad, e.g. --sched tokio --good 1.49.0 --bad 1.52.1",
        a.sched
    );
    ensure!(
        !a.workload.contains(',') && !WORKLOAD_GROUPS.contains(&a.workload.as_str()),
        "--workload `{}` names several workloads; bisect judges one cell: give one name (see `wsbench list`)",
        a.workload
    );
    let mut cell: Vec<String> =
        ["--sched", a.sched.as_str(), "--workload", a.workload.as_str(), "--duration", a.duration.as_str()]
            .iter()
            .map(|s| s.to_string())
            .collect();
    cell.extend(["--warmup".to_string(), a.warmup.clone()]);
    push_opt(&mut cell, "--workers", a.workers.clone());
    push_opt(&mut cell, "--rate", a.rate.clone());
    push_opt(&mut cell, "--timeout", a.timeout.clone());
    push_each(&mut cell, "--param", &a.params);
    push_each(&mut cell, "--knob", &a.knobs);
    if a.pin {
        cell.push("--pin".to_string());
    }
    let config = config_of(&cell)?;
    let one = |n: usize, what: &str| {
        ensure!(n == 1, "{what} names {n} cells; bisect judges one cell: give one value");
        Ok(())
    };
    one(config.workers.len(), &format!("--workers `{}`", a.workers.as_deref().unwrap_or_default()))?;
    one(config.knob_sets.len(), &format!("--knob `{}`", a.knobs.join(" ")))?;
    one(config.rates.as_ref().map_or(1, Vec::len), &format!("--rate `{}`", a.rate.as_deref().unwrap_or_default()))?;
    let open_loop = config.workloads.first().is_some_and(|w| w.open_loop);
    let metric = match a.metric.as_deref() {
        Some("time") => "p50_us",
        Some("cpu") => "cpu_us_per_op",
        Some("p99") => "p99_us",
        Some("throughput") => "throughput_per_s",
        _ if open_loop => "p99_us",
        _ => "throughput_per_s",
    };
    Ok(bisect::Options {
        good: a.good.clone(),
        bad: a.bad.clone(),
        sched: a.sched.clone(),
        path: a.path.clone(),
        cell,
        metric,
        max_runs: a.max_runs,
        seed: a.seed,
        per_run: config.warmup + config.duration,
        floors: floors(&a.gate)?,
        dry_run: a.dry_run,
        remeasure: a.remeasure,
        json: a.json.clone(),
    })
}

/// Builds a [`RunConfig`] from `run`'s own parser; `args` are `run` options.
fn config_of(args: &[String]) -> Result<RunConfig> {
    // Only clap's first line: its usage and `--help` hint are `run`'s.
    let cli = Cli::try_parse_from(std::iter::once("wsbench".to_string()).chain(args.iter().cloned()))
        .map_err(|e| anyhow::anyhow!("{}", e.to_string().lines().next().unwrap_or_default()))?;
    RunConfig::from_args(&cli.run)
}

fn push_opt(args: &mut Vec<String>, flag: &str, value: Option<String>) {
    if let Some(v) = value {
        args.push(flag.to_string());
        args.push(v);
    }
}

fn push_each(args: &mut Vec<String>, flag: &str, values: &[String]) {
    for v in values {
        args.extend([flag.to_string(), v.clone()]);
    }
}

fn check_servable(workload: &str) -> Result<()> {
    let servable = servable_workloads();
    ensure!(
        servable.contains(&workload),
        "--workload `{workload}` has no separate server and client; allowed: {}",
        servable.join(", ")
    );
    Ok(())
}

fn resolve(addr: &str, flag: &str) -> Result<SocketAddr> {
    addr.to_socket_addrs()
        .with_context(|| format!("bad {flag} `{addr}`; allowed: HOST:PORT or IP:PORT"))?
        .next()
        .with_context(|| format!("{flag} `{addr}` resolves to no address"))
}

/// Refuses a `serve --param` that only the client reads (the workloads
/// crate's list: `serve` has no client, so they would change nothing).
fn check_server_params(params: &[String]) -> Result<()> {
    let client_only = client_only_params();
    for text in params {
        let name = text.split_once('=').map_or(text.as_str(), |(n, _)| n).trim();
        ensure!(
            !client_only.contains(&name),
            "serve --param `{text}` has no effect on a server: {name} is read by the load generator (give it to \
             `wsbench load`); the client-only parameters are {}",
            client_only.join(", ")
        );
    }
    Ok(())
}

/// `wsbench serve`.
pub fn serve(a: &ServeArgs) -> Result<ServeOptions> {
    check_servable(&a.workload)?;
    check_server_params(&a.params)?;
    let listen = resolve(&a.listen, "--listen")?;
    let mut args: Vec<String> =
        ["--sched", &a.sched, "--workload", &a.workload, "--runs", "1"].map(String::from).to_vec();
    push_opt(&mut args, "--workers", a.workers.clone());
    push_opt(&mut args, "--csv", a.csv.as_ref().map(|p| p.display().to_string()));
    push_opt(&mut args, "--json", a.json.as_ref().map(|p| p.display().to_string()));
    push_each(&mut args, "--param", &a.params);
    push_each(&mut args, "--knob", &a.knobs);
    push_opt(&mut args, "--cpus", a.cpus.clone());
    push_opt(&mut args, "--cpuset", a.cpuset.clone());
    let limit = a.duration.as_deref().map(parse_duration).transpose().context("bad --duration")?;
    if let (Some(text), Some(limit)) = (&a.duration, limit) {
        ensure!(
            !limit.is_zero(),
            "--duration `{text}` must be longer than zero (without it, serve until SIGINT/SIGTERM)"
        );
    }
    let config = config_of(&args)?;
    ensure!(
        config.scheds.len() == 1 && config.workers.len() == 1 && config.knob_sets.len() == 1,
        "serve runs one scheduler, one worker count and one value per knob"
    );
    ensure!(config.limits.len() == 1, "serve runs under one --cpus value (this process has one cgroup)");
    Ok(ServeOptions { config, listen, limit })
}

/// `wsbench load`.
pub fn load(a: &LoadArgs) -> Result<LoadOptions> {
    check_servable(&a.workload)?;
    check_label("--label", &a.label)?;
    let target = resolve(&a.target, "--target")?;
    ensure!(
        target.port() != 0,
        "--target `{}` has port 0, which no server listens on; allowed: HOST:PORT with the port `serve` printed",
        a.target
    );
    let mut args: Vec<String> = ["--sched", "tokio", "--workload", &a.workload].map(String::from).to_vec();
    args.extend(["--workers".into(), a.server_workers.to_string(), "--runs".into(), a.runs.to_string()]);
    args.extend(["--duration".into(), a.duration.clone(), "--warmup".into(), a.warmup.clone()]);
    args.extend(["--seed".into(), a.seed.to_string()]);
    push_opt(&mut args, "--rate", a.rate.clone());
    push_opt(&mut args, "--csv", a.csv.as_ref().map(|p| p.display().to_string()));
    push_opt(&mut args, "--json", a.json.as_ref().map(|p| p.display().to_string()));
    push_opt(&mut args, "--markdown", a.markdown.as_ref().map(|p| p.display().to_string()));
    push_opt(&mut args, "--hdr-dir", a.hdr_dir.as_ref().map(|p| p.display().to_string()));
    push_opt(&mut args, "--slo", a.slo.clone());
    push_each(&mut args, "--param", &a.params);
    push_opt(&mut args, "--cpus", a.cpus.clone());
    push_opt(&mut args, "--cpuset", a.cpuset.clone());
    let mut config = config_of(&args)?;
    ensure!(config.limits.len() == 1, "load runs under one --cpus value (this process has one cgroup)");
    config.wide = a.wide;
    // The ratio columns compare rows with this label to themselves only.
    config.baseline_sched = a.label.clone();
    Ok(LoadOptions { config, target, label: a.label.clone(), quiet: a.quiet })
}
