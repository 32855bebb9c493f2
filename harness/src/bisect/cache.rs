//! The bisect's results cache: what an A/B step decided, kept so that a
//! second bisect over the same range neither builds nor runs a step it
//! has measured already.
//!
//! An entry is one judged A/B of a point against the good end, filed
//! under `target/wsbench-bisect/results/HASH.json` (beside the builds'
//! cache) and keyed by everything that decides it:
//! - the range's kind (and the reference crate), the good and the bad
//!   end, and the point (a version, or a commit's full sha);
//! - the cell as `run` options (scheduler, workers, workload, knobs,
//!   parameters, rate, duration, warm-up, timeout, pinning), the metric;
//! - the search's settings: `--max-runs`, `--seed`, the floors and
//!   `--alpha`;
//! - this wsbench's source (the hash the version rows' cache uses), so an
//!   edit of the harness, the gate or a workload measures again;
//! - for a point between the ends, the ends' verdict and change it was
//!   judged against: measuring the ends again re-judges every step.
//!
//! The key's text is stored in the entry and compared on reading, so a
//! hash collision is a miss, not a wrong answer. Invalidation: a change
//! of any part of the key is a miss; `--remeasure` measures every step
//! again and replaces its entry; deleting the directory drops them all.
//! A step that failed to build or run is not an entry (a build failure
//! has its own record in the builds' cache).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::points::Point;
use super::step::{Call, Judged};
use super::Options;

/// The version of the entries' layout; part of every key.
const LAYOUT: &str = "wsbench-bisect-result 1";

/// One cached A/B.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    /// The key's full text.
    key: String,
    /// What the step decided.
    call: Call,
    /// Its figures.
    judged: Judged,
    /// Where its runs' CSVs were written.
    runs: String,
}

/// The cache of one bisect: every key part but the point and the ends'
/// judgement fixed.
#[derive(Debug)]
pub struct Results {
    dir: PathBuf,
    /// The key's fixed part; `None` when results are not cached.
    base: Option<String>,
    /// Measure again, replacing entries.
    remeasure: bool,
}

impl Results {
    /// The cache under `dir` for this bisect of `kind` from `good` to
    /// `bad`; `source` is this wsbench's source identity, `None` when it
    /// cannot be read (then nothing is cached, and a line says why).
    pub fn new(dir: PathBuf, opts: &Options, kind: &str, ends: (&Point, &Point), source: Result<String>) -> Results {
        let source = match source {
            Ok(s) => s,
            Err(e) => {
                eprintln!("results are not cached: this wsbench's source cannot be identified ({e:#})");
                return Results { dir, base: None, remeasure: opts.remeasure };
            }
        };
        let f = &opts.floors;
        let base = format!(
            "{LAYOUT}\nsource {source}\nkind {kind}\ngood {}\nbad {}\ncell {}\nmetric {}\nmax-runs {}\nseed {}\n\
             threshold {:e}\ntail-threshold {:e}\nalpha {:e}\n",
            ends.0.id,
            ends.1.id,
            opts.cell.join(" "),
            opts.metric,
            opts.max_runs,
            opts.seed,
            f.threshold,
            f.tail_threshold,
            f.alpha
        );
        Results { dir, base: Some(base), remeasure: opts.remeasure }
    }

    /// The key of `point`'s A/B; `ends` is the ends' judgement for a point
    /// between them, `None` for the bad end itself.
    fn key(&self, point: &Point, ends: Option<&Judged>) -> Option<String> {
        let base = self.base.as_ref()?;
        let against = ends.map_or_else(|| "none".to_string(), |j| format!("{} {:e}", j.verdict.as_str(), j.change));
        Some(format!("{base}point {}\nends {against}\n", point.id))
    }

    fn path(&self, key: &str) -> PathBuf {
        let mut hasher = std::hash::DefaultHasher::new();
        key.hash(&mut hasher);
        self.dir.join(format!("{:016x}.json", hasher.finish()))
    }

    /// The cached A/B of `point`, unless there is none or `--remeasure`.
    pub fn get(&self, point: &Point, ends: Option<&Judged>) -> Option<(Call, Judged)> {
        if self.remeasure {
            return None;
        }
        let key = self.key(point, ends)?;
        let text = std::fs::read_to_string(self.path(&key)).ok()?;
        let entry: Entry = serde_json::from_str(&text).ok()?;
        (entry.key == key).then_some((entry.call, entry.judged))
    }

    /// Files `point`'s A/B (written, then renamed into place). A failure
    /// to file it is a warning: the bisect goes on with what it measured.
    pub fn put(&self, point: &Point, ends: Option<&Judged>, call: Call, judged: &Judged, runs: &Path) {
        let Some(key) = self.key(point, ends) else { return };
        let path = self.path(&key);
        let entry = Entry { key, call, judged: judged.clone(), runs: runs.display().to_string() };
        if let Err(e) = write_entry(&path, &entry) {
            eprintln!("warning: the result of {} is not cached: {e:#}", point.label);
        }
    }
}

fn write_entry(path: &Path, entry: &Entry) -> Result<()> {
    let dir = path.parent().context("a cache entry has a directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    let text = serde_json::to_string_pretty(entry).context("cannot encode the entry")?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write `{}`", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot move `{}` into place", tmp.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Floors, Verdict};

    fn opts() -> Options {
        Options {
            good: "a".into(),
            bad: "b".into(),
            sched: "steal-half".into(),
            path: None,
            cell: vec!["--sched".into(), "steal-half".into()],
            metric: "throughput_per_s",
            max_runs: 20,
            seed: 42,
            per_run: std::time::Duration::from_millis(600),
            floors: Floors { threshold: 0.05, tail_threshold: 0.1, alpha: 0.05 },
            dry_run: false,
            remeasure: false,
            json: None,
        }
    }

    fn point(id: &str) -> Point {
        Point { id: id.into(), label: id.into(), about: String::new() }
    }

    fn judged(change: f64) -> Judged {
        Judged {
            pairs: 5,
            base: 100.0,
            current: 100.0 * (1.0 + change),
            change,
            q: Some(0.001),
            verdict: Verdict::Regressed,
            p_nearer_good: None,
            mechanism: vec!["polls +1 (+100%)".into()],
        }
    }

    #[test]
    fn an_entry_is_found_only_under_its_whole_key() {
        let dir = std::env::temp_dir().join(format!("wsbench-bisect-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (good, bad, mid) = (point("g"), point("b"), point("m"));
        let cache = |o: &Options, src: &str| Results::new(dir.clone(), o, "commits", (&good, &bad), Ok(src.into()));
        let o = opts();
        let c = cache(&o, "src1");
        let ends = judged(-0.4);
        assert!(c.get(&mid, Some(&ends)).is_none());
        c.put(&mid, Some(&ends), Call::Good, &judged(-0.01), &dir);
        let (call, got) = c.get(&mid, Some(&ends)).expect("filed");
        assert_eq!((call, got.change, got.mechanism.len()), (Call::Good, -0.01, 1));
        // Any other part of the key: a miss.
        assert!(c.get(&bad, Some(&ends)).is_none(), "another point");
        assert!(c.get(&mid, None).is_none(), "the ends' own key");
        assert!(c.get(&mid, Some(&judged(-0.3))).is_none(), "other ends");
        assert!(cache(&o, "src2").get(&mid, Some(&ends)).is_none(), "another source");
        let mut seeded = opts();
        seeded.seed = 7;
        assert!(cache(&seeded, "src1").get(&mid, Some(&ends)).is_none(), "another seed");
        let mut remeasure = opts();
        remeasure.remeasure = true;
        assert!(cache(&remeasure, "src1").get(&mid, Some(&ends)).is_none(), "--remeasure");
        let unknown = Results::new(dir.clone(), &o, "commits", (&good, &bad), Err(anyhow::anyhow!("no source")));
        unknown.put(&mid, None, Call::Bad, &ends, &dir);
        assert!(unknown.get(&mid, None).is_none(), "no source: nothing cached");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
