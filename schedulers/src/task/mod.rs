//! Tasks: the raw task cell and its state machine (crate-private), and the
//! public task API: [`JoinHandle`], [`JoinError`], [`yield_now`],
//! [`spawn_blocking`].

pub(crate) mod owned;
pub(crate) mod raw;
pub(crate) mod state;

mod cell;
mod error;
pub(crate) mod join;
mod polling;
mod yield_now;

pub use crate::dispatch::{spawn, spawn_blocking};
pub use error::JoinError;
pub use join::JoinHandle;
pub use yield_now::yield_now;
