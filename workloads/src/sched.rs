//! The runtime a `--sched` name selects, resolved once ([`Sched::parse`])
//! into a typed value that [`crate::api::RuntimeSpec`] carries; nothing
//! after it looks the name up again.

use std::fmt;

use wsbench_schedulers::{SchedulerKind, WorkerRule};

use crate::api::SchedInfo;
use crate::catalog::REFERENCES;
use crate::runner::{registered, RefEntry};
use crate::Error;

/// Which runtime implementation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    Ours(SchedulerKind),
    /// A reference registered with `register_reference`.
    Registered(&'static RefEntry),
    Tokio,
    TokioCurrent,
    Smol,
}

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
            builtin_ref.or_else(|| registered().into_iter().find(|r| r.info.name == name).map(Which::Registered));
        let ours = name.parse::<SchedulerKind>().ok().map(Which::Ours);
        match (reference, ours) {
            (Some(r), None) => Ok(Sched(r)),
            (None, Some(o)) => Ok(Sched(o)),
            (Some(_), Some(_)) => Err(Error::AmbiguousScheduler { name: name.to_string() }),
            (None, None) => Err(Error::UnknownScheduler {
                name: name.to_string(),
                allowed: crate::schedulers().iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
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
            Which::Registered(r) => r.info.name,
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
            Which::Registered(r) => r.info.single_worker_only,
            Which::Tokio | Which::Smol => false,
            Which::TokioCurrent => true,
        };
        if single {
            WorkerRule::ExactlyOne
        } else {
            WorkerRule::Any
        }
    }

    /// Its line in `wsbench list`.
    pub fn info(self) -> SchedInfo {
        crate::schedulers()
            .into_iter()
            .find(|s| s.name == self.name())
            .unwrap_or_else(|| unreachable!("resolved scheduler `{}` is not listed", self.name()))
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
