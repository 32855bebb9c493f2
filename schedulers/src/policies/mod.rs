//! The scheduling policies, one folder each, every one behind the one seam
//! `crate::policy::Policy`: `global`, `per_worker`, `steal_one`,
//! `steal_half`, `current_thread` and `bwos` are policies the runtime core
//! (`crate::runtime`) runs, generic over the trait; `thread_per_core` is a
//! composition of `current-thread` runtimes that `crate::dispatch` builds.
//! Each folder keeps its own `INFO` (its `--sched` name, meaning, worker
//! rule and knobs; listed in `crate::builtins`), and `victims.rs` is the
//! victim order the stealing policies share. A policy reads the knobs, the
//! seam and the core's task and queue types; the core reads no policy.

pub(crate) mod bwos;
pub(crate) mod current_thread;
pub(crate) mod global;
pub(crate) mod per_worker;
pub(crate) mod steal_half;
pub(crate) mod steal_one;
pub(crate) mod thread_per_core;
pub(crate) mod victims;
