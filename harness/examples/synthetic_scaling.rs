//! Writes a synthetic scaling CSV: throughput against workers that follows
//! the Universal Scalability Law with known σ and κ (plus a fixed ripple
//! of at most 1.6 %), in the harness's own CSV format, so `wsbench plot` can be shown
//! fitting and extrapolating a curve where no many-core machine has been
//! measured. Every row says it is synthetic (host, CPU model, notes).
//!
//!     cargo run --release -p wsbench --example synthetic_scaling -- results/scaling-model/synthetic.csv
//!     wsbench plot results/scaling-model/synthetic.csv --out plots
//!
//! The file is written through the harness's output guard: a file wsbench
//! did not write is never overwritten.

use std::path::PathBuf;

use wsbench::internals::env::Environment;
use wsbench::internals::export::csv::{encode, header, row};
use wsbench::internals::export::write_output;
use wsbench::internals::record::{CellKey, RunRecord, Status};

/// (scheduler label, λ ops/s, σ, κ) of each synthetic curve.
const CURVES: [(&str, f64, f64, f64); 2] =
    [("synthetic-usl-a", 400_000.0, 0.03, 0.0002), ("synthetic-usl-b", 500_000.0, 0.08, 0.001)];
/// Worker counts: 1..32 on the stated 32 logical CPUs, and 64, which is
/// oversubscribed there (left out of the fit).
const WORKERS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Logical CPUs the synthetic machine states.
const LOGICAL_CPUS: usize = 32;
/// A fixed ripple per worker count (the median of its runs) and per run
/// around it, so the fit's R² is below 1 as a measured one's is.
const RIPPLE: [f64; 7] = [0.0, 0.012, -0.008, 0.01, -0.012, 0.006, 0.0];
const RUN_RIPPLE: [f64; 3] = [0.0, 0.004, -0.004];
const DURATION_S: f64 = 1.0;

fn usl(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

fn main() -> anyhow::Result<()> {
    let path: PathBuf = std::env::args_os().nth(1).map(PathBuf::from).ok_or_else(|| {
        anyhow::anyhow!("usage: synthetic_scaling OUT.csv (a new file, or one this example wrote before)")
    })?;
    let mut env = Environment::capture();
    env.host = "synthetic".to_string();
    env.cpu_model = "synthetic USL curves, not a measurement".to_string();
    env.logical_cpus = Some(LOGICAL_CPUS);
    let mut rows = vec![header()];
    for (scheduler, lambda, sigma, kappa) in CURVES {
        for (i, workers) in WORKERS.into_iter().enumerate() {
            for (run, run_ripple) in RUN_RIPPLE.iter().enumerate() {
                let ripple = RIPPLE[i] + run_ripple;
                let key = CellKey::plain(scheduler, workers, "synthetic");
                let mut r = RunRecord::failed(key, run, String::new());
                r.status = Status::Ok;
                let throughput = usl(lambda, sigma, kappa, workers as f64) * (1.0 + ripple);
                r.duration_s = Some(DURATION_S);
                r.ops = Some((throughput * DURATION_S) as u64);
                r.throughput_per_s = Some(throughput);
                r.oversubscribed = workers > LOGICAL_CPUS;
                r.notes = format!(
                    "synthetic: USL lambda={lambda} sigma={sigma} kappa={kappa}, ripple {:+.1}%; not a measurement",
                    ripple * 100.0
                );
                rows.push(row(&env, &r));
            }
        }
    }
    write_output(&path, &encode(rows)?)?;
    println!("{}", path.display());
    Ok(())
}
