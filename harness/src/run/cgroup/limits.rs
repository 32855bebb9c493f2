//! The values of `--cpus` and `--cpuset`, parsed and checked against the
//! machine: a run's [`Limits`].

use std::fmt;

use anyhow::{bail, ensure, Context, Result};

use super::PERIOD_US;

/// The smallest quota the kernel accepts, in µs per period (1 ms).
const MIN_QUOTA_US: u64 = 1_000;
/// The largest CPU id a list may name (a typo guard, far above any machine).
const MAX_CPU_ID: usize = 1 << 16;

/// The CPU limits of one run: a CFS quota in CPUs, a cpuset, or both;
/// neither = the run gets the whole machine and no cgroup.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    /// `--cpus`: the quota, in CPUs (quota / period).
    pub cpus: Option<f64>,
    /// `--cpuset`: the CPUs the run may use.
    pub cpuset: Option<CpuList>,
}

impl Limits {
    /// No limit.
    pub const NONE: Limits = Limits { cpus: None, cpuset: None };

    /// Whether there is no limit (no cgroup).
    pub fn is_none(&self) -> bool {
        self.cpus.is_none() && self.cpuset.is_none()
    }

    /// The `cpus` column: the quota in CPUs, blank without one.
    pub fn cpus_text(&self) -> String {
        self.cpus.map(|q| format!("{q}")).unwrap_or_default()
    }

    /// The `cpuset` column: the list, blank without one.
    pub fn cpuset_text(&self) -> String {
        self.cpuset.as_ref().map(|c| c.to_string()).unwrap_or_default()
    }

    /// The quota in µs per [`PERIOD_US`]; `None` = no quota.
    pub fn quota_us(&self) -> Option<u64> {
        self.cpus.map(|q| (q * PERIOD_US as f64).round() as u64)
    }
}

/// A set of CPU ids, in the kernel's list form (`0-3,8,10-11`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(Vec<usize>);

impl CpuList {
    /// The ids, ascending, each once.
    pub fn ids(&self) -> &[usize] {
        &self.0
    }

    /// Parses the kernel's list form (also what sysfs and cgroup files hold).
    pub fn parse(text: &str) -> Result<CpuList> {
        let bad = |why: &str| {
            anyhow::anyhow!("`{text}` is not a CPU list ({why}); allowed: ids and ranges like 0, 0-3 or 0-1,4")
        };
        let mut ids = Vec::new();
        for part in text.trim().split(',') {
            let part = part.trim();
            let (lo, hi) = part.split_once('-').unwrap_or((part, part));
            let lo: usize = lo.trim().parse().map_err(|_| bad(&format!("`{part}` is not an id or a range")))?;
            let hi: usize = hi.trim().parse().map_err(|_| bad(&format!("`{part}` is not an id or a range")))?;
            if lo > hi {
                return Err(bad(&format!("the range `{part}` runs backwards")));
            }
            if hi > MAX_CPU_ID {
                return Err(bad(&format!("{hi} is above {MAX_CPU_ID}")));
            }
            ids.extend(lo..=hi);
        }
        ids.sort_unstable();
        ids.dedup();
        Ok(CpuList(ids))
    }
}

impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        let mut first = true;
        while i < self.0.len() {
            let mut j = i;
            while j + 1 < self.0.len() && self.0[j + 1] == self.0[j] + 1 {
                j += 1;
            }
            let sep = if first { "" } else { "," };
            first = false;
            match j > i {
                true => write!(f, "{sep}{}-{}", self.0[i], self.0[j])?,
                false => write!(f, "{sep}{}", self.0[i])?,
            }
            i = j + 1;
        }
        Ok(())
    }
}

/// The CPUs this machine has online (`/sys/devices/system/cpu/online`),
/// else `0..available_parallelism`.
pub fn online_cpus() -> CpuList {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| CpuList::parse(&t).ok())
        .filter(|l| !l.0.is_empty())
        .unwrap_or_else(|| CpuList((0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()))
}

/// Parses `--cpus LIST` (`0.5`, `0.5,1,2`): each a quota in CPUs above 0
/// and at most the `machine`'s CPUs, and at least the kernel's 1 ms per
/// 100 ms period.
pub fn parse_cpus(text: &str, machine: usize) -> Result<Vec<f64>> {
    let allowed = format!(
        "allowed: a number of CPUs from {} to {machine} (this machine's CPUs), e.g. 0.5 or 1.5, or a list 1,2",
        MIN_QUOTA_US as f64 / PERIOD_US as f64
    );
    let mut out: Vec<f64> = Vec::new();
    for part in text.split(',').map(str::trim) {
        let q: f64 = part
            .parse()
            .ok()
            .filter(|q: &f64| q.is_finite())
            .with_context(|| format!("--cpus `{text}`: `{part}` is not a number; {allowed}"))?;
        ensure!(q > 0.0, "--cpus `{text}`: {part} CPUs is no quota (a run needs more than 0); {allowed}");
        ensure!(
            q <= machine as f64,
            "--cpus `{text}`: {part} is more CPUs than this machine has ({machine}); {allowed}"
        );
        let quota = (q * PERIOD_US as f64).round() as u64;
        ensure!(
            quota >= MIN_QUOTA_US,
            "--cpus `{text}`: {part} CPUs is a quota of {quota} us per {PERIOD_US} us period, below the kernel's \
             {MIN_QUOTA_US} us; {allowed}"
        );
        if !out.contains(&q) {
            out.push(q);
        }
    }
    Ok(out)
}

/// Parses one `--cpuset LIST`: a CPU list whose every id is online.
pub fn parse_cpuset(text: &str, online: &CpuList) -> Result<CpuList> {
    let list = CpuList::parse(text).context("bad --cpuset")?;
    ensure!(!list.0.is_empty(), "--cpuset `{text}` names no CPU; allowed: a list of {online}");
    if let Some(id) = list.0.iter().find(|id| !online.0.contains(id)) {
        bail!("--cpuset `{text}` names CPU {id}, which this machine does not have online; allowed: CPUs {online}");
    }
    Ok(list)
}

/// Every combination of the swept quotas and cpusets, quotas outer; one
/// [`Limits::NONE`] when neither is given.
pub fn combinations(cpus: &[f64], cpusets: &[CpuList]) -> Vec<Limits> {
    let cpus: Vec<Option<f64>> = if cpus.is_empty() { vec![None] } else { cpus.iter().copied().map(Some).collect() };
    let sets: Vec<Option<CpuList>> =
        if cpusets.is_empty() { vec![None] } else { cpusets.iter().cloned().map(Some).collect() };
    cpus.iter().flat_map(|&c| sets.iter().map(move |s| Limits { cpus: c, cpuset: s.clone() })).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_print_in_the_kernel_form() {
        let l = CpuList::parse("4,0-2, 8-9,1").unwrap();
        assert_eq!(l.ids(), [0, 1, 2, 4, 8, 9]);
        assert_eq!(l.to_string(), "0-2,4,8-9");
        assert_eq!(CpuList::parse("0\n").unwrap().to_string(), "0");
        for bad in ["", "a", "3-1", "1,,2", "-1", "1-", "0-99999999"] {
            assert!(CpuList::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn quotas_are_checked_naming_the_value() {
        assert_eq!(parse_cpus("0.5,1.5,0.5", 2).unwrap(), [0.5, 1.5]);
        for (bad, says) in [
            ("0", "no quota"),
            ("-1", "no quota"),
            ("3", "more CPUs than this machine has (2)"),
            ("x", "not a number"),
            ("0.001", "below the kernel's"),
            ("inf", "not a number"),
        ] {
            let e = format!("{:#}", parse_cpus(bad, 2).unwrap_err());
            assert!(e.contains(&format!("--cpus `{bad}`")) && e.contains(says) && e.contains("allowed"), "{e}");
        }
    }

    #[test]
    fn cpusets_must_be_online() {
        let online = CpuList::parse("0-1").unwrap();
        assert_eq!(parse_cpuset("1", &online).unwrap().ids(), [1]);
        let e = format!("{:#}", parse_cpuset("99", &online).unwrap_err());
        assert!(e.contains("CPU 99") && e.contains("allowed: CPUs 0-1"), "{e}");
        let e = format!("{:#}", parse_cpuset("0-x", &online).unwrap_err());
        assert!(e.contains("bad --cpuset") && e.contains("not a CPU list"), "{e}");
    }

    #[test]
    fn limits_sweep_as_a_product() {
        let sets = [CpuList::parse("0").unwrap(), CpuList::parse("0-1").unwrap()];
        let all = combinations(&[1.0, 2.0], &sets);
        let texts: Vec<_> = all.iter().map(|l| format!("{}/{}", l.cpus_text(), l.cpuset_text())).collect();
        assert_eq!(texts, ["1/0", "1/0-1", "2/0", "2/0-1"]);
        assert_eq!(combinations(&[], &[]), [Limits::NONE]);
        assert_eq!(Limits { cpus: Some(0.5), cpuset: None }.quota_us(), Some(50_000));
    }
}
