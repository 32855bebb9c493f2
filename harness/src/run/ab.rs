//! A/B in one invocation (`run --base-bin`): every run of every cell is
//! made twice, back to back, once by the base program and once by this
//! one, alternating which goes first. Both rows of a pair carry the
//! invocation's session number and their place in the pair in `extras`
//! (`ab_session`, `ab_order`), so `compare` can tell such files apart from
//! two independent runs and judge each cell on the pairs.
//!
//! Why: two files recorded minutes apart on a shared machine differ by far
//! more than the runs inside each file (results/compare-identical-code/:
//! up to +200 % on one cell), so any test that treats the two files as
//! independent samples calls that drift a regression. Inside a pair both
//! sides see the same machine; the ratio current/base of each pair keeps
//! the code's effect and loses most of the drift, and a one-sample t-test
//! on the logarithms of those ratios (a test of the geometric-mean ratio,
//! with as many degrees of freedom as pairs minus one) has no floor on its
//! p-value, unlike a rank test over 5 + 5 runs.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::data::load::ResultsFile;
use crate::data::record::{RunRecord, Status};
use crate::stats::median;
use crate::stats::ttest::one_sample_t_p;

/// `extras` key: the A/B invocation's session number.
pub const SESSION: &str = "ab_session";
/// `extras` key: 0 when this row's run went first in its pair, 1 second.
pub const ORDER: &str = "ab_order";

/// A session number for this invocation: an integer below 2^53 (exact in
/// the CSV's `f64` extras), from the clock and the process id.
pub fn new_session() -> f64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mixed = (nanos ^ (u64::from(std::process::id()) << 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 11) as f64
}

/// Whether the base side goes first in run `run`: base first on even runs,
/// current first on odd ones, so an order effect (a warmer cache, a
/// frequency step) favours neither side.
pub fn base_first(run: usize) -> bool {
    run.is_multiple_of(2)
}

/// Marks `record` as one side of pair `record.run` of `session`.
pub fn mark(record: &mut RunRecord, session: f64, first: bool) {
    record.extras.retain(|(k, _)| k != SESSION && k != ORDER);
    record.extras.push((SESSION.to_string(), session));
    record.extras.push((ORDER.to_string(), if first { 0.0 } else { 1.0 }));
}

/// Which side of an A/B pair `record` is, `"base"` or `"current"`, from
/// its place in the pair and its run ([`base_first`]); `None` for a row
/// of no A/B pair.
pub fn side(record: &RunRecord) -> Option<&'static str> {
    let went_first = extra(record, ORDER)? == 0.0;
    Some(if went_first == base_first(record.run) { "base" } else { "current" })
}

fn extra(record: &RunRecord, key: &str) -> Option<f64> {
    record.extras.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
}

/// The one session every row of `file` belongs to; `None` when a row has
/// none or rows disagree.
fn session_of(file: &ResultsFile) -> Option<f64> {
    let first = extra(file.records.first()?, SESSION)?;
    file.records.iter().all(|r| extra(r, SESSION) == Some(first)).then_some(first)
}

/// How two files relate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pairing {
    /// Two sides of one A/B invocation: run i of a cell pairs with run i.
    Paired(f64),
    /// Independent files.
    Unpaired,
    /// Both are A/B files, but of different invocations: they are judged
    /// as independent files, and the report says so.
    DifferentSessions,
}

/// Whether `base` and `current` are the two sides of one A/B invocation.
pub fn pairing(base: &ResultsFile, current: &ResultsFile) -> Pairing {
    match (session_of(base), session_of(current)) {
        (Some(a), Some(b)) if a == b => Pairing::Paired(a),
        (Some(_), Some(_)) => Pairing::DifferentSessions,
        _ => Pairing::Unpaired,
    }
}

/// The pairs `(base, current)` of one cell: run i of each side, both ok and
/// with a value, in run order.
pub fn pairs(
    base: &[&RunRecord],
    current: &[&RunRecord],
    value: impl Fn(&RunRecord) -> Option<f64>,
) -> Vec<(f64, f64)> {
    let ok_value = |r: &RunRecord| (r.status == Status::Ok).then(|| value(r)).flatten().filter(|v| v.is_finite());
    let mut out = Vec::new();
    for b in base {
        let Some(bv) = ok_value(b) else { continue };
        if let Some(cv) = current.iter().find(|c| c.run == b.run).and_then(|c| ok_value(c)) {
            out.push((b.run, bv, cv));
        }
    }
    out.sort_by_key(|&(run, ..)| run);
    out.into_iter().map(|(_, b, c)| (b, c)).collect()
}

/// The paired judgement of one metric of one cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedTest {
    /// Median of the per-pair ratios current/base, minus 1.
    pub change: f64,
    /// Two-sided p-value of the one-sample t-test on ln(current/base);
    /// `None` with fewer than 2 pairs or a value that is not positive.
    pub p: Option<f64>,
}

/// Judges `pairs` (`None` when no pair has a finite ratio). A pair set whose log ratios do not vary at all gets
/// p = 1 when they are all 0 and p = 0 otherwise.
pub fn paired_test(pairs: &[(f64, f64)]) -> Option<PairedTest> {
    if pairs.is_empty() {
        return None;
    }
    let ratios: Vec<f64> = pairs.iter().map(|&(b, c)| if b == 0.0 { f64::NAN } else { c / b }).collect();
    let finite: Vec<f64> = ratios.iter().copied().filter(|r| r.is_finite()).collect();
    if finite.is_empty() {
        return None;
    }
    let change = median(&finite) - 1.0;
    let p = log_ratios(pairs).and_then(|d| one_sample_t_p(&d));
    Some(PairedTest { change, p })
}

/// ln(current/base) of every pair, what the paired test judges; `None`
/// when a side is not positive (no ratio has a logarithm then).
pub fn log_ratios(pairs: &[(f64, f64)]) -> Option<Vec<f64>> {
    pairs.iter().map(|&(b, c)| (b > 0.0 && c > 0.0).then(|| (c / b).ln())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::record::CellKey;

    fn key() -> CellKey {
        CellKey::plain("steal-half", 2, "yield-many")
    }

    fn row(run: usize, throughput: f64) -> RunRecord {
        let mut r = RunRecord::failed(key(), run, String::new());
        (r.status, r.throughput_per_s) = (Status::Ok, Some(throughput));
        r
    }

    #[test]
    fn the_side_follows_from_the_order_and_the_run() {
        assert_eq!(side(&row(0, 1.0)), None, "no A/B pair");
        for run in 0..4 {
            let (mut base, mut current) = (row(run, 1.0), row(run, 1.0));
            mark(&mut base, 7.0, base_first(run));
            mark(&mut current, 7.0, !base_first(run));
            assert_eq!((side(&base), side(&current)), (Some("base"), Some("current")), "run {run}");
        }
    }

    #[test]
    fn a_shared_drift_cancels_in_the_pairs_and_a_20_percent_drop_does_not() {
        // Each pair sees its own machine speed (x0.6 .. x1.4), the code
        // none: the ratios are 1 +- 1 %, no change.
        let speed = [1.0, 0.6, 1.4, 0.8, 1.2];
        let wobble = [1.01, 0.99, 1.0, 1.005, 0.995];
        let same: Vec<(f64, f64)> = speed.iter().zip(wobble).map(|(s, w)| (1000.0 * s, 1000.0 * s * w)).collect();
        let t = paired_test(&same).unwrap();
        assert!(t.change.abs() < 0.01 && t.p.unwrap() > 0.5, "{t:?}");
        // The same pairs with the current side 20 % slower.
        let drop: Vec<(f64, f64)> = same.iter().map(|&(b, c)| (b, c * 0.8)).collect();
        let t = paired_test(&drop).unwrap();
        assert!((t.change + 0.2).abs() < 0.01, "{t:?}");
        // t = ln 0.8 / (sd / sqrt 5) with sd ~0.008: |t| ~ 60, df 4.
        assert!(t.p.unwrap() < 1e-5, "{t:?}");
    }

    #[test]
    fn the_t_test_matches_a_hand_computed_case() {
        // ln ratios 0.1, 0.2, 0.3: mean 0.2, sd 0.1, t = 0.2 / (0.1 / sqrt 3)
        // = 3.4641 with 2 df: two-sided p = 0.07418 (t tables).
        let pairs: Vec<(f64, f64)> = [0.1f64, 0.2, 0.3].iter().map(|d| (1.0, d.exp())).collect();
        let p = paired_test(&pairs).unwrap().p.unwrap();
        assert!((p - 0.07418).abs() < 1e-4, "{p}");
        assert_eq!(paired_test(&[(1.0, 2.0)]).unwrap().p, None, "one pair has no spread");
        assert_eq!(paired_test(&[(1.0, 1.0), (2.0, 2.0)]).unwrap().p, Some(1.0));
        assert_eq!(paired_test(&[(1.0, 2.0), (2.0, 4.0)]).unwrap().p, Some(0.0));
        assert_eq!(paired_test(&[(0.0, 1.0), (1.0, 1.0)]).unwrap().p, None, "a zero cannot be a ratio");
    }

    #[test]
    fn pairs_match_run_indices_and_skip_failed_sides() {
        let base = [row(0, 10.0), row(1, 11.0), row(2, 12.0)];
        let mut current = [row(2, 24.0), row(0, 20.0), row(1, 22.0)];
        current[2].status = Status::Failed;
        let value = |r: &RunRecord| r.throughput_per_s;
        let got = pairs(&base.iter().collect::<Vec<_>>(), &current.iter().collect::<Vec<_>>(), value);
        assert_eq!(got, [(10.0, 20.0), (12.0, 24.0)]);
    }

    #[test]
    fn files_pair_only_when_every_row_is_of_one_session() {
        let file = |session: Option<f64>| {
            let mut records = vec![row(0, 1.0), row(1, 1.0)];
            if let Some(s) = session {
                for (i, r) in records.iter_mut().enumerate() {
                    mark(r, s, i == 0);
                }
            }
            ResultsFile {
                path: "x.csv".into(),
                schema_version: 3,
                timestamp: String::new(),
                host: String::new(),
                cpu_model: String::new(),
                logical_cpus: None,
                git_sha: String::new(),
                records,
            }
        };
        let s = new_session();
        assert!(s >= 0.0 && s < 2f64.powi(53) && s.fract() == 0.0, "{s}");
        assert_eq!(pairing(&file(Some(s)), &file(Some(s))), Pairing::Paired(s));
        assert_eq!(pairing(&file(Some(s)), &file(Some(s + 1.0))), Pairing::DifferentSessions);
        assert_eq!(pairing(&file(None), &file(Some(s))), Pairing::Unpaired);
        let mut half = file(Some(s));
        half.records[1].extras.clear();
        assert_eq!(pairing(&half, &file(Some(s))), Pairing::Unpaired);
        assert!(base_first(0) && !base_first(1) && base_first(2));
    }
}
