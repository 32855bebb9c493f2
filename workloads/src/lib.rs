//! wsbench-workloads: the workloads of wsbench and the one runtime trait
//! they are written against.
//!
//! - [`rt`]: the trait ([`rt::Rt`], [`rt::Spawner`]) and its
//!   implementations — our policies, `tokio`, `tokio-current`, `smol`;
//! - tokio's scheduler benchmarks (`spawn-many-*`, `yield-many`,
//!   `ping-pong`, `chained-spawn`);
//! - open-loop microservice workloads (`rpc-fanout`, `skewed`, `timers`,
//!   `tcp-rpc`, `mixed`) with coordinated-omission-corrected latency,
//!   queue wait and service time recorded apart, in per-thread
//!   hdrhistograms;
//! - `hang`, a test-only workload that never finishes.
//!
//! The harness calls [`schedulers`], [`workloads`], [`validate`] and [`run`]
//! and reads [`api::RunOutput`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod api;
pub mod arrivals;
mod bench;
mod catalog;
pub mod dist;
mod error;
mod micro;
mod openloop;
mod params;
mod plan;
pub mod record;
pub mod rt;
mod runner;
pub mod spin;
mod tcp;

pub use error::Error;
pub use openloop::SLIP_LAG_P99;
pub use plan::{MAX_RATE_PER_S, MAX_WORKERS};
pub use runner::{run, schedulers, validate, workloads};
