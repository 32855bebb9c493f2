//! Making the measurements: the matrix of cells, each run in a fresh child
//! process under a watchdog (`isolate`), A/B pairs of two programs in one
//! invocation (`ab`), the cores workers and load generator are pinned to,
//! progress and interrupts, the verdict on a finished run (`health`), the
//! CPU columns and the record of the machine and build (`env`), and the
//! cgroups of `--cpus`/`--cpuset` (`cgroup`). `backend`
//! is the door into the workloads crate for everything here.

pub mod ab;
pub mod backend;
pub mod cgroup;
pub mod cpu;
pub mod env;
pub mod health;
pub mod interrupt;
pub mod isolate;
pub mod lockfile;
pub mod matrix;
pub mod pin;
pub mod pinned;
pub mod progress;
