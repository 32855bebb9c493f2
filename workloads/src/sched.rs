//! Every `--sched` name and the runtime it selects, resolved once
//! ([`Sched::parse`]) into a typed value that [`crate::api::RuntimeSpec`]
//! carries; nothing after it looks the name up again.
//!
//! This module knows every name — ours, the built-in references and those
//! registered with [`crate::register_reference`] — but not how to run one:
//! that is `runner.rs`, which keeps each registered reference's run
//! function beside the `&'static SchedInfo` this module hands out.

use std::fmt;
use std::sync::RwLock;

use wsbench_schedulers::{SchedulerKind, WorkerRule};

use crate::Error;

/// One `--sched` name: ours or a reference runtime.
#[derive(Debug, Clone, Copy)]
pub struct SchedInfo {
    /// Stable kebab-case name (`steal-half`, `tokio`, `smol`, ...).
    pub name: &'static str,
    /// One line of meaning.
    pub about: &'static str,
    /// True for tokio / tokio-current / smol.
    pub is_reference: bool,
    /// Only meaningful with exactly one worker.
    pub single_worker_only: bool,
}

/// The reference runtimes' `--sched` names (ours come from
/// `wsbench_schedulers`: see [`schedulers`]).
pub(crate) static REFERENCES: &[SchedInfo] = &[
    SchedInfo {
        name: "tokio",
        about: "reference: tokio multi-thread runtime, same worker count, tokio's reactor and timer",
        is_reference: true,
        single_worker_only: false,
    },
    SchedInfo {
        name: "tokio-current",
        about: "reference: tokio current-thread runtime driven by one dedicated thread (--workers 1)",
        is_reference: true,
        single_worker_only: true,
    },
    SchedInfo {
        name: "smol",
        about: "reference: async-executor run by N threads, async-io for timers and sockets",
        is_reference: true,
        single_worker_only: false,
    },
];

/// Ours and the built-in references, without registered references.
pub(crate) fn builtin_schedulers() -> Vec<SchedInfo> {
    let ours = SchedulerKind::all().into_iter().map(|k| {
        let info = k.info();
        SchedInfo {
            name: info.name,
            about: info.about,
            is_reference: false,
            single_worker_only: info.workers == WorkerRule::ExactlyOne,
        }
    });
    ours.chain(REFERENCES.iter().copied()).collect()
}

/// Every `--sched` name: ours (the built-in policies — `global`,
/// `per-worker`, `steal-one`, `steal-half`, `current-thread`,
/// `thread-per-core` — then any registered with
/// `wsbench_schedulers::register`) and the references (`tokio`,
/// `tokio-current`, `smol`, then any registered with
/// [`crate::register_reference`]).
pub fn schedulers() -> Vec<SchedInfo> {
    let mut all = builtin_schedulers();
    all.extend(registered().into_iter().copied());
    all
}

// ---- reference runtimes registered from outside the crate ----

/// Registered references' names, in registration order; leaked on purpose
/// (they live as long as the process, a handful of them). Each one's
/// address is its identity: `runner.rs` keys its run functions by it.
fn registry() -> &'static RwLock<Vec<&'static SchedInfo>> {
    static REGISTRY: RwLock<Vec<&'static SchedInfo>> = RwLock::new(Vec::new());
    &REGISTRY
}

/// Every registered reference.
pub(crate) fn registered() -> Vec<&'static SchedInfo> {
    registry().read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Why [`crate::register_reference`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterReferenceError {
    /// The name is taken by a scheduler or an earlier registration.
    #[error("reference runtime name `{0}` is already taken by a scheduler or an earlier reference registration (see `wsbench list`)")]
    Taken(&'static str),
    /// The name is not lower-case kebab-case starting with a letter, or
    /// is `all`.
    #[error("bad reference runtime name `{0}`: allowed are lower-case letters, digits and `-`, starting with a letter, and not `all`")]
    BadName(&'static str),
}

/// Adds a reference's name to the registry, after checking it is
/// well-formed and not taken; the caller (`register_reference`) files its
/// run function under the returned address.
pub(crate) fn register(info: SchedInfo) -> Result<&'static SchedInfo, RegisterReferenceError> {
    let name = info.name;
    if !wsbench_schedulers::is_valid_sched_name(name) {
        return Err(RegisterReferenceError::BadName(name));
    }
    let mut reg = registry().write().unwrap_or_else(|e| e.into_inner());
    if builtin_schedulers().iter().any(|s| s.name == name) || reg.iter().any(|e| e.name == name) {
        return Err(RegisterReferenceError::Taken(name));
    }
    let info: &'static SchedInfo = Box::leak(Box::new(info));
    reg.push(info);
    Ok(info)
}

/// Which runtime implementation runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Which {
    Ours(SchedulerKind),
    /// A reference registered with `register_reference`: its entry in
    /// this module's registry (compared by name).
    Registered(&'static SchedInfo),
    Tokio,
    TokioCurrent,
    Smol,
}

impl PartialEq for Which {
    fn eq(&self, other: &Which) -> bool {
        match (self, other) {
            (Which::Ours(a), Which::Ours(b)) => a == b,
            // Registered names are unique (`register` refuses a taken one).
            (Which::Registered(a), Which::Registered(b)) => a.name == b.name,
            (Which::Tokio, Which::Tokio) | (Which::TokioCurrent, Which::TokioCurrent) | (Which::Smol, Which::Smol) => {
                true
            }
            _ => false,
        }
    }
}

impl Eq for Which {}

/// A resolved `--sched` name: one of ours (built-in or registered with
/// `wsbench_schedulers::register`) or a reference runtime.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Sched(Which);

impl Sched {
    /// Resolves a `--sched` name; the error lists every allowed name. A
    /// name registered both as a policy and as a reference is refused as
    /// ambiguous rather than resolved by lookup order.
    pub fn parse(name: &str) -> Result<Sched, Error> {
        let builtin_ref = match name {
            "tokio" => Some(Which::Tokio),
            "tokio-current" => Some(Which::TokioCurrent),
            "smol" => Some(Which::Smol),
            _ => None,
        };
        debug_assert!(builtin_ref.is_some() == REFERENCES.iter().any(|r| r.name == name));
        let reference =
            builtin_ref.or_else(|| registered().into_iter().find(|r| r.name == name).map(Which::Registered));
        let ours = name.parse::<SchedulerKind>().ok().map(Which::Ours);
        match (reference, ours) {
            (Some(r), None) => Ok(Sched(r)),
            (None, Some(o)) => Ok(Sched(o)),
            (Some(_), Some(_)) => Err(Error::AmbiguousScheduler { name: name.to_string() }),
            (None, None) => Err(Error::UnknownScheduler {
                name: name.to_string(),
                allowed: schedulers().iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// One of ours.
    pub fn ours(kind: SchedulerKind) -> Sched {
        Sched(Which::Ours(kind))
    }

    /// Its `--sched` name.
    pub fn name(self) -> &'static str {
        match self.0 {
            Which::Ours(kind) => kind.name(),
            Which::Registered(r) => r.name,
            Which::Tokio => "tokio",
            Which::TokioCurrent => "tokio-current",
            Which::Smol => "smol",
        }
    }

    /// Our policy, or `None` for a reference.
    pub fn kind(self) -> Option<SchedulerKind> {
        match self.0 {
            Which::Ours(kind) => Some(kind),
            _ => None,
        }
    }

    /// Whether it is a reference runtime (takes no knobs).
    pub fn is_reference(self) -> bool {
        self.kind().is_none()
    }

    /// The worker counts it runs with.
    pub fn worker_rule(self) -> WorkerRule {
        let single = match self.0 {
            Which::Ours(kind) => return kind.worker_rule(),
            Which::Registered(r) => r.single_worker_only,
            Which::Tokio | Which::Smol => false,
            Which::TokioCurrent => true,
        };
        if single {
            WorkerRule::ExactlyOne
        } else {
            WorkerRule::Any
        }
    }

    pub(crate) fn which(self) -> Which {
        self.0
    }
}

impl fmt::Display for Sched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for Sched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sched({})", self.name())
    }
}

impl std::str::FromStr for Sched {
    type Err = Error;

    fn from_str(s: &str) -> Result<Sched, Error> {
        Sched::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_resolves_to_itself() {
        for info in crate::schedulers() {
            let s = Sched::parse(info.name).unwrap();
            assert_eq!(s.name(), info.name);
            assert_eq!(s.is_reference(), info.is_reference, "{}", info.name);
            assert_eq!(s.worker_rule() == WorkerRule::ExactlyOne, info.single_worker_only, "{}", info.name);
        }
    }

    #[test]
    fn the_reference_rows_are_the_names_the_schedulers_crate_reserves() {
        let ours: Vec<&str> = REFERENCES.iter().map(|r| r.name).collect();
        assert_eq!(ours, wsbench_schedulers::REFERENCE_NAMES);
    }

    #[test]
    fn unknown_names_list_every_allowed_name() {
        let e = Sched::parse("steal-all").unwrap_err().to_string();
        assert!(e.contains("`steal-all`"), "{e}");
        for info in crate::schedulers() {
            assert!(e.contains(info.name), "{e} lacks {}", info.name);
        }
    }
}
