//! The CPU columns count the runtime's own threads, the thread that
//! drives `block_on` included.
//!
//! What holds on every machine is checked here; the CPU meter against each
//! thread's own CPU clock is the known-answer unit test in `src/cpu_time.rs`.
//! How much CPU a calibrated spin or an idle policy costs depends on the
//! machine (its CPU speed since the calibration, its hypervisor's
//! park/unpark): those are measurements, in `examples/measure.rs`
//! (`scripts/measure.sh`, run by the nightly).

mod common;

use common::{opts, rt, run, wl};

/// `current-thread` and `tokio-current` run tokio's benchmarks inside
/// `block_on` on the calling thread, which is then the runtime's only
/// thread: its CPU must be counted. `spawn-many-local` keeps that thread
/// runnable for the whole window (every task is ready at once, nothing
/// parks), so the runtime's CPU is its share of a CPU over the window;
/// uncounted it would be ~0 (no thread of the runtime's own). 1% is far
/// below any share a runnable thread gets, even at a load of 20 on 2 cores.
#[test]
fn the_block_on_thread_of_a_single_threaded_runtime_is_counted() {
    for sched in ["current-thread", "tokio-current"] {
        let out = run(&rt(sched, 1), &wl("spawn-many-local", &[], None), &opts(300, 50)).unwrap();
        let cpu = out.cpu.expect("/proc is readable here");
        let floor_ns = cpu.window.as_nanos() as u64 / 100;
        assert!(cpu.cpu_ns > floor_ns, "{sched}: {} ns of CPU over a {:?} window", cpu.cpu_ns, cpu.window);
    }
}
