//! The list of built-in policies, one line each. This list is the only
//! place that names them all: the `SchedulerKind` variants, their
//! `info()`, the builder's dispatch and the handle's statically dispatched
//! variants are all generated from it. It is fixed at compile time; the
//! registry of policies added at run time is `kind.rs` (their names and
//! infos) with `dispatch/builder.rs` (how to start each).
//!
//! Adding an in-tree policy: a folder `schedulers/src/policies/<module>/`
//! with a type implementing `crate::policy::Policy` and a
//! `pub(crate) const INFO: crate::PolicyInfo` (its `--sched` name,
//! meaning, worker rule and knobs), `pub(crate) mod <module>;` in
//! `policies/mod.rs`, and one line `Variant => <module>::Type,` below
//! (`<module>` is a path under `crate::policies`). (`thread-per-core` is
//! not a policy but N runtimes of one, so it is added by hand after these.)
//! Policies from other crates use `crate::register` instead.

/// Calls `$callback! { [$args] Variant => module::Type, ... }` with the
/// built-in policies in table order (the order of `wsbench list` and of
/// `--sched all`).
macro_rules! builtin_policies {
    ($callback:ident, $args:tt) => {
        $callback! {
            $args
            Global => global::Global,
            PerWorker => per_worker::PerWorker,
            StealOne => steal_one::StealOne,
            StealHalf => steal_half::StealHalf,
            CurrentThread => current_thread::CurrentThread,
            Bwos => bwos::Bwos,
        }
    };
}
pub(crate) use builtin_policies;
