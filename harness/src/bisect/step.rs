//! One step: a paired, interleaved A/B of a point against the good end,
//! made by the point's own binary as `run --base-bin GOOD` (each pair back
//! to back, the order alternating; [`crate::run::ab`]), in batches that
//! grow (5, 10, 20, ... pairs up to `--max-runs`) until the step is
//! decisive, and judged by the gate ([`crate::compare::compare`]) on all
//! the pairs made so far.
//!
//! Decisive means, for the ends (bad against good): the gate's verdict on
//! the metric is `regressed` or `improved`. For a point between: *good*
//! when its pairs sit significantly nearer the good end than halfway to
//! the bad end (a one-sided t-test of its log ratios against half the
//! ends' change, at `--alpha`), else *bad* when the gate gives it the
//! ends' verdict; neither at the cap is *undecided*, and the point is
//! skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::Options;
use crate::compare::{self, mechanism, Verdict};
use crate::data::load::{load, ResultsFile};
use crate::data::record::RunRecord;
use crate::run::ab;
use crate::run::isolate::stderr_tail;
use crate::stats::ttest::one_sample_t_p;

/// The first batch of pairs of a step; each later batch doubles the total.
pub const FIRST_PAIRS: usize = 5;

/// One side of an A/B: the binary and its label (a version or a short sha).
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The program.
    pub bin: &'a Path,
    /// Its name in messages and in the base CSV's git_sha column.
    pub label: &'a str,
}

/// The figures of one judged A/B.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Judged {
    /// Pairs with both runs ok.
    pub pairs: usize,
    /// Median of the metric on the base (good) side.
    pub base: f64,
    /// Median on the point's side.
    pub current: f64,
    /// The median pair ratio point/good, minus 1.
    pub change: f64,
    /// The gate's q-value on the metric.
    pub q: Option<f64>,
    /// The gate's verdict on the metric.
    pub verdict: Verdict,
    /// Points between: the one-sided p-value that the point sits nearer
    /// the good end than halfway.
    pub p_nearer_good: Option<f64>,
    /// The per-operation figures that moved with the verdict.
    pub mechanism: Vec<String>,
}

/// What a step decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Call {
    /// Ends: the gate found the change; points between: like the bad end.
    Bad,
    /// Like the good end.
    Good,
    /// Not decisive at the cap.
    Undecided,
}

/// The totals of pairs a step reaches, batch by batch, up to `max`.
pub fn schedule(max: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut total = FIRST_PAIRS.min(max);
    while total < max {
        out.push(total);
        total *= 2;
    }
    out.push(max);
    out
}

/// Makes the A/B runs of a bisect, its CSVs under one directory.
pub struct Bench<'a> {
    opts: &'a Options,
    dir: PathBuf,
    batches: usize,
}

impl<'a> Bench<'a> {
    /// Writes the runs' CSVs under `dir` (created with the first batch).
    pub fn new(opts: &'a Options, dir: PathBuf) -> Bench<'a> {
        Bench { opts, dir, batches: 0 }
    }

    /// The directory of the runs' CSVs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether any batch ran.
    pub fn ran(&self) -> bool {
        self.batches > 0
    }

    /// Judges `point` against `good`, escalating until decisive; `ends`
    /// is the judgement of the bad end, `None` when this is it.
    pub fn judge(&mut self, point: Side, good: Side, ends: Option<&Judged>) -> Result<(Call, Judged)> {
        let mut sides: Option<(ResultsFile, ResultsFile)> = None;
        let mut done = 0;
        let mut last = None;
        for total in schedule(self.opts.max_runs) {
            let seed = self.opts.seed + done as u64;
            let (base, current) = self.batch(point, good, total - done, seed)?;
            sides = Some(match sides {
                None => (base, current),
                Some((b, c)) => (joined(b, base, done), joined(c, current, done)),
            });
            done = total;
            let (base, current) = sides.as_ref().expect("set above");
            let (call, judged) = self.decide(base, current, ends)?;
            if call != Call::Undecided {
                return Ok((call, judged));
            }
            last = Some(judged);
        }
        Ok((Call::Undecided, last.expect("the schedule has a batch")))
    }

    /// One `run --base-bin` invocation of `pairs` pairs.
    fn batch(&mut self, point: Side, good: Side, pairs: usize, seed: u64) -> Result<(ResultsFile, ResultsFile)> {
        if self.batches == 0 {
            std::fs::create_dir_all(&self.dir).with_context(|| format!("cannot create `{}`", self.dir.display()))?;
        }
        self.batches += 1;
        let base_csv = self.dir.join(format!("ab{}-base-{}.csv", self.batches, good.label));
        let current_csv = self.dir.join(format!("ab{}-{}.csv", self.batches, point.label));
        let mut cmd = Command::new(point.bin);
        cmd.arg("run")
            .args(&self.opts.cell)
            .args(["--runs", &pairs.to_string(), "--seed", &seed.to_string(), "--quiet", "--base-bin"])
            .arg(good.bin)
            .arg("--base-csv")
            .arg(&base_csv)
            .args(["--base-sha", good.label, "--csv"])
            .arg(&current_csv);
        let out = cmd.output().with_context(|| format!("cannot start `{}`", point.bin.display()))?;
        if !out.status.success() {
            bail!(
                "`{} run --base-bin {}` failed ({}): {}",
                point.label,
                good.label,
                out.status,
                stderr_tail(&out.stderr)
            );
        }
        Ok((load(&base_csv)?, load(&current_csv)?))
    }

    fn decide(&self, base: &ResultsFile, current: &ResultsFile, ends: Option<&Judged>) -> Result<(Call, Judged)> {
        let metric = self.opts.metric;
        let report = compare::compare(base, current, &self.opts.floors);
        let Some(c) = report.comparisons.iter().find(|c| c.metric == metric) else {
            let why = report.comparisons.first().map(|c| c.note.clone()).unwrap_or_default();
            bail!("no pair of ok runs has a {metric} to judge ({why})");
        };
        let (b, c_runs): (Vec<&RunRecord>, Vec<&RunRecord>) =
            (base.records.iter().collect(), current.records.iter().collect());
        let pairs = compare::metric_pairs(metric, &b, &c_runs);
        let moved = report.mechanism.first().map(|m| m.moved.iter().map(mechanism::describe).collect());
        let mut judged = Judged {
            pairs: pairs.len(),
            base: c.base,
            current: c.current,
            change: c.change,
            q: c.q_value,
            verdict: c.verdict,
            p_nearer_good: None,
            mechanism: moved.unwrap_or_default(),
        };
        let call = match ends {
            None if c.verdict != Verdict::Unchanged => Call::Bad,
            None => Call::Undecided,
            Some(ends) => {
                judged.p_nearer_good = nearer_good_p(&pairs, ends.change);
                if judged.p_nearer_good.is_some_and(|p| p < self.opts.floors.alpha) {
                    Call::Good
                } else if c.verdict == ends.verdict {
                    Call::Bad
                } else {
                    Call::Undecided
                }
            }
        };
        Ok((call, judged))
    }
}

/// `more`'s rows after `into`'s, as one A/B invocation: runs renumbered
/// from `offset`, every row in `into`'s session.
fn joined(mut into: ResultsFile, more: ResultsFile, offset: usize) -> ResultsFile {
    let session = into.records.first().and_then(|r| r.extras.iter().find(|(k, _)| k == ab::SESSION)).map(|(_, v)| *v);
    for mut r in more.records {
        r.run += offset;
        for (k, v) in r.extras.iter_mut() {
            if k == ab::SESSION {
                *v = session.unwrap_or(*v);
            }
        }
        into.records.push(r);
    }
    into
}

/// The one-sided p-value that `pairs` (good, point) sit nearer the good
/// end than halfway to the bad end, whose change against the good end is
/// `ends_change`: a t-test of ln(point/good) − ln(1 + ends_change/2).
/// `None` when a value is not positive or fewer than 2 pairs.
pub fn nearer_good_p(pairs: &[(f64, f64)], ends_change: f64) -> Option<f64> {
    if pairs.iter().any(|&(b, c)| b <= 0.0 || c <= 0.0) || ends_change <= -1.0 {
        return None;
    }
    let halfway = (1.0 + ends_change / 2.0).ln();
    let d: Vec<f64> = pairs.iter().map(|&(b, c)| (c / b).ln() - halfway).collect();
    let p = one_sample_t_p(&d)?;
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    // Good is the side of halfway away from the bad end.
    Some(if mean * ends_change < 0.0 { p / 2.0 } else { 1.0 - p / 2.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_double_up_to_the_cap() {
        assert_eq!(schedule(20), [5, 10, 20]);
        assert_eq!(schedule(12), [5, 10, 12]);
        assert_eq!(schedule(5), [5]);
        assert_eq!(schedule(3), [3]);
        assert_eq!(schedule(40), [5, 10, 20, 40]);
    }

    #[test]
    fn a_point_like_either_end_is_told_apart_from_halfway() {
        // The ends: -40 % (halfway: -20 %, ln 0.8).
        let wobble = [1.01, 0.99, 1.0, 1.005, 0.995];
        let like_good: Vec<(f64, f64)> = wobble.iter().map(|w| (100.0, 100.0 * w)).collect();
        let like_bad: Vec<(f64, f64)> = wobble.iter().map(|w| (100.0, 60.0 * w)).collect();
        assert!(nearer_good_p(&like_good, -0.4).unwrap() < 1e-4);
        assert!(nearer_good_p(&like_bad, -0.4).unwrap() > 0.999);
        // An increase at the bad end (p99 up 50 %) mirrors it.
        let up: Vec<(f64, f64)> = wobble.iter().map(|w| (100.0, 150.0 * w)).collect();
        assert!(nearer_good_p(&up, 0.5).unwrap() > 0.999);
        assert!(nearer_good_p(&like_good, 0.5).unwrap() < 1e-4);
        // ln ratios exactly at halfway +- 0.1, 0.2, 0.3 around it: mean
        // 0.2 above halfway, t = 3.4641 with 2 df, two-sided 0.07418.
        let h = 0.8f64.ln();
        let above: Vec<(f64, f64)> = [0.1f64, 0.2, 0.3].iter().map(|d| (1.0, (h + d).exp())).collect();
        assert!((nearer_good_p(&above, -0.4).unwrap() - 0.07418 / 2.0).abs() < 1e-4);
        assert_eq!(nearer_good_p(&[(0.0, 1.0), (1.0, 1.0)], -0.4), None);
    }
}
