//! The `--sched` names of our scheduling policies, and every fact about a
//! scheduler that other layers need (its one-line meaning, how many
//! workers it runs): one [`SchedulerInfo`] per policy, defined in the
//! policy's own folder. `wsbench list`, parse errors, the workloads catalog
//! and every validation read them from here.
//!
//! Policies from other crates join through [`register`] (see
//! `crate::policy` for the extension API): they become
//! [`SchedulerKind::Custom`] and parse, list and build like the built-ins.

use std::fmt;
use std::str::FromStr;
use std::sync::RwLock;

use crate::policy::Policy;
use crate::runtime::{BuildError, Builder, Runtime};

/// Most worker threads a runtime accepts (the idle state packs counts in
/// half a word). The one definition; the workloads and harness use it.
pub const MAX_WORKERS: usize = 4096;

/// How many workers a scheduler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerRule {
    /// Any count in `1..=MAX_WORKERS`; the default is the CPU count.
    Any,
    /// Exactly one (single-threaded schedulers); the default is 1.
    ExactlyOne,
}

impl WorkerRule {
    /// Checks `workers`; the error says what is allowed.
    pub fn check(self, workers: usize) -> Result<(), String> {
        match self {
            WorkerRule::ExactlyOne if workers != 1 => Err("exactly 1 (single-threaded scheduler)".to_string()),
            _ if workers == 0 || workers > MAX_WORKERS => Err(format!("1..={MAX_WORKERS}")),
            _ => Ok(()),
        }
    }

    /// The worker count used when none is given.
    pub fn default_workers(self) -> usize {
        match self {
            WorkerRule::ExactlyOne => 1,
            WorkerRule::Any => std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// What a scheduler is, for users and for validation. Part of the
/// extension API (see `crate::policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedulerInfo {
    /// The `--sched` name (kebab-case).
    pub name: &'static str,
    /// One line saying what the policy tests (`wsbench list`).
    pub about: &'static str,
    /// How many workers it runs.
    pub workers: WorkerRule,
    /// The knobs (by `--knob` name) it honours; setting any other knob on
    /// it is a build error. A registered policy usually lists
    /// [`crate::knobs::CORE_KNOBS`], the knobs the runtime core implements
    /// for every policy.
    pub knobs: &'static [&'static str],
}

/// Declares `SchedulerKind` with one variant per built-in policy (from
/// `registry.rs`), then `ThreadPerCore` and `Custom`; `ALL` and `info()`
/// follow the same list.
macro_rules! declare_kinds {
    ([] $($variant:ident => $module:ident :: $policy:ident,)*) => {
        /// Which scheduling policy a runtime uses. Parses from and prints
        /// as the stable kebab-case `--sched` names; [`SchedulerKind::info`]
        /// says what each is.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum SchedulerKind {
            $(
                #[doc = concat!("The built-in policy of `schedulers/src/", stringify!($module), "/`.")]
                $variant,
            )*
            /// N independent single-worker runtimes, each with its own
            /// driver; no stealing, no shared run queue.
            ThreadPerCore,
            /// A policy registered at run time with [`register`].
            Custom(CustomKind),
        }

        impl SchedulerKind {
            /// Every built-in kind, in table order ([`SchedulerKind::all`]
            /// adds the registered ones).
            pub const ALL: [SchedulerKind; [$(stringify!($variant),)*].len() + 1] =
                [$(SchedulerKind::$variant,)* SchedulerKind::ThreadPerCore];

            /// Everything about this scheduler.
            pub fn info(self) -> SchedulerInfo {
                match self {
                    $(SchedulerKind::$variant => crate::$module::INFO,)*
                    SchedulerKind::ThreadPerCore => crate::thread_per_core::INFO,
                    SchedulerKind::Custom(c) => c.0.info,
                }
            }
        }
    };
}
crate::registry::builtin_policies!(declare_kinds, []);

impl SchedulerKind {
    /// Every kind: the built-ins in table order, then the registered ones
    /// in registration order.
    pub fn all() -> Vec<SchedulerKind> {
        let mut all = SchedulerKind::ALL.to_vec();
        all.extend(registry().read().unwrap().iter().map(|&e| SchedulerKind::Custom(CustomKind(e))));
        all
    }

    /// The `--sched` name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// One line saying what the policy tests.
    pub fn about(self) -> &'static str {
        self.info().about
    }

    /// How many workers it runs.
    pub fn worker_rule(self) -> WorkerRule {
        self.info().workers
    }
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown `--sched` name.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown scheduler `{name}`; allowed: {allowed}")]
pub struct UnknownScheduler {
    /// The name that was given.
    pub name: String,
    /// Every scheduler name, comma-separated.
    pub allowed: String,
}

impl FromStr for SchedulerKind {
    type Err = UnknownScheduler;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let all = SchedulerKind::all();
        all.iter().copied().find(|k| k.name() == s).ok_or_else(|| UnknownScheduler {
            name: s.to_string(),
            allowed: all.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "),
        })
    }
}

/// Starts a runtime of a registered policy (a monomorphised
/// `Builder::start_policy::<P>`), with validated knobs and worker count.
pub(crate) type StartFn = fn(&Builder, crate::knobs::Knobs, usize) -> Result<Runtime, BuildError>;

pub(crate) struct CustomEntry {
    info: SchedulerInfo,
    start: StartFn,
}

/// A policy registered with [`register`]. Compares, hashes and orders by
/// name (registered names are unique).
#[derive(Clone, Copy)]
pub struct CustomKind(&'static CustomEntry);

impl CustomKind {
    pub(crate) fn start(self) -> StartFn {
        self.0.start
    }
}

impl PartialEq for CustomKind {
    fn eq(&self, other: &Self) -> bool {
        self.0.info.name == other.0.info.name
    }
}

impl Eq for CustomKind {}

impl std::hash::Hash for CustomKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.info.name.hash(state);
    }
}

impl PartialOrd for CustomKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CustomKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.info.name.cmp(other.0.info.name)
    }
}

impl fmt::Debug for CustomKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Custom({:?})", self.0.info.name)
    }
}

/// Registered policies, in registration order. Entries are leaked on
/// purpose: a registration lives as long as the process (so that
/// `SchedulerKind` stays `Copy`), and there are a handful of them.
fn registry() -> &'static RwLock<Vec<&'static CustomEntry>> {
    static REGISTRY: RwLock<Vec<&'static CustomEntry>> = RwLock::new(Vec::new());
    &REGISTRY
}

/// Whether `name` may be a `--sched` name: lower-case kebab-case
/// (`[a-z0-9-]+`) starting with a letter, and not `all` (which the CLI
/// reads as "every scheduler"). Shared by [`register`] and the workloads
/// crate's `register_reference`.
pub fn is_valid_sched_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name != "all"
}

/// The `--sched` names of the reference runtimes the workloads crate
/// builds in (tokio's two runtimes and smol): [`register`] refuses them, so
/// a policy can never hide a reference row or be hidden by it.
pub const REFERENCE_NAMES: &[&str] = &["tokio", "tokio-current", "smol"];

/// Why [`register`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// The name is taken by a built-in or an earlier registration.
    #[error("scheduler name `{0}` is already taken (see `wsbench list`)")]
    Taken(&'static str),
    /// The name is not lower-case kebab-case (`[a-z0-9-]+`, starting with a
    /// letter), or is a reserved word.
    #[error("bad scheduler name `{0}`: allowed are lower-case letters, digits and `-`, starting with a letter, and not `all`")]
    BadName(&'static str),
    /// A listed knob does not exist.
    #[error(transparent)]
    Knob(#[from] crate::knobs::KnobError),
}

/// Registers policy `P` under `info.name`, so that it parses, lists and
/// builds like a built-in ([`Builder::new`] with the returned kind) and runs
/// on the same runtime core. Part of the extension API (see
/// `crate::policy`). Register before anything parses `--sched` names (first
/// thing in `main`): every process that builds runtimes — the harness runs
/// each run in a child process of the same binary — must register the same
/// policies.
pub fn register<P: Policy>(info: SchedulerInfo) -> Result<SchedulerKind, RegisterError> {
    let name = info.name;
    if !is_valid_sched_name(name) {
        return Err(RegisterError::BadName(name));
    }
    for knob in info.knobs {
        crate::knobs::knob_info(knob)?;
    }
    let mut reg = registry().write().unwrap();
    let taken = SchedulerKind::ALL.iter().any(|k| k.name() == name)
        || REFERENCE_NAMES.contains(&name)
        || reg.iter().any(|e| e.info.name == name);
    if taken {
        return Err(RegisterError::Taken(name));
    }
    let entry: &'static CustomEntry = Box::leak(Box::new(CustomEntry { info, start: Builder::start_policy::<P> }));
    reg.push(entry);
    Ok(SchedulerKind::Custom(CustomKind(entry)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in SchedulerKind::ALL {
            assert_eq!(k.name().parse::<SchedulerKind>().unwrap(), k);
            assert_eq!(k.to_string(), k.name());
        }
        let err = "steal-all".parse::<SchedulerKind>().unwrap_err();
        assert!(err.to_string().contains("steal-all"), "{err}");
        for k in SchedulerKind::ALL {
            assert!(err.allowed.contains(k.name()), "{err}");
        }
    }

    #[test]
    fn worker_rule_names_what_is_allowed() {
        assert_eq!(WorkerRule::ExactlyOne.check(1), Ok(()));
        assert!(WorkerRule::ExactlyOne.check(2).unwrap_err().contains("exactly 1"));
        assert_eq!(WorkerRule::Any.check(MAX_WORKERS), Ok(()));
        assert!(WorkerRule::Any.check(0).unwrap_err().contains("4096"));
        assert!(WorkerRule::Any.check(MAX_WORKERS + 1).is_err());
        assert_eq!(SchedulerKind::CurrentThread.worker_rule(), WorkerRule::ExactlyOne);
        assert_eq!(SchedulerKind::StealHalf.worker_rule(), WorkerRule::Any);
    }

    #[test]
    fn registration_refuses_taken_and_bad_names() {
        let info = |name| SchedulerInfo { name, about: "x", workers: WorkerRule::Any, knobs: &[] };
        let e = register::<crate::global::Global>(info("steal-half")).unwrap_err();
        assert_eq!(e, RegisterError::Taken("steal-half"));
        for reference in ["tokio", "tokio-current", "smol"] {
            assert_eq!(
                register::<crate::global::Global>(info(reference)).unwrap_err(),
                RegisterError::Taken(reference)
            );
        }
        assert_eq!(
            register::<crate::global::Global>(info("Bad_Name")).unwrap_err(),
            RegisterError::BadName("Bad_Name")
        );
        let bad_knob = SchedulerInfo { knobs: &["no-such-knob"], ..info("kind-test-knob") };
        assert!(matches!(register::<crate::global::Global>(bad_knob), Err(RegisterError::Knob(_))));
        let k = register::<crate::global::Global>(info("kind-test-global")).unwrap();
        assert_eq!("kind-test-global".parse::<SchedulerKind>().unwrap(), k);
        assert!(SchedulerKind::all().contains(&k));
        assert_eq!(
            register::<crate::global::Global>(info("kind-test-global")).unwrap_err(),
            RegisterError::Taken("kind-test-global")
        );
    }
}
