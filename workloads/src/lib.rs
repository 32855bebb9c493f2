//! wsbench-workloads (being written).
#![forbid(unsafe_code)]
pub mod api;
