//! loom models of the runtime core's lock-free protocols. The steal-half
//! ring's models live next to it (`steal_half/queue.rs`).
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! wsbench-schedulers --release --lib loom` (own `CARGO_TARGET_DIR`).
//! Each model states its preemption bound; 2 keeps every model under a
//! minute on 2 cores while still covering every two-step interleaving of
//! the racing operations (the bugs these protocols are known for — lost
//! wake-ups, double drops — need at most two preemptions to show).
//!
//! crossbeam-deque (steal-one) and crossbeam's Injector (global) are not
//! loom-instrumented, so the policies built on them are covered by the
//! stress tests instead.

mod idle;
mod idle_race;
mod inject;
mod lifo;
mod shutdown_race;
mod support;
mod task;
