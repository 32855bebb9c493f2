//! The `--sched` names of our scheduling policies, and what each is: one
//! [`PolicyInfo`] per policy, defined in the policy's own folder.
//! `wsbench list`, parse errors, the workloads catalog and every validation
//! read them from here, and so does the knobs' applicability check (a knob
//! applies to the kinds whose info lists it).
//!
//! Policies from other crates join through `crate::register` (see
//! `crate::policy` for the extension API): this module is their registry,
//! of names and infos ([`SchedulerKind::Custom`]), so that they parse and
//! list like the built-ins (whose list is `builtins.rs`); how to start each
//! is the builder's (`crate::dispatch`). This module starts nothing: it
//! names no runtime type.

use std::fmt;
use std::str::FromStr;
use std::sync::RwLock;

use crate::info::{PolicyInfo, WorkerRule};
use crate::knobs::{knob_info, KnobError, KnobInfo, KnobSet, Knobs};

/// Declares `SchedulerKind` with one variant per built-in policy (from
/// `builtins.rs`), then `ThreadPerCore` and `Custom`; `ALL` and `info()`
/// follow the same list.
macro_rules! declare_kinds {
    ([] $($variant:ident => $module:ident :: $policy:ident,)*) => {
        /// Which scheduling policy a runtime uses. Parses from and prints
        /// as the stable kebab-case `--sched` names; [`SchedulerKind::info`]
        /// says what each is.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum SchedulerKind {
            $(
                #[doc = concat!("The built-in policy of `schedulers/src/policies/", stringify!($module), "/`.")]
                $variant,
            )*
            /// N independent single-worker runtimes, each with its own
            /// driver; no stealing, no shared run queue.
            ThreadPerCore,
            /// A policy registered at run time with [`crate::register`].
            Custom(CustomKind),
        }

        impl SchedulerKind {
            /// Every built-in kind, in table order ([`SchedulerKind::all`]
            /// adds the registered ones).
            pub const ALL: [SchedulerKind; [$(stringify!($variant),)*].len() + 1] =
                [$(SchedulerKind::$variant,)* SchedulerKind::ThreadPerCore];

            /// Everything about this scheduler.
            pub fn info(self) -> PolicyInfo {
                match self {
                    $(SchedulerKind::$variant => crate::policies::$module::INFO,)*
                    SchedulerKind::ThreadPerCore => crate::policies::thread_per_core::INFO,
                    SchedulerKind::Custom(c) => c.0.info,
                }
            }
        }
    };
}
crate::builtins::builtin_policies!(declare_kinds, []);

impl SchedulerKind {
    /// Every kind: the built-ins in table order, then the registered ones
    /// in registration order.
    pub fn all() -> Vec<SchedulerKind> {
        let mut all = SchedulerKind::ALL.to_vec();
        all.extend(registered().read().unwrap().iter().map(|&e| SchedulerKind::Custom(CustomKind(e))));
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

/// A registered policy's entry: its info, and its place in registration
/// order, which is also where the builder keeps how to start it
/// (`crate::dispatch`, [`add_custom`]).
pub(crate) struct CustomEntry {
    info: PolicyInfo,
    index: usize,
}

/// A policy registered with `crate::register`. Compares, hashes and
/// orders by name (registered names are unique).
#[derive(Clone, Copy)]
pub struct CustomKind(&'static CustomEntry);

impl CustomKind {
    /// Its place in registration order (0 for the first registered).
    pub(crate) fn index(self) -> usize {
        self.0.index
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
fn registered() -> &'static RwLock<Vec<&'static CustomEntry>> {
    static REGISTRY: RwLock<Vec<&'static CustomEntry>> = RwLock::new(Vec::new());
    &REGISTRY
}

/// Whether `name` may be a `--sched` name: lower-case kebab-case
/// (`[a-z0-9-]+`) starting with a letter, and not `all` (which the CLI
/// reads as "every scheduler"). Shared by [`crate::register`] and the workloads
/// crate's `register_reference`.
pub fn is_valid_sched_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name != "all"
}

/// The `--sched` names of the reference runtimes the workloads crate
/// builds in (tokio's two runtimes and smol): [`crate::register`] refuses them, so
/// a policy can never hide a reference row or be hidden by it.
pub const REFERENCE_NAMES: &[&str] = &["tokio", "tokio-current", "smol"];

/// Why [`crate::register`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// The name is taken by a built-in or an earlier registration.
    #[error("policy name `{0}` is already taken by a built-in scheduler, a reference runtime or an earlier policy registration (see `wsbench list`)")]
    Taken(&'static str),
    /// The name is not lower-case kebab-case (`[a-z0-9-]+`, starting with a
    /// letter), or is a reserved word.
    #[error(
        "bad policy name `{0}`: allowed are lower-case letters, digits and `-`, starting with a letter, and not `all`"
    )]
    BadName(&'static str),
    /// A listed knob does not exist.
    #[error(transparent)]
    Knob(#[from] crate::knobs::KnobError),
}

/// Adds a registered policy's name and info, after checking them: a bad
/// or taken name, or a knob that does not exist, is refused. `record` is
/// called with the new kind under the registry's write lock, before any
/// other thread can see the kind, so that the builder records how to start
/// it at [`CustomKind::index`] (`crate::register` is the one caller).
pub(crate) fn add_custom(info: PolicyInfo, record: impl FnOnce(CustomKind)) -> Result<SchedulerKind, RegisterError> {
    let name = info.name;
    if !is_valid_sched_name(name) {
        return Err(RegisterError::BadName(name));
    }
    for knob in info.knobs {
        knob_info(knob)?;
    }
    let mut reg = registered().write().unwrap();
    let taken = SchedulerKind::ALL.iter().any(|k| k.name() == name)
        || REFERENCE_NAMES.contains(&name)
        || reg.iter().any(|e| e.info.name == name);
    if taken {
        return Err(RegisterError::Taken(name));
    }
    let entry: &'static CustomEntry = Box::leak(Box::new(CustomEntry { info, index: reg.len() }));
    record(CustomKind(entry));
    reg.push(entry);
    Ok(SchedulerKind::Custom(CustomKind(entry)))
}

// Which knobs apply to which kind is a fact of each kind's info
// (`PolicyInfo::knobs`), so the checks live here, beside the list of
// kinds, rather than in `knobs.rs` (which names no kind).

impl KnobInfo {
    /// The schedulers it applies to: those whose [`PolicyInfo`] lists
    /// it (each policy says which knobs it honours, in its folder).
    pub fn applies_to(&self) -> Vec<SchedulerKind> {
        SchedulerKind::all().into_iter().filter(|k| k.info().knobs.contains(&self.name)).collect()
    }
}

impl Knobs {
    /// Errors when knob `name` has no meaning for `kind`.
    pub fn check_applies(name: &str, kind: SchedulerKind) -> Result<(), KnobError> {
        let info = knob_info(name)?;
        if kind.info().knobs.contains(&info.name) {
            Ok(())
        } else {
            Err(KnobError::NotApplicable {
                name: name.to_string(),
                kind: kind.name(),
                applies: info.applies_to().iter().map(|k| k.name()).collect::<Vec<_>>().join(", "),
            })
        }
    }
}

impl KnobSet {
    /// Errors naming the first knob that has no meaning for `kind`, or two
    /// values that contradict each other ([`Knobs::check_combination`]).
    pub fn check_applies(&self, kind: SchedulerKind) -> Result<(), KnobError> {
        self.pairs().try_for_each(|(name, _)| Knobs::check_applies(name, kind))?;
        self.values().check_combination()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::MAX_WORKERS;

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
        let info = |name| PolicyInfo { name, about: "x", workers: WorkerRule::Any, knobs: &[] };
        let e = crate::register::<crate::policies::global::Global>(info("steal-half")).unwrap_err();
        assert_eq!(e, RegisterError::Taken("steal-half"));
        for reference in ["tokio", "tokio-current", "smol"] {
            assert_eq!(
                crate::register::<crate::policies::global::Global>(info(reference)).unwrap_err(),
                RegisterError::Taken(reference)
            );
        }
        assert_eq!(
            crate::register::<crate::policies::global::Global>(info("Bad_Name")).unwrap_err(),
            RegisterError::BadName("Bad_Name")
        );
        let bad_knob = PolicyInfo { knobs: &["no-such-knob"], ..info("kind-test-knob") };
        assert!(matches!(crate::register::<crate::policies::global::Global>(bad_knob), Err(RegisterError::Knob(_))));
        let k = crate::register::<crate::policies::global::Global>(info("kind-test-global")).unwrap();
        assert_eq!("kind-test-global".parse::<SchedulerKind>().unwrap(), k);
        assert!(SchedulerKind::all().contains(&k));
        assert_eq!(
            crate::register::<crate::policies::global::Global>(info("kind-test-global")).unwrap_err(),
            RegisterError::Taken("kind-test-global")
        );
    }
}
