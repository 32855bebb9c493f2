//! The `--sched` names of our scheduling policies.

use std::fmt;
use std::str::FromStr;

/// Which scheduling policy a runtime uses. Parses from and prints as the
/// stable kebab-case `--sched` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SchedulerKind {
    /// One shared MPMC run queue.
    Global,
    /// A private FIFO per worker, no stealing; remote spawns round-robin.
    PerWorker,
    /// Chase–Lev deque per worker (crossbeam-deque), steal one task.
    StealOne,
    /// tokio's design: 256-slot ring, LIFO slot, steal half, inject queue.
    StealHalf,
    /// One thread, a plain `VecDeque`.
    CurrentThread,
    /// N independent single-worker runtimes, each with its own driver; no
    /// stealing, no shared queue.
    ThreadPerCore,
}

impl SchedulerKind {
    /// Every kind, in table order.
    pub const ALL: [SchedulerKind; 6] = [
        SchedulerKind::Global,
        SchedulerKind::PerWorker,
        SchedulerKind::StealOne,
        SchedulerKind::StealHalf,
        SchedulerKind::CurrentThread,
        SchedulerKind::ThreadPerCore,
    ];

    /// The `--sched` name.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Global => "global",
            SchedulerKind::PerWorker => "per-worker",
            SchedulerKind::StealOne => "steal-one",
            SchedulerKind::StealHalf => "steal-half",
            SchedulerKind::CurrentThread => "current-thread",
            SchedulerKind::ThreadPerCore => "thread-per-core",
        }
    }

    /// One line saying what the policy tests.
    pub fn about(self) -> &'static str {
        match self {
            SchedulerKind::Global => "one shared MPMC run queue; every push/pop goes through it",
            SchedulerKind::PerWorker => "private FIFO per worker, no stealing; remote spawns round-robin",
            SchedulerKind::StealOne => "Chase-Lev deque per worker (crossbeam-deque), thieves steal one task",
            SchedulerKind::StealHalf => {
                "tokio's design: 256-slot ring, LIFO slot, steal half, inject queue, searching throttle"
            }
            SchedulerKind::CurrentThread => "one thread, plain VecDeque, no atomics on the local queue (--workers 1)",
            SchedulerKind::ThreadPerCore => THREAD_PER_CORE_ABOUT,
        }
    }
}

const THREAD_PER_CORE_ABOUT: &str =
    "N independent current-thread runtimes, own epoll driver and timer wheel each; no stealing; outside spawns round-robin; SO_REUSEPORT listener per core";

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown `--sched` name.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "unknown scheduler `{name}`; allowed: global, per-worker, steal-one, steal-half, current-thread, thread-per-core"
)]
pub struct UnknownScheduler {
    /// The name that was given.
    pub name: String,
}

impl FromStr for SchedulerKind {
    type Err = UnknownScheduler;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SchedulerKind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| UnknownScheduler { name: s.to_string() })
    }
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
    }
}
