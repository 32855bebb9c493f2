//! wsbench-schedulers: complete async runtimes that differ only in their
//! scheduling policy.
//!
//! Every variant shares one runtime core — task cells, wakers, `JoinHandle`,
//! an epoll reactor (mio), a hierarchical timer wheel and a blocking pool —
//! and plugs a different policy into it behind one trait
//! (`policy::Policy`), with static dispatch. See the book:
//! `docs/src/design.md` and `docs/src/schedulers.md`.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

mod blocking;
mod builtins;
mod coop;
mod dispatch;
mod driver;
mod fairness;
mod fast_rand;
mod info;
mod inject;
mod kind;
pub mod knobs;
mod loom;
pub mod metrics;
pub mod net;
pub mod policy;
mod runtime;
pub mod task;
pub mod time;
pub mod topology;

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(test)]
mod test_util;

mod policies;

pub use dispatch::{register, spawn, BuildError, Builder, Handle, Runtime};
pub use info::{PolicyInfo, WorkerRule, MAX_WORKERS};
pub use kind::{is_valid_sched_name, CustomKind, RegisterError, SchedulerKind, UnknownScheduler, REFERENCE_NAMES};
pub use task::{JoinError, JoinHandle};

/// Internals re-exported for the criterion benchmarks only; not API.
#[doc(hidden)]
pub mod __bench {
    pub use crate::metrics::{counter_blocks, CounterBlocks};
    pub use crate::policies::steal_half::queue::{local, Local, Overflow, Steal, StealLimit};

    /// What a worker's counters cost per task poll: `polls` and `busy_ns`
    /// bumped in its own block.
    #[inline]
    pub fn count_poll(blocks: &CounterBlocks, worker: usize, busy_ns: u64) {
        let c = &blocks[worker];
        crate::metrics::Counters::bump(&c.polls, 1);
        crate::metrics::Counters::bump(&c.busy_ns, busy_ns);
    }

    /// The BWoS queue of the `bwos` policy.
    pub mod bwos {
        pub use crate::policies::bwos::queue::{local, Local, Steal, DEFAULT_BLOCKS, DEFAULT_BLOCK_SIZE};
    }
}
