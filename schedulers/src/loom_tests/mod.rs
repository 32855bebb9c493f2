//! Every loom model of the crate lives in this folder, with one support
//! module (`support.rs`). The models declared here test the runtime core
//! through crate-visible APIs; `steal_half_queue.rs`, `bwos_queue.rs` and
//! `driver_io.rs` need their module's private items, so
//! `policies/steal_half/queue.rs`, `policies/bwos/queue.rs` and `driver/io.rs` declare them
//! with `#[path]` (their test names stay `steal_half::queue::loom_tests::…`,
//! `bwos::queue::loom_tests::…` and `driver::io::loom_tests::…`).
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

mod block_on_wake;
mod blocking;
mod handoff;
mod idle;
mod idle_race;
mod inject;
mod inject_close;
mod join_waker;
mod lifo;
mod lifo_steal;
mod owned;
mod shutdown_race;
mod support;
mod task;
mod timer;
mod timer_remote_cancel;
