//! Ablation knobs: every design claim about work stealing as a switch a user
//! can flip and measure. Each knob has a stable kebab-case name (CLI
//! `--knob name=value`, CSV `knobs` column) and applies to a stated set of
//! policies; setting it on another policy is a build error. Which policies
//! those are is a fact of each policy's `PolicyInfo::knobs`: the
//! applicability checks (`KnobInfo::applies_to`, `Knobs::check_applies`,
//! `KnobSet::check_applies`) live with the list of kinds, in `kind.rs`, so
//! that this module, which every policy reads, names no kind.

use std::fmt;

use crate::topology::WorkerTopology;

/// tokio's cap on consecutive LIFO-slot polls.
pub const DEFAULT_MAX_LIFO_POLLS: u32 = 3;
/// Most passes over the victims per steal loop (`steal-passes`; Go: 4).
pub const MAX_STEAL_PASSES: u32 = 64;
/// tokio's starting (and classic fixed) global-queue interval, in ticks.
pub const DEFAULT_GLOBAL_INTERVAL: u32 = 61;
/// tokio's local ring capacity.
pub const DEFAULT_QUEUE_CAPACITY: usize = crate::policies::steal_half::queue::DEFAULT_CAPACITY;
/// Largest `queue-capacity` (also the largest `steal` and `inject-batch`
/// count): the ring's own bound, `steal_half::queue::MAX_CAPACITY`, which
/// says why.
pub const MAX_QUEUE_CAPACITY: usize = crate::policies::steal_half::queue::MAX_CAPACITY;
/// Smallest `queue-capacity`: the ring's own bound,
/// `steal_half::queue::MIN_CAPACITY`, which says why.
pub const MIN_QUEUE_CAPACITY: usize = crate::policies::steal_half::queue::MIN_CAPACITY;
/// tokio's `event_interval`: ticks between non-blocking driver polls.
pub const DEFAULT_EVENT_INTERVAL: u32 = 61;
/// Units of cooperative budget per scheduled poll.
pub const DEFAULT_BUDGET: u32 = crate::coop::BUDGET_UNITS;

/// How often a worker checks the inject queue before its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobalInterval {
    /// tokio's adaptive interval: `clamp(200 µs / ewma poll time, 2, 127)`.
    Adaptive,
    /// Every N ticks.
    Fixed(u32),
}

/// How many tasks a thief takes from a victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StealAmount {
    /// Ceil half of the victim's queue (tokio).
    Half,
    /// At most N tasks (`one` = 1).
    Count(u32),
}

/// How many workers may search for work at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchingLimit {
    /// tokio: a worker may search only while `2 * searching < workers`.
    Half,
    /// No throttle.
    None,
}

/// What an idle worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleMode {
    /// Park at once (tokio).
    Park,
    /// Spin a few rounds, then `yield_now`, then park.
    Backoff,
}

/// The inject (global) queue used for remote spawns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectMode {
    /// One mutex-protected queue with an atomic length (tokio).
    Mutex,
    /// Several mutex-protected shards, pushes spread, pops start at the
    /// worker's own shard.
    Sharded,
}

/// How many tasks a worker takes from the inject queue per visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectBatch {
    /// `len / workers + 1`, its fair share (tokio); tiny at many workers.
    Share,
    /// A fixed number (tokio PR 8208's setting).
    Fixed(u32),
}

/// How a thief picks its first victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Victim {
    /// A random start, then every other worker once (tokio).
    Random,
    /// Start at the next worker, then every other worker once.
    Sequential,
    /// Same L3 group first, then same NUMA node, then the rest, random
    /// within each level (`crate::topology`); as `Random` where no worker
    /// topology is known.
    Topology,
}

/// Where task cells start in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskAlign {
    /// Wherever the allocator puts them (16-byte aligned, neighbours packed).
    Natural,
    /// On a boundary of this many bytes (64 or 128), so that tasks spawned
    /// back to back share no cache line (pair); costs up to that many bytes
    /// minus 16 per task.
    Boundary(u32),
}

impl TaskAlign {
    /// The boundary in bytes (1 for `Natural`).
    pub fn bytes(self) -> usize {
        match self {
            TaskAlign::Natural => 1,
            TaskAlign::Boundary(n) => n as usize,
        }
    }
}

/// Where a worker's timers live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerMode {
    /// One wheel behind one lock, fired by whichever worker holds the
    /// driver.
    Shared,
    /// One wheel per worker: a timer armed on a worker goes into its own
    /// wheel; others' cancels reach it as messages (`driver/local.rs`).
    PerWorker,
}

/// The typed, validated knob values of one runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knobs {
    /// LIFO slot on (`lifo=on`).
    pub lifo: bool,
    /// Cap on consecutive LIFO polls.
    pub max_lifo_polls: u32,
    /// Inject-queue fairness interval.
    pub global_interval: GlobalInterval,
    /// Steal amount.
    pub steal: StealAmount,
    /// Local ring capacity (power of two).
    pub queue_capacity: usize,
    /// Searching throttle.
    pub searching_limit: SearchingLimit,
    /// Idle behaviour.
    pub idle: IdleMode,
    /// Inject queue layout.
    pub inject: InjectMode,
    /// Cooperative budget per poll; `None` = off.
    pub budget: Option<u32>,
    /// Victim selection.
    pub victim: Victim,
    /// Ticks between non-blocking driver polls.
    pub event_interval: u32,
    /// Task cell placement.
    pub task_align: TaskAlign,
    /// Tasks taken from the inject queue per visit.
    pub inject_batch: InjectBatch,
    /// Thieves may take a victim's LIFO task on their last pass
    /// (`lifo-steal=on`).
    pub lifo_steal: bool,
    /// Passes over the victims per steal loop.
    pub steal_passes: u32,
    /// Where each worker sits (L3 group, NUMA node), for `victim=topology`
    /// and the group steal counters: set by `Builder::topology`, not a
    /// `--knob`; `None` = unknown.
    pub topology: Option<WorkerTopology>,
    /// Timer wheels.
    pub timer: TimerMode,
    /// Measure schedule delay (`sched-delay=on`): stamp every task when it
    /// is scheduled and record the wait at its poll (`runtime/delay.rs`).
    pub sched_delay: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            lifo: true,
            max_lifo_polls: DEFAULT_MAX_LIFO_POLLS,
            global_interval: GlobalInterval::Adaptive,
            steal: StealAmount::Half,
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            searching_limit: SearchingLimit::Half,
            idle: IdleMode::Park,
            inject: InjectMode::Mutex,
            budget: Some(DEFAULT_BUDGET),
            victim: Victim::Random,
            event_interval: DEFAULT_EVENT_INTERVAL,
            task_align: TaskAlign::Natural,
            inject_batch: InjectBatch::Share,
            lifo_steal: false,
            steal_passes: 1,
            topology: None,
            timer: TimerMode::Shared,
            sched_delay: false,
        }
    }
}

/// Description of one knob, for `wsbench list` and error messages.
#[derive(Debug, Clone, Copy)]
pub struct KnobInfo {
    /// kebab-case name.
    pub name: &'static str,
    /// Default value as written on the CLI.
    pub default: &'static str,
    /// Allowed values.
    pub allowed: &'static str,
    /// One line of meaning.
    pub about: &'static str,
}

/// The knobs the runtime core implements for every policy on it (idle
/// behaviour, cooperative budget, driver poll interval, task-cell
/// alignment, timer wheels, schedule-delay measurement): what a registered policy lists in
/// [`crate::PolicyInfo::knobs`] unless it has knobs of its own.
pub const CORE_KNOBS: &[&str] = &["idle", "budget", "event-interval", "task-align", "timer", "sched-delay"];

/// Every knob.
pub const KNOBS: &[KnobInfo] = &[
    KnobInfo { name: "lifo", default: "on", allowed: "on|off", about: "LIFO slot for tasks woken by a worker" },
    KnobInfo {
        name: "max-lifo-polls",
        default: "3",
        allowed: "integer 1..=1024",
        about: "consecutive LIFO-slot polls before the slot is bypassed",
    },
    KnobInfo {
        name: "global-interval",
        default: "adaptive",
        allowed: "adaptive|integer 1..=1024",
        about: "ticks between inject-queue-first checks (tokio: adaptive from 61)",
    },
    KnobInfo { name: "steal", default: "half", allowed: "half|one|integer 1..=65536", about: "tasks taken per steal" },
    KnobInfo {
        name: "queue-capacity",
        default: "256",
        allowed: "power of two 4..=65536",
        about: "local ring slots per worker (bwos: blocks of min(32, capacity/2) entries)",
    },
    KnobInfo {
        name: "searching-limit",
        default: "half",
        allowed: "half|none",
        about: "at most half the workers search for work at once",
    },
    KnobInfo {
        name: "idle",
        default: "park",
        allowed: "park|backoff",
        about: "idle worker parks at once, or spins and yields first",
    },
    KnobInfo {
        name: "inject",
        default: "mutex",
        allowed: "mutex|sharded",
        about: "one mutex inject queue, or one shard per 4 workers",
    },
    KnobInfo {
        name: "budget",
        default: "128",
        allowed: "off|integer 1..=1000000",
        about: "cooperative budget units per poll",
    },
    KnobInfo {
        name: "victim",
        default: "random",
        allowed: "random|sequential|topology",
        about: "steal loop's victim order: random start, next worker first, or same L3 / same NUMA node / rest (pinned workers' sysfs topology or --topology)",
    },
    KnobInfo {
        name: "event-interval",
        default: "61",
        allowed: "integer 1..=1024",
        about: "ticks between non-blocking I/O and timer driver polls",
    },
    KnobInfo {
        name: "task-align",
        default: "none",
        allowed: "none|64|128",
        about:
            "task cells packed, or each on a 64/128-byte boundary (tokio: 128) against false sharing between neighbours",
    },
    KnobInfo {
        name: "inject-batch",
        default: "share",
        allowed: "share|integer 1..=65536",
        about: "tasks taken from the inject queue per visit: len/workers+1, or a fixed N (always capped by free slots)",
    },
    KnobInfo {
        name: "lifo-steal",
        default: "off",
        allowed: "off|on",
        about: "thieves may take a victim's LIFO-slot task, on their last pass only (Go's runnext); no wake-up for it",
    },
    KnobInfo {
        name: "steal-passes",
        default: "1",
        allowed: "integer 1..=64",
        about: "passes over every victim per steal loop (Go: 4); the LIFO slot is reached on the last",
    },
    KnobInfo {
        name: "timer",
        default: "shared",
        allowed: "shared|per-worker",
        about: "one timer wheel behind one lock, or one per worker (timers armed on a worker go to its wheel; other threads' cancels are sent to it)",
    },
    KnobInfo {
        name: "sched-delay",
        default: "off",
        allowed: "off|on",
        about: "measure schedule delay (scheduled -> next poll, two clock reads per poll): the sched_delay_p50_us and sched_delay_p99_us columns",
    },
];

/// A knob that is unknown, has a bad value, or does not apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KnobError {
    /// No knob of that name.
    #[error("unknown knob `{name}`; allowed: {}", KNOBS.iter().map(|k| k.name).collect::<Vec<_>>().join(", "))]
    Unknown {
        /// Given name.
        name: String,
    },
    /// Value outside what the knob allows.
    #[error("bad value `{value}` for knob `{name}`; allowed: {allowed}")]
    BadValue {
        /// Knob name.
        name: String,
        /// Given value.
        value: String,
        /// What is allowed.
        allowed: &'static str,
    },
    /// The same knob set twice in one runtime.
    #[error("knob `{name}` is set twice; give it once")]
    Twice {
        /// Knob name.
        name: String,
    },
    /// The knob has no meaning for the chosen policy.
    #[error("knob `{name}` does not apply to scheduler `{kind}`; it applies to: {applies}")]
    NotApplicable {
        /// Knob name.
        name: String,
        /// The policy's `--sched` name.
        kind: &'static str,
        /// Policies it applies to.
        applies: String,
    },
    /// Two knob values that contradict each other.
    #[error("knob `{setting}` needs `{needs}`: {why}")]
    Conflict {
        /// The setting that cannot hold.
        setting: &'static str,
        /// What it needs instead.
        needs: &'static str,
        /// Why.
        why: &'static str,
    },
}

/// Looks a knob up by name.
pub fn knob_info(name: &str) -> Result<&'static KnobInfo, KnobError> {
    KNOBS.iter().find(|k| k.name == name).ok_or_else(|| KnobError::Unknown { name: name.to_string() })
}

fn parse_int(info: &KnobInfo, value: &str, lo: u64, hi: u64) -> Result<u64, KnobError> {
    match value.parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(bad(info, value)),
    }
}

fn bad(info: &KnobInfo, value: &str) -> KnobError {
    KnobError::BadValue { name: info.name.to_string(), value: value.to_string(), allowed: info.allowed }
}

const MAX_SMALL_KNOB: u64 = 1024;
const MAX_BUDGET: u64 = 1_000_000;

impl Knobs {
    /// Sets one knob from its CLI form; checks name and value, not
    /// applicability (see [`Knobs::check_applies`]).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), KnobError> {
        let info = knob_info(name)?;
        match name {
            "lifo" => {
                self.lifo = match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(bad(info, value)),
                }
            }
            "max-lifo-polls" => self.max_lifo_polls = parse_int(info, value, 1, MAX_SMALL_KNOB)? as u32,
            "global-interval" => {
                self.global_interval = match value {
                    "adaptive" => GlobalInterval::Adaptive,
                    v => GlobalInterval::Fixed(parse_int(info, v, 1, MAX_SMALL_KNOB)? as u32),
                }
            }
            "steal" => {
                self.steal = match value {
                    "half" => StealAmount::Half,
                    "one" => StealAmount::Count(1),
                    v => StealAmount::Count(parse_int(info, v, 1, MAX_QUEUE_CAPACITY as u64)? as u32),
                }
            }
            "queue-capacity" => {
                let v = parse_int(info, value, MIN_QUEUE_CAPACITY as u64, MAX_QUEUE_CAPACITY as u64)?;
                if !v.is_power_of_two() {
                    return Err(bad(info, value));
                }
                self.queue_capacity = v as usize;
            }
            "searching-limit" => {
                self.searching_limit = match value {
                    "half" => SearchingLimit::Half,
                    "none" => SearchingLimit::None,
                    _ => return Err(bad(info, value)),
                }
            }
            "idle" => {
                self.idle = match value {
                    "park" => IdleMode::Park,
                    "backoff" => IdleMode::Backoff,
                    _ => return Err(bad(info, value)),
                }
            }
            "inject" => {
                self.inject = match value {
                    "mutex" => InjectMode::Mutex,
                    "sharded" => InjectMode::Sharded,
                    _ => return Err(bad(info, value)),
                }
            }
            "budget" => {
                self.budget = match value {
                    "off" => None,
                    v => Some(parse_int(info, v, 1, MAX_BUDGET)? as u32),
                }
            }
            "victim" => {
                self.victim = match value {
                    "random" => Victim::Random,
                    "sequential" => Victim::Sequential,
                    "topology" => Victim::Topology,
                    _ => return Err(bad(info, value)),
                }
            }
            "event-interval" => self.event_interval = parse_int(info, value, 1, MAX_SMALL_KNOB)? as u32,
            "task-align" => {
                self.task_align = match value {
                    "none" => TaskAlign::Natural,
                    "64" => TaskAlign::Boundary(64),
                    "128" => TaskAlign::Boundary(128),
                    _ => return Err(bad(info, value)),
                }
            }
            "inject-batch" => {
                self.inject_batch = match value {
                    "share" => InjectBatch::Share,
                    v => InjectBatch::Fixed(parse_int(info, v, 1, MAX_QUEUE_CAPACITY as u64)? as u32),
                }
            }
            "lifo-steal" => {
                self.lifo_steal = match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(bad(info, value)),
                }
            }
            "steal-passes" => self.steal_passes = parse_int(info, value, 1, u64::from(MAX_STEAL_PASSES))? as u32,
            "timer" => {
                self.timer = match value {
                    "shared" => TimerMode::Shared,
                    "per-worker" => TimerMode::PerWorker,
                    _ => return Err(bad(info, value)),
                }
            }
            "sched-delay" => {
                self.sched_delay = match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(bad(info, value)),
                }
            }
            other => unreachable!("knob `{other}` is listed in KNOBS but not handled in Knobs::set"),
        }
        Ok(())
    }

    /// Errors when two set values contradict each other.
    pub fn check_combination(&self) -> Result<(), KnobError> {
        if self.lifo_steal && !self.lifo {
            return Err(KnobError::Conflict {
                setting: "lifo-steal=on",
                needs: "lifo=on",
                why: "with lifo=off there is no LIFO slot to steal from",
            });
        }
        Ok(())
    }
}

/// Knob settings parsed once: the knobs that were set, in the order given,
/// with their values as written, and the typed [`Knobs`] they make. What
/// the harness builds from `--knob` and carries to [`crate::Builder::knobs`];
/// nothing downstream parses the text again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnobSet {
    set: Vec<(&'static str, String)>,
    values: Knobs,
}

impl KnobSet {
    /// No knob set: every default.
    pub fn new() -> KnobSet {
        KnobSet::default()
    }

    /// Parses `name=value` pairs (name and value checked; applicability
    /// is [`KnobSet::check_applies`]). A knob given twice is refused: the
    /// later value would silently win.
    pub fn parse<N: AsRef<str>, V: AsRef<str>>(pairs: &[(N, V)]) -> Result<KnobSet, KnobError> {
        let mut out = KnobSet::new();
        for (name, value) in pairs {
            out.push(name.as_ref(), value.as_ref())?;
        }
        Ok(out)
    }

    /// Adds one knob.
    pub fn push(&mut self, name: &str, value: &str) -> Result<(), KnobError> {
        let info = knob_info(name)?;
        if self.set.iter().any(|(n, _)| *n == info.name) {
            return Err(KnobError::Twice { name: info.name.to_string() });
        }
        self.values.set(info.name, value)?;
        self.set.push((info.name, value.to_string()));
        Ok(())
    }

    /// The typed values (defaults where nothing was set).
    pub fn values(&self) -> &Knobs {
        &self.values
    }

    /// The knobs that were set, `(name, value as written)`, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        self.set.iter().map(|(n, v)| (*n, v.as_str()))
    }

    /// Whether no knob was set.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

/// `name=value name=value` in the order set; empty when nothing was set.
impl fmt::Display for KnobSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, value)) in self.pairs().enumerate() {
            write!(f, "{}{name}={value}", if i == 0 { "" } else { " " })?;
        }
        Ok(())
    }
}

impl fmt::Display for GlobalInterval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlobalInterval::Adaptive => f.write_str("adaptive"),
            GlobalInterval::Fixed(n) => write!(f, "{n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SchedulerKind;

    #[test]
    fn every_listed_knob_accepts_its_default() {
        for k in KNOBS {
            let mut knobs = Knobs::default();
            knobs.set(k.name, k.default).unwrap();
            assert_eq!(knobs, Knobs::default(), "default of `{}` differs from Knobs::default", k.name);
        }
    }

    /// The `allowed` texts of `KNOBS` state the bounds `Knobs::set`
    /// enforces, so that a change of a bound shows up in both.
    #[test]
    fn allowed_texts_state_the_bounds_that_are_checked() {
        let allowed = |name| knob_info(name).unwrap().allowed;
        let (min, max) = (MIN_QUEUE_CAPACITY, MAX_QUEUE_CAPACITY);
        assert_eq!(allowed("queue-capacity"), format!("power of two {min}..={max}"));
        assert_eq!(allowed("steal"), format!("half|one|integer 1..={max}"));
        assert_eq!(allowed("inject-batch"), format!("share|integer 1..={max}"));
        assert_eq!(allowed("steal-passes"), format!("integer 1..={MAX_STEAL_PASSES}"));
        assert_eq!(allowed("budget"), format!("off|integer 1..={MAX_BUDGET}"));
        for small in ["max-lifo-polls", "event-interval"] {
            assert_eq!(allowed(small), format!("integer 1..={MAX_SMALL_KNOB}"));
        }
        assert_eq!(allowed("global-interval"), format!("adaptive|integer 1..={MAX_SMALL_KNOB}"));
        let mut knobs = Knobs::default();
        for (name, edge, over) in [("queue-capacity", max, 2 * max), ("steal", max, max + 1)] {
            knobs.set(name, &edge.to_string()).unwrap();
            assert!(knobs.set(name, &over.to_string()).is_err(), "{name}={over}");
        }
        knobs.set("queue-capacity", &min.to_string()).unwrap();
        assert!(knobs.set("queue-capacity", &(min / 2).to_string()).is_err());
    }

    #[test]
    fn bad_values_name_the_value_and_the_allowed_set() {
        let mut knobs = Knobs::default();
        let e = knobs.set("queue-capacity", "100").unwrap_err();
        assert!(e.to_string().contains("`100`") && e.to_string().contains("power of two"), "{e}");
        let e = knobs.set("nope", "1").unwrap_err();
        assert!(e.to_string().contains("`nope`") && e.to_string().contains("lifo"), "{e}");
        let e = Knobs::check_applies("lifo", SchedulerKind::Global).unwrap_err();
        assert!(e.to_string().contains("steal-half"), "{e}");
        knobs.set("steal", "one").unwrap();
        assert_eq!(knobs.steal, StealAmount::Count(1));
        knobs.set("budget", "off").unwrap();
        assert_eq!(knobs.budget, None);
        knobs.set("task-align", "128").unwrap();
        assert_eq!(knobs.task_align, TaskAlign::Boundary(128));
        knobs.set("inject-batch", "7").unwrap();
        assert_eq!(knobs.inject_batch, InjectBatch::Fixed(7));
        let e = knobs.set("inject-batch", "0").unwrap_err();
        assert!(e.to_string().contains("`0`") && e.to_string().contains("share|integer"), "{e}");
        knobs.set("lifo-steal", "on").unwrap();
        knobs.set("steal-passes", "4").unwrap();
        assert_eq!((knobs.lifo_steal, knobs.steal_passes), (true, 4));
        for bad_passes in ["0", "65", "four"] {
            let e = knobs.set("steal-passes", bad_passes).unwrap_err();
            assert!(e.to_string().contains(&format!("`{bad_passes}`")) && e.to_string().contains("1..=64"), "{e}");
        }
        let e = knobs.set("lifo-steal", "yes").unwrap_err();
        assert!(e.to_string().contains("`yes`") && e.to_string().contains("off|on"), "{e}");
        assert_eq!(knobs.check_combination(), Ok(()));
        knobs.set("lifo", "off").unwrap();
        let e = knobs.check_combination().unwrap_err();
        assert!(e.to_string().contains("lifo-steal=on") && e.to_string().contains("lifo=on"), "{e}");
        knobs.set("lifo-steal", "off").unwrap();
        assert_eq!(knobs.check_combination(), Ok(()));
        let e = Knobs::check_applies("lifo-steal", SchedulerKind::StealOne).unwrap_err();
        assert!(e.to_string().contains("steal-half") && e.to_string().contains("bwos"), "{e}");
        knobs.set("timer", "per-worker").unwrap();
        assert_eq!(knobs.timer, TimerMode::PerWorker);
        let e = knobs.set("timer", "local").unwrap_err();
        assert!(e.to_string().contains("`local`") && e.to_string().contains("shared|per-worker"), "{e}");
        for single in [SchedulerKind::CurrentThread, SchedulerKind::ThreadPerCore] {
            let e = Knobs::check_applies("timer", single).unwrap_err().to_string();
            let applies = e.split("applies to: ").nth(1).unwrap_or_default();
            assert_eq!(applies, "global, per-worker, steal-one, steal-half, bwos", "{e}");
        }
        let e = knobs.set("task-align", "32").unwrap_err();
        assert!(e.to_string().contains("`32`") && e.to_string().contains("none|64|128"), "{e}");
    }

    #[test]
    fn a_knob_set_parses_once_keeps_its_order_and_checks_applicability() {
        let set = KnobSet::parse(&[("steal", "one"), ("lifo", "off")]).unwrap();
        assert_eq!(set.pairs().collect::<Vec<_>>(), [("steal", "one"), ("lifo", "off")]);
        assert_eq!((set.values().steal, set.values().lifo), (StealAmount::Count(1), false));
        assert_eq!(set.to_string(), "steal=one lifo=off");
        assert!(set.check_applies(SchedulerKind::StealHalf).is_ok());
        let e = set.check_applies(SchedulerKind::Global).unwrap_err();
        assert!(matches!(e, KnobError::NotApplicable { ref name, .. } if name == "steal"), "{e}");
        assert_eq!(
            KnobSet::parse(&[("lifo", "off"), ("lifo", "on")]).unwrap_err(),
            KnobError::Twice { name: "lifo".into() }
        );
        assert!(matches!(KnobSet::parse(&[("lifo", "maybe")]), Err(KnobError::BadValue { .. })));
        assert!(matches!(KnobSet::parse(&[("lifoo", "on")]), Err(KnobError::Unknown { .. })));
        assert!(KnobSet::new().is_empty() && KnobSet::new().values() == &Knobs::default());
    }
}
