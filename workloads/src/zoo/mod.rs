//! The pathology zoo (issue 30): workloads shaped after public incidents,
//! each with the figure that gives it away (its signature), on every
//! runtime. `--workload zoo` runs them all; each module's doc names its
//! origin and signature in one sentence each.
//!
//! - `lifo-starvation` in [`lifo`];
//! - `idle-burst` in [`idle`];
//! - `task-churn` in [`churn`];
//! - `timer-churn` in [`timers`];
//! - `blocking-storm` in `crate::storm` (the spawn storm through
//!   `spawn_blocking`);
//! - `accept-storm` in [`accept`] (`tcp-rpc`'s server and client).
//!
//! The first four are closed loop, fixed-size iterations
//! ([`crate::closed`]) started from `block_on`; `blocking-storm` runs for
//! the duration from outside threads, `accept-storm` open loop.

pub(crate) mod accept;
pub(crate) mod churn;
pub(crate) mod idle;
pub(crate) mod lifo;
pub(crate) mod timers;
