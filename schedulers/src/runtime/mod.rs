//! The runtime core shared by every policy: builder, runtime, handle,
//! worker loop, parking, idle protocol, thread-local context, block_on.

pub(crate) mod context;
pub(crate) mod core;
pub(crate) mod custom;
pub(crate) mod idle;
pub(crate) mod park;
pub(crate) mod shared;
pub(crate) mod worker;

pub(crate) mod block_on;
mod builder;
mod handle;

pub use builder::{BuildError, Builder};
pub use handle::{spawn, Handle, Runtime};
