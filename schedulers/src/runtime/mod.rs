//! The runtime core shared by every policy, generic over `crate::policy::Policy`:
//! starting a runtime, the worker loop, parking, the idle protocol, the
//! thread-local context and `block_on`. It names no policy: the public
//! `Builder`, `Runtime` and `Handle`, which pick a policy by its kind and
//! dispatch to its core, are built above it (`crate::dispatch`).

pub(crate) mod context;
pub(crate) mod core;
pub(crate) mod custom;
pub(crate) mod delay;
pub(crate) mod idle;
pub(crate) mod park;
pub(crate) mod shared;
pub(crate) mod start;
pub(crate) mod worker;

pub(crate) mod block_on;
