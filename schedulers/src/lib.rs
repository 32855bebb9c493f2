//! wsbench-schedulers: complete async runtimes that differ only in their
//! scheduling policy.
//!
//! Every variant shares one runtime core — task cells, wakers, `JoinHandle`,
//! an epoll reactor (mio), a hierarchical timer wheel and a blocking pool —
//! and plugs a different policy into it behind one trait, with static
//! dispatch. See `../shared/DESIGN.md` and the README.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

mod coop;
mod kind;
pub mod knobs;
mod loom;
pub mod metrics;

pub use kind::{SchedulerKind, UnknownScheduler};
