//! The runtime API above the core: [`Builder`] picks a policy by its
//! `SchedulerKind` and starts it on the runtime core (`crate::runtime`),
//! [`Handle`] and [`Runtime`] dispatch each call to that policy's core (a
//! `match` over the built-in policies, statically dispatched), and
//! `thread-per-core` is composed here from `current-thread` runtimes. This is
//! the one layer that names every policy; the core below it names none.

mod builder;
mod handle;

pub use builder::{register, BuildError, Builder};
pub use handle::{spawn, spawn_blocking, Handle, Runtime};
