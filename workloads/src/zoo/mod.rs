//! The pathology zoo (issue 30): workloads shaped after public incidents,
//! each with the figure that gives it away (its signature), on every
//! runtime. `--workload zoo` runs them all; each module's doc names its
//! origin and signature in one sentence each.
//!
//! - `lifo-starvation` in [`lifo`];
//! - `idle-burst` in [`idle`];
//! - `task-churn` in [`churn`];
//! - `timer-churn` in [`timers`].
//!
//! All are closed loop, fixed-size iterations ([`crate::closed`]) started
//! from `block_on`.

pub(crate) mod churn;
pub(crate) mod idle;
pub(crate) mod lifo;
pub(crate) mod timers;
