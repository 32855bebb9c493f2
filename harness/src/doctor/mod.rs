//! `wsbench doctor`: what on this machine makes results unstable, each
//! finding with its fix (after pyperf's `system show`). It warns and
//! refuses nothing; a run records the same findings in its JSON
//! environment.
//!
//! Everything is read from `/proc` and `/sys` under a root directory, so
//! the checks run against a made-up tree in tests.

pub mod calibrate;
mod pipelined;

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// `workload`'s spec with `params`, open loop at `rate`, for the runs of
/// `doctor --calibrate`'s checks ([`calibrate`], [`pipelined`]).
fn workload_spec(workload: &str, params: &[(&str, &str)], rate: Option<f64>) -> wsbench_workloads::api::WorkloadSpec {
    wsbench_workloads::api::WorkloadSpec {
        name: workload.to_string(),
        params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        rate_per_s: rate,
    }
}

/// How long each run of the load-generator ceiling checks measures, after
/// its warm-up ([`calibrate`], [`pipelined`]).
const CEILING_RUN: wsbench_workloads::api::RunOptions = wsbench_workloads::api::RunOptions {
    duration: Duration::from_secs(1),
    warmup: Duration::from_millis(100),
    seed: 1,
};

/// How long the busiest-process check samples CPU use.
pub const BUSY_SAMPLE: Duration = Duration::from_millis(250);
/// Clock ticks per second of `/proc/<pid>/stat` times (Linux's USER_HZ).
const USER_HZ: f64 = 100.0;
/// Another process using more than this share of one CPU is "busy".
const BUSY_SHARE: f64 = 0.1;
/// Busy processes listed.
const BUSY_LISTED: usize = 5;
/// A 1-minute load average above this share of the allowed CPUs is noisy.
const LOAD_SHARE: f64 = 0.25;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Nothing to fix.
    Ok,
    /// Could not be determined, or worth knowing.
    Info,
    /// Makes results less stable or less comparable.
    Warn,
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What was checked (`governor`, `smt`, ...).
    pub check: &'static str,
    /// Ok / info / warn.
    pub level: Level,
    /// What was found.
    pub detail: String,
    /// How to fix it; empty when nothing needs fixing.
    pub fix: String,
}

fn finding(check: &'static str, level: Level, detail: impl Into<String>, fix: impl Into<String>) -> Finding {
    Finding { check, level, detail: detail.into(), fix: fix.into() }
}

/// Reads `/proc` and `/sys` below `root`.
pub struct Machine {
    root: PathBuf,
}

impl Machine {
    /// The real machine.
    pub fn this() -> Machine {
        Machine { root: PathBuf::from("/") }
    }

    /// A tree below `root` (tests).
    #[cfg(test)]
    pub fn at(root: &std::path::Path) -> Machine {
        Machine { root: root.to_path_buf() }
    }

    fn read(&self, path: &str) -> Option<String> {
        fs::read_to_string(self.root.join(path.trim_start_matches('/'))).ok().map(|s| s.trim().to_string())
    }

    fn cpu_dirs(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.root.join("sys/devices/system/cpu")) else { return Vec::new() };
        let mut cpus: Vec<(usize, String)> = entries
            .filter_map(|e| {
                let name = e.ok()?.file_name().to_str()?.to_string();
                Some((name.strip_prefix("cpu")?.parse().ok()?, name))
            })
            .collect();
        cpus.sort();
        cpus.into_iter().map(|(_, n)| n).collect()
    }
}

fn governor(m: &Machine) -> Finding {
    let mut by_governor: BTreeMap<String, usize> = BTreeMap::new();
    for cpu in m.cpu_dirs() {
        if let Some(g) = m.read(&format!("sys/devices/system/cpu/{cpu}/cpufreq/scaling_governor")) {
            *by_governor.entry(g).or_default() += 1;
        }
    }
    let summary = by_governor.iter().map(|(g, n)| format!("{g} on {n} CPU(s)")).collect::<Vec<_>>().join(", ");
    if by_governor.is_empty() {
        finding("governor", Level::Info, "no cpufreq interface (a VM, or the firmware controls frequency)", "")
    } else if by_governor.keys().all(|g| g == "performance") {
        finding("governor", Level::Ok, summary, "")
    } else {
        finding(
            "governor",
            Level::Warn,
            format!("{summary}: the frequency follows the load, so short runs and idle workers run slower"),
            "sudo cpupower frequency-set -g performance",
        )
    }
}

fn turbo(m: &Machine) -> Finding {
    if let Some(v) = m.read("sys/devices/system/cpu/intel_pstate/no_turbo") {
        return if v == "1" {
            finding("turbo", Level::Ok, "turbo off (intel_pstate)", "")
        } else {
            finding(
                "turbo",
                Level::Warn,
                "turbo on (intel_pstate): the clock depends on how many cores are busy and on temperature",
                "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo",
            )
        };
    }
    match m.read("sys/devices/system/cpu/cpufreq/boost").as_deref() {
        Some("0") => finding("turbo", Level::Ok, "boost off", ""),
        Some(_) => finding(
            "turbo",
            Level::Warn,
            "boost on: the clock depends on how many cores are busy and on temperature",
            "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost",
        ),
        None => finding("turbo", Level::Info, "no turbo/boost control exposed (a VM, or fixed by firmware)", ""),
    }
}

fn smt(m: &Machine) -> Finding {
    let siblings = m
        .cpu_dirs()
        .iter()
        .filter_map(|c| m.read(&format!("sys/devices/system/cpu/{c}/topology/thread_siblings_list")))
        .filter(|list| list.contains(',') || list.contains('-'))
        .count();
    match (m.read("sys/devices/system/cpu/smt/active").as_deref(), siblings) {
        (Some("1"), _) | (None, 1..) => finding(
            "smt",
            Level::Warn,
            format!("SMT on: {siblings} logical CPU(s) share a core with a sibling, so two workers can share one core"),
            "echo off | sudo tee /sys/devices/system/cpu/smt/control (or --pin on one sibling per core)",
        ),
        (Some(_), _) => finding("smt", Level::Ok, "SMT off", ""),
        (None, 0) => finding("smt", Level::Info, "no SMT topology exposed", ""),
    }
}

/// An enabled idle state whose exit latency is above this many µs makes
/// an idle worker's wake-up slow.
const DEEP_IDLE_US: u64 = 10;

fn cpuidle(m: &Machine) -> Finding {
    let Some(cpu) = m.cpu_dirs().into_iter().next() else {
        return finding("cpuidle", Level::Info, "no CPUs listed in sysfs", "");
    };
    let mut states = Vec::new();
    for i in 0.. {
        let dir = format!("sys/devices/system/cpu/{cpu}/cpuidle/state{i}");
        let Some(name) = m.read(&format!("{dir}/name")) else { break };
        let latency: Option<u64> = m.read(&format!("{dir}/latency")).and_then(|v| v.parse().ok());
        let disabled = m.read(&format!("{dir}/disable")).as_deref() == Some("1");
        states.push((name, latency, disabled));
    }
    if states.is_empty() {
        return finding("cpuidle", Level::Info, "no cpuidle states exposed (the firmware or hypervisor decides)", "");
    }
    let driver = m.read("sys/devices/system/cpu/cpuidle/current_driver").unwrap_or_else(|| "unknown".to_string());
    let list = states
        .iter()
        .map(|(n, l, d)| {
            let l = l.map_or("?".to_string(), |l| format!("{l} µs"));
            format!("{n} ({l}{})", if *d { ", disabled" } else { "" })
        })
        .collect::<Vec<_>>()
        .join(", ");
    let deepest = states.iter().filter(|(_, _, d)| !d).filter_map(|(_, l, _)| *l).max().unwrap_or(0);
    if deepest > DEEP_IDLE_US {
        finding(
            "cpuidle",
            Level::Warn,
            format!("driver {driver}, {cpu} states {list}: an idle CPU may take up to {deepest} µs to wake, which idle workers' wake-ups pay"),
            format!("sudo cpupower idle-set -D {DEEP_IDLE_US} (disables states with exit latency above {DEEP_IDLE_US} µs)"),
        )
    } else {
        finding("cpuidle", Level::Ok, format!("driver {driver}, {cpu} states {list}"), "")
    }
}

fn load(m: &Machine, allowed_cpus: usize, busy: &[(String, f64)]) -> Finding {
    let load1: Option<f64> = m.read("proc/loadavg").and_then(|l| l.split_whitespace().next()?.parse().ok());
    let listed = busy.iter().map(|(name, share)| format!("{name} {:.0}%", share * 100.0)).collect::<Vec<_>>();
    let busy_text =
        if listed.is_empty() { String::new() } else { format!("; busiest other processes: {}", listed.join(", ")) };
    match load1 {
        None => finding("load", Level::Info, "no /proc/loadavg", ""),
        Some(l) if l > LOAD_SHARE * allowed_cpus as f64 || !busy.is_empty() => finding(
            "load",
            Level::Warn,
            format!("load average {l:.2} on {allowed_cpus} allowed CPU(s){busy_text}"),
            "stop the other work or use a quiet machine; on a shared one use --interleave and read ratios",
        ),
        Some(l) => finding("load", Level::Ok, format!("load average {l:.2} on {allowed_cpus} allowed CPU(s)"), ""),
    }
}

fn isolation(m: &Machine) -> Finding {
    let cmdline = m.read("proc/cmdline").unwrap_or_default();
    let param =
        |name: &str| cmdline.split_whitespace().find_map(|p| p.strip_prefix(&format!("{name}="))).map(str::to_string);
    let isolated = m.read("sys/devices/system/cpu/isolated").filter(|s| !s.is_empty()).or(param("isolcpus"));
    let nohz =
        m.read("sys/devices/system/cpu/nohz_full").filter(|s| !s.is_empty() && s != "(null)").or(param("nohz_full"));
    match (isolated, nohz) {
        (Some(i), n) => finding(
            "isolation",
            Level::Ok,
            format!("isolated CPUs {i}{}", n.map(|n| format!(", nohz_full {n}")).unwrap_or_default()),
            "",
        ),
        (None, _) => finding(
            "isolation",
            Level::Info,
            "no isolcpus / nohz_full: the kernel may run other work and timer ticks on the workers' cores",
            "for the lowest noise boot with isolcpus=2-N nohz_full=2-N and run with --pin inside that set (taskset -c 2-N)",
        ),
    }
}

/// The CPU quota of a cgroup v2 `cpu.max` (`max 100000`, `200000 100000`).
pub fn parse_cpu_max(text: &str) -> Option<Option<f64>> {
    let mut parts = text.split_whitespace();
    let (quota, period) = (parts.next()?, parts.next()?.parse::<f64>().ok()?);
    if quota == "max" {
        return Some(None);
    }
    Some(Some(quota.parse::<f64>().ok()? / period))
}

fn cgroup(m: &Machine, planned_workers: usize) -> Finding {
    let path =
        m.read("proc/self/cgroup").and_then(|t| t.lines().find_map(|l| l.strip_prefix("0::").map(str::to_string)));
    let Some(path) = path else { return finding("cgroup", Level::Info, "no cgroup v2 membership found", "") };
    let dir = format!("sys/fs/cgroup/{}", path.trim_start_matches('/'));
    match m.read(&format!("{dir}/cpu.max")).as_deref().and_then(parse_cpu_max) {
        Some(Some(cpus)) if cpus < planned_workers as f64 => finding(
            "cgroup",
            Level::Warn,
            format!("cgroup {path} may use {cpus:.2} CPU(s) (cpu.max) but {planned_workers} workers are planned: runs get throttled"),
            "raise cpu.max (systemd: CPUQuota=) or plan fewer --workers",
        ),
        Some(Some(cpus)) => finding("cgroup", Level::Ok, format!("cgroup {path} may use {cpus:.2} CPU(s)"), ""),
        Some(None) => finding("cgroup", Level::Ok, format!("cgroup {path}: no CPU quota"), ""),
        None => finding("cgroup", Level::Info, format!("cgroup {path}: cpu.max not readable"), ""),
    }
}

fn clocksource(m: &Machine) -> Finding {
    match m.read("sys/devices/system/clocksource/clocksource0/current_clocksource") {
        Some(c) if c == "tsc" => finding("clocksource", Level::Ok, "tsc", ""),
        Some(c) => finding(
            "clocksource",
            Level::Warn,
            format!("{c}: reading the clock is slower than with tsc, and every latency sample reads it"),
            "if `available_clocksource` lists tsc: echo tsc | sudo tee /sys/devices/system/clocksource/clocksource0/current_clocksource",
        ),
        None => finding("clocksource", Level::Info, "current clock source not exposed", ""),
    }
}

/// DAMON's monitor threads (`kdamond.N`): one that runs a scheme (e.g.
/// `pageout`, proactive reclaim on a VM) works in the kernel for ms at a
/// time, and a thread woken on its CPU waits behind it even when another
/// CPU is idle. Traced on the 2-vCPU VM (results/gate-power/README.md):
/// kdamond slices up to 5.6 ms, the load generator 3.6 ms behind one while
/// the other vCPU idled.
fn damon(m: &Machine) -> Finding {
    const ADMIN: &str = "sys/kernel/mm/damon/admin/kdamonds";
    let Some(n) = m.read(&format!("{ADMIN}/nr_kdamonds")).and_then(|v| v.parse::<usize>().ok()) else {
        return finding("damon", Level::Info, "DAMON's sysfs interface not exposed", "");
    };
    let on: Vec<String> = (0..n)
        .filter(|i| m.read(&format!("{ADMIN}/{i}/state")).as_deref() == Some("on"))
        .map(|i| {
            let schemes: usize =
                m.read(&format!("{ADMIN}/{i}/contexts/0/schemes/nr_schemes")).and_then(|v| v.parse().ok()).unwrap_or(0);
            let actions: Vec<String> =
                (0..schemes).filter_map(|j| m.read(&format!("{ADMIN}/{i}/contexts/0/schemes/{j}/action"))).collect();
            if actions.is_empty() {
                format!("kdamond {i}")
            } else {
                format!("kdamond {i} ({})", actions.join(", "))
            }
        })
        .collect();
    if on.is_empty() {
        return finding("damon", Level::Ok, format!("no DAMON monitor running ({n} configured)"), "");
    }
    finding(
        "damon",
        Level::Warn,
        format!(
            "{} running: the monitor works in the kernel for ms at a time, and a thread woken on its CPU waits behind \
             it even when another CPU is idle (traced on a 2-vCPU VM: slices up to 5.6 ms)",
            on.join(", ")
        ),
        format!("if the machine's owner allows it (it may reclaim memory for the host): echo off | sudo tee /{ADMIN}/N/state"),
    )
}

fn perf(m: &Machine) -> Finding {
    match m.read("proc/sys/kernel/perf_event_paranoid").and_then(|v| v.parse::<i32>().ok()) {
        Some(p) if p <= 1 => {
            finding("perf", Level::Ok, format!("perf_event_paranoid = {p}: hardware counters readable"), "")
        }
        Some(p) => finding(
            "perf",
            Level::Info,
            format!(
                "perf_event_paranoid = {p}: hardware counters need privileges (perf stat -e cycles fails unprivileged)"
            ),
            "sudo sysctl kernel.perf_event_paranoid=1",
        ),
        None => finding("perf", Level::Info, "no perf_event interface (a VM or container without it)", ""),
    }
}

fn cores(allowed_cpus: usize, planned_workers: usize) -> Finding {
    if planned_workers > allowed_cpus {
        finding(
            "cores",
            Level::Warn,
            format!("{planned_workers} workers planned on {allowed_cpus} allowed CPU(s): oversubscribed cells measure the OS scheduler too"),
            format!("plan --workers up to {allowed_cpus}, or use a machine with more cores"),
        )
    } else if planned_workers == allowed_cpus {
        finding(
            "cores",
            Level::Info,
            format!("{planned_workers} workers on {allowed_cpus} allowed CPU(s): the load generator and harness share the workers' cores"),
            "leave a core or two for the load generator (--workers below the core count, --pin)",
        )
    } else {
        finding("cores", Level::Ok, format!("{planned_workers} workers planned on {allowed_cpus} allowed CPU(s)"), "")
    }
}

/// `(pid, name, CPU ticks)` of every process, from `/proc/<pid>/stat`.
fn process_ticks(m: &Machine) -> BTreeMap<u32, (String, u64)> {
    let Ok(entries) = fs::read_dir(m.root.join("proc")) else { return BTreeMap::new() };
    entries
        .filter_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = m.read(&format!("proc/{pid}/stat"))?;
            let (name, ticks) = parse_stat(&stat)?;
            Some((pid, (name, ticks)))
        })
        .collect()
}

/// Name and user + system ticks of a `/proc/<pid>/stat` line.
pub fn parse_stat(stat: &str) -> Option<(String, u64)> {
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let name = stat.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = stat.get(close + 2..)?.split_whitespace().collect();
    // After the name: state is field 3, utime 14 and stime 15 (1-based).
    let (utime, stime): (u64, u64) = (fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?);
    Some((name, utime + stime))
}

/// Other processes using more than [`BUSY_SHARE`] of a CPU over `sample`,
/// busiest first: `(name [pid], share of one CPU)`.
fn busiest(m: &Machine, sample: Duration) -> Vec<(String, f64)> {
    let me = std::process::id();
    let before = process_ticks(m);
    std::thread::sleep(sample);
    let after = process_ticks(m);
    let mut busy: Vec<(String, f64)> = after
        .iter()
        .filter(|(pid, _)| **pid != me)
        .filter_map(|(pid, (name, ticks))| {
            let (_, t0) = before.get(pid)?;
            let share = ticks.saturating_sub(*t0) as f64 / USER_HZ / sample.as_secs_f64();
            (share > BUSY_SHARE).then(|| (format!("{name} [{pid}]"), share))
        })
        .collect();
    busy.sort_by(|a, b| b.1.total_cmp(&a.1));
    busy.truncate(BUSY_LISTED);
    busy
}

/// Every check, for `planned_workers` (the largest `--workers`).
pub fn inspect(m: &Machine, allowed_cpus: usize, planned_workers: usize, sample: Duration) -> Vec<Finding> {
    let busy = if sample.is_zero() { Vec::new() } else { busiest(m, sample) };
    vec![
        governor(m),
        turbo(m),
        smt(m),
        cpuidle(m),
        load(m, allowed_cpus, &busy),
        isolation(m),
        cgroup(m, planned_workers),
        clocksource(m),
        damon(m),
        perf(m),
        cores(allowed_cpus, planned_workers),
    ]
}

/// The findings as text, one per line, fixes indented below.
pub fn render(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let tag = match f.level {
            Level::Ok => "ok  ",
            Level::Info => "info",
            Level::Warn => "WARN",
        };
        out.push_str(&format!("[{tag}] {:<12} {}\n", f.check, f.detail));
        if !f.fix.is_empty() {
            out.push_str(&format!("       {:<12} fix: {}\n", "", f.fix));
        }
    }
    let warnings = findings.iter().filter(|f| f.level == Level::Warn).count();
    out.push_str(&format!(
        "{warnings} warning(s); results from a machine with warnings are less stable and less comparable\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("wsbench-doctor-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for (path, text) in files {
            let p = root.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, format!("{text}\n")).unwrap();
        }
        root
    }

    fn get<'a>(findings: &'a [Finding], check: &str) -> &'a Finding {
        findings.iter().find(|f| f.check == check).unwrap()
    }

    /// A noisy laptop-like machine: every check warns, with its fix.
    #[test]
    fn a_noisy_machine_gets_a_warning_and_a_fix_per_problem() {
        let root = tree(&[
            ("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave"),
            ("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance"),
            ("sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0,2"),
            ("sys/devices/system/cpu/intel_pstate/no_turbo", "0"),
            ("sys/devices/system/cpu/smt/active", "1"),
            ("proc/loadavg", "3.50 2.00 1.00 3/200 999"),
            ("proc/cmdline", "root=/dev/sda1 quiet"),
            ("proc/self/cgroup", "0::/user.slice/bench"),
            ("sys/fs/cgroup/user.slice/bench/cpu.max", "150000 100000"),
            ("sys/devices/system/clocksource/clocksource0/current_clocksource", "hpet"),
            ("proc/sys/kernel/perf_event_paranoid", "4"),
            ("sys/devices/system/cpu/cpuidle/current_driver", "intel_idle"),
            ("sys/devices/system/cpu/cpu0/cpuidle/state0/name", "POLL"),
            ("sys/devices/system/cpu/cpu0/cpuidle/state0/latency", "0"),
            ("sys/devices/system/cpu/cpu0/cpuidle/state1/name", "C6"),
            ("sys/devices/system/cpu/cpu0/cpuidle/state1/latency", "170"),
            ("sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "0"),
            ("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "2"),
            ("sys/kernel/mm/damon/admin/kdamonds/0/state", "off"),
            ("sys/kernel/mm/damon/admin/kdamonds/1/state", "on"),
            ("sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/schemes/nr_schemes", "1"),
            ("sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/schemes/0/action", "pageout"),
        ]);
        let f = inspect(&Machine::at(&root), 4, 8, Duration::ZERO);
        assert_eq!(f.len(), 11);
        for check in ["governor", "turbo", "smt", "cpuidle", "load", "cgroup", "clocksource", "damon", "cores"] {
            let x = get(&f, check);
            assert_eq!(x.level, Level::Warn, "{x:?}");
            assert!(!x.fix.is_empty(), "{x:?}");
        }
        assert_eq!(get(&f, "governor").detail, "performance on 1 CPU(s), powersave on 1 CPU(s): the frequency follows the load, so short runs and idle workers run slower");
        assert!(get(&f, "load").detail.starts_with("load average 3.50 on 4 allowed CPU(s)"));
        assert!(get(&f, "cgroup").detail.contains("1.50 CPU(s) (cpu.max) but 8 workers"), "{:?}", get(&f, "cgroup"));
        assert!(get(&f, "cores").detail.starts_with("8 workers planned on 4 allowed CPU(s)"));
        assert_eq!(get(&f, "isolation").level, Level::Info);
        assert_eq!(get(&f, "perf").level, Level::Info);
        assert!(get(&f, "cpuidle").detail.contains("up to 170 µs"), "{:?}", get(&f, "cpuidle"));
        assert!(get(&f, "damon").detail.starts_with("kdamond 1 (pageout) running"), "{:?}", get(&f, "damon"));
        assert!(render(&f).contains("9 warning(s)"));
        let _ = fs::remove_dir_all(root);
    }

    /// A tuned machine: nothing to fix.
    #[test]
    fn a_tuned_machine_is_all_ok() {
        let root = tree(&[
            ("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance"),
            ("sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0"),
            ("sys/devices/system/cpu/intel_pstate/no_turbo", "1"),
            ("sys/devices/system/cpu/smt/active", "0"),
            ("sys/devices/system/cpu/isolated", "2-15"),
            ("sys/devices/system/cpu/nohz_full", "2-15"),
            ("proc/loadavg", "0.10 0.05 0.01 1/200 999"),
            ("proc/self/cgroup", "0::/"),
            ("sys/fs/cgroup/cpu.max", "max 100000"),
            ("sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc"),
            ("proc/sys/kernel/perf_event_paranoid", "1"),
            ("sys/devices/system/cpu/cpu0/cpuidle/state0/name", "POLL"),
            ("sys/devices/system/cpu/cpu0/cpuidle/state0/latency", "0"),
            ("sys/devices/system/cpu/cpu0/cpuidle/state1/name", "C6"),
            ("sys/devices/system/cpu/cpu0/cpuidle/state1/latency", "170"),
            ("sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "1"),
            ("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1"),
            ("sys/kernel/mm/damon/admin/kdamonds/0/state", "off"),
        ]);
        let f = inspect(&Machine::at(&root), 16, 8, Duration::ZERO);
        assert!(f.iter().all(|x| x.level == Level::Ok && x.fix.is_empty()), "{f:#?}");
        assert_eq!(get(&f, "isolation").detail, "isolated CPUs 2-15, nohz_full 2-15");
        assert!(render(&f).contains("0 warning(s)"));
        let _ = fs::remove_dir_all(root);
    }

    #[test]
    fn an_empty_tree_gives_info_not_guesses() {
        let root = tree(&[]);
        let f = inspect(&Machine::at(&root), 2, 1, Duration::ZERO);
        for check in
            ["governor", "turbo", "smt", "cpuidle", "load", "isolation", "cgroup", "clocksource", "damon", "perf"]
        {
            assert_eq!(get(&f, check).level, Level::Info, "{:?}", get(&f, check));
        }
        let _ = fs::remove_dir_all(root);
    }

    #[test]
    fn proc_and_cgroup_formats_parse() {
        assert_eq!(parse_cpu_max("max 100000"), Some(None));
        assert_eq!(parse_cpu_max("250000 100000"), Some(Some(2.5)));
        assert_eq!(parse_cpu_max("garbage"), None);
        let stat = "1234 (my (odd) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0";
        assert_eq!(parse_stat(stat), Some(("my (odd) name".to_string(), 300)));
        assert_eq!(parse_stat("nonsense"), None);
    }
}
