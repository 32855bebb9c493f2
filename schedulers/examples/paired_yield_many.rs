//! tokio's `yield_many` bench (200 tasks × 1,000 `yield_now`), steal-half
//! and tokio multi-thread at 2 workers, alternating *iteration by
//! iteration* in one process: each of our iterations is paired with the
//! tokio iteration next to it (order swapped every pair), so a machine
//! whose speed drifts (a shared VM) slows both halves of a pair alike.
//! Prints, per round (a fresh pair of runtimes), the median iteration time
//! of each and the median and 10th/90th percentiles of the paired ratios.
//!
//! `cargo run --release -p wsbench-schedulers --example paired_yield_many -- [ROUNDS]`
//!
//! The harness (`scripts/tokio-benches.sh`) is the measurement of record;
//! this is the finest-grained pairing, for when its per-run ratios spread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

const TASKS: usize = 200;
const YIELDS: usize = 1_000;
const ITERATIONS: usize = 80;
const WARMUP: usize = 10;

/// One iteration on either runtime: spawn, yield, wait for the last task.
macro_rules! iteration {
    ($rt:expr, $yield_now:path) => {{
        let start = Instant::now();
        let left = Arc::new(AtomicUsize::new(TASKS));
        let (done, wait) = mpsc::channel::<()>();
        for _ in 0..TASKS {
            let (left, done) = (left.clone(), done.clone());
            drop($rt.spawn(async move {
                for _ in 0..YIELDS {
                    $yield_now().await;
                }
                // Relaxed: only the count matters; the channel orders the wake-up.
                if left.fetch_sub(1, Ordering::Relaxed) == 1 {
                    done.send(()).expect("the main thread waits");
                }
            }));
        }
        wait.recv().expect("the last task sends");
        start.elapsed().as_secs_f64() * 1e3
    }};
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args().nth(1).map_or(5, |s| s.parse().expect("ROUNDS: a whole number"));
    for round in 0..rounds {
        let ours = wsbench_schedulers::Builder::new(wsbench_schedulers::SchedulerKind::StealHalf)
            .workers(2)
            .build()
            .expect("steal-half x2 builds");
        let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().expect("tokio builds");
        let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..ITERATIONS {
            let (x, y) = if i % 2 == 0 {
                let x = iteration!(ours, wsbench_schedulers::task::yield_now);
                (x, iteration!(tokio, tokio::task::yield_now))
            } else {
                let y = iteration!(tokio, tokio::task::yield_now);
                (iteration!(ours, wsbench_schedulers::task::yield_now), y)
            };
            if i >= WARMUP {
                a.push(x);
                b.push(y);
                ratios.push(x / y);
            }
        }
        let mut sorted = ratios.clone();
        sorted.sort_by(f64::total_cmp);
        let (p10, p90) = (sorted[sorted.len() / 10], sorted[sorted.len() * 9 / 10]);
        println!(
            "round {round}: steal-half {:.2} ms, tokio {:.2} ms; paired ratio median {:.2} [p10 {p10:.2}, p90 {p90:.2}]",
            median(a),
            median(b),
            median(ratios)
        );
    }
}
