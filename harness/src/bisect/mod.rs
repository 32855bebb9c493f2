//! `wsbench bisect`: from a regression to the first bad version or commit.
//!
//! Steps:
//! 1. the range ([`points`]): published versions of a reference runtime,
//!    commits of the repository around the current directory, or commits
//!    of a reference runtime's checkout (`--path`, [`checkout`]); every
//!    malformed range is a named error (exit 2);
//! 2. the estimate (steps x (build + runs)) is printed; `--dry-run` stops
//!    here, listing the points;
//! 3. the ends: the bad end against the good one ([`step`]); a change the
//!    gate does not find at `--max-runs` pairs ends "not reproduced"
//!    (exit 1), with the figures;
//! 4. each step ([`search`]): the point nearest the middle of the open
//!    range against the good end; a point that does not build, does not
//!    run or stays undecided at the cap is skipped, as `git bisect skip`;
//! 5. the result: "first bad: X" with its change and what moved with it
//!    (exit 0), or "undecidable" with the points it may be (exit 1); a
//!    table of the steps, and `--json` for machines.
//!
//! Every judged A/B, the ends' included, is kept in the results cache
//! ([`cache`]): a second bisect over the same range, cell and settings
//! takes each step from it ("cached") and neither builds nor runs it.

pub mod cache;
pub mod checkout;
pub mod git;
pub mod points;
pub mod search;
pub mod step;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::compare::{format_q, Floors};
use crate::exit::EXIT_FAILURE;
use crate::output::export::{check_output, marks, write_output, Kind};
use crate::output::table::Table;
use crate::stats::median;
use cache::Results;
use points::{Point, Range};
use search::{Mark, Search, State};
use step::{Bench, Call, Judged, Side};

/// `wsbench bisect`'s options, checked (`crate::options`).
#[derive(Debug, Clone)]
pub struct Options {
    /// The good end, as given.
    pub good: String,
    /// The bad end, as given.
    pub bad: String,
    /// The one scheduler.
    pub sched: String,
    /// `--path`: a checkout of the reference's repository.
    pub path: Option<PathBuf>,
    /// The cell as `run` options, passed to every point's `run`.
    pub cell: Vec<String>,
    /// The CSV column judged.
    pub metric: &'static str,
    /// Most pairs per step.
    pub max_runs: usize,
    /// Seed of the first pair.
    pub seed: u64,
    /// Warm-up plus duration of one run.
    pub per_run: Duration,
    /// The gate's floors and level.
    pub floors: Floors,
    /// List and estimate only.
    pub dry_run: bool,
    /// Measure every step again, replacing its cached result.
    pub remeasure: bool,
    /// The JSON report.
    pub json: Option<PathBuf>,
}

/// One measured point, for the table and the JSON report.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// `ends`, or the step's number.
    pub step: String,
    /// The point (the bad end, for the ends).
    pub point: String,
    /// Its commit subject.
    pub about: String,
    /// `bad`, `good`, `skipped`; `reproduced` / `not reproduced` for the ends.
    pub call: String,
    /// Why it was skipped.
    pub why: String,
    /// The A/B's figures; `None` when it did not build or run.
    pub judged: Option<Judged>,
    /// Whether the figures came from the results cache (nothing built or
    /// run for this step).
    pub cached: bool,
}

/// The whole bisect, as `--json` writes it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `versions`, `commits` or `checkout`.
    pub kind: &'static str,
    /// The cell, as `run` options.
    pub cell: Vec<String>,
    /// The CSV column judged.
    pub metric: &'static str,
    /// The good end.
    pub good: String,
    /// The bad end.
    pub bad: String,
    /// Every point, the ends included.
    pub points: Vec<String>,
    /// The ends first, then each step.
    pub steps: Vec<Step>,
    /// `found`, `not reproduced` or `undecidable`.
    pub result: &'static str,
    /// The first bad point, when found.
    pub first_bad: Option<String>,
    /// Undecidable: the points the first bad one may be.
    pub candidates: Vec<String>,
    /// Where this bisect's runs' CSVs are; blank when every result was
    /// cached.
    pub runs_dir: String,
}

impl Report {
    /// The report before any step.
    fn new(opts: &Options, range: &Range, points: &[Point]) -> Report {
        Report {
            kind: range.name(),
            cell: opts.cell.clone(),
            metric: opts.metric,
            good: points[0].label.clone(),
            bad: points[points.len() - 1].label.clone(),
            points: points.iter().map(|p| p.label.clone()).collect(),
            steps: Vec::new(),
            result: "not reproduced",
            first_bad: None,
            candidates: Vec::new(),
            runs_dir: String::new(),
        }
    }
}

/// Measures points against the good end, through the results cache.
struct Measure<'a> {
    range: &'a Range,
    bench: Bench<'a>,
    cache: Results,
    good: &'a Point,
    /// The good end's binary, built when first needed.
    good_bin: Option<PathBuf>,
}

impl Measure<'_> {
    /// The good end's binary; failing to build it ends the bisect.
    fn good_bin(&mut self) -> Result<PathBuf> {
        if let Some(bin) = &self.good_bin {
            return Ok(bin.clone());
        }
        let bin = self.range.build(self.good).with_context(|| format!("the good end {}", self.good.label))?;
        self.good_bin = Some(bin.clone());
        Ok(bin)
    }

    /// Builds `point` and judges it against the good end (built as
    /// `good_bin`), filing the result in the cache.
    fn measure(&mut self, point: &Point, good_bin: &std::path::Path, ends: Option<&Judged>) -> Result<(Call, Judged)> {
        let bin = self.range.build(point)?;
        let good = Side { bin: good_bin, label: &self.good.label };
        let (call, judged) = self.bench.judge(Side { bin: &bin, label: &point.label }, good, ends)?;
        self.cache.put(point, ends, call, &judged, self.bench.dir());
        Ok((call, judged))
    }

    /// Where this bisect's runs are; blank when none ran.
    fn runs_dir(&self) -> String {
        if self.bench.ran() {
            self.bench.dir().display().to_string()
        } else {
            String::new()
        }
    }
}

/// `wsbench bisect`.
pub fn main(opts: &Options) -> Result<ExitCode> {
    if let Some(json) = &opts.json {
        check_output("--json", json, Kind::Json)?;
    }
    let range = points::kind(&opts.sched, &opts.good, &opts.bad, opts.path.as_deref())?;
    let points = range.points(&opts.good, &opts.bad)?;
    let between = points.len() - 2;
    let (good, bad) = (&points[0], &points[between + 1]);
    crate::outln!(
        "bisect {} {} (good) .. {} (bad): {between} between; {} on `{}`",
        range.title(),
        good.label,
        bad.label,
        opts.metric,
        opts.cell.join(" ")
    );
    let work = range.work_dir();
    let source = crate::run::pinned::build::source_id();
    let cache = Results::new(work.join("results"), opts, range.name(), (good, bad), source);
    crate::outln!("{}", estimate(opts, &range, &points, &cache));
    if opts.dry_run {
        return dry_run(&points);
    }
    let mut report = Report::new(opts, &range, &points);
    let runs = work.join("runs").join(format!("{:.0}", crate::run::ab::new_session()));
    let mut m = Measure { range: &range, bench: Bench::new(opts, runs), cache, good, good_bin: None };
    let (call, ends, cached) = match m.cache.get(bad, None) {
        Some((call, judged)) => (call, judged, true),
        None => {
            let good_bin = m.good_bin()?;
            let (call, judged) =
                m.measure(bad, &good_bin, None).with_context(|| format!("the bad end {}", bad.label))?;
            (call, judged, false)
        }
    };
    let ends_call = if call == Call::Bad { "reproduced" } else { "not reproduced" };
    crate::outln!("ends: {} against {}: {}{}", bad.label, good.label, figures(opts, &ends, ends_call), mark(cached));
    report.steps.push(Step {
        step: "ends".into(),
        point: bad.label.clone(),
        about: bad.about.clone(),
        call: ends_call.into(),
        why: String::new(),
        judged: Some(ends.clone()),
        cached,
    });
    if call != Call::Bad {
        crate::outln!(
            "not reproduced: the gate finds no significant change of {} between {} and {} at {} pairs (alpha {})",
            opts.metric,
            report.good,
            report.bad,
            ends.pairs,
            opts.floors.alpha
        );
        report.runs_dir = m.runs_dir();
        return finish(opts, &report, EXIT_FAILURE);
    }
    let state = walk(opts, &points, &mut m, &ends, &mut report)?;
    report.runs_dir = m.runs_dir();
    conclude(opts, &points, state, &mut report)
}

/// ` (cached)` after a progress line whose figures came from the cache.
fn mark(cached: bool) -> &'static str {
    if cached {
        " (cached)"
    } else {
        ""
    }
}

/// The search loop: one step per point until the state is final.
fn walk(opts: &Options, points: &[Point], m: &mut Measure<'_>, ends: &Judged, report: &mut Report) -> Result<State> {
    let mut search = Search::new(points.len() - 2);
    loop {
        let i = match search.state() {
            State::Next(i) => i,
            done => return Ok(done),
        };
        let point = &points[i];
        let number = report.steps.len();
        let (measured, cached) = match m.cache.get(point, Some(ends)) {
            Some(hit) => (Ok(hit), true),
            None => {
                let good_bin = m.good_bin()?;
                (m.measure(point, &good_bin, Some(ends)), false)
            }
        };
        let mut step = Step {
            step: number.to_string(),
            point: point.label.clone(),
            about: point.about.clone(),
            call: "skipped".into(),
            why: String::new(),
            judged: None,
            cached,
        };
        let mark_as = match measured {
            Ok((call, judged)) => {
                let (mark_as, text) = match call {
                    Call::Bad => (Mark::Bad, "bad"),
                    Call::Good => (Mark::Good, "good"),
                    Call::Undecided => (Mark::Skip, "skipped"),
                };
                if call == Call::Undecided {
                    step.why = format!("undecided at {} pairs", judged.pairs);
                }
                let line = figures(opts, &judged, text);
                crate::outln!("step {number}: {} {}: {line}{}", point.label, point.about, mark(cached));
                step.call = text.into();
                step.judged = Some(judged);
                mark_as
            }
            Err(e) => {
                step.why = crate::exit::render(&e);
                crate::outln!("step {number}: {} {}: skipped: {}", point.label, point.about, step.why);
                Mark::Skip
            }
        };
        search.mark(i, mark_as);
        report.steps.push(step);
    }
}

/// Prints the result and the table, writes the JSON, picks the exit status.
fn conclude(opts: &Options, points: &[Point], state: State, report: &mut Report) -> Result<ExitCode> {
    match state {
        State::Found(i) => {
            let point = &points[i];
            report.result = "found";
            report.first_bad = Some(point.label.clone());
            let judged = report.steps.iter().rev().find(|s| s.point == point.label).and_then(|s| s.judged.clone());
            let figures = judged.map_or_else(String::new, |j| format!(": {}", figures(opts, &j, "bad")));
            crate::outln!("first bad: {} {}{figures}", point.label, point.about);
            finish(opts, report, 0)
        }
        State::Undecidable(candidates) => {
            report.result = "undecidable";
            report.candidates = candidates.iter().map(|&i| points[i].label.clone()).collect();
            crate::outln!(
                "undecidable: only skipped points are left; the first bad one is one of: {}",
                report.candidates.join(", ")
            );
            finish(opts, report, EXIT_FAILURE)
        }
        State::Next(_) => unreachable!("the walk ends only in a final state"),
    }
}

/// `-12.3% (q 0.002, 10 pairs) -> bad; moved: polls +0.5 (+40%)`.
fn figures(opts: &Options, j: &Judged, call: &str) -> String {
    let q = j.q.map_or_else(|| "-".to_string(), format_q);
    let moved = if j.mechanism.is_empty() { String::new() } else { format!("; moved: {}", j.mechanism.join(", ")) };
    format!("{} {:+.1}% (q {q}, {} pairs) -> {call}{moved}", opts.metric, j.change * 100.0, j.pairs)
}

/// The table of steps, the JSON, and the exit status.
fn finish(opts: &Options, report: &Report, code: u8) -> Result<ExitCode> {
    let cell = |j: &Option<Judged>, f: &dyn Fn(&Judged) -> String| j.as_ref().map_or_else(String::new, f);
    let rows = report
        .steps
        .iter()
        .map(|s| {
            vec![
                s.step.clone(),
                s.point.clone(),
                s.call.clone(),
                cell(&s.judged, &|j| format!("{:+.1}%", j.change * 100.0)),
                cell(&s.judged, &|j| j.q.map_or_else(|| "-".into(), format_q)),
                cell(&s.judged, &|j| j.pairs.to_string()),
                if s.why.is_empty() {
                    cell(&s.judged, &|j| j.mechanism.join(", "))
                } else {
                    s.why.lines().next().unwrap_or_default().to_string()
                },
            ]
        })
        .collect();
    let header = ["step", "point", "call", "change", "q", "pairs", "moved / why"];
    let table = Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
        right: vec![false, false, false, true, true, true, false],
    };
    crate::outln!("\n{}", table.render_text());
    if report.runs_dir.is_empty() {
        crate::outln!("runs: none new (every result was cached; --remeasure measures again)");
    } else {
        crate::outln!("runs: {}", report.runs_dir);
    }
    if let Some(path) = &opts.json {
        let bytes = marks::json(report).context("cannot encode the bisect")?;
        write_output(path, &bytes).context("the bisect is on stdout, but --json could not be written")?;
    }
    Ok(ExitCode::from(code))
}

/// The estimate: steps x (build + runs), with what is known of each.
fn estimate(opts: &Options, range: &Range, points: &[Point], cache: &Results) -> String {
    let steps = Search::most_steps(points.len() - 2) + 1;
    let unbuilt = points.iter().filter(|p| !range.is_built(p)).count();
    let batches = step::schedule(opts.max_runs);
    let runs_s = |pairs: usize| pairs as f64 * 2.0 * opts.per_run.as_secs_f64();
    let recorded = range.recorded_build_s();
    let build = if recorded.is_empty() {
        "no build time recorded yet (each build is minutes of cargo)".to_string()
    } else {
        format!("{:.0} s per build (median of {} recorded)", median(&recorded), recorded.len())
    };
    let between = &points[1..points.len() - 1];
    let cached = match cache.get(&points[points.len() - 1], None) {
        Some((_, ends)) => format!(
            "the ends' and {} of {} points' results cached",
            between.iter().filter(|p| cache.get(p, Some(&ends)).is_some()).count(),
            between.len()
        ),
        None => "no results cached".to_string(),
    };
    format!(
        "estimate: {steps} A/B steps at most (the ends + {}) x (build + {:.0}..{:.0} s of runs: {}..{} pairs of {} ms \
         each side, plus a process start per run); {unbuilt} of {} points not built yet, {build}; {cached}",
        steps - 1,
        runs_s(batches[0]),
        runs_s(opts.max_runs),
        batches[0],
        opts.max_runs,
        opts.per_run.as_millis(),
        points.len()
    )
}

fn dry_run(points: &[Point]) -> Result<ExitCode> {
    let first = match Search::new(points.len() - 2).state() {
        State::Next(i) => i,
        _ => 0,
    };
    for (i, p) in points.iter().enumerate() {
        let role = match i {
            0 => " (good)",
            _ if i + 1 == points.len() => " (bad)",
            _ if i == first => " (first midpoint)",
            _ => "",
        };
        crate::outln!("{i:>4}  {} {}{role}", p.label, p.about);
    }
    crate::outln!("dry run: nothing built or run");
    Ok(ExitCode::SUCCESS)
}
