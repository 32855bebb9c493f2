//! wsbench: the benchmark harness.
//!
//! `cli` (clap only) → `config` (validated, typed) → `runner` (measures,
//! watchdog; `isolate` gives each run a fresh child process) → `stats` /
//! `summary` (pure statistics) → `export` (CSV, JSON,
//! markdown, HDR logs) and `table`; `compare` and `plot` read CSVs back via
//! `load`. The workloads crate is reached only through `backend`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod app;
pub mod backend;
pub mod changepoint;
pub mod cli;
pub mod compare;
pub mod config;
pub mod cpu;
pub mod doctor;
pub mod env;
pub mod export;
pub mod health;
pub mod history;
pub mod isolate;
pub mod list;
pub mod lists;
pub mod load;
pub mod pin;
pub mod plot;
pub mod progress;
pub mod record;
pub mod report;
pub mod runner;
pub mod slo;
pub mod stats;
pub mod summary;
pub mod table;
pub mod ttest;
