//! The machine and build a result came from, captured once per invocation
//! and written into every result file.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

/// Written where a value could not be determined.
pub const UNKNOWN: &str = "unknown";
/// Where Linux lists NUMA nodes.
const NUMA_SYSFS: &str = "/sys/devices/system/node";

/// Everything recorded about the environment.
#[derive(Debug, Clone, Serialize)]
pub struct Environment {
    /// UTC start of this invocation (RFC 3339).
    pub timestamp: String,
    /// Host name.
    pub host: String,
    /// CPU brand string.
    pub cpu_model: String,
    /// Logical CPUs; `None` when the machine could not be read.
    pub logical_cpus: Option<usize>,
    /// Physical cores, when known.
    pub physical_cores: Option<usize>,
    /// CPUs this process may run on; `None` when unknown.
    pub allowed_cpus: Option<usize>,
    /// NUMA nodes, where Linux exposes them.
    pub numa_nodes: Option<usize>,
    /// The CPU topology found in sysfs (what `victim=topology` orders
    /// pinned workers by): the CPUs of each L3 cache and of each NUMA node;
    /// empty lists where the kernel does not say.
    pub topology: CpuTopologyFound,
    /// Total memory in bytes; `None` when the machine could not be read.
    pub memory_bytes: Option<u64>,
    /// OS name and version.
    pub os: String,
    /// Kernel version.
    pub kernel: String,
    /// CPU architecture.
    pub arch: String,
    /// `git rev-parse HEAD` of the source tree (`-dirty` when it has
    /// uncommitted changes).
    pub git_sha: String,
    /// The compiler that built this binary.
    pub rustc: String,
    /// wsbench version.
    pub wsbench_version: String,
    /// The command line, shell-quoted loosely.
    pub command_line: String,
    /// `wsbench doctor`'s findings about this machine when the run began.
    pub findings: Vec<crate::doctor::Finding>,
    /// The latest `wsbench doctor --calibrate` taken on this host and CPU
    /// model (its time is in it); `null` when there is none.
    pub calibration: Option<crate::doctor::calibrate::Calibration>,
}

/// [`Environment::topology`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct CpuTopologyFound {
    /// One entry per L3 cache: the CPUs sharing it.
    pub l3_groups: Vec<Vec<usize>>,
    /// One entry per NUMA node: its CPUs.
    pub numa_nodes: Vec<Vec<usize>>,
}

impl CpuTopologyFound {
    fn read() -> CpuTopologyFound {
        let t = wsbench_schedulers::topology::CpuTopology::read_sysfs();
        CpuTopologyFound { l3_groups: t.l3_groups, numa_nodes: t.numa_nodes }
    }
}

impl Environment {
    /// Captures the environment now.
    pub fn capture() -> Environment {
        let refresh = RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::nothing().with_ram());
        let system = System::new_with_specifics(refresh).ok();
        let cpu_model = system
            .as_ref()
            .and_then(|s| s.cpus().first().map(|c| c.brand().trim().to_string()))
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| UNKNOWN.to_string());
        let logical_cpus = system.as_ref().map(|s| s.cpus().len()).filter(|n| *n > 0);
        let os = match (System::name(), System::os_version()) {
            (Ok(name), Ok(version)) => format!("{name} {version}"),
            (Ok(name), Err(_)) => name,
            _ => UNKNOWN.to_string(),
        };
        let host = System::host_name().unwrap_or_else(|_| UNKNOWN.to_string());
        let calibration = crate::doctor::calibrate::latest(&host, &cpu_model);
        Environment {
            timestamp: rfc3339_utc(SystemTime::now()),
            host,
            cpu_model,
            logical_cpus,
            physical_cores: System::physical_core_count().ok(),
            allowed_cpus: std::thread::available_parallelism().map(|n| n.get()).ok(),
            numa_nodes: numa_nodes(Path::new(NUMA_SYSFS)),
            topology: CpuTopologyFound::read(),
            memory_bytes: system.as_ref().map(|s| s.total_memory()).filter(|b| *b > 0),
            os,
            kernel: System::kernel_version().unwrap_or_else(|_| UNKNOWN.to_string()),
            arch: System::cpu_arch(),
            git_sha: git_sha(),
            rustc: env!("WSBENCH_RUSTC_VERSION").to_string(),
            wsbench_version: env!("CARGO_PKG_VERSION").to_string(),
            command_line: command_line(),
            findings: Vec::new(),
            calibration,
        }
    }

    /// One line describing the machine, for captions and reports.
    pub fn describe(&self) -> String {
        const BYTES_PER_GIB: f64 = (1u64 << 30) as f64;
        let physical = self.physical_cores.map(|p| format!(" / {p} physical")).unwrap_or_default();
        let numa = self.numa_nodes.map(|n| format!(", {n} NUMA node(s)")).unwrap_or_default();
        let logical = self.logical_cpus.map_or(UNKNOWN.to_string(), |n| n.to_string());
        let memory =
            self.memory_bytes.map_or(format!("{UNKNOWN} memory"), |b| format!("{:.1} GiB", b as f64 / BYTES_PER_GIB));
        format!(
            "{} ({logical} logical{physical}{numa}), {memory}, {} {}, {}, git {}",
            self.cpu_model,
            self.os,
            self.kernel,
            self.rustc,
            short_sha(&self.git_sha)
        )
    }
}

/// A count, or `unknown` when it could not be read.
pub fn or_unknown(n: Option<usize>) -> String {
    n.map_or(UNKNOWN.to_string(), |n| n.to_string())
}

/// The first 12 characters of a sha (keeps a `-dirty` suffix).
pub fn short_sha(sha: &str) -> String {
    const SHORT_SHA: usize = 12;
    match sha.split_once('-') {
        Some((hex, rest)) => format!("{}-{rest}", &hex[..hex.len().min(SHORT_SHA)]),
        None => sha[..sha.len().min(SHORT_SHA)].to_string(),
    }
}

/// Counts `nodeN` directories under the sysfs node directory.
fn numa_nodes(dir: &Path) -> Option<usize> {
    let entries = std::fs::read_dir(dir).ok()?;
    let count = entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("node").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    (count > 0).then_some(count)
}

/// The source tree's commit; `unknown` outside a git checkout.
fn git_sha() -> String {
    let source_dir = env!("CARGO_MANIFEST_DIR");
    let run = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(source_dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(sha) = run(&["rev-parse", "HEAD"]).filter(|s| !s.is_empty()) else {
        return UNKNOWN.to_string();
    };
    match run(&["status", "--porcelain", "--untracked-files=no"]) {
        Some(changes) if !changes.is_empty() => format!("{sha}-dirty"),
        _ => sha,
    }
}

fn command_line() -> String {
    std::env::args()
        .map(|a| if a.contains(char::is_whitespace) || a.is_empty() { format!("'{a}'") } else { a })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Formats a time as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, milliseconds). The
/// CSV's `timestamp` is the start of the invocation, and with milliseconds
/// it tells two invocations appended to one file apart (`load` keys rows
/// by cell, timestamp and run).
pub fn rfc3339_utc(time: SystemTime) -> String {
    const SECS_PER_DAY: u64 = 86_400;
    const SECS_PER_HOUR: u64 = 3_600;
    const SECS_PER_MIN: u64 = 60;
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / SECS_PER_DAY, secs % SECS_PER_DAY);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / SECS_PER_HOUR,
        rem % SECS_PER_HOUR / SECS_PER_MIN,
        rem % SECS_PER_MIN,
        since.subsec_millis()
    )
}

/// Reads [`rfc3339_utc`]'s form back (`YYYY-MM-DDTHH:MM:SS[.fff…]Z`, UTC
/// only); `None` for anything else.
pub fn parse_rfc3339_utc(text: &str) -> Option<SystemTime> {
    let (date, time) = text.strip_suffix('Z')?.split_once('T')?;
    let mut ymd = date.splitn(3, '-').map(|v| v.parse::<u32>().ok());
    let (y, m, d) = (ymd.next()??, ymd.next()??, ymd.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut parts = hms.splitn(3, ':').map(|v| v.parse::<u64>().ok());
    let (hh, mm, ss) = (parts.next()??, parts.next()??, parts.next()??);
    let days_in = |m: u32| match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1970..=9999).contains(&y)
        || !(1..=12).contains(&m)
        || d == 0
        || d > days_in(m)
        || hh > 23
        || mm > 59
        || ss > 59
    {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 9 {
        return None;
    }
    let nanos: u32 = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse().ok()? };
    let days = days_from_civil(i64::from(y), m, d);
    let secs = u64::try_from(days).ok()? * 86_400 + hh * 3_600 + mm * 60 + ss;
    Some(UNIX_EPOCH + std::time::Duration::new(secs, nanos))
}

/// A proleptic Gregorian date to days since 1970-01-01 (the inverse of
/// [`civil_from_days`], Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    const DAYS_PER_ERA: i64 = 146_097;
    const EPOCH_SHIFT: i64 = 719_468;
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * DAYS_PER_ERA + doe - EPOCH_SHIFT
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// `civil_from_days` algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    const DAYS_PER_ERA: i64 = 146_097;
    const EPOCH_SHIFT: i64 = 719_468;
    let z = days + EPOCH_SHIFT;
    let era = z.div_euclid(DAYS_PER_ERA);
    let doe = z - era * DAYS_PER_ERA;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn reads_back_what_it_writes() {
        // Every 1,000,003 s plus a varying millisecond, 1970 to ~2101.
        for i in 0..4_150u64 {
            let t = UNIX_EPOCH + Duration::from_millis(i * 1_000_003_000 + i % 1000);
            assert_eq!(parse_rfc3339_utc(&rfc3339_utc(t)), Some(t), "{}", rfc3339_utc(t));
        }
        let t = parse_rfc3339_utc("2000-02-29T01:01:01Z").unwrap();
        assert_eq!(t, UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661));
        let ns = parse_rfc3339_utc("1970-01-01T00:00:00.000000001Z").unwrap();
        assert_eq!(ns, UNIX_EPOCH + Duration::from_nanos(1));
        for bad in [
            "",
            "2026-12-01",
            "2026-12-01T10:00:00",
            "2026-12-01T10:00:00+01:00",
            "2025-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-12-01T24:00:00Z",
            "2026-12-01T10:00:00.1a2Z",
            "1969-12-31T23:59:59Z",
        ] {
            assert_eq!(parse_rfc3339_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap_day = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661);
        assert_eq!(rfc3339_utc(leap_day), "2000-02-29T01:01:01.000Z");
        let later = UNIX_EPOCH + Duration::from_millis(1_767_225_599_999);
        assert_eq!(rfc3339_utc(later), "2025-12-31T23:59:59.999Z");
    }

    #[test]
    fn counts_numa_node_directories_only() {
        let dir = std::env::temp_dir().join(format!("wsbench-numa-test-{}", std::process::id()));
        for name in ["node0", "node1", "nodeX", "possible"] {
            std::fs::create_dir_all(dir.join(name)).unwrap();
        }
        assert_eq!(numa_nodes(&dir), Some(2));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(numa_nodes(&dir), None);
    }

    /// A machine that could not be read is described as unknown, never as
    /// 1 CPU and 0 bytes; the CSV's `logical_cpus` is blank.
    #[test]
    fn unknown_machine_facts_stay_unknown() {
        let mut env = Environment::capture();
        (env.logical_cpus, env.allowed_cpus, env.memory_bytes) = (None, None, None);
        let line = env.describe();
        assert!(line.contains("(unknown logical") && line.contains(", unknown memory,"), "{line}");
        let json = serde_json::to_value(&env).unwrap();
        assert!(json["logical_cpus"].is_null() && json["memory_bytes"].is_null(), "{json}");
        let key = crate::data::record::CellKey::plain("tokio", 1, "yield-many");
        let row = crate::output::export::csv::row(&env, &crate::data::record::RunRecord::failed(key, 0, "x".into()));
        assert_eq!(row[5], "", "logical_cpus column");
    }

    #[test]
    fn short_sha_keeps_dirty_marker() {
        assert_eq!(short_sha("0123456789abcdef0123"), "0123456789ab");
        assert_eq!(short_sha("0123456789abcdef-dirty"), "0123456789ab-dirty");
        assert_eq!(short_sha(UNKNOWN), UNKNOWN);
    }
}
