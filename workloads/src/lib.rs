//! wsbench-workloads: the workloads of wsbench and the one runtime trait
//! they are written against.
//!
//! - [`rt`]: the trait ([`rt::Rt`], [`rt::Spawner`]) and its
//!   implementations — our policies, `tokio`, `tokio-current`, `smol`;
//! - tokio's scheduler benchmarks (`spawn-many-*`, `yield-many`,
//!   `ping-pong`, `chained-spawn`);
//! - open-loop microservice workloads (`rpc-fanout`, `skewed`, `timers`,
//!   `timeouts`, `tcp-rpc`, `mixed`, `http`) with coordinated-omission-corrected latency,
//!   queue wait and service time recorded apart, in per-thread
//!   hdrhistograms;
//! - `spawn-storm`: plain threads outside the runtime spawning tiny tasks
//!   flat out (the remote-spawn path and its inject-queue lock);
//! - message passing (`channel-ping-pong`, `pipeline`): a few tasks
//!   exchanging messages over one runtime-agnostic channel, with
//!   cross-worker hand-offs counted per message;
//! - the pathology zoo (`--workload zoo`: `lifo-starvation`,
//!   `idle-burst`, `task-churn`, `timer-churn`, `blocking-storm`): shapes
//!   from public incidents, each with its signature;
//! - `hang` and `crash`, test-only workloads that never finish and abort
//!   the process.
//!
//! The harness reaches the crate through its public face: the lists
//! ([`schedulers`], [`workloads`], [`resolved_params`]), [`validate`] and
//! [`run`] with the contract's types ([`api`]), [`register_reference`] for
//! a binary's own runtimes, [`remote`] for `serve`/`load`, and the
//! instruments `doctor --calibrate` checks ([`instruments`], [`spin`],
//! [`client`]'s reference client, [`trivial`]: the least a `tcp-rpc`
//! server can do, which the TCP client's ceiling is measured against),
//! and [`ideal`], the zero-overhead FCFS queue a row is held against.
//! Everything else is private.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod affinity;
pub mod api;
mod arrivals;
mod bench;
mod catalog;
mod channels;
pub mod client;
mod closed;
mod cpu_time;
mod dist;
mod error;
mod http;
pub mod ideal;
pub mod instruments;
mod loadgen;
mod micro;
mod modes;
mod openloop;
mod params;
mod plan;
mod recorders;
pub mod remote;
pub mod rt;
mod runner;
mod sched;
mod side;
pub mod spin;
mod storm;
mod tcp;
mod throttle;
pub mod trivial;
mod zoo;

pub use error::Error;

/// Internals re-exported for the criterion benchmarks only; not API.
#[doc(hidden)]
pub mod __bench {
    use std::sync::Arc;
    use std::time::Instant;

    /// The per-thread latency recorder of the open-loop workloads.
    pub struct Recorder(Arc<crate::recorders::Collector>);

    impl Default for Recorder {
        fn default() -> Recorder {
            Recorder(crate::recorders::Collector::new())
        }
    }

    impl Recorder {
        /// What the workloads record for one measured request: the client
        /// side (corrected and uncorrected latency) and the server side
        /// (queue wait and service time).
        pub fn record(&self, intended: Instant, sent: Instant, first_poll: Instant, done: Instant) {
            self.0.with_local(|h| {
                h.record_client(intended, sent, done, true);
                h.record_server(intended, first_poll, done);
            });
        }
    }
}
pub use plan::{resolved_params, MAX_WORKERS};
pub use runner::{register_reference, run, validate, workloads};
pub use sched::{schedulers, RegisterReferenceError};
