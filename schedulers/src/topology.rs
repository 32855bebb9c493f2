//! Where workers sit, for topology-aware stealing (`victim=topology`).
//!
//! On a 2-socket, 8-CCX machine a random victim is usually on another L3
//! cache or another socket; hierarchical stealing tries the victims that
//! share the thief's L3 first, then those on its NUMA node, then the rest
//! (random within each level). This module holds:
//! - [`CpuTopology`]: the machine's L3 groups and NUMA nodes, read from
//!   sysfs (`/sys/devices/system/cpu/cpu*/cache/index*/shared_cpu_list`
//!   where that cache's `level` is 3; `/sys/devices/system/node/node*/
//!   cpulist`), in the kernel's cpulist syntax ([`parse_cpulist`]);
//! - [`WorkerTopology`]: each worker's L3 group and NUMA node, from the
//!   cores the workers are pinned to ([`WorkerTopology::from_pinning`]) or
//!   imposed as `GROUPSxSIZE` ([`Imposed`], the harness's `--topology`), so
//!   the policy can be exercised on a machine without such a grouping.
//!
//! The steal loop's victim order, which reads a worker topology, is the
//! stealing policies' (`crate::policies::victims`).

use std::fmt;
use std::str::FromStr;

/// Largest CPU id accepted in a cpulist (far above any machine's).
const MAX_CPU_ID: usize = 1 << 16;

/// A cpulist that is not the kernel's syntax (`0-3,8-11`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad cpulist `{text}`: {why}; allowed: comma-separated CPU ids and ranges like `0-3,8-11`")]
pub struct CpuListError {
    /// The text given.
    pub text: String,
    /// What is wrong with it.
    pub why: String,
}

/// Parses the kernel's cpulist syntax (`0-3,8-11`, `5`, empty) into
/// sorted, distinct CPU ids.
pub fn parse_cpulist(text: &str) -> Result<Vec<usize>, CpuListError> {
    let bad = |why: String| CpuListError { text: text.to_string(), why };
    let id = |s: &str| -> Result<usize, CpuListError> {
        match s.trim().parse::<usize>() {
            Ok(v) if v < MAX_CPU_ID => Ok(v),
            _ => Err(bad(format!("`{s}` is not a CPU id below {MAX_CPU_ID}"))),
        }
    };
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.trim().is_empty()) {
        match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (id(lo)?, id(hi)?);
                if lo > hi {
                    return Err(bad(format!("range `{}` runs backwards", part.trim())));
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(id(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The machine's CPU topology: CPUs sharing an L3 cache, CPUs of a NUMA
/// node. Either list is empty where the kernel does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuTopology {
    /// One entry per distinct L3 cache: the CPUs sharing it.
    pub l3_groups: Vec<Vec<usize>>,
    /// One entry per NUMA node: its CPUs.
    pub numa_nodes: Vec<Vec<usize>>,
}

impl CpuTopology {
    /// Builds it from cpulist texts: one per CPU's L3 (repeats are merged)
    /// and one per NUMA node.
    pub fn from_lists<'a>(
        l3: impl IntoIterator<Item = &'a str>,
        numa: impl IntoIterator<Item = &'a str>,
    ) -> Result<CpuTopology, CpuListError> {
        let mut l3_groups: Vec<Vec<usize>> = Vec::new();
        for text in l3 {
            let cpus = parse_cpulist(text)?;
            if !cpus.is_empty() && !l3_groups.contains(&cpus) {
                l3_groups.push(cpus);
            }
        }
        l3_groups.sort();
        let numa_nodes = numa.into_iter().map(parse_cpulist).filter(|n| n.as_ref().map_or(true, |c| !c.is_empty()));
        let mut numa_nodes = numa_nodes.collect::<Result<Vec<_>, _>>()?;
        numa_nodes.sort();
        Ok(CpuTopology { l3_groups, numa_nodes })
    }

    /// Reads this machine's topology from sysfs; a file that cannot be
    /// read or parsed is left out (an empty list where nothing was found).
    pub fn read_sysfs() -> CpuTopology {
        let read = |path: std::path::PathBuf| std::fs::read_to_string(path).ok();
        let mut l3 = Vec::new();
        for cpu in dir_entries("/sys/devices/system/cpu", "cpu") {
            for cache in dir_entries(&format!("{cpu}/cache"), "index") {
                let level = read(format!("{cache}/level").into());
                if level.as_deref().map(str::trim) == Some("3") {
                    l3.extend(read(format!("{cache}/shared_cpu_list").into()));
                }
            }
        }
        let numa: Vec<String> = dir_entries("/sys/devices/system/node", "node")
            .into_iter()
            .filter_map(|node| read(format!("{node}/cpulist").into()))
            .collect();
        let keep = |texts: Vec<String>| texts.into_iter().filter(|t| parse_cpulist(t).is_ok()).collect::<Vec<_>>();
        let (l3, numa) = (keep(l3), keep(numa));
        CpuTopology::from_lists(l3.iter().map(String::as_str), numa.iter().map(String::as_str))
            .expect("only parseable lists are kept")
    }

    /// The L3 group and NUMA node of `cpu` (indices into the lists);
    /// `None` where the kernel does not place it.
    fn place(&self, cpu: usize) -> (Option<usize>, Option<usize>) {
        let find = |lists: &[Vec<usize>]| lists.iter().position(|l| l.binary_search(&cpu).is_ok());
        (find(&self.l3_groups), find(&self.numa_nodes))
    }
}

/// `dir/<prefix><digits>` entries, as paths.
fn dir_entries(dir: &str, prefix: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| {
            name.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|name| format!("{dir}/{name}"))
        .collect();
    out.sort();
    out
}

/// A grouping of workers imposed where the machine has none: `GROUPS`
/// groups of `SIZE` consecutive workers (`GROUPSxSIZE`, e.g. `8x16`), one
/// NUMA node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Imposed {
    /// Number of groups.
    pub groups: usize,
    /// Workers per group.
    pub size: usize,
}

/// A `GROUPSxSIZE` that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad topology `{0}`; allowed: GROUPSxSIZE with both integers >= 1 and GROUPS x SIZE <= {max}, e.g. `8x16`", max = crate::MAX_WORKERS)]
pub struct ImposedError(pub String);

impl FromStr for Imposed {
    type Err = ImposedError;

    fn from_str(s: &str) -> Result<Imposed, ImposedError> {
        let err = || ImposedError(s.to_string());
        let (g, n) = s.trim().split_once(['x', 'X']).ok_or_else(err)?;
        let (groups, size) = (g.parse::<usize>().map_err(|_| err())?, n.parse::<usize>().map_err(|_| err())?);
        let workers = groups.checked_mul(size).ok_or_else(err)?;
        if groups == 0 || size == 0 || workers > crate::MAX_WORKERS {
            return Err(err());
        }
        Ok(Imposed { groups, size })
    }
}

impl fmt::Display for Imposed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.groups, self.size)
    }
}

impl Imposed {
    /// Workers it groups: `groups × size`.
    pub fn workers(&self) -> usize {
        self.groups * self.size
    }
}

/// Each worker's L3 group and NUMA node (ids compared only for equality).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerTopology {
    l3: Vec<usize>,
    numa: Vec<usize>,
}

impl WorkerTopology {
    /// Worker `w` in group `w / size`; one NUMA node.
    pub fn imposed(grouping: Imposed) -> WorkerTopology {
        let n = grouping.workers();
        WorkerTopology { l3: (0..n).map(|w| w / grouping.size).collect(), numa: vec![0; n] }
    }

    /// Worker `w` pinned to `cores[w % cores.len()]` (the pinning rule of
    /// the workloads): its L3 group and NUMA node. A CPU the kernel puts
    /// in no L3 group is grouped by its NUMA node; `None` when `cores` is
    /// empty or the machine reports neither list.
    pub fn from_pinning(cpu: &CpuTopology, cores: &[usize], workers: usize) -> Option<WorkerTopology> {
        if cores.is_empty() || (cpu.l3_groups.is_empty() && cpu.numa_nodes.is_empty()) {
            return None;
        }
        // Distinct ids for "no L3 group, NUMA node k" after the real groups.
        let unplaced = cpu.l3_groups.len();
        let (mut l3, mut numa) = (Vec::with_capacity(workers), Vec::with_capacity(workers));
        for w in 0..workers {
            let (group, node) = cpu.place(cores[w % cores.len()]);
            let node = node.unwrap_or(0);
            l3.push(group.unwrap_or(unplaced + node));
            numa.push(node);
        }
        Some(WorkerTopology { l3, numa })
    }

    /// Worker count.
    pub fn workers(&self) -> usize {
        self.l3.len()
    }

    /// Whether workers `a` and `b` share an L3 group.
    pub fn same_group(&self, a: usize, b: usize) -> bool {
        self.l3[a] == self.l3[b]
    }

    /// `me`'s victims by level: same L3 group, same NUMA node (other
    /// group), the rest; each in worker order, `me` left out.
    pub fn levels(&self, me: usize) -> [Vec<usize>; 3] {
        let mut levels: [Vec<usize>; 3] = Default::default();
        for v in (0..self.workers()).filter(|&v| v != me) {
            let level = if self.l3[v] == self.l3[me] {
                0
            } else if self.numa[v] == self.numa[me] {
                1
            } else {
                2
            };
            levels[level].push(v);
        }
        levels
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
